// The relaxed density p(x) of DESIGN.md §2, for any factor M (M Mᵀ = W + D):
//
//   u = M x + b,   b = a − ½ d
//   log p(x) = −½|x|² + Σ_free softplus(u_i) + Σ_one-hot-blocks logsumexp(u_block) + const
//   ∇ log p(x) = −x + Mᵀ π,   π_i = p(s_i = 1 | x): σ(u_i) for a free bit, softmax over a block.
//
// One call computes the density, the gradient and π (the Rao–Blackwellised marginals p(s|x)).

import { Factor, factorApply, factorApplyT } from './factor';

@unmanaged
export class Relaxed {
  nBlocks: i32;
  nBits: i32;
  /** Dimension of x (columns of M). */
  m: i32;
  allFree: i32;
  blockStart: usize; // i32[nBlocks + 1]
  oneHot: usize; // u8[nBlocks]
  bias: usize; // f64[nBits]: a − ½ d
  factor: usize; // Factor header
  u: usize; // f64[nBits] scratch: holds M x + b after a call
  prob: usize; // f64[nBits]: holds π after a call
}

export function relaxedBytes(): usize {
  return offsetof<Relaxed>();
}

export function relaxedInit(hdr: usize, nBlocks: i32, nBits: i32, m: i32, allFree: i32, blockStart: usize, oneHot: usize, bias: usize, factor: usize, u: usize, prob: usize): void {
  const r = changetype<Relaxed>(hdr);
  r.nBlocks = nBlocks;
  r.nBits = nBits;
  r.m = m;
  r.allFree = allFree;
  r.blockStart = blockStart;
  r.oneHot = oneHot;
  r.bias = bias;
  r.factor = factor;
  r.u = u;
  r.prob = prob;
}

/** σ(u) = 1/(1 + e^−u), stable at both ends. */
@inline
export function sigmoid(u: f64): f64 {
  if (u >= 0) return 1.0 / (1.0 + Math.exp(-u));
  const e = Math.exp(u);
  return e / (1.0 + e);
}

/**
 * u = M x + b into r.u and π into r.prob. With wantLogp, returns lp0 + Σ softplus(u_free) +
 * Σ logsumexp(u_block); without, returns lp0 (σ and softmax only: no log1p, no log). Either way −∞ when a
 * block has no possible state, and NaN propagates from a non-finite x.
 */
function conditionals(r: Relaxed, x: usize, wantLogp: bool, lp0: f64): f64 {
  factorApply(changetype<Factor>(r.factor), x, r.u);
  return conditionalsFromU(r, r.u, r.prob, wantLogp, lp0);
}

/**
 * conditionals() after the product: uu holds M x (f64 × nBits) and becomes u = M x + b; π goes to prob.
 * The batched samplers call it per chain on their own buffers.
 */
export function conditionalsFromU(r: Relaxed, uu: usize, prob: usize, wantLogp: bool, lp0: f64): f64 {
  const n = r.nBits;
  const bias = r.bias;
  let lp = lp0;
  if (r.allFree) {
    for (let i = 0; i < n; i++) {
      const q = uu + (<usize>i << 3);
      const u = load<f64>(q) + load<f64>(bias + (<usize>i << 3));
      store<f64>(q, u);
      // One exp serves softplus(u) = max(u, 0) + log1p(e^−|u|) and σ(u) (the same values as sigmoid()).
      const e = Math.exp(-Math.abs(u));
      store<f64>(prob + (<usize>i << 3), (u >= 0 ? 1.0 : e) / (1.0 + e));
      if (wantLogp) lp += max(u, 0.0) + Math.log1p(e);
    }
    return lp;
  }
  for (let i = 0; i < n; i++) {
    const q = uu + (<usize>i << 3);
    store<f64>(q, load<f64>(q) + load<f64>(bias + (<usize>i << 3)));
  }
  for (let v = 0; v < r.nBlocks; v++) {
    const b = load<i32>(r.blockStart + (<usize>v << 2));
    if (!load<u8>(r.oneHot + <usize>v)) {
      const u = load<f64>(uu + (<usize>b << 3));
      const e = Math.exp(-Math.abs(u));
      store<f64>(prob + (<usize>b << 3), (u >= 0 ? 1.0 : e) / (1.0 + e));
      if (wantLogp) lp += max(u, 0.0) + Math.log1p(e);
      continue;
    }
    const e = load<i32>(r.blockStart + (<usize>(v + 1) << 2));
    let top = -Infinity;
    for (let k = b; k < e; k++) top = max(top, load<f64>(uu + (<usize>k << 3)));
    if (top == -Infinity) return -Infinity; // every state of the block impossible
    let total = 0.0;
    for (let k = b; k < e; k++) {
      const w = Math.exp(load<f64>(uu + (<usize>k << 3)) - top);
      store<f64>(prob + (<usize>k << 3), w);
      total += w;
    }
    if (wantLogp) lp += top + Math.log(total);
    const inv = 1.0 / total;
    for (let k = b; k < e; k++) store<f64>(prob + (<usize>k << 3), load<f64>(prob + (<usize>k << 3)) * inv);
  }
  return lp;
}

/** grad = Mᵀ π − x; returns Σ grad_i, finite iff every entry is (up to overflow of the sum itself). */
function gradientFromProb(r: Relaxed, x: usize, grad: usize): f64 {
  factorApplyT(changetype<Factor>(r.factor), r.prob, grad);
  return gradientFinish(r.m, x, grad);
}

/** gradientFromProb() after the product: grad holds Mᵀ π and becomes Mᵀ π − x; returns Σ grad_i. */
export function gradientFinish(m: i32, x: usize, grad: usize): f64 {
  let sum = f64x2.splat(0);
  let i = 0;
  for (; i + 1 < m; i += 2) {
    const q = grad + (<usize>i << 3);
    const g = f64x2.sub(v128.load(q), v128.load(x + (<usize>i << 3)));
    v128.store(q, g);
    sum = f64x2.add(sum, g);
  }
  let s = f64x2.extract_lane(sum, 0) + f64x2.extract_lane(sum, 1);
  if (i < m) {
    const q = grad + (<usize>i << 3);
    const g = load<f64>(q) - load<f64>(x + (<usize>i << 3));
    store<f64>(q, g);
    s += g;
  }
  return s;
}

/** −½|x|², summed in index order (the start of log p). */
export function halfSquare(m: i32, x: usize): f64 {
  let sq = 0.0;
  for (let i = 0; i < m; i++) {
    const xi = load<f64>(x + (<usize>i << 3));
    sq -= 0.5 * xi * xi;
  }
  return sq;
}

/**
 * log p(x) up to its constant; fills π into r.prob and, when grad ≠ 0, ∇ log p(x) into grad (f64 × m).
 * x and grad must not overlap.
 */
export function relaxedLogDensity(r: Relaxed, x: usize, grad: usize): f64 {
  const lp = conditionals(r, x, true, halfSquare(r.m, x));
  if (lp == -Infinity) return lp;
  if (grad) gradientFromProb(r, x, grad);
  return lp;
}

/**
 * ∇ log p(x) into grad and π into r.prob, without log p (for the inner steps of a trajectory, where
 * only the gradient is used). Returns 0 when the gradient is finite, NaN or −∞ where log p would not
 * be finite (NaN also when an entry of the gradient is not).
 */
export function relaxedGradient(r: Relaxed, x: usize, grad: usize): f64 {
  const st = conditionals(r, x, false, 0.0);
  if (st == -Infinity) return st;
  const s = gradientFromProb(r, x, grad);
  return isFinite(s) ? 0.0 : NaN;
}

/** π = p(s | x) into r.prob (and u into r.u) only; returns 0, or −∞ when a block has no possible state. */
export function relaxedConditionals(r: Relaxed, x: usize): f64 {
  return conditionals(r, x, false, 0.0);
}

/** Pointer-level export: log density, gradient into grad (or 0), π left in the header's prob. */
export function relaxedLogp(hdr: usize, x: usize, grad: usize): f64 {
  return relaxedLogDensity(changetype<Relaxed>(hdr), x, grad);
}
