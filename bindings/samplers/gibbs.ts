// Sequential single-site Gibbs on the discrete model — the baseline sampler. The sweeps run in WASM
// (assembly/gibbs.ts); this file owns chain memory, seeding and the batch-means aggregation.
//
// Sampler shape (DESIGN.md §3): init(seed, chain) → state; step(state, sweeps, acc?) → info.

import type { Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import type { CanonicalForm } from '../core/canonical.ts';
import { DiscreteChainSampler, type DiscreteChainState, type DiscreteStepInfo } from './discrete-sampler.ts';
import { batchMeansResult, emitChains, range, DiscreteReducer, type DiscreteEvent } from './chains.ts';
import type { InferenceResult, Progress } from '../core/result.ts';
import { EngineError } from '../core/errors.ts';
import { seedWords } from '../core/seed.ts';
import { checkCount, definedOnly } from '../core/options.ts';

/** Tag of the Gibbs sampler's stream within a chain (other samplers use other tags). */
const GIBBS_STREAM = 1;

export type GibbsState = DiscreteChainState;
export type GibbsInfo = DiscreteStepInfo;

export class GibbsSampler extends DiscreteChainSampler {
  private readonly scratch: number;

  constructor(engine: Engine, model: Model) {
    super(engine, model, GIBBS_STREAM, 'gibbs');
    this.scratch = this.bound.arena.alloc(this.bound.maxBlock * 8);
  }

  /** Runs `sweeps` scans; with `acc` (f64 per bit) adds the conditional probabilities into it. */
  step(state: GibbsState, sweeps: number, acc = 0): GibbsInfo {
    checkCount('sweeps', sweeps, 1);
    const header = this.header();
    const changed = this.engine.call('gibbs step', (k) => k.gibbsStep(header, state.ptr, sweeps, acc, this.scratch));
    return { sweeps, changeRate: changed / (sweeps * this.form.n) };
  }
}

export interface GibbsOptions {
  seed?: number;
  chains?: number;
  /** Sweeps per chain that are kept. */
  samples?: number;
  /** Sweeps per chain discarded first. */
  burnin?: number;
  /** Batches per chain for the standard errors. */
  batches?: number;
  onProgress?: (p: Progress) => void;
  signal?: AbortSignal;
}

export const GIBBS_DEFAULTS = { seed: 1, chains: 4, samples: 2000, burnin: 200, batches: 20 } as const;

export type GibbsRun = { seed: number; chains: number; samples: number; burnin: number; batches: number };

/** The run's options with defaults, validated. */
export function gibbsRun(opts: GibbsOptions): GibbsRun {
  const { seed, chains, samples, burnin, batches } = { ...GIBBS_DEFAULTS, ...definedOnly(opts) };
  checkCount('chains', chains, 1);
  checkCount('samples', samples, 1);
  checkCount('burnin', burnin, 0);
  checkCount('batches', batches, 1);
  seedWords(seed);
  return { seed, chains, samples, burnin, batches };
}

/**
 * Runs the given chains of a run, reporting their events (runGibbs: all chains here; runParallel:
 * each worker its share). Each WASM call is kept near 2·10⁶ site updates so progress and
 * cancellation stay responsive; the chunking is part of the result (the change rate is averaged
 * per call), so every host uses this one schedule.
 */
export function gibbsChains(sampler: GibbsSampler, run: GibbsRun, chains: Iterable<number>, emit: (chain: number, e: DiscreteEvent) => void, signal?: AbortSignal): boolean {
  const chunk = Math.max(1, Math.floor(2e6 / Math.max(1, sampler.form.n)));
  return emitChains(sampler, { ...run, chains, chunk, signal }, emit);
}

/** The result of a run from its reduced events (chains in order). */
export function gibbsResult(form: CanonicalForm, red: DiscreteReducer, run: GibbsRun, seconds: number, partial: boolean, extra: InferenceResult['diagnostics'] = {}): InferenceResult {
  if (red.stats.batches === 0) throw new EngineError('Gibbs was cancelled before the first batch completed: no estimate');
  return batchMeansResult(
    'gibbs',
    form,
    red,
    run,
    { changeRate: red.changeRate, siteUpdatesPerSecond: (red.done * form.n) / Math.max(1e-9, seconds), kernel: 'canonical', ...extra },
    seconds,
    partial,
  );
}

/** Runs independent chains and returns node marginals with Monte Carlo standard errors. */
export function runGibbs(engine: Engine, model: Model, opts: GibbsOptions = {}): InferenceResult {
  const run = gibbsRun(opts);
  const t0 = performance.now();
  const sampler = new GibbsSampler(engine, model);
  try {
    const red = new DiscreteReducer(sampler.form, false);
    const total = run.chains * (run.samples + run.burnin);
    const finished = gibbsChains(sampler, run, range(run.chains), (c, e) => {
      red.add(e, c);
      if (e.kind === 'step') opts.onProgress?.({ phase: 'gibbs', done: red.done, total });
    }, opts.signal);
    return gibbsResult(sampler.form, red, run, (performance.now() - t0) / 1000, !finished);
  } finally {
    sampler.dispose();
  }
}
