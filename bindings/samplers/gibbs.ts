// Single-site Gibbs on the discrete model — the baseline sampler. The sweeps run in WASM: one chain
// (GibbsSampler, assembly/samplers/gibbs.ts) or a batch of chains in SIMD lanes (runGibbs, through
// gibbs-lanes.ts, the same chains bit for bit in f64); this file owns seeding and the batch means.
//
// Sampler shape (DESIGN.md §3): init(seed, chain) → state; step(state, sweeps, acc?) → info.

import type { Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { canonicalSize, type CanonicalForm } from '../core/canonical.ts';
import { DiscreteChainSampler, type DiscreteChainState, type DiscreteStepInfo } from './discrete-sampler.ts';
import { batchMeansResult, chainOrderFolder, range, DiscreteReducer, type DiscreteEvent } from './chains.ts';
import { GibbsLanes, checkPrecision, checkScan, lanesChains, type Precision, type Scan } from './gibbs-lanes.ts';
import { checkTableMode, probabilityTable, tablePlanBytes, type ProbabilityTable, type TableMode } from './gibbs-table.ts';
import type { InferenceResult, Progress } from '../core/result.ts';
import { CancelledError, EngineError, ModelError } from '../core/errors.ts';
import { seedWords } from '../core/seed.ts';
import { checkCount, checkOptionKeys, definedOnly, MAX_CHAINS, MAX_LOOP_COUNT } from '../core/options.ts';
import { refuseZeroModel, supportStart } from '../core/feasible.ts';

/** Tag of the Gibbs sampler's stream within a chain (other samplers use other tags). */
export const GIBBS_STREAM = 1;

/** A sequential Gibbs chain's state (its address in WASM memory and chain id). */
export type GibbsState = DiscreteChainState;
/** What a Gibbs step reports: sweeps run and the fraction of variable draws that changed the variable's state. */
export type GibbsInfo = DiscreteStepInfo;

/**
 * Sequential (systematic-scan) single-site Gibbs on the model's canonical form: each sweep redraws every variable
 * in index order from its conditional. Call dispose() when done.
 */
export class GibbsSampler extends DiscreteChainSampler {
  private readonly scratch: number;
  /** The probability table the sweeps read (gibbs-table.ts), or null. */
  readonly table: ProbabilityTable | null;

  /**
   * @param table Probability table: 'auto' (default), 'on' or 'off' (the same chains either way).
   * @param updates Site updates per site the sampler is expected to run (all chains), for 'auto'.
   */
  constructor(engine: Engine, private readonly model: Model, table: TableMode = 'auto', updates?: number) {
    super(engine, model, GIBBS_STREAM, 'gibbs', checkTableMode(table) === 'off' ? 0 : tablePlanBytes(canonicalSize(model).nBits));
    this.scratch = this.bound.arena.alloc(this.bound.maxBlock * 8);
    this.table = probabilityTable(engine, this.bound, table, updates);
  }

  /** The kernel's own uniform random start, never replaced (the bench's cross-check against C and JS starts from it). */
  uniformInit(seed: number, chain: number): GibbsState {
    return super.init(seed, chain);
  }

  /** A uniform random start (uniformInit), replaced, as in the lanes (gibbs-lanes.ts), when its probability is zero (supportStart). */
  override init(seed: number, chain: number): GibbsState {
    const state = super.init(seed, chain);
    const x = supportStart(this.engine, this.model, () => this.configuration(state), seed, chain);
    if (x) this.setConfiguration(state, x);
    return state;
  }

  /** Runs `sweeps` scans; with `acc` (f64 per bit) adds the conditional probabilities into it. */
  step(state: GibbsState, sweeps: number, acc = 0): GibbsInfo {
    checkCount('sweeps', sweeps, 1, MAX_LOOP_COUNT);
    const header = this.header();
    this.issued.check(state, acc);
    const t = this.table;
    const changed = this.engine.call('gibbs step', (k) => (t ? k.gibbsTableStep(header, state.ptr, sweeps, acc, this.scratch, t.off, t.table) : k.gibbsStep(header, state.ptr, sweeps, acc, this.scratch)));
    return { sweeps, changeRate: changed / (sweeps * this.form.n) };
  }
}

/** Options of the Gibbs samplers (`runGibbs`, and the others that run like it); defaults in GIBBS_DEFAULTS. */
export interface GibbsOptions {
  /** Seed: chain c draws from stream (seed, c) (default 1). */
  seed?: number;
  /** Independent chains (default 4). */
  chains?: number;
  /** Sweeps per chain that are kept. */
  samples?: number;
  /** Sweeps per chain discarded first. */
  burnin?: number;
  /** Batches per chain for the standard errors. */
  batches?: number;
  /**
   * 'f64' (default): two chains per 128-bit vector, each chain the single-chain kernel's bit for bit.
   * 'f32': four chains per vector in single precision — different chains, the same target.
   */
  precision?: Precision;
  /** 'sequential' (default): blocks in index order. 'colored': color by color (a different valid chain). */
  scan?: Scan;
  /**
   * 'auto' (default): on models of free bits (no one-hot blocks) with at most 8 neighbours a site,
   * read each site's conditional from a table built once (f64 sequential scan) when it fits 2 MiB (L2 cache)
   * and the run repays it; 'on': whenever the model takes one; 'off': never. The same chains,
   * bit for bit, either way (diagnostics.probabilityTable says whether one was used).
   */
  probabilityTable?: TableMode;
  /** Called as sweeps are done (done/total in sweeps of all chains). */
  onProgress?: (p: Progress) => void;
  /** Stops the run; the result is then marked partial and uses the batches completed. */
  signal?: AbortSignal;
}

/** Every option runGibbs and runFactorGibbs read (GibbsOptions): they refuse any other. */
export const GIBBS_OPTION_KEYS: readonly string[] = ['seed', 'chains', 'samples', 'burnin', 'batches', 'precision', 'scan', 'probabilityTable', 'onProgress', 'signal'];

/** Defaults of GibbsOptions. */
export const GIBBS_DEFAULTS = { seed: 1, chains: 4, samples: 2000, burnin: 200, batches: 20, precision: 'f64', scan: 'sequential', probabilityTable: 'auto' } as const;

export type GibbsRun = { seed: number; chains: number; samples: number; burnin: number; batches: number; precision: Precision; scan: Scan; probabilityTable: TableMode };

/** The run's options with defaults, validated. */
export function gibbsRun(opts: GibbsOptions): GibbsRun {
  const { seed, chains, samples, burnin, batches, precision, scan, probabilityTable } = { ...GIBBS_DEFAULTS, ...definedOnly(opts) };
  checkCount('chains', chains, 1, MAX_CHAINS);
  checkCount('samples', samples, 1);
  checkCount('burnin', burnin, 0);
  checkCount('batches', batches, 1);
  checkPrecision(precision);
  checkScan(scan);
  checkTableMode(probabilityTable);
  if (probabilityTable === 'on' && (precision !== 'f64' || scan !== 'sequential')) throw new ModelError("probabilityTable 'on' needs precision 'f64' and scan 'sequential'");
  seedWords(seed);
  return { seed, chains, samples, burnin, batches, precision, scan, probabilityTable };
}

/**
 * The most chains an f64 batch holds: the kernel has specialised loops for 2 and 4 chains (four as
 * two interleaved vectors, gibbs_lanes_free.ts and oneHot4Chains), faster than its general loop over
 * wider batches; more chains run as several batches, with the same result.
 */
export const GIBBS_F64_BATCH = 4;

/**
 * The lanes sampler for a run's chains (`width`: the most chains per batch; `chains`: how many
 * chains it will run, for the probability table's rule; `form`: the model's canonical form, when
 * the caller has built it).
 */
export function gibbsSampler(engine: Engine, model: Model, run: GibbsRun, width: number, chains = run.chains, form?: CanonicalForm): GibbsLanes {
  const w = run.precision === 'f64' ? Math.min(width, GIBBS_F64_BATCH) : width;
  return new GibbsLanes(engine, model, w, GIBBS_STREAM, run.precision, run.scan, run.probabilityTable, chains * (run.samples + run.burnin), form);
}

/**
 * Bytes of batch sums runGibbs may hold for the chains of a batch after its first, which it folds
 * only when the first chain is done (the estimators take chains one after another).
 */
export const GIBBS_PENDING_BYTES = 2 ** 28;

/** Chains per batch in runGibbs: all, unless the held batch sums would pass GIBBS_PENDING_BYTES. */
export function gibbsBatchWidth(run: GibbsRun, nBits: number): number {
  const perChain = 8 * Math.max(1, nBits) * Math.min(run.batches, run.samples);
  return Math.max(1, Math.min(run.chains, 1 + Math.floor(GIBBS_PENDING_BYTES / perChain)));
}

/**
 * Runs the given chains of a run in batches of the sampler's width, each batch in lockstep, and
 * reports every chain's events as they happen (call by call; runGibbs: all chains here;
 * runParallel: each worker its share). Each chain's events are those of the chain run alone, so
 * folded chain after chain they give the same result however the chains were batched. Each WASM
 * call runs up to ~2·10⁶ site updates per chain so progress and cancellation stay responsive; the
 * chunking is part of the result (the change rate is averaged per call), so every host uses this
 * one schedule.
 */
export function gibbsChains(sampler: GibbsLanes, run: GibbsRun, chains: Iterable<number>, emit: (chain: number, e: DiscreteEvent) => void, signal?: AbortSignal): boolean {
  return batchedChains(sampler, run, chains, Math.max(1, Math.floor(2e6 / Math.max(1, sampler.form.n))), emit, signal);
}

/** gibbsChains with `chunk` sweeps per WASM call at most (any lanes sampler: tree-block Gibbs's too). */
export function batchedChains(sampler: GibbsLanes, run: GibbsRun, chains: Iterable<number>, chunk: number, emit: (chain: number, e: DiscreteEvent) => void, signal?: AbortSignal): boolean {
  const all = [...chains];
  for (let i = 0; i < all.length; i += sampler.width) {
    if (!lanesChains(sampler, { ...run, chains: all.slice(i, i + sampler.width), chunk, signal }, emit)) return false;
  }
  return true;
}

/** The result of a run from its reduced events (chains in order). */
export function gibbsResult(form: CanonicalForm, red: DiscreteReducer, run: GibbsRun, seconds: number, partial: boolean, extra: InferenceResult['diagnostics'] = {}): InferenceResult {
  if (red.stats.batches === 0) throw new CancelledError('Gibbs was cancelled before the first batch completed: no estimate');
  return batchMeansResult(
    'gibbs',
    form,
    red,
    run,
    // Site updates of all chains together per second of wall time (workers included).
    { changeRate: red.changeRate, siteUpdatesPerSecond: (red.done * form.n) / Math.max(1e-9, seconds), kernel: 'canonical', precision: run.precision, scan: run.scan, ...extra },
    seconds,
    partial,
  );
}

/** Runs independent chains (one batch, in SIMD lanes) and returns node marginals with Monte Carlo standard errors. */
export function runGibbs(engine: Engine, model: Model, opts: GibbsOptions = {}): InferenceResult {
  checkOptionKeys(opts, GIBBS_OPTION_KEYS);
  const run = gibbsRun(opts);
  refuseZeroModel(model, 'gibbs', engine);
  const t0 = performance.now();
  const sampler = gibbsSampler(engine, model, run, gibbsBatchWidth(run, canonicalSize(model).nBits));
  try {
    const red = new DiscreteReducer(sampler.form, false);
    const total = run.chains * (run.samples + run.burnin);
    // Fold chain after chain: a batch's first chain as it runs, the others' events held until the
    // batch is done (the next batch starts, or the run ends).
    const fold = chainOrderFolder<DiscreteEvent>(run.chains, sampler.width, (e, c) => red.add(e, c));
    let done = 0;
    const finished = gibbsChains(sampler, run, range(run.chains), (c, e) => {
      fold.emit(c, e);
      if (e.kind === 'step') opts.onProgress?.({ phase: 'gibbs', done: (done += e.sweeps), total });
    }, opts.signal);
    fold.finish();
    return gibbsResult(sampler.form, red, run, (performance.now() - t0) / 1000, !finished, { probabilityTable: sampler.table !== null });
  } finally {
    sampler.dispose();
  }
}
