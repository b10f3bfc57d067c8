// Naive mean field on the factor graph of any arity (assembly/variational/meanfield_fg.ts): the
// kernel behind `mf` on models with factors of arity > 2, driven by the same starts, budget,
// convergence rule and reporting as the pairwise kernel (meanfield.ts's meanFieldRestarts). The
// state is one categorical q_v per variable (Σ_v K_v numbers, variable v's at off[v]). The budget
// unit is a table-entry visit: one sweep reads every factor's table once per scope variable and
// once more for the bound, Σ_f (arity_f + 1) · |table_f|.

import type { Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { BoundFactorGraph } from '../core/bound-fg.ts';
import { feasibleConfiguration, type FeasibleOutcome } from '../core/feasible.ts';
import { EngineError, ModelError } from '../core/errors.ts';
import { seedWords } from '../core/seed.ts';
import { MF_STREAM, type AscentInfo, type MeanFieldKernel } from './meanfield-kernel.ts';

export class FactorGraphMeanField implements MeanFieldKernel {
  readonly sweepCost: number;
  private readonly g: BoundFactorGraph;
  private readonly entries: number;
  private readonly off: number;
  private readonly q: number;
  private readonly ent: number;
  private readonly scratch: number;
  private readonly digit: number;
  private readonly out: number;
  private readonly rng: number;

  constructor(readonly engine: Engine, readonly model: Model) {
    const { n, card } = model;
    const offsets = new Int32Array(n);
    let entries = 0;
    for (let v = 0; v < n; v++) {
      offsets[v] = entries;
      entries += card[v];
    }
    this.entries = entries;
    let cost = 0;
    for (let f = 0; f < model.nFactors; f++) cost += (model.arity(f) + 1) * model.tableSize(f);
    this.sweepCost = cost;
    const maxArity = model.maxArity;
    this.g = BoundFactorGraph.fromModel(engine, model, 'mean field', (s) => 4 * n + 8 * (entries + n) + 8 * (2 * s.maxCard + maxArity + 3) + 4 * (maxArity + 1) + 32 + 256);
    const arena = this.g.arena;
    this.off = arena.allocI32(offsets);
    this.q = arena.alloc(entries * 8);
    this.ent = arena.alloc(n * 8);
    this.scratch = arena.alloc(8 * (2 * this.g.maxCard + maxArity + 3));
    this.digit = arena.alloc(4 * (maxArity + 1));
    this.out = arena.alloc(32);
    this.rng = arena.alloc(engine.kernels.rngStateBytes());
  }

  /**
   * Start from a configuration of positive probability (q a point mass on it), found by the
   * engine's depth-first search: the start of last resort when every other keeps mass on a zero
   * potential. Returns what the search found ('none': Z = 0).
   */
  feasibleStart(budget?: number): FeasibleOutcome['status'] {
    const found = feasibleConfiguration(this.g, budget);
    if (found.x) this.setMarginals(Array.from(found.x, (s, v) => Float64Array.from({ length: this.model.card[v] }, (_, k) => (k === s ? 1 : 0))));
    return found.status;
  }

  randomStart(seed: number, j: number): void {
    const h = this.g.live();
    const [lo, hi] = seedWords(seed);
    this.engine.call('mean field init', (k) => {
      k.rngSeed(this.rng, lo, hi, j, MF_STREAM);
      k.mfgRandomInit(h, this.off, this.q, this.ent, this.rng);
    });
  }

  orderedStart(which: 0 | 1): void {
    const h = this.g.live();
    this.engine.call('mean field init', (k) => k.mfgOrderedInit(h, this.off, this.q, this.ent, which));
  }

  /** The state: every variable's q_v, concatenated. */
  snapshot(): Float64Array {
    this.g.live();
    return this.g.arena.readF64(this.q, this.entries);
  }

  /** Sets every q_v (each must sum to 1). */
  setMarginals(marginals: readonly ArrayLike<number>[]): void {
    const h = this.g.live();
    if (marginals.length !== this.model.n) throw new ModelError(`expected ${this.model.n} marginals, got ${marginals.length}`);
    const view = this.g.arena.f64(this.q, this.entries);
    let at = 0;
    marginals.forEach((p, v) => {
      if (p.length !== this.model.card[v]) throw new ModelError(`variable ${v}: ${p.length} probabilities for ${this.model.card[v]} states`);
      view.set(p, at);
      at += p.length;
    });
    this.engine.call('mean field entropies', (k) => k.mfgEntropies(h, this.off, this.q, this.ent));
  }

  /** The state as one probability vector per variable: views of one copy (a buffer per variable weighs on the collector at 10⁶ variables). */
  marginals(state: Float64Array = this.snapshot()): Float64Array[] {
    const copy = state.slice(0, this.entries);
    let at = 0;
    return Array.from(this.model.card, (K) => copy.subarray(at, (at += K)));
  }

  /** The bound at the current marginals. */
  objective(): number {
    const h = this.g.live();
    return this.engine.call('mean field objective', (k) => k.mfgObjective(h, this.off, this.q, this.ent, this.scratch, this.digit));
  }

  ascend(maxSweeps: number, tol: number): AscentInfo {
    const h = this.g.live();
    const sweeps = this.engine.call('mean field ascent', (k) => k.mfgAscend(h, this.off, this.q, this.ent, maxSweeps, tol, this.scratch, this.digit, this.out));
    const o = this.g.arena.readF64(this.out, 4);
    if (Number.isNaN(o[0])) throw new EngineError('mean field: the bound is NaN');
    return { logZ: o[0], sweeps, converged: o[1] === 1, lastIncrease: o[2], lastStep: o[3] };
  }

  dispose(): void {
    this.g.dispose();
  }
}
