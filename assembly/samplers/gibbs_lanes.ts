// Single-site Gibbs for a batch of independent chains, one chain per SIMD lane: f64x2 (two chains
// per vector) or the opt-in f32x4 (four).
//
// Batch layout (arena memory), B chains (a multiple of the lane count; the bindings pad):
//   [Philox × B][the batch's streams (rng_lanes.ts)][change counters × B][changed: f64 × B]
//   [s: u8 per (bit, chain), bit-major: s[i·B + c]]
// and the accumulator, when given, is f64 per (bit, chain) in the same order. Bit-major storage
// puts the lanes of one vector next to each other, so a neighbour's state for two (four) chains
// is one 16-bit (32-bit) load. The chains stay in lockstep (every chain draws one word per block
// visit), so their streams advance together and one Philox evaluation serves four chains.
//
// f64x2: each lane does exactly the single-chain kernel's IEEE operations in the same order (the
// local field a_i + Σ_j (s_j ? W_ij : +0.0) in CSR order, expPair = Math.exp bit for bit, the same
// division, uniform32 from the chain's own stream, the same softmax arithmetic for one-hot blocks),
// so chain c of a batch is the chain gibbs.ts runs for the same (seed, c), bit for bit: states,
// accumulators, change counts and the generator's position (test/gibbs-lanes.test.ts).
// f32x4: the same scan in single precision (expF32x4, fields and probabilities in f32, the accept
// test on the uniform in f32); a different chain with the same target, accumulators still in f64.
//
// `order` (i32 per block, or 0 for 0, 1, …): the blocks' visiting order; a colored scan passes
// the blocks color by color, so consecutive updates do not depend on each other and overlap.

import { Philox, PHILOX_BYTES, uniform32 } from '../core/rng';
import { batchStreamsBytes, batchStreamsOpen, batchStreamsNext, batchStreamsClose } from '../core/rng_lanes';
import { PairwiseForm } from '../core/pairwise';
import { EXP_K, expPair, expPairK, expF32x4 } from '../core/vmath';
import { freeBitLanesSweeps, maskOf, masks4At } from './gibbs_lanes_free';
import { tableLanesSweeps } from './gibbs_table';

@inline
function streamsAt(B: i32): usize {
  return <usize>B * PHILOX_BYTES;
}

/** Change counters during a call: i64 per chain (f64x2) or i32 per chain (f32x4). */
@inline
function countersAt(B: i32): usize {
  return streamsAt(B) + batchStreamsBytes(B);
}

/** Where the per-chain change counts of the last call (f64) are. */
export function lanesChangedOffset(B: i32): usize {
  return countersAt(B) + (<usize>B << 3);
}

export function lanesStateOffset(B: i32): usize {
  return lanesChangedOffset(B) + (<usize>B << 3);
}

export function lanesBytes(m: PairwiseForm, B: i32): usize {
  return lanesStateOffset(B) + <usize>m.nBits * <usize>B;
}

/** Scratch bytes a step needs: two vectors per state of the largest block. */
export function lanesScratchBytes(m: PairwiseForm): usize {
  return <usize>max(1, m.maxBlock) << 5;
}

@inline
function stream(batch: usize, c: i32): Philox {
  return changetype<Philox>(batch + <usize>c * PHILOX_BYTES);
}

function openCall(batch: usize, B: i32): void {
  memory.fill(batch + countersAt(B), 0, <usize>B << 3);
  batchStreamsOpen(batch + streamsAt(B), B, batch);
}

function closeCall(batch: usize, B: i32, f32: bool): void {
  batchStreamsClose(batch + streamsAt(B), B, batch);
  const cnt = batch + countersAt(B), out = batch + lanesChangedOffset(B);
  for (let c = 0; c < B; c++) store<f64>(out + (<usize>c << 3), f32 ? <f64>load<i32>(cnt + (<usize>c << 2)) : <f64>load<i64>(cnt + (<usize>c << 3)));
}

/** Each chain's uniformly random start from its own (already seeded) stream: gibbsChainInit's draws. */
export function lanesInit(m: PairwiseForm, batch: usize, B: i32): void {
  const s = batch + lanesStateOffset(B);
  memory.fill(s, 0, <usize>m.nBits * <usize>B);
  for (let c = 0; c < B; c++) {
    const r = stream(batch, c);
    for (let v = 0; v < m.nBlocks; v++) {
      const b = load<i32>(m.blockStart + (<usize>v << 2));
      if (load<u8>(m.oneHot + <usize>v)) {
        const K = load<i32>(m.blockStart + (<usize>(v + 1) << 2)) - b;
        const k = min<i32>(<i32>(uniform32(r) * <f64>K), K - 1);
        store<u8>(s + <usize>(b + k) * <usize>B + <usize>c, 1);
      } else {
        store<u8>(s + <usize>b * <usize>B + <usize>c, uniform32(r) < 0.5 ? 1 : 0);
      }
    }
  }
}

/** Lane masks (all ones where s = 1) of two chains' states of bit j, from their two bytes. */
@inline
function mask2(p: usize): v128 {
  return maskOf(<u32>load<u16>(p));
}

/** Two chains' local fields of bit i (localField's sum, lane by lane). */
@inline
function field2(m: PairwiseForm, sq: usize, B: usize, i: i32): v128 {
  let u = v128.load64_splat(m.a + (<usize>i << 3));
  const end = load<i32>(m.rowPtr + (<usize>(i + 1) << 2));
  for (let k = load<i32>(m.rowPtr + (<usize>i << 2)); k < end; k++) {
    const j = load<i32>(m.col + (<usize>k << 2));
    u = f64x2.add(u, v128.and(v128.load64_splat(m.val + (<usize>k << 3)), mask2(sq + <usize>j * B)));
  }
  return u;
}

/** uniform32 of chains c, c+1, as an f64x2; `words`: batchStreamsNext's word vector of group 0. */
@inline
function uniform2(words: usize, c: i32): v128 {
  const w = f64x2.convert_low_i32x4_u(v128.load64_zero(words + (<usize>(c >> 2) << 8) + (<usize>(c & 3) << 2)));
  return f64x2.mul(f64x2.add(w, f64x2.splat(0.5)), f64x2.splat(2.3283064365386963e-10));
}

/**
 * Runs `sweeps` scans of every chain. acc: f64 per (bit, chain) to add the conditional
 * probabilities into, or 0. scratch: lanesScratchBytes. The batch's `changed` entries receive the
 * number of variables whose state changed, per chain.
 */
export function lanesSweepsF64(m: PairwiseForm, batch: usize, B: i32, sweeps: i32, acc: usize, scratch: usize, order: usize): void {
  openCall(batch, B);
  const s = batch + lanesStateOffset(B);
  const rs = batch + streamsAt(B);
  const cnt = batch + countersAt(B);
  const Bz = <usize>B;
  const one = f64x2.splat(1.0);
  const kInv = v128.load64_splat(EXP_K, 0), kShift = v128.load64_splat(EXP_K, 8);
  const kHi = v128.load64_splat(EXP_K, 16), kLo = v128.load64_splat(EXP_K, 24);
  const c2 = v128.load64_splat(EXP_K, 32), c3 = v128.load64_splat(EXP_K, 40);
  const c4 = v128.load64_splat(EXP_K, 48), c5 = v128.load64_splat(EXP_K, 56);
  const lim = v128.load64_splat(EXP_K, 64);
  // Sequential scans of 2 or 4 chains over free bits: the same chains, faster (gibbs_lanes_free.ts).
  if (m.allFree && !order && (B == 2 || B == 4)) {
    if (B == 4) freeBitLanesSweeps<u32>(m, s, rs, batch, cnt, sweeps, acc);
    else freeBitLanesSweeps<u16>(m, s, rs, batch, cnt, sweeps, acc);
    closeCall(batch, B, false);
    return;
  }
  for (let t = 0; t < sweeps; t++) {
    for (let vi = 0; vi < m.nBlocks; vi++) {
      const v = order ? load<i32>(order + (<usize>vi << 2)) : vi;
      const b = load<i32>(m.blockStart + (<usize>v << 2));
      if (load<u8>(m.oneHot + <usize>v)) {
        const K = load<i32>(m.blockStart + (<usize>(v + 1) << 2)) - b;
        const words = batchStreamsNext(rs, B, batch);
        if (B == 4 && K <= 256) oneHot4Chains(m, s, words, cnt, b, K, acc, scratch);
        else if (B == 2 && K <= 256) oneHotPair(m, s, words, cnt, b, K, acc, scratch);
        else for (let c = 0; c < B; c += 2) oneHot2(m, s + <usize>c, Bz, words, cnt, c, b, K, acc, scratch);
        continue;
      }
      const words = batchStreamsNext(rs, B, batch);
      for (let c = 0; c < B; c += 2) {
        const sq = s + <usize>c;
        const u = field2(m, sq, Bz, b);
        const p = f64x2.div(one, f64x2.add(one, expPair(f64x2.neg(u), kInv, kShift, kHi, kLo, c2, c3, c4, c5, lim)));
        const yes = f64x2.lt(uniform2(words, c), p);
        const at = sq + <usize>b * Bz;
        const q = cnt + (<usize>c << 3);
        v128.store(q, i64x2.sub(v128.load(q), v128.xor(mask2(at), yes)));
        const bits = i64x2.bitmask(yes);
        store<u16>(at, <u16>((bits & 1) | ((bits & 2) << 7)));
        if (acc) {
          const q = acc + ((<usize>b * Bz + <usize>c) << 3);
          v128.store(q, f64x2.add(v128.load(q), p));
        }
      }
    }
  }
  closeCall(batch, B, false);
}

/**
 * lanesSweepsF64's sequential scan of a batch of 2 or 4 chains on an all-free-bit model with p read
 * from the probability table off, table (gibbs_table.ts): the same chains, bit for bit.
 */
export function lanesTableSweeps(m: PairwiseForm, batch: usize, B: i32, sweeps: i32, acc: usize, off: usize, table: usize): void {
  assert(m.allFree && (B == 2 || B == 4), 'the table kernel runs batches of 2 or 4 chains of free bits');
  openCall(batch, B);
  const s = batch + lanesStateOffset(B), rs = batch + streamsAt(B), cnt = batch + countersAt(B);
  if (B == 4) tableLanesSweeps<u32>(m, off, table, s, rs, batch, cnt, sweeps, acc);
  else tableLanesSweeps<u16>(m, off, table, s, rs, batch, cnt, sweeps, acc);
  closeCall(batch, B, false);
}

/** Weight of state bit i in a lost move (every state impossible given the neighbours): 1 where the variable's own factors and evidence allow it (a_i > −∞), else 0, so an observed variable never leaves its value. */
@inline
function lostWeight(m: PairwiseForm, i: i32): v128 {
  return f64x2.splat(load<f64>(m.a + (<usize>i << 3)) > -Infinity ? 1.0 : 0.0);
}

/**
 * A lane pair's state weights exp(u_k − top), in place of the fields u_k at scratch + 16·k, block
 * bits b …; a lane whose every state is impossible given the neighbours moves uniformly over the
 * states its own factors allow (lostWeight). Returns their total.
 */
@inline
function pairWeights(m: PairwiseForm, b: i32, scratch: usize, K: i32, top: v128): v128 {
  const lost = f64x2.eq(top, f64x2.splat(-Infinity)), anyLost = v128.any_true(lost);
  let total = f64x2.splat(0);
  for (let k = 0; k < K; k++) {
    const q = scratch + (<usize>k << 4);
    const e = expPairK(f64x2.sub(v128.load(q), top));
    // Lost lanes are rare (a start outside the support): their weights read only then.
    const w = anyLost ? v128.bitselect(lostWeight(m, b + k), e, lost) : e;
    v128.store(q, w);
    total = f64x2.add(total, w);
  }
  return total;
}

/** Each lane's drawn state: the first k whose cumulative weight passes the lane's target (skipping zero weights); lane 0 low, lane 1 high. */
@inline
function pairPicks(scratch: usize, K: i32, target: v128): u64 {
  let cum = f64x2.splat(0);
  let below = i64x2.splat(0);
  for (let k = 0; k < K; k++) {
    cum = f64x2.add(cum, v128.load(scratch + (<usize>k << 4)));
    below = i64x2.sub(below, v128.not(f64x2.lt(target, cum)));
  }
  let pick0 = min(<i32>i64x2.extract_lane(below, 0), K - 1);
  let pick1 = min(<i32>i64x2.extract_lane(below, 1), K - 1);
  while (load<f64>(scratch + (<usize>pick0 << 4)) == 0.0) pick0--;
  while (load<f64>(scratch + (<usize>pick1 << 4), 8) == 0.0) pick1--;
  return <u64><u32>pick0 | (<u64><u32>pick1 << 32);
}

/** oneHotUpdate (gibbs.ts) for chains c, c+1 at once, lane by lane the same arithmetic. */
@inline
function oneHot2(m: PairwiseForm, sq: usize, Bz: usize, words: usize, cnt: usize, c: i32, b: i32, K: i32, acc: usize, scratch: usize): void {
  let old0 = 0, old1 = 0;
  let top = f64x2.splat(-Infinity);
  for (let k = 0; k < K; k++) {
    const x = <u32>load<u16>(sq + <usize>(b + k) * Bz);
    old0 = select<i32>(k, old0, (x & 1) != 0);
    old1 = select<i32>(k, old1, x > 1);
    const u = field2(m, sq, Bz, b + k);
    v128.store(scratch + (<usize>k << 4), u);
    top = v128.bitselect(u, top, f64x2.gt(u, top));
  }
  const total = pairWeights(m, b, scratch, K, top);
  const picks = pairPicks(scratch, K, f64x2.mul(uniform2(words, c), total));
  const pick0 = <i32>picks, pick1 = <i32>(picks >> 32);
  store<u8>(sq + <usize>(b + old0) * Bz, 0);
  store<u8>(sq + <usize>(b + pick0) * Bz, 1);
  store<u8>(sq + <usize>(b + old1) * Bz + 1, 0);
  store<u8>(sq + <usize>(b + pick1) * Bz + 1, 1);
  const q = cnt + (<usize>c << 3);
  store<i64>(q, load<i64>(q) + <i64>(pick0 != old0));
  store<i64>(q, load<i64>(q, 8) + <i64>(pick1 != old1), 8);
  if (acc) {
    const inv = f64x2.div(f64x2.splat(1.0), total);
    for (let k = 0; k < K; k++) {
      const q = acc + ((<usize>(b + k) * Bz + <usize>c) << 3);
      v128.store(q, f64x2.add(v128.load(q), f64x2.mul(v128.load(scratch + (<usize>k << 4)), inv)));
    }
  }
}

/**
 * oneHot2 for a batch of exactly two chains: a bit's two state bytes are one u16 at s + 2·bit, so
 * every address is a shift (not a multiply by B), and the chains' old states come from one
 * multiply per state (as in oneHot4Chains; K ≤ 256). Lane by lane the same arithmetic as oneHot2.
 */
function oneHotPair(m: PairwiseForm, s: usize, words: usize, cnt: usize, b: i32, K: i32, acc: usize, scratch: usize): void {
  let old: u32 = 0; // chain c's state index in byte c
  let top = f64x2.splat(-Infinity);
  for (let k = 0; k < K; k++) {
    const i = b + k;
    old |= <u32>load<u16>(s + (<usize>i << 1)) * <u32>k;
    let u = v128.load64_splat(m.a + (<usize>i << 3));
    const end = load<i32>(m.rowPtr + (<usize>(i + 1) << 2));
    for (let e = load<i32>(m.rowPtr + (<usize>i << 2)); e < end; e++) {
      const x = <u32>load<u16>(s + (<usize>load<i32>(m.col + (<usize>e << 2)) << 1));
      u = f64x2.add(u, v128.and(v128.load64_splat(m.val + (<usize>e << 3)), maskOf(x)));
    }
    v128.store(scratch + (<usize>k << 4), u);
    top = v128.bitselect(u, top, f64x2.gt(u, top));
  }
  const total = pairWeights(m, b, scratch, K, top);
  const picks = pairPicks(scratch, K, f64x2.mul(uniform2(words, 0), total));
  const pick0 = <i32>picks, pick1 = <i32>(picks >> 32);
  const old0 = <i32>(old & 255), old1 = <i32>(old >> 8);
  store<u8>(s + (<usize>(b + old0) << 1), 0);
  store<u8>(s + (<usize>(b + pick0) << 1), 1);
  store<u8>(s + (<usize>(b + old1) << 1), 0, 1);
  store<u8>(s + (<usize>(b + pick1) << 1), 1, 1);
  store<i64>(cnt, load<i64>(cnt) + <i64>(pick0 != old0));
  store<i64>(cnt, load<i64>(cnt, 8) + <i64>(pick1 != old1), 8);
  if (acc) {
    const inv = f64x2.div(f64x2.splat(1.0), total);
    for (let k = 0; k < K; k++) {
      const q = acc + (<usize>(b + k) << 4);
      v128.store(q, f64x2.add(v128.load(q), f64x2.mul(v128.load(scratch + (<usize>k << 4)), inv)));
    }
  }
}

/**
 * oneHot2 for chains 0, 1 (vector A) and 2, 3 (vector B) of a batch of four, in one pass: each
 * neighbour's index, coupling and the four chains' state bytes are loaded once for both vectors.
 * Lane by lane the same arithmetic as oneHot2. Scratch: state k's weights at 32·k (A), 32·k + 16 (B).
 */
function oneHot4Chains(m: PairwiseForm, s: usize, words: usize, cnt: usize, b: i32, K: i32, acc: usize, scratch: usize): void {
  let old: u32 = 0; // state k of chain c as byte c, for the block's one-hot bit set in chain c
  let topA = f64x2.splat(-Infinity), topB = topA;
  for (let k = 0; k < K; k++) {
    const i = b + k;
    const x = load<u32>(s + (<usize>i << 2));
    old |= x * <u32>k; // bytes 0/1 times k: chain c's state index in byte c (K ≤ 256)
    let uA = v128.load64_splat(m.a + (<usize>i << 3));
    let uB = uA;
    const end = load<i32>(m.rowPtr + (<usize>(i + 1) << 2));
    for (let e = load<i32>(m.rowPtr + (<usize>i << 2)); e < end; e++) {
      const q = masks4At(load<u32>(s + (<usize>load<i32>(m.col + (<usize>e << 2)) << 2)));
      const w = v128.load64_splat(m.val + (<usize>e << 3));
      uA = f64x2.add(uA, v128.and(w, v128.load(q)));
      uB = f64x2.add(uB, v128.and(w, v128.load(q, 16)));
    }
    v128.store(scratch + (<usize>k << 5), uA);
    v128.store(scratch + (<usize>k << 5), uB, 16);
    topA = v128.bitselect(uA, topA, f64x2.gt(uA, topA));
    topB = v128.bitselect(uB, topB, f64x2.gt(uB, topB));
  }
  const ninf = f64x2.splat(-Infinity);
  const lostA = f64x2.eq(topA, ninf), lostB = f64x2.eq(topB, ninf), anyLost = v128.any_true(v128.or(lostA, lostB));
  let totalA = f64x2.splat(0), totalB = totalA;
  for (let k = 0; k < K; k++) {
    const q = scratch + (<usize>k << 5);
    let wA = expPairK(f64x2.sub(v128.load(q), topA)), wB = expPairK(f64x2.sub(v128.load(q, 16), topB));
    if (anyLost) {
      const own = lostWeight(m, b + k);
      wA = v128.bitselect(own, wA, lostA);
      wB = v128.bitselect(own, wB, lostB);
    }
    v128.store(q, wA);
    v128.store(q, wB, 16);
    totalA = f64x2.add(totalA, wA);
    totalB = f64x2.add(totalB, wB);
  }
  const targetA = f64x2.mul(uniform2(words, 0), totalA), targetB = f64x2.mul(uniform2(words, 2), totalB);
  let cumA = f64x2.splat(0), cumB = cumA;
  let belowA = i64x2.splat(0), belowB = belowA;
  for (let k = 0; k < K; k++) {
    const q = scratch + (<usize>k << 5);
    cumA = f64x2.add(cumA, v128.load(q));
    cumB = f64x2.add(cumB, v128.load(q, 16));
    belowA = i64x2.sub(belowA, v128.not(f64x2.lt(targetA, cumA)));
    belowB = i64x2.sub(belowB, v128.not(f64x2.lt(targetB, cumB)));
  }
  let pick0 = min(<i32>i64x2.extract_lane(belowA, 0), K - 1);
  let pick1 = min(<i32>i64x2.extract_lane(belowA, 1), K - 1);
  let pick2 = min(<i32>i64x2.extract_lane(belowB, 0), K - 1);
  let pick3 = min(<i32>i64x2.extract_lane(belowB, 1), K - 1);
  while (load<f64>(scratch + (<usize>pick0 << 5)) == 0.0) pick0--;
  while (load<f64>(scratch + (<usize>pick1 << 5), 8) == 0.0) pick1--;
  while (load<f64>(scratch + (<usize>pick2 << 5), 16) == 0.0) pick2--;
  while (load<f64>(scratch + (<usize>pick3 << 5), 24) == 0.0) pick3--;
  const old0 = <i32>(old & 255), old1 = <i32>((old >> 8) & 255), old2 = <i32>((old >> 16) & 255), old3 = <i32>(old >> 24);
  store<u8>(s + (<usize>(b + old0) << 2), 0);
  store<u8>(s + (<usize>(b + pick0) << 2), 1);
  store<u8>(s + (<usize>(b + old1) << 2), 0, 1);
  store<u8>(s + (<usize>(b + pick1) << 2), 1, 1);
  store<u8>(s + (<usize>(b + old2) << 2), 0, 2);
  store<u8>(s + (<usize>(b + pick2) << 2), 1, 2);
  store<u8>(s + (<usize>(b + old3) << 2), 0, 3);
  store<u8>(s + (<usize>(b + pick3) << 2), 1, 3);
  store<i64>(cnt, load<i64>(cnt) + <i64>(pick0 != old0));
  store<i64>(cnt, load<i64>(cnt, 8) + <i64>(pick1 != old1), 8);
  store<i64>(cnt, load<i64>(cnt, 16) + <i64>(pick2 != old2), 16);
  store<i64>(cnt, load<i64>(cnt, 24) + <i64>(pick3 != old3), 24);
  if (acc) {
    const one = f64x2.splat(1.0), invA = f64x2.div(one, totalA), invB = f64x2.div(one, totalB);
    for (let k = 0; k < K; k++) {
      const q = acc + (<usize>(b + k) << 5), w = scratch + (<usize>k << 5);
      v128.store(q, f64x2.add(v128.load(q), f64x2.mul(v128.load(w), invA)));
      v128.store(q, f64x2.add(v128.load(q, 16), f64x2.mul(v128.load(w, 16), invB)), 16);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// f32x4: four chains per vector. a32, val32: the form's a and W values rounded to f32 (−∞ stays).

/** Lane masks of four chains' states of bit j, from their four bytes. */
@inline
function mask4(p: usize): v128 {
  return i32x4.neg(i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(v128.load32_zero(p))));
}

@inline
function field4(m: PairwiseForm, a32: usize, val32: usize, sq: usize, B: usize, i: i32): v128 {
  let u = v128.load32_splat(a32 + (<usize>i << 2));
  const end = load<i32>(m.rowPtr + (<usize>(i + 1) << 2));
  for (let k = load<i32>(m.rowPtr + (<usize>i << 2)); k < end; k++) {
    const j = load<i32>(m.col + (<usize>k << 2));
    u = f32x4.add(u, v128.and(v128.load32_splat(val32 + (<usize>k << 2)), mask4(sq + <usize>j * B)));
  }
  return u;
}

/** Uniforms on (0, 1] of chains c … c+3 (c a multiple of 4), in f32. */
@inline
function uniform4(words: usize, c: i32): v128 {
  const w = v128.load(words + (<usize>(c >> 2) << 8));
  return f32x4.mul(f32x4.add(f32x4.convert_i32x4_u(w), f32x4.splat(0.5)), f32x4.splat(2.3283064365386963e-10));
}

/** Adds four f32 lanes into four consecutive f64 accumulators. */
@inline
function accumulate4(q: usize, p: v128): void {
  v128.store(q, f64x2.add(v128.load(q), f64x2.promote_low_f32x4(p)));
  v128.store(q, f64x2.add(v128.load(q, 16), f64x2.promote_low_f32x4(v128.shuffle<i32>(p, p, 2, 3, 2, 3))), 16);
}

export function lanesSweepsF32(m: PairwiseForm, a32: usize, val32: usize, batch: usize, B: i32, sweeps: i32, acc: usize, scratch: usize, order: usize): void {
  openCall(batch, B);
  const s = batch + lanesStateOffset(B);
  const rs = batch + streamsAt(B);
  const cnt = batch + countersAt(B);
  const Bz = <usize>B;
  const one = f32x4.splat(1.0);
  for (let t = 0; t < sweeps; t++) {
    for (let vi = 0; vi < m.nBlocks; vi++) {
      const v = order ? load<i32>(order + (<usize>vi << 2)) : vi;
      const b = load<i32>(m.blockStart + (<usize>v << 2));
      if (load<u8>(m.oneHot + <usize>v)) {
        const K = load<i32>(m.blockStart + (<usize>(v + 1) << 2)) - b;
        const words = batchStreamsNext(rs, B, batch);
        for (let c = 0; c < B; c += 4) oneHot4(m, a32, val32, s + <usize>c, Bz, words, cnt, c, b, K, acc, scratch);
        continue;
      }
      const words = batchStreamsNext(rs, B, batch);
      for (let c = 0; c < B; c += 4) {
        const sq = s + <usize>c;
        const u = field4(m, a32, val32, sq, Bz, b);
        const p = f32x4.div(one, f32x4.add(one, expF32x4(f32x4.neg(u))));
        const yes = f32x4.lt(uniform4(words, c), p);
        const at = sq + <usize>b * Bz;
        const q = cnt + (<usize>c << 2);
        v128.store(q, i32x4.sub(v128.load(q), v128.xor(mask4(at), yes)));
        // 0/1 bytes from the lane masks: narrow to bytes (−1 or 0), negate.
        const bytes = i8x16.neg(i8x16.narrow_i16x8_s(i16x8.narrow_i32x4_s(yes, yes), yes));
        v128.store32_lane(at, bytes, 0);
        if (acc) accumulate4(acc + ((<usize>b * Bz + <usize>c) << 3), p);
      }
    }
  }
  closeCall(batch, B, true);
}

// Four lanes' picks and previous states, read back one lane at a time.
const PICKS = memory.data(32, 16);

@inline
function oneHot4(m: PairwiseForm, a32: usize, val32: usize, sq: usize, Bz: usize, words: usize, cnt: usize, c: i32, b: i32, K: i32, acc: usize, scratch: usize): void {
  let old = i32x4.splat(0);
  let top = f32x4.splat(-Infinity);
  for (let k = 0; k < K; k++) {
    old = v128.bitselect(i32x4.splat(k), old, mask4(sq + <usize>(b + k) * Bz));
    const u = field4(m, a32, val32, sq, Bz, b + k);
    v128.store(scratch + (<usize>k << 4), u);
    top = v128.bitselect(u, top, f32x4.gt(u, top));
  }
  const lost = f32x4.eq(top, f32x4.splat(-Infinity)), anyLost = v128.any_true(lost);
  let total = f32x4.splat(0);
  for (let k = 0; k < K; k++) {
    const q = scratch + (<usize>k << 4);
    const e = expF32x4(f32x4.sub(v128.load(q), top));
    // lostWeight in f32 lanes, read only when some lane is lost.
    const w = anyLost ? v128.bitselect(f32x4.splat(load<f64>(m.a + (<usize>(b + k) << 3)) > -Infinity ? 1.0 : 0.0), e, lost) : e;
    v128.store(q, w);
    total = f32x4.add(total, w);
  }
  const target = f32x4.mul(uniform4(words, c), total);
  let cum = f32x4.splat(0);
  let below = i32x4.splat(0);
  for (let k = 0; k < K; k++) {
    cum = f32x4.add(cum, v128.load(scratch + (<usize>k << 4)));
    below = i32x4.sub(below, v128.not(f32x4.lt(target, cum)));
  }
  v128.store(PICKS, i32x4.min_s(below, i32x4.splat(K - 1)));
  v128.store(PICKS, old, 16);
  for (let l = 0; l < 4; l++) {
    let p = load<i32>(PICKS + (<usize>l << 2));
    const o = load<i32>(PICKS + (<usize>l << 2), 16);
    while (load<f32>(scratch + (<usize>p << 4) + (<usize>l << 2)) == 0.0) p--;
    store<u8>(sq + <usize>(b + o) * Bz + <usize>l, 0);
    store<u8>(sq + <usize>(b + p) * Bz + <usize>l, 1);
    const q = cnt + (<usize>(c + l) << 2);
    store<i32>(q, load<i32>(q) + <i32>(p != o));
  }
  if (acc) {
    const inv = f32x4.div(f32x4.splat(1.0), total);
    for (let k = 0; k < K; k++) accumulate4(acc + ((<usize>(b + k) * Bz + <usize>c) << 3), f32x4.mul(v128.load(scratch + (<usize>k << 4)), inv));
  }
}
