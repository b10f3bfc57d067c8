// AIS and population annealing directly on the factor graph (any arity), with sequential Gibbs
// transitions (assembly/samplers/factorgibbs.ts). The path, as assembly/logz/ais.ts's on the
// canonical form:
//
//   f_β(x) = 1[x_v allowed by v's unary factors, every v] · exp(β E(x)),   E(x) = Σ_f θ_f(x),   β: 0 → 1.
//
// f_0 is uniform over the states every arity-1 factor allows (Z_0 = Π_v #allowed states; the
// bindings add log Z_0 and the model's constant); at β = 1 the indicator is implied by E. Hard
// zeros: β·(−∞) = −∞ for β > 0, so a run that starts on a configuration a factor of arity ≥ 2
// forbids gets log weight −∞ at its first step (and stops there); Gibbs sweeps at β > 0 never
// leave the support once in it. E is recomputed in full after each temperature's sweeps (one pass
// over the factors, cheaper than the sweep itself), so rounding cannot drift.
//
// Chain state layout: the factor-graph Gibbs chain's ([Philox, 64 B][x: i32 per variable]).

import { Philox, PHILOX_BYTES, uniform32 } from '../core/rng';
import { FactorGraph, cardOf, factorEntry, unaryAllows } from '../core/factorgraph';
import { fgChainBytes, fgSweeps } from '../samplers/factorgibbs';
import { addWeights, ess, logMeanExp, resample } from './popanneal';

/** E(x) = Σ_f θ_f(x) (the model's constant left out); −∞ where a factor forbids x. */
export function fgEnergy(g: FactorGraph, x: usize): f64 {
  let s: f64 = 0;
  for (let f = 0; f < g.nFactors; f++) s += load<f64>(g.tables + (<usize>factorEntry(g, f, x) << 3));
  return s;
}

/** Draws x from f_0: each variable uniformly over the states its unary factors allow (the bindings check there is one). */
export function fgInitBase(g: FactorGraph, r: Philox, x: usize): void {
  for (let v = 0; v < g.n; v++) {
    const K = cardOf(g, v);
    let cnt = 0;
    for (let k = 0; k < K; k++) if (unaryAllows(g, v, k)) cnt++;
    let pick = cnt <= 1 ? 0 : min<i32>(<i32>(uniform32(r) * <f64>cnt), cnt - 1);
    let state = 0;
    for (let k = 0; k < K; k++) {
      if (!unaryAllows(g, v, k)) continue;
      if (pick == 0) {
        state = k;
        break;
      }
      pick--;
    }
    store<i32>(x + (<usize>v << 2), state);
  }
}

export function aisFgStateBytes(hdr: usize): usize {
  return fgChainBytes(changetype<FactorGraph>(hdr));
}

/**
 * One AIS run through betas[0 … nBetas−1] (f64, strictly increasing, 0 → 1): x from f_0 with the
 * chain's stream (seeded by the bindings), then for t = 1 … nBetas−1 log w += (β_t − β_{t−1}) E(x)
 * and, except after the last, `sweeps` Gibbs scans at β_t. Returns log w (E[w] = Z_1/Z_0); −∞ when
 * the run starts outside the support. scratch: f64 × maxCard. energies: f64 × nBetas or 0 (entry
 * t: the E(x) step t's weight update saw; entry 0: the start).
 */
export function aisFgRun(hdr: usize, chain: usize, betas: usize, nBetas: i32, sweeps: i32, scratch: usize, energies: usize): f64 {
  const g = changetype<FactorGraph>(hdr);
  const x = chain + PHILOX_BYTES;
  fgInitBase(g, changetype<Philox>(chain), x);
  let e = fgEnergy(g, x);
  let logw: f64 = 0;
  let prev = load<f64>(betas);
  if (energies) store<f64>(energies, e);
  for (let t = 1; t < nBetas; t++) {
    if (energies) store<f64>(energies + (<usize>t << 3), e);
    const beta = load<f64>(betas + (<usize>t << 3));
    if (e == -Infinity) return -Infinity;
    logw += (beta - prev) * e;
    prev = beta;
    if (t < nBetas - 1) {
      fgSweeps(g, chain, sweeps, 0, scratch, beta);
      e = fgEnergy(g, x);
    }
  }
  return logw;
}

/** Bytes of popAnnealFgRun's work buffer for P particles: weights, energies (and copies), configurations, picks. */
export function popAnnealFgWorkBytes(hdr: usize, P: i32): usize {
  return <usize>P * 28 + <usize>P * (<usize>changetype<FactorGraph>(hdr).n << 2);
}

/**
 * Population annealing (assembly/logz/popanneal.ts's algorithm) on the factor graph: P particles
 * from f_0 through the schedule, weights gaining (β_t − β_{t−1}) E(x), systematic resampling when
 * the ESS falls below essFraction·P (log mean weight banked), `sweeps` Gibbs scans at β_t. Returns
 * log Ẑ (E[Ẑ] = Z_1/Z_0), −∞ when every particle has weight 0. A particle with weight 0 (log −∞) is
 * never moved and never chosen by resampling; the weights' sums skip it (exp(−∞ − max) = 0), so no
 * NaN arises while one particle has a finite weight. chains: P states `stride` bytes apart, each
 * keeping its own stream; pop: the resampling stream. work: popAnnealFgWorkBytes. info (f64 × 2,
 * or 0): resamplings, and the ESS of the final weights.
 */
export function popAnnealFgRun(hdr: usize, chains: usize, stride: usize, P: i32, pop: usize, betas: usize, nBetas: i32, sweeps: i32, scratch: usize, work: usize, info: usize, essFraction: f64): f64 {
  const g = changetype<FactorGraph>(hdr);
  const bytes = g.n << 2;
  const l = work, en = work + (<usize>P << 3), ebuf = en + (<usize>P << 3), buf = ebuf + (<usize>P << 3);
  for (let r = 0; r < P; r++) {
    const c = chains + <usize>r * stride;
    fgInitBase(g, changetype<Philox>(c), c + PHILOX_BYTES);
    store<f64>(en + (<usize>r << 3), fgEnergy(g, c + PHILOX_BYTES));
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
      resample(changetype<Philox>(pop), chains, stride, bytes, P, l, en, buf, ebuf);
      resamplings++;
    }
    for (let r = 0; r < P; r++) {
      if (load<f64>(l + (<usize>r << 3)) == -Infinity) continue; // weight 0 for good: not worth moving
      const c = chains + <usize>r * stride;
      fgSweeps(g, c, sweeps, 0, scratch, beta);
      store<f64>(en + (<usize>r << 3), fgEnergy(g, c + PHILOX_BYTES));
    }
  }
  if (info) {
    store<f64>(info, <f64>resamplings);
    store<f64>(info, ess(l, P), 8);
  }
  const z = logMeanExp(l, P);
  return z == -Infinity ? z : logZ + z;
}
