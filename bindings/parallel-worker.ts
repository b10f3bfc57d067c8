// Worker side of runParallel (parallel.ts): owns one engine instance, runs the chains it is given
// with the same (seed, chain) streams, chunking and batching as runGibbs, and posts every completed
// batch's sums to the parent as soon as it has them (so a cancelled run keeps what was done).
import { parentPort, workerData } from 'node:worker_threads';
import { loadEngine } from './wasm-node.ts';
import { Model, type Edge, type LatticeInfo } from './model.ts';
import { GibbsSampler } from './gibbs.ts';
import { driveChains } from './chains.ts';

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
    // Same chunking and schedule as runGibbs (the change rates are averaged per WASM call).
    let rates: number[] = [];
    let done = 0;
    const flush = () => {
      const out = { rates, done };
      rates = [];
      done = 0;
      return out;
    };
    driveChains(
      sampler,
      { seed: job.seed, chains: job.chains, samples: job.samples, burnin: job.burnin, batches: job.batches, chunk: Math.max(1, Math.floor(2e6 / Math.max(1, form.n))) },
      {
        onStep: (_c, sweeps, changeRate) => {
          rates.push(changeRate);
          done += sweeps;
        },
        onBurnin: (chain) => post({ type: 'progress', chain, ...flush() }),
        onBatch: (chain, sums, length) => post({ type: 'batch', chain, sums, length, ...flush() }, [sums.buffer as ArrayBuffer]),
      },
    );
    post({ type: 'finished' });
  } finally {
    sampler.dispose();
  }
}
