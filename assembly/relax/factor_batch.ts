// The factor products for a batch of B chains: U = M X and G = Mᵀ V with X (m × B) and V (n × B) stored
// chains innermost (X[k·B + b]), so an f64x2 lane pair holds two chains' entries of one coordinate and a
// factor entry is loaded once for all chains. Each column gets exactly the IEEE operations, in the same
// order, that factor.ts's single matrix–vector product performs (the dense M x keeps its two partial sums,
// even and odd k; Mᵀ v adds the rows' terms in row order), so column b is bit for bit the single product of
// column b: a chain gives the same numbers whichever batch it runs in. Mᵀ v's skipping of zero entries of v
// changes no value (M is finite and a partial sum starting at +0 is never −0), so a batch skips a row only
// when it is zero in every chain.
//
// Dense and CSR storages (dense Cholesky / eigen, sparse Cholesky, incidence). The FFT factor has no batched
// product: the batched samplers run its chains one product at a time (factorBatchable).

import { FACTOR_DENSE, FACTOR_SPARSE, Factor } from './factor_header';

/** Whether the storage has batched products (dense and CSR). */
@inline
export function factorBatchable(f: Factor): bool {
  return f.kind == FACTOR_DENSE || f.kind == FACTOR_SPARSE;
}

/** U = M X (U: n × B, X: m × B, chains innermost). */
export function factorApplyBatch(f: Factor, x: usize, u: usize, B: i32): void {
  if (f.kind == FACTOR_DENSE) denseApplyBatch(f, x, u, B);
  else if (f.kind == FACTOR_SPARSE) sparseApplyBatch(f, x, u, B);
  else abort('factorApplyBatch: no batched product for this factor storage');
}

/** G = Mᵀ V (G: m × B, V: n × B, chains innermost). */
export function factorApplyTBatch(f: Factor, v: usize, g: usize, B: i32): void {
  if (f.kind == FACTOR_DENSE) denseApplyTBatch(f, v, g, B);
  else if (f.kind == FACTOR_SPARSE) sparseApplyTBatch(f, v, g, B);
  else abort('factorApplyTBatch: no batched product for this factor storage');
}

/** Whether row i of V (B entries) is zero in every chain. */
@inline
function rowIsZero(v: usize, B: i32): bool {
  for (let b = 0; b < B; b++) if (load<f64>(v + (<usize>b << 3)) != 0) return false;
  return true;
}

// Dense. The single product's lane 0 sums the even k, lane 1 the odd k, then adds the two and the odd
// tail; here `ev` and `od` hold those two sums for two chains, four chains per pass over a row.
function denseApplyBatch(f: Factor, x: usize, u: usize, B: i32): void {
  const n = f.n, m = f.m;
  const stride = <usize>B << 3;
  for (let i = 0; i < n; i++) {
    const row = f.data + ((<usize>i * <usize>m) << 3);
    const out = u + <usize>i * stride;
    let b = 0;
    for (; b + 3 < B; b += 4) {
      let ev0 = f64x2.splat(0), od0 = f64x2.splat(0), ev1 = f64x2.splat(0), od1 = f64x2.splat(0);
      let px = x + (<usize>b << 3);
      let k = 0;
      for (; k + 1 < m; k += 2) {
        const pr = row + (<usize>k << 3);
        const w0 = f64x2.splat(load<f64>(pr)), w1 = f64x2.splat(load<f64>(pr, 8));
        ev0 = f64x2.add(ev0, f64x2.mul(w0, v128.load(px)));
        ev1 = f64x2.add(ev1, f64x2.mul(w0, v128.load(px, 16)));
        od0 = f64x2.add(od0, f64x2.mul(w1, v128.load(px + stride)));
        od1 = f64x2.add(od1, f64x2.mul(w1, v128.load(px + stride, 16)));
        px += stride << 1;
      }
      let s0 = f64x2.add(ev0, od0), s1 = f64x2.add(ev1, od1);
      if (k < m) {
        const w = f64x2.splat(load<f64>(row + (<usize>k << 3)));
        s0 = f64x2.add(s0, f64x2.mul(w, v128.load(px)));
        s1 = f64x2.add(s1, f64x2.mul(w, v128.load(px, 16)));
      }
      v128.store(out + (<usize>b << 3), s0);
      v128.store(out + (<usize>b << 3), s1, 16);
    }
    for (; b + 1 < B; b += 2) {
      let ev = f64x2.splat(0), od = f64x2.splat(0);
      let px = x + (<usize>b << 3);
      let k = 0;
      for (; k + 1 < m; k += 2) {
        const pr = row + (<usize>k << 3);
        ev = f64x2.add(ev, f64x2.mul(f64x2.splat(load<f64>(pr)), v128.load(px)));
        od = f64x2.add(od, f64x2.mul(f64x2.splat(load<f64>(pr, 8)), v128.load(px + stride)));
        px += stride << 1;
      }
      let s = f64x2.add(ev, od);
      if (k < m) s = f64x2.add(s, f64x2.mul(f64x2.splat(load<f64>(row + (<usize>k << 3))), v128.load(px)));
      v128.store(out + (<usize>b << 3), s);
    }
    if (b < B) {
      let ev = 0.0, od = 0.0;
      let px = x + (<usize>b << 3);
      let k = 0;
      for (; k + 1 < m; k += 2) {
        const pr = row + (<usize>k << 3);
        ev += load<f64>(pr) * load<f64>(px);
        od += load<f64>(pr, 8) * load<f64>(px + stride);
        px += stride << 1;
      }
      let s = ev + od;
      if (k < m) s += load<f64>(row + (<usize>k << 3)) * load<f64>(px);
      store<f64>(out + (<usize>b << 3), s);
    }
  }
}

/**
 * G = Mᵀ V, four rows per pass (as the single product): G is loaded and stored once per four rows, and
 * each entry still receives the rows' terms in row order. A group of rows zero in every chain is skipped.
 */
function denseApplyTBatch(f: Factor, v: usize, g: usize, B: i32): void {
  const n = f.n, m = f.m;
  const stride = <usize>B << 3;
  const rowBytes = <usize>m << 3;
  memory.fill(g, 0, <usize>m * stride);
  let i = 0;
  for (; i + 3 < n; i += 4) {
    const v0 = v + <usize>i * stride;
    if (rowIsZero(v0, B << 2)) continue; // the four rows are consecutive in V
    const v1 = v0 + stride, v2 = v1 + stride, v3 = v2 + stride;
    const r0 = f.data + <usize>i * rowBytes, r1 = r0 + rowBytes, r2 = r1 + rowBytes, r3 = r2 + rowBytes;
    let b = 0;
    for (; b + 1 < B; b += 2) {
      const o = <usize>b << 3;
      const s0 = v128.load(v0 + o), s1 = v128.load(v1 + o), s2 = v128.load(v2 + o), s3 = v128.load(v3 + o);
      let q = g + o;
      for (let k = 0; k < m; k++) {
        const c = <usize>k << 3;
        let a = v128.load(q);
        a = f64x2.add(a, f64x2.mul(s0, f64x2.splat(load<f64>(r0 + c))));
        a = f64x2.add(a, f64x2.mul(s1, f64x2.splat(load<f64>(r1 + c))));
        a = f64x2.add(a, f64x2.mul(s2, f64x2.splat(load<f64>(r2 + c))));
        a = f64x2.add(a, f64x2.mul(s3, f64x2.splat(load<f64>(r3 + c))));
        v128.store(q, a);
        q += stride;
      }
    }
    if (b < B) {
      const o = <usize>b << 3;
      const s0 = load<f64>(v0 + o), s1 = load<f64>(v1 + o), s2 = load<f64>(v2 + o), s3 = load<f64>(v3 + o);
      let q = g + o;
      for (let k = 0; k < m; k++) {
        const c = <usize>k << 3;
        store<f64>(q, load<f64>(q) + s0 * load<f64>(r0 + c) + s1 * load<f64>(r1 + c) + s2 * load<f64>(r2 + c) + s3 * load<f64>(r3 + c));
        q += stride;
      }
    }
  }
  for (; i < n; i++) {
    const vi = v + <usize>i * stride;
    if (rowIsZero(vi, B)) continue;
    const row = f.data + <usize>i * rowBytes;
    let b = 0;
    for (; b + 1 < B; b += 2) {
      const vv = v128.load(vi + (<usize>b << 3));
      let q = g + (<usize>b << 3);
      for (let k = 0; k < m; k++) {
        v128.store(q, f64x2.add(v128.load(q), f64x2.mul(vv, f64x2.splat(load<f64>(row + (<usize>k << 3))))));
        q += stride;
      }
    }
    if (b < B) {
      const s = load<f64>(vi + (<usize>b << 3));
      let q = g + (<usize>b << 3);
      for (let k = 0; k < m; k++) {
        store<f64>(q, load<f64>(q) + s * load<f64>(row + (<usize>k << 3)));
        q += stride;
      }
    }
  }
}

// CSR rows. Chains in groups of four (two vectors), then a pair, then a single chain: one pass over a
// row's entries serves the whole group.
function sparseApplyBatch(f: Factor, x: usize, u: usize, B: i32): void {
  const n = f.n;
  const rp = f.index0, cols = f.index1, vals = f.data;
  const stride = <usize>B << 3;
  for (let i = 0; i < n; i++) {
    const start = <usize>load<i32>(rp + (<usize>i << 2)), end = <usize>load<i32>(rp + (<usize>(i + 1) << 2));
    const out = u + <usize>i * stride;
    let b = 0;
    for (; b + 3 < B; b += 4) {
      let a0 = f64x2.splat(0), a1 = f64x2.splat(0);
      const xb = x + (<usize>b << 3);
      for (let e = start; e < end; e++) {
        const w = f64x2.splat(load<f64>(vals + (e << 3)));
        const px = xb + <usize>load<i32>(cols + (e << 2)) * stride;
        a0 = f64x2.add(a0, f64x2.mul(w, v128.load(px)));
        a1 = f64x2.add(a1, f64x2.mul(w, v128.load(px, 16)));
      }
      v128.store(out + (<usize>b << 3), a0);
      v128.store(out + (<usize>b << 3), a1, 16);
    }
    for (; b + 1 < B; b += 2) {
      let a0 = f64x2.splat(0);
      const xb = x + (<usize>b << 3);
      for (let e = start; e < end; e++) {
        a0 = f64x2.add(a0, f64x2.mul(f64x2.splat(load<f64>(vals + (e << 3))), v128.load(xb + <usize>load<i32>(cols + (e << 2)) * stride)));
      }
      v128.store(out + (<usize>b << 3), a0);
    }
    if (b < B) {
      let s = 0.0;
      const xb = x + (<usize>b << 3);
      for (let e = start; e < end; e++) s += load<f64>(vals + (e << 3)) * load<f64>(xb + <usize>load<i32>(cols + (e << 2)) * stride);
      store<f64>(out + (<usize>b << 3), s);
    }
  }
}

function sparseApplyTBatch(f: Factor, v: usize, g: usize, B: i32): void {
  const n = f.n;
  const rp = f.index0, cols = f.index1, vals = f.data;
  const stride = <usize>B << 3;
  memory.fill(g, 0, <usize>f.m * stride);
  for (let i = 0; i < n; i++) {
    const vi = v + <usize>i * stride;
    if (rowIsZero(vi, B)) continue;
    const start = <usize>load<i32>(rp + (<usize>i << 2)), end = <usize>load<i32>(rp + (<usize>(i + 1) << 2));
    let b = 0;
    for (; b + 3 < B; b += 4) {
      const v0 = v128.load(vi + (<usize>b << 3)), v1 = v128.load(vi + (<usize>b << 3), 16);
      const gb = g + (<usize>b << 3);
      for (let e = start; e < end; e++) {
        const w = f64x2.splat(load<f64>(vals + (e << 3)));
        const q = gb + <usize>load<i32>(cols + (e << 2)) * stride;
        v128.store(q, f64x2.add(v128.load(q), f64x2.mul(v0, w)));
        v128.store(q, f64x2.add(v128.load(q, 16), f64x2.mul(v1, w)), 16);
      }
    }
    for (; b + 1 < B; b += 2) {
      const v0 = v128.load(vi + (<usize>b << 3));
      const gb = g + (<usize>b << 3);
      for (let e = start; e < end; e++) {
        const q = gb + <usize>load<i32>(cols + (e << 2)) * stride;
        v128.store(q, f64x2.add(v128.load(q), f64x2.mul(v0, f64x2.splat(load<f64>(vals + (e << 3))))));
      }
    }
    if (b < B) {
      const s = load<f64>(vi + (<usize>b << 3));
      const gb = g + (<usize>b << 3);
      for (let e = start; e < end; e++) {
        const q = gb + <usize>load<i32>(cols + (e << 2)) * stride;
        store<f64>(q, load<f64>(q) + s * load<f64>(vals + (e << 3)));
      }
    }
  }
}

// Pointer-level exports.
export function factorMulBatch(hdr: usize, x: usize, u: usize, B: i32): void {
  factorApplyBatch(changetype<Factor>(hdr), x, u, B);
}

export function factorMulTBatch(hdr: usize, v: usize, g: usize, B: i32): void {
  factorApplyTBatch(changetype<Factor>(hdr), v, g, B);
}
