// log Z from DHMC samples of the relaxed density p(x) (Zhang et al. 2012): eq. 14 generalised to any
// reference state, and §3.4's mirrored importance estimator (see logz.ts for the overview).
import type { Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { bitsToMarginals, bitsToStdErr, type CanonicalForm } from '../core/canonical.ts';
import { CancelledError, EngineError, ModelError } from '../core/errors.ts';
import { mirrorImages, stateSymmetry, symmetryWarning } from '../core/symmetry.ts';
import { progressTicker, type Progress } from '../core/result.ts';
import { checkCount, checkOptionKeys, definedOnly, MAX_CHAINS } from '../core/options.ts';
import { buildRelaxation, type RelaxationOptions } from '../relax/relaxation.ts';
import { denseCholesky, symmetricEigen } from '../linalg/dense.ts';
import { DHMCSampler } from '../samplers/dhmc.ts';
import { logMeanExpBatched, type LogZEstimate } from './estimate.ts';
import { BatchMeans } from '../samplers/estimators.ts';
import { heavyTail, MAX_PARETO_K, paretoK } from './logz-checks.ts';


/**
 * Options of the relaxation-based log Z estimators (`runZhangLogZ`, `runMirrorLogZ`); defaults in
 * RELAXED_LOGZ_DEFAULTS.
 */
export interface RelaxedLogZOptions {
  /** Seed of the DHMC chains (default 1). */
  seed?: number;
  /** Independent DHMC chains (default 4). */
  chains?: number;
  /** DHMC transitions per chain after warm-up (default 2000). */
  samples?: number;
  /** Warm-up transitions per chain, adapting the step size (default 500). */
  burnin?: number;
  /** Batches per chain for the standard error. Default 10. */
  batches?: number;
  /** Leapfrog steps per DHMC transition (default 5). */
  leapfrogSteps?: number;
  /** Acceptance rate the warm-up's step-size adaptation aims at (default 0.9). */
  targetAccept?: number;
  /** Shift and factor of the relaxation (default buildRelaxation's). */
  relaxation?: RelaxationOptions;
  /**
   * zhang: the state s* whose probability is estimated. 'mode' (default): each variable's most
   * probable state under the Rao–Blackwellised marginals E[π(x)] (the same samples). 'zero': every
   * user variable in state 0 — s = 0 for a binary model, eq. 14 as printed; falls back to 'mode'
   * when its potential is 0. p(s = 0) is usually tiny and the estimate then worthless (on Zhang's own
   * 10×10 grids it is off by tens of nats; bench/results/logz.json).
   */
  reference?: 'zero' | 'mode';
  /** mirror: covariance of the Gaussian q. Default 'full' up to 256 dimensions, else 'diag'. */
  covariance?: 'full' | 'diag';
  /**
   * mirror: eigenvalues of q's covariance are capped at this value (default 1.9). In the whitened x
   * of the relaxation, p(x) is a mixture of N(Mᵀs, I), so E_p[(q/p)²] = ∫q²/p is finite iff q's
   * covariance is below 2I; the fitted covariance is I + Cov(Mᵀs) and breaks that whenever the
   * model is more than weakly coupled (heavy-tailed weights, standard errors that lie). Infinity:
   * Zhang's plain fit. Finite is not small: past 4×4 Ising grids one Gaussian fits p(x) too poorly
   * (capped q is narrower than p in 15–42 directions on 6×6–10×10), the weights' tail is heavy
   * anyway (Pareto k̂ 1–2) and log Z comes out high; the estimate then warns (diagnostics.paretoK).
   */
  covarianceCap?: number;
  /** Stops the run between chains; the estimate then uses the chains done. */
  signal?: AbortSignal;
  /** Called as chains complete (phase 'zhang' or 'mirror', in chains). */
  onProgress?: (p: Progress) => void;
}

/** The options both relaxed estimators read (RelaxedLogZOptions but reference, covariance and covarianceCap). */
const RELAXED_LOGZ_SHARED_KEYS: readonly string[] = ['seed', 'chains', 'samples', 'burnin', 'batches', 'leapfrogSteps', 'targetAccept', 'relaxation', 'signal', 'onProgress'];
/** Every option runZhangLogZ reads: it refuses any other (the mirror estimator's covariance, covarianceCap too). */
export const ZHANG_LOGZ_OPTION_KEYS: readonly string[] = [...RELAXED_LOGZ_SHARED_KEYS, 'reference'];
/** Every option runMirrorLogZ reads: it refuses any other (the Zhang estimator's reference too). */
export const MIRROR_LOGZ_OPTION_KEYS: readonly string[] = [...RELAXED_LOGZ_SHARED_KEYS, 'covariance', 'covarianceCap'];

/** Defaults of RelaxedLogZOptions. */
export const RELAXED_LOGZ_DEFAULTS = { seed: 1, chains: 4, samples: 2000, burnin: 500, batches: 10, leapfrogSteps: 5, targetAccept: 0.9 } as const;

/** x samples (per chain: samples × m, row-major), ℓ(x) and π per sample, from DHMC on the relaxation. */
function relaxedSamples(engine: Engine, model: Model, o: RelaxedLogZOptions & { [K in keyof typeof RELAXED_LOGZ_DEFAULTS]: number }, phase: 'zhang' | 'mirror') {
  checkCount('chains', o.chains, 1, MAX_CHAINS);
  checkCount('samples', o.samples, 2);
  checkCount('burnin', o.burnin, 0);
  checkCount('batches', o.batches, 1);
  const relax = buildRelaxation(engine, model, o.relaxation ?? {});
  const m = relax.factor.m, n = relax.form.nBits;
  // Traced per transition: ℓ(x) (code −1), x_j (codes −2 − j), π_i (codes i).
  const codes = new Int32Array(1 + m + n);
  codes[0] = -1;
  for (let j = 0; j < m; j++) codes[1 + j] = -2 - j;
  for (let i = 0; i < n; i++) codes[1 + m + i] = i;
  const sampler = new DHMCSampler(engine, relax, { leapfrogSteps: o.leapfrogSteps, traceCodes: codes, traceCapacity: o.samples });
  const out: { logp: Float64Array; x: Float64Array[]; pi: Float64Array[] }[] = [];
  let acceptRate = 0, divergences = 0;
  const tick = progressTicker(o.onProgress, phase, o.chains);
  try {
    for (let c = 0; c < o.chains; c++) {
      if (o.signal?.aborted) break;
      const state = sampler.init(o.seed, c);
      try {
        sampler.warmup(state, o.burnin, { targetAccept: o.targetAccept });
        sampler.resetTrace(state);
        const info = sampler.step(state, o.samples, { trace: true });
        acceptRate += info.acceptRate / o.chains;
        divergences += info.divergences;
        const tr = sampler.trace(state);
        out.push({ logp: tr[0], x: tr.slice(1, 1 + m), pi: tr.slice(1 + m) });
        tick?.(1);
      } finally {
        sampler.release(state);
      }
    }
  } finally {
    sampler.dispose();
  }
  if (out.length === 0) throw new CancelledError('cancelled before the first chain completed: no estimate');
  return { relax, m, n, chains: out, acceptRate, divergences };
}

/** Zhang et al. (2012) eq. 14: log Z = log f(s*) − log mean_x p(s*|x), x ~ p(x) by DHMC. */
export function runZhangLogZ(engine: Engine, model: Model, opts: RelaxedLogZOptions = {}): LogZEstimate {
  checkOptionKeys(opts, ZHANG_LOGZ_OPTION_KEYS);
  const o = { ...RELAXED_LOGZ_DEFAULTS, ...definedOnly(opts) };
  const t0 = performance.now();
  const { relax, chains, acceptRate, divergences } = relaxedSamples(engine, model, o, 'zhang');
  const form = relax.form;
  // The reference configuration (user states).
  let ref = new Int32Array(form.n);
  let refKind: string = o.reference ?? 'mode';
  if (refKind === 'zero' && !Number.isFinite(model.logPotential(ref))) refKind = 'mode';
  if (refKind === 'mode') {
    const mean = new Float64Array(form.nBits);
    let cnt = 0;
    for (const c of chains) for (let i = 0; i < form.nBits; i++) for (const p of c.pi[i]) mean[i] += p;
    for (const c of chains) cnt += c.logp.length;
    ref = new Int32Array(form.n);
    for (let v = 0; v < form.n; v++) {
      const b = form.blockStart[v];
      if (!form.oneHot[v]) ref[v] = mean[b] / cnt > 0.5 ? 1 : 0;
      else for (let k = 1; k < form.card[v]; k++) if (mean[b + k] > mean[b + ref[v]]) ref[v] = k;
    }
  } else if (refKind !== 'zero') throw new ModelError(`reference must be 'zero' or 'mode', got "${refKind}"`);
  const logF = model.logPotential(ref);
  if (!Number.isFinite(logF)) throw new ModelError('the reference state has probability 0: no estimate');
  // On a state-symmetric model, p(s*|x) averaged over s*'s mirror images (same probability as s*):
  // DHMC chains that stay in one mirror-image mode otherwise give log Z up to ln K low, unseen.
  const K = stateSymmetry(model);
  const images = K >= 2 ? mirrorImages(ref, K) : [ref];
  // Image t mod K at sample t (as Chib's; all K at every sample measured no smaller standard error).
  const logCond = chains.map((c) => {
    const T = c.logp.length, out = new Float64Array(T);
    images.forEach((x, j) => addLogConditional(form, c.pi, x, j, images.length, out));
    return out;
  });
  const lme = logMeanExpBatched(logCond, o.batches);
  if (lme.value === -Infinity) throw new EngineError('p(s*|x) underflowed to 0 on every sample: no estimate (try reference: "mode")');
  // p(s*|x) is a product over variables: where the couplings are weak it is heavy-tailed (k̂ 3–4.4 on
  // a 6×6 grid at β = 0.3, where 3 of 30 seeds were 4–10 standard errors high with no warning).
  const k = paretoK(logCond.flatMap((c) => Array.from(c)));
  const warnings = [...lme.warnings];
  if (k > MAX_PARETO_K) warnings.push(heavyTail(k));
  return {
    logZ: logF - lme.value,
    logZStdErr: lme.stdErr,
    logZKind: 'estimate',
    diagnostics: { estimator: 'zhang', reference: refKind, mirrorImages: images.length, chains: chains.length, samplesPerChain: o.samples, burnin: o.burnin, acceptRate, divergences, factor: relax.factorKind, seed: o.seed, paretoK: Number.isNaN(k) ? null : k },
    seconds: (performance.now() - t0) / 1000,
    warnings,
  };
}

/**
 * out[t] += log p(s = x | x_t) = Σ_v log π_t(x_v) at the samples t = first, first + step, …, from
 * the traced per-bit probabilities π (one column per bit, a row per sample).
 */
function addLogConditional(form: CanonicalForm, pi: Float64Array[], x: Int32Array, first: number, step: number, out: Float64Array): void {
  const T = out.length;
  for (let v = 0; v < form.n; v++) {
    const b = form.blockStart[v];
    if (form.oneHot[v]) {
      const col = pi[b + x[v]];
      for (let t = first; t < T; t += step) out[t] += Math.log(col[t]);
    } else {
      const col = pi[b];
      // log(1 − π) loses relative accuracy only where 1 − π < ~1e−8, i.e. p(s*|x) is negligible.
      if (x[v]) for (let t = first; t < T; t += step) out[t] += Math.log(col[t]);
      else for (let t = first; t < T; t += step) out[t] += Math.log1p(-col[t]);
    }
  }
}

/**
 * Marginals from the traced per-bit probabilities (Rao–Blackwellised: the mean of π over every
 * sample), with the samplers' batch-means standard errors (BatchMeans: `batches` per chain).
 */
function tracedMarginals(form: CanonicalForm, pis: Float64Array[][], batches: number): { marginals: Float64Array[]; marginalStdErr: Float64Array[] } {
  const stats = new BatchMeans(form.nBits), sums = new Float64Array(form.nBits);
  pis.forEach((pi, chain) => {
    const T = pi[0]?.length ?? 0, nb = Math.max(1, Math.min(batches, T));
    for (let j = 0; j < nb; j++) {
      const lo = Math.floor((j * T) / nb), hi = Math.floor(((j + 1) * T) / nb);
      for (let b = 0; b < form.nBits; b++) {
        let sum = 0;
        for (let t = lo; t < hi; t++) sum += pi[b][t];
        sums[b] = sum;
      }
      stats.addBatch(sums, hi - lo, chain);
    }
  });
  return { marginals: bitsToMarginals(form, stats.mean()), marginalStdErr: bitsToStdErr(form, stats.stdErr()) };
}

/** Zhang §3.4's mirrored estimator: 1/∫e^ℓ = E_p[q(x)/e^{ℓ(x)}], q a Gaussian fitted to the samples (cross-fitted halves). */
export function runMirrorLogZ(engine: Engine, model: Model, opts: RelaxedLogZOptions = {}): LogZEstimate {
  checkOptionKeys(opts, MIRROR_LOGZ_OPTION_KEYS);
  const o = { ...RELAXED_LOGZ_DEFAULTS, ...definedOnly(opts) };
  const t0 = performance.now();
  const { relax, m, chains, acceptRate, divergences } = relaxedSamples(engine, model, o, 'mirror');
  let cov = o.covariance ?? (m <= 256 ? 'full' : 'diag');
  if (cov !== 'full' && cov !== 'diag') throw new ModelError(`covariance must be 'full' or 'diag', got "${String(cov)}"`);
  const cap = o.covarianceCap ?? 1.9;
  if (!(cap > 0)) throw new ModelError(`covarianceCap must be > 0, got ${cap}`);
  // Cross-fitting: q fitted on the first halves of the chains weighs the second halves and vice
  // versa (a q fitted to the very samples it weighs is biased towards them, and log Z low).
  const halves = chains.map((c) => Math.floor(c.logp.length / 2));
  const fitA = fitGaussian(engine, chains.map((c, i) => ({ x: c.x, lo: 0, hi: halves[i] })), m, cov, cap);
  const fitB = fitGaussian(engine, chains.map((c, i) => ({ x: c.x, lo: halves[i], hi: c.logp.length })), m, cov, cap);
  const logRatio = chains.map((c, i) => {
    const T = c.logp.length, out = new Float64Array(T);
    for (let t = 0; t < T; t++) out[t] = (t < halves[i] ? fitB : fitA).logq(c.x, t) - c.logp[t];
    return out;
  });
  cov = fitA.kind === 'full' && fitB.kind === 'full' ? 'full' : 'diag';
  const lme = logMeanExpBatched(logRatio, o.batches);
  // The weights' tail: past 6×6 Ising grids it is heavy (one Gaussian fits p(x) too poorly), the mean
  // too low and log Z too high — 8×8 at β = 0.4 by 0.4–2.0 nats, up to 7.7 standard errors off with
  // no other warning — while k̂ flagged every such run and no 4×4 one (0.43–0.60).
  const k = paretoK(logRatio.flatMap((c) => Array.from(c)));
  const warnings = [...lme.warnings];
  if (k > MAX_PARETO_K) warnings.push(heavyTail(k));
  // q fitted to chains that stayed in one mirror-image mode covers that mode only: log Z up to ln K low.
  const stuck = symmetryWarning(model, tracedMarginals(relax.form, chains.map((c) => c.pi), o.batches));
  if (stuck) warnings.push(stuck);
  return {
    logZ: -lme.value + relax.logZRelation,
    logZStdErr: lme.stdErr,
    logZKind: 'estimate',
    diagnostics: { estimator: 'mirror', covariance: cov, covarianceCap: cap, dimension: m, chains: chains.length, samplesPerChain: o.samples, burnin: o.burnin, acceptRate, divergences, factor: relax.factorKind, seed: o.seed, paretoK: Number.isNaN(k) ? null : k },
    seconds: (performance.now() - t0) / 1000,
    warnings,
  };
}

/** A Gaussian fitted to rows lo … hi−1 of each chain's x columns; covariance eigenvalues capped. */
function fitGaussian(engine: Engine, parts: { x: Float64Array[]; lo: number; hi: number }[], m: number, cov: 'full' | 'diag', cap: number) {
  let N = 0;
  const mu = new Float64Array(m);
  for (const { x, lo, hi } of parts) {
    N += hi - lo;
    for (let j = 0; j < m; j++) for (let t = lo; t < hi; t++) mu[j] += x[j][t];
  }
  if (N < 2) throw new EngineError('too few samples to fit the mirror distribution');
  for (let j = 0; j < m; j++) mu[j] /= N;
  let L: Float64Array | null = null; // lower Cholesky factor of Σ (full)
  const sd = new Float64Array(m);
  if (cov === 'full') {
    const S = new Float64Array(m * m);
    const d = new Float64Array(m);
    for (const { x, lo, hi } of parts) {
      for (let t = lo; t < hi; t++) {
        for (let j = 0; j < m; j++) d[j] = x[j][t] - mu[j];
        for (let i = 0; i < m; i++) {
          const di = d[i];
          for (let j = 0; j <= i; j++) S[i * m + j] += di * d[j];
        }
      }
    }
    for (let i = 0; i < m; i++) for (let j = 0; j <= i; j++) S[j * m + i] = S[i * m + j] /= N - 1;
    if (cap < Infinity) {
      const { values, vectors } = symmetricEigen(engine, S, m, true);
      const V = vectors!;
      S.fill(0);
      for (let k = 0; k < m; k++) {
        const lam = Math.min(values[k], cap);
        for (let i = 0; i < m; i++) for (let j = 0; j < m; j++) S[i * m + j] += lam * V[i * m + k] * V[j * m + k];
      }
    }
    const c = denseCholesky(engine, S, m);
    L = c.ok ? c.L : null;
  }
  if (!L) {
    for (const { x, lo, hi } of parts) for (let j = 0; j < m; j++) for (let t = lo; t < hi; t++) sd[j] += (x[j][t] - mu[j]) ** 2;
    for (let j = 0; j < m; j++) sd[j] = Math.sqrt(Math.min(cap, sd[j] / (N - 1)));
    if (!sd.every((v) => v > 0)) throw new EngineError('the x samples have zero variance in some coordinate: cannot fit q');
  }
  let logNorm = -0.5 * m * Math.log(2 * Math.PI);
  for (let j = 0; j < m; j++) logNorm -= Math.log(L ? L[j * m + j] : sd[j]);
  const z = new Float64Array(m);
  const logq = (x: Float64Array[], t: number): number => {
    let q = 0;
    if (L) {
      for (let i = 0; i < m; i++) {
        let r = x[i][t] - mu[i];
        for (let j = 0; j < i; j++) r -= L[i * m + j] * z[j];
        z[i] = r / L[i * m + i];
        q += z[i] * z[i];
      }
    } else {
      for (let j = 0; j < m; j++) q += ((x[j][t] - mu[j]) / sd[j]) ** 2;
    }
    return logNorm - 0.5 * q;
  };
  return { kind: L ? ('full' as const) : ('diag' as const), logq };
}
