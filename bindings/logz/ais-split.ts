// AIS and population annealing in pieces that run anywhere (e.g. on the job queue's workers) and
// fold into runAIS's result bit for bit. A piece is runAIS with firstRun and runs: run r of the
// whole draws from the stream (seed, r), and population p resamples from (seed, p), whoever runs
// the piece. The adaptive schedule comes from pilot runs: piece 0 computes it, as runAIS does, and
// the other pieces get its β values — so the pilots run once and their sweeps count once.
import type { Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { toCanonical } from '../core/canonical.ts';
import { ModelError } from '../core/errors.ts';
import { AIS_DEFAULTS, aisWeightStats, runAISRuns, type AISOptions, type LogZEstimate } from './logz.ts';
import { aisWarnings } from './logz-checks.ts';

/** Runs firstRun … firstRun + runs − 1 of the whole (whole populations). */
export interface AISPiece {
  firstRun: number;
  runs: number;
}

export interface AISPieceResult {
  /** One log weight per run, or one log Ẑ per population. */
  logWeights: Float64Array;
  diagnostics: LogZEstimate['diagnostics'];
  schedule: Float64Array;
}

/** Whether runAIS with these options can be split into pieces (the discrete transitions, pairwise models). */
export function aisSplits(model: Model, opts: AISOptions): boolean {
  const transition = opts.transition ?? AIS_DEFAULTS.transition;
  return (transition === 'tree' || transition === 'gibbs') && model.maxArity <= 2 && opts.partition === undefined && (opts.firstRun ?? 0) === 0;
}

/**
 * The pieces of a run: one population each with population annealing, else groups of
 * `runsPerPiece` runs (default: runs / 32, at least 1). Piece 0 is one unit, so it ends soon.
 */
export function aisPieces(opts: AISOptions, runsPerPiece?: number): AISPiece[] {
  const runs = opts.runs ?? AIS_DEFAULTS.runs, population = opts.population ?? 1;
  if (!(Number.isInteger(runs) && runs >= 1 && Number.isInteger(population) && population >= 1 && runs % population === 0)) {
    throw new ModelError(`AIS runs (${runs}) must be a positive multiple of the population size (${population})`);
  }
  const unit = population > 1 ? population : Math.max(1, runsPerPiece ?? Math.ceil(runs / 32));
  const pieces: AISPiece[] = [];
  for (let r = 0; r < runs; r += unit) pieces.push({ firstRun: r, runs: Math.min(unit, runs - r) });
  return pieces;
}

/** One piece: runAIS on its runs, with `schedule` (piece 0 of an adaptive run: null, it computes it). */
export function runAISPiece(engine: Engine, model: Model, opts: AISOptions, piece: AISPiece, schedule: Float64Array | null): AISPieceResult {
  const r = runAISRuns(engine, model, { ...opts, firstRun: piece.firstRun, runs: piece.runs, ...(schedule ? { schedule } : {}) });
  return { logWeights: r.logWeights, diagnostics: r.diagnostics, schedule: r.schedule };
}

/**
 * runAIS's result from its pieces' results (in piece order; null: not done, e.g. cancelled):
 * the weights of the pieces done, in run order, combined as runAIS combines them.
 */
export function foldAIS(model: Model, opts: AISOptions, done: (AISPieceResult | null)[], seconds: number): LogZEstimate & { logWeights: Float64Array; schedule: Float64Array } {
  const pieces = done.filter((p) => p !== null);
  // Piece 0's facts (its schedule is the one the others used; it names an adaptive one as such).
  const base = pieces[0]?.diagnostics;
  const population = opts.population ?? 1;
  const w = Float64Array.from(pieces.flatMap((p) => Array.from(p.logWeights)));
  const { lme, deadRuns, logWeightSD } = aisWeightStats(w);
  const runs = opts.runs ?? AIS_DEFAULTS.runs;
  let siteUpdates = 0, resamplings = 0;
  for (const p of pieces) {
    siteUpdates += p.diagnostics.siteUpdates as number;
    // Each piece reports its mean; its count is an integer.
    if (population > 1) resamplings += Math.round((p.diagnostics.resamplingsPerPopulation as number) * p.logWeights.length);
  }
  return {
    // The pieces' kernel's offset: the model's constant on the factor graph (higher-order models, and
    // pair tables too large for the binary form, whose toCanonical here refused), else the form's.
    logZ: lme.value + (base!.logZ0 as number) + (base!.kernel === 'factor-graph' ? model.logConst : toCanonical(model).logZOffset),
    logZStdErr: w.length > 1 ? lme.stdErr : NaN,
    logZKind: 'estimate',
    logWeights: w,
    schedule: pieces[0]!.schedule,
    diagnostics: {
      ...base,
      runs: w.length * population,
      populations: population > 1 ? w.length : null,
      resamplingsPerPopulation: population > 1 ? resamplings / Math.max(1, w.length) : null,
      weightESS: lme.ess,
      logWeightSD,
      deadRuns,
      siteUpdates,
      partial: w.length * population < runs,
    },
    seconds,
    // The queue's fold reported no warning for a run cut short (runAISParallel adds its own).
    warnings: aisWarnings({ weightESS: lme.ess, estimates: w.length, population, partial: w.length * population < runs, logWeightSD }),
  };
}
