// Standard errors of the MCMC-based log Z estimators that see disagreement between chains, and the
// checks every log Z estimator reports as warnings when its error bar cannot be trusted.

import { BatchMeans } from '../samplers/estimators.ts';
import { EngineError } from '../core/errors.ts';

/** Relative standard error of the mean weight above which log(mean) ± SE/mean is no error bar. */
export const MAX_RELATIVE_SE = 0.5;
/** Importance weights whose ESS is below min(this, runs/2): the estimate rests on a few runs. */
export const MIN_WEIGHT_ESS = 10;

/**
 * log of the mean of e^{l} over all values of all chains. Its standard error comes from the
 * weights' batch means pooled with the spread of the chain means (samplers/estimators.ts's
 * BatchMeans: √max(within-chain, between-chain variance)), by the delta method on log. Warnings:
 * chains whose mean weights disagree (the estimate rests on fewer than half of them) and a
 * relative error too large for the delta method.
 */
export function logMeanExpChains(chains: Float64Array[], batches: number): { value: number; stdErr: number; warnings: string[] } {
  let top = -Infinity, count = 0;
  for (const c of chains) for (const x of c) {
    top = Math.max(top, x);
    count++;
  }
  if (top === -Infinity || count === 0) return { value: -Infinity, stdErr: NaN, warnings: [] };
  if (top === Infinity) throw new EngineError('an estimator weight is +∞');
  const stats = new BatchMeans(1);
  let total = 0;
  const chainMeans: number[] = [];
  chains.forEach((c, k) => {
    const B = Math.min(batches, c.length);
    let chainSum = 0;
    for (let b = 0; b < B; b++) {
      const lo = Math.floor((b * c.length) / B), hi = Math.floor(((b + 1) * c.length) / B);
      let s = 0;
      for (let t = lo; t < hi; t++) s += Math.exp(c[t] - top);
      total += s;
      chainSum += s;
      stats.addBatch([s], hi - lo, k);
    }
    if (c.length) chainMeans.push(chainSum / c.length);
  });
  const mean = total / count;
  const rel = stats.stdErr()[0] / mean;
  const warnings: string[] = [];
  const M = chainMeans.length;
  if (M > 1) {
    let s = 0, s2 = 0;
    for (const m of chainMeans) {
      s += m;
      s2 += m * m;
    }
    const effective = s2 > 0 ? (s * s) / s2 : 0;
    if (effective < M / 2) warnings.push(`the chains disagree: the estimate rests on about ${effective.toFixed(1)} of ${M} chains, so the chains have not mixed and log Z may be far off; try more chains, longer runs, or AIS with population annealing`);
  }
  if (M === 1) warnings.push('one chain: the standard error cannot see modes the chain never visited; run several chains');
  if (rel > MAX_RELATIVE_SE) warnings.push(`the mean weight has a relative standard error of ${rel.toFixed(2)}: too large for a symmetric error bar on log Z; run longer`);
  return { value: top + Math.log(mean), stdErr: rel, warnings };
}

/** AIS and population annealing: independent runs (or populations) give the spread; its checks. */
export function aisWarnings(o: { weightESS: number; estimates: number; population: number; partial: boolean; logWeightSD?: number | null; populationAnnealing?: boolean }): string[] {
  const out: string[] = [];
  const unit = o.population > 1 ? 'populations' : 'runs';
  // Learning's likelihood runs AIS without population annealing: not suggested there.
  const remedy = `use more temperatures (--ais-steps)${o.populationAnnealing === false ? ` or more ${unit}` : `, more ${unit}, or population annealing`}`;
  if (o.estimates < 2) out.push(`one ${o.population > 1 ? 'population' : 'run'}: no standard error; use several ${unit}`);
  else if (o.weightESS < Math.min(MIN_WEIGHT_ESS, o.estimates / 2)) {
    out.push(`the weights' ESS is ${o.weightESS.toFixed(1)} of ${o.estimates} ${unit}: the estimate rests on a few ${unit} and its standard error is unreliable (typically too small); ${remedy}`);
  } else if (o.logWeightSD != null && lognormalESS(o.logWeightSD, o.estimates) < Math.min(MIN_WEIGHT_ESS, o.estimates / 2)) {
    // The weights' own ESS cannot see a tail the runs never drew: 8 runs of 50 temperatures on an 8×8
    // grid at β = 1 had ESS 6.3 of 8 and log-weight sd 2.8, and were 18.6 standard errors low, silently.
    out.push(`the log weights spread by ${o.logWeightSD.toFixed(2)} nats (sd): weights that spread hold about ${lognormalESS(o.logWeightSD, o.estimates).toFixed(1)} effective of ${o.estimates} ${unit}, their largest are rarely drawn, and the estimate can be low with too small a standard error; ${remedy}`);
  }
  // The standard error of a few estimates is itself a rough estimate (2 runs: a 2-SE interval covered the truth 66 % of the time).
  if (o.estimates >= 2 && o.estimates < MIN_ESTIMATES) out.push(`only ${o.estimates} ${unit}: the standard error rests on ${o.estimates - 1} degree${o.estimates > 2 ? 's' : ''} of freedom and is itself rough (a 2-SE interval covers the truth well under 95 % of the time); use at least ${MIN_ESTIMATES} ${unit}`);
  if (o.partial) out.push(`cancelled: fewer ${unit} than asked`);
  return out;
}

/** Fewer independent estimates (runs or populations) than this: their standard error is itself too rough. */
export const MIN_ESTIMATES = 8;

/** The ESS of `n` log-normal weights whose logs have standard deviation sd: n·e^(−sd²). */
function lognormalESS(sd: number, n: number): number {
  return n * Math.exp(-sd * sd);
}

/** Pareto k̂ of importance weights past which their mean is unreliable (PSIS, Vehtari et al. 2024: k̂ > 0.7). */
export const MAX_PARETO_K = 0.7;

/**
 * The warning for weights whose Pareto k̂ passes MAX_PARETO_K: their sample mean is then too low more
 * often than not, and log Z too high. `what`: the weights' name in the estimator.
 */
export function heavyTail(k: number, what = 'its importance weights'): string {
  return `${what} are heavy-tailed (Pareto k̂ ${k.toFixed(2)} > ${MAX_PARETO_K}): the standard error cannot see the tail, and log Z is likely too high; use --logz ais`;
}

/**
 * The Pareto k̂ of importance weights e^{l}: the shape of a generalised Pareto distribution fitted to
 * their largest min(S/5, 3√S) values above the next one (Zhang and Stephens' 2009 estimate, with the
 * weakly informative prior of PSIS), the tail index of the weights. Past 0.5 their variance is
 * infinite in practice, past MAX_PARETO_K a sample mean is too low more often than not and its
 * standard error cannot see the tail never drawn. NaN for fewer than 10 tail values.
 */
export function paretoK(l: ArrayLike<number>): number {
  const S = l.length, sorted = Float64Array.from(l).sort();
  const M = Math.min(Math.floor(S / 5), Math.ceil(3 * Math.sqrt(S)));
  if (M < 10 || !(sorted[S - 1] > -Infinity)) return NaN;
  const top = sorted[S - 1], cutoff = Math.exp(sorted[S - M - 1] - top);
  const x = Array.from({ length: M }, (_, i) => Math.exp(sorted[S - M + i] - top) - cutoff);
  // Zhang–Stephens: θ's posterior mean over a grid, then k from θ.
  const n = x.length, prior = 3, grid = 30 + Math.floor(Math.sqrt(n));
  const xStar = x[Math.floor(n / 4 + 0.5) - 1];
  const theta = Array.from({ length: grid }, (_, j) => 1 / x[n - 1] + (1 - Math.sqrt(grid / (j + 0.5))) / prior / xStar);
  const kOf = (th: number): number => {
    let k = 0;
    for (const v of x) k += Math.log1p(-th * v);
    return k / n;
  };
  const logLik = theta.map((th) => {
    const k = kOf(th);
    return n * (Math.log(-th / k) - k - 1);
  });
  let thetaHat = 0;
  theta.forEach((th, j) => (thetaHat += th / logLik.reduce((s, l2) => s + Math.exp(l2 - logLik[j]), 0)));
  const k = kOf(thetaHat);
  return (k * n) / (n + 10) + (0.5 * 10) / (n + 10);
}
