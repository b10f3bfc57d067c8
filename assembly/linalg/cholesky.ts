// Dense Cholesky A = L Lᵀ (row-major n × n, L lower triangular), column by column in the
// dot-product (Crout) form: L_ij = (A_ij − Σ_{k<j} L_ik L_jk) / L_jj. Both rows of every dot
// product are contiguous; the sums run in four partial sums (two f64x2 accumulators), added at the
// end, then the odd tail.

import { ldf, stf } from './access';

/** Σ_{k<len} a_k b_k over contiguous f64 rows, in the lane order described above. */
@inline
export function rowDot(a: usize, b: usize, len: i32): f64 {
  let acc0 = f64x2.splat(0), acc1 = f64x2.splat(0);
  let k = 0;
  for (; k + 3 < len; k += 4) {
    const o = <usize>k << 3;
    acc0 = f64x2.add(acc0, f64x2.mul(v128.load(a + o), v128.load(b + o)));
    acc1 = f64x2.add(acc1, f64x2.mul(v128.load(a + o, 16), v128.load(b + o, 16)));
  }
  const acc = f64x2.add(acc0, acc1);
  let s = f64x2.extract_lane(acc, 0) + f64x2.extract_lane(acc, 1);
  for (; k < len; k++) s += ldf(a, k) * ldf(b, k);
  return s;
}

/**
 * L (n × n, its upper triangle set to 0) with L Lᵀ = A; A is read only. Returns −1, or the column
 * whose pivot was not positive (A is not positive definite; L is then partial).
 */
export function denseCholesky(A: usize, L: usize, n: i32): i32 {
  const rowBytes = <usize>n << 3;
  memory.fill(L, 0, rowBytes * <usize>n);
  for (let j = 0; j < n; j++) {
    const rj = L + <usize>j * rowBytes;
    const s = ldf(A + <usize>j * rowBytes, j) - rowDot(rj, rj, j);
    if (!(s > 0)) return j;
    const ljj = Math.sqrt(s);
    stf(rj, j, ljj);
    for (let i = j + 1; i < n; i++) {
      const ri = L + <usize>i * rowBytes;
      stf(ri, j, (ldf(A + <usize>i * rowBytes, j) - rowDot(ri, rj, j)) / ljj);
    }
  }
  return -1;
}
