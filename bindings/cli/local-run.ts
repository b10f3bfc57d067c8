// The CLI's run in this process, and what Ctrl-C does to it. A run listens for Ctrl-C (and SIGTERM)
// only while this thread waits on worker threads that can stop early with what they have — chains
// on workers (runParallel), AIS populations on workers — and not while this thread computes: a
// listener there cannot run until the computation ends, so Ctrl-C was swallowed (the method before
// a worker AIS ran on to its end) and a signal queued during a log Z estimate was lost when the
// listener went. Everything on this thread keeps Node's default: the process ends at once (killed by
// the signal), as it does on a second signal.

import type { Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import type { InferenceResult } from '../core/result.ts';
import type { InferOptions } from '../infer.ts';
import { inferInPhases } from '../parallel/parallel.ts';

/** inferAsync for the CLI: the same result, with Ctrl-C stopping its worker phases (partial: true). */
export function localRun(engine: Engine, model: Model, opts: InferOptions, workers: number | undefined): Promise<InferenceResult> {
  return inferInPhases(engine, model, { ...opts, workers }, (run) => {
    const ac = new AbortController();
    return listening(ac, () => run(ac.signal));
  });
}

/**
 * Runs `run` with `ac` aborted by the first Ctrl-C (or SIGTERM), said on stderr. The listeners go
 * then, not when `run` settles: the fold of what completed runs on this thread, where no listener
 * can run, and a second signal queued for a listener removed after it was lost (the run went on
 * and exited 0). Without them a second signal ends the process at once, as on this thread.
 */
async function listening<T>(ac: AbortController, run: () => Promise<T>): Promise<T> {
  const stopListening = () => {
    process.removeListener('SIGINT', onInterrupt);
    process.removeListener('SIGTERM', onInterrupt);
  };
  const onInterrupt = () => {
    stopListening();
    process.stderr.write('relaxmrf: interrupted: stopping the workers; the result of what completed follows (partial: true), if anything did; interrupt again to quit at once\n');
    ac.abort();
  };
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onInterrupt);
  try {
    return await run();
  } finally {
    stopListening();
  }
}
