// Parallel tempering on the factor graph itself (factors of any arity, any cardinality): the
// replica exchange of tempering.ts with factor-graph Gibbs scans (factorgibbs.ts) at each β and
// E(x) = Σ_f θ_f(x) (ais_fg.ts). Same state layout, swaps, stepping-stone sums and ladder
// conventions; a slot is the factor-graph Gibbs chain ([Philox][x: i32 per variable]).
//
// β = 0 is uniform over every configuration (hard zeros included), so Z_0 = Π_v K_v: its scan draws
// every variable uniformly (adding 1/K into acc if asked), where β·(−∞) would be NaN.

import { Philox, PHILOX_BYTES, uniform32 } from '../core/rng';
import { FactorGraph, cardOf } from '../core/factorgraph';
import { fgChainBytes, fgChainInit, fgSweeps } from './factorgibbs';
import { fgEnergy } from '../logz/ais_fg';
import { Tempering, slotAt, temperingLayout, temperingLayoutBytes, temperingGaps, temperingExchange } from './tempering';

@inline
function slotBytesFg(g: FactorGraph): usize {
  return (fgChainBytes(g) + 15) & ~(<usize>15);
}

export function ptFgStateBytes(hdr: usize, R: i32): usize {
  const g = changetype<FactorGraph>(hdr);
  return temperingLayoutBytes(R, <usize>g.maxCard << 3, slotBytesFg(g));
}

/** As ptInit (tempering.ts) on the factor graph: every replica uniform over all configurations. */
export function ptFgInit(hdr: usize, st: usize, R: i32, betas: usize, seedLo: u32, seedHi: u32, chain: u32, tag: u32): void {
  const g = changetype<FactorGraph>(hdr);
  const t = temperingLayout(st, R, betas, <usize>g.maxCard << 3, slotBytesFg(g), seedLo, seedHi, chain, tag);
  for (let k = 0; k < R; k++) fgChainInit(g, t.slots + <usize>k * t.slotBytes);
  for (let k = 0; k < R; k++) store<f64>(t.energy + (<usize>k << 3), fgEnergy(g, slotAt(t, k) + PHILOX_BYTES));
}

/** One scan at β = 0: every variable uniform over its states. */
function uniformScan(g: FactorGraph, slot: usize, acc: usize): f64 {
  const r = changetype<Philox>(slot);
  const x = slot + PHILOX_BYTES;
  let changed: f64 = 0;
  let row = acc;
  for (let v = 0; v < g.n; v++) {
    const K = cardOf(g, v);
    const q = x + (<usize>v << 2);
    const pick = K == 1 ? 0 : min<i32>(<i32>(uniform32(r) * <f64>K), K - 1);
    if (pick != load<i32>(q)) changed += 1;
    store<i32>(q, pick);
    if (acc) {
      for (let k = 0; k < K; k++) store<f64>(row + (<usize>k << 3), load<f64>(row + (<usize>k << 3)) + 1.0 / <f64>K);
      row += <usize>K << 3;
    }
  }
  return changed;
}

/** As ptStep: `sweeps` rounds of (a scan of every replica, then neighbour swaps); acc: f64 per (variable, state). */
export function ptFgStep(hdr: usize, st: usize, sweeps: i32, accumulate: i32, acc: usize): f64 {
  const g = changetype<FactorGraph>(hdr);
  const t = changetype<Tempering>(st);
  const R = t.R;
  let changed: f64 = 0;
  for (let it = 0; it < sweeps; it++) {
    for (let k = 0; k < R; k++) {
      const slot = slotAt(t, k);
      const beta = load<f64>(t.betas + (<usize>k << 3));
      const into = accumulate && k == R - 1 ? acc : 0;
      changed += beta == 0 ? uniformScan(g, slot, into) : fgSweeps(g, slot, 1, into, t.scratch, beta);
      const e = fgEnergy(g, slot + PHILOX_BYTES);
      store<f64>(t.energy + (<usize>k << 3), e);
      store<f64>(t.energyAcc + (<usize>k << 3), load<f64>(t.energyAcc + (<usize>k << 3)) + e);
    }
    if (accumulate) temperingGaps(t);
    temperingExchange(t);
  }
  return changed;
}
