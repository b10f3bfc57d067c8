// Small dense kernels of the HMC chains' mass matrix (hmc.ts): a two-lane dot product, y += h x, the
// momentum's scaling by a diagonal mass, and the lower-triangular solves and products with the factor T.
// Their summation order is part of every chain's bits, so they are kept as they are rather than shared
// with linalg's Cholesky.

@inline
export function dot(a: usize, b: usize, len: i32): f64 {
  let acc = f64x2.splat(0);
  let k = 0;
  for (; k + 1 < len; k += 2) acc = f64x2.add(acc, f64x2.mul(v128.load(a + (<usize>k << 3)), v128.load(b + (<usize>k << 3))));
  let s = f64x2.extract_lane(acc, 0) + f64x2.extract_lane(acc, 1);
  if (k < len) s += load<f64>(a + (<usize>k << 3)) * load<f64>(b + (<usize>k << 3));
  return s;
}

/** y += h x (len entries). */
@inline
export function axpy(y: usize, h: f64, x: usize, len: i32): void {
  const hh = f64x2.splat(h);
  let k = 0;
  for (; k + 1 < len; k += 2) {
    const q = y + (<usize>k << 3);
    v128.store(q, f64x2.add(v128.load(q), f64x2.mul(hh, v128.load(x + (<usize>k << 3)))));
  }
  if (k < len) store<f64>(y + (<usize>k << 3), load<f64>(y + (<usize>k << 3)) + h * load<f64>(x + (<usize>k << 3)));
}

/**
 * p ← z / √invMass entrywise (z: the normals in p), two entries per f64x2 (division and square root are
 * exact-rounded in both forms); returns |z|² summed in index order.
 */
export function scaleMomentum(p: usize, invMass: usize, m: i32): f64 {
  let k = 0.0;
  let i = 0;
  for (; i + 1 < m; i += 2) {
    const o = <usize>i << 3;
    const z = v128.load(p + o);
    const z0 = f64x2.extract_lane(z, 0), z1 = f64x2.extract_lane(z, 1);
    k += z0 * z0;
    k += z1 * z1;
    v128.store(p + o, f64x2.div(z, f64x2.sqrt(v128.load(invMass + o))));
  }
  if (i < m) {
    const z = load<f64>(p + (<usize>i << 3));
    k += z * z;
    store<f64>(p + (<usize>i << 3), z / Math.sqrt(load<f64>(invMass + (<usize>i << 3))));
  }
  return k;
}

/** Solves T y = b in place (T lower triangular, row-major m × m; b overwritten by y). */
export function forwardSolve(T: usize, b: usize, m: i32): void {
  for (let i = 0; i < m; i++) {
    const row = T + ((<usize>i * <usize>m) << 3);
    const s = dot(row, b, i);
    store<f64>(b + (<usize>i << 3), (load<f64>(b + (<usize>i << 3)) - s) / load<f64>(row + (<usize>i << 3)));
  }
}

/** Solves Tᵀ y = b in place (T lower triangular): column-oriented back substitution over T's rows. */
export function transposeSolve(T: usize, b: usize, m: i32): void {
  for (let j = m - 1; j >= 0; j--) {
    const row = T + ((<usize>j * <usize>m) << 3);
    const yj = load<f64>(b + (<usize>j << 3)) / load<f64>(row + (<usize>j << 3));
    store<f64>(b + (<usize>j << 3), yj);
    axpy(b, -yj, row, j);
  }
}

/** y = T z (T lower triangular). */
export function lowerMul(T: usize, z: usize, y: usize, m: i32): void {
  for (let i = 0; i < m; i++) store<f64>(y + (<usize>i << 3), dot(T + ((<usize>i * <usize>m) << 3), z, i + 1));
}

/** y = Tᵀ z (T lower triangular). */
export function lowerMulT(T: usize, z: usize, y: usize, m: i32): void {
  memory.fill(y, 0, <usize>m << 3);
  for (let j = 0; j < m; j++) axpy(y, load<f64>(z + (<usize>j << 3)), T + ((<usize>j * <usize>m) << 3), j + 1);
}
