// Population annealing (Hukushima & Iba 2003; Machta 2010) — AIS with resampling, i.e. a sequential
// Monte Carlo sampler (Del Moral, Doucet & Jasra 2006) — on the β path of assembly/ais.ts:
//
//   f_β(s) = 1[every set bit has a finite bias] · exp(β E(s)),   β: 0 → 1.
//
// P particles start from f_0 and move through the schedule together. At each temperature every
// particle's log weight gains (β_t − β_{t−1}) E(s); when the weights' effective sample size falls
// below P/2 the population is resampled (systematic resampling) in proportion to them, the log mean
// weight is banked into log Ẑ and the weights reset; then each particle makes its transitions at
// β_t (sequential Gibbs or tree-block Gibbs). Ẑ = Π (mean weights at each resampling) × (mean final
// weights) is an unbiased estimate of Z_1/Z_0. Resampling culls particles trapped in metastable
// states of a glassy model and copies the ones in the dominant ones: on strongly coupled grids
// independent AIS runs each end in their own valley and their weights spread over many nats.
//
// Memory: particle r's state at chains + r·stride, the Gibbs chain layout ([Philox, 64 B][s]).
// Every particle keeps its own stream across resampling — only configurations are copied — so two
// copies of a configuration never share their future randomness. Resampling draws from `pop`, a
// stream of its own.

import { Philox, PHILOX_BYTES, uniform } from '../core/rng';
import { PairwiseForm } from '../core/pairwise';
import { gibbsSweeps } from '../samplers/gibbs';
import { TreeBlocks, treeSweeps, treeRefresh } from '../samplers/treegibbs';
import { energy, temper, initUniform } from './ais';

/** Adds Δβ E_r to each particle's log weight l_r (E = −∞: the weight is 0 for good). */
export function addWeights(l: usize, en: usize, P: i32, dBeta: f64): void {
  for (let r = 0; r < P; r++) {
    const q = l + (<usize>r << 3);
    const e = load<f64>(en + (<usize>r << 3));
    store<f64>(q, e == -Infinity ? -Infinity : load<f64>(q) + dBeta * e);
  }
}

/** log((1/P) Σ exp(l_r)), max-shifted; −∞ when every entry is −∞. */
export function logMeanExp(l: usize, P: i32): f64 {
  let top = -Infinity;
  for (let r = 0; r < P; r++) top = max(top, load<f64>(l + (<usize>r << 3)));
  if (top == -Infinity) return top;
  let sum: f64 = 0;
  for (let r = 0; r < P; r++) sum += Math.exp(load<f64>(l + (<usize>r << 3)) - top);
  return top + Math.log(sum / <f64>P);
}

/** (Σ w)² / Σ w² of w_r = exp(l_r − max l); 0 when every entry is −∞. */
export function ess(l: usize, P: i32): f64 {
  let top = -Infinity;
  for (let r = 0; r < P; r++) top = max(top, load<f64>(l + (<usize>r << 3)));
  if (top == -Infinity) return 0;
  let s: f64 = 0, s2: f64 = 0;
  for (let r = 0; r < P; r++) {
    const w = Math.exp(load<f64>(l + (<usize>r << 3)) - top);
    s += w;
    s2 += w * w;
  }
  return (s * s) / s2;
}

/**
 * Systematic resampling's choice: picks[j] (i32 × P) is the particle slot j takes, in proportion to
 * exp(l_r), from one uniform of pop. Never a particle of weight 0.
 */
export function systematicPicks(pop: Philox, l: usize, P: i32, picks: usize): void {
  let top = -Infinity;
  for (let r = 0; r < P; r++) top = max(top, load<f64>(l + (<usize>r << 3)));
  let total: f64 = 0;
  for (let r = 0; r < P; r++) total += Math.exp(load<f64>(l + (<usize>r << 3)) - top);
  // Slot j takes the particle whose cumulative weight interval holds (j + u)/P · total.
  const u = uniform(pop);
  let cum = Math.exp(load<f64>(l) - top);
  let src = 0;
  for (let j = 0; j < P; j++) {
    const target = ((<f64>j + u) / <f64>P) * total;
    while (cum <= target && src < P - 1) {
      src++;
      cum += Math.exp(load<f64>(l + (<usize>src << 3)) - top);
    }
    // Never a zero-weight particle (only reachable through rounding at the end of the sum).
    let pick = src;
    while (pick > 0 && load<f64>(l + (<usize>pick << 3)) == -Infinity) pick--;
    store<i32>(picks + (<usize>j << 2), pick);
  }
}

/**
 * Systematic resampling of the P configurations (nBits bytes each, at chains + r·stride + 64) in
 * proportion to exp(l_r); copies through buf (P·nBits bytes, then P i32 picks) and resets l to 0.
 * energies (f64 × P) follow their configurations. (assembly/logz/ais_fg.ts passes 4 bytes per
 * variable as nBits.)
 */
export function resample(pop: Philox, chains: usize, stride: usize, nBits: i32, P: i32, l: usize, en: usize, buf: usize, ebuf: usize): void {
  const picks = buf + <usize>P * <usize>nBits;
  systematicPicks(pop, l, P, picks);
  for (let r = 0; r < P; r++) {
    memory.copy(buf + <usize>r * <usize>nBits, chains + <usize>r * stride + PHILOX_BYTES, <usize>nBits);
    store<f64>(ebuf + (<usize>r << 3), load<f64>(en + (<usize>r << 3)));
  }
  for (let j = 0; j < P; j++) {
    const pick = load<i32>(picks + (<usize>j << 2));
    memory.copy(chains + <usize>j * stride + PHILOX_BYTES, buf + <usize>pick * <usize>nBits, <usize>nBits);
    store<f64>(en + (<usize>j << 3), load<f64>(ebuf + (<usize>pick << 3)));
  }
  memory.fill(l, 0, <usize>P << 3);
}

/** Bytes of popAnnealRun's work buffer for P particles: weights, energies (and copies), configurations, picks. */
export function popAnnealWorkBytes(model: usize, P: i32): usize {
  const m = changetype<PairwiseForm>(model);
  return (<usize>P << 5) + <usize>P * <usize>m.nBits + (<usize>P << 2);
}

/**
 * One population of P particles through the schedule betas[0 … nBetas−1] (0 → 1); returns
 * log Ẑ (E[Ẑ] = Z_1/Z_0), −∞ when every particle starts where a coupling forbids. chains: P states
 * `stride` bytes apart, their streams seeded by the bindings; pop: the resampling stream (64 B,
 * seeded). tempered, scratch: as aisRun; tree/treeWork: tree-block transitions, or 0 for
 * sequential Gibbs. work: popAnnealWorkBytes. info (f64 × 2, or 0): resamplings, and the ESS of
 * the final weights.
 */
export function popAnnealRun(model: usize, tempered: usize, chains: usize, stride: usize, P: i32, pop: usize, betas: usize, nBetas: i32, sweeps: i32, scratch: usize, tree: usize, treeWork: usize, work: usize, info: usize, essFraction: f64): f64 {
  const m = changetype<PairwiseForm>(model);
  const tm = changetype<PairwiseForm>(tempered);
  const l = work, en = work + (<usize>P << 3), ebuf = en + (<usize>P << 3), dEslot = ebuf + (<usize>P << 3), buf = dEslot + (<usize>P << 3);
  for (let r = 0; r < P; r++) {
    const c = chains + <usize>r * stride;
    initUniform(m, changetype<Philox>(c), c + PHILOX_BYTES);
    store<f64>(en + (<usize>r << 3), energy(m, c + PHILOX_BYTES));
  }
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
      resample(changetype<Philox>(pop), chains, stride, m.nBits, P, l, en, buf, ebuf);
      resamplings++;
    }
    temper(m, tm, beta);
    if (tree) treeRefresh(tempered, tree);
    // The tree path's free-bit sweeps report the change of the tempered energy β E: E follows from
    // it, recomputed in full every 64 temperatures so rounding cannot drift.
    const full = !tree || t % 64 == 0;
    for (let r = 0; r < P; r++) {
      if (load<f64>(l + (<usize>r << 3)) == -Infinity) continue; // weight 0 for good: not worth moving
      const c = chains + <usize>r * stride;
      const q = en + (<usize>r << 3);
      if (tree) {
        treeSweeps(tm, changetype<TreeBlocks>(tree), c, sweeps, 0, treeWork, 0, dEslot);
        const d = load<f64>(dEslot);
        store<f64>(q, full || isNaN(d) ? energy(m, c + PHILOX_BYTES) : load<f64>(q) + d / beta);
      } else {
        gibbsSweeps(tm, c, sweeps, 0, scratch);
        store<f64>(q, energy(m, c + PHILOX_BYTES));
      }
    }
  }
  if (info) {
    store<f64>(info, <f64>resamplings);
    store<f64>(info, ess(l, P), 8);
  }
  const z = logMeanExp(l, P);
  return z == -Infinity ? z : logZ + z;
}
