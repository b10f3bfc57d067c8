// The continuous relaxation of a discrete model (DESIGN.md §2): choose a diagonal D with W + D ≻ 0
// and a factor M with M Mᵀ = W + D, so that
//
//   log p(x, s) = −½|x|² + sᵀMx + (a − ½d)ᵀs + const,       x ∈ Rᵐ,  s valid (one-hot blocks)
//
// This file is per-model setup, in TypeScript: the spectrum of W (dense Householder + QL for small
// models, Lanczos for large ones), the shift d, and the factor (dense Cholesky, dense eigen V Λ^½,
// sparse Cholesky with a minimum-degree ordering, or the edge-incidence factor with its own d). Everything per sample runs in WASM on the result
// (bindings/relaxation-bound.ts copies it in).
//
// Normalising constant. For any valid s, ∫ e^{−½|x|² + sᵀMx} dx = (2π)^{m/2} e^{½ sᵀ(W+D)s}, and on a
// valid s, ½ sᵀDs − ½ dᵀs = 0 (s_i² = s_i) and within-block entries never meet (one bit per block), so
//
//   ∫ exp(ℓ(x)) dx = (2π)^{m/2} Σ_s exp(aᵀs + ½ sᵀWs) = (2π)^{m/2} Z_s,
//
// where ℓ(x) = −½|x|² + Σ_free softplus(u_i) + Σ_blocks logsumexp(u_block), u = Mx + a − ½d, is exactly
// what relaxedLogDensity returns (no constant). Hence log Z_model = log ∫ e^ℓ + logZRelation with
//
//   logZRelation = form.logZOffset − (m/2) log 2π.
//
// One-hot blocks. Within-block entries of W never matter on valid states; they are left at 0 (the
// canonical form does not store them), which keeps W + D's sparsity equal to W's. A zero potential
// (−∞) between two blocks cannot be written as a finite quadratic form: such models are refused.
//
// Log-concavity (Zhang et al. 2012, Prop. 1). ∇² log p(x) = −I + Mᵀ C(x) M with C(x) = Cov(s | x):
// diag(σ(1−σ)) over free bits (≤ ¼) and, per one-hot block, diag(π) − ππᵀ, whose largest eigenvalue is
// ≤ ½ (Popoviciu: a unit vector's entries span at most √2) and which annihilates 1. So C ≼ S² with
// S = ½ on free bits and P_K/√2 on a block (P_K = I − 11ᵀ/K), and p(x) is log-concave when
// λ_max(S(W+D)S) ≤ 1 — for an all-free model, λ_max(W+D) ≤ 4. When every block has at most 2 states
// (and no −∞ bias) C = S² is reached (u = 0 on free bits, equal u within blocks), so the condition is
// also necessary ("iff"); blocks with K ≥ 3 never reach S², and there it is only sufficient.
// Prop. 1 as printed says λ_max(W+D) < 4; its proof shows sup_x λ_max(∇²) = ¼ − 1/λ_max(W+D), so
// log-concavity (Hessian ≼ 0) holds iff λ_max(W+D) ≤ 4. We use ≤.

import type { Model } from '../core/model.ts';
import { toCanonical, type CanonicalForm } from '../core/canonical.ts';
import { ModelError } from '../core/errors.ts';
import type { FactorData, RelaxationData } from './relaxation-bound.ts';

export type ShiftOption = 'martens' | 'min-lambda-max' | Float64Array;
/** 'fft' needs an engine and a periodic lattice: it is built by relaxationFor (bindings/infer.ts). */
export type FactorChoice = 'auto' | 'dense-cholesky' | 'dense-eigen' | 'sparse-cholesky' | 'incidence' | 'fft';
export type FactorKind = 'dense-cholesky' | 'dense-eigen' | 'sparse-cholesky' | 'incidence' | 'fft';

export interface RelaxationOptions {
  /**
   * 'martens' (default): d = max(0, −λ_min(W)) + margin·max(ρ(W), 1) on every bit (Martens' (1+ε)
   * shift; ρ = spectral radius). 'min-lambda-max': a per-bit d that minimises λ_max(W + D) subject to
   * λ_min(W + D) = margin·max(ρ(W), 1) (see minSpreadShift). A Float64Array: the user's d, one per bit.
   */
  shift?: ShiftOption;
  /** Relative safety margin of the shift; default 1e-3. */
  margin?: number;
  /**
   * 'auto' (default): sparse Cholesky when W has density < 10 %, dense Cholesky otherwise.
   * 'incidence': M = B with one column per coupling (see incidenceFactor), n × m with m ≠ n in general;
   * it fixes d_i = Σ_j |w_ij| (or takes a user d ≥ that) and refuses a named shift rule.
   */
  factor?: FactorChoice;
}

export interface Relaxation extends RelaxationData {
  factorKind: FactorKind;
  /**
   * How d was chosen: 'martens', 'min-lambda-max', 'martens-fallback' (min-lambda-max on a model too
   * large for it), 'user', 'incidence' (d_i = Σ_j |w_ij|, the incidence factor's own).
   */
  shiftKind: 'martens' | 'min-lambda-max' | 'martens-fallback' | 'user' | 'incidence';
  /** Smallest and largest eigenvalue of W (within-block entries 0). Lanczos estimates on large models. */
  lambdaMin: number;
  lambdaMaxW: number;
  /** λ_min(W + D) and λ_max(W + D). */
  lambdaMinWD: number;
  lambdaMaxWD: number;
  /** λ_max(S(W+D)S) (see the header); p(x) is log-concave when ≤ 1. All-free models: λ_max(W+D)/4. */
  concavityIndex: number;
  /** Zhang Prop. 1 (extended to one-hot blocks): p(x) is log-concave. */
  logConcave: boolean;
  /** 'iff': logConcave is exact (all blocks ≤ 2 states); 'sufficient': false may still be log-concave. */
  logConcaveCriterion: 'iff' | 'sufficient';
  /** nnz of the sparse Cholesky factor L (diagonal included); null for dense factors. */
  fill: number | null;
  /** log Z_model = log ∫ exp(relaxed log density) dx + logZRelation. */
  logZRelation: number;
  /** 'dense' (Householder + QL, exact to rounding) or 'lanczos' (estimates). */
  spectrumMethod: 'dense' | 'lanczos';
  /** Sparse factor only: bit eliminated k-th (the ordering; column k of M belongs to it). */
  ordering: Int32Array | null;
  /** Setup time in seconds, by phase. */
  timings: { spectrum: number; shift: number; ordering: number; factor: number; total: number };
}

/** Bits up to which spectra are computed densely (O(n³)); Lanczos beyond. */
export const DENSE_SPECTRUM_LIMIT = 400;
/** Bits up to which 'min-lambda-max' optimises (each step is a dense eigendecomposition). */
export const MIN_LAMBDA_MAX_LIMIT = 200;
/** Largest n for a dense factor (n² doubles). */
export const DENSE_FACTOR_LIMIT = 4096;

/** The relaxation's choices, for a sampler result's diagnostics. */
export function relaxationDiagnostics(rel: Relaxation): Record<string, number | string | boolean | null> {
  return {
    factor: rel.factorKind,
    shift: rel.shiftKind,
    dimension: rel.factor.m,
    fill: rel.fill,
    lambdaMinW: rel.lambdaMin,
    lambdaMaxWD: rel.lambdaMaxWD,
    logConcave: rel.logConcave,
    setupSeconds: rel.timings.total,
  };
}

export function buildRelaxation(model: Model, opts: RelaxationOptions = {}): Relaxation {
  return relaxCanonical(toCanonical(model), opts);
}

export function relaxCanonical(form: CanonicalForm, opts: RelaxationOptions = {}): Relaxation {
  const t0 = performance.now();
  const n = form.nBits;
  const margin = opts.margin ?? 1e-3;
  if (typeof margin !== 'number' || !Number.isFinite(margin) || margin <= 0) throw new ModelError(`relaxation margin must be a finite number > 0, got ${margin}`);
  const choice = opts.factor ?? 'auto';
  if (choice === 'fft') throw new ModelError('the FFT factor is built with relaxationFor(engine, model) (it needs the engine and a periodic lattice)');
  if (!['auto', 'dense-cholesky', 'dense-eigen', 'sparse-cholesky', 'incidence'].includes(choice)) {
    throw new ModelError(`unknown relaxation factor "${choice as string}"; expected auto, dense-cholesky, dense-eigen, sparse-cholesky or incidence`);
  }
  const shift = opts.shift ?? 'martens';
  if (!(shift instanceof Float64Array) && shift !== 'martens' && shift !== 'min-lambda-max') {
    throw new ModelError(`unknown relaxation shift "${String(shift)}"; expected 'martens', 'min-lambda-max' or a Float64Array of per-bit values`);
  }
  if (n === 0) throw new ModelError('relaxation: the model has no bits');
  checkFiniteCouplings(form);
  for (let i = 0; i < n; i++) if (form.a[i] === Infinity || Number.isNaN(form.a[i])) throw new ModelError(`relaxation: bias of bit ${i} is ${form.a[i]}`);

  const density = form.val.length / (n * n);
  const kind: FactorKind = choice === 'auto' ? (density < 0.1 ? 'sparse-cholesky' : 'dense-cholesky') : choice;
  if (kind !== 'sparse-cholesky' && kind !== 'incidence' && n > DENSE_FACTOR_LIMIT) {
    throw new ModelError(`relaxation: a dense factor of ${n} bits needs ${n}² doubles; use factor 'sparse-cholesky' (limit ${DENSE_FACTOR_LIMIT} bits)`);
  }

  // Spectrum of W.
  const tSpec = performance.now();
  const dense = n <= DENSE_SPECTRUM_LIMIT;
  const Wd = dense ? denseW(form) : null;
  let lamMin: number, lamMax: number, lamMinSafe: number;
  // Lanczos Ritz values lie inside the spectrum: the flag uses an upper bound (θ_max + residual).
  let slackMax = 0;
  if (Wd) {
    const ev = symmetricEigen(Wd, n, false).values;
    lamMin = ev[0];
    lamMax = ev[n - 1];
    lamMinSafe = lamMin - 1e-12 * Math.max(1, Math.abs(lamMin), Math.abs(lamMax));
  } else {
    const lz = lanczosExtremes((x, y) => csrApply(form, null, x, y), n);
    lamMin = lz.min;
    lamMax = lz.max;
    slackMax = lz.maxResidual;
    lamMinSafe = lz.min - lz.minResidual;
  }
  const rho = Math.max(Math.abs(lamMin), Math.abs(lamMax));
  const unit = margin * Math.max(rho, 1);
  const tShift = performance.now();

  // The shift.
  let d: Float64Array;
  let shiftKind: Relaxation['shiftKind'];
  let constShift: number | null = null;
  if (kind === 'incidence') {
    // The incidence factor needs d_i ≥ Σ_j |w_ij|; by default exactly that (the smallest such d).
    const abs = absRowSums(form);
    if (shift instanceof Float64Array) {
      if (shift.length !== n) throw new ModelError(`relaxation: d has ${shift.length} entries, expected one per bit (${n})`);
      for (let i = 0; i < n; i++) {
        if (!Number.isFinite(shift[i]) || shift[i] < abs[i] * (1 - 1e-12)) {
          throw new ModelError(`relaxation: the incidence factor needs d_i ≥ Σ_j |w_ij|; d[${i}] = ${shift[i]} < ${abs[i]}`);
        }
      }
      d = Float64Array.from(shift, (v, i) => Math.max(v, abs[i]));
      shiftKind = 'user';
    } else if (opts.shift !== undefined) {
      throw new ModelError(`relaxation: the incidence factor sets its own d (d_i = Σ_j |w_ij|); omit the shift "${shift}" or give d with d_i ≥ Σ_j |w_ij|`);
    } else {
      d = abs;
      shiftKind = 'incidence';
    }
  } else if (shift instanceof Float64Array) {
    if (shift.length !== n) throw new ModelError(`relaxation: d has ${shift.length} entries, expected one per bit (${n})`);
    for (let i = 0; i < n; i++) if (!Number.isFinite(shift[i])) throw new ModelError(`relaxation: d[${i}] = ${shift[i]} is not finite`);
    d = shift.slice();
    shiftKind = 'user';
  } else if (shift === 'min-lambda-max' && Wd) {
    if (n <= MIN_LAMBDA_MAX_LIMIT) {
      d = minSpreadShift(Wd, n, unit);
      shiftKind = 'min-lambda-max';
    } else {
      constShift = Math.max(0, -lamMinSafe) + unit;
      d = new Float64Array(n).fill(constShift);
      shiftKind = 'martens-fallback';
    }
  } else {
    constShift = Math.max(0, -lamMinSafe) + unit;
    d = new Float64Array(n).fill(constShift);
    shiftKind = shift === 'martens' ? 'martens' : 'martens-fallback';
  }
  const tOrder = performance.now();

  // The factor. A computed shift that fails the Cholesky (a Lanczos estimate of λ_min short of the
  // truth) is raised and retried; a user's d that fails is an error.
  let factor: FactorData;
  let fill: number | null = null;
  let ordering: Int32Array | null = null;
  let wdValues: Float64Array | null = null; // eigenvalues of W + D when computed densely
  let tFactor = tOrder;
  const symbolic = kind === 'sparse-cholesky' ? minimumDegree(n, form.rowPtr, form.col) : null;
  if (kind === 'incidence') factor = incidenceFactor(form, d);
  if (symbolic) {
    ordering = symbolic.perm;
    fill = symbolic.colPtr[n] + n;
  }
  tFactor = performance.now();
  for (let attempt = 0; kind !== 'incidence'; attempt++) {
    let failedBit = -1;
    if (kind === 'dense-cholesky') {
      const r = denseCholesky(addDiag(Wd ?? denseW(form), n, d), n);
      if (r.ok) factor = { kind: 'dense', n, m: n, values: r.L };
      else failedBit = r.failedAt;
    } else if (kind === 'dense-eigen') {
      const A = addDiag(Wd ?? denseW(form), n, d);
      const { values, vectors } = symmetricEigen(A, n, true);
      if (values[0] > 0) {
        const M = new Float64Array(n * n);
        for (let i = 0; i < n; i++) for (let k = 0; k < n; k++) M[i * n + k] = vectors![i * n + k] * Math.sqrt(values[k]);
        factor = { kind: 'dense', n, m: n, values: M };
        wdValues = values;
      } else failedBit = 0;
    } else {
      const r = sparseCholesky(form, d, symbolic!);
      if (r.ok) factor = r.factor;
      else failedBit = r.failedBit;
    }
    if (failedBit < 0) break;
    if (shiftKind === 'user') {
      throw new ModelError(
        kind === 'dense-eigen'
          ? `relaxation: W + D is not positive definite for the given d (smallest eigenvalue ${symmetricEigen(addDiag(Wd ?? denseW(form), n, d), n, false).values[0]})`
          : `relaxation: W + D is not positive definite for the given d (Cholesky pivot ≤ 0 at bit ${failedBit}); raise d`,
      );
    }
    if (attempt >= 30) throw new ModelError('relaxation: could not find a shift making W + D positive definite (numerical trouble)');
    const bump = unit * 2 ** (attempt + 2) + 1e-3 * rho * 2 ** attempt;
    for (let i = 0; i < n; i++) d[i] += bump;
    if (constShift !== null) constShift += bump;
  }
  const tDone = performance.now();

  // Spectrum of W + D and the concavity index.
  let lamMinWD: number, lamMaxWD: number;
  if (constShift !== null) {
    lamMinWD = lamMin + constShift;
    lamMaxWD = lamMax + constShift;
  } else if (wdValues) {
    lamMinWD = wdValues[0];
    lamMaxWD = wdValues[n - 1];
  } else if (Wd) {
    const ev = symmetricEigen(addDiag(Wd, n, d), n, false).values;
    lamMinWD = ev[0];
    lamMaxWD = ev[n - 1];
  } else {
    const lz = lanczosExtremes((x, y) => csrApply(form, d, x, y), n);
    lamMinWD = lz.min;
    lamMaxWD = lz.max;
    slackMax = lz.maxResidual;
  }
  const allFree = form.oneHot.every((x) => x === 0);
  let concavityIndex: number;
  let concavitySlack = 0;
  if (allFree) {
    concavityIndex = lamMaxWD / 4;
    concavitySlack = slackMax / 4;
  } else {
    const sas = (x: Float64Array, y: Float64Array, t: Float64Array) => {
      applyS(form, x, t);
      csrApply(form, d, t, y);
      applyS(form, y, y);
    };
    const t = new Float64Array(n);
    if (n <= DENSE_SPECTRUM_LIMIT) {
      const B = new Float64Array(n * n);
      const e = new Float64Array(n), y = new Float64Array(n);
      for (let j = 0; j < n; j++) {
        e.fill(0);
        e[j] = 1;
        sas(e, y, t);
        for (let i = 0; i < n; i++) B[i * n + j] = y[i];
      }
      symmetrise(B, n);
      concavityIndex = symmetricEigen(B, n, false).values[n - 1];
    } else {
      const lz = lanczosExtremes((x, y) => sas(x, y, t), n);
      concavityIndex = lz.max;
      concavitySlack = lz.maxResidual;
    }
  }
  let reachable = true;
  for (let v = 0; v < form.n; v++) if (form.oneHot[v] && form.card[v] > 2) reachable = false;
  for (let i = 0; i < n; i++) if (form.a[i] === -Infinity) reachable = false;

  const total = (performance.now() - t0) / 1000;
  return {
    form,
    d,
    factor: factor!,
    factorKind: kind,
    shiftKind,
    lambdaMin: lamMin,
    lambdaMaxW: lamMax,
    lambdaMinWD: lamMinWD,
    lambdaMaxWD: lamMaxWD,
    concavityIndex,
    logConcave: concavityIndex + concavitySlack <= 1,
    logConcaveCriterion: reachable ? 'iff' : 'sufficient',
    fill,
    logZRelation: form.logZOffset - 0.5 * factor!.m * Math.log(2 * Math.PI),
    spectrumMethod: dense ? 'dense' : 'lanczos',
    ordering,
    timings: {
      spectrum: (tShift - tSpec) / 1000,
      shift: (tOrder - tShift) / 1000,
      ordering: (tFactor - tOrder) / 1000,
      factor: (tDone - tFactor) / 1000,
      total,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The edge-incidence factor. With d_i = Σ_j |w_ij| + δ_i (δ_i ≥ 0), W + D = B Bᵀ where B has one
// column per coupled pair i < j, √|w_ij| (e_i + sgn(w_ij) e_j), and one column √δ_i e_i for every
// δ_i > 0: the (i, j) entry of B Bᵀ is √|w|·sgn(w)√|w| = w_ij and the (i, i) entry Σ_j |w_ij| + δ_i.
// M = B is n × m with m = (number of couplings) + (number of δ_i > 0), and row i has one entry per
// coupling of bit i (plus its δ column): a grid's rows have ≤ 5 entries where the sparse Cholesky
// factor has ~20. W + D = B Bᵀ is always positive semidefinite but may be singular when δ = 0, which
// the trick does not need (any M with M Mᵀ = W + D gives the same p(s); x ∈ Rᵐ with m > n).

/** Σ_j |w_ij| for every bit. */
function absRowSums(form: CanonicalForm): Float64Array {
  const out = new Float64Array(form.nBits);
  for (let i = 0; i < form.nBits; i++) for (let k = form.rowPtr[i]; k < form.rowPtr[i + 1]; k++) if (form.col[k] !== i) out[i] += Math.abs(form.val[k]);
  return out;
}

/** B of the header (columns: couplings in order of (i, j), i < j, then the δ columns); CSR rows over bits. */
export function incidenceFactor(form: CanonicalForm, d: Float64Array): FactorData {
  const n = form.nBits;
  const abs = absRowSums(form);
  const delta = Float64Array.from(d, (v, i) => Math.max(0, v - abs[i]));
  const count = new Int32Array(n);
  let E = 0;
  for (let i = 0; i < n; i++) {
    for (let k = form.rowPtr[i]; k < form.rowPtr[i + 1]; k++) {
      const j = form.col[k];
      if (j > i && form.val[k] !== 0) {
        count[i]++;
        count[j]++;
        E++;
      }
    }
  }
  let nDelta = 0;
  for (let i = 0; i < n; i++) if (delta[i] > 0) count[i]++, nDelta++;
  const m = E + nDelta;
  if (m === 0) throw new ModelError('relaxation: the incidence factor of a model without couplings is empty (m = 0); use another factor');
  const rowPtr = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) rowPtr[i + 1] = rowPtr[i] + count[i];
  const at = rowPtr.slice(0, n);
  const col = new Int32Array(rowPtr[n]);
  const values = new Float64Array(rowPtr[n]);
  // Columns are appended in increasing order, so every row comes out sorted.
  let e = 0;
  for (let i = 0; i < n; i++) {
    for (let k = form.rowPtr[i]; k < form.rowPtr[i + 1]; k++) {
      const j = form.col[k], w = form.val[k];
      if (!(j > i && w !== 0)) continue;
      const r = Math.sqrt(Math.abs(w));
      col[at[i]] = e;
      values[at[i]++] = r;
      col[at[j]] = e;
      values[at[j]++] = w > 0 ? r : -r;
      e++;
    }
  }
  for (let i = 0; i < n; i++) {
    if (delta[i] > 0) {
      col[at[i]] = e++;
      values[at[i]++] = Math.sqrt(delta[i]);
    }
  }
  return { kind: 'sparse', n, m, rowPtr, col, values };
}

// ---------------------------------------------------------------------------------------------
// Model checks and small matrix helpers.

/** −∞ (or NaN) in W: a zero potential between two one-hot blocks. Names the pair. */
function checkFiniteCouplings(form: CanonicalForm): void {
  const owner = bitOwners(form);
  for (let p = 0; p < form.nBits; p++) {
    for (let k = form.rowPtr[p]; k < form.rowPtr[p + 1]; k++) {
      const q = form.col[k];
      if (q > p && !Number.isFinite(form.val[k])) {
        const [v1, s1] = owner(p), [v2, s2] = owner(q);
        throw new ModelError(
          `relaxation: the pair (variable ${v1} = ${s1}, variable ${v2} = ${s2}) has a zero potential (log-potential ${form.val[k]}); ` +
            'the Gaussian integral trick needs finite couplings between variables — use Gibbs or exact inference for models with hard zeros between variables',
        );
      }
    }
  }
}

/** Bit → (user variable, state) (a free bit is state 1 of its variable). */
function bitOwners(form: CanonicalForm): (bit: number) => [number, number] {
  const varOf = new Int32Array(form.nBits);
  for (let v = 0; v < form.n; v++) for (let b = form.blockStart[v]; b < form.blockStart[v + 1]; b++) varOf[b] = v;
  return (bit) => {
    const v = varOf[bit];
    return [v, form.oneHot[v] ? bit - form.blockStart[v] : 1];
  };
}

/** W as a dense row-major n × n matrix. */
export function denseW(form: CanonicalForm): Float64Array {
  const n = form.nBits;
  const A = new Float64Array(n * n);
  for (let p = 0; p < n; p++) for (let k = form.rowPtr[p]; k < form.rowPtr[p + 1]; k++) A[p * n + form.col[k]] = form.val[k];
  return A;
}

function addDiag(A: Float64Array, n: number, d: ArrayLike<number>): Float64Array {
  const B = A.slice();
  for (let i = 0; i < n; i++) B[i * n + i] += d[i];
  return B;
}

function symmetrise(B: Float64Array, n: number): void {
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const m = 0.5 * (B[i * n + j] + B[j * n + i]);
      B[i * n + j] = B[j * n + i] = m;
    }
  }
}

/** y = (W + diag(d)) x (d null: W x). */
function csrApply(form: CanonicalForm, d: Float64Array | null, x: Float64Array, y: Float64Array): void {
  const { rowPtr, col, val } = form;
  for (let i = 0; i < form.nBits; i++) {
    let s = d ? d[i] * x[i] : 0;
    for (let k = rowPtr[i]; k < rowPtr[i + 1]; k++) s += val[k] * x[col[k]];
    y[i] = s;
  }
}

/** y = S x: ½ on free bits, (I − 11ᵀ/K)/√2 on a one-hot block (x and y may be the same array). */
function applyS(form: CanonicalForm, x: Float64Array, y: Float64Array): void {
  for (let v = 0; v < form.n; v++) {
    const b = form.blockStart[v], e = form.blockStart[v + 1];
    if (!form.oneHot[v]) {
      y[b] = 0.5 * x[b];
      continue;
    }
    let mean = 0;
    for (let k = b; k < e; k++) mean += x[k];
    mean /= e - b;
    for (let k = b; k < e; k++) y[k] = (x[k] - mean) * Math.SQRT1_2;
  }
}

// ---------------------------------------------------------------------------------------------
// Dense symmetric eigendecomposition: Householder tridiagonalisation and implicit QL
// (tred2/tql2, after EISPACK via JAMA). Values ascending; vectors row-major, column k = vector k.

export function symmetricEigen(A: Float64Array, n: number, wantVectors: boolean): { values: Float64Array; vectors: Float64Array | null } {
  const V: Float64Array[] = [];
  for (let i = 0; i < n; i++) V.push(A.slice(i * n, (i + 1) * n));
  const d = new Float64Array(n), e = new Float64Array(n);
  tred2(V, d, e, n, wantVectors);
  // tql2 rotates pairs of columns of V: work on Vᵀ so each rotation runs over two contiguous rows.
  let Vt: Float64Array[] | null = null;
  if (wantVectors) {
    Vt = [];
    for (let c = 0; c < n; c++) Vt.push(Float64Array.from({ length: n }, (_, r) => V[r][c]));
  }
  tql2(d, e, n, Vt, null);
  // Sort ascending (with vectors).
  const idx = Array.from({ length: n }, (_, i) => i).sort((p, q) => d[p] - d[q]);
  const values = Float64Array.from(idx, (i) => d[i]);
  let vectors: Float64Array | null = null;
  if (Vt) {
    vectors = new Float64Array(n * n);
    for (let c = 0; c < n; c++) {
      const src = Vt[idx[c]];
      for (let r = 0; r < n; r++) vectors[r * n + c] = src[r];
    }
  }
  return { values, vectors };
}

function tred2(V: Float64Array[], d: Float64Array, e: Float64Array, n: number, accumulate: boolean): void {
  for (let j = 0; j < n; j++) d[j] = V[n - 1][j];
  for (let i = n - 1; i > 0; i--) {
    let scale = 0, h = 0;
    for (let k = 0; k < i; k++) scale += Math.abs(d[k]);
    if (scale === 0) {
      e[i] = d[i - 1];
      for (let j = 0; j < i; j++) {
        d[j] = V[i - 1][j];
        V[i][j] = 0;
        V[j][i] = 0;
      }
    } else {
      for (let k = 0; k < i; k++) {
        d[k] /= scale;
        h += d[k] * d[k];
      }
      let f = d[i - 1];
      let g = Math.sqrt(h);
      if (f > 0) g = -g;
      e[i] = scale * g;
      h -= f * g;
      d[i - 1] = f - g;
      for (let j = 0; j < i; j++) e[j] = 0;
      for (let j = 0; j < i; j++) {
        f = d[j];
        V[j][i] = f;
        g = e[j] + V[j][j] * f;
        for (let k = j + 1; k <= i - 1; k++) {
          g += V[k][j] * d[k];
          e[k] += V[k][j] * f;
        }
        e[j] = g;
      }
      f = 0;
      for (let j = 0; j < i; j++) {
        e[j] /= h;
        f += e[j] * d[j];
      }
      const hh = f / (h + h);
      for (let j = 0; j < i; j++) e[j] -= hh * d[j];
      for (let j = 0; j < i; j++) {
        f = d[j];
        g = e[j];
        for (let k = j; k <= i - 1; k++) V[k][j] -= f * e[k] + g * d[k];
        d[j] = V[i - 1][j];
        V[i][j] = 0;
      }
    }
    d[i] = h;
  }
  if (accumulate) {
    for (let i = 0; i < n - 1; i++) {
      V[n - 1][i] = V[i][i];
      V[i][i] = 1;
      const h = d[i + 1];
      if (h !== 0) {
        for (let k = 0; k <= i; k++) d[k] = V[k][i + 1] / h;
        for (let j = 0; j <= i; j++) {
          let g = 0;
          for (let k = 0; k <= i; k++) g += V[k][i + 1] * V[k][j];
          for (let k = 0; k <= i; k++) V[k][j] -= g * d[k];
        }
      }
      for (let k = 0; k <= i; k++) V[k][i + 1] = 0;
    }
    for (let j = 0; j < n; j++) {
      d[j] = V[n - 1][j];
      V[n - 1][j] = 0;
    }
    V[n - 1][n - 1] = 1;
  } else {
    // Only the diagonal of the reduced matrix is needed: tred2 keeps it on V's diagonal.
    for (let j = 0; j < n; j++) d[j] = V[j][j];
  }
  e[0] = 0;
}

/**
 * Implicit QL on the tridiagonal (d diagonal, e[i] = subdiagonal between i−1 and i, e[0] unused).
 * Vt: accumulate the vectors, stored transposed (Vt[k] = vector k); last: accumulate only one
 * component of every vector (Lanczos residuals).
 */
function tql2(d: Float64Array, e: Float64Array, n: number, Vt: Float64Array[] | null, last: Float64Array | null): void {
  for (let i = 1; i < n; i++) e[i - 1] = e[i];
  e[n - 1] = 0;
  let f = 0, tst1 = 0;
  const eps = 2 ** -52;
  for (let l = 0; l < n; l++) {
    tst1 = Math.max(tst1, Math.abs(d[l]) + Math.abs(e[l]));
    let m = l;
    while (m < n) {
      if (Math.abs(e[m]) <= eps * tst1) break;
      m++;
    }
    if (m > l) {
      let iter = 0;
      do {
        if (++iter > 200) throw new Error('symmetric eigensolver did not converge');
        let g = d[l];
        let p = (d[l + 1] - g) / (2 * e[l]);
        let r = Math.hypot(p, 1);
        if (p < 0) r = -r;
        d[l] = e[l] / (p + r);
        d[l + 1] = e[l] * (p + r);
        const dl1 = d[l + 1];
        let h = g - d[l];
        for (let i = l + 2; i < n; i++) d[i] -= h;
        f += h;
        p = d[m];
        let c = 1, c2 = c, c3 = c, s = 0, s2 = 0;
        const el1 = e[l + 1];
        for (let i = m - 1; i >= l; i--) {
          c3 = c2;
          c2 = c;
          s2 = s;
          g = c * e[i];
          h = c * p;
          r = Math.hypot(p, e[i]);
          e[i + 1] = s * r;
          s = e[i] / r;
          c = p / r;
          p = c * d[i] - s * g;
          d[i + 1] = h + s * (c * g + s * d[i]);
          if (Vt) {
            const a = Vt[i], b = Vt[i + 1];
            for (let k = 0; k < n; k++) {
              const bk = b[k], ak = a[k];
              b[k] = s * ak + c * bk;
              a[k] = c * ak - s * bk;
            }
          } else if (last) {
            h = last[i + 1];
            last[i + 1] = s * last[i] + c * h;
            last[i] = c * last[i] - s * h;
          }
        }
        p = (-s * s2 * c3 * el1 * e[l]) / dl1;
        e[l] = s * p;
        d[l] = c * p;
      } while (Math.abs(e[l]) > eps * tst1);
    }
    d[l] += f;
    e[l] = 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Lanczos for the extreme eigenvalues of a symmetric operator.
//
// Plain three-term recurrence (local reorthogonalisation against the last two vectors only): O(n)
// memory and O(n) work per step besides the operator. Loss of orthogonality only produces extra
// copies of converged Ritz values (Paige), which leaves the extremes and their residual bounds
// β_k |y_k| valid, so full reorthogonalisation (O(k²n)) is not worth its cost here. The Ritz values
// lie inside the spectrum; θ_min − residual is the conservative estimate of λ_min used for shifts
// (and the Cholesky that follows certifies W + D ≻ 0 in any case).

export interface LanczosResult {
  min: number;
  max: number;
  /** Residual norms of the extreme Ritz pairs: an eigenvalue lies within each of its Ritz value. */
  minResidual: number;
  maxResidual: number;
  iterations: number;
}

export function lanczosExtremes(apply: (x: Float64Array, y: Float64Array) => void, n: number, opts: { maxIter?: number; tol?: number } = {}): LanczosResult {
  const maxIter = Math.min(n, opts.maxIter ?? 1500);
  const tol = opts.tol ?? 1e-9;
  const alpha: number[] = [], beta: number[] = [];
  // Deterministic start (an LCG; never Math.random).
  let q = new Float64Array(n), qPrev = new Float64Array(n);
  let state = 0x9e3779b9;
  for (let i = 0; i < n; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    q[i] = state / 4294967296 - 0.5;
  }
  scale(q, 1 / norm(q));
  const w = new Float64Array(n);
  let anorm = 0;
  let bPrev = 0;
  let nextCheck = 10;
  let result: LanczosResult = { min: 0, max: 0, minResidual: Infinity, maxResidual: Infinity, iterations: 0 };
  for (let k = 0; k < maxIter; k++) {
    apply(q, w);
    for (let i = 0; i < n; i++) w[i] -= bPrev * qPrev[i];
    let a = dot(q, w);
    for (let i = 0; i < n; i++) w[i] -= a * q[i];
    // Local reorthogonalisation (a second Gram–Schmidt pass against q and qPrev).
    const c1 = dot(q, w), c0 = dot(qPrev, w);
    for (let i = 0; i < n; i++) w[i] -= c1 * q[i] + c0 * qPrev[i];
    a += c1;
    alpha.push(a);
    const b = norm(w);
    anorm = Math.max(anorm, Math.abs(a) + b + bPrev);
    const last = k === maxIter - 1;
    const breakdown = b <= 1e-13 * Math.max(anorm, 1e-300);
    if (last || breakdown || k + 1 >= nextCheck) {
      nextCheck = Math.max(k + 11, Math.ceil(1.15 * (k + 1)));
      result = ritzExtremes(alpha, beta, b, k + 1);
      const scaleT = Math.max(Math.abs(result.min), Math.abs(result.max), 1e-300);
      if (last || breakdown || (result.minResidual <= tol * scaleT && result.maxResidual <= tol * scaleT)) {
        if (breakdown) result.minResidual = result.maxResidual = 0;
        return result;
      }
    }
    beta.push(b);
    const t = qPrev;
    qPrev = q;
    q = t;
    for (let i = 0; i < n; i++) q[i] = w[i] / b;
    bPrev = b;
  }
  return result;
}

function ritzExtremes(alpha: number[], beta: number[], bNext: number, k: number): LanczosResult {
  const d = Float64Array.from(alpha);
  const e = new Float64Array(k);
  for (let i = 1; i < k; i++) e[i] = beta[i - 1];
  const lastRow = new Float64Array(k);
  lastRow[k - 1] = 1;
  tql2(d, e, k, null, lastRow);
  let iMin = 0, iMax = 0;
  for (let i = 1; i < k; i++) {
    if (d[i] < d[iMin]) iMin = i;
    if (d[i] > d[iMax]) iMax = i;
  }
  return { min: d[iMin], max: d[iMax], minResidual: Math.abs(bNext * lastRow[iMin]), maxResidual: Math.abs(bNext * lastRow[iMax]), iterations: k };
}

function dot(x: Float64Array, y: Float64Array): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i] * y[i];
  return s;
}
function norm(x: Float64Array): number {
  return Math.sqrt(dot(x, x));
}
function scale(x: Float64Array, c: number): void {
  for (let i = 0; i < x.length; i++) x[i] *= c;
}

// ---------------------------------------------------------------------------------------------
// 'min-lambda-max'. min_d λ_max(W+D) s.t. λ_min(W+D) ≥ δ has the same minimisers (up to a constant) as
// the unconstrained min_d λ_max(W+D) − λ_min(W+D): any d can be shifted by a constant until
// λ_min = δ, which leaves the spread unchanged. The spread is convex in d but not smooth; we minimise
// its log-sum-exp smoothing  f_β(d) = β⁻¹ log Σ_k e^{βλ_k} + β⁻¹ log Σ_k e^{−βλ_k}  (an upper bound
// within 2 log(n)/β of the spread), with gradient ∂f/∂d_i = Σ_k (p_k − q_k) V_ik², p = softmax(βλ),
// q = softmax(−βλ), by L-BFGS with backtracking, for β increasing from 4 to 4·10⁴ over the initial
// spread, starting from a constant d. It keeps the d with the smallest true spread seen, so the
// result is never worse than the constant shift (which is optimal among constant shifts). Each step
// is one dense eigendecomposition, with a budget of min(400, 2·10⁸/n³) of them (a second or two):
// models up to MIN_LAMBDA_MAX_LIMIT bits. It is a heuristic — no optimality certificate (no SDP).

export function minSpreadShift(W: Float64Array, n: number, delta: number): Float64Array {
  const evalAt = (d: Float64Array) => symmetricEigen(addDiag(W, n, d), n, true);
  let d: Float64Array = new Float64Array(n);
  let best: Float64Array = d.slice();
  let cur = evalAt(d);
  let bestSpread = cur.values[n - 1] - cur.values[0];
  const spread0 = bestSpread;
  if (spread0 > 0 && n > 1) {
    // Evaluation budget ~ 2·10⁸/n³ (about a second or two in JavaScript), split over the stages.
    const stages = [4, 40, 400, 4000, 40000];
    let budget = Math.min(400, Math.max(20, Math.floor(2e8 / (n * n * n))));
    const perStage = Math.max(4, Math.ceil(budget / stages.length));
    for (const c of stages) {
      const beta = c / spread0;
      const fg = (dd: Float64Array) => {
        const r = evalAt(dd);
        const lam = r.values;
        const top = lam[n - 1], bot = lam[0];
        let sp = 0, sq = 0;
        const p = new Float64Array(n), q = new Float64Array(n);
        for (let k = 0; k < n; k++) {
          p[k] = Math.exp(beta * (lam[k] - top));
          q[k] = Math.exp(-beta * (lam[k] - bot));
          sp += p[k];
          sq += q[k];
        }
        const f = top + Math.log(sp) / beta - bot + Math.log(sq) / beta;
        const g = new Float64Array(n);
        const V = r.vectors!;
        for (let k = 0; k < n; k++) {
          const wk = p[k] / sp - q[k] / sq;
          if (wk === 0) continue;
          for (let i = 0; i < n; i++) g[i] += wk * V[i * n + k] * V[i * n + k];
        }
        const spread = top - bot;
        if (spread < bestSpread) {
          bestSpread = spread;
          best = dd.slice();
        }
        return { f, g };
      };
      const used = lbfgs(fg, d, Math.min(budget, perStage), 1e-10 * spread0);
      budget -= used.evaluations;
      d = used.x;
      if (budget <= 0) break;
    }
  }
  cur = evalAt(best);
  const shift = delta - cur.values[0];
  for (let i = 0; i < n; i++) best[i] += shift;
  return best;
}

function lbfgs(fg: (x: Float64Array) => { f: number; g: Float64Array }, x0: Float64Array, maxEval: number, gtol: number): { x: Float64Array; evaluations: number } {
  const n = x0.length, mem = 8;
  let x: Float64Array = x0.slice();
  let { f, g } = fg(x);
  let evals = 1;
  const S: Float64Array[] = [], Y: Float64Array[] = [], R: number[] = [];
  while (evals < maxEval) {
    if (norm(g) <= gtol) break;
    // Two-loop recursion.
    const dir = g.slice();
    const al: number[] = [];
    for (let k = S.length - 1; k >= 0; k--) {
      const a = R[k] * dot(S[k], dir);
      al[k] = a;
      for (let i = 0; i < n; i++) dir[i] -= a * Y[k][i];
    }
    if (S.length) {
      const last = S.length - 1;
      const gamma = dot(S[last], Y[last]) / dot(Y[last], Y[last]);
      scale(dir, gamma);
    } else scale(dir, 1 / Math.max(norm(g), 1e-300));
    for (let k = 0; k < S.length; k++) {
      const b = R[k] * dot(Y[k], dir);
      for (let i = 0; i < n; i++) dir[i] += S[k][i] * (al[k] - b);
    }
    for (let i = 0; i < n; i++) dir[i] = -dir[i];
    let slope = dot(g, dir);
    if (!(slope < 0)) {
      for (let i = 0; i < n; i++) dir[i] = -g[i];
      slope = dot(g, dir);
      S.length = Y.length = R.length = 0;
    }
    let t = 1;
    let accepted = false;
    let xn = x, fn = f, gn = g;
    while (evals < maxEval) {
      xn = x.map((xi, i) => xi + t * dir[i]);
      const r = fg(xn);
      evals++;
      fn = r.f;
      gn = r.g;
      if (fn <= f + 1e-4 * t * slope) {
        accepted = true;
        break;
      }
      t *= 0.5;
      if (t < 1e-12) break;
    }
    if (!accepted) break;
    const s = xn.map((xi, i) => xi - x[i]);
    const y = gn.map((gi, i) => gi - g[i]);
    const sy = dot(s, y);
    if (sy > 1e-300) {
      S.push(s);
      Y.push(y);
      R.push(1 / sy);
      if (S.length > mem) {
        S.shift();
        Y.shift();
        R.shift();
      }
    }
    const progress = f - fn;
    x = xn;
    f = fn;
    g = gn;
    if (progress <= 1e-13 * Math.max(1, Math.abs(f))) break;
  }
  return { x, evaluations: evals };
}

// ---------------------------------------------------------------------------------------------
// Dense Cholesky: A = L Lᵀ, L lower triangular, row-major n × n.

export function denseCholesky(A: Float64Array, n: number): { ok: true; L: Float64Array } | { ok: false; failedAt: number } {
  const L = new Float64Array(n * n);
  for (let j = 0; j < n; j++) {
    const rj = j * n;
    let s = A[rj + j];
    for (let k = 0; k < j; k++) s -= L[rj + k] * L[rj + k];
    if (!(s > 0)) return { ok: false, failedAt: j };
    const ljj = Math.sqrt(s);
    L[rj + j] = ljj;
    for (let i = j + 1; i < n; i++) {
      const ri = i * n;
      let t = A[ri + j];
      for (let k = 0; k < j; k++) t -= L[ri + k] * L[rj + k];
      L[ri + j] = t / ljj;
    }
  }
  return { ok: true, L };
}

// ---------------------------------------------------------------------------------------------
// Sparse Cholesky (Martens §3.3) with a minimum-degree ordering.
//
// Ordering: minimum degree on the explicit elimination graph (eliminating v joins its remaining
// neighbours into a clique), degree buckets, ties broken by the most recently updated vertex (LIFO
// bucket order), which on lattices behaves like a local nested dissection. Each vertex's neighbours
// at its elimination are exactly the below-diagonal pattern of its column of L, so the symbolic
// factorisation comes out of the ordering. Numeric: left-looking column Cholesky over that pattern
// (George & Liu's linked-list form): O(flops) time, O(nnz(L)) memory.

export interface SymbolicCholesky {
  /** perm[k] = bit eliminated k-th; pos[bit] = its position. */
  perm: Int32Array;
  pos: Int32Array;
  /** Strictly-lower pattern of L by columns (positions), rows ascending. */
  colPtr: Int32Array;
  rowIdx: Int32Array;
}

export function minimumDegree(n: number, rowPtr: Int32Array, col: Int32Array): SymbolicCholesky {
  const adj: Int32Array[] = [];
  const len = new Int32Array(n);
  for (let v = 0; v < n; v++) {
    const lo = rowPtr[v], hi = rowPtr[v + 1];
    const a = new Int32Array(Math.max(4, hi - lo));
    let c = 0;
    for (let k = lo; k < hi; k++) if (col[k] !== v) a[c++] = col[k];
    adj.push(a);
    len[v] = c;
  }
  // Degree buckets: doubly linked lists.
  const head = new Int32Array(n + 1).fill(-1), next = new Int32Array(n).fill(-1), prev = new Int32Array(n).fill(-1);
  const deg = new Int32Array(n);
  const insert = (v: number, dg: number) => {
    deg[v] = dg;
    prev[v] = -1;
    next[v] = head[dg];
    if (head[dg] >= 0) prev[head[dg]] = v;
    head[dg] = v;
  };
  const remove = (v: number) => {
    if (prev[v] >= 0) next[prev[v]] = next[v];
    else head[deg[v]] = next[v];
    if (next[v] >= 0) prev[next[v]] = prev[v];
  };
  for (let v = n - 1; v >= 0; v--) insert(v, len[v]);
  const perm = new Int32Array(n), pos = new Int32Array(n);
  const patterns: Int32Array[] = new Array(n);
  const tag = new Int32Array(n);
  let stamp = 0;
  let minDeg = 0;
  for (let step = 0; step < n; step++) {
    while (head[minDeg] < 0) minDeg++;
    const v = head[minDeg];
    remove(v);
    perm[step] = v;
    pos[v] = step;
    const N = adj[v].slice(0, len[v]);
    patterns[step] = N;
    adj[v] = new Int32Array(0);
    len[v] = 0;
    for (let t = 0; t < N.length; t++) {
      const u = N[t];
      stamp++;
      let a = adj[u];
      let c = 0;
      // Drop v, mark the rest.
      for (let k = 0; k < len[u]; k++) {
        const w = a[k];
        if (w === v) continue;
        tag[w] = stamp;
        a[c++] = w;
      }
      tag[u] = stamp;
      for (let s = 0; s < N.length; s++) {
        const w = N[s];
        if (tag[w] === stamp) continue;
        if (c === a.length) {
          const b = new Int32Array(a.length * 2);
          b.set(a);
          a = adj[u] = b;
        }
        a[c++] = w;
      }
      len[u] = c;
      remove(u);
      insert(u, c);
      if (c < minDeg) minDeg = c;
    }
  }
  const colPtr = new Int32Array(n + 1);
  for (let k = 0; k < n; k++) colPtr[k + 1] = colPtr[k] + patterns[k].length;
  const rowIdx = new Int32Array(colPtr[n]);
  for (let k = 0; k < n; k++) {
    const P = patterns[k];
    const out = rowIdx.subarray(colPtr[k], colPtr[k + 1]);
    for (let t = 0; t < P.length; t++) out[t] = pos[P[t]];
    out.sort();
  }
  return { perm, pos, colPtr, rowIdx };
}

/** Numeric sparse Cholesky of P(W + D)Pᵀ = L Lᵀ; returns M = Pᵀ L as CSR rows over bits. */
export function sparseCholesky(form: CanonicalForm, d: Float64Array, sym: SymbolicCholesky): { ok: true; factor: FactorData } | { ok: false; failedBit: number } {
  const n = form.nBits;
  const { perm, pos, colPtr, rowIdx } = sym;
  const Lx = new Float64Array(rowIdx.length);
  const diag = new Float64Array(n);
  const w = new Float64Array(n);
  const headL = new Int32Array(n).fill(-1), link = new Int32Array(n).fill(-1), nextEntry = new Int32Array(n);
  for (let j = 0; j < n; j++) {
    const bit = perm[j];
    w[j] = d[bit];
    for (let k = form.rowPtr[bit]; k < form.rowPtr[bit + 1]; k++) {
      const i = pos[form.col[k]];
      if (i > j) w[i] = form.val[k];
    }
    let k = headL[j];
    headL[j] = -1;
    while (k >= 0) {
      const nk = link[k];
      const p = nextEntry[k];
      const ljk = Lx[p];
      w[j] -= ljk * ljk;
      const end = colPtr[k + 1];
      for (let q = p + 1; q < end; q++) w[rowIdx[q]] -= Lx[q] * ljk;
      if (p + 1 < end) {
        nextEntry[k] = p + 1;
        const r = rowIdx[p + 1];
        link[k] = headL[r];
        headL[r] = k;
      }
      k = nk;
    }
    const s = w[j];
    w[j] = 0;
    if (!(s > 0)) return { ok: false, failedBit: bit };
    const ljj = Math.sqrt(s);
    diag[j] = ljj;
    const inv = 1 / ljj;
    const lo = colPtr[j], hi = colPtr[j + 1];
    for (let q = lo; q < hi; q++) {
      const r = rowIdx[q];
      Lx[q] = w[r] * inv;
      w[r] = 0;
    }
    if (hi > lo) {
      nextEntry[j] = lo;
      link[j] = headL[rowIdx[lo]];
      headL[rowIdx[lo]] = j;
    }
  }
  // M = Pᵀ L: row `bit` of M is row pos[bit] of L; columns are positions (m = n).
  const rowCount = new Int32Array(n);
  for (let q = 0; q < rowIdx.length; q++) rowCount[rowIdx[q]]++;
  const rowPtr = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) rowPtr[i + 1] = rowPtr[i] + rowCount[pos[i]] + 1;
  const fillAt = rowPtr.slice(0, n);
  const mcol = new Int32Array(rowPtr[n]);
  const mval = new Float64Array(rowPtr[n]);
  for (let j = 0; j < n; j++) {
    // Row j's off-diagonal entries come from columns < j, already placed: its diagonal goes last.
    const b = perm[j];
    mcol[fillAt[b]] = j;
    mval[fillAt[b]++] = diag[j];
    for (let q = colPtr[j]; q < colPtr[j + 1]; q++) {
      const rb = perm[rowIdx[q]];
      mcol[fillAt[rb]] = j;
      mval[fillAt[rb]++] = Lx[q];
    }
  }
  return { ok: true, factor: { kind: 'sparse', n, m: n, rowPtr, col: mcol, values: mval } };
}
