// The header of the factor M (M Mᵀ = W + D, n × m) that every storage shares; the storages' M x and
// Mᵀ v are in factor.ts (dense, sparse) and fft.ts (FFT). A file of its own so that fft.ts and
// factor.ts both read it without importing each other.

export const FACTOR_DENSE: i32 = 0; // row-major n × m (dense Cholesky, eigen V Λ^½, any dense M)
export const FACTOR_SPARSE: i32 = 1; // CSR rows of M, n rows (sparse Cholesky, permuted)
export const FACTOR_FFT: i32 = 2; // symmetric square root on a periodic lattice, applied by FFT

/** Dense `aux`: M is square and lower triangular (dense Cholesky); the products skip the zeros above the
 * diagonal. For finite arguments the results are the full products' bit for bit (a skipped term is ±0,
 * and a partial sum starting at +0 is never −0). */
export const DENSE_LOWER: i32 = 1;

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
