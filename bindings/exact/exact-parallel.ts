// Exact inference with the slices of a sliced bucket-elimination plan on Node worker threads.
// Each worker owns an engine and runs slices s ≡ w (mod workers); the parent sums them in slice order
// as they arrive (slicing.ts SliceSum), so the result is exactInference's bit for bit, for any number
// of workers.
import { availableParallelism } from 'node:os';
import type { Engine } from '../core/engine.ts';
import type { Model, ModelData } from '../core/model.ts';
import { EngineError, ModelError } from '../core/errors.ts';
import { exactInference, slicedBucketPlan, slicedResult, takesBucketPath, type ExactOptions, type ExactResult } from './exact.ts';
import { runAndSumSlices, SliceSum, type SliceOutcome, type SliceSpec } from './slicing.ts';
import { startWorkerModule } from '../parallel/start-worker.ts';

/** What one slice worker is given. */
export interface SliceJob {
  model: ModelData;
  spec: SliceSpec;
  slices: number[];
}

export type SliceMessage = { type: 'slice'; outcome: SliceOutcome } | { type: 'finished' } | { type: 'error'; message: string; name: string };

/**
 * exactInference with a sliced plan's slices on `workers` worker threads (default: min(slices,
 * cores); 1: this thread). Models that do not take the sliced bucket path (see takesBucketPath), plans
 * of one slice and refusals run exactInference on this thread. The result reports `workers`.
 */
export async function exactInferenceParallel(engine: Engine, model: Model, opts: ExactOptions & { workers?: number } = {}): Promise<ExactResult & { workers: number }> {
  const t0 = performance.now();
  const { workers: given, ...exact } = opts;
  if (given !== undefined && !(Number.isInteger(given) && given >= 1)) throw new ModelError(`workers ${given} is not a positive integer`);
  if (!takesBucketPath(model, exact)) return withWorkers(exactInference(engine, model, exact), 1);
  const sp = slicedBucketPlan(model, exact);
  if (!sp.fits) return withWorkers(exactInference(engine, model, exact), 1);
  const n = sp.sliced.slices;
  const workers = Math.max(1, Math.min(n, given ?? availableParallelism()));
  const seconds = (): number => (performance.now() - t0) / 1000;
  if (workers === 1) return withWorkers(slicedResult(sp, runAndSumSlices(engine, model, sp.sliced, exact.onProgress), seconds()), workers);
  const spec: SliceSpec = { order: sp.sliced.order, fixed: sp.sliced.fixed, impossible: sp.sliced.impossible, sliceVars: sp.sliced.sliceVars };
  const data = model.toData();
  // Each slice summed as it arrives (in slice order: early ones wait), not every slice's marginals held.
  const sum = new SliceSum(model, n);
  // Progress as slices end (their cliques' configurations: the unit of exactInference's).
  const perSlice = sp.sliced.plan.flops, total = n * perSlice;
  let done = 0;
  const threads: { terminate(): unknown }[] = [];
  const all = Promise.all(
    Array.from({ length: workers }, (_, w) => {
      const slices = Array.from({ length: Math.ceil((n - w) / workers) }, (_, q) => w + q * workers);
      return new Promise<void>((resolve, reject) => {
        const t = startWorkerModule(import.meta.url, 'slice-worker', { model: data, spec, slices } satisfies SliceJob);
        threads.push(t);
        let ended = false;
        t.on('message', (m: SliceMessage) => {
          if (m.type === 'slice') {
            sum.add(m.outcome);
            exact.onProgress?.({ phase: 'exact', done: (done += perSlice), total });
          } else {
            ended = true;
            void t.terminate();
            if (m.type === 'finished') resolve();
            else reject(m.name === 'EngineError' ? new EngineError(m.message) : new Error(m.message));
          }
        });
        t.on('error', reject);
        t.on('exit', (code) => {
          if (!ended) reject(new EngineError(`a slice worker exited with code ${code} before finishing`));
        });
      });
    }),
  );
  try {
    await all;
  } catch (e) {
    for (const t of threads) void t.terminate();
    throw e;
  }
  return withWorkers(slicedResult(sp, sum.result(), seconds()), workers);
}

/** Adds `workers` without reading `marginals` (a getter that throws when Z = 0). */
function withWorkers(r: ExactResult, workers: number): ExactResult & { workers: number } {
  return Object.defineProperty(r, 'workers', { value: workers, enumerable: true }) as ExactResult & { workers: number };
}
