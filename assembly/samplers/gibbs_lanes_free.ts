// The f64 lanes kernel's sequential scan for batches of 2 or 4 chains on models whose blocks are
// all single bits (Ising, Boltzmann machines, RBMs): the chains gibbs_lanes.ts's general loop runs,
// bit for bit, with less work and a shorter dependency chain per update.
//
// * Bit i−1, just drawn, is usually a neighbour of bit i (lattices, chains, banded graphs) and in
//   the general loop it sits on bit i's critical path: store, reload, mask lookup, the remaining
//   additions of the field, exp, division, compare. Here the field is summed for both values of
//   s_{i−1} in every lane — the partial sum P before its term, then P + (+0.0) and P + W_{i,i−1}
//   carried through the remaining terms in CSR order, so each is exactly the general loop's sum
//   for that value — and the lanes' fresh accept masks select between them (a bitselect). Only
//   exp, the division and the compare stay on the chain from one bit to the next.
// * Four chains run as two f64x2 vectors in one loop body: one index, coupling and state load
//   (the four chains' bytes of bit j are one u32) serve both vectors, and the two vectors'
//   dependency chains interleave.
// * The stream position lives in a local; change counts are summed as bytes (x ^ new, one byte per
//   chain) and flushed every 128 bits, so no counter load or store per update.

import { PairwiseForm } from '../core/pairwise';
import { EXP_K, expPair } from '../core/vmath';
import { batchStreamsRefill, batchStreamsWords } from '../core/rng_lanes';

// Masks for two lanes' neighbour terms, indexed by (s_lane0 | s_lane1 << 1).
export const MASK2 = memory.data<u64>([0, 0, 0xFFFFFFFFFFFFFFFF, 0, 0, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF]);

/** Lane masks of the two chains whose state bytes are the low two of x. */
@inline
export function maskOf(x: u32): v128 {
  return v128.load(MASK2 + (<usize>((x | (x >> 7)) & 3) << 4));
}

// Lane masks of four chains (two vectors: chains 0, 1 and 2, 3), indexed by s_0 | s_1 << 1 | … | s_3 << 3.
const MASK4 = memory.data<u64>([
  0, 0, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, -1, -1, 0, 0,
  0, 0, -1, 0, -1, 0, -1, 0, 0, -1, -1, 0, -1, -1, -1, 0,
  0, 0, 0, -1, -1, 0, 0, -1, 0, -1, 0, -1, -1, -1, 0, -1,
  0, 0, -1, -1, -1, 0, -1, -1, 0, -1, -1, -1, -1, -1, -1, -1,
]);

/** MASK4's entry for the four chains' state bytes x: the multiply gathers bit 0 of byte c into bit 28 + c. */
@inline
export function masks4At(x: u32): usize {
  return MASK4 + (<usize>((x * 0x10204080) >> 28) << 5);
}

// State bytes (one 0/1 byte per chain) from the accept bits of four chains (bit c: chain c).
export const BYTES4 = memory.data<u32>([
  0x00000000, 0x00000001, 0x00000100, 0x00000101, 0x00010000, 0x00010001, 0x00010100, 0x00010101,
  0x01000000, 0x01000001, 0x01000100, 0x01000101, 0x01010000, 0x01010001, 0x01010100, 0x01010101,
]);

/** Adds change counts held as bytes (byte c: chain c's, B = 2 or 4 chains) into the i64 counters at cnt. */
@inline
export function addByteCounts(cnt: usize, bytes: u32, quad: bool): void {
  store<i64>(cnt, load<i64>(cnt) + <i64>(bytes & 255));
  store<i64>(cnt, load<i64>(cnt, 8) + <i64>((bytes >> 8) & 255), 8);
  if (quad) {
    store<i64>(cnt, load<i64>(cnt, 16) + <i64>((bytes >> 16) & 255), 16);
    store<i64>(cnt, load<i64>(cnt, 24) + <i64>(bytes >> 24), 24);
  }
}

/** uniform32 of the two chains whose words are at p, as an f64x2. */
@inline
export function uniformPair(p: usize): v128 {
  const w = f64x2.convert_low_i32x4_u(v128.load64_zero(p));
  return f64x2.mul(f64x2.add(w, f64x2.splat(0.5)), f64x2.splat(2.3283064365386963e-10));
}

/**
 * `sweeps` sequential scans of B = sizeof<T>() chains (T = u16: 2 chains, u32: 4), all blocks free
 * bits, in index order. s: the states (bit-major), rs: the batch's streams (open), p0: the first
 * chain's Philox, cnt: i64 change counters per chain (added to), acc: f64 per (bit, chain) or 0.
 */
export function freeBitLanesSweeps<T>(m: PairwiseForm, s: usize, rs: usize, p0: usize, cnt: usize, sweeps: i32, acc: usize): void {
  const quad = sizeof<T>() == 4;
  const B: i32 = quad ? 4 : 2;
  const n = m.nBits;
  const a = m.a, rowPtr = m.rowPtr, col = m.col, val = m.val;
  const words = batchStreamsWords(rs, B);
  let pos = load<u32>(rs, 8);
  const one = f64x2.splat(1.0), zero = f64x2.splat(0);
  const kInv = v128.load64_splat(EXP_K, 0), kShift = v128.load64_splat(EXP_K, 8);
  const kHi = v128.load64_splat(EXP_K, 16), kLo = v128.load64_splat(EXP_K, 24);
  const c2 = v128.load64_splat(EXP_K, 32), c3 = v128.load64_splat(EXP_K, 40);
  const c4 = v128.load64_splat(EXP_K, 48), c5 = v128.load64_splat(EXP_K, 56);
  const lim = v128.load64_splat(EXP_K, 64);
  let bytes: u32 = 0; // change counts of the last ≤ 128 bits, one byte per chain (then into cnt)
  for (let t = 0; t < sweeps; t++) {
    // Accept masks of bit i−1 (chains 0, 1 and 2, 3); read only where bit i−1 is a neighbour.
    let prevA = zero, prevB = zero;
    let k = load<i32>(rowPtr);
    for (let i = 0; i < n; i++) {
      const kEnd = load<i32>(rowPtr + (<usize>(i + 1) << 2));
      const im1 = i - 1;
      let uA = v128.load64_splat(a + (<usize>i << 3));
      let uB = uA;
      let hit = false;
      for (; k < kEnd; k++) {
        const j = load<i32>(col + (<usize>k << 2));
        if (j == im1) {
          hit = true;
          break;
        }
        const x = <u32>load<T>(s + (<usize>j << (quad ? 2 : 1)));
        const w = v128.load64_splat(val + (<usize>k << 3));
        if (quad) {
          const q = masks4At(x);
          uA = f64x2.add(uA, v128.and(w, v128.load(q)));
          uB = f64x2.add(uB, v128.and(w, v128.load(q, 16)));
        } else {
          uA = f64x2.add(uA, v128.and(w, maskOf(x)));
        }
      }
      if (hit) {
        // Both values of s_{i−1}: uA (+0.0) and uA1 (W), each then through the remaining terms.
        const w = v128.load64_splat(val + (<usize>k << 3));
        let uA1 = f64x2.add(uA, w);
        let uB1 = f64x2.add(uB, w);
        uA = f64x2.add(uA, zero);
        uB = f64x2.add(uB, zero);
        for (k++; k < kEnd; k++) {
          const j = load<i32>(col + (<usize>k << 2));
          const x = <u32>load<T>(s + (<usize>j << (quad ? 2 : 1)));
          const w = v128.load64_splat(val + (<usize>k << 3));
          if (quad) {
            const q = masks4At(x);
            const tA = v128.and(w, v128.load(q));
            const tB = v128.and(w, v128.load(q, 16));
            uA = f64x2.add(uA, tA);
            uA1 = f64x2.add(uA1, tA);
            uB = f64x2.add(uB, tB);
            uB1 = f64x2.add(uB1, tB);
          } else {
            const tA = v128.and(w, maskOf(x));
            uA = f64x2.add(uA, tA);
            uA1 = f64x2.add(uA1, tA);
          }
        }
        uA = v128.bitselect(uA1, uA, prevA);
        if (quad) uB = v128.bitselect(uB1, uB, prevB);
      }
      if (pos >= 16) {
        batchStreamsRefill(rs, B, p0);
        pos = 0;
      }
      const wp = words + (<usize>pos << 4);
      pos++;
      const pA = f64x2.div(one, f64x2.add(one, expPair(f64x2.neg(uA), kInv, kShift, kHi, kLo, c2, c3, c4, c5, lim)));
      const yesA = f64x2.lt(uniformPair(wp), pA);
      let pB = zero, yesB = zero;
      if (quad) {
        pB = f64x2.div(one, f64x2.add(one, expPair(f64x2.neg(uB), kInv, kShift, kHi, kLo, c2, c3, c4, c5, lim)));
        yesB = f64x2.lt(uniformPair(wp + 8), pB);
      }
      const at = s + (<usize>i << (quad ? 2 : 1));
      const old = <u32>load<T>(at);
      const nu = load<u32>(BYTES4 + (<usize>(i64x2.bitmask(yesA) | (quad ? i64x2.bitmask(yesB) << 2 : 0)) << 2));
      store<T>(at, <T>nu);
      bytes += old ^ nu;
      prevA = yesA;
      prevB = yesB;
      if (acc) {
        const q = acc + (<usize>i << (quad ? 5 : 4));
        v128.store(q, f64x2.add(v128.load(q), pA));
        if (quad) v128.store(q, f64x2.add(v128.load(q, 16), pB), 16);
      }
      if ((i & 127) == 127) {
        addByteCounts(cnt, bytes, quad);
        bytes = 0;
      }
    }
    addByteCounts(cnt, bytes, quad);
    bytes = 0;
  }
  store<u32>(rs, pos, 8);
}
