// Chib (1995) for the sequential Gibbs sampler (Zhang §5): p(s*) = Σ_s p(s) K(s → s*), K the
// systematic-scan kernel of assembly/gibbs.ts (blocks in order), K(s → s*) = Π_v p(s*_v | s*_{<v}, s_{>v}).
// The bindings (runChibLogZ in bindings/logz.ts) average K(s_t → s*) over a chain's samples.
//
// Chain state layout: the Gibbs sampler's ([Philox, 64 B][s: u8 per bit]).

import { PHILOX_BYTES } from '../core/rng';
import { PairwiseForm, localField } from '../core/pairwise';
import { gibbsSweeps } from '../samplers/gibbs';

/** log K(s → s*) for the chain's state s; work: u8 per bit (a copy), scratch: f64 per bit of the largest block. */
function chibLogKernel(m: PairwiseForm, s: usize, ref: usize, work: usize, scratch: usize): f64 {
  memory.copy(work, s, <usize>m.nBits);
  let lp: f64 = 0;
  for (let v = 0; v < m.nBlocks; v++) {
    const b = load<i32>(m.blockStart + (<usize>v << 2));
    if (!load<u8>(m.oneHot + <usize>v)) {
      const u = localField(m, work, b);
      const r = load<u8>(ref + <usize>b);
      // log σ(u) = −softplus(−u), log(1 − σ(u)) = −softplus(u)
      const z = r ? -u : u;
      lp -= max(z, 0.0) + Math.log1p(Math.exp(-Math.abs(z)));
      store<u8>(work + <usize>b, r);
      continue;
    }
    const K = load<i32>(m.blockStart + (<usize>(v + 1) << 2)) - b;
    let top = -Infinity;
    let kStar = 0;
    for (let k = 0; k < K; k++) {
      const u = localField(m, work, b + k);
      store<f64>(scratch + (<usize>k << 3), u);
      if (u > top) top = u;
      if (load<u8>(ref + <usize>(b + k))) kStar = k;
    }
    if (top == -Infinity) return -Infinity;
    let total: f64 = 0;
    for (let k = 0; k < K; k++) total += Math.exp(load<f64>(scratch + (<usize>k << 3)) - top);
    lp += load<f64>(scratch + (<usize>kStar << 3)) - top - Math.log(total);
    for (let k = 0; k < K; k++) store<u8>(work + <usize>(b + k), k == kStar ? 1 : 0);
  }
  return lp;
}

/**
 * nSamples times: `thin` Gibbs sweeps of the chain (state as gibbsInit makes it), then
 * out[t] = log K(s_t → r) for reference r = t mod nRefs of the nRefs references (u8 per bit each,
 * valid configurations, nRefs × nBits bytes). The bindings pass a symmetric model's mirror images
 * of s* there: each has p(s*)'s probability, so the mean over t stays unbiased for p(s*), and
 * chains that stay in one of the model's mirror-image modes still meet s*'s image in theirs.
 * work: u8 per bit; scratch: f64 per bit of the largest block.
 */
export function chibRun(model: usize, chain: usize, refs: usize, nRefs: i32, nSamples: i32, thin: i32, work: usize, scratch: usize, out: usize): void {
  const m = changetype<PairwiseForm>(model);
  const s = chain + PHILOX_BYTES;
  for (let t = 0; t < nSamples; t++) {
    gibbsSweeps(m, chain, thin, 0, scratch);
    const ref = refs + <usize>(t % nRefs) * <usize>m.nBits;
    store<f64>(out + (<usize>t << 3), chibLogKernel(m, s, ref, work, scratch));
  }
}
