// Probability tables for single-site Gibbs on free-bit models: the conditional p(s_i = 1 | s_−i)
// of every site for every configuration of its neighbours, computed once, so that a sweep's update
// is a table load instead of the field sum, exp and division.
//
// For a free bit i with CSR row k0 … k0+d−1, the kernels compute u = a_i + Σ_k (s_col[k] ? W_k :
// +0.0) in CSR order and p = 1/(1 + exp(−u)). u depends only on the pattern P = Σ_k s_col[k] << (k
// − k0) (bit k − k0 of P: the row's k-th neighbour), so p is a function of P. The table holds, per
// site, p for all 2^d patterns, each computed with exactly those IEEE operations in that order (the
// +0.0 terms included; expPair is Math.exp bit for bit), so a chain reading p from the table is the
// chain that sums the field, bit for bit: states, accumulators, change counts and generator
// positions (test/gibbs-table.test.ts).
//
// Each entry also holds the accept threshold of p: the draw accepts when uniform32 = (w + 0.5)·2^−32
// < p for the chain's word w, i.e. (both sides exact) when w < T(p) = #{w ≥ 0 : w + 0.5 < p·2^32},
// so the sweeps compare the word with T as integers and need p only for the accumulator.
//
// Sites with the same degree, bias and row of couplings (bit for bit) share one table: a uniform
// lattice needs one, a random-coupling one needs n. Layout: off[i] (i32) is the index of site i's
// first entry; entry e is 16 bytes at table + 16·e: [p: f64][T: i64]. Sites are given tables in
// index order.
//
// The sweeps: the single chain's loop is gibbs.ts's free-bit loop (freeBitSweeps with a table);
// batches of 2 and 4 chains in lanes run tableLanesSweeps below. With d ≤ 8 the four chains'
// patterns fit one byte each of a u32: the neighbours' state words (one byte per chain, 0 or 1)
// shifted by k − k0 and added give all four patterns at once.

import { PairwiseForm } from '../core/pairwise';
import { EXP_K, expPair } from '../core/vmath';
import { batchStreamsRefill, batchStreamsWords } from '../core/rng_lanes';
import { BYTES4, addByteCounts, maskOf, masks4At, uniformPair } from './gibbs_lanes_free';

/** The largest degree a table takes (2^8 entries a site; four chains' patterns in one u32). */
export const TABLE_MAX_DEGREE: i32 = 8;

@inline
function degreeOf(m: PairwiseForm, i: i32): i32 {
  return load<i32>(m.rowPtr + (<usize>(i + 1) << 2)) - load<i32>(m.rowPtr + (<usize>i << 2));
}

/** Whether sites i and j have the same conditional table: degree, bias and couplings, bit for bit. */
function sameSite(m: PairwiseForm, i: i32, j: i32): bool {
  const d = degreeOf(m, i);
  if (d != degreeOf(m, j)) return false;
  if (load<u64>(m.a + (<usize>i << 3)) != load<u64>(m.a + (<usize>j << 3))) return false;
  const vi = m.val + (<usize>load<i32>(m.rowPtr + (<usize>i << 2)) << 3);
  const vj = m.val + (<usize>load<i32>(m.rowPtr + (<usize>j << 2)) << 3);
  for (let k = 0; k < d; k++) if (load<u64>(vi + (<usize>k << 3)) != load<u64>(vj + (<usize>k << 3))) return false;
  return true;
}

@inline
function mix(h: u64, x: u64): u64 {
  h ^= x;
  h *= 0x9E3779B97F4A7C15;
  return h ^ (h >> 29);
}

function siteHash(m: PairwiseForm, i: i32): u64 {
  const d = degreeOf(m, i);
  let h = mix(0x243F6A8885A308D3, <u64>d);
  h = mix(h, load<u64>(m.a + (<usize>i << 3)));
  const v = m.val + (<usize>load<i32>(m.rowPtr + (<usize>i << 2)) << 3);
  for (let k = 0; k < d; k++) h = mix(h, load<u64>(v + (<usize>k << 3)));
  return h;
}

/**
 * Assigns each site its table (off: i32 per bit, and at off[nBits] the number of sites with a
 * table), sharing tables between identical sites; sites of degree > TABLE_MAX_DEGREE get none
 * (off = −1: the sweeps sum their fields). hash: i32 × cap scratch, cap a power of two > nBits.
 * Returns the number of table entries, or −1 when the model has a one-hot block or the tables
 * would need more than maxEntries entries.
 */
export function tablePlan(m: PairwiseForm, off: usize, hash: usize, cap: i32, maxEntries: f64): f64 {
  if (!m.allFree) return -1;
  const n = m.nBits;
  memory.fill(hash, 0, <usize>cap << 2);
  const maskCap = <u64>(cap - 1);
  let total: f64 = 0;
  let tabled = 0;
  for (let i = 0; i < n; i++) {
    const d = degreeOf(m, i);
    if (d > TABLE_MAX_DEGREE) {
      store<i32>(off + (<usize>i << 2), -1);
      continue;
    }
    tabled++;
    let slot = siteHash(m, i) & maskCap;
    let rep = -1;
    for (;;) {
      const h = load<i32>(hash + (<usize>slot << 2));
      if (h == 0) break;
      if (sameSite(m, h - 1, i)) {
        rep = h - 1;
        break;
      }
      slot = (slot + 1) & maskCap;
    }
    if (rep >= 0) {
      store<i32>(off + (<usize>i << 2), load<i32>(off + (<usize>rep << 2)));
      continue;
    }
    const size = <f64>(1 << d);
    if (total + size > maxEntries) return -1;
    store<i32>(hash + (<usize>slot << 2), i + 1);
    store<i32>(off + (<usize>i << 2), <i32>total);
    total += size;
  }
  store<i32>(off + (<usize>n << 2), tabled);
  return total;
}

/**
 * Fills the tables tablePlan assigned: for each site that opened a table (off[i] is the next fresh
 * index), p for every pattern, two patterns a vector, with the kernels' arithmetic.
 */
export function tableFill(m: PairwiseForm, off: usize, table: usize): void {
  const one = f64x2.splat(1.0);
  const kInv = v128.load64_splat(EXP_K, 0), kShift = v128.load64_splat(EXP_K, 8);
  const kHi = v128.load64_splat(EXP_K, 16), kLo = v128.load64_splat(EXP_K, 24);
  const c2 = v128.load64_splat(EXP_K, 32), c3 = v128.load64_splat(EXP_K, 40);
  const c4 = v128.load64_splat(EXP_K, 48), c5 = v128.load64_splat(EXP_K, 56);
  const lim = v128.load64_splat(EXP_K, 64);
  const bitOne = i64x2.splat(1);
  let next = 0;
  for (let i = 0; i < m.nBits; i++) {
    if (load<i32>(off + (<usize>i << 2)) != next) continue; // shares an earlier site's table, or has none
    const d = degreeOf(m, i);
    const v = m.val + (<usize>load<i32>(m.rowPtr + (<usize>i << 2)) << 3);
    const t = table + (<usize>next << 4);
    const a = load<f64>(m.a + (<usize>i << 3));
    if (d == 0) {
      entry(t, 1.0 / (1.0 + Math.exp(-a)));
    } else {
      for (let P = 0; P < 1 << d; P += 2) {
        const pats = i64x2.replace_lane(i64x2.splat(<i64>P), 1, <i64>(P + 1));
        let u = f64x2.splat(a);
        for (let k = 0; k < d; k++) {
          const mask = i64x2.neg(v128.and(i64x2.shr_u(pats, k), bitOne)); // all ones where bit k is set
          u = f64x2.add(u, v128.and(v128.load64_splat(v + (<usize>k << 3)), mask));
        }
        const p = f64x2.div(one, f64x2.add(one, expPair(f64x2.neg(u), kInv, kShift, kHi, kLo, c2, c3, c4, c5, lim)));
        entry(t + (<usize>P << 4), f64x2.extract_lane(p, 0));
        entry(t + (<usize>(P + 1) << 4), f64x2.extract_lane(p, 1));
      }
    }
    next += 1 << d;
  }
}

/** Writes entry [p, T(p)] at e: T = #{w ≥ 0 : w + 0.5 < p·2^32}, at most 2^32 (0 when p is NaN). */
@inline
function entry(e: usize, p: f64): void {
  const P = p * 4294967296.0; // exact: a power of two
  let T: i64 = 0;
  if (P > 0) {
    const f = Math.floor(P);
    T = <i64>f + <i64>(f + 0.5 < P);
    if (T > 4294967296) T = 4294967296;
  }
  store<f64>(e, p);
  store<i64>(e, T, 8);
}

/** Site i's pattern in one chain (state bytes at s): bit k − k0 is the row's k-th neighbour's state. */
@inline
export function tablePattern(m: PairwiseForm, s: usize, k0: i32, k1: i32): i32 {
  let idx = 0;
  for (let k = k0; k < k1; k++) idx |= <i32>load<u8>(s + <usize>load<i32>(m.col + (<usize>k << 2))) << (k - k0);
  return idx;
}

/**
 * The free-bit lanes kernel's scan (gibbs_lanes_free.ts) for B = sizeof<T>() chains (T = u16: 2,
 * u32: 4) with p read from the table: the same chains, bit for bit. Sites without a table (off =
 * −1) sum their fields as lanesSweepsF64's general loop does. s: the states (bit-major), rs: the
 * batch's streams (open), p0: the first chain's Philox, cnt: i64 change counters per chain (added
 * to), acc: f64 per (bit, chain) or 0.
 */
export function tableLanesSweeps<T>(m: PairwiseForm, off: usize, table: usize, s: usize, rs: usize, p0: usize, cnt: usize, sweeps: i32, acc: usize): void {
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
    let k = load<i32>(rowPtr);
    for (let i = 0; i < n; i++) {
      const k0 = k;
      const kEnd = load<i32>(rowPtr + (<usize>(i + 1) << 2));
      const o = load<i32>(off + (<usize>i << 2));
      if (pos >= 16) {
        batchStreamsRefill(rs, B, p0);
        pos = 0;
      }
      const wp = words + (<usize>pos << 4);
      pos++;
      let nu: u32;
      let pA = zero, pB = zero; // the chains' p, for the accumulator
      if (o >= 0) {
        // All chains' patterns, one byte each (a chain's byte of a state word is 0 or 1; d ≤ 8).
        let idx: u32 = 0;
        for (; k < kEnd; k++) idx += <u32>load<T>(s + (<usize>load<i32>(col + (<usize>k << 2)) << (quad ? 2 : 1))) << <u32>(k - k0);
        const tab = table + (<usize>o << 4);
        // Each chain's entry; accept where its word is below the threshold.
        const e0 = tab + (<usize>(idx & 255) << 4), e1 = tab + (<usize>((idx >> 8) & 255) << 4);
        nu = <u32>(<i64>load<u32>(wp) < load<i64>(e0, 8)) | (<u32>(<i64>load<u32>(wp, 4) < load<i64>(e1, 8)) << 8);
        if (acc) pA = v128.load64_lane(e1, v128.load64_zero(e0), 1);
        if (quad) {
          const e2 = tab + (<usize>((idx >> 16) & 255) << 4), e3 = tab + (<usize>(idx >> 24) << 4);
          nu |= (<u32>(<i64>load<u32>(wp, 8) < load<i64>(e2, 8)) << 16) | (<u32>(<i64>load<u32>(wp, 12) < load<i64>(e3, 8)) << 24);
          if (acc) pB = v128.load64_lane(e3, v128.load64_zero(e2), 1);
        }
      } else {
        // No table (degree > TABLE_MAX_DEGREE): the field, exp and division, lane by lane.
        let uA = v128.load64_splat(a + (<usize>i << 3));
        let uB = uA;
        for (; k < kEnd; k++) {
          const x = <u32>load<T>(s + (<usize>load<i32>(col + (<usize>k << 2)) << (quad ? 2 : 1)));
          const w = v128.load64_splat(val + (<usize>k << 3));
          if (quad) {
            const q = masks4At(x);
            uA = f64x2.add(uA, v128.and(w, v128.load(q)));
            uB = f64x2.add(uB, v128.and(w, v128.load(q, 16)));
          } else {
            uA = f64x2.add(uA, v128.and(w, maskOf(x)));
          }
        }
        pA = f64x2.div(one, f64x2.add(one, expPair(f64x2.neg(uA), kInv, kShift, kHi, kLo, c2, c3, c4, c5, lim)));
        let bits = i64x2.bitmask(f64x2.lt(uniformPair(wp), pA));
        if (quad) {
          pB = f64x2.div(one, f64x2.add(one, expPair(f64x2.neg(uB), kInv, kShift, kHi, kLo, c2, c3, c4, c5, lim)));
          bits |= i64x2.bitmask(f64x2.lt(uniformPair(wp + 8), pB)) << 2;
        }
        nu = load<u32>(BYTES4 + (<usize>bits << 2));
      }
      const at = s + (<usize>i << (quad ? 2 : 1));
      bytes += <u32>load<T>(at) ^ nu;
      store<T>(at, <T>nu);
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
