// Naive mean field: the lower bound log Z ≥ max_q E_q[log p̃] + H(q) over fully factorised q, by
// coordinate ascent in WASM (assembly/variational/meanfield.ts). Works on any canonical model: free
// bits (Bernoulli factors) and one-hot blocks (categorical factors, zero potentials handled exactly:
// see the kernel's header). runMeanField runs models with a factor of arity > 2 on the factor graph's
// kernel (meanfield-fg.ts) with the same starts, budget and rule; when every start keeps mass on a
// zero potential it takes one more start from a configuration of positive probability (core/feasible.ts).
//
// Starts: two ordered starts (every variable in its first state, then in its last; `orderedStarts`)
// and J random restarts. Random restart j draws its start from its own stream (seed, chain j, tag
// MF_STREAM), so a run is a pure function of (model, options) and restarts 0 … J−1 of a larger run
// repeat those of a smaller one (as long as the budget lasts).
//
// Convergence: an ascent stops when a sweep raises the bound by at most tol · max(n, |F|) — the
// relative change per variable — or after maxSweeps sweeps. Cost: the starts share a budget of work,
// counted deterministically in coupling visits (one sweep = nBits + nnz(W)); each start gets what is
// left (at most maxSweeps sweeps) and none begins once it is spent, so the number of random restarts
// that run is chosen by the budget (large models: one or two, small ones: all J).
//
// The restart driver (meanFieldRestarts) talks to a kernel through the MeanFieldKernel interface, so
// a second kernel (e.g. on factor graphs) can use the same starts, budget and reporting.

import { checkCount, checkOptionKeys, checkTol, definedOnly, MAX_LOOP_COUNT } from '../core/options.ts';
import type { Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { canonicalFits } from '../core/model-range.ts';
import { toCanonical, bitsToMarginals, type CanonicalForm } from '../core/canonical.ts';
import { BoundModel } from '../core/bound.ts';
import type { InferenceResult, Progress } from '../core/result.ts';
import { CancelledError, EngineError, ModelError } from '../core/errors.ts';
import { seedWords } from '../core/seed.ts';
import { FactorGraphMeanField } from './meanfield-fg.ts';
import { MF_STREAM, type AscentInfo, type MeanFieldKernel } from './meanfield-kernel.ts';

export { MF_STREAM, type MeanFieldKernel, type AscentInfo };

/** Options of mean field (`runMeanField`); defaults in MF_DEFAULTS. */
export interface MeanFieldOptions {
  /** Seed: random restart j draws from stream (seed, j) (default 1). */
  seed?: number;
  /** Random initialisations at most (the budget may stop earlier); the best bound is kept. */
  restarts?: number;
  /** Also start from every variable in its first state and in its last (before the random restarts). */
  orderedStarts?: boolean;
  /** Sweeps per start at most. */
  maxSweeps?: number;
  /** A start has converged when a sweep raises the bound by at most tol · max(n, |bound|). */
  tol?: number;
  /** Work for all starts together, in coupling visits (a sweep costs nBits + nnz(W)); ≥ one sweep always runs. */
  budget?: number;
  /** Called as starts finish (phase 'mf', done/total in starts). */
  onProgress?: (p: Progress) => void;
  /** Stops between starts; the result is then the best start so far. */
  signal?: AbortSignal;
}

/** Every option runMeanField reads (MeanFieldOptions): it refuses any other (BP's `tolerance` is `tol` here). */
export const MEAN_FIELD_OPTION_KEYS: readonly string[] = ['seed', 'restarts', 'orderedStarts', 'maxSweeps', 'tol', 'budget', 'onProgress', 'signal'];

/** Defaults of MeanFieldOptions. */
export const MF_DEFAULTS = { seed: 1, restarts: 10, orderedStarts: true, maxSweeps: 1000, tol: 1e-9, budget: 1e8 } as const;

/** One model's mean-field state in WASM memory: marginals per bit, entropies per block. */
export class MeanFieldSolver implements MeanFieldKernel {
  /** The model's canonical pairwise form. */
  readonly form: CanonicalForm;
  readonly sweepCost: number;
  private readonly bound: BoundModel;
  private readonly mu: number;
  private readonly ent: number;
  private readonly scratch: number;
  private readonly out: number;
  private readonly rng: number;

  /**
   * Binds the model's canonical form into `engine`'s memory.
   * @param engine The engine whose memory holds the solver.
   */
  constructor(readonly engine: Engine, model: Model | CanonicalForm) {
    this.form = 'nBits' in model ? model : toCanonical(model);
    this.sweepCost = this.form.nBits + this.form.rowPtr[this.form.nBits];
    this.bound = new BoundModel(engine, this.form);
    const arena = this.bound.arena;
    this.mu = arena.alloc(this.form.nBits * 8);
    this.ent = arena.alloc(this.form.n * 8);
    this.scratch = arena.alloc(2 * this.bound.maxBlock * 8);
    this.out = arena.alloc(4 * 8);
    this.rng = arena.alloc(engine.kernels.rngStateBytes());
  }

  private header(): number {
    if (this.bound.arena.isDisposed) throw new EngineError('use after dispose(): this solver has released its engine memory');
    return this.bound.header;
  }

  /** Random start of restart `j` from stream (seed, j). */
  randomStart(seed: number, j: number): void {
    const h = this.header();
    const [lo, hi] = seedWords(seed);
    this.engine.call('mean field init', (k) => {
      k.rngSeed(this.rng, lo, hi, j, MF_STREAM);
      k.mfRandomInit(h, this.mu, this.ent, this.rng);
    });
  }

  /** Ordered start: every variable in its first (0) or last (1) state. */
  orderedStart(which: 0 | 1): void {
    const h = this.header();
    this.engine.call('mean field init', (k) => k.mfOrderedInit(h, this.mu, this.ent, which));
  }

  snapshot(): Float64Array {
    return this.bitMarginals();
  }

  /** Sets the per-bit marginals (p(s_i = 1); one-hot blocks must sum to 1). */
  setBitMarginals(mu: ArrayLike<number>): void {
    const h = this.header();
    if (mu.length !== this.form.nBits) throw new ModelError(`expected ${this.form.nBits} bit marginals, got ${mu.length}`);
    this.bound.arena.f64(this.mu, this.form.nBits).set(mu);
    this.engine.call('mean field entropies', (k) => k.mfEntropies(h, this.mu, this.ent));
  }

  /** The current marginals per bit, p(s_i = 1) (copied). */
  bitMarginals(): Float64Array {
    this.header();
    return this.bound.arena.readF64(this.mu, this.form.nBits);
  }

  /** The bound at the current marginals, for the model as the user built it. */
  objective(): number {
    const h = this.header();
    return this.engine.call('mean field objective', (k) => k.mfObjective(h, this.mu, this.ent)) + this.form.logZOffset;
  }

  /** Coordinate ascent from the current marginals. tol < 0 runs exactly maxSweeps sweeps. */
  ascend(maxSweeps: number, tol: number): AscentInfo {
    const h = this.header();
    const sweeps = this.engine.call('mean field ascent', (k) => k.mfAscend(h, this.mu, this.ent, maxSweeps, tol, this.scratch, this.out));
    const o = this.bound.arena.readF64(this.out, 4);
    return { logZ: o[0] + this.form.logZOffset, sweeps, converged: o[1] === 1, lastIncrease: o[2], lastStep: o[3] };
  }

  /** Frees the solver's engine memory. */
  dispose(): void {
    this.bound.dispose();
  }
}

/** MeanFieldOptions validated, defaults filled in (see MeanFieldOptions for each field). */
export interface RestartsConfig {
  /** Seed of the random starts. */
  seed: number;
  /** Random restarts at most. */
  restarts: number;
  /** Whether the two ordered starts run first. */
  orderedStarts: boolean;
  /** Sweeps per start at most. */
  maxSweeps: number;
  /** Relative convergence tolerance of a start. */
  tol: number;
  /** Work for all starts, in coupling visits. */
  budget: number;
  /** Called as starts finish. */
  onProgress?: (p: Progress) => void;
  /** Stops between starts. */
  signal?: AbortSignal;
}

/** What mean field's restarts found. */
export interface RestartsOutcome {
  /** The best start's ascent (highest bound). */
  best: AscentInfo;
  /** The best start's state (kernel layout). */
  bestState: Float64Array;
  /** Index of the best random restart, −1 when an ordered start was best. */
  bestRestart: number;
  /**
   * Which start gave the best bound: an ordered one, a random one, or the start from a configuration of positive
   * probability.
   */
  bestStart: 'first-state' | 'last-state' | 'random' | 'feasible';
  /** Random restarts run; ordered starts run. */
  restarts: number;
  /** Ordered starts run. */
  ordered: number;
  /** Sweeps of all starts together. */
  sweeps: number;
  /** Most sweeps of one start; sweeps of the random restarts alone. */
  longest: number;
  /** Sweeps of the random restarts alone. */
  randomSweeps: number;
  /** Starts that converged. */
  converged: number;
  /** The lowest bound over the starts (nats). */
  worst: number;
  /** Coupling visits spent. */
  work: number;
  /** True when the budget cut the starts short (fewer sweeps or fewer starts than asked). */
  budgetExhausted: boolean;
  /** True when the signal stopped the starts. */
  cancelled: boolean;
}

/** Options merged with the defaults and validated. */
export function meanFieldConfig(opts: MeanFieldOptions): RestartsConfig {
  const c = { ...MF_DEFAULTS, ...definedOnly(opts) };
  checkCount('restarts', c.restarts, 1);
  checkCount('maxSweeps', c.maxSweeps, 1, MAX_LOOP_COUNT);
  checkTol(c.tol);
  if (typeof c.orderedStarts !== 'boolean') throw new ModelError(`orderedStarts must be true or false, got ${c.orderedStarts}`);
  if (typeof c.budget !== 'number' || !(c.budget > 0)) throw new ModelError(`budget must be a positive number of coupling visits, got ${c.budget}`);
  seedWords(c.seed);
  return { ...c, onProgress: opts.onProgress, signal: opts.signal };
}

/**
 * The ordered starts, then random restarts 0 … J−1, each ascending for at most maxSweeps sweeps and
 * what is left of the budget; the best bound is kept. Throws when cancelled before any start finished.
 */
export function meanFieldRestarts(kernel: MeanFieldKernel, c: RestartsConfig): RestartsOutcome {
  const starts = (c.orderedStarts ? 2 : 0) + c.restarts;
  const cost = Math.max(1, kernel.sweepCost);
  let best: AscentInfo | null = null;
  let bestState: Float64Array | null = null;
  let bestRestart = -1;
  let bestStart: RestartsOutcome['bestStart'] = 'random';
  let sweeps = 0, longest = 0, randomSweeps = 0, converged = 0, restarts = 0, ordered = 0, done = 0;
  let worst = Infinity;
  let cancelled = false, exhausted = false;
  for (let s = 0; s < starts; s++) {
    if (c.signal?.aborted) {
      cancelled = true;
      break;
    }
    const left = Math.floor((c.budget - sweeps * cost) / cost);
    if (done > 0 && left < 1) {
      exhausted = true;
      c.onProgress?.({ phase: 'mf', done: starts, total: starts }); // finished: the budget chose fewer starts
      break;
    }
    const isOrdered = c.orderedStarts && s < 2;
    const j = isOrdered ? -1 : s - (c.orderedStarts ? 2 : 0);
    if (isOrdered) kernel.orderedStart(s as 0 | 1);
    else kernel.randomStart(c.seed, j);
    const cap = Math.max(1, Math.min(c.maxSweeps, left));
    const info = kernel.ascend(cap, c.tol);
    if (cap < c.maxSweeps && !info.converged) exhausted = true; // cut short by the budget
    sweeps += info.sweeps;
    longest = Math.max(longest, info.sweeps);
    if (info.converged) converged++;
    if (isOrdered) ordered++;
    else {
      restarts++;
      randomSweeps += info.sweeps;
    }
    worst = Math.min(worst, info.logZ);
    // A NaN bound (none should come: it would be a kernel's bug) never stays the best.
    if (best === null || info.logZ > best.logZ || (Number.isNaN(best.logZ) && !Number.isNaN(info.logZ))) {
      best = info;
      bestState = kernel.snapshot();
      bestRestart = j;
      bestStart = isOrdered ? (s === 0 ? 'first-state' : 'last-state') : 'random';
    }
    done++;
    c.onProgress?.({ phase: 'mf', done, total: starts });
  }
  if (best === null || bestState === null) throw new CancelledError('mean field was cancelled before the first start completed: no bound');
  return {
    best, bestState, bestRestart, bestStart, restarts, ordered, sweeps, longest, randomSweeps, converged, worst,
    work: sweeps * cost, budgetExhausted: exhausted, cancelled,
  };
}

/** Mean-field lower bound on log Z (best of the ordered starts and random restarts) and its marginals. */
export function runMeanField(engine: Engine, model: Model, opts: MeanFieldOptions = {}): InferenceResult {
  checkOptionKeys(opts, MEAN_FIELD_OPTION_KEYS);
  const c = meanFieldConfig(opts);
  const t0 = performance.now();
  const zero = model.zeroReason();
  if (zero !== null) throw new EngineError(`mean field: ${zero}: the model has probability zero, no bound`);
  // Pairwise models keep the canonical-form kernel; factors of arity > 2, and pair tables that would
  // not fit (a 200-state Potts lattice's shared table copied per pair: 5.8 GB), take the factor graph's.
  const pairwise = canonicalFits(model);
  let solver: MeanFieldSolver | FactorGraphMeanField = pairwise ? new MeanFieldSolver(engine, model) : new FactorGraphMeanField(engine, model);
  try {
    let r = meanFieldRestarts(solver, c);
    if (r.best.logZ === -Infinity && !r.cancelled) {
      // Every start kept mass on a zero potential (coordinate descent on the violations stalls in
      // local minima, e.g. on pedigrees): start once more from a configuration of positive
      // probability, found by search, on the factor graph's kernel.
      if (solver instanceof MeanFieldSolver) {
        solver.dispose();
        solver = new FactorGraphMeanField(engine, model);
      }
      const status = solver.feasibleStart();
      if (status === 'none') throw new EngineError('mean field: no configuration has positive probability (Z = 0; e.g. evidence that cannot occur), no bound');
      if (status === 'budget') throw new EngineError('mean field: every start keeps mass on a zero potential and the search for a configuration of positive probability gave up, no bound');
      const info = solver.ascend(c.maxSweeps, c.tol);
      r = {
        ...r, best: info, bestState: solver.snapshot(), bestRestart: -1, bestStart: 'feasible', sweeps: r.sweeps + info.sweeps,
        converged: r.converged + (info.converged ? 1 : 0), work: r.work + info.sweeps * solver.sweepCost,
      };
    }
    const done = r.restarts + r.ordered + (r.bestStart === 'feasible' ? 1 : 0);
    return {
      method: 'mf',
      logZ: r.best.logZ,
      logZStdErr: null,
      logZKind: 'lower-bound',
      marginals: solver instanceof MeanFieldSolver ? bitsToMarginals(solver.form, r.bestState) : solver.marginals(r.bestState),
      marginalStdErr: null,
      diagnostics: {
        restarts: r.restarts,
        orderedStarts: r.ordered,
        bestRestart: r.bestRestart,
        bestStart: r.bestStart,
        sweeps: r.sweeps,
        sweepsBest: r.best.sweeps,
        converged: r.converged === done,
        convergedRestarts: r.converged,
        worstRestartLogZ: Number.isFinite(r.worst) ? r.worst : null,
        maxSweeps: c.maxSweeps,
        tol: c.tol,
        budget: c.budget,
        work: r.work,
        budgetExhausted: r.budgetExhausted,
        seed: c.seed,
        kernel: solver instanceof MeanFieldSolver ? 'pairwise' : 'factor-graph',
      },
      seconds: (performance.now() - t0) / 1000,
      partial: r.cancelled,
      // BP and TRW said so when their iterations ran out; mean field did not (maxSweeps 1: converged false, silently).
      warnings: r.best.converged ? [] : [`mean field's best start stopped at maxSweeps (${c.maxSweeps}) before converging: its bound holds, but it and the marginals are an unfinished ascent; raise maxSweeps (--max-sweeps)`],
    };
  } finally {
    solver.dispose();
  }
}
