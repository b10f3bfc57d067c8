// runParallel on Node's worker_threads: each worker owns its engine instance; the splitting of the
// chains, the messages and the exact aggregation are host-independent (parallel-job.ts), shared with
// the browser version (parallel-browser.ts).
import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import type { Model } from '../core/model.ts';
import type { InferenceResult } from '../core/result.ts';
import { EngineError } from '../core/errors.ts';
import { runParallelOn, type ParallelHost, type ParallelOptions, type WorkerJob, type WorkerMessage } from './parallel-job.ts';

export { PARALLEL_METHODS, type ParallelMethod, type ParallelOptions } from './parallel-job.ts';

/**
 * Starts the worker module `name` beside `base` (the caller's import.meta.url): name.js in the
 * built package (dist/), or name.ts when running from the sources under tsx — worker threads on
 * Node 20 do not inherit the parent's --import loader hooks, so that worker registers tsx's hooks
 * itself first. The parent's flags are not passed on (e.g. --input-type, which is an error in a worker).
 */
export function startWorkerModule(base: string, name: string, workerData?: unknown): Worker {
  const fromSources = base.endsWith('.ts');
  const script = new URL(`./${name}${fromSources ? '.ts' : '.js'}`, base);
  if (!fromSources) return new Worker(script, { execArgv: [], workerData });
  const api = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(api)}).then(({ register }) => { register(); return import(${JSON.stringify(script.href)}); })`;
  return new Worker(boot, { eval: true, execArgv: [], workerData });
}

function startWorker(job: WorkerJob): Worker {
  return startWorkerModule(import.meta.url, 'parallel-worker', job);
}

const nodeHost: ParallelHost = {
  defaultWorkers: () => availableParallelism(),
  start(job, onMessage, onFailure) {
    const t = startWorker(job);
    let ended = false;
    t.on('message', (m: WorkerMessage) => {
      if (m.type === 'finished' || m.type === 'error') ended = true;
      onMessage(m);
    });
    t.on('error', onFailure);
    t.on('exit', (code) => {
      if (!ended) onFailure(new EngineError(`a worker exited with code ${code} before finishing`));
    });
    return { terminate: () => void t.terminate() };
  },
};

/**
 * Runs `chains` independent chains of method 'gibbs' (default), 'blockgibbs', 'dhmc' or 'mala' on
 * `workers` worker threads; the result is the method's single-thread result (infer) bit for bit, for
 * any number of workers. An AbortSignal terminates the workers and returns what was done (partial).
 */
export function runParallel(model: Model, opts: ParallelOptions = {}): Promise<InferenceResult> {
  return runParallelOn(nodeHost, model, opts);
}
