// Sparse Cholesky P A Pᵀ = L Lᵀ (Martens §3.3) for A = W + diag(d), W a symmetric CSR pattern
// over n bits, P the ordering (perm[k] = bit at position k, pos = its inverse). Three passes, so the
// caller can size every array before the next:
//   symbolicCounts  elimination tree and column counts of L (Liu's row-subtree walk, as in
//                   Davis's LDL: row k of L is the set of tree paths from A's entries (k, i < k)
//                   up to k); returns nnz(L) below the diagonal;
//   symbolicPattern the rows of every column of L (walking the same row subtrees for k = 0 … n−1
//                   appends k to each column it meets, so every column comes out sorted);
//   choleskyNumeric left-looking column Cholesky over that pattern (George & Liu's linked-list
//                   form): O(flops) time, O(nnz(L)) memory;
// and choleskyRows, which writes M = Pᵀ L as CSR rows over bits (row `bit` of M is row pos[bit] of
// L; its diagonal last) for the relaxation's factor.

import { ldf, stf, ldi, sti } from '../core/access';

/** parent (i32 × n, −1 = root) and counts (i32 × n, strictly-lower nnz per column); flag: i32 × n. */
export function symbolicCounts(n: i32, rowPtr: usize, col: usize, perm: usize, pos: usize, parent: usize, counts: usize, flag: usize): f64 {
  let total = 0.0;
  for (let k = 0; k < n; k++) {
    sti(parent, k, -1);
    sti(flag, k, k);
    sti(counts, k, 0);
    const bit = ldi(perm, k);
    for (let q = ldi(rowPtr, bit), e = ldi(rowPtr, bit + 1); q < e; q++) {
      let i = ldi(pos, ldi(col, q));
      while (i < k && ldi(flag, i) != k) {
        if (ldi(parent, i) < 0) sti(parent, i, k);
        sti(counts, i, ldi(counts, i) + 1);
        total += 1;
        sti(flag, i, k);
        i = ldi(parent, i);
      }
    }
  }
  return total;
}

/** rowIdx (i32 × colPtr[n]) from the tree; next, flag: i32 × n scratch. */
export function symbolicPattern(n: i32, rowPtr: usize, col: usize, perm: usize, pos: usize, parent: usize, colPtr: usize, rowIdx: usize, next: usize, flag: usize): void {
  memory.copy(next, colPtr, <usize>n << 2);
  for (let k = 0; k < n; k++) {
    sti(flag, k, k);
    const bit = ldi(perm, k);
    for (let q = ldi(rowPtr, bit), e = ldi(rowPtr, bit + 1); q < e; q++) {
      let i = ldi(pos, ldi(col, q));
      while (i < k && ldi(flag, i) != k) {
        const at = ldi(next, i);
        sti(rowIdx, at, k);
        sti(next, i, at + 1);
        sti(flag, i, k);
        i = ldi(parent, i);
      }
    }
  }
}

/**
 * Lx (f64 × nnz, the strictly-lower values by columns) and diag (f64 × n) of L. w: f64 × n (zero on
 * entry and exit); headL, link, nextEntry: i32 × n. Returns −1, or the bit whose pivot was not
 * positive (A is not positive definite).
 */
export function choleskyNumeric(
  n: i32, rowPtr: usize, col: usize, val: usize, d: usize, perm: usize, pos: usize,
  colPtr: usize, rowIdx: usize, Lx: usize, diag: usize, w: usize, headL: usize, link: usize, nextEntry: usize,
): i32 {
  for (let j = 0; j < n; j++) sti(headL, j, -1);
  memory.fill(w, 0, <usize>n << 3);
  for (let j = 0; j < n; j++) {
    const bit = ldi(perm, j);
    stf(w, j, ldf(d, bit));
    for (let q = ldi(rowPtr, bit), e = ldi(rowPtr, bit + 1); q < e; q++) {
      const i = ldi(pos, ldi(col, q));
      if (i > j) stf(w, i, ldf(val, q));
    }
    // Columns k < j with L_jk ≠ 0 wait in j's list; each subtracts L_jk · (its entries from row j down).
    let k = ldi(headL, j);
    sti(headL, j, -1);
    let wj = ldf(w, j);
    while (k >= 0) {
      const nk = ldi(link, k);
      const p = ldi(nextEntry, k);
      const ljk = ldf(Lx, p);
      wj -= ljk * ljk;
      const end = ldi(colPtr, k + 1);
      // w[rows of column k below j] −= L[·, k] · L_jk, walking both arrays by pointer.
      let pr = rowIdx + (<usize>(p + 1) << 2), px = Lx + (<usize>(p + 1) << 3);
      const pe = rowIdx + (<usize>end << 2);
      // Two entries per pass (their rows differ, so the order of the two updates does not matter).
      while (pr + 4 < pe) {
        const pw0 = w + (<usize>load<i32>(pr) << 3), pw1 = w + (<usize>load<i32>(pr, 4) << 3);
        const x0 = load<f64>(px), x1 = load<f64>(px, 8);
        store<f64>(pw0, load<f64>(pw0) - x0 * ljk);
        store<f64>(pw1, load<f64>(pw1) - x1 * ljk);
        pr += 8;
        px += 16;
      }
      if (pr < pe) {
        const pw = w + (<usize>load<i32>(pr) << 3);
        store<f64>(pw, load<f64>(pw) - load<f64>(px) * ljk);
      }
      if (p + 1 < end) {
        sti(nextEntry, k, p + 1);
        const r = ldi(rowIdx, p + 1);
        sti(link, k, ldi(headL, r));
        sti(headL, r, k);
      }
      k = nk;
    }
    stf(w, j, 0);
    if (!(wj > 0)) {
      memory.fill(w, 0, <usize>n << 3);
      return bit;
    }
    const ljj = Math.sqrt(wj);
    stf(diag, j, ljj);
    const inv = 1 / ljj;
    const lo = ldi(colPtr, j), hi = ldi(colPtr, j + 1);
    for (let q = lo; q < hi; q++) {
      const r = ldi(rowIdx, q);
      stf(Lx, q, ldf(w, r) * inv);
      stf(w, r, 0);
    }
    if (hi > lo) {
      sti(nextEntry, j, lo);
      const r = ldi(rowIdx, lo);
      sti(link, j, ldi(headL, r));
      sti(headL, r, j);
    }
  }
  return -1;
}

/**
 * M = Pᵀ L as CSR rows over bits: mRowPtr (i32 × n + 1), mCol (i32 × nnz + n), mVal (f64 × nnz + n);
 * columns are positions (m = n), each row's off-diagonal entries in column order, its diagonal last.
 * fillAt: i32 × n scratch.
 */
export function choleskyRows(n: i32, perm: usize, pos: usize, colPtr: usize, rowIdx: usize, Lx: usize, diag: usize, mRowPtr: usize, mCol: usize, mVal: usize, fillAt: usize): void {
  memory.fill(fillAt, 0, <usize>n << 2);
  const nnz = ldi(colPtr, n);
  for (let q = 0; q < nnz; q++) {
    const r = ldi(rowIdx, q);
    sti(fillAt, r, ldi(fillAt, r) + 1);
  }
  sti(mRowPtr, 0, 0);
  for (let i = 0; i < n; i++) sti(mRowPtr, i + 1, ldi(mRowPtr, i) + ldi(fillAt, ldi(pos, i)) + 1);
  for (let i = 0; i < n; i++) sti(fillAt, i, ldi(mRowPtr, i));
  for (let j = 0; j < n; j++) {
    // Row j's off-diagonal entries come from columns < j, already placed: its diagonal goes last.
    const b = ldi(perm, j);
    let at = ldi(fillAt, b);
    sti(mCol, at, j);
    stf(mVal, at, ldf(diag, j));
    sti(fillAt, b, at + 1);
    for (let q = ldi(colPtr, j), e = ldi(colPtr, j + 1); q < e; q++) {
      const rb = ldi(perm, ldi(rowIdx, q));
      at = ldi(fillAt, rb);
      sti(mCol, at, j);
      stf(mVal, at, ldf(Lx, q));
      sti(fillAt, rb, at + 1);
    }
  }
}
