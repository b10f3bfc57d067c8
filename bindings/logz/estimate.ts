// What every log Z estimator returns, and the log-mean-exp they combine weights with.
import { CancelledError, EngineError } from '../core/errors.ts';
import { logMeanExpChains } from './logz-checks.ts';

/** What every log Z estimator returns. */
export interface LogZEstimate {
  /** Estimate of the natural log of the partition function of the model as built (nats). */
  logZ: number;
  /** Monte Carlo standard error of logZ (nats). */
  logZStdErr: number;
  /** Always 'estimate'. */
  logZKind: 'estimate';
  /** Estimator-specific figures (runs, effective sample sizes, acceptance rates, settings…). */
  diagnostics: Record<string, number | string | boolean | null>;
  /** Wall-clock time of the estimate, in seconds. */
  seconds: number;
  /** Caveats: the estimator's own checks that failed (logz-checks.ts); empty or absent when none. */
  warnings?: string[];
}


/** An AIS temperature schedule: a named shape, or the inverse temperatures 0 = β_0 < … < β_T = 1. */
export type AISSchedule = 'adaptive' | 'linear' | 'sigmoid' | readonly number[] | Float64Array;

// ---------------------------------------------------------------------------------------------
// Log-mean-exp with a delta-method standard error.

/**
 * log((1/R) Σ e^{l_r}) and its standard error sd(w)/(√R · mean w) (delta method on the mean of the
 * weights w_r = e^{l_r − max l}). −∞ entries are weights of 0.
 */
export function logMeanExp(l: ArrayLike<number>): { value: number; stdErr: number; ess: number } {
  const R = l.length;
  if (R === 0) return { value: NaN, stdErr: NaN, ess: 0 };
  let top = -Infinity;
  for (let r = 0; r < R; r++) top = Math.max(top, l[r]);
  if (top === -Infinity) return { value: -Infinity, stdErr: NaN, ess: 0 };
  let s = 0, s2 = 0;
  for (let r = 0; r < R; r++) {
    const w = Math.exp(l[r] - top);
    s += w;
    s2 += w * w;
  }
  const mean = s / R;
  const varW = R > 1 ? Math.max(0, (s2 - R * mean * mean) / (R - 1)) : NaN;
  return { value: top + Math.log(mean), stdErr: Math.sqrt(varW / R) / mean, ess: (s * s) / s2 };
}


// ---------------------------------------------------------------------------------------------
// Batch aggregation shared by the MCMC-based estimators.

/** log of the mean of e^{l} over all values of all chains, with a standard error that sees the chains' spread (logz-checks.ts). */
export function logMeanExpBatched(chains: Float64Array[], batches: number): { value: number; stdErr: number; warnings: string[] } {
  return logMeanExpChains(chains, batches);
}

/**
 * log-mean-exp of the discrete AIS log weights (one per run, or per population) and the spread
 * AIS reports (runAIS, the factor-graph AIS and runs split into pieces); refuses no runs and all-dead
 * runs. `runs`: the runs behind the weights (a population's weight stands for its particles).
 */
export function aisWeightStats(w: Float64Array, runs = w.length): { lme: ReturnType<typeof logMeanExp>; deadRuns: number; logWeightSD: number | null } {
  if (w.length === 0) throw new CancelledError('AIS was cancelled before the first run completed: no estimate');
  const lme = logMeanExp(w);
  // AIS starts uniformly over the states the unary factors allow: where zeros of larger factors leave
  // a tiny part of those configurations (SAT encodings, pedigrees), more runs do not help (1024 runs
  // on Promedus_24 were as dead as 32).
  if (lme.value === -Infinity) throw new EngineError(`every AIS run (${runs}) started on a configuration a zero potential forbids: no estimate (AIS starts uniformly over the states each variable's own factors allow; more runs help only when a fair share of those configurations has positive probability; exact inference, or mean field for a lower bound, does not need that)`);
  let mean = 0, sq = 0, dead = 0;
  for (const x of w) if (x === -Infinity) dead++;
  const live = w.filter((x) => x > -Infinity);
  for (const x of live) mean += x / live.length;
  for (const x of live) sq += (x - mean) ** 2;
  return { lme, deadRuns: dead, logWeightSD: live.length > 1 ? Math.sqrt(sq / (live.length - 1)) : null };
}
