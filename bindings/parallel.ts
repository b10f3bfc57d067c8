// Parallel Gibbs chains on worker_threads (Node only). Each worker owns its own engine instance and
// runs the chains c ≡ w (mod workers) with the same (seed, chain) streams as runGibbs; the parent
// combines the per-chain batch sums in chain order, so for a given seed the marginals (and standard
// errors, and change rate) are bit-identical whatever the number of workers, and equal runGibbs's.
import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import type { Model } from './model.ts';
import { toCanonical } from './canonical.ts';
import { batchMeansResult } from './chains.ts';
import { BatchMeans } from './estimators.ts';
import { GIBBS_DEFAULTS, type GibbsOptions } from './gibbs.ts';
import type { InferenceResult } from './result.ts';
import { EngineError, ModelError } from './errors.ts';
import { checkCount, definedOnly } from './options.ts';
import { seedWords } from './seed.ts';
import type { ModelData, WorkerJob, WorkerMessage } from './parallel-worker.ts';

export interface ParallelOptions extends GibbsOptions {
  /** Only 'gibbs' runs in parallel for now. */
  method?: 'gibbs';
  /** Worker threads (default: min(chains, available cores)); never more than chains. */
  workers?: number;
}

interface ChainRecord {
  batches: { sums: Float64Array; length: number }[];
  rates: number[];
  done: number;
}

/**
 * Starts parallel-worker.ts. Worker threads on Node 20 do not get the parent's --import loader hooks,
 * so the worker registers tsx's ESM hooks itself before importing the TypeScript worker module.
 */
function startWorker(job: WorkerJob): Worker {
  const script = new URL('./parallel-worker.ts', import.meta.url).href;
  const api = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(api)}).then(({ register }) => { register(); return import(${JSON.stringify(script)}); })`;
  return new Worker(boot, { eval: true, execArgv: [], workerData: job });
}

/**
 * Runs `chains` independent Gibbs chains on `workers` threads; same result object as runGibbs.
 * With `signal`, an abort terminates the workers and resolves with the batches completed so far
 * (partial: true); it rejects if no batch had completed.
 */
export async function runParallel(model: Model, opts: ParallelOptions = {}): Promise<InferenceResult> {
  const method = opts.method ?? 'gibbs';
  if (method !== 'gibbs') throw new ModelError(`runParallel supports method "gibbs" only, got "${method}"`);
  const { seed, chains, samples, burnin, batches } = { ...GIBBS_DEFAULTS, ...definedOnly(opts) };
  checkCount('chains', chains, 1);
  checkCount('samples', samples, 1);
  checkCount('burnin', burnin, 0);
  checkCount('batches', batches, 1);
  seedWords(seed);
  const workers = Math.min(chains, opts.workers ?? Math.max(1, availableParallelism()));
  checkCount('workers', workers, 1);
  // Validates the model on this thread, before any worker starts; gives the sizes.
  const form = toCanonical(model);
  const data: ModelData = {
    card: model.card,
    unary: model.unary,
    edges: model.edges.map((e) => ({ i: e.i, j: e.j, table: e.table })),
    logConst: model.logConst,
    lattice: model.lattice,
  };

  const t0 = performance.now();
  const records: ChainRecord[] = Array.from({ length: chains }, () => ({ batches: [], rates: [], done: 0 }));
  const total = chains * (samples + burnin);
  let done = 0;
  let partial = false;
  const threads: Worker[] = [];

  await new Promise<void>((resolve, reject) => {
    let finished = 0;
    const ended: boolean[] = [];
    let settled = false;
    const stopAll = () => {
      for (const t of threads) void t.terminate();
    };
    const settle = (err?: unknown) => {
      if (settled) return;
      settled = true;
      opts.signal?.removeEventListener('abort', onAbort);
      stopAll();
      if (err) reject(err);
      else resolve();
    };
    const onAbort = () => {
      partial = true;
      settle();
    };
    if (opts.signal?.aborted) return onAbort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    for (let w = 0; w < workers; w++) {
      const mine: number[] = [];
      for (let c = w; c < chains; c += workers) mine.push(c);
      const job: WorkerJob = { model: data, seed, chains: mine, samples, burnin, batches };
      const t = startWorker(job);
      threads.push(t);
      t.on('message', (msg: WorkerMessage) => {
        if (settled) return;
        switch (msg.type) {
          case 'batch':
            records[msg.chain].batches.push({ sums: msg.sums, length: msg.length });
          // falls through: a batch also carries rates and progress
          case 'progress': {
            const r = records[msg.chain];
            for (const x of msg.rates) r.rates.push(x);
            r.done += msg.done;
            done += msg.done;
            opts.onProgress?.({ phase: 'gibbs', done, total });
            break;
          }
          case 'finished':
            ended[w] = true;
            if (++finished === workers) settle();
            break;
          case 'error': {
            const e = msg.name === 'ModelError' ? new ModelError(msg.message) : new EngineError(`worker: ${msg.message}`);
            settle(e);
            break;
          }
        }
      });
      t.on('error', (e) => settle(e));
      t.on('exit', (code) => {
        if (!settled && !ended[w]) settle(new EngineError(`worker ${w} exited with code ${code} before finishing`));
      });
    }
  });

  // Combine exactly as runGibbs does: chains in order, batches in order within a chain.
  const stats = new BatchMeans(form.nBits);
  let changeRateSum = 0, changeCalls = 0;
  for (const r of records) {
    for (const b of r.batches) stats.addBatch(b.sums, b.length);
    for (const x of r.rates) {
      changeRateSum += x;
      changeCalls++;
    }
  }
  if (stats.batches === 0) throw new EngineError('Gibbs was cancelled before the first batch completed: no estimate');
  const seconds = (performance.now() - t0) / 1000;
  return batchMeansResult(
    'gibbs',
    form,
    stats,
    { seed, chains, samples, burnin, batches },
    {
      changeRate: changeRateSum / Math.max(1, changeCalls),
      siteUpdatesPerSecond: (done * form.n) / Math.max(1e-9, seconds),
      workers,
      completedChains: records.filter((r) => r.batches.length === Math.min(batches, samples)).length,
    },
    seconds,
    partial,
  );
}
