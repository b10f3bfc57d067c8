// Worker side of runParallel (parallel.ts): owns one engine instance, runs the chains it is given
// with the same (seed, chain) streams, chunking and batching as runGibbs, and posts every completed
// batch's sums to the parent as soon as it has them (so a cancelled run keeps what was done).
import { parentPort, workerData } from 'node:worker_threads';
import { loadEngine } from './wasm-node.ts';
import { Model, type Edge, type LatticeInfo } from './model.ts';
import { GibbsSampler, type GibbsState } from './gibbs.ts';
import { splitEvenly } from './estimators.ts';

/** The model as plain data (structured clone of its typed arrays). */
export interface ModelData {
  card: Int32Array;
  unary: Float64Array[];
  edges: { i: number; j: number; table: Float64Array }[];
  logConst: number;
  lattice: LatticeInfo | null;
}

export interface WorkerJob {
  model: ModelData;
  seed: number;
  chains: number[];
  samples: number;
  burnin: number;
  batches: number;
}

export type WorkerMessage =
  | { type: 'ready'; n: number; nBits: number }
  /** `rates`: change rates of the WASM calls since the chain's previous message, in call order. */
  | { type: 'batch'; chain: number; sums: Float64Array; length: number; rates: number[]; done: number }
  | { type: 'progress'; chain: number; rates: number[]; done: number }
  | { type: 'finished' }
  | { type: 'error'; message: string; name: string };

const port = parentPort;
if (!port) throw new Error('parallel-worker.ts runs only as a worker thread (see parallel.ts)');

function post(msg: WorkerMessage, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(msg, transfer);
}

run(workerData as WorkerJob).catch((e: unknown) => {
    const err = e instanceof Error ? e : new Error(String(e));
  post({ type: 'error', message: err.message, name: err.name });
});

async function run(job: WorkerJob): Promise<void> {
  const engine = await loadEngine();
  const m = job.model;
  const model = new Model(m.card, m.unary, m.edges as Edge[], m.logConst, m.lattice);
  const sampler = new GibbsSampler(engine, model);
  try {
    const form = sampler.form;
    post({ type: 'ready', n: form.n, nBits: form.nBits });
    // Same chunking as runGibbs: the change rates are averaged per WASM call.
    const chunk = Math.max(1, Math.floor(2e6 / Math.max(1, form.n)));
    const acc = sampler.accumulator();
    let rates: number[] = [];
    let done = 0;
    const advance = (state: GibbsState, sweeps: number, into: number): void => {
      for (let left = sweeps; left > 0; ) {
        const k = Math.min(chunk, left);
        rates.push(sampler.step(state, k, into).changeRate);
        left -= k;
        done += k;
      }
    };
    for (const c of job.chains) {
      const state = sampler.init(job.seed, c);
      advance(state, job.burnin, 0);
      post({ type: 'progress', chain: c, rates, done });
      rates = [];
      done = 0;
      for (const len of splitEvenly(job.samples, Math.min(job.batches, job.samples))) {
        advance(state, len, acc);
        const sums = sampler.readAndClear(acc);
        post({ type: 'batch', chain: c, sums, length: len, rates, done }, [sums.buffer as ArrayBuffer]);
        rates = [];
        done = 0;
      }
    }
    post({ type: 'finished' });
  } finally {
    sampler.dispose();
  }
}
