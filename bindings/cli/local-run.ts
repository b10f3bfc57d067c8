// The CLI's run in this process, and what Ctrl-C does to it. A run listens for Ctrl-C (and SIGTERM)
// only while this thread waits on worker threads that can stop early with what they have — chains
// on workers (runParallel), AIS populations on workers — and not while this thread computes: a
// listener there cannot run until the computation ends, so Ctrl-C was swallowed (the method before
// a worker AIS ran on to its end) and a signal queued during a log Z estimate was lost when the
// listener went. Everything on this thread keeps Node's default: the process ends at once.

import type { Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import type { InferenceResult } from '../core/result.ts';
import { logZRequest, withEstimate, withWarnings, type InferOptions } from '../infer.ts';
import { estimateLogZ } from '../logz/logz.ts';
import { runAISParallel } from '../logz/ais-parallel.ts';
import { inferAsync, inferRoute } from '../parallel/parallel.ts';

/** inferAsync for the CLI: the same result, with Ctrl-C stopping the worker phases (partial: true). */
export async function localRun(engine: Engine, model: Model, opts: InferOptions, workers: number | undefined): Promise<InferenceResult> {
  const request = { ...opts, workers };
  const route = inferRoute(model, request);
  if (route.kind !== 'chains' && route.kind !== 'ais') return inferAsync(engine, model, request);
  const { logz: _l, ais: _a, ...marginals } = request;
  if (route.kind === 'chains') {
    // The chains on workers (listening), then any log Z estimate on this thread (not listening).
    const ac = new AbortController();
    const r = await listening(ac, () => inferAsync(engine, model, { ...marginals, signal: ac.signal }));
    const logz = logZRequest(request);
    if (logz === null) return r;
    if (ac.signal.aborted) return withWarnings(r, [`log Z (${logz.estimator}): not estimated: the run was interrupted`]);
    return withEstimate(r, logz, estimateLogZ(engine, model, { ...logz, onProgress: opts.onProgress }));
  }
  // AIS on workers: the method's own run where its own route puts it, then the populations (listening).
  const own = await localRun(engine, model, marginals, route.ownWorkers);
  if (own.partial) return withWarnings(own, ['log Z (ais): not estimated: the run was interrupted']);
  const ac = new AbortController();
  try {
    return withEstimate(own, route.request, await listening(ac, () => runAISParallel(engine, model, { ...route.request, workers: route.workers, signal: ac.signal, onProgress: opts.onProgress })));
  } catch (e) {
    if (!ac.signal.aborted) throw e;
    return withWarnings({ ...own, partial: true }, ['log Z (ais): cancelled before any population or group of runs completed: not estimated']);
  }
}

/**
 * Runs `run` with `ac` aborted by the first Ctrl-C (or SIGTERM), said on stderr; the second ends
 * the process at once (exit 130). The listeners go when `run` settles.
 */
async function listening<T>(ac: AbortController, run: () => Promise<T>): Promise<T> {
  const onInterrupt = () => {
    if (ac.signal.aborted) process.exit(130);
    process.stderr.write('relaxmrf: interrupted: stopping the workers; the result of what completed follows (partial: true); interrupt again to quit at once\n');
    ac.abort();
  };
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onInterrupt);
  try {
    return await run();
  } finally {
    process.removeListener('SIGINT', onInterrupt);
    process.removeListener('SIGTERM', onInterrupt);
  }
}
