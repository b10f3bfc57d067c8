// Block Gibbs on the joint p(x, s) of the Gaussian integral trick (Martens & Sutskever 2010; DESIGN.md §2):
//
//   s | x  ~  independent Bernoulli(σ(u_i)) per free bit, softmax(u_block) per one-hot block,
//             u = M x + a − ½ d   (relaxedConditionals computes π = p(s | x))
//   x | s  ~  N(Mᵀ s, I)
//
// One sweep: π(x) (added into acc: the Rao–Blackwellised marginal E[π(x)] = p(s_i = 1)), s ~ π,
// x ← Mᵀ s + ε. Chain state (arena memory): [Philox stream][x: f64 × m][s: f64 × nBits] (s as 0/1
// doubles so Mᵀ s is one factor call).

import { Philox, PHILOX_BYTES, uniform32 } from '../core/rng';
import { Relaxed, relaxedConditionals } from '../relax/relaxed';
import { Factor, factorApplyT } from '../relax/factor';
import { normalsInto, bulkWords, bulkWordsAt, uniform32Of } from '../core/rng_normal';

@inline
export function xOffset(): usize {
  return (PHILOX_BYTES + 7) & ~(<usize>7);
}

@inline
export function sOffset(r: Relaxed): usize {
  return xOffset() + (<usize>r.m << 3);
}

export function blockGibbsChainBytes(r: Relaxed): usize {
  return sOffset(r) + (<usize>r.nBits << 3);
}

/** Draws s from π (in r.prob); returns the number of user variables whose state changed. */
export function drawS(r: Relaxed, rng: Philox, s: usize): i32 {
  let changed = 0;
  const prob = r.prob;
  if (r.allFree) {
    // Bit i is block i: the same draws, the words taken from the stream in bulk.
    const n = r.nBits;
    let i = 0;
    while (i < n) {
      const got = bulkWords(rng, n - i);
      for (let j = 0; j < got; j++, i++) {
        const q = s + (<usize>i << 3);
        const bit: f64 = uniform32Of(load<u32>(bulkWordsAt + (<usize>j << 2))) < load<f64>(prob + (<usize>i << 3)) ? 1.0 : 0.0;
        changed += <i32>(bit != load<f64>(q));
        store<f64>(q, bit);
      }
    }
    return changed;
  }
  for (let v = 0; v < r.nBlocks; v++) {
    const b = load<i32>(r.blockStart + (<usize>v << 2));
    if (!load<u8>(r.oneHot + <usize>v)) {
      const q = s + (<usize>b << 3);
      const bit: f64 = uniform32(rng) < load<f64>(prob + (<usize>b << 3)) ? 1.0 : 0.0;
      changed += <i32>(bit != load<f64>(q));
      store<f64>(q, bit);
      continue;
    }
    const e = load<i32>(r.blockStart + (<usize>(v + 1) << 2));
    // π sums to 1 over the block (to rounding): the first state whose cumulative weight passes the
    // target, never a zero-weight state (the last positive one if rounding leaves the target above).
    const target = uniform32(rng);
    let cum = 0.0;
    let pick = -1, lastPos = -1, old = -1;
    for (let k = b; k < e; k++) {
      const p = load<f64>(prob + (<usize>k << 3));
      if (load<f64>(s + (<usize>k << 3)) != 0) old = k;
      if (p > 0) lastPos = k;
      cum += p;
      if (pick < 0 && target < cum && p > 0) pick = k;
    }
    if (pick < 0) pick = lastPos;
    if (pick < 0) abort('block Gibbs: every state of a block has probability 0');
    if (pick != old) {
      changed++;
      if (old >= 0) store<f64>(s + (<usize>old << 3), 0.0);
      store<f64>(s + (<usize>pick << 3), 1.0);
    }
  }
  return changed;
}

/** x ← Mᵀ s + ε, ε ~ N(0, I) from the chain's stream. */
function drawX(r: Relaxed, rng: Philox, x: usize, s: usize): void {
  factorApplyT(changetype<Factor>(r.factor), s, x);
  normalsInto(rng, x, r.m, true);
}

/**
 * A chain's start: s uniformly at random over valid configurations, then x ~ p(x | s). The stream
 * must already be seeded (rngInit) at the start of the chain's memory.
 */
export function blockGibbsChainInit(r: Relaxed, chain: usize): void {
  const rng = changetype<Philox>(chain);
  const x = chain + xOffset(), s = chain + sOffset(r);
  memory.fill(s, 0, <usize>r.nBits << 3);
  for (let v = 0; v < r.nBlocks; v++) {
    const b = load<i32>(r.blockStart + (<usize>v << 2));
    if (load<u8>(r.oneHot + <usize>v)) {
      const K = load<i32>(r.blockStart + (<usize>(v + 1) << 2)) - b;
      // A state with bias −∞ is impossible: choose among the possible ones.
      let possible = 0;
      for (let k = 0; k < K; k++) possible += <i32>(load<f64>(r.bias + (<usize>(b + k) << 3)) != -Infinity);
      if (possible == 0) abort('block Gibbs: a variable has no possible state');
      let t = min<i32>(<i32>(uniform32(rng) * <f64>possible), possible - 1);
      for (let k = 0; k < K; k++) {
        if (load<f64>(r.bias + (<usize>(b + k) << 3)) == -Infinity) continue;
        if (t-- == 0) {
          store<f64>(s + (<usize>(b + k) << 3), 1.0);
          break;
        }
      }
    } else {
      store<f64>(s + (<usize>b << 3), uniform32(rng) < 0.5 ? 1.0 : 0.0);
    }
  }
  drawX(r, rng, x, s);
}

/** acc += prob (n entries). */
export function addInto(acc: usize, prob: usize, n: i32): void {
  let i = 0;
  for (; i + 1 < n; i += 2) {
    const q = acc + (<usize>i << 3);
    v128.store(q, f64x2.add(v128.load(q), v128.load(prob + (<usize>i << 3))));
  }
  if (i < n) {
    const q = acc + (<usize>i << 3);
    store<f64>(q, load<f64>(q) + load<f64>(prob + (<usize>i << 3)));
  }
}

/**
 * Runs `sweeps` sweeps. acc: f64 per bit to add π(x) into before each s-draw (or 0).
 * Returns the number of variable changes in s over all sweeps.
 */
export function blockGibbsSweeps(r: Relaxed, chain: usize, sweeps: i32, acc: usize): f64 {
  const rng = changetype<Philox>(chain);
  const x = chain + xOffset(), s = chain + sOffset(r);
  const n = r.nBits;
  let changed: f64 = 0;
  for (let t = 0; t < sweeps; t++) {
    const st = relaxedConditionals(r, x);
    if (st == -Infinity) abort('block Gibbs: p(x) is 0 (a variable with no possible state)');
    if (acc) addInto(acc, r.prob, n);
    changed += <f64>drawS(r, rng, s);
    drawX(r, rng, x, s);
  }
  return changed;
}

// Pointer-level entry points.
export function blockGibbsStateBytes(relaxed: usize): usize {
  return blockGibbsChainBytes(changetype<Relaxed>(relaxed));
}

export function blockGibbsXOffset(): usize {
  return xOffset();
}

export function blockGibbsInit(relaxed: usize, chain: usize): void {
  blockGibbsChainInit(changetype<Relaxed>(relaxed), chain);
}

export function blockGibbsStep(relaxed: usize, chain: usize, sweeps: i32, acc: usize): f64 {
  return blockGibbsSweeps(changetype<Relaxed>(relaxed), chain, sweeps, acc);
}
