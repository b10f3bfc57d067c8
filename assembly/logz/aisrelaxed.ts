// AIS on the relaxed joint p(x, s) of the Gaussian integral trick (DESIGN.md §2) with block-Gibbs
// transitions (Martens & Sutskever's sweep, assembly/blockgibbs.ts). Tempering the canonical form
// by β multiplies W + D by β, so M_β = √β M (the same factor, scaled) and the bias a − ½d by β:
//
//   f_β(x, s) = 1[s in the support of the biases] · exp(−½|x|² + √β sᵀM x + β (a − ½d)ᵀs),
//
// whose x-integral is (2π)^{m/2} exp(β (aᵀs + ½ sᵀWs)) — sᵀDs = dᵀs on bits and W's within-block
// entries vanish on valid s — so Z_β = (2π)^{m/2} Z_β(discrete) and the ratio Z_1/Z_0 is the
// discrete model's: log Z_0 is the same as on the discrete path. f_0 is x ~ N(0, I) with s uniform
// over the biases' support. The weight gains log f_{β_t} − log f_{β_{t−1}} at the current (x, s):
// (√β_t − √β_{t−1}) sᵀM x + (β_t − β_{t−1}) (a − ½d)ᵀs. A transition at β: u = √β M x + β (a − ½d),
// s ~ p(s | x) (independent bits, softmax blocks), then x ← √β Mᵀs + ε. One factor product each way
// per temperature, as a block-Gibbs sweep.
//
// Chain state: the block-Gibbs layout ([Philox][x: f64 × m][s: f64 × nBits]).

import { Philox } from '../core/rng';
import { Relaxed, sigmoid } from '../relax/relaxed';
import { Factor, factorApply, factorApplyT } from '../relax/factor';
import { blockGibbsChainBytes, blockGibbsChainInit, drawS } from '../samplers/blockgibbs';
import { normalsInto } from '../core/rng_normal';

export function aisRelaxedStateBytes(relaxed: usize): usize {
  return blockGibbsChainBytes(changetype<Relaxed>(relaxed));
}

/** p(s | x) at β into r.prob, from r.u = M x: u ← √β M x + β b (b = −∞ stays −∞ for β > 0). */
function conditional(r: Relaxed, sb: f64, beta: f64): void {
  const u = r.u, prob = r.prob, bias = r.bias;
  for (let i = 0; i < r.nBits; i++) {
    const q = u + (<usize>i << 3);
    store<f64>(q, sb * load<f64>(q) + beta * load<f64>(bias + (<usize>i << 3)));
  }
  for (let v = 0; v < r.nBlocks; v++) {
    const b = load<i32>(r.blockStart + (<usize>v << 2));
    if (!load<u8>(r.oneHot + <usize>v)) {
      store<f64>(prob + (<usize>b << 3), sigmoid(load<f64>(u + (<usize>b << 3))));
      continue;
    }
    const e = load<i32>(r.blockStart + (<usize>(v + 1) << 2));
    let top = -Infinity;
    for (let k = b; k < e; k++) top = max(top, load<f64>(u + (<usize>k << 3)));
    if (top == -Infinity) abort('relaxed AIS: every state of a block has probability 0');
    let total: f64 = 0;
    for (let k = b; k < e; k++) {
      const w = Math.exp(load<f64>(u + (<usize>k << 3)) - top);
      store<f64>(prob + (<usize>k << 3), w);
      total += w;
    }
    for (let k = b; k < e; k++) store<f64>(prob + (<usize>k << 3), load<f64>(prob + (<usize>k << 3)) / total);
  }
}

/**
 * One AIS run through betas[0 … nBetas−1] (0 → 1). The stream at the chain's start must be seeded.
 * energies: f64 × nBetas or 0; entry t (t ≥ 1) receives d log f_β / dβ at β_t for the state the
 * weight update of step t saw (sᵀMx / (2√β) + bᵀs), entry 0 a copy of entry 1 (the derivative is
 * unbounded at β = 0). Returns log w (E[w] = Z_1/Z_0).
 */
export function aisRelaxedRun(relaxed: usize, chain: usize, betas: usize, nBetas: i32, sweeps: i32, energies: usize): f64 {
  const r = changetype<Relaxed>(relaxed);
  const f = changetype<Factor>(r.factor);
  const rng = changetype<Philox>(chain);
  const x = chain + ((PHILOX_OFFSET + 7) & ~(<usize>7));
  const s = x + (<usize>r.m << 3);
  blockGibbsChainInit(r, chain); // s uniform over the biases' support (x redrawn below)
  normalsInto(rng, x, r.m, false); // x | s at β = 0
  let logw: f64 = 0;
  let prev = load<f64>(betas);
  for (let t = 1; t < nBetas; t++) {
    const beta = load<f64>(betas + (<usize>t << 3));
    factorApply(f, x, r.u);
    let sMx: f64 = 0, bs: f64 = 0;
    for (let i = 0; i < r.nBits; i++) {
      if (load<f64>(s + (<usize>i << 3)) == 0) continue; // never −∞ · 0
      sMx += load<f64>(r.u + (<usize>i << 3));
      bs += load<f64>(r.bias + (<usize>i << 3));
    }
    logw += (Math.sqrt(beta) - Math.sqrt(prev)) * sMx + (beta - prev) * bs;
    if (energies) {
      store<f64>(energies + (<usize>t << 3), sMx / (2 * Math.sqrt(beta)) + bs);
      if (t == 1) store<f64>(energies, load<f64>(energies + 8));
    }
    prev = beta;
    if (logw == -Infinity || t == nBetas - 1) continue;
    const sb = Math.sqrt(beta);
    for (let sw = 0; sw < sweeps; sw++) {
      if (sw > 0) factorApply(f, x, r.u);
      conditional(r, sb, beta);
      drawS(r, rng, s);
      factorApplyT(f, s, x);
      for (let i = 0; i < r.m; i++) store<f64>(x + (<usize>i << 3), sb * load<f64>(x + (<usize>i << 3)));
      normalsInto(rng, x, r.m, true);
    }
  }
  return logw;
}

const PHILOX_OFFSET: usize = offsetof<Philox>();
