// AIS runs and population-annealing particles in SIMD lanes: a batch of B chains (the single-site
// lanes kernel's layout, gibbs_lanes.ts: Philox × B, the batch's streams, bit-major states
// s[bit·B + chain]) moves through the β schedule together, one chain per f64x2 lane, with
// transitions from treegibbs_lanes.ts (tree-block Gibbs) or gibbs_lanes.ts (single-site Gibbs). A
// population of population annealing is one batch.
//
// Free-bit forms only (every block a single bit with finite tables: Ising models, Boltzmann
// machines, the UAI grids); the bindings keep the one-chain kernels (ais.ts, popanneal.ts) for
// the rest. There no run starts outside the support and no particle's weight is 0, so every chain
// draws the same words and the streams stay in lockstep. Each lane repeats the one-chain kernels'
// operations in order — the start (gibbsChainInit's draws = initUniform's on free bits), the energy
// (ais.ts energy, lane by lane), the weight updates, the energy from the tree sweep's change with a
// full recomputation every 64 temperatures, systematicPicks for resampling — so run r, or particle
// r of a population, gives the same log weight, bit for bit, as aisRun / popAnnealRun with the same
// stream (test/particles-lanes.test.ts). The opt-in f32 transitions (four chains a vector:
// treegibbs_lanes_f32.ts, or gibbs_lanes.ts's f32 scan) run other chains with the same targets; the
// energies in the weights stay f64, recomputed from the states at every temperature.

import { Philox } from '../core/rng';
import { PairwiseForm } from '../core/pairwise';
import { lanesInit, lanesStateOffset, lanesSweepsF64, lanesSweepsF32 } from '../samplers/gibbs_lanes';
import { treeLanesSweepsF32, treeLanesF32WorkBytes } from '../samplers/treegibbs_lanes_f32';
import { TreeBlocks, treeRefresh } from '../samplers/treegibbs';
import { treeLanesSweeps, treeLanesWorkBytes, lowMask2 } from '../samplers/treegibbs_lanes';
import { temper } from './ais';
import { addWeights, ess, logMeanExp, systematicPicks } from './popanneal';

/**
 * E of every chain of the batch into en (f64 × B): ais.ts's energy, lane by lane — per bit p its
 * field f = Σ_k (s_j ? W_pj : +0) in CSR order, then E += s_p ? a_p + ½ f : +0 — with the bits in
 * the outer loop and the chains innermost (contiguous bytes of the bit-major states), so each bit's
 * rows are read once for the whole batch. f: f64 × B of scratch.
 */
function energies(m: PairwiseForm, batch: usize, B: i32, en: usize, f: usize): void {
  const s = batch + lanesStateOffset(B);
  const Bz = <usize>B, bytes = Bz << 3;
  const half = f64x2.splat(0.5);
  memory.fill(en, 0, bytes);
  for (let p = 0; p < m.nBits; p++) {
    memory.fill(f, 0, bytes);
    const end = load<i32>(m.rowPtr + (<usize>(p + 1) << 2));
    for (let k = load<i32>(m.rowPtr + (<usize>p << 2)); k < end; k++) {
      const w = v128.load64_splat(m.val + (<usize>k << 3));
      const sj = s + <usize>load<i32>(m.col + (<usize>k << 2)) * Bz;
      for (let c: usize = 0; c < Bz; c += 2) {
        const q = f + (c << 3);
        v128.store(q, f64x2.add(v128.load(q), v128.and(w, lowMask2(sj + c))));
      }
    }
    const ap = v128.load64_splat(m.a + (<usize>p << 3));
    const sp = s + <usize>p * Bz;
    for (let c: usize = 0; c < Bz; c += 2) {
      const q = en + (c << 3);
      v128.store(q, f64x2.add(v128.load(q), v128.and(f64x2.add(ap, f64x2.mul(half, v128.load(f + (c << 3)))), lowMask2(sp + c))));
    }
  }
}

/** Bytes of the transition's work: the tree sweeps' (f64 or f32) or the single-site scratch; then the f32 values. */
function transitionBytes(m: PairwiseForm): usize {
  return max(max(treeLanesWorkBytes(m), treeLanesF32WorkBytes(m)), <usize>max(1, m.maxBlock) << 4);
}

/** Bytes of the work buffers: aisLanesRun's and popAnnealLanesRun's for P particles in a batch of B. */
export function particlesLanesWorkBytes(model: usize, B: i32, P: i32): usize {
  const m = changetype<PairwiseForm>(model);
  const nnz = <usize>load<i32>(m.rowPtr + (<usize>m.nBits << 2));
  return transitionBytes(m) + ((<usize>m.nBits + nnz) << 2) + (<usize>B << 4) + (<usize>P << 4) + (<usize>P << 2) + <usize>m.nBits * <usize>B;
}

/** The tempered form's values rounded to f32 (a32 then val32 at v32). */
function roundValues(tm: PairwiseForm, v32: usize): void {
  const n = tm.nBits, nnz = load<i32>(tm.rowPtr + (<usize>n << 2));
  for (let p = 0; p < n; p++) store<f32>(v32 + (<usize>p << 2), <f32>load<f64>(tm.a + (<usize>p << 3)));
  const val32 = v32 + (<usize>n << 2);
  for (let k = 0; k < nnz; k++) store<f32>(val32 + (<usize>k << 2), <f32>load<f64>(tm.val + (<usize>k << 3)));
}

/**
 * One transition at β (the tempered form already at β): tree-block or single-site sweeps of every
 * chain, and each chain's energy E (of the model) in en: from the tree sweep's change, recomputed in
 * full when `full`.
 */
function transition(m: PairwiseForm, tm: PairwiseForm, tree: usize, batch: usize, B: i32, sweeps: i32, work: usize, en: usize, dE: usize, beta: f64, full: bool, f32: bool): void {
  if (f32) {
    // Single precision: the f32 kernels on the tempered values rounded to f32; E in f64 from the states.
    const v32 = work + transitionBytes(m), val32 = v32 + (<usize>m.nBits << 2);
    roundValues(tm, v32);
    if (tree) {
      treeRefresh(changetype<usize>(tm), tree);
      treeLanesSweepsF32(tm, v32, val32, changetype<TreeBlocks>(tree), batch, B, sweeps, work);
    } else {
      lanesSweepsF32(tm, v32, val32, batch, B, sweeps, 0, work, 0);
    }
    energies(m, batch, B, en, dE);
    return;
  }
  if (tree) {
    treeRefresh(changetype<usize>(tm), tree);
    treeLanesSweeps(tm, changetype<TreeBlocks>(tree), batch, B, sweeps, work, dE);
    if (full) {
      energies(m, batch, B, en, dE);
      return;
    }
    for (let c = 0; c < B; c++) {
      const q = en + (<usize>c << 3);
      store<f64>(q, load<f64>(q) + load<f64>(dE + (<usize>c << 3)) / beta);
    }
  } else {
    lanesSweepsF64(tm, batch, B, sweeps, 0, work, 0);
    energies(m, batch, B, en, dE);
  }
}

/**
 * B AIS runs (aisRun on each chain of the batch, its stream seeded by the bindings) through
 * betas[0 … nBetas−1]; logw (f64 × B) receives the log weights. trace (f64 × B × nBetas, run-major,
 * or 0): aisRun's energies per run. tree: a TreeBlocks header or 0 (single-site Gibbs). work:
 * particlesLanesWorkBytes(…, B, 0). f32: the opt-in single-precision transitions (four chains a
 * vector, B a multiple of 4): other chains with the same targets, so not aisRun's weights.
 */
export function aisLanesRun(model: usize, tempered: usize, batch: usize, B: i32, betas: usize, nBetas: i32, sweeps: i32, tree: usize, work: usize, trace: usize, logw: usize, f32: bool): void {
  const m = changetype<PairwiseForm>(model);
  const tm = changetype<PairwiseForm>(tempered);
  const Bz = <usize>B;
  const en = work, dE = en + (Bz << 3), tw = dE + (Bz << 3);
  lanesInit(m, batch, B);
  energies(m, batch, B, en, dE);
  memory.fill(logw, 0, Bz << 3);
  const T = <usize>nBetas << 3;
  if (trace) for (let c: usize = 0; c < Bz; c++) store<f64>(trace + c * T, load<f64>(en + (c << 3)));
  let prev = load<f64>(betas);
  for (let t = 1; t < nBetas; t++) {
    const beta = load<f64>(betas + (<usize>t << 3));
    for (let c: usize = 0; c < Bz; c++) {
      const e = load<f64>(en + (c << 3));
      if (trace) store<f64>(trace + c * T + (<usize>t << 3), e);
      const q = logw + (c << 3);
      store<f64>(q, load<f64>(q) + (beta - prev) * e);
    }
    prev = beta;
    if (t < nBetas - 1) {
      temper(m, tm, beta);
      transition(m, tm, tree, batch, B, sweeps, tw, en, dE, beta, t % 64 == 0, f32);
    }
  }
}

/**
 * One population of P particles (the first P chains of a batch of B ≥ P; the rest pad the last
 * vector and take no part) through the schedule: popAnnealRun's algorithm and its result (log Ẑ),
 * bit for bit (f32: the opt-in single-precision transitions, B a multiple of 4; other chains). pop:
 * the resampling stream. work: particlesLanesWorkBytes(…, B, P). info (f64 × 2, or 0):
 * resamplings, and the ESS of the final weights.
 */
export function popAnnealLanesRun(model: usize, tempered: usize, batch: usize, B: i32, P: i32, pop: usize, betas: usize, nBetas: i32, sweeps: i32, tree: usize, work: usize, info: usize, essFraction: f64, f32: bool): f64 {
  const m = changetype<PairwiseForm>(model);
  const tm = changetype<PairwiseForm>(tempered);
  const Bz = <usize>B;
  const en = work, dE = en + (Bz << 3), l = dE + (Bz << 3), ebuf = l + (<usize>P << 3), picks = ebuf + (<usize>P << 3);
  const buf = picks + (<usize>P << 2), tw = buf + <usize>m.nBits * Bz;
  const s = batch + lanesStateOffset(B);
  lanesInit(m, batch, B);
  energies(m, batch, B, en, dE);
  memory.fill(l, 0, <usize>P << 3);
  let logZ: f64 = 0;
  let resamplings = 0;
  let prev = load<f64>(betas);
  for (let t = 1; t < nBetas; t++) {
    const beta = load<f64>(betas + (<usize>t << 3));
    addWeights(l, en, P, beta - prev);
    prev = beta;
    if (t == nBetas - 1) break;
    if (ess(l, P) < essFraction * <f64>P) {
      const z = logMeanExp(l, P);
      if (z == -Infinity) return -Infinity;
      logZ += z;
      // popanneal.ts's resample on the bit-major states: slot j takes particle picks[j]'s bits.
      systematicPicks(changetype<Philox>(pop), l, P, picks);
      memory.copy(buf, s, <usize>m.nBits * Bz);
      memory.copy(ebuf, en, <usize>P << 3);
      for (let i = 0; i < m.nBits; i++) {
        const row = <usize>i * Bz;
        for (let j = 0; j < P; j++) store<u8>(s + row + <usize>j, load<u8>(buf + row + <usize>load<i32>(picks + (<usize>j << 2))));
      }
      for (let j = 0; j < P; j++) store<f64>(en + (<usize>j << 3), load<f64>(ebuf + (<usize>load<i32>(picks + (<usize>j << 2)) << 3)));
      memory.fill(l, 0, <usize>P << 3);
      resamplings++;
    }
    temper(m, tm, beta);
    transition(m, tm, tree, batch, B, sweeps, tw, en, dE, beta, t % 64 == 0, f32);
  }
  if (info) {
    store<f64>(info, <f64>resamplings);
    store<f64>(info, ess(l, P), 8);
  }
  const z = logMeanExp(l, P);
  return z == -Infinity ? z : logZ + z;
}

