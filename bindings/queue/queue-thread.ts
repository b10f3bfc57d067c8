// A compute thread of `relaxmrf worker` (queue-worker.ts): owns one engine instance, loaded once,
// and the models it was last given (decoded and validated once, kept by content hash); runs one
// job at a time and reports progress and the result to the worker's main thread, which keeps
// talking to Redis (lock renewals, progress) while the WASM engine computes here.
import { parentPort } from 'node:worker_threads';
import { loadEngine } from '../core/wasm-node.ts';
import type { Model } from '../core/model.ts';
import type { Engine } from '../core/engine.ts';
import { runChains, transferables, type ChainEvent, type WorkerMessage } from '../parallel/parallel-job.ts';
import { runAISPiece } from '../logz/ais-split.ts';
import { estimateLogZ, type EstimateLogZOptions } from '../logz/logz.ts';
import { infer, type InferOptions } from '../infer.ts';
import type { InferenceResult } from '../core/result.ts';
import { decodeModel } from './model-blob.ts';
import { slicedBucketPlan } from '../exact/exact.ts';
import { runSlices } from '../exact/slicing.ts';
import { EngineError } from '../core/errors.ts';
import type { QueueJob } from './queue-jobs.ts';

/** Models a thread keeps (most recently used first); the main thread sends a model's blob only when it is not here. */
export const THREAD_MODEL_CACHE = 4;

export interface ThreadTask {
  id: number;
  job: QueueJob;
  /** The model's blob, unless the thread has the model cached. */
  blob: Uint8Array | null;
  /** ais: the β values of piece 0 (null: compute them). */
  schedule: Float64Array | null;
}

export type ThreadReply =
  | { type: 'ready' }
  | { type: 'progress'; id: number; done: number }
  | { type: 'done'; id: number; result: unknown; cached: string[] }
  | { type: 'error'; id: number; name: string; message: string; cached: string[] };

export interface ChainsResult {
  setup: InferenceResult['diagnostics'];
  /** Each chain's events, in the job's chain order. */
  events: ChainEvent[][];
}

const port = parentPort;
if (!port) throw new Error('queue-thread runs only as a worker thread (see queue-worker.ts)');

const cache = new Map<string, Model>();

function modelFor(task: ThreadTask): Model {
  const hash = task.job.model;
  let model = cache.get(hash);
  if (!model) {
    if (!task.blob) throw new Error(`model ${hash.slice(0, 12)} is neither cached nor sent`);
    model = decodeModel(task.blob);
  }
  cache.delete(hash);
  cache.set(hash, model);
  while (cache.size > THREAD_MODEL_CACHE) cache.delete(cache.keys().next().value!);
  return model;
}

/** Most recently used first. */
const cached = () => [...cache.keys()].reverse();

function run(engine: Engine, task: ThreadTask): unknown {
  const { job } = task;
  const model = modelFor(task);
  switch (job.kind) {
    case 'chains': {
      const out: ChainsResult = { setup: {}, events: job.chains.map(() => []) };
      const slot = new Map(job.chains.map((c, i) => [c, i]));
      runChains(engine, model, job.method, job.opts, job.chains, (m: WorkerMessage) => {
        if (m.type === 'setup') out.setup = m.diagnostics;
        else if (m.type === 'event') {
          if (m.event) out.events[slot.get(m.chain)!].push(m.event);
          if (m.done > 0) port!.postMessage({ type: 'progress', id: task.id, done: m.done } satisfies ThreadReply);
        }
      });
      return out;
    }
    case 'ais':
      return runAISPiece(engine, model, job.opts, { firstRun: job.firstRun, runs: job.runs }, task.schedule);
    case 'logz':
      return estimateLogZ(engine, model, job.opts as unknown as EstimateLogZOptions);
    case 'infer':
      return infer(engine, model, { ...(job.opts as InferOptions), method: job.method, logz: undefined });
    case 'slices': {
      const sp = slicedBucketPlan(model, (job.opts as InferOptions).exact ?? {});
      if (!sp.fits) throw new EngineError(sp.refusal);
      return runSlices(engine, sp.model, sp.sliced, job.slices);
    }
  }
}

function buffers(result: unknown): ArrayBuffer[] {
  const r = result as Partial<ChainsResult>;
  return r.events ? r.events.flatMap((list) => list.flatMap((e) => transferables(e))) : [];
}

loadEngine().then(
  (engine) => {
    port.on('message', (task: ThreadTask) => {
      try {
        const result = run(engine, task);
        port.postMessage({ type: 'done', id: task.id, result, cached: cached() } satisfies ThreadReply, buffers(result));
      } catch (e) {
        const err = e instanceof Error ? e : new Error(String(e));
        port.postMessage({ type: 'error', id: task.id, name: err.name, message: err.message, cached: cached() } satisfies ThreadReply);
      }
    });
    port.postMessage({ type: 'ready' } satisfies ThreadReply);
  },
  (e: unknown) => {
    throw e;
  },
);
