// One evaluation of the log-likelihood gradient's two phases for given parameters, through the same
// kernels the learner runs: the data statistics (hidden units at their conditional means) and the
// statistics over `particles` chains after `sweeps` sweeps of any of the learner's particle kernels. For checking the estimator against
// exact expectations, and for callers that run their own optimiser.

import type { Engine } from '../core/engine.ts';
import { seedWords } from '../core/seed.ts';
import { checkCount, checkOptionKeys, MAX_CHAINS, MAX_LOOP_COUNT } from '../core/options.ts';
import { BoundMachine, type MachineParams } from './machine.ts';
import { LAYER_DEFAULTS, ParticleKernel, type LayerOptions, type LearnSampler } from './particles.ts';
import type { BinaryData } from './likelihood.ts';

/** Expectations of one phase of the log-likelihood gradient (data or model), in the parameters' layout. */
export interface PhaseStatistics {
  /** Mean of x_p per unit (Potts: per unit and state). */
  a: Float64Array;
  /** Mean of x_i x_j per coupling (params.w's layout). */
  w: Float64Array;
}

/** Every option gradientStatistics takes. */
const GRADIENT_OPTION_KEYS: readonly string[] = ['particles', 'sweeps', 'seed', 'sampler', ...Object.keys(LAYER_DEFAULTS)];

/**
 * Both phases of the log-likelihood gradient at `params`: the data statistics (hidden units at their conditional
 * means) and the model statistics over `particles` chains (default 1000) after `sweeps` sweeps (default 100) of
 * the particle kernel `sampler` (default 'gibbs'; see LearnSampler) from `seed` (default 1). DHMC adapts its step
 * size over the first half of the sweeps, then holds it. The gradient of the average log-likelihood is data − model.
 */
export function gradientStatistics(
  engine: Engine, params: MachineParams, data: BinaryData, opts: { particles?: number; sweeps?: number; seed?: number; sampler?: LearnSampler } & LayerOptions = {},
): { data: PhaseStatistics; model: PhaseStatistics } {
  // Checked like learn()'s options: { particles: 0 } gave NaN statistics, 2.5 and sweeps −1 ran, a misspelt name its default.
  checkOptionKeys(opts, GRADIENT_OPTION_KEYS);
  const P = opts.particles ?? 1000, sweeps = opts.sweeps ?? 100;
  checkCount('particles', P, 1, MAX_CHAINS);
  checkCount('sweeps', sweeps, 0, MAX_LOOP_COUNT);
  const [lo, hi] = seedWords(opts.seed ?? 1);
  const m = new BoundMachine(engine, params.kind, params.nVisible, params.nHidden, params.states);
  try {
    m.set(params);
    const k = engine.kernels, ar = m.arena, n = m.nBits, nnz = Math.max(1, m.nnz), vb = m.visibleBits;
    const dp = m.loadData(data);
    const sa = ar.allocF64(n), sw = ar.allocF64(nnz), x = ar.alloc(k.learnAccumulateScratchBytes(m.header) >>> 0);
    const kernel = new ParticleKernel(engine, m, opts.sampler ?? 'gibbs', opts);
    const pb = k.learnParticleBytes(m.header) >>> 0, particles = ar.alloc(P * pb);
    const read = (count: number): PhaseStatistics => {
      const a = ar.readF64(sa, n).map((v) => v / count);
      // Pair e's statistic sits at both its entries; the arrays are zeroed for the next phase.
      const w = m.perPair(sw).map((v) => v / count);
      ar.f64(sa, n).fill(0);
      ar.f64(sw, nnz).fill(0);
      return { a, w };
    };
    engine.call('learn data statistics', (kk) => kk.learnAccumulate(m.header, dp, vb, 0, data.rows, vb, sa, sw, x));
    const dataStats = read(data.rows);
    k.learnParticlesInit(m.header, particles, P, lo, hi, 0, 31);
    if (kernel.sampler === 'dhmc') {
      // Step-size adaptation in chunks of 5 sweeps over the first half; the second half runs at the final size.
      let done = 0;
      for (; done + 5 <= sweeps / 2; done += 5) kernel.advance(particles, P, 5, done === 0);
      kernel.advance(particles, P, sweeps - done, done === 0, false);
    } else kernel.advance(particles, P, sweeps);
    engine.call('learn model statistics', (kk) => {
      kk.learnAccumulate(m.header, particles + (kk.rngStateBytes() >>> 0), pb, 0, P, vb, sa, sw, x);
    });
    return { data: dataStats, model: read(P) };
  } finally {
    m.dispose();
  }
}
