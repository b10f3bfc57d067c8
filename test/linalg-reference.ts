// The TypeScript linear algebra the relaxation used before it moved to the engine
// (assembly/linalg/): the reference the WASM routines are tested against (test/linalg.test.ts).
// Test code only.

import type { CanonicalForm } from '../bindings/core/canonical.ts';

// ---------------------------------------------------------------------------------------------
// Dense symmetric eigendecomposition: Householder tridiagonalisation and implicit QL
// (tred2/tql2, after EISPACK via JAMA). Values ascending; vectors row-major, column k = vector k.

export function symmetricEigen(A: Float64Array, n: number, wantVectors: boolean): { values: Float64Array; vectors: Float64Array | null } {
  const V: Float64Array[] = [];
  for (let i = 0; i < n; i++) V.push(A.slice(i * n, (i + 1) * n));
  const d = new Float64Array(n), e = new Float64Array(n);
  tred2(V, d, e, n, wantVectors);
  // tql2 rotates pairs of columns of V: work on Vᵀ so each rotation runs over two contiguous rows.
  let Vt: Float64Array[] | null = null;
  if (wantVectors) {
    Vt = [];
    for (let c = 0; c < n; c++) Vt.push(Float64Array.from({ length: n }, (_, r) => V[r][c]));
  }
  tql2(d, e, n, Vt, null);
  // Sort ascending (with vectors).
  const idx = Array.from({ length: n }, (_, i) => i).sort((p, q) => d[p] - d[q]);
  const values = Float64Array.from(idx, (i) => d[i]);
  let vectors: Float64Array | null = null;
  if (Vt) {
    vectors = new Float64Array(n * n);
    for (let c = 0; c < n; c++) {
      const src = Vt[idx[c]];
      for (let r = 0; r < n; r++) vectors[r * n + c] = src[r];
    }
  }
  return { values, vectors };
}

function tred2(V: Float64Array[], d: Float64Array, e: Float64Array, n: number, accumulate: boolean): void {
  for (let j = 0; j < n; j++) d[j] = V[n - 1][j];
  for (let i = n - 1; i > 0; i--) {
    let scale = 0, h = 0;
    for (let k = 0; k < i; k++) scale += Math.abs(d[k]);
    if (scale === 0) {
      e[i] = d[i - 1];
      for (let j = 0; j < i; j++) {
        d[j] = V[i - 1][j];
        V[i][j] = 0;
        V[j][i] = 0;
      }
    } else {
      for (let k = 0; k < i; k++) {
        d[k] /= scale;
        h += d[k] * d[k];
      }
      let f = d[i - 1];
      let g = Math.sqrt(h);
      if (f > 0) g = -g;
      e[i] = scale * g;
      h -= f * g;
      d[i - 1] = f - g;
      for (let j = 0; j < i; j++) e[j] = 0;
      for (let j = 0; j < i; j++) {
        f = d[j];
        V[j][i] = f;
        g = e[j] + V[j][j] * f;
        for (let k = j + 1; k <= i - 1; k++) {
          g += V[k][j] * d[k];
          e[k] += V[k][j] * f;
        }
        e[j] = g;
      }
      f = 0;
      for (let j = 0; j < i; j++) {
        e[j] /= h;
        f += e[j] * d[j];
      }
      const hh = f / (h + h);
      for (let j = 0; j < i; j++) e[j] -= hh * d[j];
      for (let j = 0; j < i; j++) {
        f = d[j];
        g = e[j];
        for (let k = j; k <= i - 1; k++) V[k][j] -= f * e[k] + g * d[k];
        d[j] = V[i - 1][j];
        V[i][j] = 0;
      }
    }
    d[i] = h;
  }
  if (accumulate) {
    for (let i = 0; i < n - 1; i++) {
      V[n - 1][i] = V[i][i];
      V[i][i] = 1;
      const h = d[i + 1];
      if (h !== 0) {
        for (let k = 0; k <= i; k++) d[k] = V[k][i + 1] / h;
        for (let j = 0; j <= i; j++) {
          let g = 0;
          for (let k = 0; k <= i; k++) g += V[k][i + 1] * V[k][j];
          for (let k = 0; k <= i; k++) V[k][j] -= g * d[k];
        }
      }
      for (let k = 0; k <= i; k++) V[k][i + 1] = 0;
    }
    for (let j = 0; j < n; j++) {
      d[j] = V[n - 1][j];
      V[n - 1][j] = 0;
    }
    V[n - 1][n - 1] = 1;
  } else {
    // Only the diagonal of the reduced matrix is needed: tred2 keeps it on V's diagonal.
    for (let j = 0; j < n; j++) d[j] = V[j][j];
  }
  e[0] = 0;
}

/**
 * Implicit QL on the tridiagonal (d diagonal, e[i] = subdiagonal between i−1 and i, e[0] unused).
 * Vt: accumulate the vectors, stored transposed (Vt[k] = vector k); last: accumulate only one
 * component of every vector (Lanczos residuals).
 */
function tql2(d: Float64Array, e: Float64Array, n: number, Vt: Float64Array[] | null, last: Float64Array | null): void {
  for (let i = 1; i < n; i++) e[i - 1] = e[i];
  e[n - 1] = 0;
  let f = 0, tst1 = 0;
  const eps = 2 ** -52;
  for (let l = 0; l < n; l++) {
    tst1 = Math.max(tst1, Math.abs(d[l]) + Math.abs(e[l]));
    let m = l;
    while (m < n) {
      if (Math.abs(e[m]) <= eps * tst1) break;
      m++;
    }
    if (m > l) {
      let iter = 0;
      do {
        if (++iter > 200) throw new Error('symmetric eigensolver did not converge');
        let g = d[l];
        let p = (d[l + 1] - g) / (2 * e[l]);
        let r = Math.hypot(p, 1);
        if (p < 0) r = -r;
        d[l] = e[l] / (p + r);
        d[l + 1] = e[l] * (p + r);
        const dl1 = d[l + 1];
        let h = g - d[l];
        for (let i = l + 2; i < n; i++) d[i] -= h;
        f += h;
        p = d[m];
        let c = 1, c2 = c, c3 = c, s = 0, s2 = 0;
        const el1 = e[l + 1];
        for (let i = m - 1; i >= l; i--) {
          c3 = c2;
          c2 = c;
          s2 = s;
          g = c * e[i];
          h = c * p;
          r = Math.hypot(p, e[i]);
          e[i + 1] = s * r;
          s = e[i] / r;
          c = p / r;
          p = c * d[i] - s * g;
          d[i + 1] = h + s * (c * g + s * d[i]);
          if (Vt) {
            const a = Vt[i], b = Vt[i + 1];
            for (let k = 0; k < n; k++) {
              const bk = b[k], ak = a[k];
              b[k] = s * ak + c * bk;
              a[k] = c * ak - s * bk;
            }
          } else if (last) {
            h = last[i + 1];
            last[i + 1] = s * last[i] + c * h;
            last[i] = c * last[i] - s * h;
          }
        }
        p = (-s * s2 * c3 * el1 * e[l]) / dl1;
        e[l] = s * p;
        d[l] = c * p;
      } while (Math.abs(e[l]) > eps * tst1);
    }
    d[l] += f;
    e[l] = 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Lanczos for the extreme eigenvalues of a symmetric operator.
//
// Plain three-term recurrence (local reorthogonalisation against the last two vectors only): O(n)
// memory and O(n) work per step besides the operator. Loss of orthogonality only produces extra
// copies of converged Ritz values (Paige), which leaves the extremes and their residual bounds
// β_k |y_k| valid, so full reorthogonalisation (O(k²n)) is not worth its cost here. The Ritz values
// lie inside the spectrum; θ_min − residual is the conservative estimate of λ_min used for shifts
// (and the Cholesky that follows certifies W + D ≻ 0 in any case).

export interface LanczosResult {
  min: number;
  max: number;
  /** Residual norms of the extreme Ritz pairs: an eigenvalue lies within each of its Ritz value. */
  minResidual: number;
  maxResidual: number;
  iterations: number;
}

export function lanczosExtremes(apply: (x: Float64Array, y: Float64Array) => void, n: number, opts: { maxIter?: number; tol?: number } = {}): LanczosResult {
  const maxIter = Math.min(n, opts.maxIter ?? 1500);
  const tol = opts.tol ?? 1e-9;
  const alpha: number[] = [], beta: number[] = [];
  // Deterministic start (an LCG; never Math.random).
  let q = new Float64Array(n), qPrev = new Float64Array(n);
  let state = 0x9e3779b9;
  for (let i = 0; i < n; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    q[i] = state / 4294967296 - 0.5;
  }
  scale(q, 1 / norm(q));
  const w = new Float64Array(n);
  let anorm = 0;
  let bPrev = 0;
  let nextCheck = 10;
  let result: LanczosResult = { min: 0, max: 0, minResidual: Infinity, maxResidual: Infinity, iterations: 0 };
  for (let k = 0; k < maxIter; k++) {
    apply(q, w);
    for (let i = 0; i < n; i++) w[i] -= bPrev * qPrev[i];
    let a = dot(q, w);
    for (let i = 0; i < n; i++) w[i] -= a * q[i];
    // Local reorthogonalisation (a second Gram–Schmidt pass against q and qPrev).
    const c1 = dot(q, w), c0 = dot(qPrev, w);
    for (let i = 0; i < n; i++) w[i] -= c1 * q[i] + c0 * qPrev[i];
    a += c1;
    alpha.push(a);
    const b = norm(w);
    anorm = Math.max(anorm, Math.abs(a) + b + bPrev);
    const last = k === maxIter - 1;
    const breakdown = b <= 1e-13 * Math.max(anorm, 1e-300);
    if (last || breakdown || k + 1 >= nextCheck) {
      nextCheck = Math.max(k + 11, Math.ceil(1.15 * (k + 1)));
      result = ritzExtremes(alpha, beta, b, k + 1);
      const scaleT = Math.max(Math.abs(result.min), Math.abs(result.max), 1e-300);
      if (last || breakdown || (result.minResidual <= tol * scaleT && result.maxResidual <= tol * scaleT)) {
        if (breakdown) result.minResidual = result.maxResidual = 0;
        return result;
      }
    }
    beta.push(b);
    const t = qPrev;
    qPrev = q;
    q = t;
    for (let i = 0; i < n; i++) q[i] = w[i] / b;
    bPrev = b;
  }
  return result;
}

function ritzExtremes(alpha: number[], beta: number[], bNext: number, k: number): LanczosResult {
  const d = Float64Array.from(alpha);
  const e = new Float64Array(k);
  for (let i = 1; i < k; i++) e[i] = beta[i - 1];
  const lastRow = new Float64Array(k);
  lastRow[k - 1] = 1;
  tql2(d, e, k, null, lastRow);
  let iMin = 0, iMax = 0;
  for (let i = 1; i < k; i++) {
    if (d[i] < d[iMin]) iMin = i;
    if (d[i] > d[iMax]) iMax = i;
  }
  return { min: d[iMin], max: d[iMax], minResidual: Math.abs(bNext * lastRow[iMin]), maxResidual: Math.abs(bNext * lastRow[iMax]), iterations: k };
}

function dot(x: Float64Array, y: Float64Array): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i] * y[i];
  return s;
}
function norm(x: Float64Array): number {
  return Math.sqrt(dot(x, x));
}
function scale(x: Float64Array, c: number): void {
  for (let i = 0; i < x.length; i++) x[i] *= c;
}

// ---------------------------------------------------------------------------------------------
// Dense Cholesky: A = L Lᵀ, L lower triangular, row-major n × n.

export function denseCholesky(A: Float64Array, n: number): { ok: true; L: Float64Array } | { ok: false; failedAt: number } {
  const L = new Float64Array(n * n);
  for (let j = 0; j < n; j++) {
    const rj = j * n;
    let s = A[rj + j];
    for (let k = 0; k < j; k++) s -= L[rj + k] * L[rj + k];
    if (!(s > 0)) return { ok: false, failedAt: j };
    const ljj = Math.sqrt(s);
    L[rj + j] = ljj;
    for (let i = j + 1; i < n; i++) {
      const ri = i * n;
      let t = A[ri + j];
      for (let k = 0; k < j; k++) t -= L[ri + k] * L[rj + k];
      L[ri + j] = t / ljj;
    }
  }
  return { ok: true, L };
}

// ---------------------------------------------------------------------------------------------
// Sparse Cholesky (Martens §3.3) with a minimum-degree ordering.
//
// Ordering: minimum degree on the explicit elimination graph (eliminating v joins its remaining
// neighbours into a clique), degree buckets, ties broken by the most recently updated vertex (LIFO
// bucket order), which on lattices behaves like a local nested dissection. Each vertex's neighbours
// at its elimination are exactly the below-diagonal pattern of its column of L, so the symbolic
// factorisation comes out of the ordering. Numeric: left-looking column Cholesky over that pattern
// (George & Liu's linked-list form): O(flops) time, O(nnz(L)) memory.

export interface SymbolicCholesky {
  /** perm[k] = bit eliminated k-th; pos[bit] = its position. */
  perm: Int32Array;
  pos: Int32Array;
  /** Strictly-lower pattern of L by columns (positions), rows ascending. */
  colPtr: Int32Array;
  rowIdx: Int32Array;
}

export function minimumDegree(n: number, rowPtr: Int32Array, col: Int32Array): SymbolicCholesky {
  const adj: Int32Array[] = [];
  const len = new Int32Array(n);
  for (let v = 0; v < n; v++) {
    const lo = rowPtr[v], hi = rowPtr[v + 1];
    const a = new Int32Array(Math.max(4, hi - lo));
    let c = 0;
    for (let k = lo; k < hi; k++) if (col[k] !== v) a[c++] = col[k];
    adj.push(a);
    len[v] = c;
  }
  // Degree buckets: doubly linked lists.
  const head = new Int32Array(n + 1).fill(-1), next = new Int32Array(n).fill(-1), prev = new Int32Array(n).fill(-1);
  const deg = new Int32Array(n);
  const insert = (v: number, dg: number) => {
    deg[v] = dg;
    prev[v] = -1;
    next[v] = head[dg];
    if (head[dg] >= 0) prev[head[dg]] = v;
    head[dg] = v;
  };
  const remove = (v: number) => {
    if (prev[v] >= 0) next[prev[v]] = next[v];
    else head[deg[v]] = next[v];
    if (next[v] >= 0) prev[next[v]] = prev[v];
  };
  for (let v = n - 1; v >= 0; v--) insert(v, len[v]);
  const perm = new Int32Array(n), pos = new Int32Array(n);
  const patterns: Int32Array[] = new Array(n);
  const tag = new Int32Array(n);
  let stamp = 0;
  let minDeg = 0;
  for (let step = 0; step < n; step++) {
    while (head[minDeg] < 0) minDeg++;
    const v = head[minDeg];
    remove(v);
    perm[step] = v;
    pos[v] = step;
    const N = adj[v].slice(0, len[v]);
    patterns[step] = N;
    adj[v] = new Int32Array(0);
    len[v] = 0;
    for (let t = 0; t < N.length; t++) {
      const u = N[t];
      stamp++;
      let a = adj[u];
      let c = 0;
      // Drop v, mark the rest.
      for (let k = 0; k < len[u]; k++) {
        const w = a[k];
        if (w === v) continue;
        tag[w] = stamp;
        a[c++] = w;
      }
      tag[u] = stamp;
      for (let s = 0; s < N.length; s++) {
        const w = N[s];
        if (tag[w] === stamp) continue;
        if (c === a.length) {
          const b = new Int32Array(a.length * 2);
          b.set(a);
          a = adj[u] = b;
        }
        a[c++] = w;
      }
      len[u] = c;
      remove(u);
      insert(u, c);
      if (c < minDeg) minDeg = c;
    }
  }
  const colPtr = new Int32Array(n + 1);
  for (let k = 0; k < n; k++) colPtr[k + 1] = colPtr[k] + patterns[k].length;
  const rowIdx = new Int32Array(colPtr[n]);
  for (let k = 0; k < n; k++) {
    const P = patterns[k];
    const out = rowIdx.subarray(colPtr[k], colPtr[k + 1]);
    for (let t = 0; t < P.length; t++) out[t] = pos[P[t]];
    out.sort();
  }
  return { perm, pos, colPtr, rowIdx };
}

/** Numeric sparse Cholesky of P(W + D)Pᵀ = L Lᵀ; returns M = Pᵀ L as CSR rows over bits. */
export function sparseCholesky(form: CanonicalForm, d: Float64Array, sym: SymbolicCholesky): { ok: true; factor: { n: number; rowPtr: Int32Array; col: Int32Array; values: Float64Array } } | { ok: false; failedBit: number } {
  const n = form.nBits;
  const { perm, pos, colPtr, rowIdx } = sym;
  const Lx = new Float64Array(rowIdx.length);
  const diag = new Float64Array(n);
  const w = new Float64Array(n);
  const headL = new Int32Array(n).fill(-1), link = new Int32Array(n).fill(-1), nextEntry = new Int32Array(n);
  for (let j = 0; j < n; j++) {
    const bit = perm[j];
    w[j] = d[bit];
    for (let k = form.rowPtr[bit]; k < form.rowPtr[bit + 1]; k++) {
      const i = pos[form.col[k]];
      if (i > j) w[i] = form.val[k];
    }
    let k = headL[j];
    headL[j] = -1;
    while (k >= 0) {
      const nk = link[k];
      const p = nextEntry[k];
      const ljk = Lx[p];
      w[j] -= ljk * ljk;
      const end = colPtr[k + 1];
      for (let q = p + 1; q < end; q++) w[rowIdx[q]] -= Lx[q] * ljk;
      if (p + 1 < end) {
        nextEntry[k] = p + 1;
        const r = rowIdx[p + 1];
        link[k] = headL[r];
        headL[r] = k;
      }
      k = nk;
    }
    const s = w[j];
    w[j] = 0;
    if (!(s > 0)) return { ok: false, failedBit: bit };
    const ljj = Math.sqrt(s);
    diag[j] = ljj;
    const inv = 1 / ljj;
    const lo = colPtr[j], hi = colPtr[j + 1];
    for (let q = lo; q < hi; q++) {
      const r = rowIdx[q];
      Lx[q] = w[r] * inv;
      w[r] = 0;
    }
    if (hi > lo) {
      nextEntry[j] = lo;
      link[j] = headL[rowIdx[lo]];
      headL[rowIdx[lo]] = j;
    }
  }
  // M = Pᵀ L: row `bit` of M is row pos[bit] of L; columns are positions (m = n).
  const rowCount = new Int32Array(n);
  for (let q = 0; q < rowIdx.length; q++) rowCount[rowIdx[q]]++;
  const rowPtr = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) rowPtr[i + 1] = rowPtr[i] + rowCount[pos[i]] + 1;
  const fillAt = rowPtr.slice(0, n);
  const mcol = new Int32Array(rowPtr[n]);
  const mval = new Float64Array(rowPtr[n]);
  for (let j = 0; j < n; j++) {
    // Row j's off-diagonal entries come from columns < j, already placed: its diagonal goes last.
    const b = perm[j];
    mcol[fillAt[b]] = j;
    mval[fillAt[b]++] = diag[j];
    for (let q = colPtr[j]; q < colPtr[j + 1]; q++) {
      const rb = perm[rowIdx[q]];
      mcol[fillAt[rb]] = j;
      mval[fillAt[rb]++] = Lx[q];
    }
  }
  return { ok: true, factor: { n, rowPtr, col: mcol, values: mval } };
}
