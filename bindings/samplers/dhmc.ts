// Discrete HMC (Zhang et al. 2012): Hamiltonian Monte Carlo on the relaxed density p(x) of a
// relaxation (DESIGN.md §2), with Rao–Blackwellised estimators E[p(s|x)] accumulated in WASM while
// sampling. The moves run in WASM (assembly/samplers/hmc.ts; Langevin moves in langevin.ts).
//
// Parametrisations (both sample the same p(s); they differ in how HMC moves):
//   * 'whitened' (default): x with the factor M (M Mᵀ = W + D), x | s ~ N(Mᵀs, I), identity (or
//     adapted diagonal) mass matrix.
//   * 'zhang': Zhang's A = I form, x_I = M x, x_I | s ~ N((W+D)s, W+D), with an identity mass on x_I
//     — the paper's DHMC. Under the linear map it is HMC on x with mass matrix G = MᵀM (inverse mass
//     (MᵀM)⁻¹): momentum p = Mᵀp_I, velocity ẋ = M⁻¹ẋ_I = (MᵀM)⁻¹p. For a general n × m factor of full
//     column rank that is the definition we use (x_I then lives in the m-dimensional range of M with
//     the metric it inherits from Rⁿ). Implementation: G = R Rᵀ with a triangular R, so G⁻¹p is two
//     triangular solves (O(m²)):
//       - square lower-triangular M (dense Cholesky): R = Mᵀ, no extra storage;
//       - any other factor (eigen V Λ^½, sparse Cholesky, non-square): G = MᵀM formed densely and
//         factored here (m ≤ ZHANG_DENSE_LIMIT). A sparse factor's own triangular structure (M = PᵀL,
//         G = LᵀL) is not exploited: large sparse models should use 'whitened'.
//     Samples are stored and reported in x (whitened) coordinates either way; π, marginals, ESS are
//     invariant.
//
// Streams: each chain uses two Philox streams keyed by (seed, chain): the move stream and a separate
// stream for the draws of s ~ p(s|x) behind the empirical marginals, so asking for them never
// changes the chain. Tags: HMC 4/5, MALA 6/7, ULA 8/9 (Gibbs uses 1).

//
// The sampler class is in continuous-sampler.ts (mass matrices in zhang-mass.ts), the run driver in
// continuous-run.ts; this file is the HMC move's entry points and re-exports both.

import type { Engine } from '../core/engine.ts';
import type { RelaxationData } from '../relax/relaxation-bound.ts';
import { ContinuousSampler, type ContinuousSamplerOptions, type ContinuousTarget, type IntegratorName } from './continuous-sampler.ts';
import { CONTINUOUS_RUN_OPTION_KEYS, DHMC_DEFAULTS, runContinuous, type ContinuousResult, type ContinuousRunOptions } from './continuous-run.ts';
import { checkOptionKeys } from '../core/options.ts';

export * from './continuous-sampler.ts';
export * from './continuous-run.ts';
export { ZHANG_DENSE_LIMIT, zhangMassFactor } from './zhang-mass.ts';

/** HMC on p(x): ContinuousSampler with the HMC move. */
export class DHMCSampler extends ContinuousSampler {
  constructor(engine: Engine, target: ContinuousTarget, opts: ContinuousSamplerOptions = {}) {
    super(engine, target, 'hmc', opts);
  }
}

/** Options of `runDHMC`: the run's options and the HMC integrator's; defaults in DHMC_DEFAULTS. */
export interface DHMCOptions extends ContinuousRunOptions {
  /** Integrator steps per trajectory. Default 5. */
  leapfrogSteps?: number;
  /** The integrator: a name from INTEGRATORS or a palindromic coefficient table (default 'leapfrog'). */
  integrator?: IntegratorName | readonly number[];
}

/** Every option runDHMC reads (DHMCOptions): it refuses any other. */
export const DHMC_OPTION_KEYS: readonly string[] = [...CONTINUOUS_RUN_OPTION_KEYS, 'leapfrogSteps', 'integrator'];

/**
 * DHMC: HMC on the relaxation's p(x), Rao–Blackwellised marginals E[p(s|x)] with batch-means standard
 * errors, optional pairwise and empirical marginals, ESS/R̂ diagnostics. Method name 'dhmc'.
 */
export function runDHMC(engine: Engine, relaxation: RelaxationData, opts: DHMCOptions = {}): ContinuousResult {
  checkOptionKeys(opts, DHMC_OPTION_KEYS);
  return runContinuous(engine, relaxation, opts, {
    move: 'hmc',
    method: 'dhmc',
    defaults: { targetAccept: DHMC_DEFAULTS.targetAccept },
    leapfrogSteps: opts.leapfrogSteps ?? DHMC_DEFAULTS.leapfrogSteps,
    integrator: opts.integrator ?? DHMC_DEFAULTS.integrator,
  });
}
