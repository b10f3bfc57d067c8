// Lanczos for the extreme eigenvalues of a symmetric operator: W + diag(d) in CSR (d optional), or
// S (W + diag(d)) S with S = ½ on free bits and (I − 11ᵀ/K)/√2 on a one-hot block of K bits (the
// relaxation's log-concavity index, bindings/relax/relaxation.ts).
//
// Plain three-term recurrence (local reorthogonalisation against the last two vectors only): O(n)
// memory and O(n) work per step besides the operator. Loss of orthogonality only produces extra
// copies of converged Ritz values (Paige), which leaves the extremes and their residual bounds
// β_k |y_k| valid, so full reorthogonalisation (O(k²n)) is not worth its cost here. The Ritz values
// lie inside the spectrum; θ_min − residual is the conservative estimate of λ_min used for shifts.

import { ldf, stf, ldi } from '../core/access';

/** The operator: CSR W (n rows), optional diagonal, optional one-hot blocks for S. */
@unmanaged
export class SymOp {
  n: i32;
  /** Number of variables (blocks) for S; 0: no S, the operator is W + diag(d). */
  nBlocks: i32;
  rowPtr: usize;
  col: usize;
  val: usize;
  /** f64 × n, or 0 for none. */
  diag: usize;
  blockStart: usize; // i32 × (nBlocks + 1)
  oneHot: usize; // u8 × nBlocks
  /** f64 × n scratch for S x. */
  tmp: usize;
}

export function symOpBytes(): usize {
  return offsetof<SymOp>();
}

export function symOpInit(hdr: usize, n: i32, rowPtr: usize, col: usize, val: usize, diag: usize, nBlocks: i32, blockStart: usize, oneHot: usize, tmp: usize): void {
  const o = changetype<SymOp>(hdr);
  o.n = n;
  o.rowPtr = rowPtr;
  o.col = col;
  o.val = val;
  o.diag = diag;
  o.nBlocks = nBlocks;
  o.blockStart = blockStart;
  o.oneHot = oneHot;
  o.tmp = tmp;
}

/** y = (W + diag(d)) x; the column and value arrays walked by pointer (one address update per entry). */
function csrApply(n: i32, rowPtr: usize, col: usize, val: usize, diag: usize, x: usize, y: usize): void {
  let pc = col + (<usize>ldi(rowPtr, 0) << 2);
  let pv = val + (<usize>ldi(rowPtr, 0) << 3);
  for (let i = 0; i < n; i++) {
    const end = col + (<usize>ldi(rowPtr, i + 1) << 2);
    let s = diag ? ldf(diag, i) * ldf(x, i) : 0.0;
    while (pc < end) {
      s += load<f64>(pv) * load<f64>(x + (<usize>load<i32>(pc) << 3));
      pc += 4;
      pv += 8;
    }
    stf(y, i, s);
  }
}

/** y = S x (x and y may be the same array). */
function applyS(o: SymOp, x: usize, y: usize): void {
  for (let v = 0; v < o.nBlocks; v++) {
    const b = ldi(o.blockStart, v), e = ldi(o.blockStart, v + 1);
    if (!load<u8>(o.oneHot + <usize>v)) {
      stf(y, b, 0.5 * ldf(x, b));
      continue;
    }
    let mean = 0.0;
    for (let k = b; k < e; k++) mean += ldf(x, k);
    mean /= <f64>(e - b);
    for (let k = b; k < e; k++) stf(y, k, (ldf(x, k) - mean) * Math.SQRT1_2);
  }
}

export function symOpApply(o: SymOp, x: usize, y: usize): void {
  if (o.nBlocks == 0) {
    csrApply(o.n, o.rowPtr, o.col, o.val, o.diag, x, y);
    return;
  }
  applyS(o, x, o.tmp);
  csrApply(o.n, o.rowPtr, o.col, o.val, o.diag, o.tmp, y);
  applyS(o, y, y);
}

function dot(x: usize, y: usize, n: i32): f64 {
  let s = 0.0;
  for (let i = 0; i < n; i++) s += ldf(x, i) * ldf(y, i);
  return s;
}

/** Number of eigenvalues of the k × k tridiagonal (alpha, beta) below x (Sturm sequence of its LDLᵀ). */
function countBelow(alpha: usize, beta: usize, k: i32, x: f64, tiny: f64): i32 {
  let count = 0;
  let q = ldf(alpha, 0) - x;
  if (Math.abs(q) < tiny) q = -tiny;
  if (q < 0) count++;
  for (let i = 1; i < k; i++) {
    const b = ldf(beta, i - 1);
    q = ldf(alpha, i) - x - (b * b) / q;
    if (Math.abs(q) < tiny) q = -tiny;
    if (q < 0) count++;
  }
  return count;
}

/** The eigenvalue of rank `which` (0 = smallest) of the tridiagonal in [lo, hi], by bisection. */
function bisectEigenvalue(alpha: usize, beta: usize, k: i32, which: i32, lo: f64, hi: f64, tiny: f64): f64 {
  for (let it = 0; it < 200; it++) {
    const mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    if (countBelow(alpha, beta, k, mid, tiny) > which) hi = mid;
    else lo = mid;
  }
  return 0.5 * (lo + hi);
}

/**
 * |y_k| of the unit eigenvector y of the tridiagonal for eigenvalue θ: y from the bottom row up by the
 * three-term recurrence (y_k = 1), normalised. For an extreme Ritz value the components grow upwards
 * (converged: y_k small), the stable direction of the recurrence; rescaled to stay in range.
 */
function lastComponent(alpha: usize, beta: usize, k: i32, theta: f64): f64 {
  if (k == 1) return 1;
  let yk = 1.0, next = 1.0, cur = (theta - ldf(alpha, k - 1)) / ldf(beta, k - 2);
  let sumsq = 1 + cur * cur;
  for (let i = k - 2; i >= 1; i--) {
    const prev = ((theta - ldf(alpha, i)) * cur - ldf(beta, i) * next) / ldf(beta, i - 1);
    next = cur;
    cur = prev;
    sumsq += cur * cur;
    if (sumsq > 1e200) {
      yk *= 1e-150;
      next *= 1e-150;
      cur *= 1e-150;
      sumsq *= 1e-300;
    }
  }
  return yk / Math.sqrt(sumsq);
}

/**
 * Ritz extremes of the k × k tridiagonal (alpha, beta): the extreme eigenvalues by bisection (to
 * rounding, as QL gives them) and their residual bounds |b_next · y_k|; writes min, max, residuals, k.
 */
function ritzExtremes(alpha: usize, beta: usize, bNext: f64, k: i32, out: usize): void {
  // Gershgorin bounds.
  let lo = Infinity, hi = -Infinity, norm = 0.0;
  for (let i = 0; i < k; i++) {
    const r = (i > 0 ? Math.abs(ldf(beta, i - 1)) : 0) + (i < k - 1 ? Math.abs(ldf(beta, i)) : 0);
    const a = ldf(alpha, i);
    lo = Math.min(lo, a - r);
    hi = Math.max(hi, a + r);
    norm = Math.max(norm, Math.abs(a) + r);
  }
  const tiny = 1e-300 + 2.220446049250313e-16 * 1e-30 * norm;
  const pad = 2.220446049250313e-16 * Math.max(norm, 1e-300) * 4;
  const tMin = bisectEigenvalue(alpha, beta, k, 0, lo - pad, hi + pad, tiny);
  const tMax = bisectEigenvalue(alpha, beta, k, k - 1, lo - pad, hi + pad, tiny);
  stf(out, 0, tMin);
  stf(out, 1, tMax);
  stf(out, 2, Math.abs(bNext * lastComponent(alpha, beta, k, tMin)));
  stf(out, 3, Math.abs(bNext * lastComponent(alpha, beta, k, tMax)));
  stf(out, 4, <f64>k);
}

/**
 * Extreme eigenvalues of the operator `op` by at most maxIter Lanczos steps, stopping when both
 * extreme Ritz residuals are ≤ tol·max(|θ_min|, |θ_max|) (checked every ~15 % more steps) or on
 * breakdown (residuals then 0). work: f64 × (3n + 2·maxIter). out: f64 × 5 = θ_min, θ_max, their
 * residuals, iterations. Returns 0.
 */
export function lanczosExtremes(hdr: usize, maxIter: i32, tol: f64, work: usize, out: usize): i32 {
  const op = changetype<SymOp>(hdr);
  const n = op.n;
  let q = work, qPrev = work + (<usize>n << 3);
  const w = work + (<usize>(2 * n) << 3);
  const alpha = work + (<usize>(3 * n) << 3), beta = alpha + (<usize>maxIter << 3);
  // Deterministic start (an LCG; never a random seed).
  let state: u32 = 0x9e3779b9;
  for (let i = 0; i < n; i++) {
    state = state * 1664525 + 1013904223;
    stf(q, i, <f64>state / 4294967296.0 - 0.5);
  }
  memory.fill(qPrev, 0, <usize>n << 3);
  const inv = 1 / Math.sqrt(dot(q, q, n));
  for (let i = 0; i < n; i++) stf(q, i, ldf(q, i) * inv);
  let anorm = 0.0, bPrev = 0.0;
  let nextCheck = 10;
  stf(out, 0, 0);
  stf(out, 1, 0);
  stf(out, 2, Infinity);
  stf(out, 3, Infinity);
  stf(out, 4, 0);
  for (let k = 0; k < maxIter; k++) {
    // The passes are fused where one's output is the next's input, and run two entries per f64x2
    // with the sums in two lanes (a serial chain of additions would bound these loops).
    symOpApply(op, q, w);
    const n2 = n & ~1;
    const vbPrev = f64x2.splat(bPrev);
    let acc = f64x2.splat(0);
    for (let i = 0; i < n2; i += 2) {
      const o = <usize>i << 3;
      const wi = f64x2.sub(v128.load(w + o), f64x2.mul(vbPrev, v128.load(qPrev + o)));
      v128.store(w + o, wi);
      acc = f64x2.add(acc, f64x2.mul(v128.load(q + o), wi));
    }
    let a = f64x2.extract_lane(acc, 0) + f64x2.extract_lane(acc, 1);
    if (n2 < n) {
      const wi = ldf(w, n2) - bPrev * ldf(qPrev, n2);
      stf(w, n2, wi);
      a += ldf(q, n2) * wi;
    }
    // Local reorthogonalisation (a second Gram–Schmidt pass against q and qPrev).
    const va = f64x2.splat(a);
    let acc1 = f64x2.splat(0), acc0 = f64x2.splat(0);
    for (let i = 0; i < n2; i += 2) {
      const o = <usize>i << 3;
      const qi = v128.load(q + o);
      const wi = f64x2.sub(v128.load(w + o), f64x2.mul(va, qi));
      v128.store(w + o, wi);
      acc1 = f64x2.add(acc1, f64x2.mul(qi, wi));
      acc0 = f64x2.add(acc0, f64x2.mul(v128.load(qPrev + o), wi));
    }
    let c1 = f64x2.extract_lane(acc1, 0) + f64x2.extract_lane(acc1, 1);
    let c0 = f64x2.extract_lane(acc0, 0) + f64x2.extract_lane(acc0, 1);
    if (n2 < n) {
      const qi = ldf(q, n2);
      const wi = ldf(w, n2) - a * qi;
      stf(w, n2, wi);
      c1 += qi * wi;
      c0 += ldf(qPrev, n2) * wi;
    }
    const vc1 = f64x2.splat(c1), vc0 = f64x2.splat(c0);
    let accb = f64x2.splat(0);
    for (let i = 0; i < n2; i += 2) {
      const o = <usize>i << 3;
      const wi = f64x2.sub(v128.load(w + o), f64x2.add(f64x2.mul(vc1, v128.load(q + o)), f64x2.mul(vc0, v128.load(qPrev + o))));
      v128.store(w + o, wi);
      accb = f64x2.add(accb, f64x2.mul(wi, wi));
    }
    let bb = f64x2.extract_lane(accb, 0) + f64x2.extract_lane(accb, 1);
    if (n2 < n) {
      const wi = ldf(w, n2) - (c1 * ldf(q, n2) + c0 * ldf(qPrev, n2));
      stf(w, n2, wi);
      bb += wi * wi;
    }
    a += c1;
    stf(alpha, k, a);
    const b = Math.sqrt(bb);
    anorm = Math.max(anorm, Math.abs(a) + b + bPrev);
    const last = k == maxIter - 1;
    const breakdown = b <= 1e-13 * Math.max(anorm, 1e-300);
    if (last || breakdown || k + 1 >= nextCheck) {
      nextCheck = max(k + 11, <i32>Math.ceil(1.15 * <f64>(k + 1)));
      ritzExtremes(alpha, beta, b, k + 1, out);
      const scaleT = Math.max(Math.max(Math.abs(ldf(out, 0)), Math.abs(ldf(out, 1))), 1e-300);
      if (last || breakdown || (ldf(out, 2) <= tol * scaleT && ldf(out, 3) <= tol * scaleT)) {
        if (breakdown) {
          stf(out, 2, 0);
          stf(out, 3, 0);
        }
        return 0;
      }
    }
    stf(beta, k, b);
    const t = qPrev;
    qPrev = q;
    q = t;
    const vb = f64x2.splat(b);
    for (let i = 0; i < n2; i += 2) v128.store(q + (<usize>i << 3), f64x2.div(v128.load(w + (<usize>i << 3)), vb));
    if (n2 < n) stf(q, n2, ldf(w, n2) / b);
    bPrev = b;
  }
  return 0;
}
