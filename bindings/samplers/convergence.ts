// Convergence diagnostics and warnings shared by every sampler.
//
// * R̂ and ESS over per-chain series: rank-normalised split-R̂ and bulk/tail ESS (Vehtari, Gelman,
//   Simpson, Carpenter, Bürkner 2021; diagnostics.ts). The batch-means samplers (Gibbs, block Gibbs)
//   use each chain's series of batch means of the Rao–Blackwellised marginals (the kernels sum per
//   batch in WASM, so no per-sweep trace crosses to TypeScript); their ESS counts batch means. DHMC
//   and MALA trace the RB marginals draw by draw (thinned); their ESS counts kept draws.
// * Warnings: one sentence each, for the result's `warnings` (the CLI prints each on stderr).

import { bulkTailDiagnostics, essWithin, rhatNoiseLimit, type Chains } from './diagnostics.ts';

/** Vehtari et al.'s R̂ threshold; a short run's own noise can raise it (rhatNoiseLimit). */
export const RHAT_LIMIT = 1.01;
/** Bulk/tail ESS per chain below which R̂ and the standard errors are unreliable (Vehtari et al. 2021, §4). */
export const ESS_PER_CHAIN = 100;
/** For series of batch means: an ESS below this fraction of the batches means batches are too short. */
export const ESS_BATCH_FRACTION = 0.1;
/**
 * Median lag-1 autocorrelation of the batch means past which the batches are too short for their
 * premise (independent batch means) and the standard errors too small. Block Gibbs on a 3-state
 * Potts 4×4 torus at β = 1 (chains stay in a mode for 5–10 batches): 8 of 100 seeds with a marginal
 * past 4 standard errors, 3 of them with no warning (R̂ 1.200–1.212 under the noise limit, ≈ 1.23);
 * the median was 0.45–0.78 on all 100 (the one below 0.5 warned by R̂), at most 0.43 on 300
 * well-mixing runs (Ising and Potts, Gibbs, block and tree Gibbs, PT, Swendsen–Wang; 17 settings).
 */
export const BATCH_LAG1_LIMIT = 0.5;

/** ESS and R̂ of the traced series of a run, and the warnings they call for. */
export interface SeriesDiagnostics {
  /** Per variable (NaN: not traced or constant): ESS = min(bulk, tail) over its states. */
  ess: Float64Array;
  /** Per variable: rank-normalised split-R̂, max over its states. */
  rhat: Float64Array;
  /** Smallest ESS over the traced variables (null when none). */
  essMin: number | null;
  /** Median ESS over the traced variables (null when none). */
  essMedian: number | null;
  /** Largest R̂ over the traced variables (null when none). */
  rhatMax: number | null;
  /** Variables whose R̂ exceeds max(1.01, the noise level of a converged run this long). */
  rhatFlagged: number;
  /** The largest R̂ a converged run of this length would show by chance (over the flagged test). */
  rhatNoise: number | null;
  /** Series of batch means: the median over traced quantities of their pooled within-chain lag-1 autocorrelation (null: draws, or nothing varies). */
  batchLag1: number | null;
}

/** Draws in the split chains (each chain truncated to the shortest, its middle draw dropped if odd). */
function seriesDraws(t: Chains): number {
  let n = Infinity;
  for (const c of t) n = Math.min(n, c.length);
  return t.length * 2 * Math.floor(n / 2);
}

function median(xs: number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  const k = s.length;
  return k % 2 ? s[(k - 1) / 2] : 0.5 * (s[k / 2 - 1] + s[k / 2]);
}

/**
 * R̂ and ESS of quantities traced per chain: traces[q][chain], quantity q belonging to variable
 * owner[q] (≥ 0; a variable's states are aggregated: ESS min, R̂ max) of `n`.
 *
 * R̂ is flagged above max(1.01, rhatNoiseLimit), at a 1 % false-alarm rate for the whole run. For
 * series of batch means (`unit` 'batch means') the limit takes the batch means as independent —
 * the premise of batch means — so it also flags batch means that drift (batches too short, or
 * chains still moving); for draws it takes the within-chain ESS, and the ESS floor (100 per chain)
 * covers chains too slow for R̂ to resolve.
 */
export function seriesDiagnostics(traces: readonly Chains[], owner: readonly number[], n: number, unit: 'batch means' | 'draws'): SeriesDiagnostics {
  const ess = new Float64Array(n).fill(NaN);
  const rhat = new Float64Array(n).fill(NaN);
  let flagged = 0;
  let noiseMin = Infinity;
  const tests = 2 * traces.length; // bulk and tail R̂ of each quantity
  const lags: number[] = [];
  traces.forEach((t, q) => {
    const v = owner[q];
    if (v < 0 || t.length === 0 || roundingOnly(t)) return;
    if (unit === 'batch means') {
      const rho = pooledLag1(t);
      if (!Number.isNaN(rho)) lags.push(rho);
    }
    const d = bulkTailDiagnostics(t);
    const e = Math.min(d.essBulk, d.essTail);
    const r = d.rhat;
    if (!Number.isNaN(e)) ess[v] = Number.isNaN(ess[v]) ? e : Math.min(ess[v], e);
    if (!Number.isNaN(r)) {
      rhat[v] = Number.isNaN(rhat[v]) ? r : Math.max(rhat[v], r);
      const noise = rhatNoiseLimit(2 * t.length, unit === 'batch means' ? Infinity : essWithin(t), seriesDraws(t), tests);
      noiseMin = Math.min(noiseMin, noise);
      if (r > Math.max(RHAT_LIMIT, noise)) flagged++;
    }
  });
  const essList = Array.from(ess).filter((x) => Number.isFinite(x));
  const rhatList = Array.from(rhat).filter((x) => !Number.isNaN(x));
  return {
    ess,
    rhat,
    essMin: essList.length ? Math.min(...essList) : null,
    essMedian: essList.length ? median(essList) : null,
    // Chains frozen in different states give R̂ = ∞: reported as the largest double, which JSON can carry.
    rhatMax: rhatList.length ? Math.min(Number.MAX_VALUE, Math.max(...rhatList)) : null,
    rhatFlagged: flagged,
    rhatNoise: Number.isFinite(noiseMin) ? noiseMin : null,
    batchLag1: lags.length ? median(lags) : null,
  };
}

/**
 * Whether a quantity's series differ only in their last digits: a Rao–Blackwellised marginal that
 * the model fixes (Swendsen–Wang on a zero-field Potts torus: 1/3 in every batch, up to summation
 * rounding of 1e-9) has no R̂, ESS or autocorrelation to speak of — its lag-1 correlation of
 * rounding noise (0.95) warned on every run.
 */
function roundingOnly(t: Chains): boolean {
  let lo = Infinity, hi = -Infinity;
  for (const c of t) for (let b = 0; b < c.length; b++) (lo = Math.min(lo, c[b])), (hi = Math.max(hi, c[b]));
  return hi - lo <= 1e-9 * Math.max(Math.abs(lo), Math.abs(hi));
}

/** A quantity's lag-1 autocorrelation within chains, pooled over them (each chain about its own mean); NaN when nothing varies. */
function pooledLag1(t: Chains): number {
  let ss = 0, lag = 0;
  for (const c of t) {
    let m = 0;
    for (let b = 0; b < c.length; b++) m += c[b];
    m /= c.length;
    for (let b = 0; b < c.length; b++) {
      ss += (c[b] - m) ** 2;
      if (b + 1 < c.length) lag += (c[b] - m) * (c[b + 1] - m);
    }
  }
  return ss > 0 ? lag / ss : NaN;
}

const REMEDY = 'more chains, longer runs, tree-block moves, parallel tempering or population annealing';

/** What every sampler checks: chains that disagree (R̂) and too few effective samples for the error bars. */
export function convergenceWarnings(d: { essMin: number | null; rhatMax: number | null; rhatFlagged: number; batchLag1?: number | null }, o: { chains: number; seriesLength: number; unit: 'batch means' | 'draws'; variables: number }): string[] {
  const out: string[] = [];
  // Every sampler's (dhmc and mala had none: one chain in one mode of a zero-field ferromagnet, 0.0007 ± 0.0003 against 0.5).
  if (o.chains < 2) out.push('one chain: its standard errors cannot see other modes, and R̂ compares only its halves; run several chains');
  // Split-R̂ halves each chain's series: below 4 there is nothing to compare (samples: 1 reported R̂ and ESS null, silently).
  if (o.seriesLength < 4) out.push(`only ${o.seriesLength} ${o.unit} per chain: too few for R̂ and ESS (they need 4), so nothing here tells whether the chains mixed or how far off the marginals are; run more samples`);
  // Varied (R̂ defined) but no ESS could be estimated: 5 samples gave 0.74 ± 0.02 against 0.54, silently.
  else if (d.essMin === null && d.rhatMax !== null) out.push(`no ESS could be estimated from ${o.seriesLength} ${o.unit} per chain: too short to tell whether the standard errors are reliable; run more samples`);
  if (d.rhatFlagged > 0 && d.rhatMax !== null) {
    out.push(`R̂ up to ${fmt(d.rhatMax)} (> ${RHAT_LIMIT} on ${d.rhatFlagged} of ${o.variables} traced quantities): the chains disagree (or drift), so they have not mixed and the marginals may be far off even where their standard errors are small; try ${REMEDY}`);
  }
  if (d.essMin !== null) {
    const floor = o.unit === 'batch means' ? ESS_BATCH_FRACTION * o.chains * o.seriesLength : ESS_PER_CHAIN * o.chains;
    if (d.essMin < floor) out.push(`ESS down to ${fmt(d.essMin)} ${o.unit} (below ${fmt(floor)}): too few effective samples for the reported standard errors to be reliable; try ${REMEDY}`);
  }
  if (o.unit === 'batch means' && d.batchLag1 != null && d.batchLag1 > BATCH_LAG1_LIMIT) {
    out.push(`batch means autocorrelated (median lag-1 correlation ${d.batchLag1.toFixed(2)} > ${BATCH_LAG1_LIMIT}): the batches are shorter than the chains take to move between modes, so the standard errors are too small; run longer (--samples) or try ${REMEDY}`);
  }
  return out;
}

function fmt(x: number): string {
  if (x >= Number.MAX_VALUE) return '∞';
  return Math.abs(x) >= 1e4 ? x.toExponential(1) : Math.abs(x) >= 100 ? x.toFixed(0) : x.toPrecision(3);
}

/** Evenly spaced variables, at most `maxBits` bits of them (all when they fit): what to trace. */
export function tracedVariables(n: number, totalBits: number, maxBits: number): number[] {
  if (totalBits <= maxBits) return Array.from({ length: n }, (_, v) => v);
  const count = Math.max(1, Math.floor(maxBits / (totalBits / n)));
  const set = new Set<number>();
  for (let i = 0; i < count; i++) set.add(Math.floor((i * n) / count));
  return [...set];
}

/** Mean acceptance this far from the dual-averaging target means warm-up did not converge. */
export const ACCEPT_TOLERANCE = 0.15;
/** Final step sizes of the chains spread by more than this factor: warm-up ended in different regions. */
export const STEP_SIZE_SPREAD = 4;
/** Divergent transitions above this fraction of the kept ones. */
export const DIVERGENCE_FRACTION = 0.01;

/** The continuous samplers' own checks: adaptation, divergences, and ULA's bias. */
export function adaptationWarnings(o: { adapted: boolean; targetAccept: number; acceptRate: number | null; stepSizes: readonly number[]; divergences: number; transitions: number; biased: boolean }): string[] {
  const out: string[] = [];
  if (o.adapted && o.acceptRate !== null && Math.abs(o.acceptRate - o.targetAccept) > ACCEPT_TOLERANCE) {
    out.push(`step-size adaptation did not converge: mean acceptance ${o.acceptRate.toFixed(3)} against a target of ${o.targetAccept}; use a longer warm-up (--burnin)`);
  }
  if (o.adapted && o.stepSizes.length > 1) {
    const spread = Math.max(...o.stepSizes) / Math.min(...o.stepSizes);
    if (spread > STEP_SIZE_SPREAD) out.push(`warm-up adapted step sizes that differ ${spread.toFixed(1)}-fold between chains: the chains sit in differently shaped regions; use a longer warm-up or ${REMEDY}`);
  }
  if (o.transitions > 0 && o.divergences > DIVERGENCE_FRACTION * o.transitions) {
    out.push(`${o.divergences} divergent transitions (${((100 * o.divergences) / o.transitions).toFixed(1)} %): the integrator fails in parts of the density and the estimates may be biased; lower the step size (--target-accept closer to 1)`);
  }
  if (o.biased) out.push('ULA is biased: its stationary law is not the target, and its standard errors measure only the Monte Carlo noise around the biased limit');
  return out;
}
