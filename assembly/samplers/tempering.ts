// Parallel tempering (replica exchange) on the discrete model: R replicas of the state, replica k
// drawn from p_βk(s) ∝ exp(β_k E(s)), E(s) = aᵀs + ½ sᵀWs, with 0 ≤ β_0 < … < β_{R−1} = 1. Every
// sweep updates each replica by single-site Gibbs at its β, then tries swaps between neighbouring
// temperatures (even pairs, then odd pairs on the next sweep: the deterministic even–odd scheme),
// accepting a swap of k and k+1 with probability min(1, exp((β_{k+1} − β_k)(E_k − E_{k+1}))).
//
// Replicas never move in memory: perm[k] names the slot holding temperature k, and a swap exchanges
// two entries of perm. Each slot is [Philox stream, 64 B][s: u8 per bit], the Gibbs chain layout.
//
// While accumulating: the β = 1 replica's conditional probabilities go into acc (Rao–Blackwellised
// marginals), and gapAcc_k sums exp((β_{k+1} − β_k)(E_k − shift_k)) for the stepping-stone
// estimate of log Z_{k+1} − log Z_k (the shift, set by the bindings from warm-up energies, keeps
// the exponentials in range). energyAcc sums E at each temperature at every sweep, always.
//
// β = 0 is uniform over every one-hot configuration, zero potentials included: E = −∞ there gives
// exp(β_1 E) = 0 in the stepping-stone ratio, so Z_0 = Π_v K_v stays the exact reference.

import { Philox, PHILOX_BYTES, rngInit, uniform32 } from '../core/rng';
import { PairwiseForm, localField } from '../core/pairwise';
import { gibbsChainInit, placeOneHot } from './gibbs';

@unmanaged
export class Tempering {
  R: i32;
  parity: i32;
  slotBytes: usize;
  slots: usize; // R slots
  betas: usize; // f64[R]
  perm: usize; // i32[R]
  energy: usize; // f64[R], at temperature k after the last sweep
  energyAcc: usize; // f64[R]
  accepts: usize; // f64[R − 1]
  attempts: usize; // f64[R − 1]
  shift: usize; // f64[R − 1]
  gapAcc: usize; // f64[R − 1]
  scratch: usize; // f64[maxBlock]
  swapRng: usize; // Philox
}

@inline
function round16(x: usize): usize {
  return (x + 15) & ~(<usize>15);
}

function slotBytes(m: PairwiseForm): usize {
  return round16(PHILOX_BYTES + <usize>m.nBits);
}

export function temperingBytes(m: PairwiseForm, R: i32): usize {
  return temperingLayoutBytes(R, <usize>m.maxBlock << 3, slotBytes(m));
}

/**
 * Lays out the state at st (temperingBytes of zeroed memory, or the factor-graph / relaxed
 * variants'), copies the ladder and seeds the swap stream (seed, chain, tag) and each slot's stream
 * (seed, chain, tag + 1 + k); the caller draws the replicas' starts.
 */
export function temperingLayout(st: usize, R: i32, betas: usize, scratchBytes: usize, slotSize: usize, seedLo: u32, seedHi: u32, chain: u32, tag: u32): Tempering {
  const t = changetype<Tempering>(st);
  const arr = round16(<usize>R << 3);
  let p = st + round16(offsetof<Tempering>());
  t.R = R;
  t.parity = 0;
  t.betas = p; p += arr;
  t.perm = p; p += arr;
  t.energy = p; p += arr;
  t.energyAcc = p; p += arr;
  t.accepts = p; p += arr;
  t.attempts = p; p += arr;
  t.shift = p; p += arr;
  t.gapAcc = p; p += arr;
  t.scratch = p; p += round16(scratchBytes);
  t.swapRng = p; p += round16(PHILOX_BYTES);
  t.slots = p;
  t.slotBytes = slotSize;
  memory.copy(t.betas, betas, <usize>R << 3);
  rngInit(changetype<Philox>(t.swapRng), seedLo, seedHi, chain, tag);
  for (let k = 0; k < R; k++) {
    store<i32>(t.perm + (<usize>k << 2), k);
    rngInit(changetype<Philox>(t.slots + <usize>k * t.slotBytes), seedLo, seedHi, chain, tag + 1 + <u32>k);
  }
  return t;
}

/** Bytes of a state laid out by temperingLayout. */
export function temperingLayoutBytes(R: i32, scratchBytes: usize, slotSize: usize): usize {
  const arr = round16(<usize>R << 3);
  return round16(offsetof<Tempering>()) + 8 * arr + round16(scratchBytes) + round16(PHILOX_BYTES) + <usize>R * slotSize;
}

/**
 * Lays out the state at st (temperingBytes of zeroed memory), copies the ladder and draws every
 * replica's start uniformly from its own stream (seed, chain, tag + 1 + k); swaps use (seed, chain, tag).
 */
export function temperingInit(m: PairwiseForm, st: usize, R: i32, betas: usize, seedLo: u32, seedHi: u32, chain: u32, tag: u32): void {
  const t = temperingLayout(st, R, betas, <usize>m.maxBlock << 3, slotBytes(m), seedLo, seedHi, chain, tag);
  for (let k = 0; k < R; k++) gibbsChainInit(m, t.slots + <usize>k * t.slotBytes);
  for (let k = 0; k < R; k++) store<f64>(t.energy + (<usize>k << 3), energyOf(m, slotAt(t, k) + PHILOX_BYTES));
}

/** Address of one of the state's arrays, for the bindings (0 β, 1 perm, 2 E, 3 ΣE, 4 accepts, 5 attempts, 6 shift, 7 gap sums). */
export function temperingArray(st: usize, which: i32): usize {
  return load<usize>(st + offsetof<Tempering>('betas') + (<usize>which << alignof<usize>()));
}

/** Address of the slot holding temperature k (its stream, then its bits). */
@inline
export function slotAt(t: Tempering, k: i32): usize {
  return t.slots + <usize>load<i32>(t.perm + (<usize>k << 2)) * t.slotBytes;
}

/** E(s) = aᵀs + ½ sᵀWs over set bits (−∞ where s has a zero potential). */
export function energyOf(m: PairwiseForm, s: usize): f64 {
  let e = 0.0;
  for (let p = 0; p < m.nBits; p++) {
    if (!load<u8>(s + <usize>p)) continue;
    e += 0.5 * (load<f64>(m.a + (<usize>p << 3)) + localField(m, s, p));
  }
  return e;
}

/** β·u, with 0·u = 0 even for u = −∞ (β = 0 is the uniform distribution). */
@inline
function scaled(beta: f64, u: f64): f64 {
  return beta == 0 ? 0.0 : beta * u;
}

/** One Gibbs scan at inverse temperature beta; adds the conditionals into acc when acc ≠ 0. */
export function sweepAt(m: PairwiseForm, r: Philox, s: usize, beta: f64, acc: usize, scratch: usize): i32 {
  let changed = 0;
  for (let v = 0; v < m.nBlocks; v++) {
    const b = load<i32>(m.blockStart + (<usize>v << 2));
    if (!load<u8>(m.oneHot + <usize>v)) {
      const p = 1.0 / (1.0 + Math.exp(-scaled(beta, localField(m, s, b))));
      const bit: u8 = uniform32(r) < p ? 1 : 0;
      if (bit != load<u8>(s + <usize>b)) changed++;
      store<u8>(s + <usize>b, bit);
      if (acc) store<f64>(acc + (<usize>b << 3), load<f64>(acc + (<usize>b << 3)) + p);
      continue;
    }
    const K = load<i32>(m.blockStart + (<usize>(v + 1) << 2)) - b;
    let old = 0;
    let top = -Infinity;
    for (let k = 0; k < K; k++) {
      if (load<u8>(s + <usize>(b + k))) old = k;
      const x = scaled(beta, localField(m, s, b + k));
      store<f64>(scratch + (<usize>k << 3), x);
      if (x > top) top = x;
    }
    // Every state impossible given the neighbours (a random start in a model with zeros): uniform
    // over the states the variable's own factors and evidence allow (a > −∞), as Gibbs (gibbs.ts).
    let total = 0.0;
    for (let k = 0; k < K; k++) {
      const w = top == -Infinity ? (load<f64>(m.a + (<usize>(b + k) << 3)) > -Infinity ? 1.0 : 0.0) : Math.exp(load<f64>(scratch + (<usize>k << 3)) - top);
      store<f64>(scratch + (<usize>k << 3), w);
      total += w;
    }
    const target = uniform32(r) * total;
    let pick = K - 1;
    let cum = 0.0;
    for (let k = 0; k < K; k++) {
      cum += load<f64>(scratch + (<usize>k << 3));
      if (cum > target) {
        pick = k;
        break;
      }
    }
    // Rounding can leave the target past the last sum: placeOneHot never picks a zero-weight state.
    if (placeOneHot(s, b, K, old, pick, scratch, total, acc) != old) changed++;
  }
  return changed;
}

/**
 * `sweeps` rounds of (a Gibbs scan of every replica, then one round of neighbour swaps). With
 * accumulate ≠ 0 the β = 1 conditionals go into acc and the stepping-stone terms into gapAcc.
 * Returns the number of variable updates (over all replicas) that changed a state.
 */
export function temperingSweeps(m: PairwiseForm, st: usize, sweeps: i32, accumulate: i32, acc: usize): f64 {
  const t = changetype<Tempering>(st);
  const R = t.R;
  let changed: f64 = 0;
  for (let it = 0; it < sweeps; it++) {
    for (let k = 0; k < R; k++) {
      const slot = slotAt(t, k);
      const beta = load<f64>(t.betas + (<usize>k << 3));
      const into = accumulate && k == R - 1 ? acc : 0;
      changed += <f64>sweepAt(m, changetype<Philox>(slot), slot + PHILOX_BYTES, beta, into, t.scratch);
      const e = energyOf(m, slot + PHILOX_BYTES);
      store<f64>(t.energy + (<usize>k << 3), e);
      store<f64>(t.energyAcc + (<usize>k << 3), load<f64>(t.energyAcc + (<usize>k << 3)) + e);
    }
    if (accumulate) temperingGaps(t);
    temperingExchange(t);
  }
  return changed;
}

/** Adds exp((β_{k+1} − β_k)(E_k − shift_k)) into the stepping-stone sums, for every gap k. */
export function temperingGaps(t: Tempering): void {
  for (let k = 0; k + 1 < t.R; k++) {
    const d = load<f64>(t.betas + (<usize>(k + 1) << 3)) - load<f64>(t.betas + (<usize>k << 3));
    const q = t.gapAcc + (<usize>k << 3);
    store<f64>(q, load<f64>(q) + Math.exp(d * (load<f64>(t.energy + (<usize>k << 3)) - load<f64>(t.shift + (<usize>k << 3)))));
  }
}

/** One round of neighbour swaps (pairs of the current parity) on the energies E_k; flips the parity. */
export function temperingExchange(t: Tempering): void {
  const swapRng = changetype<Philox>(t.swapRng);
  for (let k = t.parity; k + 1 < t.R; k += 2) {
    const d = load<f64>(t.betas + (<usize>(k + 1) << 3)) - load<f64>(t.betas + (<usize>k << 3));
    const ek = load<f64>(t.energy + (<usize>k << 3));
    const ek1 = load<f64>(t.energy + (<usize>(k + 1) << 3));
    const x = d * (ek - ek1);
    store<f64>(t.attempts + (<usize>k << 3), load<f64>(t.attempts + (<usize>k << 3)) + 1);
    // NaN (both states outside the support) is refused.
    if (x >= 0 || uniform32(swapRng) < Math.exp(x)) {
      swapSlots(t, k);
      store<f64>(t.energy + (<usize>k << 3), ek1);
      store<f64>(t.energy + (<usize>(k + 1) << 3), ek);
    }
  }
  t.parity ^= 1;
}

/** Exchanges the slots of temperatures k and k + 1 and counts the accepted swap. */
export function swapSlots(t: Tempering, k: i32): void {
  const pk = t.perm + (<usize>k << 2);
  const pk1 = t.perm + (<usize>(k + 1) << 2);
  const a = load<i32>(pk);
  store<i32>(pk, load<i32>(pk1));
  store<i32>(pk1, a);
  store<f64>(t.accepts + (<usize>k << 3), load<f64>(t.accepts + (<usize>k << 3)) + 1);
}

// Pointer-level entry points (the bindings pass arena addresses).
export function ptStateBytes(model: usize, R: i32): usize {
  return temperingBytes(changetype<PairwiseForm>(model), R);
}

export function ptInit(model: usize, st: usize, R: i32, betas: usize, seedLo: u32, seedHi: u32, chain: u32, tag: u32): void {
  temperingInit(changetype<PairwiseForm>(model), st, R, betas, seedLo, seedHi, chain, tag);
}

export function ptStep(model: usize, st: usize, sweeps: i32, accumulate: i32, acc: usize): f64 {
  return temperingSweeps(changetype<PairwiseForm>(model), st, sweeps, accumulate, acc);
}
