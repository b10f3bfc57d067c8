// Sequential single-site Gibbs directly on the factor graph: factors of any arity, any cardinality,
// hard zeros (assembly/samplers/factorgibbs.ts). method 'gibbs' runs it on models with a factor of
// arity > 2 (gibbsKernel); pairwise models keep the canonical-form kernel (bindings/samplers/gibbs.ts),
// faster there (bench:fgibbs: 3.9× on a binary grid, 1.2× on a q = 3 Potts grid). The sweeps run in
// WASM; this file owns chain memory, seeding and the batch-means aggregation, driven through
// chains.ts like the canonical sampler, so progress, cancellation and runParallel work the same way
// and give the same result shape.
//
// Sampler shape (DESIGN.md §3): init(seed, chain) → state; step(state, sweeps, acc?) → info.

import type { Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { canonicalFits } from '../core/model-range.ts';
import { BoundFactorGraph } from '../core/bound-fg.ts';
import type { InferenceResult } from '../core/result.ts';
import { CancelledError, EngineError, ModelError } from '../core/errors.ts';
import { chainSeedWords } from '../core/seed.ts';
import { checkCount, checkOptionKeys, MAX_LOOP_COUNT } from '../core/options.ts';
import { batchMeansResult, emitChains, range, DiscreteReducer, type DiscreteEvent } from './chains.ts';
import { stateLayout, type StateLayout } from '../core/canonical.ts';
import type { DiscreteChainState, DiscreteStepInfo } from './discrete-sampler.ts';
import { GIBBS_OPTION_KEYS, gibbsRun, type GibbsOptions, type GibbsRun } from './gibbs.ts';
import { refuseZeroModel, SupportStarts } from '../core/feasible.ts';
import { Issued } from './issued.ts';

/** Tag of the factor-graph Gibbs sampler's stream within a chain (the canonical Gibbs sampler uses 1). */
const FACTOR_GIBBS_STREAM = 0x4647; // "FG"

/** Which Gibbs kernel method 'gibbs' runs on a model: the canonical form's when every factor is pairwise. */
export type GibbsKernel = 'canonical' | 'factor-graph';

/** The Gibbs kernel method 'gibbs' runs on `model`. */
export function gibbsKernel(model: Model): GibbsKernel {
  // Pairwise models whose pair tables would not fit (shared tables copied per pair) too.
  return canonicalFits(model) ? 'canonical' : 'factor-graph';
}

/**
 * Sequential single-site Gibbs on the factor graph itself (factors of any arity): each sweep redraws every
 * variable in index order from its conditional. Call dispose() when done.
 */
export class FactorGibbsSampler {
  /** The model's factor graph in engine memory. */
  readonly graph: BoundFactorGraph;
  private readonly issued = new Issued<DiscreteChainState>();
  /** Entries of the accumulator: Σ_v card_v (one per variable and state, variables in order). */
  readonly nStates: number;
  /** Where each variable's states sit in the accumulator. */
  readonly layout: StateLayout;
  private readonly scratch: number;
  private readonly stateBytes: number;

  /**
   * Binds the model's factor graph into `engine`'s memory (EngineError when it cannot fit).
   * @param engine The engine whose memory holds the sampler.
   * @param model The model (factors of any arity).
   */
  constructor(readonly engine: Engine, readonly model: Model) {
    let states = 0;
    for (let v = 0; v < model.n; v++) states += model.card[v];
    this.nStates = states;
    this.layout = stateLayout(model.card);
    // Refused up front when the graph, an accumulator, scratch and two chains' states cannot fit.
    this.graph = BoundFactorGraph.fromModel(engine, model, 'factor-graph Gibbs', (s) => 8 * states + 8 * s.maxCard + 2 * (4 * s.n + 128));
    this.scratch = this.graph.arena.alloc(8 * this.graph.maxCard);
    this.stateBytes = engine.kernels.factorGibbsStateBytes(this.graph.header);
  }

  private header(): number {
    return this.graph.live();
  }

  /**
   * A chain's state: every variable uniform over its states, from its own stream (seed, chain); a
   * start of zero probability (hard constraints joining variables) replaced by one of positive
   * probability (supportStart), from which no site update leaves the support.
   */
  init(seed: number, chain: number): DiscreteChainState {
    const header = this.header();
    const ptr = this.graph.arena.alloc(this.stateBytes);
    const [lo, hi] = chainSeedWords(seed, chain);
    this.engine.call('factor-graph Gibbs init', (k) => {
      k.rngSeed(ptr, lo, hi, chain, FACTOR_GIBBS_STREAM);
      k.factorGibbsInit(header, ptr);
    });
    const state = this.issued.state({ ptr, chain });
    // The sampler's own factor graph serves the repair (no copy of the model per chain).
    const x = new SupportStarts(this.engine, this.model, this.graph).start(() => this.states(state), seed, chain);
    if (x) this.states(state).set(x);
    return state;
  }

  /**
   * Runs `sweeps` scans at inverse temperature `beta` (default 1: the model itself); with `acc`
   * (f64 per variable and state) adds the conditional probabilities into it.
   */
  step(state: DiscreteChainState, sweeps: number, acc = 0, beta = 1): DiscreteStepInfo {
    checkCount('sweeps', sweeps, 1, MAX_LOOP_COUNT);
    if (!(beta > 0 && beta < Infinity)) throw new ModelError(`beta must be a positive finite number, got ${beta}`);
    const header = this.header();
    this.issued.check(state, acc);
    const changed = this.engine.call('factor-graph Gibbs step', (k) => k.factorGibbsStep(header, state.ptr, sweeps, acc, this.scratch, beta));
    return { sweeps, changeRate: changed / (sweeps * this.model.n) };
  }

  private states(state: DiscreteChainState): Int32Array {
    this.header();
    this.issued.check(state);
    return new Int32Array(this.engine.kernels.memory.buffer, state.ptr + this.engine.kernels.rngStateBytes(), this.model.n);
  }

  /** Current configuration of a chain. */
  configuration(state: DiscreteChainState): Int32Array {
    return this.states(state).slice();
  }

  /** Sets a chain's configuration. */
  setConfiguration(state: DiscreteChainState, x: ArrayLike<number>): void {
    const { n, card } = this.model;
    if (x.length !== n) throw new ModelError(`a configuration has ${n} states, got ${x.length}`);
    for (let v = 0; v < n; v++) if (!(Number.isInteger(x[v]) && x[v] >= 0 && x[v] < card[v])) throw new ModelError(`state ${x[v]} of variable ${v} out of range`);
    this.states(state).set(x);
  }

  /** A zeroed f64 accumulator, one entry per variable and state. */
  accumulator(): number {
    return this.issued.acc(this.graph.arena.alloc(this.nStates * 8));
  }

  /** The accumulator's sums (copied), then zeroes it. */
  readAndClear(acc: number): Float64Array {
    const view = this.graph.arena.f64(acc, this.nStates);
    const out = view.slice();
    view.fill(0);
    return out;
  }

  /** Frees the sampler's engine memory. */
  dispose(): void {
    this.graph.dispose();
  }
}

/**
 * Runs the given chains of a run, reporting their events (runFactorGibbs: all chains here;
 * runParallel: each worker its share). Each WASM call is kept near 2·10⁶ table reads (a sweep reads
 * Σ_f arity_f² entries, plus one per variable), so progress and cancellation stay responsive; the
 * chunking is part of the result (the change rate is averaged per call), so every host uses it.
 */
export function factorGibbsChains(sampler: FactorGibbsSampler, run: GibbsRun, chains: Iterable<number>, emit: (chain: number, e: DiscreteEvent) => void, signal?: AbortSignal): boolean {
  const m = sampler.model;
  let work = m.n;
  for (let f = 0; f < m.nFactors; f++) work += m.arity(f) ** 2;
  const chunk = Math.max(1, Math.floor(2e6 / work));
  return emitChains(sampler, { ...run, chains, chunk, signal }, emit);
}

/** The result of a run from its reduced events (chains in order): InferenceResult as runGibbs gives it. */
export function factorGibbsResult(layout: StateLayout, red: DiscreteReducer, run: GibbsRun, seconds: number, partial: boolean, extra: InferenceResult['diagnostics'] = {}): InferenceResult {
  if (red.stats.batches === 0) throw new CancelledError('Gibbs was cancelled before the first batch completed: no estimate');
  return batchMeansResult('gibbs', layout, red, run, { changeRate: red.changeRate, siteUpdatesPerSecond: (red.done * layout.n) / Math.max(1e-9, seconds), kernel: 'factor-graph', ...extra }, seconds, partial);
}

/** Gibbs on the factor graph: independent chains, node marginals with Monte Carlo standard errors. */
export function runFactorGibbs(engine: Engine, model: Model, opts: GibbsOptions = {}): InferenceResult {
  checkOptionKeys(opts, GIBBS_OPTION_KEYS);
  const run = gibbsRun(opts);
  refuseZeroModel(model, 'gibbs', engine);
  // The canonical kernel's options have no factor-graph counterpart: refused, not ignored (they were).
  if (run.precision !== 'f64' || run.scan !== 'sequential' || run.probabilityTable === 'on') {
    throw new ModelError(`precision 'f32', scan 'colored' and probabilityTable 'on' apply to Gibbs on pairwise models (the canonical kernel); this model has a factor of arity ${model.maxArity}, sampled on the factor graph in f64, site by site`);
  }
  const t0 = performance.now();
  const sampler = new FactorGibbsSampler(engine, model);
  try {
    const red = new DiscreteReducer(sampler.layout, false);
    const total = run.chains * (run.samples + run.burnin);
    const finished = factorGibbsChains(sampler, run, range(run.chains), (c, e) => {
      red.add(e, c);
      if (e.kind === 'step') opts.onProgress?.({ phase: 'gibbs', done: red.done, total });
    }, opts.signal);
    return factorGibbsResult(sampler.layout, red, run, (performance.now() - t0) / 1000, !finished);
  } finally {
    sampler.dispose();
  }
}
