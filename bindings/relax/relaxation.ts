// The continuous relaxation of a discrete model (DESIGN.md §2): choose a diagonal D with W + D ≻ 0
// and a factor M with M Mᵀ = W + D, so that
//
//   log p(x, s) = −½|x|² + sᵀMx + (a − ½d)ᵀs + const,       x ∈ Rᵐ,  s valid (one-hot blocks)
//
// This file is per-model setup: it chooses the spectrum method (dense Householder + QL for small
// models, Lanczos for large ones), the shift d, and the factor (dense Cholesky, dense eigen V Λ^½,
// sparse Cholesky with a minimum-degree ordering, or the edge-incidence factor with its own d). The
// linear algebra runs in the engine (assembly/linalg/, through bindings/linalg/); everything per
// sample runs in WASM on the result (bindings/relax/relaxation-bound.ts copies it in).
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
import type { Engine } from '../core/engine.ts';
import { toCanonical, type CanonicalForm } from '../core/canonical.ts';
import { ModelError } from '../core/errors.ts';
import { addDiagonal, denseCholesky, symmetricEigen } from '../linalg/dense.ts';
import { lanczosExtremes } from '../linalg/lanczos.ts';
import { SparseCholesky } from '../linalg/sparse-cholesky.ts';
import { minSpreadShift } from './min-spread-shift.ts';
import type { FactorData, FactorKind, Relaxation } from './relaxation-types.ts';

export type { FactorKind, Relaxation } from './relaxation-types.ts';

/** The diagonal shift d: a named rule ('martens', 'min-lambda-max') or the user's d, one entry per bit. */
export type ShiftOption = 'martens' | 'min-lambda-max' | Float64Array;
/** 'fft' needs an engine and a periodic lattice: it is built by relaxationFor (bindings/infer.ts). */
export type FactorChoice = 'auto' | 'dense-cholesky' | 'dense-eigen' | 'sparse-cholesky' | 'incidence' | 'fft';

/** Options of the Gaussian-integral relaxation (shift and factor); see each field for its default. */
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

/** RelaxationOptions' keys (what infer reads to build the continuous samplers' relaxation). */
export const RELAXATION_OPTION_KEYS: readonly string[] = ['shift', 'margin', 'factor'];

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

/**
 * The Gaussian-integral (Hubbard–Stratonovich) relaxation of `model`: the shift d making W + D positive definite
 * and a factor M with M Mᵀ = W + D. Throws ModelError on bad options; the FFT factor is built by relaxationFor.
 */
export function buildRelaxation(engine: Engine, model: Model, opts: RelaxationOptions = {}): Relaxation {
  return relaxCanonical(engine, toCanonical(model), opts);
}

/** As buildRelaxation, for a model already in canonical form. */
export function relaxCanonical(engine: Engine, form: CanonicalForm, opts: RelaxationOptions = {}): Relaxation {
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
  checkRelaxationRange(form);

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
    const ev = symmetricEigen(engine, Wd, n, false).values;
    lamMin = ev[0];
    lamMax = ev[n - 1];
    lamMinSafe = lamMin - 1e-12 * Math.max(1, Math.abs(lamMin), Math.abs(lamMax));
  } else {
    const lz = lanczosExtremes(engine, { n, rowPtr: form.rowPtr, col: form.col, val: form.val });
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
      d = minSpreadShift(engine, Wd, n, unit);
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
  const symbolic = kind === 'sparse-cholesky' ? new SparseCholesky(engine, n, form.rowPtr, form.col) : null;
  try {
    if (kind === 'incidence') factor = incidenceFactor(form, d);
    if (symbolic) {
      ordering = symbolic.perm;
      fill = symbolic.fill;
    }
    tFactor = performance.now();
    for (let attempt = 0; kind !== 'incidence'; attempt++) {
      let failedBit = -1;
      if (kind === 'dense-cholesky') {
        const r = denseCholesky(engine, addDiagonal(Wd ?? denseW(form), n, d), n);
        if (r.ok) factor = { kind: 'dense', n, m: n, values: r.L };
        else failedBit = r.failedAt;
      } else if (kind === 'dense-eigen') {
        const A = addDiagonal(Wd ?? denseW(form), n, d);
        const { values, vectors } = symmetricEigen(engine, A, n, true);
        if (values[0] > 0) {
          const M = vectors!;
          const root = values.map(Math.sqrt);
          for (let i = 0; i < n; i++) for (let k = 0; k < n; k++) M[i * n + k] *= root[k];
          factor = { kind: 'dense', n, m: n, values: M };
          wdValues = values;
        } else failedBit = 0;
      } else {
        const r = symbolic!.factor(form.val, d);
        if (r.ok) factor = { kind: 'sparse', n, m: n, ...r.rows };
        else failedBit = r.failedBit;
      }
      if (failedBit < 0) break;
      if (shiftKind === 'user') {
        throw new ModelError(
          kind === 'dense-eigen'
            ? `relaxation: W + D is not positive definite for the given d (smallest eigenvalue ${symmetricEigen(engine, addDiagonal(Wd ?? denseW(form), n, d), n, false).values[0]})`
            : `relaxation: W + D is not positive definite for the given d (Cholesky pivot ≤ 0 at bit ${failedBit}); raise d`,
        );
      }
      if (attempt >= 30) throw new ModelError('relaxation: could not find a shift making W + D positive definite (numerical trouble)');
      const bump = unit * 2 ** (attempt + 2) + 1e-3 * rho * 2 ** attempt;
      for (let i = 0; i < n; i++) d[i] += bump;
      if (constShift !== null) constShift += bump;
    }
  } finally {
    symbolic?.dispose();
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
    const ev = symmetricEigen(engine, addDiagonal(Wd, n, d), n, false).values;
    lamMinWD = ev[0];
    lamMaxWD = ev[n - 1];
  } else {
    const lz = lanczosExtremes(engine, { n, rowPtr: form.rowPtr, col: form.col, val: form.val, diag: d });
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
      concavityIndex = symmetricEigen(engine, B, n, false).values[n - 1];
    } else {
      const lz = lanczosExtremes(engine, { n, rowPtr: form.rowPtr, col: form.col, val: form.val, diag: d, blocks: form });
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

/** Past this magnitude a bias or coupling swallows the O(1) terms the relaxation adds to it (2^−52 relative). */
export const RELAXATION_MAX_MAGNITUDE = 2 ** 50;

/**
 * Refuses finite biases and couplings past ±RELAXATION_MAX_MAGNITUDE: the relaxation's sums a_i + (M s)_i
 * lose every O(1) term beside them, so a unary log-potential of −10³⁰⁰ (a "big M" for an impossible
 * state) cut the variable loose from its couplings — DHMC put a neighbour's marginal 84 standard
 * errors off with no warning.
 */
export function checkRelaxationRange(form: CanonicalForm): void {
  const owner = bitOwners(form);
  const big = (x: number) => Number.isFinite(x) && Math.abs(x) > RELAXATION_MAX_MAGNITUDE;
  const refuse = (what: string, x: number): never => {
    throw new ModelError(`relaxation: ${what} has log-potential ${x}: past ±2^50 the relaxation's sums lose every O(1) term beside it, so the samples would ignore the couplings; give an impossible state a zero potential (−Infinity) instead, or use gibbs, treegibbs or exact inference`);
  };
  for (let p = 0; p < form.nBits; p++) {
    if (big(form.a[p])) {
      const [v, s] = owner(p);
      refuse(`variable ${v} = ${s}`, form.a[p]);
    }
    for (let k = form.rowPtr[p]; k < form.rowPtr[p + 1]; k++) {
      if (!big(form.val[k])) continue;
      const [v1, s1] = owner(p), [v2, s2] = owner(form.col[k]);
      refuse(`the pair (variable ${v1} = ${s1}, variable ${v2} = ${s2})`, form.val[k]);
    }
  }
}

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

