// Parallel tempering on the factor graph itself (factors of any arity): the replica kernel of
// assembly/samplers/tempering_fg.ts — factor-graph Gibbs scans at each β, the swaps and stepping-stone
// sums of the canonical kernel. runTempering picks it for models with a factor of arity > 2.
import type { Arena, Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { BoundFactorGraph } from '../core/bound-fg.ts';
import { stateLayout, type StateLayout } from '../core/canonical.ts';
import { chainSeedWords } from '../core/seed.ts';
import type { ReplicaKernel } from './replica-kernel.ts';

/** Stream tags as the canonical kernel's: (seed, chain, tag) for the swaps, tag + 1 + k for slot k. */
const PT_FG_STREAM = 0x50540000;

/** Parallel tempering's replicas on the factor graph (any arity): each state is one chain's R replicas. */
export class FactorGraphTemperingSampler implements ReplicaKernel {
  readonly kernel = 'factor-graph' as const;
  /** The model's factor graph in engine memory. */
  readonly graph: BoundFactorGraph;
  /** One accumulator entry per (variable, state). */
  readonly layout: StateLayout;
  /** Σ_v log K_v plus the model's constant: log Z at β = 0. */
  readonly logZ0: number;

  /** Binds the model's factor graph for chains of R replicas (EngineError when it cannot fit). */
  constructor(readonly engine: Engine, readonly model: Model, readonly R: number) {
    let states = 0;
    for (let v = 0; v < model.n; v++) states += model.card[v];
    this.graph = BoundFactorGraph.fromModel(engine, model, 'parallel tempering', (s) => R * (4 * s.n + 96) + 80 * R + 8 * s.maxCard + 8 * states + 256);
    this.layout = stateLayout(model.card);
    let z = model.logConst;
    for (let v = 0; v < model.n; v++) z += Math.log(model.card[v]);
    this.logZ0 = z;
  }

  /** The engine memory holding the sampler and its chains. */
  get arena(): Arena {
    return this.graph.arena;
  }

  /** A chain's R replicas (uniform starts) at the inverse temperatures `ladder`; returns the state's address. */
  init(seed: number, chain: number, ladder: readonly number[]): number {
    const header = this.graph.live();
    const st = this.arena.alloc(this.engine.kernels.ptFgStateBytes(header, this.R));
    const betas = this.arena.allocF64(ladder);
    const [lo, hi] = chainSeedWords(seed, chain);
    this.engine.call('pt init', (k) => k.ptFgInit(header, st, this.R, betas, lo, hi, chain, PT_FG_STREAM));
    return st;
  }

  /** Runs sweeps; with accumulate the β = 1 conditionals go into acc (f64 per variable and state). Returns the change rate. */
  step(st: number, sweeps: number, accumulate: boolean, acc = 0): number {
    const header = this.graph.live();
    const changed = this.engine.call('pt step', (k) => k.ptFgStep(header, st, sweeps, accumulate ? 1 : 0, acc));
    return changed / (sweeps * this.R * this.model.n);
  }

  /** A view of one of the state's arrays (ReplicaKernel). */
  array(st: number, which: number): Float64Array {
    const len = which >= 4 ? this.R - 1 : this.R;
    return this.arena.f64(this.engine.kernels.ptArray(st, which) >>> 0, len);
  }

  /** No diagnostics of its own. */
  facts(): Record<string, number | string | boolean | null> {
    return {};
  }

  /** Frees the sampler's engine memory. */
  dispose(): void {
    this.graph.dispose();
  }
}
