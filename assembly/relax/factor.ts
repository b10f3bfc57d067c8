// The factor M of the Gaussian integral trick (DESIGN.md §2): M Mᵀ = W + D, n × m (n = bits,
// m = dimension of x). Every continuous sampler needs only u = M x and g = Mᵀ v; each storage
// implements both behind this one header. The TypeScript side owns every array it points to.

import { FACTOR_DENSE, FACTOR_SPARSE, FACTOR_FFT, DENSE_LOWER, Factor } from './factor_header';
import { fftApply } from './fft';

export { FACTOR_DENSE, FACTOR_SPARSE, FACTOR_FFT, DENSE_LOWER, Factor, factorBytes, factorInit } from './factor_header';

/** u = M x (u: f64 × n, x: f64 × m). */
export function factorApply(f: Factor, x: usize, u: usize): void {
  if (f.kind == FACTOR_DENSE) denseApply(f, x, u);
  else if (f.kind == FACTOR_SPARSE) sparseApply(f, x, u);
  else if (f.kind == FACTOR_FFT) fftApply(f, x, u);
  else abort('factorApply: unknown factor storage');
}

/** g = Mᵀ v (g: f64 × m, v: f64 × n). */
export function factorApplyT(f: Factor, v: usize, g: usize): void {
  if (f.kind == FACTOR_DENSE) denseApplyT(f, v, g);
  else if (f.kind == FACTOR_SPARSE) sparseApplyT(f, v, g);
  else if (f.kind == FACTOR_FFT) fftApply(f, v, g); // M is symmetric
  else abort('factorApplyT: unknown factor storage');
}

/**
 * Entries of row i a dense product reads: m, or for a lower triangular M up to the diagonal rounded up to
 * an even count (the pairs of the sum keep their lanes, so each partial sum only misses zero terms).
 */
@inline
export function denseRowLength(f: Factor, i: i32): i32 {
  return f.aux == DENSE_LOWER ? min(f.m, (i + 2) & ~1) : f.m;
}

/** Columns a dense Mᵀ v reads from rows i … i + rows − 1: m, or for a lower triangular M up to i + rows. */
@inline
export function denseColumnLimit(f: Factor, i: i32, rows: i32): i32 {
  return f.aux == DENSE_LOWER ? min(f.m, i + rows) : f.m;
}

function denseApply(f: Factor, x: usize, u: usize): void {
  const n = f.n, m = f.m;
  for (let i = 0; i < n; i++) {
    const row = f.data + ((<usize>i * <usize>m) << 3);
    const len = denseRowLength(f, i);
    // Two partial sums in f64x2 lanes, then the odd tail.
    let acc = f64x2.splat(0);
    let k = 0;
    for (; k + 1 < len; k += 2) acc = f64x2.add(acc, f64x2.mul(v128.load(row + (<usize>k << 3)), v128.load(x + (<usize>k << 3))));
    let s = f64x2.extract_lane(acc, 0) + f64x2.extract_lane(acc, 1);
    if (k < len) s += load<f64>(row + (<usize>k << 3)) * load<f64>(x + (<usize>k << 3));
    store<f64>(u + (<usize>i << 3), s);
  }
}

/**
 * g = Mᵀ v, four rows per pass: g is loaded and stored once per four rows instead of once per row.
 * Each g_k still receives the rows' terms in row order (the same sums as one row at a time). A group
 * whose four v_i are all 0 is skipped. The inner loop walks pointers and handles four columns (two
 * vectors per row, the second at a constant offset) per iteration: fewer address computations, which
 * is what limits this loop in V8's code.
 */
function denseApplyT(f: Factor, v: usize, g: usize): void {
  const n = f.n, m = f.m;
  const data = f.data;
  const rowBytes = <usize>m << 3;
  memory.fill(g, 0, rowBytes);
  const m4 = m & ~3;
  const gEnd = g + (<usize>m4 << 3);
  let i = 0;
  for (; i + 3 < n; i += 4) {
    const vp = v + (<usize>i << 3);
    const v0 = load<f64>(vp), v1 = load<f64>(vp, 8), v2 = load<f64>(vp, 16), v3 = load<f64>(vp, 24);
    if (v0 == 0 && v1 == 0 && v2 == 0 && v3 == 0) continue;
    let r0 = data + <usize>i * rowBytes, r1 = r0 + rowBytes, r2 = r1 + rowBytes, r3 = r2 + rowBytes;
    const s0 = f64x2.splat(v0), s1 = f64x2.splat(v1), s2 = f64x2.splat(v2), s3 = f64x2.splat(v3);
    const lim = denseColumnLimit(f, i, 4);
    const qEnd = g + (<usize>min(m4, (lim + 3) & ~3) << 3);
    let q = g;
    while (q < qEnd) {
      let a = v128.load(q), b = v128.load(q, 16);
      a = f64x2.add(a, f64x2.mul(s0, v128.load(r0)));
      b = f64x2.add(b, f64x2.mul(s0, v128.load(r0, 16)));
      a = f64x2.add(a, f64x2.mul(s1, v128.load(r1)));
      b = f64x2.add(b, f64x2.mul(s1, v128.load(r1, 16)));
      a = f64x2.add(a, f64x2.mul(s2, v128.load(r2)));
      b = f64x2.add(b, f64x2.mul(s2, v128.load(r2, 16)));
      a = f64x2.add(a, f64x2.mul(s3, v128.load(r3)));
      b = f64x2.add(b, f64x2.mul(s3, v128.load(r3, 16)));
      v128.store(q, a);
      v128.store(q, b, 16);
      q += 32;
      r0 += 32;
      r1 += 32;
      r2 += 32;
      r3 += 32;
    }
    for (let k = m4; k < lim; k++) {
      const o = <usize>(k - m4) << 3;
      const gk = gEnd + o;
      store<f64>(gk, load<f64>(gk) + v0 * load<f64>(r0 + o) + v1 * load<f64>(r1 + o) + v2 * load<f64>(r2 + o) + v3 * load<f64>(r3 + o));
    }
  }
  for (; i < n; i++) {
    const vi = load<f64>(v + (<usize>i << 3));
    if (vi == 0) continue;
    const row = data + <usize>i * rowBytes;
    const vv = f64x2.splat(vi);
    const lim = denseColumnLimit(f, i, 1);
    const m2 = lim & ~1;
    for (let k = 0; k < m2; k += 2) {
      const o = <usize>k << 3;
      v128.store(g + o, f64x2.add(v128.load(g + o), f64x2.mul(vv, v128.load(row + o))));
    }
    if (m2 < lim) {
      const o = <usize>m2 << 3;
      store<f64>(g + o, load<f64>(g + o) + vi * load<f64>(row + o));
    }
  }
}

// The sparse loops read the header into locals first (through the header pointer every field would be
// reloaded after each store: the compiler cannot rule out that a store hits the header) and walk the
// column and value arrays with pointers (one address update per entry instead of two).

function sparseApply(f: Factor, x: usize, u: usize): void {
  const n = f.n;
  const rp = f.index0;
  let pc = f.index1 + (<usize>load<i32>(rp) << 2);
  let pv = f.data + (<usize>load<i32>(rp) << 3);
  for (let i = 0; i < n; i++) {
    const end = f.index1 + (<usize>load<i32>(rp + (<usize>(i + 1) << 2)) << 2);
    let s = 0.0;
    while (pc < end) {
      s += load<f64>(pv) * load<f64>(x + (<usize>load<i32>(pc) << 3));
      pc += 4;
      pv += 8;
    }
    store<f64>(u + (<usize>i << 3), s);
  }
}

function sparseApplyT(f: Factor, v: usize, g: usize): void {
  const n = f.n;
  const rp = f.index0;
  memory.fill(g, 0, <usize>f.m << 3);
  let pc = f.index1 + (<usize>load<i32>(rp) << 2);
  let pv = f.data + (<usize>load<i32>(rp) << 3);
  for (let i = 0; i < n; i++) {
    const pe = f.index1 + (<usize>load<i32>(rp + (<usize>(i + 1) << 2)) << 2);
    const vi = load<f64>(v + (<usize>i << 3));
    if (vi != 0) {
      while (pc < pe) {
        const q = g + (<usize>load<i32>(pc) << 3);
        store<f64>(q, load<f64>(q) + vi * load<f64>(pv));
        pc += 4;
        pv += 8;
      }
    } else {
      pv += (pe - pc) << 1;
      pc = pe;
    }
  }
}

// Pointer-level exports.
export function factorMul(hdr: usize, x: usize, u: usize): void {
  factorApply(changetype<Factor>(hdr), x, u);
}

export function factorMulT(hdr: usize, v: usize, g: usize): void {
  factorApplyT(changetype<Factor>(hdr), v, g);
}
