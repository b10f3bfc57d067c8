// Mean field with random XOR projections (MFRP): Hsu, Achim & Ermon, "Tight Variational Bounds via
// Random Projections and I-Projections", AISTATS 2016, Algorithm 1 — for binary models.
//
//   for m = 0 … m_max:
//     for t = 1 … T:   A ∈ {0,1}^{m×n}, b ∈ {0,1}^m uniform (stream (seed, chain (m << 16) | t, MFRP_STREAM));
//                      row-reduce [A | b] over GF(2) (bit-packed, assembly/gf2.ts); an inconsistent system
//                      is an empty projection (log γ_t = −∞), dependent rows are dropped;
//                      log γ_t = max over J random starts of the projected mean-field bound
//                      (coordinate ascent over the free marginals, constrained ones by Proposition 1 —
//                      derived again in assembly/mfrp.ts, where the paper's garbled text is discussed)
//     bound_m = m log 2 + median_t log γ_t       (Theorem 1: 2^m · Median(γ) ≤ 4Z, and ≥ Z / (32(n+1))
//                                                for a good m if each γ were the global optimum)
//   logZ ≥ max_m bound_m  (reported as the lower bound, as Hsu do; it is a probabilistic bound).
//
// m = 0 is mean field itself: its candidate is runMeanField's optimum with the same seed, restarts,
// ordered starts, tolerance and budget (not a median of projected trials), so MFRP ≥ MF always.
// Cost: the projected trials (m ≥ 1) get a budget of budgetFactor × mean field's work (at least
// MFRP_MIN_BUDGET coupling visits); unless given, J per projection is at most mean field's number of
// random restarts and small enough that m = 1 takes at most a quarter of the budget; m runs upwards
// from 1 while the next m's estimated cost (T · J · mean sweeps per ascent · visits per sweep at m)
// fits what is left — unless maxConstraints is given explicitly, in which case every m up to it runs.
//
// Everything stays in log space: the median of an even number of trials averages the two middle γ
// by log-add-exp. Marginals are those of the best m: the γ-weighted average over its trials of the
// projected q's marginals (E[Z(A,b) · R_{A,b}(p)] = 2^{−m} p̃, so weighting by the Z(A,b) estimate
// aims at p's marginals; the paper does not say how it aggregates them).

import type { Engine } from '../core/engine.ts';
import { requirePairwise, type Model } from '../core/model.ts';
import { toCanonical, bitsToMarginals, PAIRWISE_ALTERNATIVES, type CanonicalForm } from '../core/canonical.ts';
import { BoundModel } from '../core/bound.ts';
import type { InferenceResult, Progress } from '../core/result.ts';
import { CancelledError, EngineError, ModelError } from '../core/errors.ts';
import { seedWords } from '../core/seed.ts';
import { checkCount, checkOptionKeys, checkTol, definedOnly, MAX_LOOP_COUNT } from '../core/options.ts';
import { MeanFieldSolver, meanFieldConfig, meanFieldRestarts, MF_DEFAULTS } from './meanfield.ts';

/** Tag of MFRP's generator streams (projection, then the J starts of that trial). */
export const MFRP_STREAM = 0x5250; // "RP"

/** Options of mean field with random projections (`runMFRP`); defaults in MFRP_DEFAULTS. */
export interface MFRPOptions {
  /** Seed of the projections and their starts (default 1). */
  seed?: number;
  /** J: random initialisations per projection; the best bound is kept. */
  restarts?: number;
  /** T: random projections per number of constraints; their median is used. */
  trials?: number;
  /** m_max: constraints m = minConstraints … maxConstraints are tried (clamped to n). */
  maxConstraints?: number;
  /** Smallest number of constraints m tried (default 0: plain mean field). */
  minConstraints?: number;
  /** Sweeps per ascent at most (default 1000). */
  maxSweeps?: number;
  /** An ascent has converged when a sweep raises the bound by at most tol · max(n, |bound|). */
  tol?: number;
  /** Mean field's (m = 0) budget in coupling visits, as MeanFieldOptions.budget. */
  budget?: number;
  /** Mean field's ordered starts (m = 0), as MeanFieldOptions.orderedStarts. */
  orderedStarts?: boolean;
  /** The projected trials' budget as a multiple of mean field's work (Infinity: none). */
  budgetFactor?: number;
  /** Called after each trial (phase 'mfrp', done/total in trials). */
  onProgress?: (p: Progress) => void;
  /** Stops between trials; the result then uses the numbers of constraints completed. */
  signal?: AbortSignal;
}

/** Every option runMFRP and runMFRPDetailed read (MFRPOptions): they refuse any other. */
export const MFRP_OPTION_KEYS: readonly string[] = [
  'seed', 'restarts', 'trials', 'maxConstraints', 'minConstraints', 'maxSweeps', 'tol', 'budget', 'orderedStarts', 'budgetFactor', 'onProgress', 'signal',
];

/** Defaults of MFRPOptions. */
export const MFRP_DEFAULTS = {
  seed: 1, restarts: MF_DEFAULTS.restarts, trials: 5, maxConstraints: 20, minConstraints: 0, maxSweeps: MF_DEFAULTS.maxSweeps,
  tol: MF_DEFAULTS.tol, budget: MF_DEFAULTS.budget, orderedStarts: MF_DEFAULTS.orderedStarts, budgetFactor: 4,
} as const;

/** The projected trials' budget never goes below this many coupling visits (small models run every m). */
export const MFRP_MIN_BUDGET = 2e7;

/**
 * Experiment switches of the MFRP kernel, for reading Hsu et al. literally (bench/mfrp.ts); not user
 * options — the defaults are the better choices measured there.
 */
export interface MFRPVariant {
  /** 'leftmost': each row's pivot is its first set column, the paper's C = [I | A′] (default 'non-adjacent': pivots preferably not neighbours). */
  pivots?: 'non-adjacent' | 'leftmost';
  /** 'per-sweep': Algorithm 1's constrained marginals refreshed after each sweep, not after each coordinate (default 'per-coordinate': exact coordinate ascent). */
  constrainedUpdate?: 'per-coordinate' | 'per-sweep';
}

/** A random XOR projection Ax = b over GF(2), reduced to pivot rows. */
export interface Projection {
  /** Rank of A; equals the number of pivot rows. */
  rank: number;
  /** false: Ax = b has no solution (an empty projection). */
  consistent: boolean;
  /** Pivot (constrained) variable of each reduced row. */
  pivots: Int32Array;
  /** Row l: x_{pivots[l]} = rhs[l] ⊕ ⊕_{f ∈ support[l]} x_f, every f free. */
  support: Int32Array[];
  /** Right-hand side bit of each reduced row. */
  rhs: Uint8Array;
}

/** The outcome of one coordinate ascent over a projection's free marginals. */
export interface ProjectedAscent {
  /** log γ: the projected bound of the model as the user built it (offset included). */
  logGamma: number;
  /** Sweeps run. */
  sweeps: number;
  /** True when the convergence test passed before maxSweeps. */
  converged: boolean;
  /** The last sweep's increase of the bound as the kernel tracked it, and largest change of a marginal. */
  lastIncrease: number;
  /** Largest change of a marginal in the last sweep. */
  lastStep: number;
  /** p(x_i = 1) for every variable (pivots by Proposition 1). */
  marginals: Float64Array;
}

/** Refuses what MFRP does not cover, with the reason. */
export function checkMFRPModel(model: Model, form?: CanonicalForm): CanonicalForm {
  // The factor of arity > 2 first: it is what no variant of MFRP here takes.
  requirePairwise(model, 'MFRP (on the binary pairwise form)', PAIRWISE_ALTERNATIVES);
  for (let v = 0; v < model.n; v++) {
    if (model.card[v] !== 2) {
      throw new ModelError(`MFRP applies to binary models only (all variables with 2 states): variable ${v} has ${model.card[v]} states; use method 'mf'`);
    }
  }
  const f = form ?? toCanonical(model);
  for (let v = 0; v < f.n; v++) {
    if (!f.oneHot[v]) continue;
    // Evidence is a unary clamp (a zero on every other state): say so, not only "a zero entry".
    const b = f.blockStart[v], allowed = [0, 1].filter((k) => f.a[b + k] > -Infinity).length;
    const why = allowed === 1 ? `variable ${v} is observed (evidence, or unary factors allowing one state)` : `a factor on variable ${v} has a zero (−Infinity) entry`;
    throw new ModelError(`MFRP needs strictly positive potentials and no evidence: ${why}; use method 'mf'`);
  }
  return f;
}

/** A binary model's MFRP state in WASM memory: one projection at a time, and its free marginals. */
export class MFRPSolver {
  /** The model's canonical pairwise form (binary, strictly positive potentials). */
  readonly form: CanonicalForm;
  /** Number of variables (bits). */
  readonly n: number;
  /** Largest number of constraints this solver holds. */
  readonly maxRows: number;
  private readonly bound: BoundModel;
  private readonly state: number;
  private readonly out: number;
  private readonly marg: number;
  /** The free marginals belong to the current projection (set after it by randomStart or setFreeMarginals). */
  private fresh = false;

  /**
   * Binds a binary pairwise model into `engine`'s memory, with room for up to `maxRows` constraints (ModelError
   * for models MFRP does not cover).
   * @param engine The engine whose memory holds the solver.
   */
  constructor(readonly engine: Engine, model: Model, maxRows: number) {
    this.form = checkMFRPModel(model);
    this.n = this.form.nBits;
    checkCount('maxConstraints', maxRows, 0, 65535);
    this.maxRows = maxRows;
    this.bound = new BoundModel(engine, this.form);
    const k = engine.kernels;
    // Capacities: pivot–pivot edges, and pivot-neighbour slots (Σ of the pivots' degrees).
    const rp = this.form.rowPtr;
    let maxDeg = 0;
    for (let i = 0; i < this.n; i++) maxDeg = Math.max(maxDeg, rp[i + 1] - rp[i]);
    const t5Cap = Math.max(1, Math.min(rp[this.n] / 2, (maxRows * (maxRows - 1)) / 2));
    const pnCap = Math.max(1, Math.min(rp[this.n], maxRows * maxDeg));
    const arena = this.bound.arena;
    this.state = arena.alloc(k.mfrpStateBytes(this.n, maxRows, t5Cap, pnCap) >>> 0);
    this.out = arena.alloc(32);
    this.marg = arena.alloc(this.n * 8);
    const h = this.bound.header;
    engine.call('mfrp init', (kk) => kk.mfrpInit(this.state, h, maxRows, t5Cap, pnCap));
    this.engine.call('mfrp reduce', (kk) => kk.mfrpReduce(this.state, 0));
  }

  /** Sets the kernel's experiment switches; they apply from the next drawProjection / setProjection. */
  setVariant(v: MFRPVariant): void {
    const flags = (v.pivots === 'leftmost' ? 1 : 0) | (v.constrainedUpdate === 'per-sweep' ? 2 : 0);
    const st = this.live();
    this.engine.kernels.mfrpSetVariant(st, flags);
    this.fresh = false;
  }

  private needFresh(): void {
    if (!this.fresh) throw new EngineError('mfrp: set the free marginals (randomStart or setFreeMarginals) after choosing a projection');
  }

  private live(): number {
    if (this.bound.arena.isDisposed) throw new EngineError('use after dispose(): this solver has released its engine memory');
    return this.state;
  }

  private ptr(which: number): number {
    return this.engine.kernels.mfrpPtr(this.live(), which) >>> 0;
  }

  private checkRows(m: number): void {
    if (!Number.isInteger(m) || m < 0 || m > this.maxRows) throw new ModelError(`number of constraints ${m} is outside 0…${this.maxRows}`);
  }

  /**
   * Seeds the stream of (seed, m, trial t), draws A, b from it and reduces. Returns the projection code
   * (rank, or −(rank + 1) when empty). The free marginals must then be set (randomStart continues the
   * same stream, as Algorithm 1's J initialisations of trial t).
   */
  drawProjection(seed: number, m: number, t: number): number {
    this.checkRows(m);
    checkCount('trial', t, 0, 65535);
    const st = this.live();
    const [lo, hi] = seedWords(seed);
    const rng = this.ptr(5);
    this.fresh = false;
    return this.engine.call('mfrp projection', (k) => {
      k.rngSeed(rng, lo, hi, ((m << 16) | t) >>> 0, MFRP_STREAM);
      k.mfrpDraw(st, m);
      return k.mfrpReduce(st, m);
    });
  }

  /** Sets the constraints A x = b (A: m rows of n bits, as 0/1 arrays) and reduces. */
  setProjection(A: ArrayLike<number>[], b: ArrayLike<number>): number {
    const m = A.length;
    this.checkRows(m);
    if (b.length !== m) throw new ModelError(`b has ${b.length} entries for ${m} rows`);
    const st = this.live();
    this.fresh = false;
    const stride = this.engine.kernels.mfrpInfo(st, 3);
    const rows = this.ptr(0);
    const words = new BigUint64Array(this.engine.kernels.memory.buffer, rows, m * stride);
    words.fill(0n);
    for (let l = 0; l < m; l++) {
      if (A[l].length !== this.n) throw new ModelError(`row ${l} of A has ${A[l].length} entries, expected ${this.n}`);
      const set = (c: number) => (words[l * stride + (c >> 6)] |= 1n << BigInt(c & 63));
      for (let c = 0; c < this.n; c++) if (A[l][c]) set(c);
      if (b[l]) set(this.n);
    }
    return this.engine.call('mfrp reduce', (k) => k.mfrpReduce(st, m));
  }

  /** The current (reduced) projection. */
  projection(): Projection {
    const st = this.live();
    const k = this.engine.kernels;
    const rank = k.mfrpInfo(st, 0);
    const consistent = k.mfrpInfo(st, 1) === 1;
    const stride = k.mfrpInfo(st, 3);
    const pivots = new Int32Array(k.memory.buffer, this.ptr(1), rank).slice();
    const sig = new Float64Array(k.memory.buffer, this.ptr(3), rank).slice();
    const words = new BigUint64Array(k.memory.buffer, this.ptr(0), rank * stride).slice();
    const support: Int32Array[] = [];
    for (let l = 0; l < rank; l++) {
      const s: number[] = [];
      for (let c = 0; c < this.n; c++) if ((words[l * stride + (c >> 6)] >> BigInt(c & 63)) & 1n) s.push(c);
      support.push(Int32Array.from(s));
    }
    return { rank, consistent, pivots, support, rhs: Uint8Array.from(sig, (x) => (x < 0 ? 1 : 0)) };
  }

  /** Free variables of the current projection (ascending). */
  freeVariables(): Int32Array {
    const rowOf = new Int32Array(this.engine.kernels.memory.buffer, this.ptr(2), this.n);
    const out: number[] = [];
    for (let i = 0; i < this.n; i++) if (rowOf[i] < 0) out.push(i);
    return Int32Array.from(out);
  }

  /** Random start of the free marginals, continuing the current stream (Algorithm 1: μ ~ U(0,1)). */
  randomStart(): void {
    const st = this.live();
    this.engine.call('mfrp start', (k) => k.mfrpRandomStart(st));
    this.fresh = true;
  }

  /** Sets free marginals: mu[i] = p(x_i = 1) is read for every free i (other entries are ignored). */
  setFreeMarginals(mu: ArrayLike<number>): void {
    if (mu.length !== this.n) throw new ModelError(`expected ${this.n} marginals, got ${mu.length}`);
    const st = this.live();
    const view = new Float64Array(this.engine.kernels.memory.buffer, this.ptr(4), this.n);
    const rowOf = new Int32Array(this.engine.kernels.memory.buffer, this.ptr(2), this.n);
    for (let i = 0; i < this.n; i++) if (rowOf[i] < 0) view[i] = mu[i];
    this.engine.call('mfrp set', (k) => k.mfrpSetFree(st));
    this.fresh = true;
  }

  /** The projected bound at the current marginals (offset included) and every marginal p(x_i = 1). */
  evaluate(): { logGamma: number; marginals: Float64Array } {
    const st = this.live();
    if (!this.consistent()) return { logGamma: -Infinity, marginals: new Float64Array(this.n).fill(NaN) };
    this.needFresh();
    const F = this.engine.call('mfrp evaluate', (k) => k.mfrpEvaluate(st, this.marg));
    return { logGamma: F + this.form.logZOffset, marginals: this.bound.arena.readF64(this.marg, this.n) };
  }

  /** E_q[x_i x_j] by Proposition 1 at the current marginals. */
  pairMarginal(i: number, j: number): number {
    const st = this.live();
    this.needFresh();
    if (!Number.isInteger(i) || !Number.isInteger(j) || i < 0 || j < 0 || i >= this.n || j >= this.n) throw new ModelError(`variables (${i}, ${j}) out of range`);
    return this.engine.call('mfrp pair marginal', (k) => k.mfrpPairMarginal(st, i, j));
  }

  /** False when the current projection is empty (Ax = b has no solution). */
  consistent(): boolean {
    return this.engine.kernels.mfrpInfo(this.live(), 1) === 1;
  }

  /** Coordinate ascent over the free marginals from the current ones. tol < 0: exactly maxSweeps. */
  ascend(maxSweeps: number, tol: number): ProjectedAscent {
    const st = this.live();
    if (!this.consistent()) throw new EngineError('mfrp: the current projection is empty (no x satisfies Ax = b)');
    this.needFresh();
    const sweeps = this.engine.call('mfrp ascent', (k) => k.mfrpAscend(st, maxSweeps, tol, this.out, this.marg));
    const o = this.bound.arena.readF64(this.out, 4);
    return {
      logGamma: o[0] + this.form.logZOffset, sweeps, converged: o[1] === 1, lastIncrease: o[2], lastStep: o[3],
      marginals: this.bound.arena.readF64(this.marg, this.n),
    };
  }

  /** Frees the solver's engine memory. */
  dispose(): void {
    this.bound.dispose();
  }
}

/** Median of log-values in log space (−∞ allowed): the mean of the two middle values for an even count. */
export function logMedian(xs: readonly number[]): number {
  if (xs.length === 0) return -Infinity;
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  if (s.length % 2 === 1) return s[h];
  const a = s[h - 1], b = s[h];
  if (b === -Infinity) return -Infinity;
  return b + Math.log1p(Math.exp(a - b)) - Math.LN2;
}

/** One projection trial of MFRP. */
export interface TrialRecord {
  /** log γ_t (−∞ for an empty projection). */
  logGamma: number;
  /** Rank of the projection's A. */
  rank: number;
  /** True when the projection was empty (no solution). */
  empty: boolean;
  /** Sweeps of the trial's J restarts together. */
  sweeps: number;
  /** True when all J restarts converged. */
  converged: boolean;
}

/** The trials at one number of constraints m. */
export interface PerM {
  /** Number of constraints. */
  m: number;
  /** m log 2 + median_t log γ_t: this m's estimate of the lower bound. */
  bound: number;
  /** Its trials, in order. */
  trials: TrialRecord[];
  /** Wall-clock time of this m's trials, in seconds. */
  seconds: number;
}

/** MFRP's result with every trial's record. */
export interface MFRPDetail {
  /** The result runMFRP returns. */
  result: InferenceResult;
  /** One entry per number of constraints m run. */
  perM: PerM[];
}

/**
 * One projected sweep at m constraints in mean-field coupling visits (the budget's unit): calibrated
 * on a 64² lattice, where it costs ≈ 1.75 + 0.6 m mean-field sweeps (each row holds about half the
 * variables; a row visit costs its pivot's degree).
 */
function projectedSweepCost(n: number, nnz: number, m: number): number {
  return 1.75 * (n + nnz) + 0.6 * m * n * (1 + nnz / Math.max(1, n));
}

/**
 * MFRP with every trial's record (the bench and tests use this; runMFRP returns its `result`).
 * `variant`: the kernel's experiment switches (bench only).
 */
export function runMFRPDetailed(engine: Engine, model: Model, opts: MFRPOptions = {}, variant: MFRPVariant = {}): MFRPDetail {
  checkOptionKeys(opts, MFRP_OPTION_KEYS);
  const o = { ...MFRP_DEFAULTS, ...definedOnly(opts) };
  const { seed, restarts, trials, maxSweeps, tol } = o;
  checkCount('restarts', restarts, 1);
  checkCount('trials', trials, 1, 65535);
  checkCount('maxConstraints', o.maxConstraints, 0, 65535);
  checkCount('minConstraints', o.minConstraints, 0, 65535);
  checkCount('maxSweeps', maxSweeps, 1, MAX_LOOP_COUNT);
  checkTol(tol);
  if (typeof o.budgetFactor !== 'number' || !(o.budgetFactor > 0)) throw new ModelError(`budgetFactor must be a positive number, got ${o.budgetFactor}`);
  seedWords(seed);
  const form = checkMFRPModel(model);
  const n = form.nBits;
  const nnz = form.rowPtr[n];
  const mMax = Math.min(o.maxConstraints, n);
  const mMin = Math.min(o.minConstraints, mMax);
  if (o.minConstraints > o.maxConstraints) throw new ModelError(`minConstraints ${o.minConstraints} exceeds maxConstraints ${o.maxConstraints}`);
  const byBudget = opts.maxConstraints === undefined && Number.isFinite(o.budgetFactor);
  const mfCfg = meanFieldConfig({ seed, restarts, maxSweeps, tol, budget: o.budget, orderedStarts: o.orderedStarts, signal: opts.signal });
  const t0 = performance.now();
  // m = 0: mean field with the same restarts (also the cost reference of the budget).
  const mfSolver = new MeanFieldSolver(engine, form);
  let mf;
  try {
    mf = meanFieldRestarts(mfSolver, mfCfg);
  } finally {
    mfSolver.dispose();
  }
  const mfSeconds = (performance.now() - t0) / 1000;
  const budget = byBudget ? Math.max(MFRP_MIN_BUDGET, o.budgetFactor * mf.work) : Infinity;
  // Sweeps per projected ascent, until some have run: mean field's random restarts' (ordered starts are no guide).
  const mfSweepsPer = mf.restarts > 0 ? mf.randomSweeps / mf.restarts : mf.sweeps / Math.max(1, mf.ordered);
  // J per projection: at most as many random restarts as mean field ran, and few enough that m = 1
  // costs at most a quarter of the budget (so that several m fit).
  const J = opts.restarts !== undefined || !Number.isFinite(budget)
    ? restarts
    : Math.max(1, Math.min(mf.restarts, Math.floor(budget / 4 / (trials * mfSweepsPer * projectedSweepCost(n, nnz, 1)))));
  // When mean field ran out of budget (a large model), no projected ascent runs longer than its longest start.
  const sweepCap = byBudget && mf.budgetExhausted ? Math.min(maxSweeps, Math.max(1, mf.longest)) : maxSweeps;
  const solver = new MFRPSolver(engine, model, Math.max(mMax, 1));
  try {
    solver.setVariant(variant);
    const perM: PerM[] = [];
    const margOf = new Map<number, Float64Array[]>(); // m → each trial's best marginals (null when empty)
    const total = (mMax - mMin + 1) * trials;
    let done = 0, sweeps = mf.sweeps, ascents = mf.restarts + mf.ordered, converged = mf.converged, empty = 0;
    let partial = mf.cancelled;
    let spent = 0, exhausted = false;
    let pSweeps = 0, pAscents = 0;
    if (mMin === 0) {
      const rec: TrialRecord = { logGamma: mf.best.logZ, rank: 0, empty: false, sweeps: mf.sweeps, converged: mf.converged === mf.restarts + mf.ordered };
      perM.push({ m: 0, bound: mf.best.logZ, trials: [rec], seconds: mfSeconds });
      margOf.set(0, [mf.bestState]);
      done += trials;
      opts.onProgress?.({ phase: 'mfrp', done, total });
    }
    outer: for (let m = Math.max(1, mMin); m <= mMax && !partial; m++) {
      const cost = projectedSweepCost(n, nnz, m);
      const perAscent = pAscents > 0 ? pSweeps / pAscents : mfSweepsPer;
      if (perM.length > 0 && spent + trials * J * perAscent * cost > budget) {
        exhausted = true;
        opts.onProgress?.({ phase: 'mfrp', done: total, total }); // finished: the budget chose a shorter m range
        break;
      }
      const tm = performance.now();
      const recs: TrialRecord[] = [];
      const margs: Float64Array[] = [];
      for (let t = 0; t < trials; t++) {
        if (opts.signal?.aborted) {
          partial = true;
          break outer;
        }
        const code = solver.drawProjection(seed, m, t);
        const rank = code >= 0 ? code : -code - 1;
        if (code < 0) {
          empty++;
          recs.push({ logGamma: -Infinity, rank, empty: true, sweeps: 0, converged: true });
          margs.push(new Float64Array(0));
        } else {
          let best: ProjectedAscent | null = null;
          let sw = 0;
          let allConv = true;
          for (let j = 0; j < J; j++) {
            solver.randomStart();
            const a = solver.ascend(sweepCap, tol);
            sw += a.sweeps;
            ascents++;
            if (a.converged) converged++;
            else allConv = false;
            if (best === null || a.logGamma > best.logGamma) best = a;
          }
          sweeps += sw;
          pSweeps += sw;
          pAscents += J;
          spent += sw * cost;
          recs.push({ logGamma: best!.logGamma, rank, empty: false, sweeps: sw, converged: allConv });
          margs.push(best!.marginals);
        }
        done++;
        opts.onProgress?.({ phase: 'mfrp', done, total });
      }
      const med = logMedian(recs.map((r) => r.logGamma));
      perM.push({ m, bound: med === -Infinity ? -Infinity : m * Math.LN2 + med, trials: recs, seconds: (performance.now() - tm) / 1000 });
      margOf.set(m, margs);
    }
    if (perM.length === 0) throw new CancelledError('MFRP was cancelled before the first number of constraints completed: no bound');
    let bestIdx = 0;
    for (let q = 1; q < perM.length; q++) if (perM[q].bound > perM[bestIdx].bound) bestIdx = q;
    const best = perM[bestIdx];
    // γ-weighted marginals of the best m's trials.
    const margs = margOf.get(best.m)!;
    const top = Math.max(...best.trials.map((r) => r.logGamma));
    const bits = new Float64Array(n);
    let wsum = 0;
    best.trials.forEach((r, t) => {
      if (r.empty || !Number.isFinite(top)) return;
      const w = Math.exp(r.logGamma - top);
      wsum += w;
      for (let i = 0; i < n; i++) bits[i] += w * margs[t][i];
    });
    // Every trial of every m empty (possible only with minConstraints > 0): no q, no marginals.
    if (wsum > 0) for (let i = 0; i < n; i++) bits[i] /= wsum;
    else bits.fill(NaN);
    const result: InferenceResult = {
      method: 'mfrp',
      logZ: best.bound,
      logZStdErr: null,
      // Not a bound: the maximum over m of medians of 2^m γ can exceed Z (README, "MFRP above exact log Z").
      logZKind: 'estimate',
      marginals: bitsToMarginals(form, bits),
      marginalStdErr: null,
      diagnostics: {
        bestM: best.m,
        perMBounds: JSON.stringify(perM.map((p) => (Number.isFinite(p.bound) ? p.bound : null))),
        mfBound: Number.isFinite(mf.best.logZ) ? mf.best.logZ : null,
        minConstraints: mMin,
        maxConstraints: perM[perM.length - 1].m,
        maxConstraintsAllowed: mMax,
        trials,
        restarts: J,
        mfRestarts: mf.restarts,
        orderedStarts: mf.ordered,
        budgetFactor: o.budgetFactor,
        mfWork: mf.work,
        work: mf.work + spent,
        budgetExhausted: exhausted || mf.budgetExhausted,
        emptyProjections: empty,
        sweeps,
        ascents,
        converged: converged === ascents,
        convergedAscents: converged,
        maxSweeps,
        tol,
        seed,
      },
      seconds: (performance.now() - t0) / 1000,
      partial,
    };
    return { result, perM };
  } finally {
    solver.dispose();
  }
}

/** MFRP lower bound on log Z (max over m of the rescaled median) and marginals. Binary models only. */
export function runMFRP(engine: Engine, model: Model, opts: MFRPOptions = {}): InferenceResult {
  return runMFRPDetailed(engine, model, opts).result;
}
