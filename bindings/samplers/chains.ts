// The chain driver shared by the discrete-marginal samplers (Gibbs, block Gibbs, and Gibbs in
// workers): chains one after another from their own (seed, chain) streams, burn-in, then batches
// of sweeps whose per-bit sums feed BatchMeans; WASM calls are chunked so progress and
// cancellation stay responsive.
import type { StateLayout } from '../core/canonical.ts';
import { bitsToMarginals, bitsToStdErr } from '../core/canonical.ts';
import { BatchMeans, splitEvenly } from './estimators.ts';
import type { InferenceResult } from '../core/result.ts';
import { convergenceWarnings, seriesDiagnostics, tracedVariables } from './convergence.ts';

/** Bits whose per-chain batch means are kept for R̂ and ESS (all of them up to this many). */
const TRACED_BITS = 1024;

/** What the driver needs of a sampler: the shape init → state, step(state, sweeps, acc) → info. */
export interface BatchSampler<S> {
  /** A chain's state, its generator on stream (seed, chain). */
  init(seed: number, chain: number): S;
  /**
   * Runs `sweeps` sweeps; with `acc` (non-zero) adds the per-bit (or per-state) conditional probabilities into
   * that accumulator once per sweep. Returns the fraction of draws that changed a variable.
   */
  step(state: S, sweeps: number, acc: number): { changeRate: number };
  /** A zeroed accumulator in the sampler's memory; returns its address. */
  accumulator(): number;
  /** The accumulator's sums (copied), then zeroes it. */
  readAndClear(acc: number): Float64Array;
}

/** What driveChains runs: chains, burn-in, kept sweeps in batches. */
export interface ChainSchedule {
  /** Seed: chain c draws from stream (seed, c). */
  seed: number;
  /** The chain ids to run, in order. */
  chains: Iterable<number>;
  /** Sweeps per chain that are kept. */
  samples: number;
  /** Sweeps per chain discarded first. */
  burnin: number;
  /** Batches per chain (samples split as evenly as possible). */
  batches: number;
  /** Sweeps per WASM call at most. */
  chunk: number;
  /** Stops the run between WASM calls. */
  signal?: AbortSignal;
}

/** Callbacks of driveChains. */
export interface ChainEvents {
  /** After every WASM call. */
  onStep?(chain: number, sweeps: number, changeRate: number): void;
  /** When a chain's burn-in has finished. */
  onBurnin?(chain: number): void;
  /** After every batch: per-bit sums of the accumulated probabilities over `length` sweeps. */
  onBatch?(chain: number, sums: Float64Array, length: number): void;
}

/** Runs the schedule; returns false when the signal cancelled it (batches so far were reported). */
export function driveChains<S>(sampler: BatchSampler<S>, s: ChainSchedule, events: ChainEvents): boolean {
  const acc = sampler.accumulator();
  const advance = (chain: number, state: S, sweeps: number, into: number): boolean => {
    for (let left = sweeps; left > 0; ) {
      if (s.signal?.aborted) return false;
      const m = Math.min(s.chunk, left);
      const info = sampler.step(state, m, into);
      left -= m;
      events.onStep?.(chain, m, info.changeRate);
    }
    return true;
  };
  for (const c of s.chains) {
    const state = sampler.init(s.seed, c);
    if (!advance(c, state, s.burnin, 0)) return false;
    events.onBurnin?.(c);
    for (const len of splitEvenly(s.samples, Math.min(s.batches, s.samples))) {
      if (!advance(c, state, len, acc)) return false;
      events.onBatch?.(c, sampler.readAndClear(acc), len);
    }
  }
  return true;
}

/**
 * What one chain of a batch-means sampler produced, in order. A run is the events of chain 0, then
 * chain 1, …; feeding them to a DiscreteReducer in that order gives the run's estimates whether the
 * chains ran here one after another or in workers (runParallel), so both give the same bits.
 */
export type DiscreteEvent =
  | { kind: 'step'; sweeps: number; changeRate: number }
  | { kind: 'batch'; sums: Float64Array; length: number };

/** Runs driveChains and reports each chain's events through `emit` as they happen. */
export function emitChains<S>(sampler: BatchSampler<S>, s: ChainSchedule, emit: (chain: number, e: DiscreteEvent) => void): boolean {
  return driveChains(sampler, s, {
    onStep: (chain, sweeps, changeRate) => emit(chain, { kind: 'step', sweeps, changeRate }),
    onBatch: (chain, sums, length) => emit(chain, { kind: 'batch', sums, length }),
  });
}

/**
 * Folds chain events into batch means (chain-aware, with the batch-mean series of up to
 * TRACED_BITS bits for R̂ and ESS) and the change rate: per WASM call (Gibbs) or weighted by sweeps
 * (block Gibbs), as each method has always reported it.
 */
export class DiscreteReducer {
  readonly stats: BatchMeans;
  /** Traced variables and, per traced bit, its variable. */
  readonly traced: number[];
  readonly traceOwner: number[] = [];
  private changeSum = 0;
  private changeWeight = 0;
  /** Sweeps run, burn-in included. */
  done = 0;

  constructor(form: StateLayout, private readonly weightBySweeps: boolean) {
    this.traced = tracedVariables(form.n, form.nBits, TRACED_BITS);
    const bits: number[] = [];
    for (const v of this.traced) {
      for (let q = form.blockStart[v]; q < form.blockStart[v + 1]; q++) {
        bits.push(q);
        this.traceOwner.push(v);
      }
    }
    this.stats = new BatchMeans(form.nBits, bits);
  }

  /** Adds an event of chain `chain` (chains one after another, each chain's events in order). */
  add(e: DiscreteEvent, chain: number): void {
    if (e.kind === 'batch') {
      this.stats.addBatch(e.sums, e.length, chain);
      return;
    }
    this.changeSum += this.weightBySweeps ? e.changeRate * e.sweeps : e.changeRate;
    this.changeWeight += this.weightBySweeps ? e.sweeps : 1;
    this.done += e.sweeps;
  }

  get changeRate(): number {
    return this.changeSum / Math.max(1, this.changeWeight);
  }
}

/** User-facing marginals and their standard errors from per-bit batch means. */
export function bitMarginals(form: StateLayout, stats: BatchMeans): { marginals: Float64Array[]; marginalStdErr: Float64Array[]; maxStdErr: number | null } {
  const se = stats.stdErr();
  const marginals = bitsToMarginals(form, stats.mean());
  const marginalStdErr = bitsToStdErr(form, se);
  let maxSE = 0;
  for (const x of se) maxSE = Math.max(maxSE, x);
  return { marginals, marginalStdErr, maxStdErr: Number.isFinite(maxSE) ? maxSE : null };
}

/** Chains per batch of the relaxed samplers' lockstep runs (block Gibbs, DHMC): bench/batch.ts (past 4, the
 * per-chain work a batch cannot share — normal draws, O(m) vector updates — leaves the throughput flat). */
export const RELAXED_BATCH_WIDTH = 4;

/**
 * A lockstep batch's width for chains of `perChainBytes` of engine memory each: RELAXED_BATCH_WIDTH, fewer
 * when the batch would pass 256 MiB (a batch holds all its chains at once, a chain alone only its own).
 */
export function relaxedBatchWidth(perChainBytes: number): number {
  return Math.max(1, Math.min(RELAXED_BATCH_WIDTH, Math.floor(2 ** 28 / Math.max(1, perChainBytes))));
}

/**
 * Folds the events of chains 0 … chains − 1 run in consecutive batches of `width` (a batch's chains
 * interleaved) chain after chain, as the estimators take them: a batch's first chain as it runs, the
 * others' events held until the batch is done (the next batch starts, or finish()).
 */
export function chainOrderFolder<E>(chains: number, width: number, add: (e: E, chain: number) => void): { emit(chain: number, e: E): void; finish(): void } {
  let folding = 0;
  const held: E[][] = Array.from({ length: chains }, () => []);
  const foldUpTo = (c: number) => {
    for (; folding < c; folding++) for (const e of held[folding].splice(0)) add(e, folding);
  };
  return {
    emit(c: number, e: E) {
      foldUpTo(c - (c % width)); // the earlier batches
      if (c === folding) add(e, c);
      else held[c].push(e);
    },
    finish: () => foldUpTo(chains),
  };
}

/** 0, 1, …, n − 1. */
export function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

export interface ChainRunFacts {
  seed: number;
  chains: number;
  samples: number;
  burnin: number;
  batches: number;
}

/**
 * The InferenceResult of a batch-means sampler: marginals with standard errors and the diagnostics
 * every such sampler reports, plus the method's own.
 */
export function batchMeansResult(
  method: string,
  form: StateLayout,
  red: DiscreteReducer,
  run: ChainRunFacts,
  diagnostics: InferenceResult['diagnostics'],
  seconds: number,
  partial: boolean,
): InferenceResult {
  const stats = red.stats;
  const { marginals, marginalStdErr, maxStdErr } = bitMarginals(form, stats);
  const batchesPerChain = Math.min(run.batches, run.samples);
  const series = stats.series();
  const conv = seriesDiagnostics(series, red.traceOwner, form.n, 'batch means');
  // A run cut short has fewer batch means than planned: its warnings count those it has.
  const seriesLength = partial && series.length > 0 ? Math.min(...series[0].map((c) => c.length)) : batchesPerChain;
  const warnings = convergenceWarnings(conv, { chains: stats.chains, seriesLength, unit: 'batch means', variables: red.traceOwner.length });
  // Chains that never moved: R̂ sees nothing when they all stay at one configuration (hard constraints
  // single-site moves cannot leave), and their standard errors are 0.
  if (red.done > 0 && red.changeRate === 0) warnings.push(`no variable changed state in any chain: each stayed at its start, so unless the model allows only that configuration the marginals are the starts' and their zero standard errors mean nothing; try moves of many variables at once (tree-block Gibbs, method treegibbs)`);
  return {
    method,
    logZ: null,
    logZStdErr: null,
    logZKind: null,
    marginals,
    marginalStdErr,
    diagnostics: {
      chains: run.chains,
      // A stopped run: what was recorded, per chain on average (the plan's counts overstated the draws
      // the rare-state warning's floor rests on).
      samplesPerChain: partial ? Math.floor(stats.samples / run.chains) : run.samples,
      burnin: run.burnin,
      batchesPerChain: partial ? Math.floor(stats.batches / run.chains) : batchesPerChain,
      maxStdErr,
      rhatMax: conv.rhatMax,
      essMin: conv.essMin,
      essMedian: conv.essMedian,
      essUnit: 'batch means',
      tracedVariables: red.traced.length,
      seed: run.seed,
      ...diagnostics,
    },
    seconds,
    partial,
    warnings,
  };
}
