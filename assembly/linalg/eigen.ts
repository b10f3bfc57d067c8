// Dense symmetric eigendecomposition: Householder tridiagonalisation and implicit QL (tred2/tql2,
// after EISPACK via JAMA). Values ascending; vectors row-major, column k = vector k.

import { ldf, stf, ldi, sti } from '../core/access';
import { at } from './access';

/**
 * Tridiagonalises V (row-major n × n, symmetric on entry) in place: d = diagonal, e[i] = subdiagonal
 * between i − 1 and i. With `accumulate` V ends as the orthogonal transformation.
 */
function tred2(V: usize, d: usize, e: usize, n: i32, accumulate: bool): void {
  for (let j = 0; j < n; j++) stf(d, j, load<f64>(at(V, n, n - 1, j)));
  for (let i = n - 1; i > 0; i--) {
    let scale = 0.0, h = 0.0;
    for (let k = 0; k < i; k++) scale += Math.abs(ldf(d, k));
    if (scale == 0) {
      stf(e, i, ldf(d, i - 1));
      for (let j = 0; j < i; j++) {
        stf(d, j, load<f64>(at(V, n, i - 1, j)));
        store<f64>(at(V, n, i, j), 0);
        store<f64>(at(V, n, j, i), 0);
      }
    } else {
      for (let k = 0; k < i; k++) {
        const dk = ldf(d, k) / scale;
        stf(d, k, dk);
        h += dk * dk;
      }
      let f = ldf(d, i - 1);
      let g = Math.sqrt(h);
      if (f > 0) g = -g;
      stf(e, i, scale * g);
      h -= f * g;
      stf(d, i - 1, f - g);
      for (let j = 0; j < i; j++) stf(e, j, 0);
      for (let j = 0; j < i; j++) {
        f = ldf(d, j);
        store<f64>(at(V, n, j, i), f);
        g = ldf(e, j) + load<f64>(at(V, n, j, j)) * f;
        for (let k = j + 1; k <= i - 1; k++) {
          const vkj = load<f64>(at(V, n, k, j));
          g += vkj * ldf(d, k);
          stf(e, k, ldf(e, k) + vkj * f);
        }
        stf(e, j, g);
      }
      f = 0;
      for (let j = 0; j < i; j++) {
        const ej = ldf(e, j) / h;
        stf(e, j, ej);
        f += ej * ldf(d, j);
      }
      const hh = f / (h + h);
      for (let j = 0; j < i; j++) stf(e, j, ldf(e, j) - hh * ldf(d, j));
      for (let j = 0; j < i; j++) {
        f = ldf(d, j);
        g = ldf(e, j);
        for (let k = j; k <= i - 1; k++) {
          const p = at(V, n, k, j);
          store<f64>(p, load<f64>(p) - (f * ldf(e, k) + g * ldf(d, k)));
        }
        stf(d, j, load<f64>(at(V, n, i - 1, j)));
        store<f64>(at(V, n, i, j), 0);
      }
    }
    stf(d, i, h);
  }
  if (accumulate) {
    for (let i = 0; i < n - 1; i++) {
      store<f64>(at(V, n, n - 1, i), load<f64>(at(V, n, i, i)));
      store<f64>(at(V, n, i, i), 1);
      const h = ldf(d, i + 1);
      if (h != 0) {
        for (let k = 0; k <= i; k++) stf(d, k, load<f64>(at(V, n, k, i + 1)) / h);
        for (let j = 0; j <= i; j++) {
          let g = 0.0;
          for (let k = 0; k <= i; k++) g += load<f64>(at(V, n, k, i + 1)) * load<f64>(at(V, n, k, j));
          for (let k = 0; k <= i; k++) {
            const p = at(V, n, k, j);
            store<f64>(p, load<f64>(p) - g * ldf(d, k));
          }
        }
      }
      for (let k = 0; k <= i; k++) store<f64>(at(V, n, k, i + 1), 0);
    }
    for (let j = 0; j < n; j++) {
      stf(d, j, load<f64>(at(V, n, n - 1, j)));
      store<f64>(at(V, n, n - 1, j), 0);
    }
    store<f64>(at(V, n, n - 1, n - 1), 1);
  } else {
    // Only the diagonal of the reduced matrix is needed: tred2 keeps it on V's diagonal.
    for (let j = 0; j < n; j++) stf(d, j, load<f64>(at(V, n, j, j)));
  }
  stf(e, 0, 0);
}

/**
 * Implicit QL on the tridiagonal (d diagonal, e[i] = subdiagonal between i−1 and i, e[0] unused).
 * vt ≠ 0: accumulate the vectors, stored transposed (row k of vt = vector k; each rotation runs over
 * two contiguous rows); else last ≠ 0: accumulate one component of every vector (Lanczos
 * residuals). Returns false if an eigenvalue needed more than 200 iterations.
 */
export function tql2(d: usize, e: usize, n: i32, vt: usize, last: usize): bool {
  for (let i = 1; i < n; i++) stf(e, i - 1, ldf(e, i));
  stf(e, n - 1, 0);
  let f = 0.0, tst1 = 0.0;
  const eps = 2.220446049250313e-16;
  for (let l = 0; l < n; l++) {
    tst1 = Math.max(tst1, Math.abs(ldf(d, l)) + Math.abs(ldf(e, l)));
    let m = l;
    while (m < n) {
      if (Math.abs(ldf(e, m)) <= eps * tst1) break;
      m++;
    }
    if (m > l) {
      let iter = 0;
      do {
        if (++iter > 200) return false;
        let g = ldf(d, l);
        const el = ldf(e, l);
        let p = (ldf(d, l + 1) - g) / (2 * el);
        let r = hypot(p, 1);
        if (p < 0) r = -r;
        stf(d, l, el / (p + r));
        stf(d, l + 1, el * (p + r));
        const dl1 = ldf(d, l + 1);
        let h = g - ldf(d, l);
        for (let i = l + 2; i < n; i++) stf(d, i, ldf(d, i) - h);
        f += h;
        p = ldf(d, m);
        let c = 1.0, c2 = c, c3 = c, s = 0.0, s2 = 0.0;
        const el1 = ldf(e, l + 1);
        for (let i = m - 1; i >= l; i--) {
          c3 = c2;
          c2 = c;
          s2 = s;
          const ei = ldf(e, i);
          g = c * ei;
          h = c * p;
          r = hypot(p, ei);
          stf(e, i + 1, s * r);
          s = ei / r;
          c = p / r;
          const di = ldf(d, i);
          p = c * di - s * g;
          stf(d, i + 1, h + s * (c * g + s * di));
          if (vt) {
            rotateRows(vt + ((<usize>i * <usize>n) << 3), vt + ((<usize>(i + 1) * <usize>n) << 3), n, c, s);
          } else if (last) {
            h = ldf(last, i + 1);
            const li = ldf(last, i);
            stf(last, i + 1, s * li + c * h);
            stf(last, i, c * li - s * h);
          }
        }
        p = (-s * s2 * c3 * el1 * ldf(e, l)) / dl1;
        stf(e, l, s * p);
        stf(d, l, c * p);
      } while (Math.abs(ldf(e, l)) > eps * tst1);
    }
    stf(d, l, ldf(d, l) + f);
    stf(e, l, 0);
  }
  return true;
}

/** (a, b) ← (c a − s b, s a + c b) over two contiguous rows of length n. */
@inline
function rotateRows(a: usize, b: usize, n: i32, c: f64, s: f64): void {
  const cc = f64x2.splat(c), ss = f64x2.splat(s);
  let k = 0;
  for (; k + 1 < n; k += 2) {
    const o = <usize>k << 3;
    const ak = v128.load(a + o), bk = v128.load(b + o);
    v128.store(b + o, f64x2.add(f64x2.mul(ss, ak), f64x2.mul(cc, bk)));
    v128.store(a + o, f64x2.sub(f64x2.mul(cc, ak), f64x2.mul(ss, bk)));
  }
  if (k < n) {
    const ak = ldf(a, k), bk = ldf(b, k);
    stf(b, k, s * ak + c * bk);
    stf(a, k, c * ak - s * bk);
  }
}

/** √(x² + y²) without overflow or underflow (Math.hypot's result for two finite arguments). */
@inline
function hypot(x: f64, y: f64): f64 {
  x = Math.abs(x);
  y = Math.abs(y);
  const big = Math.max(x, y), small = Math.min(x, y);
  if (big == 0 || big == Infinity) return big;
  const r = small / big;
  return big * Math.sqrt(1 + r * r);
}

/**
 * Eigenvalues (ascending, into `values`) and, if wantVectors, eigenvectors of the symmetric A
 * (row-major n × n), which is overwritten: on return it holds the vectors, column k = vector k.
 * Workspace: d, e (f64 × n), idx (i32 × n), and vt (f64 × n × n) when wantVectors. Returns 0, or
 * −1 if the QL iteration did not converge.
 */
export function symEigen(A: usize, n: i32, wantVectors: i32, values: usize, d: usize, e: usize, idx: usize, vt: usize): i32 {
  tred2(A, d, e, n, wantVectors != 0);
  if (wantVectors) {
    for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) store<f64>(at(vt, n, c, r), load<f64>(at(A, n, r, c)));
  }
  if (!tql2(d, e, n, wantVectors ? vt : 0, 0)) return -1;
  // Stable insertion sort of the indices by value (n² compares at most, against n³ above).
  for (let i = 0; i < n; i++) {
    const di = ldf(d, i);
    let j = i - 1;
    while (j >= 0 && ldf(d, ldi(idx, j)) > di) {
      sti(idx, j + 1, ldi(idx, j));
      j--;
    }
    sti(idx, j + 1, i);
  }
  for (let c = 0; c < n; c++) stf(values, c, ldf(d, ldi(idx, c)));
  if (wantVectors) {
    for (let c = 0; c < n; c++) {
      const src = vt + ((<usize>ldi(idx, c) * <usize>n) << 3);
      for (let r = 0; r < n; r++) store<f64>(at(A, n, r, c), ldf(src, r));
    }
  }
  return 0;
}
