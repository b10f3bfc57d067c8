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

/** log(1 + e^u) without overflow: max(u, 0) + log1p(e^−|u|). */
@inline
function softplus(u: f64): f64 {
  return max(u, 0.0) + Math.log1p(Math.exp(-Math.abs(u)));
}

/** σ(u) = 1/(1 + e^−u), stable at both ends. */
@inline
export function sigmoid(u: f64): f64 {
  if (u >= 0) return 1.0 / (1.0 + Math.exp(-u));
  const e = Math.exp(u);
  return e / (1.0 + e);
}

/**
 * log p(x) up to its constant; fills π into r.prob and, when grad ≠ 0, ∇ log p(x) into grad (f64 × m).
 * x and grad must not overlap.
 */
export function relaxedLogDensity(r: Relaxed, x: usize, grad: usize): f64 {
  const n = r.nBits, m = r.m;
  const f = changetype<Factor>(r.factor);
  factorApply(f, x, r.u);
  let lp = 0.0;
  for (let i = 0; i < m; i++) {
    const xi = load<f64>(x + (<usize>i << 3));
    lp -= 0.5 * xi * xi;
  }
  for (let i = 0; i < n; i++) {
    const q = r.u + (<usize>i << 3);
    store<f64>(q, load<f64>(q) + load<f64>(r.bias + (<usize>i << 3)));
  }
  if (r.allFree) {
    for (let i = 0; i < n; i++) {
      const u = load<f64>(r.u + (<usize>i << 3));
      lp += softplus(u);
      store<f64>(r.prob + (<usize>i << 3), sigmoid(u));
    }
  } else {
    for (let v = 0; v < r.nBlocks; v++) {
      const b = load<i32>(r.blockStart + (<usize>v << 2));
      if (!load<u8>(r.oneHot + <usize>v)) {
        const u = load<f64>(r.u + (<usize>b << 3));
        lp += softplus(u);
        store<f64>(r.prob + (<usize>b << 3), sigmoid(u));
        continue;
      }
      const e = load<i32>(r.blockStart + (<usize>(v + 1) << 2));
      let top = -Infinity;
      for (let k = b; k < e; k++) top = max(top, load<f64>(r.u + (<usize>k << 3)));
      if (top == -Infinity) return -Infinity; // every state of the block impossible
      let total = 0.0;
      for (let k = b; k < e; k++) {
        const w = Math.exp(load<f64>(r.u + (<usize>k << 3)) - top);
        store<f64>(r.prob + (<usize>k << 3), w);
        total += w;
      }
      lp += top + Math.log(total);
      const inv = 1.0 / total;
      for (let k = b; k < e; k++) store<f64>(r.prob + (<usize>k << 3), load<f64>(r.prob + (<usize>k << 3)) * inv);
    }
  }
  if (grad) {
    factorApplyT(f, r.prob, grad);
    for (let i = 0; i < m; i++) {
      const q = grad + (<usize>i << 3);
      store<f64>(q, load<f64>(q) - load<f64>(x + (<usize>i << 3)));
    }
  }
  return lp;
}

/** Pointer-level export: log density, gradient into grad (or 0), π left in the header's prob. */
export function relaxedLogp(hdr: usize, x: usize, grad: usize): f64 {
  return relaxedLogDensity(changetype<Relaxed>(hdr), x, grad);
}
