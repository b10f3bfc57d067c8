// Parallel tempering with HMC replicas on the relaxed density p_β(x) (assembly/samplers/
// tempering_relaxed.ts): runTempering's moves 'hmc'. Pairwise models whose couplings have a
// relaxation (no zero couplings); the stepping stone starts from f_0 = N(0, I) times the number of
// states the biases allow (as AIS on the relaxed path), so log Z is the discrete model's.
import type { Arena, Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import type { StateLayout } from '../core/canonical.ts';
import { chainSeedWords } from '../core/seed.ts';
import { buildRelaxation } from '../relax/relaxation.ts';
import type { RelaxationOptions } from '../relax/relaxation.ts';
import { BoundRelaxation } from '../relax/relaxation-bound.ts';
import { aisLogZ0 } from '../logz/logz.ts';
import type { ReplicaKernel } from './replica-kernel.ts';

/** Leapfrog steps per HMC transition by default (as DHMC's). */
export const PT_HMC_LEAPFROG = 5;
/** The step sizes' start (on f_0 = N(0, I), five leapfrog steps of 1 accept about 90 %) and warm-up target. */
const START_EPS = 1;
const TARGET_ACCEPT = 0.8;
/** Stream tag of the relaxed replicas ("PH"). */
const PT_HMC_STREAM = 0x50480000;

/** Parallel tempering's replicas as HMC chains on p_β(x): each state is one chain's R replicas. */
export class RelaxedTemperingSampler implements ReplicaKernel {
  readonly kernel = 'relaxed' as const;
  /** The relaxation in engine memory. */
  readonly bound: BoundRelaxation;
  /** The canonical form's bits (π per bit is accumulated). */
  readonly layout: StateLayout;
  /** log Z_0 of f_0 (states the biases allow) plus the canonical form's offset. */
  readonly logZ0: number;
  private readonly factorKind: string;
  private readonly dimension: number;

  /** Builds and binds the relaxation (ModelError when the model has none) for chains of R replicas. */
  constructor(readonly engine: Engine, model: Model, readonly R: number, readonly leapfrog: number, relaxation: RelaxationOptions) {
    const relax = buildRelaxation(engine, model, relaxation);
    this.layout = relax.form;
    this.logZ0 = aisLogZ0(relax.form) + relax.form.logZOffset;
    this.factorKind = relax.factorKind;
    this.dimension = relax.factor.m;
    this.bound = new BoundRelaxation(engine, relax);
  }

  /** The engine memory holding the sampler and its chains. */
  get arena(): Arena {
    return this.bound.arena;
  }

  /** A chain's R replicas (x ~ N(0, I)) at the inverse temperatures `ladder`; returns the state's address. */
  init(seed: number, chain: number, ladder: readonly number[]): number {
    const st = this.arena.alloc(this.engine.kernels.ptRelaxedStateBytes(this.bound.relaxed, this.R));
    const betas = this.arena.allocF64(ladder);
    const [lo, hi] = chainSeedWords(seed, chain);
    this.engine.call('pt init', (k) => k.ptRelaxedInit(this.bound.relaxed, st, this.R, betas, lo, hi, chain, PT_HMC_STREAM, START_EPS));
    return st;
  }

  /** Runs sweeps (one HMC transition per replica each; warm-up adapts the step sizes); returns the acceptance rate. */
  step(st: number, sweeps: number, accumulate: boolean, acc: number, warmup: boolean): number {
    const accepted = this.engine.call('pt step', (k) => k.ptRelaxedStep(this.bound.relaxed, st, sweeps, this.leapfrog, accumulate ? 1 : 0, acc, warmup ? TARGET_ACCEPT : 0));
    return accepted / (sweeps * this.R);
  }

  /** A view of one of the state's arrays (ReplicaKernel). */
  array(st: number, which: number): Float64Array {
    const len = which >= 4 ? this.R - 1 : this.R;
    return this.arena.f64(this.engine.kernels.ptArray(st, which) >>> 0, len);
  }

  /** The step sizes (per temperature; those of the first chain, ranged over all chains) and the relaxation. */
  facts(states: readonly number[]): Record<string, number | string | boolean | null> {
    let lo = Infinity, hi = 0;
    for (const st of states) {
      for (const e of this.arena.f64(this.engine.kernels.ptRelaxedStepSizes(st) >>> 0, this.R)) {
        lo = Math.min(lo, e);
        hi = Math.max(hi, e);
      }
    }
    return { leapfrogSteps: this.leapfrog, stepSizeMin: Number.isFinite(lo) ? lo : null, stepSizeMax: hi > 0 ? hi : null, factor: this.factorKind, dimension: this.dimension };
  }

  /** Frees the sampler's engine memory. */
  dispose(): void {
    this.bound.dispose();
  }
}
