// Langevin samplers on the relaxed density p(x) (moves in assembly/langevin.ts):
//
//   x' = x + (ε²/2) G⁻¹ ∇log p(x) + ε ξ,   ξ ~ N(0, G⁻¹)     (G: the mass matrix / preconditioner)
//
// * MALA: Metropolis-adjusted; exact for p(x). ε adapted in warm-up by dual averaging to a mean
//   acceptance of 0.574 (Roberts & Rosenthal 1998's asymptotically optimal rate). MALA with step ε is
//   HMC with one leapfrog step of size ε.
// * ULA: the unadjusted move, every proposal taken, at a fixed step size. BIASED: its stationary
//   law is not p(x) (the error is O(ε) in expectations), and its standard errors measure only the
//   Monte Carlo noise around the biased limit — never use them as error bars for the true marginals.
//   If no stepSize is given, ULA's warm-up adapts ε as MALA would (target 0.574) and then freezes
//   it; the result's diagnostics carry `biased: true`.
//
// The 2022 note (seed 004) writes Langevin dynamics for its own Ising-variable form of the trick,
// F(x) = xᵀx − β⁻¹ Σ log cosh(βB_i), B = 2Wx + b, and prints the force without a factor 2 (it is
// 2x − 2Wv, v = tanh βB; DESIGN.md §5). We do not use that form: the moves here run on relaxed.ts's
// log p(x), whose gradient the tests check by finite differences.
//
// Same shape as DHMC: init(seed, chain) → state; step(state, n, {accumulate, trace}) → info; warmup.

import type { Engine } from '../core/engine.ts';
import type { RelaxationData } from '../relax/relaxation-bound.ts';
import { checkOptionKeys } from '../core/options.ts';
import { ContinuousSampler, runContinuous, CONTINUOUS_RUN_OPTION_KEYS, DHMC_DEFAULTS, type ContinuousRunOptions, type ContinuousResult, type ContinuousSamplerOptions, type ContinuousTarget, type ContinuousState } from './dhmc.ts';

/** Defaults of `runMALA`: DHMC_DEFAULTS with targetAccept 0.574. */
export const MALA_DEFAULTS = { ...DHMC_DEFAULTS, targetAccept: 0.574 } as const;
/** Defaults of `runULA`: DHMC_DEFAULTS with targetAccept 0.574. */
export const ULA_DEFAULTS = { ...DHMC_DEFAULTS, targetAccept: 0.574 } as const;

type LangevinSamplerOptions = Omit<ContinuousSamplerOptions, 'integrator' | 'leapfrogSteps'>;

/**
 * The Metropolis-adjusted Langevin algorithm on a continuous target: one gradient step plus Gaussian noise,
 * accepted by a Metropolis–Hastings test.
 */
export class MALASampler extends ContinuousSampler {
  constructor(engine: Engine, target: ContinuousTarget, opts: LangevinSamplerOptions = {}) {
    super(engine, target, 'mala', opts);
  }

  /**
   * MALA's log acceptance ratio for the proposal built from the chain's current x and a given
   * standard normal z (x' = x + (ε²/2)G⁻¹∇ + ε ξ(z)); a diagnostic. Returns x' too.
   */
  logAccept(state: ContinuousState, z: ArrayLike<number>): { logAlpha: number; proposal: Float64Array } {
    const a = state.arena;
    const zp = a.allocF64(z), out = a.allocF64(this.m);
    const logAlpha = this.engine.call('mala log accept', (k) => k.langevinLogAccept(state.ptr, zp, out));
    return { logAlpha, proposal: a.readF64(out, this.m) };
  }
}

/** The unadjusted Langevin algorithm: MALA's move without the accept test (biased by the step size). */
export class ULASampler extends ContinuousSampler {
  constructor(engine: Engine, target: ContinuousTarget, opts: LangevinSamplerOptions = {}) {
    super(engine, target, 'ula', opts);
  }
}

/** Options of `runMALA` (as ContinuousRunOptions). */
export type MALAOptions = ContinuousRunOptions;
/** Options of `runULA` (as ContinuousRunOptions). */
export type ULAOptions = ContinuousRunOptions;
/** Every option runMALA reads (MALAOptions): it refuses any other (leapfrogSteps and integrator are DHMC's). */
export const MALA_OPTION_KEYS: readonly string[] = CONTINUOUS_RUN_OPTION_KEYS;
/** Every option runULA reads (ULAOptions): it refuses any other. */
export const ULA_OPTION_KEYS: readonly string[] = CONTINUOUS_RUN_OPTION_KEYS;

/** MALA on the relaxation's p(x): method 'mala'. Options as runDHMC without the integrator ones. */
export function runMALA(engine: Engine, relaxation: RelaxationData, opts: MALAOptions = {}): ContinuousResult {
  checkOptionKeys(opts, MALA_OPTION_KEYS);
  return runContinuous(engine, relaxation, opts, { move: 'mala', method: 'mala', defaults: { targetAccept: MALA_DEFAULTS.targetAccept } });
}

/**
 * ULA on the relaxation's p(x): method 'ula'. Biased (see the header): diagnostics.biased = true.
 * stepSize fixes ε; without it, warm-up adapts ε by MALA's dual averaging and then freezes it.
 */
export function runULA(engine: Engine, relaxation: RelaxationData, opts: ULAOptions = {}): ContinuousResult {
  checkOptionKeys(opts, ULA_OPTION_KEYS);
  return runContinuous(engine, relaxation, opts, { move: 'ula', method: 'ula', defaults: { targetAccept: ULA_DEFAULTS.targetAccept }, biased: true });
}
