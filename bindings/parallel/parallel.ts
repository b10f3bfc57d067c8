// runParallel on Node's worker_threads: each worker owns its engine instance; the splitting of the
// chains, the messages and the exact aggregation are host-independent (parallel-job.ts), shared with
// the browser version (parallel-browser.ts).
import { availableParallelism } from 'node:os';
import type { Model } from '../core/model.ts';
import type { Engine } from '../core/engine.ts';
import type { InferenceResult } from '../core/result.ts';
import { CancelledError, EngineError } from '../core/errors.ts';
import { checkCount, MAX_WORKERS } from '../core/options.ts';
import { checkInferOptions, exactDiagnostics, exactInferenceResult, infer, logZRequest, methodOptions, refuseZeroModel, withEstimate, withLogZ, withoutStoppedEstimate, type InferOptions } from '../infer.ts';
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
export function inferAsync(engine: Engine, model: Model, opts: InferOptions & { workers?: number } = {}): Promise<InferenceResult> {
  return inferInPhases(engine, model, opts, (run) => run(opts.signal));
}

/**
 * How a caller runs each phase that waits on worker threads and can stop early with what it has
 * (chains on workers, AIS populations on workers), given the signal that stops it. inferAsync's
 * phases take the caller's `signal`; the CLI's listen for Ctrl-C only then (cli/local-run.ts), as
 * this thread cannot listen while it computes.
 */
export type WorkerPhase = <T>(run: (signal: AbortSignal | undefined) => Promise<T>) => Promise<T>;

/** inferAsync with its worker phases run through `phase`; everything else on this thread as inferAsync. */
export async function inferInPhases(engine: Engine, model: Model, opts: InferOptions & { workers?: number }, phase: WorkerPhase): Promise<InferenceResult> {
  checkInferOptions(opts, ['workers']);
  // 0 is this thread here (runParallel's own check said "in [1, 256]" of a count that takes 0).
  if (opts.workers !== undefined) checkCount('workers', opts.workers, 0, MAX_WORKERS);
  const method = opts.method ?? 'exact';
  refuseZeroModel(model, method, engine);
  // Exact inference and the methods without chains run to their end once begun: an abort before the
  // start is the one they can honour (inferAsync with method exact resolved whole on an aborted signal).
  if (opts.signal?.aborted) throw new CancelledError('cancelled before the run started: no result');
  const { workers: _given, ...rest } = opts;
  const route = inferRoute(model, opts);
  switch (route.kind) {
    case 'ais': {
      // log Z by AIS / population annealing: its populations on workers, after the method's own run
      // (which keeps `workers` where it applies, and takes its own options: it refuses the estimate's).
      const r = await inferInPhases(engine, model, { ...methodOptions(rest), workers: route.ownWorkers }, phase);
      if (r.partial) return withoutStoppedEstimate(r, 'ais');
      let signal: AbortSignal | undefined;
      try {
        return withEstimate(r, route.request, await phase((s) => runAISParallel(engine, model, { ...route.request, signal: (signal = s), workers: route.workers, onProgress: rest.onProgress })));
      } catch (e) {
        // Stopped before any AIS piece completed: the method's result is still whole; keep it.
        if (!signal?.aborted) throw e;
        return withoutStoppedEstimate(r, 'ais', true);
      }
    }
    case 'exact': {
      const r = await exactInferenceParallel(engine, model, { ...rest.exact, onProgress: rest.onProgress, workers: route.workers, signal: rest.signal });
      return withLogZ(engine, model, { ...exactInferenceResult(r), diagnostics: { ...exactDiagnostics(r), workers: r.workers } }, rest);
    }
    case 'chains': {
      const r = await phase((signal) => runParallel(model, { ...methodOptions(rest), signal, method: method as ParallelMethod, workers: route.workers } as ParallelOptions));
      // Stopped during the chains: their partial result, without the estimate (it threw "cancelled
      // before the first chain" and lost the chains). Otherwise the estimate, on this thread.
      const request = logZRequest(rest);
      if (request && r.partial) return withoutStoppedEstimate(withLogZ(engine, model, r, { ...rest, logz: undefined }), request.estimator);
      return withLogZ(engine, model, r, rest);
    }
    case 'here':
      return infer(engine, model, rest);
  }
}

/**
 * Where inferAsync runs a request: 'ais' — the method's own run (ownWorkers as its `workers`), then
 * AIS / population annealing on `workers` threads; 'exact' — a sliced plan's slices on `workers`
 * threads; 'chains' — runParallel on `workers` threads; 'here' — infer on this thread. Only 'chains'
 * and 'ais' stop early on an AbortSignal with what completed; 'exact' stops its slice workers and
 * rejects (CancelledError: slices give no partial result); 'here' runs to the end once begun.
 */
export type InferRoute =
  | { kind: 'ais'; request: NonNullable<ReturnType<typeof logZRequest>>; workers: number; ownWorkers: number | undefined }
  | { kind: 'exact'; workers: number }
  | { kind: 'chains'; workers: number }
  | { kind: 'here' };

/** inferAsync's decision for these options (defaults filled in as inferAsync fills them). */
export function inferRoute(model: Model, opts: InferOptions & { workers?: number }): InferRoute {
  const method = opts.method ?? 'exact';
  const { workers: given, ...rest } = opts;
  const request = logZRequest(rest);
  if (request?.estimator === 'ais' && aisSplits(model, request)) {
    const workers = given ?? autoAISWorkers(model, request, nodeHost.defaultWorkers());
    // A method without chains on its own thread (--method mf --logz ais --workers 1 went to runParallel and was refused).
    if (workers > 1) return { kind: 'ais', request, workers, ownWorkers: method === 'exact' || (PARALLEL_METHODS as readonly string[]).includes(method) ? given : undefined };
  }
  if (method === 'exact' && given !== undefined && given !== 0) return { kind: 'exact', workers: given };
  // A method without chains runs here (`workers` was for its AIS, which did not split or took one worker).
  if (!(PARALLEL_METHODS as readonly string[]).includes(method)) return { kind: 'here' };
  const workers = given ?? autoWorkers(method, model, rest as ParallelOptions, nodeHost.defaultWorkers());
  if (workers === 0 || (given === undefined && workers <= 1)) return { kind: 'here' };
  return { kind: 'chains', workers };
}
