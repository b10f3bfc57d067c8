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
import { denseRowLength, denseColumnLimit } from './factor';

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
// tail; here `ev` and `od` hold those two sums for two chains. Groups of four chains run two rows per pass
// (eight independent sums): each X vector loaded serves both rows and each factor entry four chains.
function denseApplyBatch(f: Factor, x: usize, u: usize, B: i32): void {
  const n = f.n, m = f.m;
  const stride = <usize>B << 3;
  const rowBytes = <usize>m << 3;
  let i = 0;
  for (; i + 1 < n; i += 2) {
    const row = f.data + <usize>i * rowBytes;
    const out = u + <usize>i * stride;
    // Both rows read as many entries as the second (the first's extra ones are zeros, in their lanes).
    const len = denseRowLength(f, i + 1);
    let b = 0;
    for (; b + 3 < B; b += 4) denseRowsFour(row, row + rowBytes, x + (<usize>b << 3), out + (<usize>b << 3), out + stride + (<usize>b << 3), len, stride);
    denseRowTail(row, x, out, len, stride, b, B);
    denseRowTail(row + rowBytes, x, out + stride, len, stride, b, B);
  }
  if (i < n) {
    const row = f.data + <usize>i * rowBytes;
    const out = u + <usize>i * stride;
    const len = denseRowLength(f, i);
    let b = 0;
    for (; b + 3 < B; b += 4) denseRowsFour(row, 0, x + (<usize>b << 3), out + (<usize>b << 3), 0, len, stride);
    denseRowTail(row, x, out, len, stride, b, B);
  }
}

/** Rows ra and (when rb ≠ 0) rb times four chains' columns of X (px: chain b's entry of coordinate 0). */
@inline
function denseRowsFour(ra: usize, rb: usize, px: usize, outA: usize, outB: usize, m: i32, stride: usize): void {
  const z = f64x2.splat(0);
  let eA0 = z, oA0 = z, eA1 = z, oA1 = z, eB0 = z, oB0 = z, eB1 = z, oB1 = z;
  const two = rb != 0;
  const rbb = two ? rb : ra; // one row: the second sums repeat the first's (discarded)
  let k = 0;
  for (; k + 1 < m; k += 2) {
    const c = <usize>k << 3;
    const x0 = v128.load(px), x1 = v128.load(px, 16), y0 = v128.load(px + stride), y1 = v128.load(px + stride, 16);
    const a0 = v128.load64_splat(ra + c), a1 = v128.load64_splat(ra + c, 8);
    const b0 = v128.load64_splat(rbb + c), b1 = v128.load64_splat(rbb + c, 8);
    eA0 = f64x2.add(eA0, f64x2.mul(a0, x0));
    eA1 = f64x2.add(eA1, f64x2.mul(a0, x1));
    oA0 = f64x2.add(oA0, f64x2.mul(a1, y0));
    oA1 = f64x2.add(oA1, f64x2.mul(a1, y1));
    eB0 = f64x2.add(eB0, f64x2.mul(b0, x0));
    eB1 = f64x2.add(eB1, f64x2.mul(b0, x1));
    oB0 = f64x2.add(oB0, f64x2.mul(b1, y0));
    oB1 = f64x2.add(oB1, f64x2.mul(b1, y1));
    px += stride << 1;
  }
  let sA0 = f64x2.add(eA0, oA0), sA1 = f64x2.add(eA1, oA1), sB0 = f64x2.add(eB0, oB0), sB1 = f64x2.add(eB1, oB1);
  if (k < m) {
    const c = <usize>k << 3;
    const x0 = v128.load(px), x1 = v128.load(px, 16);
    const a = v128.load64_splat(ra + c), w = v128.load64_splat(rbb + c);
    sA0 = f64x2.add(sA0, f64x2.mul(a, x0));
    sA1 = f64x2.add(sA1, f64x2.mul(a, x1));
    sB0 = f64x2.add(sB0, f64x2.mul(w, x0));
    sB1 = f64x2.add(sB1, f64x2.mul(w, x1));
  }
  v128.store(outA, sA0);
  v128.store(outA, sA1, 16);
  if (two) {
    v128.store(outB, sB0);
    v128.store(outB, sB1, 16);
  }
}

/** One row times chains b … B − 1 (fewer than four): a pair, then a single chain. */
@inline
function denseRowTail(row: usize, x: usize, out: usize, m: i32, stride: usize, b: i32, B: i32): void {
  for (; b + 1 < B; b += 2) {
    let ev = f64x2.splat(0), od = f64x2.splat(0);
    let px = x + (<usize>b << 3);
    let k = 0;
    for (; k + 1 < m; k += 2) {
      const pr = row + (<usize>k << 3);
      ev = f64x2.add(ev, f64x2.mul(v128.load64_splat(pr), v128.load(px)));
      od = f64x2.add(od, f64x2.mul(v128.load64_splat(pr, 8), v128.load(px + stride)));
      px += stride << 1;
    }
    let s = f64x2.add(ev, od);
    if (k < m) s = f64x2.add(s, f64x2.mul(v128.load64_splat(row + (<usize>k << 3)), v128.load(px)));
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

/**
 * G = Mᵀ V, four rows per pass (as the single product): each entry still receives the rows' terms in row
 * order. Per column k the four rows' entries are loaded once and serve every chain (two pairs of chains
 * per step, then a pair, then a single chain). A group of rows zero in every chain is skipped.
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
    const lim = denseColumnLimit(f, i, 4);
    let b = 0;
    for (; b + 3 < B; b += 4) {
      const o = <usize>b << 3;
      const s0 = v128.load(v0 + o), s1 = v128.load(v1 + o), s2 = v128.load(v2 + o), s3 = v128.load(v3 + o);
      const t0 = v128.load(v0 + o, 16), t1 = v128.load(v1 + o, 16), t2 = v128.load(v2 + o, 16), t3 = v128.load(v3 + o, 16);
      let q = g + o;
      for (let k = 0; k < lim; k++) {
        const c = <usize>k << 3;
        const w0 = v128.load64_splat(r0 + c), w1 = v128.load64_splat(r1 + c), w2 = v128.load64_splat(r2 + c), w3 = v128.load64_splat(r3 + c);
        let a = v128.load(q), e = v128.load(q, 16);
        a = f64x2.add(a, f64x2.mul(s0, w0));
        e = f64x2.add(e, f64x2.mul(t0, w0));
        a = f64x2.add(a, f64x2.mul(s1, w1));
        e = f64x2.add(e, f64x2.mul(t1, w1));
        a = f64x2.add(a, f64x2.mul(s2, w2));
        e = f64x2.add(e, f64x2.mul(t2, w2));
        a = f64x2.add(a, f64x2.mul(s3, w3));
        e = f64x2.add(e, f64x2.mul(t3, w3));
        v128.store(q, a);
        v128.store(q, e, 16);
        q += stride;
      }
    }
    for (; b + 1 < B; b += 2) {
      const o = <usize>b << 3;
      const s0 = v128.load(v0 + o), s1 = v128.load(v1 + o), s2 = v128.load(v2 + o), s3 = v128.load(v3 + o);
      let q = g + o;
      for (let k = 0; k < lim; k++) {
        const c = <usize>k << 3;
        let a = v128.load(q);
        a = f64x2.add(a, f64x2.mul(s0, v128.load64_splat(r0 + c)));
        a = f64x2.add(a, f64x2.mul(s1, v128.load64_splat(r1 + c)));
        a = f64x2.add(a, f64x2.mul(s2, v128.load64_splat(r2 + c)));
        a = f64x2.add(a, f64x2.mul(s3, v128.load64_splat(r3 + c)));
        v128.store(q, a);
        q += stride;
      }
    }
    if (b < B) {
      const o = <usize>b << 3;
      const s0 = load<f64>(v0 + o), s1 = load<f64>(v1 + o), s2 = load<f64>(v2 + o), s3 = load<f64>(v3 + o);
      let q = g + o;
      for (let k = 0; k < lim; k++) {
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
    const lim = denseColumnLimit(f, i, 1);
    let b = 0;
    for (; b + 1 < B; b += 2) {
      const vv = v128.load(vi + (<usize>b << 3));
      let q = g + (<usize>b << 3);
      for (let k = 0; k < lim; k++) {
        v128.store(q, f64x2.add(v128.load(q), f64x2.mul(vv, v128.load64_splat(row + (<usize>k << 3)))));
        q += stride;
      }
    }
    if (b < B) {
      const s = load<f64>(vi + (<usize>b << 3));
      let q = g + (<usize>b << 3);
      for (let k = 0; k < lim; k++) {
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
        const w = v128.load64_splat(vals + (e << 3));
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
        a0 = f64x2.add(a0, f64x2.mul(v128.load64_splat(vals + (e << 3)), v128.load(xb + <usize>load<i32>(cols + (e << 2)) * stride)));
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
        const w = v128.load64_splat(vals + (e << 3));
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
        v128.store(q, f64x2.add(v128.load(q), f64x2.mul(v0, v128.load64_splat(vals + (e << 3)))));
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
