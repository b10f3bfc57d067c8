// The opt-in f32x4 variant of treegibbs_lanes.ts: four chains per vector, the free-bit tree-block
// sweep in single precision (fields from the form's values rounded to f32, expF32x4 and logF32x4,
// the same log-odds messages and draws, one word of the chain's own stream per variable, drawn in
// the same order). A different chain with the same target as the f64 kernel's; it reports no energy
// change (the callers recompute energies in f64 from the states). B and the tile are multiples of 4.

import { PHILOX_BYTES } from '../core/rng';
import { batchStreamsBytes, batchStreamsOpen, batchStreamsNext, batchStreamsClose } from '../core/rng_lanes';
import { PairwiseForm } from '../core/pairwise';
import { expF32x4 } from '../core/vmath';
import { logF32x4 } from '../core/vlog';
import { TreeBlocks } from './treegibbs';
import { lanesStateOffset } from './gibbs_lanes';
import { treeLanesTile } from './treegibbs_lanes';

/** Chains per tile: treegibbs_lanes.ts's rule for 8 bytes per (variable, chain). */
@inline
function tileF32Chains(m: PairwiseForm): i32 {
  return treeLanesTile(m, 8);
}

/** Work bytes of treeLanesSweepsF32: a tile's streams, λ and e^{−λ} per (variable, chain of a tile). */
export function treeLanesF32WorkBytes(m: PairwiseForm): usize {
  const tile = tileF32Chains(m);
  return batchStreamsBytes(tile) + <usize>m.nBlocks * <usize>tile * 8;
}

/** Lane masks of four chains' bytes at p (all ones where the byte is 1). */
@inline
function mask4(p: usize): v128 {
  return i32x4.neg(i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(v128.load32_zero(p))));
}

/** Uniforms on (0, 1] of chains c … c+3 (c a multiple of 4), in f32. */
@inline
function uniform4(words: usize, c: usize): v128 {
  const w = v128.load(words + ((c >> 2) << 8));
  return f32x4.mul(f32x4.add(f32x4.convert_i32x4_u(w), f32x4.splat(0.5)), f32x4.splat(2.3283064365386963e-10));
}

@inline
function usable4(e: v128): v128 {
  return v128.and(f32x4.gt(e, f32x4.splat(0)), f32x4.lt(e, f32x4.splat(Infinity)));
}

@inline
function softplus4(x: v128): v128 {
  return f32x4.add(f32x4.max(x, f32x4.splat(0)), logF32x4(f32x4.add(f32x4.splat(1), expF32x4(f32x4.neg(f32x4.abs(x))))));
}

/**
 * `sweeps` passes over the tree blocks for every chain of the batch in f32 (free-bit forms, after
 * treeRefresh). a32, val32: the form's a and W values rounded to f32. work: treeLanesF32WorkBytes.
 */
export function treeLanesSweepsF32(m: PairwiseForm, a32: usize, val32: usize, t: TreeBlocks, batch: usize, B: i32, sweeps: i32, work: usize): void {
  const tile = tileF32Chains(m);
  for (let c0 = 0; c0 < B; c0 += tile) tileF32(m, a32, val32, t, batch, B, c0, min(tile, B - c0), tile, sweeps, work);
}

function tileF32(m: PairwiseForm, a32: usize, val32: usize, t: TreeBlocks, batch: usize, B: i32, c0: i32, W: i32, tile: i32, sweeps: i32, work: usize): void {
  const p0 = batch + <usize>c0 * PHILOX_BYTES;
  const rs = work;
  batchStreamsOpen(rs, W, p0);
  const s = batch + lanesStateOffset(B) + <usize>c0;
  const Bz = <usize>B, Wz = <usize>W;
  const lam = work + batchStreamsBytes(tile), en = lam + <usize>m.nBlocks * <usize>tile * 4;
  const order = t.order, parent = t.parent;
  const one = f32x4.splat(1.0);
  for (let sw = 0; sw < sweeps; sw++) {
    for (let tb = 0; tb < t.nTreeBlocks; tb++) {
      const lo = load<i32>(t.blockPtr + (<usize>tb << 2)), hi = load<i32>(t.blockPtr + (<usize>(tb + 1) << 2));
      // The block's bits cleared (no energy change is kept, so the old states are not needed).
      for (let i = lo; i < hi; i++) memory.fill(s + <usize>load<i32>(order + (<usize>i << 2)) * Bz, 0, Wz);
      for (let i = lo; i < hi; i++) {
        const v = load<i32>(order + (<usize>i << 2));
        const av = v128.load32_splat(a32 + (<usize>v << 2));
        const k0 = load<i32>(m.rowPtr + (<usize>v << 2)), k1 = load<i32>(m.rowPtr + (<usize>(v + 1) << 2));
        const q = <usize>v * Wz << 2;
        for (let c: usize = 0; c < Wz; c += 4) {
          let u = av;
          for (let k = k0; k < k1; k++) {
            const j = load<i32>(m.col + (<usize>k << 2));
            u = f32x4.add(u, v128.and(v128.load32_splat(val32 + (<usize>k << 2)), mask4(s + <usize>j * Bz + c)));
          }
          v128.store(lam + q + (c << 2), u);
        }
      }
      for (let i = hi - 1; i >= lo; i--) {
        const v = load<i32>(order + (<usize>i << 2));
        const p = load<i32>(parent + (<usize>v << 2));
        const q = <usize>v * Wz << 2, pq = <usize>p * Wz << 2;
        const w = f32x4.splat(<f32>load<f64>(t.coup + (<usize>v << 3)));
        const ew = f32x4.splat(<f32>load<f64>(t.expCoup + (<usize>v << 3)));
        const ewOk = usable4(ew);
        for (let c: usize = 0; c < Wz; c += 4) {
          const lv = v128.load(lam + q + (c << 2));
          const e = expF32x4(f32x4.neg(lv));
          v128.store(en + q + (c << 2), e);
          if (p < 0) continue;
          let d = logF32x4(f32x4.div(f32x4.add(e, ew), f32x4.add(e, one)));
          const ok = v128.and(usable4(e), ewOk);
          if (!i32x4.all_true(ok)) d = v128.bitselect(d, f32x4.sub(softplus4(f32x4.add(lv, w)), softplus4(lv)), ok);
          const at = lam + pq + (c << 2);
          v128.store(at, f32x4.add(v128.load(at), d));
        }
      }
      for (let i = lo; i < hi; i++) {
        const v = load<i32>(order + (<usize>i << 2));
        const p = load<i32>(parent + (<usize>v << 2));
        const q = <usize>v * Wz << 2;
        const w = f32x4.splat(<f32>load<f64>(t.coup + (<usize>v << 3)));
        const ew = f32x4.splat(<f32>load<f64>(t.expCoup + (<usize>v << 3)));
        const ewOk = usable4(ew);
        const words = batchStreamsNext(rs, W, p0);
        const row = s + <usize>v * Bz;
        for (let c: usize = 0; c < Wz; c += 4) {
          const e = v128.load(en + q + (c << 2));
          let prob = f32x4.div(one, f32x4.add(one, e));
          if (p >= 0) {
            let fast = f32x4.div(one, f32x4.add(one, f32x4.div(e, ew)));
            const ok = v128.and(usable4(e), ewOk);
            if (!i32x4.all_true(ok)) {
              const lv = v128.load(lam + q + (c << 2));
              fast = v128.bitselect(fast, f32x4.div(one, f32x4.add(one, expF32x4(f32x4.neg(f32x4.add(lv, w))))), ok);
            }
            prob = v128.bitselect(fast, prob, mask4(s + <usize>p * Bz + c));
          }
          const yes = f32x4.lt(uniform4(words, c), prob);
          v128.store32_lane(row + c, i8x16.neg(i8x16.narrow_i16x8_s(i16x8.narrow_i32x4_s(yes, yes), yes)), 0);
        }
      }
    }
  }
  batchStreamsClose(rs, W, p0);
}
