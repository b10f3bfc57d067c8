// MCMC diagnostics from per-iteration traces of several chains: effective sample size, split-R̂ and
// Monte Carlo standard errors. Pure TypeScript (the samplers record the traces in WASM).
//
// * ESS: Stan's multi-chain estimator (Stan Reference Manual §16.4; Vehtari, Gelman, Simpson, Carpenter,
//   Bürkner 2021, §3.2). Autocovariances per chain by FFT (zero-padded, so not circular), combined over
//   chains as ρ̂_t = 1 − (W − mean_m acov_m(t)) / var⁺, then Geyer's initial positive sequence on pair
//   sums ρ̂_{2k} + ρ̂_{2k+1}, made monotone, and τ̂ = −1 + 2 Σ ρ̂_t (+ the next even lag's ρ̂ when
//   positive: the variance-reducing term for antithetic chains). ESS = M·N / max(τ̂, 1/log10(M·N)).
//   A chain stuck far from the others inflates var⁺ and lowers ESS, as it should.
// * R̂: the classic split-R̂ (Gelman et al., BDA3 §11.4) and the rank-normalised split-R̂ of Vehtari
//   et al. 2021 (max of the bulk R̂ on rank-normalised draws and the tail R̂ on rank-normalised
//   |draw − median|).
// * MCSE of a mean: sd / √ESS.
//
// Constant series (zero variance) have no ESS or R̂: NaN, which the summaries skip.

export type Chains = readonly ArrayLike<number>[];

// ---------------------------------------------------------------------------------------------
// FFT and autocovariance.

/** In-place iterative radix-2 FFT of (re, im); length a power of two. */
function fft(re: Float64Array, im: Float64Array): void {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [re[i], re[j]] = [re[j], re[i]];
      [im[i], im[j]] = [im[j], im[i]];
    }
  }
  for (let len = 2; len <= n; len <<= 1) {
    const ang = (-2 * Math.PI) / len;
    const wr = Math.cos(ang), wi = Math.sin(ang);
    const half = len >> 1;
    for (let i = 0; i < n; i += len) {
      let cr = 1, ci = 0;
      for (let k = 0; k < half; k++) {
        const a = i + k, b = a + half;
        const tr = re[b] * cr - im[b] * ci;
        const ti = re[b] * ci + im[b] * cr;
        re[b] = re[a] - tr;
        im[b] = im[a] - ti;
        re[a] += tr;
        im[a] += ti;
        const nr = cr * wr - ci * wi;
        ci = cr * wi + ci * wr;
        cr = nr;
      }
    }
  }
}

/** Biased autocovariances acov[t] = (1/N) Σ_{i<N−t} (x_i − x̄)(x_{i+t} − x̄), t = 0 … N−1, by FFT. */
export function autocovariance(x: ArrayLike<number>): Float64Array {
  const n = x.length;
  const out = new Float64Array(n);
  if (n === 0) return out;
  let mean = 0;
  for (let i = 0; i < n; i++) mean += x[i];
  mean /= n;
  let L = 1;
  while (L < 2 * n) L <<= 1;
  const re = new Float64Array(L), im = new Float64Array(L);
  for (let i = 0; i < n; i++) re[i] = x[i] - mean;
  fft(re, im);
  for (let k = 0; k < L; k++) {
    re[k] = re[k] * re[k] + im[k] * im[k];
    im[k] = 0;
  }
  // The power spectrum is real and even, so its forward transform is L times the inverse one.
  fft(re, im);
  for (let t = 0; t < n; t++) out[t] = re[t] / (L * n);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Helpers.

function equalLength(chains: Chains): number {
  if (chains.length === 0) return 0;
  let n = Infinity;
  for (const c of chains) n = Math.min(n, c.length);
  return n;
}

function meanOf(x: ArrayLike<number>, n = x.length): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += x[i];
  return s / n;
}

function varianceOf(x: ArrayLike<number>, n = x.length): number {
  const m = meanOf(x, n);
  let s = 0;
  for (let i = 0; i < n; i++) s += (x[i] - m) * (x[i] - m);
  return s / (n - 1);
}

function isConstant(chains: Chains, n: number): boolean {
  const first = chains[0][0];
  for (const c of chains) for (let i = 0; i < n; i++) if (c[i] !== first) return false;
  return true;
}

/** Each chain cut into two halves (the middle draw of an odd-length chain is dropped). */
export function splitChains(chains: Chains): Float64Array[] {
  const n = equalLength(chains);
  const h = Math.floor(n / 2);
  const out: Float64Array[] = [];
  for (const c of chains) {
    const a = new Float64Array(h), b = new Float64Array(h);
    for (let i = 0; i < h; i++) {
      a[i] = c[i];
      b[i] = c[n - h + i];
    }
    out.push(a, b);
  }
  return out;
}

/** Inverse of the standard normal CDF (Acklam's rational approximation, relative error < 1.2e-9). */
export function inverseNormalCdf(p: number): number {
  if (!(p > 0 && p < 1)) return p === 0 ? -Infinity : p === 1 ? Infinity : NaN;
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  let x: number;
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - lo) {
    const q = p - 0.5, r = q * q;
    x = ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  return x;
}

/** Normal scores of the integer ranks 1 … S, cached for the last S (every quantity of a run shares it). */
let scoreCache: { S: number; scores: Float64Array } | null = null;

function rankScore(rank: number, S: number): number {
  if (Number.isInteger(rank)) {
    if (!scoreCache || scoreCache.S !== S) {
      const scores = new Float64Array(S + 1);
      for (let r = 1; r <= S; r++) scores[r] = inverseNormalCdf((r - 0.375) / (S + 0.25));
      scoreCache = { S, scores };
    }
    return scoreCache.scores[rank];
  }
  return inverseNormalCdf((rank - 0.375) / (S + 0.25));
}

/** Indices that sort `keys` ascending (stable bottom-up merge sort on typed arrays). */
function argsort(keys: Float64Array): Uint32Array {
  const n = keys.length;
  let a = new Uint32Array(n), b = new Uint32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  for (let width = 1; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n), hi = Math.min(lo + 2 * width, n);
      let i = lo, j = mid, k = lo;
      while (i < mid && j < hi) b[k++] = keys[a[j]] < keys[a[i]] ? a[j++] : a[i++];
      while (i < mid) b[k++] = a[i++];
      while (j < hi) b[k++] = a[j++];
    }
    const t = a;
    a = b;
    b = t;
  }
  return a;
}

/** Pooled ranks (ties averaged) mapped to normal scores Φ⁻¹((r − 3/8)/(S + 1/4)), chain by chain. */
export function rankNormalize(chains: Chains): Float64Array[] {
  const n = equalLength(chains);
  const S = n * chains.length;
  const vals = new Float64Array(S);
  chains.forEach((c, k) => {
    for (let i = 0; i < n; i++) vals[k * n + i] = c[i];
  });
  const idx = argsort(vals);
  const z = new Float64Array(S);
  for (let i = 0; i < S; ) {
    let j = i;
    while (j + 1 < S && vals[idx[j + 1]] === vals[idx[i]]) j++;
    const score = rankScore((i + j) / 2 + 1, S);
    for (let k = i; k <= j; k++) z[idx[k]] = score;
    i = j + 1;
  }
  return chains.map((_, k) => z.slice(k * n, (k + 1) * n));
}

// ---------------------------------------------------------------------------------------------
// ESS, R̂, MCSE.

/**
 * Effective sample size of the mean over all chains (Geyer's initial monotone sequence on the
 * multi-chain autocorrelations). Chains are truncated to a common length. NaN when the series is
 * constant or has fewer than 4 draws per chain.
 */
export function ess(chains: Chains, withinOnly = false): number {
  const M = chains.length;
  const N = equalLength(chains);
  if (M === 0 || N < 4 || isConstant(chains, N)) return NaN;
  const means = chains.map((c) => meanOf(c, N));
  // Autocovariances lag by lag while few lags are needed (the common case: Geyer's sequence stops
  // after a few autocorrelation times), all lags by FFT once many are.
  const DIRECT_LAGS = 32;
  let full: Float64Array[] | null = null;
  const direct = (c: ArrayLike<number>, mu: number, t: number) => {
    let s = 0;
    for (let i = 0; i + t < N; i++) s += (c[i] - mu) * (c[i + t] - mu);
    return s / N;
  };
  const acovT = (t: number) => {
    if (t >= N) return 0;
    if (!full && t >= DIRECT_LAGS) full = chains.map((c) => autocovariance(Float64Array.from({ length: N }, (_, i) => c[i])));
    let s = 0;
    for (let k = 0; k < M; k++) s += full ? full[k][t] : direct(chains[k], means[k], t);
    return s / M;
  };
  let meanVar = 0;
  for (let k = 0; k < M; k++) meanVar += (direct(chains[k], means[k], 0) * N) / (N - 1);
  meanVar /= M;
  let varPlus = (meanVar * (N - 1)) / N;
  // withinOnly: the ESS the chains would have if they agreed (autocorrelation within chains only).
  if (M > 1 && !withinOnly) varPlus += varianceOf(means);
  if (!(varPlus > 0)) return NaN;
  const rho = new Float64Array(N + 1);
  let t = 0;
  let even = 1;
  let odd = 1 - (meanVar - acovT(1)) / varPlus;
  rho[0] = even;
  rho[1] = odd;
  while (t < N - 5 && !Number.isNaN(even + odd) && even + odd > 0) {
    t += 2;
    even = 1 - (meanVar - acovT(t)) / varPlus;
    odd = 1 - (meanVar - acovT(t + 1)) / varPlus;
    if (even + odd >= 0) {
      rho[t] = even;
      rho[t + 1] = odd;
    }
  }
  const maxT = t;
  if (even > 0) rho[maxT + 1] = even;
  // Initial monotone sequence.
  for (let k = 1; k <= maxT - 3; k += 2) {
    if (rho[k + 1] + rho[k + 2] > rho[k - 1] + rho[k]) {
      rho[k + 1] = (rho[k - 1] + rho[k]) / 2;
      rho[k + 2] = rho[k + 1];
    }
  }
  let sum = 0;
  for (let k = 0; k < maxT; k++) sum += rho[k];
  let tau = -1 + 2 * sum + rho[maxT + 1];
  const total = M * N;
  tau = Math.max(tau, 1 / Math.log10(total));
  return total / tau;
}

/** Bulk-ESS (Vehtari et al. 2021): ESS of the rank-normalised split chains. */
export function essBulk(chains: Chains): number {
  return essBulkSplit(splitChains(chains));
}

function essBulkSplit(split: Float64Array[], ranked?: Float64Array[]): number {
  if (split.length === 0 || split[0].length < 4 || isConstant(split, split[0].length)) return NaN;
  return ess(ranked ?? rankNormalize(split));
}

/**
 * Tail-ESS (Vehtari et al. 2021): the smaller ESS of the indicators x ≤ q₀.₀₅ and x ≥ q₀.₉₅ (pooled
 * quantiles) over the split chains. NaN when either indicator is constant.
 */
export function essTail(chains: Chains): number {
  const split = splitChains(chains);
  return split.length === 0 ? NaN : essTailSplit(split, pooledSorted(split));
}

/** The split chains' draws pooled and sorted. */
function pooledSorted(split: Float64Array[]): Float64Array {
  const n = split[0].length;
  const all = new Float64Array(split.length * n);
  split.forEach((c, k) => all.set(c, k * n));
  return all.sort();
}

function essTailSplit(split: Float64Array[], all: Float64Array): number {
  if (split.length === 0 || split[0].length < 4) return NaN;
  const quantile = (p: number) => {
    const h = (all.length - 1) * p, lo = Math.floor(h);
    return all[lo] + (h - lo) * ((all[Math.min(lo + 1, all.length - 1)] ?? all[lo]) - all[lo]);
  };
  const q05 = quantile(0.05), q95 = quantile(0.95);
  const lowerTail = ess(split.map((c) => c.map((v) => (v <= q05 ? 1 : 0))));
  const upperTail = ess(split.map((c) => c.map((v) => (v >= q95 ? 1 : 0))));
  return Math.min(lowerTail, upperTail);
}

/**
 * The largest rank-normalised split-R̂ that converged chains reach by chance, at false-alarm
 * probability `alpha` over `tests` R̂ values. For M split chains whose half-chain means each have
 * variance τW/n, var⁺/W ≈ 1 + (τ/n)(F − 1) with F ~ F(M − 1, E − M), E = the within-chain ESS of the
 * split chains (at most their number of draws) and τ/n = M/E; so R̂² ≤ 1 + q·M/E, q the
 * (1 − α/tests) quantile of F (Paulson's normal approximation). Long runs drive this to 1; short
 * ones (a few dozen batch means) cannot resolve R̂ near 1.01.
 */
export function rhatNoiseLimit(splitChainCount: number, essWithin: number, draws: number, tests: number, alpha = 0.01): number {
  const E = Math.min(essWithin, draws);
  const d1 = splitChainCount - 1, d2 = Math.max(1, E - splitChainCount);
  if (!(d1 >= 1 && E > 0)) return Infinity;
  const z = inverseNormalCdf(1 - alpha / Math.max(1, tests));
  const c1 = 2 / (9 * d1), c2 = 2 / (9 * d2), a = 1 - c2, b = 1 - c1;
  // Paulson: z = (a F^⅓ − b) / √(c1 + c2 F^⅔), solved for u = F^⅓.
  const A = a * a - z * z * c2;
  if (!(A > 0)) return Infinity;
  const u = (a * b + Math.sqrt(a * a * b * b - A * (b * b - z * z * c1))) / A;
  return Math.sqrt(1 + (u ** 3 * splitChainCount) / E);
}

/**
 * Within-chain ESS (what rhatNoiseLimit needs): of the rank-normalised whole chains, with the
 * autocorrelations normalised by the within-chain variance only, so that chains which disagree do
 * not lower it. Whole chains rather than halves: short halves underestimate the autocorrelation.
 */
export function essWithin(chains: Chains): number {
  const n = equalLength(chains);
  if (chains.length === 0 || n < 4 || isConstant(chains, n)) return NaN;
  return ess(rankNormalize(chains), true);
}

/** The classic split-R̂ (BDA3): √(var⁺ / W) over the half-chains. NaN for constant series. */
export function splitRhat(chains: Chains): number {
  const split = splitChains(chains);
  return rhatOf(split);
}

function rhatOf(chains: Float64Array[]): number {
  const M = chains.length;
  if (M < 2) return NaN;
  const n = chains[0].length;
  if (n < 2 || isConstant(chains, n)) return NaN;
  let W = 0;
  const means = new Float64Array(M);
  chains.forEach((c, k) => {
    W += varianceOf(c);
    means[k] = meanOf(c);
  });
  W /= M;
  const Bn = varianceOf(means); // B / n
  const varPlus = ((n - 1) / n) * W + Bn;
  if (!(W > 0)) return Bn > 0 ? Infinity : NaN;
  return Math.sqrt(varPlus / W);
}

/** Rank-normalised split-R̂ (Vehtari et al. 2021): max(bulk R̂, tail R̂ of the folded draws). */
export function rankNormalizedRhat(chains: Chains): number {
  const split = splitChains(chains);
  if (split.length === 0 || split[0].length < 2 || isConstant(split, split[0].length)) return NaN;
  return rankNormalizedRhatSplit(split, rankNormalize(split), pooledSorted(split));
}

/** rankNormalizedRhat of non-constant split chains, given their rank-normalised draws and pooled sorted draws. */
function rankNormalizedRhatSplit(split: Float64Array[], ranked: Float64Array[], all: Float64Array): number {
  const bulk = rhatOf(ranked);
  const med = all.length % 2 ? all[(all.length - 1) / 2] : 0.5 * (all[all.length / 2 - 1] + all[all.length / 2]);
  const folded = split.map((c) => c.map((v) => Math.abs(v - med)));
  const tail = isConstant(folded, folded[0].length) ? NaN : rhatOf(rankNormalize(folded));
  if (Number.isNaN(tail)) return bulk;
  return Math.max(bulk, tail);
}

/**
 * essBulk, essTail and rankNormalizedRhat of one quantity at once (the same values), sharing the
 * split chains, their rank normalisation and their pooled sort: what every traced quantity of a
 * run needs.
 */
export function bulkTailDiagnostics(chains: Chains): { essBulk: number; essTail: number; rhat: number } {
  const split = splitChains(chains);
  if (split.length === 0) return { essBulk: NaN, essTail: NaN, rhat: NaN };
  const n = split[0].length;
  const all = pooledSorted(split);
  const constant = isConstant(split, n);
  const ranked = n >= 2 && !constant ? rankNormalize(split) : undefined;
  return {
    essBulk: essBulkSplit(split, ranked),
    essTail: essTailSplit(split, all),
    rhat: ranked ? rankNormalizedRhatSplit(split, ranked, all) : NaN,
  };
}

/** Monte Carlo standard error of the mean over all chains: sd / √ESS. */
export function mcse(chains: Chains): number {
  const N = equalLength(chains);
  const e = ess(chains);
  if (Number.isNaN(e)) return isConstant(chains, N) && N > 0 ? 0 : NaN;
  const pooled: number[] = [];
  for (const c of chains) for (let i = 0; i < N; i++) pooled.push(c[i]);
  return Math.sqrt(varianceOf(pooled) / e);
}

/** ESS, R̂ and MCSE of several traced quantities over chains. */
export interface TraceSummary {
  /** Per quantity: ESS of the mean (NaN for constant series). */
  ess: Float64Array;
  /** Per quantity: rank-normalised split-R̂ (NaN for constant series). */
  rhat: Float64Array;
  /** Per quantity: MCSE of the mean, sd/√ESS (0 for constant series). */
  mcse: Float64Array;
  /** Median ESS over the quantities (null when none is defined). */
  essMedian: number | null;
  /** Smallest ESS over the quantities (null when none is defined). */
  essMin: number | null;
  /** Largest R̂ over the quantities (null when none is defined). */
  rhatMax: number | null;
}

/** Summaries over quantities: traces[q][chain] is quantity q's draws in one chain. */
export function summarizeTraces(traces: readonly Chains[]): TraceSummary {
  const Q = traces.length;
  const essV = new Float64Array(Q), rhat = new Float64Array(Q), se = new Float64Array(Q);
  for (let q = 0; q < Q; q++) {
    const t = traces[q];
    essV[q] = ess(t);
    rhat[q] = rankNormalizedRhat(t);
    const N = equalLength(t);
    if (Number.isNaN(essV[q])) se[q] = N > 0 && isConstant(t, N) ? 0 : NaN;
    else {
      const pooled: number[] = [];
      for (const c of t) for (let i = 0; i < N; i++) pooled.push(c[i]);
      se[q] = Math.sqrt(varianceOf(pooled) / essV[q]);
    }
  }
  const finiteEss = Array.from(essV).filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  const finiteRhat = Array.from(rhat).filter((x) => !Number.isNaN(x));
  const k = finiteEss.length;
  return {
    ess: essV,
    rhat,
    mcse: se,
    essMedian: k ? (k % 2 ? finiteEss[(k - 1) / 2] : 0.5 * (finiteEss[k / 2 - 1] + finiteEss[k / 2])) : null,
    essMin: k ? finiteEss[0] : null,
    rhatMax: finiteRhat.length ? Math.max(...finiteRhat) : null,
  };
}
