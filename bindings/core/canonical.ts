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

import type { Model } from './model.ts';
import { ModelError } from './errors.ts';

export interface CanonicalForm {
  /** Number of user variables (= blocks). */
  readonly n: number;
  readonly nBits: number;
  /** Bit offsets of the blocks, length n + 1. */
  readonly blockStart: Int32Array;
  /** 1 where the block is a one-hot group, 0 where it is a single free bit. */
  readonly oneHot: Uint8Array;
  /** Cardinality of each user variable. */
  readonly card: Int32Array;
  readonly a: Float64Array;
  /** W in compressed sparse rows over bits: symmetric, both triangles stored, columns sorted. */
  readonly rowPtr: Int32Array;
  readonly col: Int32Array;
  readonly val: Float64Array;
  readonly logZOffset: number;
}

export function toCanonical(model: Model): CanonicalForm {
  const n = model.n;
  const card = model.card;
  // A binary variable is a free bit only when all its tables are finite: the bit form takes
  // differences of table entries, and ∞ − ∞ has no value.
  const free = new Uint8Array(n);
  for (let v = 0; v < n; v++) free[v] = card[v] === 2 && model.unary[v].every(Number.isFinite) ? 1 : 0;
  for (const e of model.edges) {
    if (!e.table.every(Number.isFinite)) free[e.i] = free[e.j] = 0;
  }
  const blockStart = new Int32Array(n + 1);
  for (let v = 0; v < n; v++) blockStart[v + 1] = blockStart[v] + (free[v] ? 1 : card[v]);
  const nBits = blockStart[n];
  const a = new Float64Array(nBits);
  let offset = model.logConst;

  for (let v = 0; v < n; v++) {
    const t = model.unary[v], b = blockStart[v];
    if (free[v]) {
      offset += t[0];
      a[b] += t[1] - t[0];
    } else {
      for (let k = 0; k < card[v]; k++) a[b + k] += t[k];
    }
  }

  // Off-diagonal entries as (row, col, value) triplets, upper triangle; mirrored below.
  const rows: number[] = [], cols: number[] = [], vals: number[] = [];
  const put = (p: number, q: number, w: number) => {
    if (w !== 0) {
      rows.push(p);
      cols.push(q);
      vals.push(w);
    }
  };
  for (const { i, j, table: t } of model.edges) {
    const Kj = card[j], bi = blockStart[i], bj = blockStart[j];
    if (free[i] && free[j]) {
      offset += t[0];
      a[bi] += t[2] - t[0];
      a[bj] += t[1] - t[0];
      put(bi, bj, t[3] - t[2] - t[1] + t[0]);
    } else if (free[i]) {
      // θ(s_i, l) = θ(0, l) + s_i (θ(1, l) − θ(0, l)); the first term is unary on the block of j.
      for (let l = 0; l < Kj; l++) {
        a[bj + l] += t[l];
        put(bi, bj + l, t[Kj + l] - t[l]);
      }
    } else if (free[j]) {
      for (let k = 0; k < card[i]; k++) {
        a[bi + k] += t[k * 2];
        put(bi + k, bj, t[k * 2 + 1] - t[k * 2]);
      }
    } else {
      for (let k = 0; k < card[i]; k++) for (let l = 0; l < Kj; l++) put(bi + k, bj + l, t[k * Kj + l]);
    }
  }
  for (let q = 0; q < nBits; q++) if (Number.isNaN(a[q])) throw new ModelError(`canonical form: bias of bit ${q} is NaN`);

  const csr = symmetricCSR(nBits, rows, cols, vals);
  const oneHot = new Uint8Array(n);
  for (let v = 0; v < n; v++) oneHot[v] = free[v] ? 0 : 1;
  return { n, nBits, blockStart, oneHot, card: card.slice(), a, ...csr, logZOffset: offset };
}

/** CSR of a symmetric matrix from upper-triangle triplets (p < q, unique pairs). */
function symmetricCSR(nBits: number, rows: number[], cols: number[], vals: number[]) {
  const rowPtr = new Int32Array(nBits + 1);
  for (let t = 0; t < rows.length; t++) {
    rowPtr[rows[t] + 1]++;
    rowPtr[cols[t] + 1]++;
  }
  for (let q = 0; q < nBits; q++) rowPtr[q + 1] += rowPtr[q];
  const fill = rowPtr.slice(0, nBits);
  const col = new Int32Array(rowPtr[nBits]);
  const val = new Float64Array(rowPtr[nBits]);
  for (let t = 0; t < rows.length; t++) {
    const p = rows[t], q = cols[t], w = vals[t];
    col[fill[p]] = q;
    val[fill[p]++] = w;
    col[fill[q]] = p;
    val[fill[q]++] = w;
  }
  // Sort each row by column so neighbours are visited in memory order.
  for (let p = 0; p < nBits; p++) {
    const lo = rowPtr[p], hi = rowPtr[p + 1];
    let sorted = true;
    for (let k = lo + 1; k < hi && sorted; k++) sorted = col[k - 1] < col[k];
    if (sorted) continue;
    const idx = Array.from({ length: hi - lo }, (_, k) => lo + k).sort((x, y) => col[x] - col[y]);
    const c = idx.map((k) => col[k]), w = idx.map((k) => val[k]);
    col.set(c, lo);
    val.set(w, lo);
  }
  return { rowPtr, col, val };
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

/** User-facing marginals p(x_v = k) from per-bit probabilities p(s_i = 1). */
export function bitsToMarginals(c: CanonicalForm, bitProb: ArrayLike<number>): Float64Array[] {
  const out: Float64Array[] = [];
  for (let v = 0; v < c.n; v++) {
    const b = c.blockStart[v];
    if (c.oneHot[v]) out.push(Float64Array.from({ length: c.card[v] }, (_, k) => bitProb[b + k]));
    else out.push(Float64Array.of(1 - bitProb[b], bitProb[b]));
  }
  return out;
}
