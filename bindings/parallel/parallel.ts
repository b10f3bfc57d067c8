// runParallel on Node's worker_threads: each worker owns its engine instance; the splitting of the
// chains, the messages and the exact aggregation are host-independent (parallel-job.ts), shared with
// the browser version (parallel-browser.ts).
import { availableParallelism } from 'node:os';
import type { Model } from '../core/model.ts';
import type { Engine } from '../core/engine.ts';
import type { InferenceResult } from '../core/result.ts';
import { EngineError } from '../core/errors.ts';
import { checkInferOptions, exactDiagnostics, exactInferenceResult, infer, logZRequest, refuseZeroModel, withEstimate, withLogZ, type InferOptions } from '../infer.ts';
import { aisSplits } from '../logz/ais-split.ts';
import { autoAISWorkers, runAISParallel } from '../logz/ais-parallel.ts';
import { exactInferenceParallel } from '../exact/exact-parallel.ts';
import { autoWorkers, PARALLEL_METHODS, runParallelOn, type ParallelHost, type ParallelMethod, type ParallelOptions, type WorkerJob, type WorkerMessage } from './parallel-job.ts';
import { startWorkerModule } from './start-worker.ts';

export { PARALLEL_METHODS, AUTO_WORKERS_MIN_UPDATES, AUTO_WORKERS_MIN_SWEEPS, AUTO_WORKERS_STARTUP_UPDATES, autoWorkers, type ParallelMethod, type ParallelOptions } from './parallel-job.ts';

function startWorker(job: WorkerJob) {
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

/**
 * infer, with a long Gibbs run's chains spread over min(chains, cores) worker threads (autoWorkers;
 * `workers` overrides; 0: this thread), and with exact inference's slices on `workers` threads when
 * given, and with log Z by AIS / population annealing (logz 'ais') over its populations or runs on
 * worker threads (autoAISWorkers; `workers` overrides): the same result as infer bit for bit, plus
 * `workers` and `completedChains` (`logz.workers` for AIS) when workers ran. infer itself stays
 * synchronous on the calling thread.
 */
export async function inferAsync(engine: Engine, model: Model, opts: InferOptions & { workers?: number } = {}): Promise<InferenceResult> {
  checkInferOptions(opts, ['workers']);
  const method = opts.method ?? 'exact';
  refuseZeroModel(model, method, engine);
  const { workers: given, ...rest } = opts;
  // log Z by AIS / population annealing: its populations on workers (autoAISWorkers, or `workers`),
  // after the method's own run (which keeps `workers` where it applies).
  const request = logZRequest(rest);
  if (request?.estimator === 'ais' && aisSplits(model, request)) {
    const aisWorkers = given ?? autoAISWorkers(model, request, nodeHost.defaultWorkers());
    if (aisWorkers > 1) {
      const { logz: _l, ais: _a, ...marginals } = rest;
      const own = method === 'exact' || (PARALLEL_METHODS as readonly string[]).includes(method) ? given : undefined;
      const r = await inferAsync(engine, model, { ...marginals, workers: own });
      return withEstimate(r, request, await runAISParallel(engine, model, { ...request, workers: aisWorkers, onProgress: rest.onProgress }));
    }
  }
  // Exact inference: a sliced plan's slices on the workers (the same result for any number).
  if (method === 'exact' && given !== undefined && given !== 0) {
    const r = await exactInferenceParallel(engine, model, { ...rest.exact, onProgress: rest.onProgress, workers: given });
    return withLogZ(engine, model, { ...exactInferenceResult(r), diagnostics: { ...exactDiagnostics(r), workers: r.workers } }, rest);
  }
  // A method without chains runs here (`workers` was for its AIS, which did not split or took one
  // worker: --method mf --logz ais --workers 1 went to runParallel and was refused).
  if (!(PARALLEL_METHODS as readonly string[]).includes(method)) return infer(engine, model, rest);
  const workers = given ?? autoWorkers(method, model, rest as ParallelOptions, nodeHost.defaultWorkers());
  if (workers === 0 || (given === undefined && workers <= 1)) return infer(engine, model, rest);
  return withLogZ(engine, model, await runParallel(model, { ...rest, method: method as ParallelMethod, workers } as ParallelOptions), rest);
}
