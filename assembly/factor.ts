// The factor M of the Gaussian integral trick (DESIGN.md §2): M Mᵀ = W + D, n × m (n = bits,
// m = dimension of x). Every continuous sampler needs only u = M x and g = Mᵀ v; each storage
// implements both behind this one header. The TypeScript side owns every array it points to.

import { fftApply } from './fft';

export const FACTOR_DENSE: i32 = 0; // row-major n × m (dense Cholesky, eigen V Λ^½, any dense M)
export const FACTOR_SPARSE: i32 = 1; // CSR rows of M, n rows (sparse Cholesky, permuted)
export const FACTOR_FFT: i32 = 2; // symmetric square root on a periodic lattice, applied by FFT

@unmanaged
export class Factor {
  kind: i32;
  n: i32;
  m: i32;
  /** Storage-specific integer parameter (e.g. lattice dimensionality for FFT). */
  aux: i32;
  /** Dense: values n × m. Sparse: CSR values. FFT: the spectrum. */
  data: usize;
  /** Sparse: CSR row pointers (n + 1). FFT: lattice shape (3 × i32). */
  index0: usize;
  /** Sparse: CSR columns. FFT: scratch (complex workspace). */
  index1: usize;
  /** Extra storage-specific pointer (e.g. FFT twiddles); 0 when unused. */
  extra: usize;
}

export function factorBytes(): usize {
  return offsetof<Factor>();
}

export function factorInit(hdr: usize, kind: i32, n: i32, m: i32, aux: i32, data: usize, index0: usize, index1: usize, extra: usize): void {
  const f = changetype<Factor>(hdr);
  f.kind = kind;
  f.n = n;
  f.m = m;
  f.aux = aux;
  f.data = data;
  f.index0 = index0;
  f.index1 = index1;
  f.extra = extra;
}

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

function denseApply(f: Factor, x: usize, u: usize): void {
  const n = f.n, m = f.m;
  for (let i = 0; i < n; i++) {
    const row = f.data + ((<usize>i * <usize>m) << 3);
    // Two partial sums in f64x2 lanes, then the odd tail.
    let acc = f64x2.splat(0);
    let k = 0;
    for (; k + 1 < m; k += 2) acc = f64x2.add(acc, f64x2.mul(v128.load(row + (<usize>k << 3)), v128.load(x + (<usize>k << 3))));
    let s = f64x2.extract_lane(acc, 0) + f64x2.extract_lane(acc, 1);
    if (k < m) s += load<f64>(row + (<usize>k << 3)) * load<f64>(x + (<usize>k << 3));
    store<f64>(u + (<usize>i << 3), s);
  }
}

function denseApplyT(f: Factor, v: usize, g: usize): void {
  const n = f.n, m = f.m;
  memory.fill(g, 0, <usize>m << 3);
  for (let i = 0; i < n; i++) {
    const row = f.data + ((<usize>i * <usize>m) << 3);
    const vi = load<f64>(v + (<usize>i << 3));
    if (vi == 0) continue;
    const vv = f64x2.splat(vi);
    let k = 0;
    for (; k + 1 < m; k += 2) {
      const q = g + (<usize>k << 3);
      v128.store(q, f64x2.add(v128.load(q), f64x2.mul(vv, v128.load(row + (<usize>k << 3)))));
    }
    if (k < m) store<f64>(g + (<usize>k << 3), load<f64>(g + (<usize>k << 3)) + vi * load<f64>(row + (<usize>k << 3)));
  }
}

function sparseApply(f: Factor, x: usize, u: usize): void {
  for (let i = 0; i < f.n; i++) {
    let s = 0.0;
    const end = load<i32>(f.index0 + (<usize>(i + 1) << 2));
    for (let k = load<i32>(f.index0 + (<usize>i << 2)); k < end; k++) {
      s += load<f64>(f.data + (<usize>k << 3)) * load<f64>(x + (<usize>load<i32>(f.index1 + (<usize>k << 2)) << 3));
    }
    store<f64>(u + (<usize>i << 3), s);
  }
}

function sparseApplyT(f: Factor, v: usize, g: usize): void {
  memory.fill(g, 0, <usize>f.m << 3);
  for (let i = 0; i < f.n; i++) {
    const vi = load<f64>(v + (<usize>i << 3));
    if (vi == 0) continue;
    const end = load<i32>(f.index0 + (<usize>(i + 1) << 2));
    for (let k = load<i32>(f.index0 + (<usize>i << 2)); k < end; k++) {
      const q = g + (<usize>load<i32>(f.index1 + (<usize>k << 2)) << 3);
      store<f64>(q, load<f64>(q) + vi * load<f64>(f.data + (<usize>k << 3)));
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
