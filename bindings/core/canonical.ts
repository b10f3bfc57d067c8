// The canonical binary pairwise form every engine kernel runs on (DESIGN.md §1):
//
//   log p(s) = aᵀs + ½ sᵀWs − log Z_s,   W symmetric, no diagonal,   log Z_user = log Z_s + logZOffset
//
// Variable v of the user's model becomes block v of bits blockStart[v] … blockStart[v+1]−1:
//   * a free bit (K = 2, every table touching v finite): x_v = s_i, one bit;
//   * a one-hot block (K ≠ 2, or a binary variable with a zero potential): K indicator bits with
//     exactly one set; its within-block entries of W never matter on valid states and are not stored.
// −Infinity (a zero potential) may appear in a and in W between one-hot blocks, so kernels add W_ij
// only where s_j = 1 (never multiply −∞ by 0).

import { LIMITS, requirePairwise, type Model } from './model.ts';
import { EngineError, ModelError, zeroModel } from './errors.ts';
import { MAX_CANONICAL_BYTES, pairTableEntries, pairTablesRefusal } from './model-range.ts';

/** The binary pairwise form log p(s) = aᵀs + ½ sᵀWs − log Z_s of a pairwise model (DESIGN.md §1). */
export interface CanonicalForm {
  /** Number of user variables (= blocks). */
  readonly n: number;
  /** Number of bits s_q (free bits plus one-hot indicators). */
  readonly nBits: number;
  /** Bit offsets of the blocks, length n + 1. */
  readonly blockStart: Int32Array;
  /** 1 where the block is a one-hot group, 0 where it is a single free bit. */
  readonly oneHot: Uint8Array;
  /** Cardinality of each user variable. */
  readonly card: Int32Array;
  /** Bias a_q of each bit (nats; −Infinity for a state with a zero potential). */
  readonly a: Float64Array;
  /** W in compressed sparse rows over bits: symmetric, both triangles stored, columns sorted. */
  readonly rowPtr: Int32Array;
  /** Column (bit) of each stored entry of W. */
  readonly col: Int32Array;
  /** Value W_qr of each stored entry (nats). */
  readonly val: Float64Array;
  /** log Z of the user's model = log Z_s + logZOffset (nats). */
  readonly logZOffset: number;
}

/**
 * How per-bit (or per-state) accumulators map to user states: the canonical form is one such layout
 * (free bits and one-hot blocks); the factor-graph kernels use stateLayout (every variable a block
 * of card_v slots).
 */
export type StateLayout = Pick<CanonicalForm, 'n' | 'nBits' | 'blockStart' | 'oneHot' | 'card'>;

/** One slot per (variable, state), variables in order: the factor-graph samplers' accumulators. */
export function stateLayout(card: Int32Array): StateLayout {
  const n = card.length, blockStart = new Int32Array(n + 1);
  for (let v = 0; v < n; v++) blockStart[v + 1] = blockStart[v] + card[v];
  return { n, nBits: blockStart[n], blockStart, oneHot: new Uint8Array(n).fill(1), card };
}

/** The canonical form of a pairwise model (factors of arity ≤ 2); refuses higher arity with a ModelError. */
export function toCanonical(model: Model): CanonicalForm {
  requirePairwise(model, 'the binary pairwise form', PAIRWISE_ALTERNATIVES);
  // Before anything is built: a 200-state Potts lattice's shared table became 5.9 GB of rows here.
  const bytes = 24 * pairTableEntries(model);
  if (bytes > MAX_CANONICAL_BYTES) throw new EngineError(pairTablesRefusal('the binary pairwise form', bytes, MAX_CANONICAL_BYTES));
  // Z = 0 where it shows in one place: a sampler would run on it and report marginals (Gibbs
  // reported a variable with no allowed state as 1/2, 1/2).
  const zero = model.zeroReason();
  if (zero !== null) throw zeroModel(zero);
  const n = model.n, card = model.card;
  const { free, blockStart, nBits } = blocks(model);
  const a = new Float64Array(nBits);
  let offset = model.logConst;

  // W straight into compressed rows: count each row's entries (zero couplings included), fill both
  // triangles in factor order, then drop zeros, sort and sum repeats in place: no intermediate
  // triplets and no object per factor (a 10⁶-site lattice has 4·10⁶ entries).
  const rowPtr = countRows(model, free, blockStart, nBits);
  const fill = rowPtr.slice(0, nBits);
  const col = new Int32Array(rowPtr[nBits]), val = new Float64Array(rowPtr[nBits]);
  offset += fillRows(model, free, blockStart, a, fill, col, val);
  for (let q = 0; q < nBits; q++) if (Number.isNaN(a[q])) throw new ModelError(`canonical form: bias of bit ${q} is NaN`);

  const csr = finishRows(nBits, rowPtr, fill, col, val);
  const oneHot = new Uint8Array(n);
  for (let v = 0; v < n; v++) oneHot[v] = free[v] ? 0 : 1;
  return { n, nBits, blockStart, oneHot, card: card.slice(), a, ...csr, logZOffset: offset };
}

/** Which variables are single bits, and the blocks' bit offsets. */
function blocks(model: Model): { free: Uint8Array; blockStart: Int32Array; nBits: number } {
  const n = model.n, card = model.card, F = model.nFactors;
  const { scopeStart, scopeVars } = model;
  // A binary variable is a free bit only when all its tables are finite: the bit form takes
  // differences of table entries, and ∞ − ∞ has no value.
  const free = new Uint8Array(n);
  for (let v = 0; v < n; v++) free[v] = card[v] === 2 ? 1 : 0;
  const finite = finiteTables(model);
  for (let f = 0; f < F; f++) {
    if (finite[f]) continue;
    for (let p = scopeStart[f]; p < scopeStart[f + 1]; p++) free[scopeVars[p]] = 0;
  }
  const blockStart = new Int32Array(n + 1);
  for (let v = 0; v < n; v++) blockStart[v + 1] = blockStart[v] + (free[v] ? 1 : card[v]);
  const nBits = blockStart[n];
  if (nBits > LIMITS.maxVariables) throw new ModelError(`the binary pairwise form has ${nBits} bits, past the engine's limit of ${LIMITS.maxVariables}`);
  return { free, blockStart, nBits };
}

/**
 * The canonical form's size without building it: bits, entries of W (an upper bound: zero
 * couplings and repeats are counted) and the largest block, for refusing a model up front.
 */
export function canonicalSize(model: Model): { n: number; nBits: number; nnz: number; maxBlock: number } {
  requirePairwise(model, 'the binary pairwise form', PAIRWISE_ALTERNATIVES);
  const { free, blockStart, nBits } = blocks(model);
  const { scopeStart, scopeVars, card } = model;
  let nnz = 0, maxBlock = 1;
  for (let f = 0; f < model.nFactors; f++) {
    if (scopeStart[f + 1] - scopeStart[f] !== 2) continue;
    const i = scopeVars[scopeStart[f]], j = scopeVars[scopeStart[f] + 1];
    nnz += 2 * (free[i] ? 1 : card[i]) * (free[j] ? 1 : card[j]);
  }
  for (let v = 0; v < model.n; v++) maxBlock = Math.max(maxBlock, blockStart[v + 1] - blockStart[v]);
  return { n: model.n, nBits, nnz, maxBlock };
}

/** Row lengths of W before zeros are dropped, as offsets (length nBits + 1). */
function countRows(model: Model, free: Uint8Array, blockStart: Int32Array, nBits: number): Int32Array {
  const { scopeStart, scopeVars, card } = model, F = model.nFactors;
  const rowPtr = new Int32Array(nBits + 1);
  for (let f = 0; f < F; f++) {
    if (scopeStart[f + 1] - scopeStart[f] !== 2) continue;
    const i = scopeVars[scopeStart[f]], j = scopeVars[scopeStart[f] + 1];
    const wi = free[i] ? 1 : card[i], wj = free[j] ? 1 : card[j];
    for (let q = blockStart[i]; q < blockStart[i] + wi; q++) rowPtr[q + 1] += wj;
    for (let q = blockStart[j]; q < blockStart[j] + wj; q++) rowPtr[q + 1] += wi;
  }
  for (let q = 0; q < nBits; q++) rowPtr[q + 1] += rowPtr[q];
  return rowPtr;
}

/** Adds the factors into a and the rows of W (from fill[p] on); returns the constant they add to log Z. */
function fillRows(model: Model, free: Uint8Array, blockStart: Int32Array, a: Float64Array, fill: Int32Array, col: Int32Array, val: Float64Array): number {
  const { scopeStart, scopeVars, tableStart, tables, card } = model, F = model.nFactors;
  let offset = 0;
  for (let f = 0; f < F; f++) {
    const arity = scopeStart[f + 1] - scopeStart[f], t0 = tableStart[f];
    if (arity === 1) {
      const v = scopeVars[scopeStart[f]], b = blockStart[v];
      if (free[v]) {
        offset += tables[t0];
        a[b] += tables[t0 + 1] - tables[t0];
      } else {
        for (let k = 0; k < card[v]; k++) a[b + k] += tables[t0 + k];
      }
      continue;
    }
    if (arity !== 2) continue;
    const i = scopeVars[scopeStart[f]], j = scopeVars[scopeStart[f] + 1];
    const Kj = card[j], bi = blockStart[i], bj = blockStart[j];
    if (free[i] && free[j]) {
      const t00 = tables[t0], t01 = tables[t0 + 1], t10 = tables[t0 + 2], t11 = tables[t0 + 3];
      offset += t00;
      a[bi] += t10 - t00;
      a[bj] += t01 - t00;
      const w = t11 - t10 - t01 + t00;
      if (w !== 0) {
        col[fill[bi]] = bj;
        val[fill[bi]++] = w;
        col[fill[bj]] = bi;
        val[fill[bj]++] = w;
      }
    } else if (free[i]) {
      // θ(s_i, l) = θ(0, l) + s_i (θ(1, l) − θ(0, l)); the first term is unary on the block of j.
      for (let l = 0; l < Kj; l++) {
        a[bj + l] += tables[t0 + l];
        put(col, val, fill, bi, bj + l, tables[t0 + Kj + l] - tables[t0 + l]);
      }
    } else if (free[j]) {
      for (let k = 0; k < card[i]; k++) {
        a[bi + k] += tables[t0 + k * 2];
        put(col, val, fill, bi + k, bj, tables[t0 + k * 2 + 1] - tables[t0 + k * 2]);
      }
    } else {
      for (let k = 0; k < card[i]; k++) for (let l = 0; l < Kj; l++) put(col, val, fill, bi + k, bj + l, tables[t0 + k * Kj + l]);
    }
  }
  return offset;
}

function put(col: Int32Array, val: Float64Array, fill: Int32Array, p: number, q: number, w: number): void {
  if (w === 0) return;
  col[fill[p]] = q;
  val[fill[p]++] = w;
  col[fill[q]] = p;
  val[fill[q]++] = w;
}

/** Methods that take factors of any arity, named when a pairwise-only method refuses a model. */
export const PAIRWISE_ALTERNATIVES = 'for higher-order factors use --method exact, gibbs, pt, mf, bp, trw or bounds, or --logz ais with Gibbs transitions (on models whose zeros leave a fair share of configurations possible)';

/** Per factor: 1 when its table has no −∞ (tables shared by many factors are checked once). */
function finiteTables(model: Model): Uint8Array {
  const out = new Uint8Array(model.nFactors);
  const seen = new Map<number, number>();
  const { scopeStart, scopeVars, tableStart, tables, card } = model;
  let lastKey = -1, lastOk = 1;
  for (let f = 0; f < model.nFactors; f++) {
    const at = tableStart[f];
    let size = 1;
    for (let p = scopeStart[f]; p < scopeStart[f + 1]; p++) size *= card[scopeVars[p]];
    const key = at * 2 ** 26 + (size - 1); // exact: at < 2^27, size ≤ 2^26
    if (key !== lastKey) {
      let ok = seen.get(key);
      if (ok === undefined) {
        ok = 1;
        for (let k = at; k < at + size; k++) if (!Number.isFinite(tables[k])) ok = 0;
        if (seen.size < 1 << 16) seen.set(key, ok);
      }
      lastKey = key;
      lastOk = ok;
    }
    out[f] = lastOk;
  }
  return out;
}

/**
 * Rows filled up to fill[p] from rowPtr[p]: sorts each by column (insertion sort: rows are short
 * and mostly sorted already) so neighbours are visited in memory order, sums repeated columns
 * (several factors on one pair) and closes the gaps left by zero couplings, in place.
 */
function finishRows(nBits: number, rowPtr: Int32Array, fill: Int32Array, col: Int32Array, val: Float64Array) {
  let compact = false;
  for (let p = 0; p < nBits; p++) {
    const lo = rowPtr[p], hi = fill[p];
    if (hi !== rowPtr[p + 1]) compact = true;
    for (let k = lo + 1; k < hi; k++) {
      const c = col[k];
      if (col[k - 1] < c) continue;
      const w = val[k];
      let q = k - 1;
      while (q >= lo && col[q] > c) {
        col[q + 1] = col[q];
        val[q + 1] = val[q];
        q--;
      }
      col[q + 1] = c;
      val[q + 1] = w;
      if (q >= lo && col[q] === c) compact = true;
    }
  }
  if (!compact) return { rowPtr, col, val };
  let m = 0, lo = 0;
  for (let p = 0; p < nBits; p++) {
    const hi = fill[p], start = m;
    for (let k = lo; k < hi; k++) {
      if (m > start && col[m - 1] === col[k]) val[m - 1] += val[k];
      else {
        col[m] = col[k];
        val[m++] = val[k];
      }
    }
    lo = rowPtr[p + 1];
    rowPtr[p + 1] = m;
  }
  return { rowPtr, col: col.slice(0, m), val: val.slice(0, m) };
}

/** Bits of the canonical form for a user configuration x. */
export function encode(c: CanonicalForm, x: ArrayLike<number>): Uint8Array {
  const s = new Uint8Array(c.nBits);
  for (let v = 0; v < c.n; v++) {
    if (c.oneHot[v]) s[c.blockStart[v] + x[v]] = 1;
    else s[c.blockStart[v]] = x[v];
  }
  return s;
}

/** The user configuration of canonical bits s (encode's inverse). */
export function decode(c: StateLayout, s: ArrayLike<number>): Int32Array {
  const x = new Int32Array(c.n);
  for (let v = 0; v < c.n; v++) {
    const b = c.blockStart[v];
    if (!c.oneHot[v]) x[v] = s[b];
    else for (let k = 0; k < c.card[v]; k++) if (s[b + k]) x[v] = k;
  }
  return x;
}

/** aᵀs + ½ sᵀWs + logZOffset: equals the user's Model.logPotential(x) for s = encode(x). */
export function canonicalLogPotential(c: CanonicalForm, s: ArrayLike<number>): number {
  let e = c.logZOffset;
  for (let p = 0; p < c.nBits; p++) {
    if (!s[p]) continue;
    e += c.a[p];
    for (let k = c.rowPtr[p]; k < c.rowPtr[p + 1]; k++) if (c.col[k] > p && s[c.col[k]]) e += c.val[k];
  }
  return e;
}

/**
 * User-facing marginals p(x_v = k) from per-bit probabilities p(s_i = 1). The rows are views into
 * one array (10⁶ variables: one allocation for the numbers, not one per variable).
 */
export function bitsToMarginals(c: StateLayout, bitProb: ArrayLike<number>): Float64Array[] {
  return userRows(c, bitProb, false);
}

/** Per-state standard errors from per-bit ones: a free bit's two states share its error. */
export function bitsToStdErr(c: StateLayout, bitSE: ArrayLike<number>): Float64Array[] {
  return userRows(c, bitSE, true);
}

function userRows(c: StateLayout, bits: ArrayLike<number>, shared: boolean): Float64Array[] {
  let len = 0;
  for (let v = 0; v < c.n; v++) len += c.card[v];
  const flat = new Float64Array(len), buf = flat.buffer;
  const out = new Array<Float64Array>(c.n);
  for (let v = 0, at = 0; v < c.n; v++) {
    const b = c.blockStart[v], K = c.card[v];
    if (c.oneHot[v]) for (let k = 0; k < K; k++) flat[at + k] = bits[b + k];
    else {
      flat[at] = shared ? bits[b] : 1 - bits[b];
      flat[at + 1] = bits[b];
    }
    out[v] = new Float64Array(buf, at * 8, K);
    at += K;
  }
  return out;
}
