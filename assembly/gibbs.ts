// Sequential single-site Gibbs on the discrete model p(s): a systematic scan over the blocks, each
// redrawn from its conditional — Bernoulli(σ(u)) for a free bit, softmax over a one-hot block.
//
// Chain state layout (one chain, arena memory): [Philox stream, 64 B][s: u8 per bit].
// While accumulating, the conditional probabilities p(s_i = 1 | s_−i) are summed into acc
// (Rao–Blackwellised marginals: lower variance than counting sampled bits).

import { Philox, PHILOX_BYTES, uniform32 } from './rng';
import { PairwiseForm, localField } from './pairwise';

export function gibbsChainBytes(m: PairwiseForm): usize {
  return PHILOX_BYTES + <usize>m.nBits;
}

/** Uniformly random valid starting configuration, drawn from the chain's own stream. */
export function gibbsChainInit(m: PairwiseForm, chain: usize): void {
  const r = changetype<Philox>(chain);
  const s = chain + PHILOX_BYTES;
  memory.fill(s, 0, <usize>m.nBits);
  for (let v = 0; v < m.nBlocks; v++) {
    const b = load<i32>(m.blockStart + (<usize>v << 2));
    if (load<u8>(m.oneHot + <usize>v)) {
      const K = load<i32>(m.blockStart + (<usize>(v + 1) << 2)) - b;
      const k = min<i32>(<i32>(uniform32(r) * <f64>K), K - 1);
      store<u8>(s + <usize>(b + k), 1);
    } else {
      store<u8>(s + <usize>b, uniform32(r) < 0.5 ? 1 : 0);
    }
  }
}

/**
 * Runs `sweeps` full scans. acc: f64 per bit to add conditional probabilities into, or 0.
 * scratch: f64 per bit of the largest block. Returns the number of variables whose state changed.
 */
export function gibbsSweeps(m: PairwiseForm, chain: usize, sweeps: i32, acc: usize, scratch: usize): f64 {
  const r = changetype<Philox>(chain);
  const s = chain + PHILOX_BYTES;
  let changed: f64 = 0;
  if (m.allFree) {
    const n = m.nBits;
    for (let t = 0; t < sweeps; t++) {
      let c = 0;
      for (let i = 0; i < n; i++) {
        const p = 1.0 / (1.0 + Math.exp(-localField(m, s, i)));
        const bit: u8 = uniform32(r) < p ? 1 : 0;
        c += <i32>(bit != load<u8>(s + <usize>i));
        store<u8>(s + <usize>i, bit);
        if (acc) store<f64>(acc + (<usize>i << 3), load<f64>(acc + (<usize>i << 3)) + p);
      }
      changed += <f64>c;
    }
    return changed;
  }
  for (let t = 0; t < sweeps; t++) {
    for (let v = 0; v < m.nBlocks; v++) {
      const b = load<i32>(m.blockStart + (<usize>v << 2));
      if (!load<u8>(m.oneHot + <usize>v)) {
        const p = 1.0 / (1.0 + Math.exp(-localField(m, s, b)));
        const bit: u8 = uniform32(r) < p ? 1 : 0;
        if (bit != load<u8>(s + <usize>b)) changed += 1;
        store<u8>(s + <usize>b, bit);
        if (acc) store<f64>(acc + (<usize>b << 3), load<f64>(acc + (<usize>b << 3)) + p);
        continue;
      }
      changed += <f64>oneHotUpdate(m, s, r, b, load<i32>(m.blockStart + (<usize>(v + 1) << 2)) - b, acc, scratch);
    }
  }
  return changed;
}

/** Softmax update of the one-hot block at bits b … b+K−1; returns 1 if its state changed. */
function oneHotUpdate(m: PairwiseForm, s: usize, r: Philox, b: i32, K: i32, acc: usize, scratch: usize): i32 {
  // Within-block entries of W are not stored, so each field sees only other blocks.
  let old = 0;
  let top = -Infinity;
  for (let k = 0; k < K; k++) {
    if (load<u8>(s + <usize>(b + k))) old = k;
    const u = localField(m, s, b + k);
    store<f64>(scratch + (<usize>k << 3), u);
    if (u > top) top = u;
  }
  // Every state impossible given the neighbours: the chain is outside the support (a random start
  // in a model with zeros). Move uniformly until it gets in; from then on this cannot happen.
  const lost = top == -Infinity;
  let total = 0.0;
  for (let k = 0; k < K; k++) {
    const w = lost ? 1.0 : Math.exp(load<f64>(scratch + (<usize>k << 3)) - top);
    store<f64>(scratch + (<usize>k << 3), w);
    total += w;
  }
  const target = uniform32(r) * total;
  let pick = K - 1;
  let cum = 0.0;
  for (let k = 0; k < K; k++) {
    cum += load<f64>(scratch + (<usize>k << 3));
    if (target < cum) {
      pick = k;
      break;
    }
  }
  // The last state can carry zero weight only through rounding; never pick a zero-weight state.
  while (load<f64>(scratch + (<usize>pick << 3)) == 0.0) pick--;
  store<u8>(s + <usize>(b + old), 0);
  store<u8>(s + <usize>(b + pick), 1);
  if (acc) {
    const inv = 1.0 / total;
    for (let k = 0; k < K; k++) {
      const q = acc + (<usize>(b + k) << 3);
      store<f64>(q, load<f64>(q) + load<f64>(scratch + (<usize>k << 3)) * inv);
    }
  }
  return <i32>(pick != old);
}
