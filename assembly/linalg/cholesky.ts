// Dense Cholesky A = L Lᵀ (row-major n × n, L lower triangular), column by column in the
// dot-product (Crout) form: L_ij = (A_ij − Σ_{k<j} L_ik L_jk) / L_jj. Both rows of every dot
// product are contiguous; the sums run in four partial sums (two f64x2 accumulators), added at the
// end, then the odd tail; rows i are taken two at a time against row j.

import { ldf, stf } from '../core/access';

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
    // Rows two at a time: each load of row j serves both dot products (the same sums as one by one).
    let i = j + 1;
    for (; i + 1 < n; i += 2) {
      const ri = L + <usize>i * rowBytes, ri1 = ri + rowBytes;
      let a0 = f64x2.splat(0), a1 = f64x2.splat(0), b0 = f64x2.splat(0), b1 = f64x2.splat(0);
      let k = 0;
      for (; k + 3 < j; k += 4) {
        const o = <usize>k << 3;
        const x0 = v128.load(rj + o), x1 = v128.load(rj + o, 16);
        a0 = f64x2.add(a0, f64x2.mul(v128.load(ri + o), x0));
        a1 = f64x2.add(a1, f64x2.mul(v128.load(ri + o, 16), x1));
        b0 = f64x2.add(b0, f64x2.mul(v128.load(ri1 + o), x0));
        b1 = f64x2.add(b1, f64x2.mul(v128.load(ri1 + o, 16), x1));
      }
      const sa = f64x2.add(a0, a1), sb = f64x2.add(b0, b1);
      let ta = f64x2.extract_lane(sa, 0) + f64x2.extract_lane(sa, 1);
      let tb = f64x2.extract_lane(sb, 0) + f64x2.extract_lane(sb, 1);
      for (; k < j; k++) {
        const x = ldf(rj, k);
        ta += ldf(ri, k) * x;
        tb += ldf(ri1, k) * x;
      }
      stf(ri, j, (ldf(A + <usize>i * rowBytes, j) - ta) / ljj);
      stf(ri1, j, (ldf(A + <usize>(i + 1) * rowBytes, j) - tb) / ljj);
    }
    if (i < n) {
      const ri = L + <usize>i * rowBytes;
      stf(ri, j, (ldf(A + <usize>i * rowBytes, j) - rowDot(ri, rj, j)) / ljj);
    }
  }
  return -1;
}
