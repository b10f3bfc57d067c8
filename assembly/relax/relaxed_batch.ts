// The relaxed density (relaxed.ts) for a batch of chains, each at its own x: one batched product U = M X,
// the per-chain nonlinear part (σ / softmax, softplus / logsumexp) exactly as relaxed.ts runs it, then one
// batched product G = Mᵀ Π. Chain b's numbers are those of relaxedLogDensity / relaxedGradient at its x,
// bit for bit (factor_batch.ts keeps each column's summation order).
//
// Scratch (f64): X / G (m × B, chains innermost), U / Π (n × B, chains innermost), then each chain's π
// (n per chain, chain after chain), which the caller reads after the call.

import { Factor } from './factor';
import { expPairK } from '../core/vmath';
import { log1pUnitPair } from '../core/vlog1p';
import { factorBatchable, factorApplyBatch, factorApplyTBatch } from './factor_batch';
import { Relaxed, conditionalsFromU, halfSquare, relaxedLogDensity, relaxedGradient } from './relaxed';

/** mode per chain: skip it, its gradient only (relaxedGradient), or log p and gradient (relaxedLogDensity). */
export const EVAL_SKIP: i32 = 0;
export const EVAL_GRADIENT: i32 = 1;
export const EVAL_LOGP: i32 = 2;

export function relaxedBatchScratchBytes(r: Relaxed, B: i32): usize {
  return (<usize>B * <usize>(r.m + 2 * r.nBits)) << 3;
}

/** Chain b's π after a relaxedBatchEval with some chain in EVAL_LOGP mode (f64 × nBits). */
@inline
export function batchProb(r: Relaxed, scratch: usize, B: i32, b: i32): usize {
  return scratch + ((<usize>B * <usize>(r.m + r.nBits) + <usize>b * <usize>r.nBits) << 3);
}

/**
 * g = Mᵀ π − x from a column of G (entries `stride` bytes apart), in one pass: relaxed.ts's gradientFinish
 * on the gathered column, its sum kept as the same two partial sums (even and odd k) in the same order.
 */
function gatherGradient(col: usize, stride: usize, m: i32, x: usize, g: usize): f64 {
  // Lane 0 holds the even k's partial sum, lane 1 the odd k's.
  let sum = f64x2.splat(0);
  const step = stride << 1;
  let k = 0;
  for (; k + 1 < m; k += 2) {
    const o = <usize>k << 3;
    const gk = f64x2.sub(v128.load64_lane(col + stride, v128.load64_zero(col), 1), v128.load(x + o));
    v128.store(g + o, gk);
    sum = f64x2.add(sum, gk);
    col += step;
  }
  let s = f64x2.extract_lane(sum, 0) + f64x2.extract_lane(sum, 1);
  if (k < m) {
    const gl = load<f64>(col) - load<f64>(x + (<usize>k << 3));
    store<f64>(g + (<usize>k << 3), gl);
    s += gl;
  }
  return s;
}

/**
 * −½|x_b|² of every chain's column of X (m × B, chains innermost) into out[b]: relaxed.ts's halfSquare,
 * each chain's sum in index order, two chains per f64x2 (independent sums: their latencies overlap).
 */
function halfSquares(X: usize, m: i32, B: i32, out: usize): void {
  const stride = <usize>B << 3;
  const half = f64x2.splat(0.5);
  let b = 0;
  for (; b + 1 < B; b += 2) {
    let sq = f64x2.splat(0);
    let q = X + (<usize>b << 3);
    for (let k = 0; k < m; k++, q += stride) {
      const x = v128.load(q);
      sq = f64x2.sub(sq, f64x2.mul(f64x2.mul(half, x), x));
    }
    v128.store(out + (<usize>b << 3), sq);
  }
  if (b < B) {
    let sq = 0.0;
    let q = X + (<usize>b << 3);
    for (let k = 0; k < m; k++, q += stride) {
      const x = load<f64>(q);
      sq -= 0.5 * x * x;
    }
    store<f64>(out + (<usize>b << 3), sq);
  }
}

/**
 * All-free models: U (n × B, M x per chain) becomes π = σ(M x + b) in place, two chains per f64x2 with
 * expPair (Math.exp bit for bit): per chain the operations conditionalsFromU performs for a free bit.
 * With lp ≠ 0 also log p: lp[b] (f64 per chain, holding −½|x_b|²) gains Σ softplus(u_i) in index order
 * (log1pUnitPair: Math.log1p bit for bit), and π goes also to chain b's row at probs + b·n (f64 × n each).
 */
export function sigmoidBatch(r: Relaxed, U: usize, B: i32, lp: usize = 0, probs: usize = 0): void {
  const n = r.nBits;
  const stride = <usize>B << 3;
  const rowBytes = <usize>n << 3;
  const one = f64x2.splat(1.0), zero = f64x2.splat(0.0);
  for (let i = 0; i < n; i++) {
    const bi = load<f64>(r.bias + (<usize>i << 3));
    const bv = f64x2.splat(bi);
    const row = U + <usize>i * stride;
    const pi = probs + (<usize>i << 3);
    let b = 0;
    for (; b + 1 < B; b += 2) {
      const q = row + (<usize>b << 3);
      const u = f64x2.add(v128.load(q), bv);
      const e = expPairK(f64x2.neg(f64x2.abs(u)));
      const p = f64x2.div(v128.bitselect(one, e, f64x2.ge(u, zero)), f64x2.add(one, e));
      v128.store(q, p);
      if (lp) {
        const pq = pi + <usize>b * rowBytes;
        v128.store64_lane(pq, p, 0);
        v128.store64_lane(pq + rowBytes, p, 1);
        const l = lp + (<usize>b << 3);
        v128.store(l, f64x2.add(v128.load(l), f64x2.add(f64x2.max(u, zero), log1pUnitPair(e))));
      }
    }
    if (b < B) {
      const q = row + (<usize>b << 3);
      const u = load<f64>(q) + bi;
      const e = Math.exp(-Math.abs(u));
      const p = (u >= 0 ? 1.0 : e) / (1.0 + e);
      store<f64>(q, p);
      if (lp) {
        store<f64>(pi + <usize>b * rowBytes, p);
        const l = lp + (<usize>b << 3);
        store<f64>(l, load<f64>(l) + (max(u, 0.0) + Math.log1p(e)));
      }
    }
  }
}

/**
 * For each chain b with mode[b] ≠ EVAL_SKIP: the density at x_b (xs: pointer per chain), gradient into
 * grads[b], π into batchProb(b); out[b] is what the single-chain call returns. Modes and pointers are
 * arrays of B entries (i32, usize). With `gathered`, X (the start of the scratch) already holds them.
 */
export function relaxedBatchEval(r: Relaxed, B: i32, xs: usize, grads: usize, mode: usize, out: usize, scratch: usize, gathered: bool = false): void {
  const f = changetype<Factor>(r.factor);
  const n = r.nBits, m = r.m;
  const stride = <usize>B << 3;
  if (!factorBatchable(f)) {
    // One product at a time (the FFT factor): the single-chain calls themselves.
    for (let b = 0; b < B; b++) {
      const md = load<i32>(mode + (<usize>b << 2));
      if (md == EVAL_SKIP) continue;
      const x = load<usize>(xs + (<usize>b << 2)), g = load<usize>(grads + (<usize>b << 2));
      const v = md == EVAL_LOGP ? relaxedLogDensity(r, x, g) : relaxedGradient(r, x, g);
      store<f64>(out + (<usize>b << 3), v);
      memory.copy(batchProb(r, scratch, B, b), r.prob, <usize>n << 3);
    }
    return;
  }
  const X = scratch, U = scratch + <usize>m * stride;
  // gathered: the caller has written the chains' x into X already (a skipped chain's column is ignored).
  for (let b = 0; b < B && !gathered; b++) {
    const md = load<i32>(mode + (<usize>b << 2));
    const x = load<usize>(xs + (<usize>b << 2));
    let q = X + (<usize>b << 3);
    if (md == EVAL_SKIP) {
      for (let k = 0; k < m; k++, q += stride) store<f64>(q, 0);
    } else {
      for (let k = 0; k < m; k++, q += stride) store<f64>(q, load<f64>(x + (<usize>k << 3)));
    }
  }
  factorApplyBatch(f, X, U, B);
  // All bits free: π (and log p where asked) for every chain at once, in place; π also into batchProb
  // for a call with some chain in EVAL_LOGP (then every chain's, written, ignored where not asked).
  const fast = r.allFree != 0;
  if (fast) {
    let logp = false;
    for (let b = 0; b < B; b++) if (load<i32>(mode + (<usize>b << 2)) == EVAL_LOGP) logp = true;
    if (logp) halfSquares(X, m, B, out);
    sigmoidBatch(r, U, B, logp ? out : 0, batchProb(r, scratch, B, 0));
    for (let b = 0; b < B; b++) {
      const md = load<i32>(mode + (<usize>b << 2));
      if (md != EVAL_LOGP) store<f64>(out + (<usize>b << 3), 0.0);
      // No gradient for a skipped chain, or where log p = −∞ (the single-chain calls return before it).
      if (md != EVAL_SKIP && !(md == EVAL_LOGP && load<f64>(out + (<usize>b << 3)) == -Infinity)) continue;
      let q = U + (<usize>b << 3);
      for (let i = 0; i < n; i++, q += stride) store<f64>(q, 0);
    }
  }
  // Otherwise per chain: its column of U into r.u, the nonlinear part, π back into its column (Π, in U's place).
  const uu = r.u;
  for (let b = 0; b < B && !fast; b++) {
    const md = load<i32>(mode + (<usize>b << 2));
    let q = U + (<usize>b << 3);
    if (md == EVAL_SKIP) {
      for (let i = 0; i < n; i++, q += stride) store<f64>(q, 0);
      continue;
    }
    for (let i = 0; i < n; i++, q += stride) store<f64>(uu + (<usize>i << 3), load<f64>(q));
    const x = load<usize>(xs + (<usize>b << 2));
    const prob = batchProb(r, scratch, B, b);
    const st = md == EVAL_LOGP ? conditionalsFromU(r, uu, prob, true, halfSquare(m, x)) : conditionalsFromU(r, uu, prob, false, 0.0);
    store<f64>(out + (<usize>b << 3), st);
    q = U + (<usize>b << 3);
    if (st == -Infinity) {
      // No gradient (the single-chain calls return before it).
      for (let i = 0; i < n; i++, q += stride) store<f64>(q, 0);
    } else {
      for (let i = 0; i < n; i++, q += stride) store<f64>(q, load<f64>(prob + (<usize>i << 3)));
    }
  }
  factorApplyTBatch(f, U, X, B);
  for (let b = 0; b < B; b++) {
    const md = load<i32>(mode + (<usize>b << 2));
    if (md == EVAL_SKIP || load<f64>(out + (<usize>b << 3)) == -Infinity) continue;
    const x = load<usize>(xs + (<usize>b << 2)), g = load<usize>(grads + (<usize>b << 2));
    const s = gatherGradient(X + (<usize>b << 3), stride, m, x, g);
    if (md == EVAL_GRADIENT) store<f64>(out + (<usize>b << 3), isFinite(s) ? 0.0 : NaN);
  }
}
