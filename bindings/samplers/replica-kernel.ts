// The interface every parallel-tempering replica kernel implements (canonical Gibbs in
// tempering.ts, factor-graph Gibbs in tempering-fg.ts, HMC on p_β(x) in tempering-relaxed.ts),
// in a file of its own so the kernels and the driver do not import each other.
import type { Arena } from '../core/engine.ts';
import type { StateLayout } from '../core/canonical.ts';

/**
 * The replicas' moves on one bound model: each state is one chain's R replicas, laid out as
 * assembly/samplers/tempering.ts says (arrays: 0 β, 1 perm, 2 E, 3 ΣE, 4 accepts, 5 attempts,
 * 6 shift, 7 gap sums).
 */
export interface ReplicaKernel {
  /** Replicas (temperatures) per chain. */
  readonly R: number;
  /** Where the β = 1 marginals' accumulator puts each variable's states. */
  readonly layout: StateLayout;
  /** log Z at β = 0 (of the path's f_0) plus the model's constant: the stepping stone's start. */
  readonly logZ0: number;
  /** Which moves: 'canonical' (Gibbs on the canonical form), 'factor-graph' or 'relaxed' (HMC on p_β(x)). */
  readonly kernel: 'canonical' | 'factor-graph' | 'relaxed';
  /** The engine memory holding the kernel and its chains. */
  readonly arena: Arena;
  /** A chain's R replicas at the inverse temperatures `ladder`, from stream (seed, chain); returns the state's address. */
  init(seed: number, chain: number, ladder: readonly number[]): number;
  /** Runs sweeps (warmup: adapting what the kernel adapts); returns the rate the kernel reports (change or acceptance). */
  step(st: number, sweeps: number, accumulate: boolean, acc: number, warmup: boolean): number;
  /** A view of one of the state's arrays (see above). */
  array(st: number, which: number): Float64Array;
  /** Diagnostics of the kernel's own (after the run). */
  facts(states: readonly number[]): Record<string, number | string | boolean | null>;
  /** Frees the kernel's engine memory. */
  dispose(): void;
}
