// runParallel in browsers, on module Web Workers: each worker owns its engine instance (it fetches
// the .wasm itself); the splitting of the chains, the messages and the exact aggregation are the
// host-independent core's (parallel-job.ts), shared with Node's version (parallel.ts).
import type { Model } from '../core/model.ts';
import type { InferenceResult } from '../core/result.ts';
import { EngineError } from '../core/errors.ts';
import { runParallelOn, type ParallelHost, type ParallelOptions, type WorkerMessage } from './parallel-job.ts';

export { PARALLEL_METHODS, type ParallelMethod } from './parallel-job.ts';

/** `runParallel`'s options in browsers: those of Node plus where the workers fetch the engine. */
export type BrowserParallelOptions = ParallelOptions & {
  /** Where the workers fetch the engine (default: build/release.wasm beside the package's modules). */
  wasm?: string | URL;
};

function browserHost(wasm: string | null): ParallelHost {
  return {
    defaultWorkers: () => globalThis.navigator?.hardwareConcurrency ?? 1,
    start(job, onMessage, onFailure) {
      // Written out in full so that bundlers (Vite, webpack, esbuild plugins) see the worker's module;
      // unbundled, the URL resolves beside this file (dist/parallel-worker-browser.js).
      const worker = new Worker(new URL('./parallel-worker-browser.js', import.meta.url), { type: 'module' });
      worker.onmessage = (e: MessageEvent<WorkerMessage>) => onMessage(e.data);
      worker.onerror = (e: ErrorEvent) => {
        e.preventDefault();
        onFailure(new EngineError(`worker: ${e.message || 'failed to load parallel-worker-browser.js'}`));
      };
      worker.onmessageerror = () => onFailure(new EngineError('worker: a message could not be deserialised'));
      worker.postMessage({ ...job, wasm });
      return { terminate: () => worker.terminate() };
    },
  };
}

/**
 * Runs `chains` independent chains of method 'gibbs' (default), 'blockgibbs', 'dhmc' or 'mala' on
 * `workers` Web Workers (default: navigator.hardwareConcurrency, at most chains); the result is the
 * method's single-thread result (infer) bit for bit, for any number of workers. An AbortSignal
 * terminates the workers and returns what was done (partial: true).
 */
export function runParallel(model: Model, opts: BrowserParallelOptions = {}): Promise<InferenceResult> {
  const { wasm, ...rest } = opts;
  // Workers resolve relative URLs against their own script: make the caller's URL absolute here.
  const href = wasm === undefined ? null : new URL(wasm, globalThis.location?.href).href;
  return runParallelOn(browserHost(href), model, rest);
}
