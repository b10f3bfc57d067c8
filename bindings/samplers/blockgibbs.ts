// Block Gibbs on the joint p(x, s) of the Gaussian integral trick (Martens & Sutskever 2010): every
// s_i is drawn in parallel given x, and x in one Gaussian draw given s. The sweeps run in WASM
// (assembly/blockgibbs.ts); this file builds the relaxation, owns chain memory and seeding, and
// aggregates the Rao–Blackwellised marginals E[π(x)] with batch means.
//
// Sampler shape (DESIGN.md §3): init(seed, chain) → state; step(state, sweeps, acc?) → info.

import type { Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { BoundRelaxation, type RelaxationData } from '../relax/relaxation-bound.ts';
import { buildRelaxation, relaxationDiagnostics, RELAXATION_OPTION_KEYS, type Relaxation, type RelaxationOptions } from '../relax/relaxation.ts';
import { batchMeansResult, chainOrderFolder, range, DiscreteReducer, relaxedBatchWidth, type DiscreteEvent } from './chains.ts';
import { splitEvenly } from './estimators.ts';
import { decode, type CanonicalForm } from '../core/canonical.ts';
import type { InferenceResult } from '../core/result.ts';
import { CancelledError, EngineError, ModelError } from '../core/errors.ts';
import { chainSeedWords } from '../core/seed.ts';
import { checkCount, checkOptionKeys, MAX_LOOP_COUNT } from '../core/options.ts';
import { GIBBS_DEFAULTS, gibbsRun, type GibbsOptions, type GibbsRun } from './gibbs.ts';
import { Issued } from './issued.ts';

/** Tag of the block Gibbs sampler's stream within a chain (Gibbs on p(s) uses 1). */
const BLOCK_GIBBS_STREAM = 3;

/** A block Gibbs chain's state. */
export interface BlockGibbsState {
  /** Address of the chain's state in WASM memory: generator stream, x (f64 × m), s (f64 × bits). */
  readonly ptr: number;
  /** The chain's id (its stream is (seed, chain)). */
  readonly chain: number;
}

/** What a block Gibbs step reports. */
export interface BlockGibbsInfo {
  /** Sweeps run (each draws s | x, then x | s). */
  sweeps: number;
  /** Fraction of variable draws (of s) that changed the variable's state. */
  changeRate: number;
}

/**
 * Block Gibbs on the relaxation's joint p(x, s) (Martens & Sutskever): alternately s ~ p(s | x) (independent per
 * variable) and x ~ p(x | s) (Gaussian). Call dispose() when done.
 */
export class BlockGibbsSampler {
  private readonly issued = new Issued<BlockGibbsState>();
  /** What the sampler runs on: form, d and any factor (dense, sparse, or the FFT factor). */
  readonly relaxation: RelaxationData;
  private readonly bound: BoundRelaxation;
  private readonly stateBytes: number;
  private readonly xOffset: number;
  private readonly batchBuffers = new Map<number, { ptrs: number; scratch: number; changed: number; acc: number }>();

  /**
   * From a model (the relaxation is built with `opts`) or from relaxation data already built.
   * @param engine The engine whose memory holds the sampler.
   */
  constructor(readonly engine: Engine, source: Model | RelaxationData, opts: RelaxationOptions = {}) {
    this.relaxation = 'factor' in source && 'form' in source ? source : buildRelaxation(engine, source, opts);
    this.bound = new BoundRelaxation(engine, this.relaxation);
    this.stateBytes = engine.kernels.blockGibbsStateBytes(this.bound.relaxed);
    this.xOffset = engine.kernels.blockGibbsXOffset();
  }

  /** The model's canonical form (the relaxation's). */
  get form() {
    return this.relaxation.form;
  }

  /** Dimension of x. */
  get m(): number {
    return this.bound.m;
  }

  private header(): number {
    if (this.bound.arena.isDisposed) throw new EngineError('use after dispose(): this sampler has released its engine memory');
    return this.bound.relaxed;
  }

  /** A chain's state: s uniform over valid configurations, x ~ p(x | s), from the stream (seed, chain). */
  init(seed: number, chain: number): BlockGibbsState {
    const header = this.header();
    const ptr = this.bound.arena.alloc(this.stateBytes);
    const [lo, hi] = chainSeedWords(seed, chain);
    this.engine.call('block gibbs init', (k) => {
      k.rngSeed(ptr, lo, hi, chain, BLOCK_GIBBS_STREAM);
      k.blockGibbsInit(header, ptr);
    });
    return this.issued.state({ ptr, chain });
  }

  /** Runs `sweeps` sweeps; with `acc` (f64 per bit) adds π(x) = p(s = 1 | x) into it once per sweep. */
  step(state: BlockGibbsState, sweeps: number, acc = 0): BlockGibbsInfo {
    checkCount('sweeps', sweeps, 1, MAX_LOOP_COUNT);
    const header = this.header();
    this.issued.check(state, acc);
    const changed = this.engine.call('block gibbs step', (k) => k.blockGibbsStep(header, state.ptr, sweeps, acc));
    return { sweeps, changeRate: changed / Math.max(1, sweeps * this.form.n) };
  }

  /** The chain's current x (copied). */
  position(state: BlockGibbsState): Float64Array {
    this.header();
    this.issued.check(state);
    return this.bound.arena.readF64(state.ptr + this.xOffset, this.m);
  }

  /** The chain's current s as user states. */
  configuration(state: BlockGibbsState): Int32Array {
    this.header();
    this.issued.check(state);
    const f = this.form;
    const s = this.bound.arena.readF64(state.ptr + this.xOffset + 8 * this.m, f.nBits);
    return decode(f, s);
  }

  /** A zeroed f64-per-bit accumulator in this sampler's memory. */
  accumulator(): number {
    this.header();
    return this.issued.acc(this.bound.arena.alloc(this.form.nBits * 8));
  }

  /** The accumulator's sums (copied), then zeroes it. */
  readAndClear(acc: number): Float64Array {
    const view = this.bound.arena.f64(acc, this.form.nBits);
    const out = view.slice();
    view.fill(0);
    return out;
  }

  /**
   * A batch of chains run in lockstep (stepBatch): each chain's state is init(seed, chain)'s. The batch's
   * buffers (chain pointers, scratch, accumulators) are allocated once per width and reused by later batches.
   */
  initBatch(seed: number, chains: readonly number[]): BlockGibbsBatch {
    if (chains.length === 0) throw new ModelError('a batch needs at least one chain');
    const states = chains.map((c) => this.init(seed, c));
    const B = chains.length;
    let buf = this.batchBuffers.get(B);
    if (!buf) {
      const a = this.bound.arena, nBits = this.form.nBits;
      buf = {
        ptrs: a.alloc(4 * B),
        scratch: a.alloc(this.engine.kernels.blockGibbsBatchScratchBytes(this.bound.relaxed, B) >>> 0),
        changed: a.allocF64(B),
        acc: a.allocF64(Math.max(1, nBits * B)),
      };
      this.batchBuffers.set(B, buf);
    }
    this.bound.arena.u32(buf.ptrs, B).set(states.map((s) => s.ptr));
    this.bound.arena.f64(buf.acc, this.form.nBits * B).fill(0);
    return { states, ...buf };
  }

  /**
   * Runs `sweeps` sweeps of every chain of the batch (assembly/samplers/blockgibbs_batch.ts: one batched
   * product per half-sweep); with `accumulate`, adds each chain's π(x) into its accumulator once per sweep.
   * Each chain's info; each chain is the one step() runs, bit for bit.
   */
  stepBatch(batch: BlockGibbsBatch, sweeps: number, accumulate: boolean): BlockGibbsInfo[] {
    const header = this.header();
    const B = batch.states.length;
    this.engine.call('block gibbs batch step', (k) => k.blockGibbsBatchStep(header, batch.ptrs, B, sweeps, accumulate ? batch.acc : 0, batch.changed, batch.scratch));
    const changed = this.bound.arena.readF64(batch.changed, B);
    return Array.from(changed, (c) => ({ sweeps, changeRate: c / Math.max(1, sweeps * this.form.n) }));
  }

  /** Each chain's accumulated sums (copied), then the accumulators zeroed. */
  readAndClearBatch(batch: BlockGibbsBatch): Float64Array[] {
    this.header();
    const nBits = this.form.nBits;
    const view = this.bound.arena.f64(batch.acc, nBits * batch.states.length);
    const out = batch.states.map((_, b) => view.slice(b * nBits, (b + 1) * nBits));
    view.fill(0);
    return out;
  }

  /** Frees the sampler's engine memory. */
  dispose(): void {
    this.bound.dispose();
  }
}

/** Chains run in lockstep by BlockGibbsSampler.stepBatch. */
export interface BlockGibbsBatch {
  /** Each chain's state, in batch order. */
  readonly states: BlockGibbsState[];
  /** @internal */ readonly ptrs: number;
  /** @internal */ readonly scratch: number;
  /** @internal */ readonly changed: number;
  /** @internal */ readonly acc: number;
}

/** Options of block Gibbs: GibbsOptions (defaults GIBBS_DEFAULTS) and the relaxation's options. */
export interface BlockGibbsOptions extends GibbsOptions, RelaxationOptions {}

/**
 * Every option runBlockGibbs reads: it refuses any other. The relaxation's are read when it builds
 * the relaxation (given a model); Gibbs's precision, scan and probabilityTable have no block-Gibbs
 * counterpart (they were ignored).
 */
export const BLOCK_GIBBS_OPTION_KEYS: readonly string[] = ['seed', 'chains', 'samples', 'burnin', 'batches', 'onProgress', 'signal', ...RELAXATION_OPTION_KEYS];

/** Block Gibbs runs like Gibbs: the same options (kept sweeps, burn-in, batches), defaults and checks. */
export const BLOCK_GIBBS_DEFAULTS = GIBBS_DEFAULTS;
export type BlockGibbsRun = GibbsRun;
export const blockGibbsRun: (opts: BlockGibbsOptions) => BlockGibbsRun = gibbsRun;

/** Chains per lockstep batch: a chain's state and accumulator, and its share of the batch's scratch. */
export function blockGibbsWidth(sampler: BlockGibbsSampler): number {
  const n = sampler.form.nBits, m = sampler.m;
  return relaxedBatchWidth(8 * (2 * m + 3 * n + 8) + 64);
}

/**
 * Runs the given chains of a run in consecutive batches of blockGibbsWidth chains in lockstep
 * (stepBatch), reporting every chain's events as they happen (runBlockGibbs, or a worker's share): each
 * chain's events are those of the chain run alone (chains.ts driveChains), bit for bit.
 */
export function blockGibbsChains(sampler: BlockGibbsSampler, run: BlockGibbsRun, chains: Iterable<number>, emit: (chain: number, e: DiscreteEvent) => void, signal?: AbortSignal): boolean {
  // Keep each WASM call near 2·10⁶ multiply-adds of the factor per chain for progress and cancellation.
  const f = sampler.relaxation.factor;
  const perSweep = 2 * Math.max(1, f.kind === 'dense' ? f.n * f.m : f.kind === 'sparse' ? f.values.length : 10 * f.m * Math.log2(f.m + 1)) + sampler.form.nBits * 8;
  const chunk = Math.max(1, Math.floor(2e6 / perSweep));
  const all = [...chains];
  const width = blockGibbsWidth(sampler);
  for (let at = 0; at < all.length; at += width) {
    const ids = all.slice(at, at + width);
    const batch = sampler.initBatch(run.seed, ids);
    const advance = (sweeps: number, accumulate: boolean): boolean => {
      for (let left = sweeps; left > 0; ) {
        if (signal?.aborted) return false;
        const m = Math.min(chunk, left);
        const infos = sampler.stepBatch(batch, m, accumulate);
        left -= m;
        ids.forEach((c, i) => emit(c, { kind: 'step', sweeps: m, changeRate: infos[i].changeRate }));
      }
      return true;
    };
    if (!advance(run.burnin, false)) return false;
    for (const len of splitEvenly(run.samples, Math.min(run.batches, run.samples))) {
      if (!advance(len, true)) return false;
      const sums = sampler.readAndClearBatch(batch);
      ids.forEach((c, i) => emit(c, { kind: 'batch', sums: sums[i], length: len }));
    }
  }
  return true;
}

/** The result of a run from its reduced events (chains in order); `sampling`: seconds spent sampling. */
export function blockGibbsResult(form: CanonicalForm, red: DiscreteReducer, run: BlockGibbsRun, seconds: number, sampling: number, partial: boolean, extra: InferenceResult['diagnostics']): InferenceResult {
  if (red.stats.batches === 0) throw new CancelledError('block Gibbs was cancelled before the first batch completed: no estimate');
  return batchMeansResult(
    'blockgibbs',
    form,
    red,
    run,
    // Sampling only (setup excluded: see setupSeconds).
    { changeRate: red.changeRate, sweepsPerSecond: red.done / Math.max(1e-9, sampling), ...extra },
    seconds,
    partial,
  );
}

/** Runs independent block Gibbs chains; node marginals (Rao–Blackwellised) with batch-means errors. */
export function runBlockGibbs(engine: Engine, model: Model | Relaxation, opts: BlockGibbsOptions = {}): InferenceResult {
  checkOptionKeys(opts, BLOCK_GIBBS_OPTION_KEYS);
  const run = blockGibbsRun(opts);
  const t0 = performance.now();
  const rel: Relaxation = 'form' in model ? model : buildRelaxation(engine, model, { shift: opts.shift, margin: opts.margin, factor: opts.factor });
  const sampler = new BlockGibbsSampler(engine, rel);
  try {
    const red = new DiscreteReducer(rel.form, true);
    const total = run.chains * (run.samples + run.burnin);
    const tSample = performance.now();
    const fold = chainOrderFolder<DiscreteEvent>(run.chains, blockGibbsWidth(sampler), (e, c) => red.add(e, c));
    let done = 0;
    const finished = blockGibbsChains(sampler, run, range(run.chains), (c, e) => {
      fold.emit(c, e);
      if (e.kind === 'step') opts.onProgress?.({ phase: 'blockgibbs', done: (done += e.sweeps), total });
    }, opts.signal);
    fold.finish();
    const sampling = (performance.now() - tSample) / 1000;
    return blockGibbsResult(rel.form, red, run, (performance.now() - t0) / 1000, sampling, !finished, relaxationDiagnostics(rel));
  } finally {
    sampler.dispose();
  }
}
