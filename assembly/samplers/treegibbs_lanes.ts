// Tree-block Gibbs on free-bit forms for a batch of chains, one chain per f64x2 lane: treegibbs.ts's
// free-bit fast path (binarySweeps) with the states bit-major, as the single-site lanes kernel keeps
// them (gibbs_lanes.ts: batch layout, s[bit·B + chain], B even), and the chains' streams read four
// chains per Philox evaluation (core/rng_lanes.ts).
//
// Each lane does binarySweeps' IEEE operations in the same order — the outside field a_v + Σ_j (s_j
// ? W_vj : +0.0) in CSR order, e^{−λ} by expPair (Math.exp bit for bit), the same divisions, the
// same log (scalar Math.log per lane: the one transcendental not vectorised), the same softplus
// fallbacks, uniform32 from the chain's own stream, the energy change summed in the same order — so
// chain c of a batch is the chain treeSweeps runs for the same stream, bit for bit (states, energy
// change, the generator's position; test/particles-lanes.test.ts). As in binarySweeps, a block's
// old states sit in the top bit of each byte while it is redrawn.

import { PHILOX_BYTES } from '../core/rng';
import { batchStreamsBytes, batchStreamsOpen, batchStreamsNext, batchStreamsClose } from '../core/rng_lanes';
import { PairwiseForm } from '../core/pairwise';
import { EXP_K, expPair } from '../core/vmath';
import { logPair } from '../core/vlog';
import { TreeBlocks, outsideOdds } from './treegibbs';
import { lanesChangedOffset, lanesStateOffset } from './gibbs_lanes';

/**
 * Chains per tile: the batch is swept a tile of chains at a time (each tile all its sweeps), so a
 * tile's λ, e^{−λ} and outside fields stay in cache across a block's passes. Wide tiles spread the
 * per-variable work (the tree's arrays, the streams' refills) over more chains — on UAI Grids_15
 * (400 bits) 64 chains a tile sweep 7 % faster than 8 — so the tile is the widest of 8 … 64 chains
 * whose buffers fit TILE_BUDGET bytes (a 256² lattice keeps 8).
 */
const TILE_MIN = 8, TILE_MAX = 64;
const TILE_BUDGET: usize = 3 << 19;

/** Chains per tile for m (a power of two, TILE_MIN … TILE_MAX) with `bytes` of buffers per (variable, chain). */
@inline
export function treeLanesTile(m: PairwiseForm, bytes: usize = 24): i32 {
  let tile = TILE_MAX;
  while (tile > TILE_MIN && <usize>m.nBlocks * <usize>tile * bytes > TILE_BUDGET) tile >>= 1;
  return tile;
}

/** Work bytes of treeLanesSweeps: a tile's streams; λ, e^{−λ} and the outside field per (variable, chain of a tile). */
export function treeLanesWorkBytes(m: PairwiseForm): usize {
  const tile = treeLanesTile(m);
  return batchStreamsBytes(tile) + <usize>m.nBlocks * <usize>tile * 24;
}

// Lane masks indexed by (lane 0's flag | lane 1's flag << 1).
const MASK2 = memory.data<u64>([0, 0, 0xFFFFFFFFFFFFFFFF, 0, 0, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF]);

/** Masks of two chains' bit 0 of their bytes at p, p + 1 (bit 7 may hold a set-aside state). */
@inline
export function lowMask2(p: usize): v128 {
  const x = <u32>load<u16>(p);
  return v128.load(MASK2 + (<usize>((x & 1) | ((x >> 7) & 2)) << 4));
}

/** Masks of two chains' bit 7 (a block's previous states). */
@inline
function topMask2(p: usize): v128 {
  const x = <u32>load<u16>(p);
  return v128.load(MASK2 + (<usize>(((x >> 7) & 1) | ((x >> 14) & 2)) << 4));
}

/** uniform32 of chains c, c+1 as an f64x2; `words`: batchStreamsNext's word vector of group 0. */
@inline
export function uniformPair(words: usize, c: i32): v128 {
  const w = f64x2.convert_low_i32x4_u(v128.load64_zero(words + (<usize>(c >> 2) << 8) + (<usize>(c & 3) << 2)));
  return f64x2.mul(f64x2.add(w, f64x2.splat(0.5)), f64x2.splat(2.3283064365386963e-10));
}

@inline
function usable(x: f64): bool {
  return x > 0 && x < Infinity;
}

/** usable on both lanes. */
@inline
function usablePair(e: v128): bool {
  return i64x2.all_true(v128.and(f64x2.gt(e, f64x2.splat(0)), f64x2.lt(e, f64x2.splat(Infinity))));
}

@inline
function softplus(x: f64): f64 {
  return max(x, 0.0) + Math.log1p(Math.exp(-Math.abs(x)));
}

/** binarySweeps' upward message of one lane: log((e + e^w)/(e + 1)), or its softplus form. */
@inline
function message(e: f64, ratio: f64, ewOk: bool, lv: f64, w: f64): f64 {
  return usable(e) && ewOk ? Math.log(ratio) : softplus(lv + w) - softplus(lv);
}

/** binarySweeps' probability of x_v = 1 given a parent in state 1, one lane. */
@inline
function probGivenOne(e: f64, fast: f64, ewOk: bool, lv: f64, w: f64): f64 {
  return usable(e) && ewOk ? fast : 1.0 / (1.0 + Math.exp(-(lv + w)));
}

/**
 * `sweeps` passes over the tree blocks for every chain of the batch (free-bit forms only, after
 * treeRefresh). work: treeLanesWorkBytes. dE: f64 × B receiving each chain's change of
 * aᵀs + ½ sᵀWs (of m's values) over the call. acc: f64 per (bit, chain), bit-major, or 0,
 * receiving binarySweeps' marginals: with rb every bit's conditional probability given the other
 * blocks, each sweep (Rao–Blackwellised), without every bit's value after each sweep. changed: f64 × B
 * receiving each chain's number of variable updates that changed the state (binarySweeps' return
 * value), or 0.
 */
export function treeLanesSweeps(m: PairwiseForm, t: TreeBlocks, batch: usize, B: i32, sweeps: i32, work: usize, dE: usize, acc: usize = 0, changed: usize = 0, rb: bool = false): void {
  const tile = treeLanesTile(m);
  for (let c0 = 0; c0 < B; c0 += tile) tileSweeps(m, t, batch, B, c0, min(tile, B - c0), tile, sweeps, work, dE, acc, changed, rb);
}

/** treeLanesSweeps for chains c0 … c0 + W − 1 (W even, ≤ tile) of the batch. */
function tileSweeps(m: PairwiseForm, t: TreeBlocks, batch: usize, B: i32, c0: i32, W: i32, tile: i32, sweeps: i32, work: usize, dE0: usize, acc: usize, changed0: usize, rb: bool): void {
  const p0 = batch + <usize>c0 * PHILOX_BYTES;
  const rs = work;
  batchStreamsOpen(rs, W, p0);
  const s = batch + lanesStateOffset(B) + <usize>c0;
  const dE = dE0 + (<usize>c0 << 3);
  const Bz = <usize>B, Wz = <usize>W;
  const lam = work + batchStreamsBytes(tile), en = lam + <usize>m.nBlocks * <usize>tile * 8, uo = en + <usize>m.nBlocks * <usize>tile * 8;
  const order = t.order, parent = t.parent, coup = t.coup, expCoup = t.expCoup;
  const one = f64x2.splat(1.0);
  const kInv = v128.load64_splat(EXP_K, 0), kShift = v128.load64_splat(EXP_K, 8);
  const kHi = v128.load64_splat(EXP_K, 16), kLo = v128.load64_splat(EXP_K, 24);
  const c2 = v128.load64_splat(EXP_K, 32), c3 = v128.load64_splat(EXP_K, 40);
  const c4 = v128.load64_splat(EXP_K, 48), c5 = v128.load64_splat(EXP_K, 56);
  const lim = v128.load64_splat(EXP_K, 64);
  memory.fill(dE, 0, Wz << 3);
  const changed = changed0 + (<usize>c0 << 3);
  if (changed0) memory.fill(changed, 0, Wz << 3);
  const accTile = acc + (<usize>c0 << 3);
  for (let sw = 0; sw < sweeps; sw++) {
    for (let tb = 0; tb < t.nTreeBlocks; tb++) {
      const lo = load<i32>(t.blockPtr + (<usize>tb << 2)), hi = load<i32>(t.blockPtr + (<usize>(tb + 1) << 2));
      for (let i = lo; i < hi; i++) {
        const row = s + <usize>load<i32>(order + (<usize>i << 2)) * Bz;
        for (let c: usize = 0; c < Wz; c += 2) store<u16>(row + c, <u16>((<u32>load<u16>(row + c) << 7) & 0x8080));
      }
      // The outside fields (block bits read as cleared).
      for (let i = lo; i < hi; i++) {
        const v = load<i32>(order + (<usize>i << 2));
        const av = v128.load64_splat(m.a + (<usize>v << 3));
        const k0 = load<i32>(m.rowPtr + (<usize>v << 2)), k1 = load<i32>(m.rowPtr + (<usize>(v + 1) << 2));
        const q = <usize>v * Wz << 3;
        for (let c: usize = 0; c < Wz; c += 2) {
          let u = av;
          for (let k = k0; k < k1; k++) {
            const j = load<i32>(m.col + (<usize>k << 2));
            u = f64x2.add(u, v128.and(v128.load64_splat(m.val + (<usize>k << 3)), lowMask2(s + <usize>j * Bz + c)));
          }
          v128.store(lam + q + (c << 3), u);
          v128.store(uo + q + (c << 3), u);
        }
      }
      // Upward, leaves first: e^{−λ_v}, and the message into the parent's λ.
      for (let i = hi - 1; i >= lo; i--) {
        const v = load<i32>(order + (<usize>i << 2));
        const p = load<i32>(parent + (<usize>v << 2));
        const q = <usize>v * Wz << 3;
        const w = load<f64>(coup + (<usize>v << 3)), ew = load<f64>(expCoup + (<usize>v << 3));
        const ewOk = usable(ew);
        const ewv = f64x2.splat(ew);
        const pq = <usize>p * Wz << 3;
        for (let c: usize = 0; c < Wz; c += 2) {
          const lv = v128.load(lam + q + (c << 3));
          const e = expPair(f64x2.neg(lv), kInv, kShift, kHi, kLo, c2, c3, c4, c5, lim);
          v128.store(en + q + (c << 3), e);
          if (p < 0) continue;
          const ratio = f64x2.div(f64x2.add(e, ewv), f64x2.add(e, one));
          let d: v128;
          if (ewOk && usablePair(e)) d = logPair(ratio);
          else {
            const d0 = message(f64x2.extract_lane(e, 0), f64x2.extract_lane(ratio, 0), ewOk, f64x2.extract_lane(lv, 0), w);
            d = f64x2.replace_lane(f64x2.splat(d0), 1, message(f64x2.extract_lane(e, 1), f64x2.extract_lane(ratio, 1), ewOk, f64x2.extract_lane(lv, 1), w));
          }
          const at = lam + pq + (c << 3);
          v128.store(at, f64x2.add(v128.load(at), d));
        }
      }
      // Downward, roots first: each bit drawn given its parent's new state.
      for (let i = lo; i < hi; i++) {
        const v = load<i32>(order + (<usize>i << 2));
        const p = load<i32>(parent + (<usize>v << 2));
        const q = <usize>v * Wz << 3;
        const w = load<f64>(coup + (<usize>v << 3)), ew = load<f64>(expCoup + (<usize>v << 3));
        const ewOk = usable(ew);
        const ewv = f64x2.splat(ew);
        const words = batchStreamsNext(rs, W, p0);
        const row = s + <usize>v * Bz;
        for (let c: usize = 0; c < Wz; c += 2) {
          const e = v128.load(en + q + (c << 3));
          let prob = f64x2.div(one, f64x2.add(one, e));
          if (p >= 0) {
            let fast = f64x2.div(one, f64x2.add(one, f64x2.div(e, ewv)));
            if (!(ewOk && usablePair(e))) {
              const lv = v128.load(lam + q + (c << 3));
              const f0 = probGivenOne(f64x2.extract_lane(e, 0), f64x2.extract_lane(fast, 0), ewOk, f64x2.extract_lane(lv, 0), w);
              const f1 = probGivenOne(f64x2.extract_lane(e, 1), f64x2.extract_lane(fast, 1), ewOk, f64x2.extract_lane(lv, 1), w);
              fast = f64x2.replace_lane(f64x2.splat(f0), 1, f1);
            }
            prob = v128.bitselect(fast, prob, lowMask2(s + <usize>p * Bz + c));
          }
          const bits = i64x2.bitmask(f64x2.lt(uniformPair(words, <i32>c), prob));
          store<u16>(row + c, <u16>((<u32>load<u16>(row + c) & 0x8080) | (bits & 1) | ((bits & 2) << 7)));
        }
      }
      if (rb && acc) marginalsLanes(t, lo, hi, Wz, Bz, lam, en, accTile);
      // Children before parents (a parent's byte still holds both its states): ΔE per chain, then
      // the old states dropped.
      for (let i = hi - 1; i >= lo; i--) {
        const v = load<i32>(order + (<usize>i << 2));
        const p = load<i32>(parent + (<usize>v << 2));
        const q = <usize>v * Wz << 3;
        const wv = v128.load64_splat(coup + (<usize>v << 3));
        const row = s + <usize>v * Bz;
        for (let c: usize = 0; c < Wz; c += 2) {
          const m1 = lowMask2(row + c), m0 = topMask2(row + c);
          const at = dE + (c << 3);
          let de = v128.load(at);
          const dx = f64x2.sub(v128.and(one, m1), v128.and(one, m0));
          de = f64x2.add(de, v128.and(f64x2.mul(dx, v128.load(uo + q + (c << 3))), v128.xor(m1, m0)));
          if (p >= 0) {
            const pr = s + <usize>p * Bz + c;
            const a1 = v128.and(m1, lowMask2(pr)), a0 = v128.and(m0, topMask2(pr));
            const dd = f64x2.sub(v128.and(one, a1), v128.and(one, a0));
            de = f64x2.add(de, v128.and(f64x2.mul(dd, wv), v128.xor(a1, a0)));
          }
          v128.store(at, de);
          if (changed0) {
            const ct = changed + (c << 3);
            v128.store(ct, f64x2.add(v128.load(ct), v128.and(one, v128.xor(m1, m0))));
          }
          store<u16>(row + c, <u16>(<u32>load<u16>(row + c) & 0x0101));
        }
      }
    }
    if (acc && !rb) {
      for (let p = 0; p < m.nBits; p++) {
        const ap = accTile + (<usize>p * Bz << 3), sp = s + <usize>p * Bz;
        for (let c: usize = 0; c < Wz; c += 2) v128.store(ap + (c << 3), f64x2.add(v128.load(ap + (c << 3)), v128.and(one, lowMask2(sp + c))));
      }
    }
  }
  batchStreamsClose(rs, W, p0);
}

/**
 * binarySweeps' step 4 for the block's variables order[lo … hi − 1] of a tile of Wz chains: e^{−λ}
 * and λ become e^{−β} and β (or NaN), roots first, and 1 / (1 + e^{−β}) goes into acc, lane by lane
 * the same operations as outsideOdds (which a lane takes whenever some ratio of it is 0 or ∞).
 */
function marginalsLanes(t: TreeBlocks, lo: i32, hi: i32, Wz: usize, Bz: usize, lam: usize, en: usize, acc: usize): void {
  const one = f64x2.splat(1.0);
  for (let i = lo; i < hi; i++) {
    const v = load<i32>(t.order + (<usize>i << 2));
    const p = load<i32>(t.parent + (<usize>v << 2));
    const q = <usize>v * Wz << 3, pq = <usize>p * Wz << 3;
    const ap = acc + (<usize>v * Bz << 3);
    const w = load<f64>(t.coup + (<usize>v << 3)), ew = load<f64>(t.expCoup + (<usize>v << 3));
    const ewOk = usable(ew);
    const ewv = f64x2.splat(ew);
    for (let c: usize = 0; c < Wz; c += 2) {
      const at = en + q + (c << 3);
      let E = v128.load(at);
      if (p >= 0) {
        const e = E, Ep = v128.load(en + pq + (c << 3));
        const G = f64x2.mul(Ep, f64x2.div(f64x2.add(e, ewv), f64x2.add(e, one)));
        E = f64x2.mul(e, f64x2.div(f64x2.add(G, one), f64x2.add(G, ewv)));
        const la = lam + q + (c << 3);
        if (ewOk && usablePair(e) && usablePair(Ep) && usablePair(G) && usablePair(E)) v128.store(la, f64x2.splat(NaN));
        else {
          const lv = v128.load(la), bp = v128.load(lam + pq + (c << 3));
          const E0 = outsideOdds(f64x2.extract_lane(e, 0), ew, f64x2.extract_lane(Ep, 0), f64x2.extract_lane(bp, 0), f64x2.extract_lane(lv, 0), w, la);
          const E1 = outsideOdds(f64x2.extract_lane(e, 1), ew, f64x2.extract_lane(Ep, 1), f64x2.extract_lane(bp, 1), f64x2.extract_lane(lv, 1), w, la + 8);
          E = f64x2.replace_lane(f64x2.splat(E0), 1, E1);
        }
        v128.store(at, E);
      }
      const aq = ap + (c << 3);
      v128.store(aq, f64x2.add(v128.load(aq), f64x2.div(one, f64x2.add(one, E))));
    }
  }
}

// Entry points of tree-block Gibbs chains in lanes (bindings/samplers/treegibbs.ts TreeGibbsLanes;
// batches laid out and started by gibbs_lanes.ts).

/** Work bytes of treeGibbsLanesStep for batches of up to B chains. */
export function treeGibbsLanesWorkBytes(model: usize, B: i32): usize {
  return treeLanesWorkBytes(changetype<PairwiseForm>(model)) + (<usize>B << 3);
}

/**
 * `sweeps` tree-block sweeps of every chain of the batch: treeGibbsStep per lane, bit for bit. acc:
 * f64 per (bit, chain) or 0 (rb: Rao–Blackwellised marginals, 1, or the sampled bits, 0); each
 * chain's number of changed variable updates goes to the batch's change counts (lanesChangedOffset).
 */
export function treeGibbsLanesStep(model: usize, tree: usize, batch: usize, B: i32, sweeps: i32, acc: usize, work: usize, rb: i32): void {
  const m = changetype<PairwiseForm>(model);
  treeLanesSweeps(m, changetype<TreeBlocks>(tree), batch, B, sweeps, work, work + treeLanesWorkBytes(m), acc, batch + lanesChangedOffset(B), rb != 0);
}
