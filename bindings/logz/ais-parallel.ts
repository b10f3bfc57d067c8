// AIS and population annealing on Node worker threads: the populations (or groups of independent
// runs) are ais-split.ts pieces, handed to the workers round-robin and folded in run order, so the
// result is runAIS's bit for bit for any number of workers (a cancelled run folds the pieces it
// completed). The adaptive schedule's pilot runs are made here first (aisSchedulePilots, the same
// runs runAIS makes), so every worker starts at once with the β values runAIS would use. Worker
// side: ais-worker.ts.
import { availableParallelism } from 'node:os';
import type { Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { canonicalSize } from '../core/canonical.ts';
import { CancelledError, EngineError, ModelError } from '../core/errors.ts';
import { checkCount, checkSignal, MAX_WORKERS } from '../core/options.ts';
import { progressTicker } from '../core/result.ts';
import { AUTO_WORKERS_MIN_UPDATES, AUTO_WORKERS_STARTUP_UPDATES, superviseWorkers } from '../parallel/parallel-job.ts';
import { startWorkerModule } from '../parallel/start-worker.ts';
import { aisPieces, aisSplits, foldAIS, type AISPiece, type AISPieceResult } from './ais-split.ts';
import { aisWarnings } from './logz-checks.ts';
import { checkedAgainstLowerBound } from './ais-bound-check.ts';
import { AIS_DEFAULTS, aisSchedulePilots, runAIS, type AISOptions, type LogZEstimate } from './logz.ts';

/** runAIS's options and the number of worker threads (default: autoAISWorkers; 0 or 1: this thread). */
export type AISParallelOptions = AISOptions & { workers?: number };

/** What a worker runs: its pieces (indices into the run's pieces) with the schedule. */
export interface AISWorkerJob {
  model: ReturnType<Model['toData']>;
  opts: Omit<AISOptions, 'signal' | 'onProgress'>;
  pieces: { index: number; piece: AISPiece }[];
  schedule: Float64Array;
}

export type AISWorkerMessage =
  | { type: 'piece'; index: number; result: AISPieceResult }
  | { type: 'finished' }
  | { type: 'error'; message: string; name: string };

/** The units a run splits into: its populations, or its independent runs. */
function units(opts: AISOptions): number {
  const runs = opts.runs ?? AIS_DEFAULTS.runs, population = opts.population ?? 1;
  return population > 1 ? Math.floor(runs / population) : runs;
}

/**
 * The default number of workers for AIS on `cores` cores, by runParallel's break-even rule
 * (autoWorkers): w = min(units, cores) when the site updates (runs × temperatures × sweeps × bits)
 * reach AUTO_WORKERS_MIN_UPDATES and AUTO_WORKERS_STARTUP_UPDATES / g, g the share of this thread's
 * time the workers save (the busiest worker holds ⌈units / w⌉ of the units: populations, or runs).
 * 1 otherwise, and for runs that do not split (aisSplits). The result does not depend on it.
 */
export function autoAISWorkers(model: Model, opts: AISOptions, cores: number): number {
  if (!aisSplits(model, opts)) return 1;
  const u = units(opts);
  const w = Math.max(1, Math.min(u, cores));
  if (w === 1) return 1;
  const steps = Array.isArray(opts.schedule) || ArrayBuffer.isView(opts.schedule) ? (opts.schedule as ArrayLike<number>).length - 1 : opts.steps ?? AIS_DEFAULTS.steps;
  const updates = (opts.runs ?? AIS_DEFAULTS.runs) * steps * (opts.sweepsPerStep ?? AIS_DEFAULTS.sweepsPerStep) * canonicalSize(model).nBits;
  const saved = 1 - Math.ceil(u / w) / u;
  const need = saved > 0 ? Math.max(AUTO_WORKERS_MIN_UPDATES, AUTO_WORKERS_STARTUP_UPDATES / saved) : Infinity;
  return updates >= need ? w : 1;
}

/**
 * runAIS with its populations (or groups of independent runs) on worker threads: the same estimate,
 * weights, schedule and diagnostics bit for bit for any number of workers (plus `workers`; seconds
 * differ). Runs that do not split (transitions relaxed and hmc, factors of arity > 2, an explicit
 * partition or firstRun) and `workers` ≤ 1 run on this thread. An abort terminates the workers and
 * returns the pieces completed (partial); it rejects if none had completed.
 */
export async function runAISParallel(engine: Engine, model: Model, opts: AISParallelOptions = {}): Promise<LogZEstimate & { logWeights: Float64Array; schedule: Float64Array }> {
  const { workers: given, signal, onProgress, ...rest } = opts;
  checkSignal(signal);
  if (given !== undefined) checkCount('workers', given, 0, MAX_WORKERS);
  const t0 = performance.now();
  const w = Math.min(given ?? autoAISWorkers(model, rest, availableParallelism()), aisSplits(model, rest) ? units(rest) : 1);
  if (w <= 1 || !aisSplits(model, rest)) {
    const r = runAIS(engine, model, { ...rest, signal, onProgress });
    // workers before meanFieldBound, as on workers (the --json keys' order did not depend on them).
    const { meanFieldBound, ...d } = r.diagnostics;
    return { ...r, diagnostics: { ...d, workers: 1, meanFieldBound } };
  }
  // Validates the options (runAIS's checks) and makes the pilot runs here.
  const { schedule, siteUpdates: pilotUpdates } = aisSchedulePilots(engine, model, rest);
  const population = rest.population ?? 1;
  const runs = rest.runs ?? AIS_DEFAULTS.runs;
  const pieces = population > 1 ? aisPieces(rest) : aisPieces(rest, Math.ceil(runs / w / 4) * 4);
  const workers = Math.min(w, pieces.length);
  const done: (AISPieceResult | null)[] = pieces.map(() => null);
  const data = model.toData();
  const tick = progressTicker(onProgress, 'ais', runs);
  let { aborted: partial } = await superviseWorkers(workers, signal, (k, run) => {
    const mine = pieces.map((piece, index) => ({ index, piece })).filter(({ index }) => index % workers === k);
    const job: AISWorkerJob = { model: data, opts: rest, pieces: mine, schedule };
    const t = startWorkerModule(import.meta.url, 'ais-worker', job);
    let ended = false;
    t.on('message', (m: AISWorkerMessage) => {
      if (run.settled()) return;
      if (m.type === 'piece') {
        done[m.index] = m.result;
        tick?.(pieces[m.index].runs);
      }
      else {
        ended = true;
        if (m.type === 'finished') run.finished();
        else run.fail(m.name === 'ModelError' ? new ModelError(m.message) : new EngineError(`AIS worker: ${m.message}`));
      }
    });
    t.on('error', (e) => run.fail(e instanceof Error ? e : new EngineError(`AIS worker ${k}: ${String(e)}`)));
    t.on('exit', (code) => {
      if (!ended) run.fail(new EngineError(`an AIS worker exited with code ${code} before finishing`));
    });
    return { terminate: () => void t.terminate() };
  });
  // A cancelled run keeps every piece completed, in run order. Not only a prefix: the workers finish
  // theirs in any order, and two workers of one piece each kept none when the second finished first.
  // Each piece is an independent estimate whose run time does not depend on its weights, so which
  // ones completed does not bias the estimate.
  if (done.every((p) => p === null)) throw new CancelledError('AIS cancelled before any population or group of runs completed');
  const r = foldAIS(model, rest, done, (performance.now() - t0) / 1000);
  const d = r.diagnostics;
  const scheduleName = rest.schedule === undefined ? AIS_DEFAULTS.schedule : typeof rest.schedule === 'string' ? rest.schedule : 'custom';
  partial ||= d.partial as boolean;
  return checkedAgainstLowerBound(engine, model, {
    ...r,
    diagnostics: { ...d, schedule: scheduleName, siteUpdates: (d.siteUpdates as number) + pilotUpdates, partial, workers },
    warnings: aisWarnings({ weightESS: d.weightESS as number, estimates: r.logWeights.length, population, partial, logWeightSD: d.logWeightSD as number | null }),
  }, signal);
}
