// Gradient statistics for learning binary pairwise models (Boltzmann machines, RBMs, semi-restricted
// RBMs) on the canonical form, whose a and W the learner owns and updates in place, so the
// particles' Gibbs sweeps always read the current parameters.
//
// Bits 0…nVisible−1 are visible, the rest hidden; hidden units have no hidden neighbours, so given
// the visible bits they are independent with p(h = 1 | v) = σ(a_h + Σ_q W_hq v_q). Both phases use
// these conditional expectations for the hidden units (exact in the positive phase, Rao–Blackwellised
// in the negative one): x_p = s_p for visible bits, σ(u_p) for hidden ones, and the statistics
// are Σ x_p (for a) and Σ x_p x_q over W's stored entries (for W; exact since no hidden–hidden pair
// is stored). W is stored symmetrically (both triangles), so both copies get the same statistic
// and the same update, and stay equal.
//
// Particle layout: the Gibbs sampler's chains, [Philox, 64 B][s: u8 per bit], back to back.

import { Philox, PHILOX_BYTES, rngInit, uniform32 } from '../core/rng';
import { PairwiseForm, localField } from '../core/pairwise';
import { gibbsChainInit, gibbsSweeps } from '../samplers/gibbs';
import { TreeBlocks, treeRefresh, treeSweeps } from '../samplers/treegibbs';

@inline
export function sigmoid(u: f64): f64 {
  return 1.0 / (1.0 + Math.exp(-u));
}

export function learnParticleBytes(model: usize): usize {
  return PHILOX_BYTES + <usize>changetype<PairwiseForm>(model).nBits;
}

/** Seeds `count` particles (streams (seed, firstChain + i, tag)) at uniformly random states. */
export function learnParticlesInit(model: usize, chains: usize, count: i32, seedLo: u32, seedHi: u32, firstChain: u32, tag: u32): void {
  const m = changetype<PairwiseForm>(model);
  const stride = PHILOX_BYTES + <usize>m.nBits;
  for (let i = 0; i < count; i++) {
    const c = chains + <usize>i * stride;
    rngInit(changetype<Philox>(c), seedLo, seedHi, firstChain + <u32>i, tag);
    gibbsChainInit(m, c);
  }
}

/**
 * CD-k start: particle i takes data row rows[i] (u8 per visible bit, rows of `stride` bytes) as its
 * visible state and draws its hidden units from p(h | v).
 */
export function learnParticlesFromData(model: usize, chains: usize, count: i32, data: usize, stride: i32, rows: usize, nVisible: i32): void {
  const m = changetype<PairwiseForm>(model);
  const cstride = PHILOX_BYTES + <usize>m.nBits;
  for (let i = 0; i < count; i++) {
    const c = chains + <usize>i * cstride, s = c + PHILOX_BYTES;
    const row = data + <usize>load<i32>(rows + (<usize>i << 2)) * <usize>stride;
    memory.copy(s, row, <usize>nVisible);
    const r = changetype<Philox>(c);
    for (let p = nVisible; p < m.nBits; p++) store<u8>(s + <usize>p, uniform32(r) < sigmoid(localField(m, s, p)) ? 1 : 0);
  }
}

/** `sweeps` sequential Gibbs sweeps on each particle; returns the number of bit flips. */
export function learnParticlesAdvance(model: usize, chains: usize, count: i32, sweeps: i32, scratch: usize): f64 {
  const m = changetype<PairwiseForm>(model);
  const stride = PHILOX_BYTES + <usize>m.nBits;
  let changed: f64 = 0;
  for (let i = 0; i < count; i++) changed += gibbsSweeps(m, chains + <usize>i * stride, sweeps, 0, scratch);
  return changed;
}

/** Samples whose x vectors are held at once while accumulating (one 64-byte line per bit). */
export const LEARN_CHUNK: i32 = 8;

/** Bytes of the x scratch learnAccumulate needs: LEARN_CHUNK f64 per bit. */
export function learnAccumulateScratchBytes(model: usize): usize {
  return <usize>changetype<PairwiseForm>(model).nBits * <usize>LEARN_CHUNK * 8;
}

/**
 * Adds the statistics of `count` samples into statA (f64 per bit) and statW (f64 per stored entry
 * of W). Sample i is at base + (rows ? rows[i] : i) · stride (u8 per bit; only its visible bits are
 * read). x: learnAccumulateScratchBytes of scratch.
 *
 * Samples go LEARN_CHUNK at a time, their x stored bit-major (x[q·8 + j] for sample j of the chunk):
 * each entry of W then takes one pass over its row of statW per chunk, not per sample, and reads
 * the chunk's eight values of its column bit as one cache line (four f64x2 products). Per-sample
 * accumulation streamed all of statW through memory once a sample (12 MB for a 784 × 500 RBM).
 */
export function learnAccumulate(model: usize, base: usize, stride: i32, rows: usize, count: i32, nVisible: i32, statA: usize, statW: usize, x: usize): void {
  const m = changetype<PairwiseForm>(model);
  const n = m.nBits;
  for (let i0 = 0; i0 < count; i0 += LEARN_CHUNK) {
    const c = min<i32>(LEARN_CHUNK, count - i0);
    if (c < LEARN_CHUNK) memory.fill(x, 0, <usize>n * <usize>LEARN_CHUNK * 8);
    for (let j = 0; j < c; j++) {
      const at = rows ? load<i32>(rows + (<usize>(i0 + j) << 2)) : i0 + j;
      const s = base + <usize>at * <usize>stride;
      const xj = x + (<usize>j << 3);
      for (let p = 0; p < nVisible; p++) store<f64>(xj + (<usize>p << 6), <f64>load<u8>(s + <usize>p));
      for (let p = nVisible; p < n; p++) store<f64>(xj + (<usize>p << 6), sigmoid(localField(m, s, p)));
    }
    for (let p = 0; p < n; p++) {
      const xp = x + (<usize>p << 6);
      const p0 = v128.load(xp), p1 = v128.load(xp, 16), p2 = v128.load(xp, 32), p3 = v128.load(xp, 48);
      const sp = f64x2.add(f64x2.add(p0, p1), f64x2.add(p2, p3));
      const sum = f64x2.extract_lane(sp, 0) + f64x2.extract_lane(sp, 1);
      if (sum == 0) continue; // every x_p of the chunk is 0 (x ≥ 0)
      store<f64>(statA + (<usize>p << 3), load<f64>(statA + (<usize>p << 3)) + sum);
      const end = load<i32>(m.rowPtr + (<usize>(p + 1) << 2));
      for (let k = load<i32>(m.rowPtr + (<usize>p << 2)); k < end; k++) {
        const xq = x + (<usize>load<i32>(m.col + (<usize>k << 2)) << 6);
        const t = f64x2.add(
          f64x2.add(f64x2.mul(p0, v128.load(xq)), f64x2.mul(p1, v128.load(xq, 16))),
          f64x2.add(f64x2.mul(p2, v128.load(xq, 32)), f64x2.mul(p3, v128.load(xq, 48))),
        );
        store<f64>(statW + (<usize>k << 3), load<f64>(statW + (<usize>k << 3)) + f64x2.extract_lane(t, 0) + f64x2.extract_lane(t, 1));
      }
    }
  }
}

/**
 * One gradient step with momentum: g = posScale·pos − negScale·neg (− decay·W for couplings),
 * v ← μ v + η g (η times vvFactor on visible–visible couplings), θ ← θ + v. Zeroes the statistics.
 * Writes the gradient's sum of squares to out[0] and returns the largest |θ| (NaN if any is NaN).
 */
export function learnUpdate(
  model: usize, nVisible: i32, posA: usize, posW: usize, negA: usize, negW: usize, velA: usize, velW: usize,
  posScale: f64, negScale: f64, rate: f64, vvFactor: f64, decay: f64, momentum: f64, out: usize,
): f64 {
  const m = changetype<PairwiseForm>(model);
  const n = m.nBits;
  let biggest: f64 = 0, sq: f64 = 0, bad = false;
  for (let p = 0; p < n; p++) {
    const o = <usize>p << 3;
    const g = posScale * load<f64>(posA + o) - negScale * load<f64>(negA + o);
    const v = momentum * load<f64>(velA + o) + rate * g;
    const a = load<f64>(m.a + o) + v;
    store<f64>(velA + o, v);
    store<f64>(m.a + o, a);
    store<f64>(posA + o, 0);
    store<f64>(negA + o, 0);
    sq += g * g;
    if (a != a) bad = true;
    biggest = max(biggest, abs(a));
    const end = load<i32>(m.rowPtr + (<usize>(p + 1) << 2));
    for (let k = load<i32>(m.rowPtr + (<usize>p << 2)); k < end; k++) {
      const q = load<i32>(m.col + (<usize>k << 2)), ok = <usize>k << 3;
      const w = load<f64>(m.val + ok);
      const gw = posScale * load<f64>(posW + ok) - negScale * load<f64>(negW + ok) - decay * w;
      const vw = momentum * load<f64>(velW + ok) + (p < nVisible && q < nVisible ? rate * vvFactor : rate) * gw;
      const w2 = w + vw;
      store<f64>(velW + ok, vw);
      store<f64>(m.val + ok, w2);
      store<f64>(posW + ok, 0);
      store<f64>(negW + ok, 0);
      if (q > p) sq += gw * gw;
      if (w2 != w2) bad = true;
      biggest = max(biggest, abs(w2));
    }
  }
  store<f64>(out, sq);
  return bad ? NaN : biggest;
}

/** Address of the form's bias array a (the learner updates it in place). */
export function learnFormBiases(model: usize): usize {
  return changetype<PairwiseForm>(model).a;
}

/** Address of the form's coupling values (W's stored entries). */
export function learnFormCouplings(model: usize): usize {
  return changetype<PairwiseForm>(model).val;
}

/**
 * `sweeps` tree-block Gibbs sweeps on each particle (assembly/samplers/treegibbs.ts), after
 * refreshing the blocks' cached couplings from the current W. Returns the sweeps' change count.
 */
export function learnParticlesAdvanceTree(model: usize, tree: usize, chains: usize, count: i32, sweeps: i32, work: usize): f64 {
  const m = changetype<PairwiseForm>(model), t = changetype<TreeBlocks>(tree);
  treeRefresh(model, tree);
  const stride = PHILOX_BYTES + <usize>m.nBits;
  let changed: f64 = 0;
  for (let i = 0; i < count; i++) changed += treeSweeps(m, t, chains + <usize>i * stride, sweeps, 0, work);
  return changed;
}

/** Expands `count` states (u8, 0…K−1) into one-hot rows: out[i·K + x_i] = 1. */
export function learnOneHotRows(states: usize, count: i32, K: i32, out: usize): void {
  memory.fill(out, 0, <usize>count * <usize>K);
  for (let i = 0; i < count; i++) store<u8>(out + <usize>i * <usize>K + <usize>load<u8>(states + <usize>i), 1);
}
