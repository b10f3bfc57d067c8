// Parallel tempering with HMC replicas on the relaxed density p_β(x) (s summed out, DESIGN.md §2):
// replica k samples log f_βk(x) = −½|x|² + Σ softplus / logsumexp(√β_k M x + β_k b) (ais_hmc.ts) by
// HMC with identity mass and its own step size ε_k; neighbours swap with probability
// min(1, f_βk(x_{k+1}) f_βk+1(x_k) / (f_βk(x_k) f_βk+1(x_{k+1}))). Z_β = (2π)^{m/2} Z_β(discrete), so
// the stepping-stone ratios are the discrete model's, and the β = 1 replica's π = p(s | x) gives
// Rao–Blackwellised marginals of the model.
//
// The state layout, swap counters, stepping-stone sums and ladder are tempering.ts's. Since
// log f_β(x) is not linear in β, "energy" E_k here is the secant (log f_βk+1(x_k) − log f_βk(x_k)) /
// (β_k+1 − β_k), so exp((β_k+1 − β_k)(E_k − shift_k)) is the stepping-stone term as in the discrete
// kernel (E_{R−1} = d log f_β / dβ at β = 1, for the record). A slot is [Philox][x: f64 × m].
// Scratch: ε per temperature (f64 × R), then p, xp, gp, grad (f64 × m) and M x (f64 × nBits).

import { Philox, PHILOX_BYTES, uniform32 } from '../core/rng';
import { Relaxed } from '../relax/relaxed';
import { Factor, factorApply } from '../relax/factor';
import { Tempering, slotAt, swapSlots, temperingLayout, temperingLayoutBytes, temperingGaps } from './tempering';
import { softSum, logF, hmcMove, adaptLogEps, lastAccepted, lastLogAccept } from '../logz/ais_hmc';
import { normalsInto } from '../core/rng_normal';

@inline
function slotBytesRelaxed(r: Relaxed): usize {
  return (PHILOX_BYTES + (<usize>r.m << 3) + 15) & ~(<usize>15);
}

@inline
function scratchBytes(r: Relaxed, R: i32): usize {
  return (<usize>(R + 4 * r.m + r.nBits)) << 3;
}

export function ptRelaxedStateBytes(relaxed: usize, R: i32): usize {
  const r = changetype<Relaxed>(relaxed);
  return temperingLayoutBytes(R, scratchBytes(r, R), slotBytesRelaxed(r));
}

/** ε per temperature (f64 × R), for the bindings: set before sampling, adapted during warm-up. */
export function ptRelaxedStepSizes(st: usize): usize {
  return changetype<Tempering>(st).scratch;
}

@inline
function betaAt(t: Tempering, k: i32): f64 {
  return load<f64>(t.betas + (<usize>k << 3));
}

/** log f_β(x) without −½|x|² from uRaw = M x. */
@inline
function soft(r: Relaxed, uRaw: usize, beta: f64): f64 {
  return softSum(r, uRaw, Math.sqrt(beta), beta);
}

/**
 * As ptInit (tempering.ts): each replica starts at x ~ N(0, I) (f_0's draw) from its own stream; ε_k
 * starts at eps0.
 */
export function ptRelaxedInit(relaxed: usize, st: usize, R: i32, betas: usize, seedLo: u32, seedHi: u32, chain: u32, tag: u32, eps0: f64): void {
  const r = changetype<Relaxed>(relaxed);
  const t = temperingLayout(st, R, betas, scratchBytes(r, R), slotBytesRelaxed(r), seedLo, seedHi, chain, tag);
  for (let k = 0; k < R; k++) {
    store<f64>(t.scratch + (<usize>k << 3), eps0);
    const slot = t.slots + <usize>k * t.slotBytes;
    normalsInto(changetype<Philox>(slot), slot + PHILOX_BYTES, r.m, false);
  }
  energies(r, t, 0);
}

/** E_k for every temperature (see the header); with acc ≠ 0 adds the β = 1 replica's π into acc. */
function energies(r: Relaxed, t: Tempering, acc: usize): void {
  const uRaw = t.scratch + ((<usize>(t.R + 4 * r.m)) << 3);
  for (let k = 0; k < t.R; k++) {
    factorApply(changetype<Factor>(r.factor), slotAt(t, k) + PHILOX_BYTES, uRaw);
    const b = betaAt(t, k);
    let e: f64;
    if (k + 1 < t.R) {
      const b1 = betaAt(t, k + 1);
      e = (soft(r, uRaw, b1) - soft(r, uRaw, b)) / (b1 - b);
    } else {
      soft(r, uRaw, b); // π at β = 1 in r.prob
      e = 0;
      const sb = Math.sqrt(b);
      for (let i = 0; i < r.nBits; i++) {
        const pi = load<f64>(r.prob + (<usize>i << 3));
        if (acc) store<f64>(acc + (<usize>i << 3), load<f64>(acc + (<usize>i << 3)) + pi);
        if (pi == 0) continue; // never 0 · −∞
        e += pi * (load<f64>(uRaw + (<usize>i << 3)) / (2 * sb) + load<f64>(r.bias + (<usize>i << 3)));
      }
    }
    store<f64>(t.energy + (<usize>k << 3), e);
    store<f64>(t.energyAcc + (<usize>k << 3), load<f64>(t.energyAcc + (<usize>k << 3)) + e);
  }
}

/** One round of neighbour swaps of the current parity, on the exact ratio of f's; flips the parity. */
function exchange(r: Relaxed, t: Tempering): void {
  const uRaw = t.scratch + ((<usize>(t.R + 4 * r.m)) << 3);
  const swapRng = changetype<Philox>(t.swapRng);
  const f = changetype<Factor>(r.factor);
  for (let k = t.parity; k + 1 < t.R; k += 2) {
    const b = betaAt(t, k), b1 = betaAt(t, k + 1);
    factorApply(f, slotAt(t, k) + PHILOX_BYTES, uRaw);
    let x = soft(r, uRaw, b1) - soft(r, uRaw, b);
    factorApply(f, slotAt(t, k + 1) + PHILOX_BYTES, uRaw);
    x += soft(r, uRaw, b) - soft(r, uRaw, b1);
    store<f64>(t.attempts + (<usize>k << 3), load<f64>(t.attempts + (<usize>k << 3)) + 1);
    if (x >= 0 || uniform32(swapRng) < Math.exp(x)) swapSlots(t, k);
  }
  t.parity ^= 1;
}

/**
 * `sweeps` rounds of (one HMC transition of `leapfrog` steps for every replica, then neighbour
 * swaps). accumulate: the β = 1 replica's π into acc (f64 per bit) and the stepping-stone terms into
 * the gap sums. adaptTarget > 0: each ε_k takes a Robbins–Monro step towards that acceptance rate
 * (warm-up only). Returns the number of accepted HMC transitions.
 */
export function ptRelaxedStep(relaxed: usize, st: usize, sweeps: i32, leapfrog: i32, accumulate: i32, acc: usize, adaptTarget: f64): f64 {
  const r = changetype<Relaxed>(relaxed);
  const t = changetype<Tempering>(st);
  const m = r.m;
  const mb = <usize>m << 3;
  const p = t.scratch + (<usize>t.R << 3), xp = p + mb, gp = xp + mb, grad = gp + mb;
  const uRaw = grad + mb;
  let accepted: f64 = 0;
  for (let it = 0; it < sweeps; it++) {
    for (let k = 0; k < t.R; k++) {
      const slot = slotAt(t, k);
      const x = slot + PHILOX_BYTES;
      const beta = betaAt(t, k), sb = Math.sqrt(beta);
      const q = t.scratch + (<usize>k << 3);
      const lp = logF(r, x, grad, uRaw, sb, beta);
      hmcMove(r, changetype<Philox>(slot), x, grad, lp, sb, beta, load<f64>(q), leapfrog, p, xp, gp, uRaw);
      if (lastAccepted) accepted += 1;
      if (adaptTarget > 0) store<f64>(q, Math.exp(adaptLogEps(Math.log(load<f64>(q)), lastLogAccept, adaptTarget)));
    }
    energies(r, t, accumulate ? acc : 0);
    if (accumulate) temperingGaps(t);
    exchange(r, t);
  }
  return accepted;
}
