// Discrete HMC (Zhang et al. 2012): Hamiltonian Monte Carlo on the relaxed density p(x) of a
// relaxation (DESIGN.md §2), with Rao–Blackwellised estimators E[p(s|x)] accumulated in WASM while
// sampling. The moves run in WASM (assembly/hmc.ts; Langevin moves in assembly/langevin.ts); this
// file owns chain memory, seeding, warm-up schedules and the aggregation across chains.
//
// Sampler shape (DESIGN.md §3, after BlackJAX's init + kernel): init(seed, chain) → state in WASM
// memory (x, cached log p, ∇, π, two Philox streams, step size, mass matrix); step(state, n, opts)
// → info {acceptRate, stepSize, divergences, energyError, …}; warmup(state, n) adapts.
//
// Parametrisations (both sample the same p(s); they differ in how HMC moves):
//   * 'whitened' (default): x with the factor M (M Mᵀ = W + D), x | s ~ N(Mᵀs, I), identity (or
//     adapted diagonal) mass matrix.
//   * 'zhang': Zhang's A = I form, x_I = M x, x_I | s ~ N((W+D)s, W+D), with an identity mass on x_I
//     — the paper's DHMC. Under the linear map it is HMC on x with mass matrix G = MᵀM (inverse mass
//     (MᵀM)⁻¹): momentum p = Mᵀp_I, velocity ẋ = M⁻¹ẋ_I = (MᵀM)⁻¹p. For a general n × m factor of full
//     column rank that is the definition we use (x_I then lives in the m-dimensional range of M with
//     the metric it inherits from Rⁿ). Implementation: G = R Rᵀ with a triangular R, so G⁻¹p is two
//     triangular solves (O(m²)):
//       - square lower-triangular M (dense Cholesky): R = Mᵀ, no extra storage;
//       - any other factor (eigen V Λ^½, sparse Cholesky, non-square): G = MᵀM formed densely and
//         factored here (m ≤ ZHANG_DENSE_LIMIT). A sparse factor's own triangular structure (M = PᵀL,
//         G = LᵀL) is not exploited: large sparse models should use 'whitened'.
//     Samples are stored and reported in x (whitened) coordinates either way; π, marginals, ESS are
//     invariant.
//
// Streams: each chain uses two Philox streams keyed by (seed, chain): the move stream and a separate
// stream for the draws of s ~ p(s|x) behind the empirical marginals, so asking for them never
// changes the chain. Tags: HMC 4/5, MALA 6/7, ULA 8/9 (Gibbs uses 1).

import { checkCount, definedOnly } from '../core/options.ts';
import type { Engine, Arena } from '../core/engine.ts';
import { BoundRelaxation, type RelaxationData } from '../relax/relaxation-bound.ts';
import { bitsToMarginals, type CanonicalForm } from '../core/canonical.ts';
import { BatchMeans, splitEvenly } from './estimators.ts';
import type { InferenceResult, Progress } from '../core/result.ts';
import { EngineError, ModelError } from '../core/errors.ts';
import { seedWords } from '../core/seed.ts';
import { summarizeTraces } from './diagnostics.ts';
import { adaptationWarnings, convergenceWarnings, seriesDiagnostics } from './convergence.ts';
import { range } from './chains.ts';

export type MoveKind = 'hmc' | 'mala' | 'ula';

const STREAMS: Record<MoveKind, [number, number]> = { hmc: [4, 5], mala: [6, 7], ula: [8, 9] };

const TARGET_RELAXED = 0, TARGET_GAUSS = 1;
const MASS_DIAG = 0, MASS_DENSE_LOWER = 1, MASS_DENSE_UPPER = 2;
const STEP_ADAPT = 1, STEP_WELFORD = 2, STEP_ACCUMULATE = 4, STEP_TRACE = 8;

/** Largest m for which 'zhang' forms MᵀM densely (m² doubles). */
export const ZHANG_DENSE_LIMIT = 2048;

/**
 * Palindromic splitting integrators as coefficient tables [b0, a0, b1, a1, …, bS]: one step is
 * kick(b0 ε) drift(a0 ε) … drift(a_{S−1} ε) kick(bS ε); S gradient evaluations per step.
 */
export const INTEGRATORS = {
  /** Velocity Verlet (leapfrog). */
  leapfrog: [0.5, 1, 0.5],
  /** Two-stage minimum-error scheme (McLachlan 1995; Blanes, Casas & Sanz-Serna 2014). */
  mclachlan: [0.1931833275037836, 0.5, 1 - 2 * 0.1931833275037836, 0.5, 0.1931833275037836],
  /** Three-stage scheme of Blanes, Casas & Sanz-Serna 2014 (as BlackJAX's "yoshida"). */
  yoshida: [0.11888010966548, 0.29619504261126, 0.5 - 0.11888010966548, 1 - 2 * 0.29619504261126, 0.5 - 0.11888010966548, 0.29619504261126, 0.11888010966548],
} as const;
export type IntegratorName = keyof typeof INTEGRATORS;

/** A Gaussian target log p(x) = −½ (x − μ)ᵀ P (x − μ): a reference path for testing the samplers. */
export interface GaussianTarget {
  kind: 'gaussian';
  mean: Float64Array;
  /** Precision P, m × m row-major, symmetric positive definite. */
  precision: Float64Array;
}

export type ContinuousTarget = RelaxationData | GaussianTarget;

/** An explicit mass matrix: diagonal (given by its inverse) or dense G (m × m, SPD). */
export type MassSpec = { kind: 'diag'; inverse: ArrayLike<number> } | { kind: 'dense'; matrix: ArrayLike<number> };

export type Parametrisation = 'whitened' | 'zhang';

export interface ContinuousSamplerOptions {
  parametrisation?: Parametrisation;
  /** Overrides the parametrisation's mass matrix (not with 'zhang'). */
  mass?: MassSpec;
  /** HMC only. Default 'leapfrog'. A custom table must be palindromic with b's and a's each summing to 1. */
  integrator?: IntegratorName | readonly number[];
  /** HMC only: integrator steps per trajectory. Default 5 (Zhang §5). */
  leapfrogSteps?: number;
  /** Pair codes (bit level, 2 per entry: c ≥ 0 → π_c, c < 0 → 1 − π_{−c−1}), accumulated as E[f f']. */
  pairCodes?: Int32Array;
  /** Accumulate draws s ~ p(s|x) (empirical marginals). Default false. */
  empirical?: boolean;
  /** Traced quantities: c ≥ 0 → π_c, −1 → log p(x), c ≤ −2 → x_{−c−2}. */
  traceCodes?: Int32Array;
  /** Rows of the trace buffer each chain allocates. */
  traceCapacity?: number;
  /** Record every thin-th traced step. Default 1. */
  thin?: number;
}

export interface ContinuousState {
  readonly ptr: number;
  readonly chain: number;
  /** @internal */ readonly arena: Arena;
  /** @internal */ readonly buffers: { info: number; acc: number; accEmp: number; accPair: number; traceBuf: number; traceCap: number; nTrace: number };
}

export interface ContinuousInfo {
  iterations: number;
  /** Mean acceptance statistic min(1, e^{−ΔH}) (divergent transitions count 0). ULA: fraction of finite moves. */
  acceptRate: number;
  /** Fraction of proposals accepted. */
  acceptedFraction: number;
  stepSize: number;
  divergences: number;
  /** Mean energy error ΔH over non-divergent transitions (Langevin: −log α of MALA's test). */
  energyError: number;
  maxAbsEnergyError: number;
  gradientEvaluations: number;
}

export interface WarmupOptions {
  /** Target mean acceptance statistic of dual averaging. */
  targetAccept: number;
  /** Adapt a diagonal mass matrix in Stan's windows (identity-based parametrisations only). */
  adaptMass?: boolean;
  /** Fixed step size: no dual averaging. */
  stepSize?: number;
  /** Called after every WASM call with the iterations done; return false to stop. */
  onChunk?: (done: number) => boolean;
}

/** Phases of Stan's warm-up: a fast window (step size only), doubling slow windows (+ variance), a fast window. */
export function warmupSchedule(total: number, adaptMass: boolean): { iterations: number; slow: boolean }[] {
  if (total <= 0) return [];
  if (!adaptMass || total < 20) return [{ iterations: total, slow: false }];
  let init = 75, term = 50, base = 25;
  if (init + term + base > total) {
    init = Math.floor(0.15 * total);
    term = Math.floor(0.1 * total);
    base = total - init - term;
  }
  const out: { iterations: number; slow: boolean }[] = [];
  if (init > 0) out.push({ iterations: init, slow: false });
  const slowEnd = total - term;
  let start = init, size = base;
  while (start < slowEnd) {
    let end = start + size;
    if (end + 2 * size > slowEnd) end = slowEnd;
    out.push({ iterations: end - start, slow: true });
    start = end;
    size *= 2;
  }
  if (term > 0) out.push({ iterations: term, slow: false });
  return out;
}

function checkIntegrator(coef: readonly number[]): void {
  const L = coef.length;
  if (L < 3 || L % 2 === 0 || !coef.every(Number.isFinite)) throw new ModelError('integrator table must have an odd length ≥ 3 of finite numbers [b0, a0, …, bS]');
  for (let k = 0; k < L; k++) if (Math.abs(coef[k] - coef[L - 1 - k]) > 1e-12) throw new ModelError('integrator table must be palindromic (time-reversible)');
  let sb = 0, sa = 0;
  for (let k = 0; k < L; k++) (k % 2 ? (sa += coef[k]) : (sb += coef[k]));
  if (Math.abs(sb - 1) > 1e-12 || Math.abs(sa - 1) > 1e-12) throw new ModelError('integrator table: kick and drift coefficients must each sum to 1');
}

/** Lower-triangular T with T Tᵀ = A (row-major m × m); null if A is not positive definite. */
function choleskyLower(A: Float64Array, m: number): Float64Array | null {
  const L = new Float64Array(m * m);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j <= i; j++) {
      let s = A[i * m + j];
      const ri = i * m, rj = j * m;
      for (let k = 0; k < j; k++) s -= L[ri + k] * L[rj + k];
      if (i === j) {
        if (!(s > 0) || !Number.isFinite(s)) return null;
        L[ri + i] = Math.sqrt(s);
      } else L[ri + j] = s / L[rj + j];
    }
  }
  return L;
}

/**
 * The dense mass factor of Zhang's A = I parametrisation: G = MᵀM = R Rᵀ. A square lower-triangular
 * dense M gives R = Mᵀ directly; any other storage (dense, sparse, FFT) has G formed column by column
 * as Mᵀ(M e_j) with the engine's own factor products, then factored here.
 */
export function zhangMassFactor(bound: BoundRelaxation): { kind: 'lower' | 'upper'; T: Float64Array } {
  const f = bound.data.factor;
  const { n, m } = f;
  if (f.kind === 'dense' && n === m) {
    let lower = true;
    for (let i = 0; i < n && lower; i++) for (let j = i + 1; j < m; j++) if (f.values[i * m + j] !== 0) { lower = false; break; }
    if (lower) {
      for (let i = 0; i < n; i++) if (!(f.values[i * m + i] !== 0)) throw new ModelError('zhang parametrisation: the triangular factor M is singular');
      return { kind: 'upper', T: f.values.slice() };
    }
  }
  if (m > n) throw new ModelError(`zhang parametrisation: M has more columns (m = ${m}) than rows (n = ${n}), so MᵀM is singular; use 'whitened' with this factor`);
  if (m > ZHANG_DENSE_LIMIT) throw new ModelError(`zhang parametrisation: MᵀM would be ${m}×${m} (limit ${ZHANG_DENSE_LIMIT}); use 'whitened', or a dense Cholesky factor`);
  const G = new Float64Array(m * m);
  const a = bound.engine.arena();
  try {
    const e = a.allocF64(m), u = a.allocF64(n), g = a.allocF64(m);
    for (let j = 0; j < m; j++) {
      const ev = a.f64(e, m);
      ev.fill(0);
      ev[j] = 1;
      bound.engine.call('factor product', (k) => {
        k.factorMul(bound.factor, e, u);
        k.factorMulT(bound.factor, u, g);
      });
      G.set(a.f64(g, m), j * m);
    }
  } finally {
    a.dispose();
  }
  // Symmetrise the rounding.
  for (let i = 0; i < m; i++) for (let j = 0; j < i; j++) G[i * m + j] = G[j * m + i] = 0.5 * (G[i * m + j] + G[j * m + i]);
  const T = choleskyLower(G, m);
  if (!T) throw new ModelError('zhang parametrisation: MᵀM is not positive definite (M does not have full column rank)');
  return { kind: 'lower', T };
}

const INFO_WORDS = 8;

/**
 * The chains of one continuous sampler on one target. Each chain's memory lives in its own arena
 * (released with release(state) or dispose()).
 */
export class ContinuousSampler {
  readonly m: number;
  /** Bits of the canonical form (0 for a Gaussian target). */
  readonly n: number;
  readonly form: CanonicalForm | null;
  readonly integrator: readonly number[];
  readonly steps: number;
  readonly parametrisation: Parametrisation;
  private readonly arena: Arena;
  private readonly bound: BoundRelaxation | null;
  private readonly targetPtr: number;
  private readonly massKind: number;
  private readonly massT: number;
  private readonly diagInverse: Float64Array | null;
  private readonly coef: number;
  private readonly pairCodes: Int32Array;
  private readonly pairPtr: number;
  private readonly traceCodes: Int32Array;
  private readonly traceCodesPtr: number;
  private readonly traceCapacity: number;
  private readonly thin: number;
  private readonly empirical: boolean;
  private readonly states = new Set<ContinuousState>();
  private disposed = false;
  /** Work per gradient evaluation, in multiply-adds (for sizing WASM calls). */
  readonly gradientCost: number;

  constructor(readonly engine: Engine, target: ContinuousTarget, readonly move: MoveKind, opts: ContinuousSamplerOptions = {}) {
    this.parametrisation = opts.parametrisation ?? 'whitened';
    if (this.parametrisation !== 'whitened' && this.parametrisation !== 'zhang') {
      throw new ModelError(`unknown parametrisation "${String(this.parametrisation)}"; expected 'whitened' or 'zhang'`);
    }
    const integ = opts.integrator ?? 'leapfrog';
    const table = typeof integ === 'string' ? INTEGRATORS[integ] : integ;
    if (!table) throw new ModelError(`unknown integrator "${String(integ)}"; expected ${Object.keys(INTEGRATORS).join(', ')} or a coefficient table`);
    checkIntegrator(table);
    // Langevin moves use one velocity-Verlet step for the initial step-size heuristic only.
    this.integrator = move === 'hmc' ? table.slice() : INTEGRATORS.leapfrog.slice();
    this.steps = move === 'hmc' ? opts.leapfrogSteps ?? 5 : 1;
    if (!Number.isInteger(this.steps) || this.steps < 1) throw new ModelError(`leapfrogSteps must be an integer ≥ 1, got ${opts.leapfrogSteps}`);

    let bound: BoundRelaxation | null = null;
    let arena: Arena;
    let m: number, n: number;
    let targetPtr: number;
    const k = engine.kernels;
    if ('kind' in target && target.kind === 'gaussian') {
      m = target.mean.length;
      n = 0;
      if (target.precision.length !== m * m) throw new ModelError(`gaussian target: precision has ${target.precision.length} entries, expected ${m * m}`);
      if (this.parametrisation === 'zhang') throw new ModelError("the 'zhang' parametrisation needs a relaxation (a factor M)");
      arena = engine.arena();
      const mean = arena.allocF64(target.mean), prec = arena.allocF64(target.precision), tmp = arena.allocF64(m);
      targetPtr = arena.alloc(k.gaussBytes());
      k.gaussInit(targetPtr, m, mean, prec, tmp);
      this.form = null;
    } else {
      const data = target as RelaxationData;
      bound = new BoundRelaxation(engine, data);
      arena = bound.arena;
      m = bound.m;
      n = bound.n;
      targetPtr = bound.relaxed;
      this.form = data.form;
    }
    this.bound = bound;
    this.arena = arena;
    this.m = m;
    this.n = n;
    this.targetPtr = targetPtr;
    try {
      // Mass matrix.
      let massKind = MASS_DIAG, massT = 0, diagInverse: Float64Array | null = null;
      if (this.parametrisation === 'zhang') {
        if (opts.mass) throw new ModelError("an explicit mass matrix cannot be combined with the 'zhang' parametrisation (which is one)");
        const z = zhangMassFactor(bound!);
        massKind = z.kind === 'upper' ? MASS_DENSE_UPPER : MASS_DENSE_LOWER;
        massT = arena.allocF64(z.T);
      } else if (opts.mass?.kind === 'dense') {
        const G = Float64Array.from(opts.mass.matrix);
        if (G.length !== m * m) throw new ModelError(`dense mass matrix has ${G.length} entries, expected ${m * m}`);
        const T = choleskyLower(G, m);
        if (!T) throw new ModelError('dense mass matrix is not symmetric positive definite');
        massKind = MASS_DENSE_LOWER;
        massT = arena.allocF64(T);
      } else if (opts.mass?.kind === 'diag') {
        diagInverse = Float64Array.from(opts.mass.inverse);
        if (diagInverse.length !== m || !diagInverse.every((v) => v > 0 && Number.isFinite(v))) throw new ModelError(`diagonal inverse mass must be ${m} positive finite numbers`);
      }
      this.massKind = massKind;
      this.massT = massT;
      this.diagInverse = diagInverse;
      this.coef = arena.allocF64(this.integrator);

      this.pairCodes = opts.pairCodes ?? new Int32Array(0);
      if (this.pairCodes.length % 2) throw new ModelError('pairCodes must hold two codes per pair');
      for (const c of this.pairCodes) if (!Number.isInteger(c) || c >= n || -c - 1 >= n) throw new ModelError(`pair code ${c} out of range for ${n} bits`);
      this.pairPtr = this.pairCodes.length ? arena.allocI32(this.pairCodes) : 0;
      this.traceCodes = opts.traceCodes ?? new Int32Array(0);
      for (const c of this.traceCodes) if (!Number.isInteger(c) || c >= n || -c - 2 >= m) throw new ModelError(`trace code ${c} out of range`);
      this.traceCodesPtr = this.traceCodes.length ? arena.allocI32(this.traceCodes) : 0;
      this.traceCapacity = this.traceCodes.length ? Math.max(0, Math.floor(opts.traceCapacity ?? 0)) : 0;
      this.thin = Math.max(1, Math.floor(opts.thin ?? 1));
      this.empirical = (opts.empirical ?? false) && n > 0;

      const fd = bound?.data.factor;
      const factorWork = !fd ? m * m : fd.kind === 'dense' ? n * m : fd.kind === 'sparse' ? fd.values.length : 10 * n * Math.log2(n + 1);
      this.gradientCost = 2 * factorWork + 8 * (n + m) + (massKind === MASS_DIAG ? 0 : 2 * m * m);
    } catch (e) {
      arena.dispose();
      throw e;
    }
  }

  private live(): void {
    if (this.disposed) throw new EngineError('use after dispose(): this sampler has released its engine memory');
  }

  private liveState(state: ContinuousState): void {
    this.live();
    if (!this.states.has(state)) throw new EngineError('this chain state was released or belongs to another sampler');
  }

  /** Number of pair-product accumulators (entries of pairCodes / 2). */
  get pairEntries(): number {
    return this.pairCodes.length / 2;
  }

  /** Gradient evaluations per transition. */
  get gradientsPerIteration(): number {
    return this.move === 'hmc' ? this.steps * ((this.integrator.length - 1) / 2) : 1;
  }

  /**
   * A chain: its own streams (seed, chain), a start x0 (default: s uniform, x ~ p(x|s)), and a first
   * step size (default: Hoffman & Gelman's heuristic from 1).
   */
  init(seed: number, chain: number, opts: { x0?: ArrayLike<number>; stepSize?: number } = {}): ContinuousState {
    this.live();
    if (!Number.isInteger(chain) || chain < 0 || chain > 0xffffffff) throw new ModelError(`chain must be an integer in [0, 2^32), got ${chain}`);
    const [lo, hi] = seedWords(seed);
    const k = this.engine.kernels;
    const arena = this.engine.arena();
    try {
      const ptr = arena.alloc(k.chainBytes());
      const work = arena.alloc(k.chainWorkBytes(this.m, this.n));
      const info = arena.allocF64(INFO_WORDS);
      const n = this.n;
      const acc = n ? arena.allocF64(n) : 0;
      const accEmp = this.empirical ? arena.allocF64(n) : 0;
      const accPair = this.pairEntries ? arena.allocF64(this.pairEntries) : 0;
      const nTrace = this.traceCodes.length;
      const traceCap = this.traceCapacity;
      const traceBuf = nTrace && traceCap ? arena.allocF64(nTrace * traceCap) : 0;
      const [tag, tagS] = STREAMS[this.move];
      this.engine.call('continuous chain init', (kk) => {
        kk.chainSetup(ptr, this.bound ? TARGET_RELAXED : TARGET_GAUSS, this.targetPtr, this.m, n, work);
        kk.chainSeed(ptr, lo, hi, chain >>> 0, tag, tagS);
        kk.chainSetMass(ptr, this.massKind, this.massT);
        kk.chainSetIntegrator(ptr, (this.integrator.length - 1) / 2, this.coef, this.steps);
        kk.chainSetOutputs(ptr, acc, accEmp, this.pairEntries, this.pairPtr, accPair, nTrace, this.traceCodesPtr, traceBuf, traceCap, this.thin);
      });
      if (this.diagInverse) arena.f64(k.chainInverseMass(ptr), this.m).set(this.diagInverse);
      let src = 0;
      if (opts.x0) {
        if (opts.x0.length !== this.m) throw new ModelError(`x0 has ${opts.x0.length} entries, expected ${this.m}`);
        src = arena.allocF64(opts.x0);
      }
      const lp = this.engine.call('continuous chain start', (kk) => kk.chainSetPosition(ptr, src));
      if (!Number.isFinite(lp)) throw new EngineError(`log p(x) is ${lp} at the starting point`);
      if (opts.stepSize !== undefined) {
        checkStepSize(opts.stepSize);
        k.chainSetStepSize(ptr, opts.stepSize);
      } else {
        this.engine.call('initial step size', (kk) => kk.hmcFindStepSize(ptr, 1.0));
      }
      const state: ContinuousState = { ptr, chain, arena, buffers: { info, acc, accEmp, accPair, traceBuf, traceCap, nTrace } };
      this.states.add(state);
      return state;
    } catch (e) {
      arena.dispose();
      throw e;
    }
  }

  /** Raw moves with kernel flags; `adjusted` (Langevin only) overrides the sampler's MALA/ULA choice. */
  protected moves(state: ContinuousState, iterations: number, flags: number, adjusted?: boolean): ContinuousInfo {
    this.liveState(state);
    if (!Number.isInteger(iterations) || iterations < 0) throw new ModelError(`iterations must be an integer ≥ 0, got ${iterations}`);
    const what = `${this.move} step`;
    if (this.move === 'hmc') this.engine.call(what, (k) => k.hmcStep(state.ptr, iterations, flags));
    else {
      const adj = adjusted ?? this.move === 'mala';
      this.engine.call(what, (k) => k.langevinStep(state.ptr, iterations, flags, adj ? 1 : 0));
    }
    return this.info(state);
  }

  private info(state: ContinuousState): ContinuousInfo {
    const k = this.engine.kernels;
    k.chainInfo(state.ptr, state.buffers.info);
    const [iters, acc, accepted, div, eSum, eMax, grads, eps] = state.arena.readF64(state.buffers.info, INFO_WORDS);
    const ok = iters - div;
    return {
      iterations: iters,
      acceptRate: iters ? acc / iters : NaN,
      acceptedFraction: iters ? accepted / iters : NaN,
      stepSize: eps,
      divergences: div,
      energyError: ok > 0 ? eSum / ok : NaN,
      maxAbsEnergyError: eMax,
      gradientEvaluations: grads,
    };
  }

  /**
   * Sampling transitions at the current step size and mass matrix. With `accumulate`, π (and the
   * pair products, empirical draws) are added into the chain's accumulators; with `trace`, the traced
   * quantities are recorded.
   */
  step(state: ContinuousState, iterations: number, opts: { accumulate?: boolean; trace?: boolean } = {}): ContinuousInfo {
    return this.moves(state, iterations, (opts.accumulate ? STEP_ACCUMULATE : 0) | (opts.trace ? STEP_TRACE : 0));
  }

  /**
   * Warm-up: dual averaging of ε towards targetAccept (unless stepSize is fixed) and, with adaptMass,
   * a diagonal mass matrix from the windowed variance of x (Stan's schedule: after each slow window
   * the inverse mass becomes the regularised window variance, ε is re-initialised by the heuristic
   * and dual averaging restarts). At the end ε is fixed at the dual-averaging average.
   */
  warmup(state: ContinuousState, iterations: number, opts: WarmupOptions): ContinuousInfo & { stopped: boolean } {
    this.liveState(state);
    const k = this.engine.kernels;
    const adaptStep = opts.stepSize === undefined;
    if (!adaptStep) {
      checkStepSize(opts.stepSize!);
      k.chainSetStepSize(state.ptr, opts.stepSize!);
    }
    const adaptMass = opts.adaptMass ?? false;
    if (adaptMass && this.massKind !== MASS_DIAG) throw new ModelError('mass matrix adaptation is diagonal: not available with a dense mass matrix (zhang parametrisation)');
    const target = opts.targetAccept;
    if (!(target > 0 && target < 1)) throw new ModelError(`targetAccept must be in (0, 1), got ${target}`);
    if (adaptStep) k.chainDaRestart(state.ptr, target);
    const total: ContinuousInfo = { iterations: 0, acceptRate: 0, acceptedFraction: 0, stepSize: NaN, divergences: 0, energyError: 0, maxAbsEnergyError: 0, gradientEvaluations: 0 };
    let accSum = 0, accepted = 0, eSum = 0, eCount = 0;
    const chunk = this.chunkSize();
    // ULA adapts its step as MALA would (the unadjusted chain has no acceptance to steer by).
    const adjusted = this.move === 'ula' ? adaptStep : undefined;
    let stopped = false;
    outer: for (const phase of warmupSchedule(iterations, adaptMass)) {
      const flags = (adaptStep ? STEP_ADAPT : 0) | (phase.slow ? STEP_WELFORD : 0);
      for (let left = phase.iterations; left > 0; ) {
        const len = Math.min(chunk, left);
        const info = this.moves(state, len, flags, adjusted);
        left -= len;
        total.iterations += info.iterations;
        accSum += info.acceptRate * info.iterations;
        accepted += info.acceptedFraction * info.iterations;
        total.divergences += info.divergences;
        total.gradientEvaluations += info.gradientEvaluations;
        const ok = info.iterations - info.divergences;
        if (ok > 0) {
          eSum += info.energyError * ok;
          eCount += ok;
        }
        total.maxAbsEnergyError = Math.max(total.maxAbsEnergyError, info.maxAbsEnergyError);
        if (opts.onChunk && opts.onChunk(total.iterations) === false) {
          stopped = true;
          break outer;
        }
      }
      if (phase.slow) {
        k.chainUpdateMass(state.ptr);
        if (adaptStep) {
          k.chainDaFinal(state.ptr);
          this.engine.call('step size heuristic', (kk) => kk.hmcFindStepSize(state.ptr, kk.chainStepSize(state.ptr)));
          k.chainDaRestart(state.ptr, target);
        }
      }
    }
    if (adaptStep) k.chainDaFinal(state.ptr);
    total.acceptRate = total.iterations ? accSum / total.iterations : NaN;
    total.acceptedFraction = total.iterations ? accepted / total.iterations : NaN;
    total.energyError = eCount ? eSum / eCount : NaN;
    total.stepSize = k.chainStepSize(state.ptr);
    return { ...total, stopped };
  }

  /** Iterations per WASM call, keeping each call near 4·10⁷ multiply-adds. */
  chunkSize(): number {
    return Math.max(1, Math.floor(4e7 / Math.max(1, this.gradientCost * this.gradientsPerIteration)));
  }

  /** Copies out and zeroes the chain's accumulators: Σπ (per bit), Σ sampled s (or null), Σ pair products. */
  readAndClear(state: ContinuousState): { prob: Float64Array; empirical: Float64Array | null; pairs: Float64Array } {
    this.liveState(state);
    const { acc, accEmp, accPair } = state.buffers;
    const a = state.arena;
    const take = (p: number, len: number) => {
      if (!p || !len) return new Float64Array(len);
      const v = a.f64(p, len);
      const out = v.slice();
      v.fill(0);
      return out;
    };
    return { prob: take(acc, this.n), empirical: accEmp ? take(accEmp, this.n) : null, pairs: take(accPair, this.pairEntries) };
  }

  /** The recorded trace: one array per traced code (rows recorded since the last resetTrace). */
  trace(state: ContinuousState): Float64Array[] {
    this.liveState(state);
    const len = this.engine.kernels.chainTraceLen(state.ptr);
    const { traceBuf, nTrace } = state.buffers;
    if (!traceBuf || !len) return Array.from({ length: nTrace }, () => new Float64Array(0));
    const rows = state.arena.readF64(traceBuf, len * nTrace);
    return Array.from({ length: nTrace }, (_, q) => Float64Array.from({ length: len }, (_, t) => rows[t * nTrace + q]));
  }

  resetTrace(state: ContinuousState): void {
    this.liveState(state);
    this.engine.kernels.chainResetTrace(state.ptr);
  }

  position(state: ContinuousState): Float64Array {
    this.liveState(state);
    return state.arena.readF64(this.engine.kernels.chainPosition(state.ptr), this.m);
  }

  /** π = p(s_i = 1 | x) at the chain's current x. */
  conditional(state: ContinuousState): Float64Array {
    this.liveState(state);
    return state.arena.readF64(this.engine.kernels.chainProb(state.ptr), this.n);
  }

  logDensity(state: ContinuousState): number {
    this.liveState(state);
    return this.engine.kernels.chainLogp(state.ptr);
  }

  stepSize(state: ContinuousState): number {
    this.liveState(state);
    return this.engine.kernels.chainStepSize(state.ptr);
  }

  setStepSize(state: ContinuousState, eps: number): void {
    this.liveState(state);
    checkStepSize(eps);
    this.engine.kernels.chainSetStepSize(state.ptr, eps);
  }

  /** The diagonal inverse mass (null with a dense mass matrix). */
  inverseMass(state: ContinuousState): Float64Array | null {
    this.liveState(state);
    if (this.massKind !== MASS_DIAG) return null;
    return state.arena.readF64(this.engine.kernels.chainInverseMass(state.ptr), this.m);
  }

  /**
   * log p(x) and ∇ log p(x) of the target (a diagnostic; does not touch the chain's position). Like
   * integrate() and kinetic(), allocates scratch in the chain's arena until release(): not for hot loops.
   */
  density(state: ContinuousState, x: ArrayLike<number>): { logp: number; grad: Float64Array } {
    this.liveState(state);
    if (x.length !== this.m) throw new ModelError(`x has ${x.length} entries, expected ${this.m}`);
    const a = state.arena;
    const xp = a.allocF64(x), gp = a.allocF64(this.m);
    const logp = this.engine.call('density', (k) => k.chainDensity(state.ptr, xp, gp));
    return { logp, grad: a.readF64(gp, this.m) };
  }

  /** Integrates (x, p) for `steps` steps of size eps with the sampler's integrator and mass (a diagnostic). */
  integrate(state: ContinuousState, x: ArrayLike<number>, p: ArrayLike<number>, steps: number, eps: number): { x: Float64Array; p: Float64Array; logp: number } {
    this.liveState(state);
    const a = state.arena;
    const xp = a.allocF64(x), pp = a.allocF64(p);
    const logp = this.engine.call('integrate', (k) => k.hmcIntegrate(state.ptr, xp, pp, steps, eps));
    return { x: a.readF64(xp, this.m), p: a.readF64(pp, this.m), logp };
  }

  /** ½ pᵀ G⁻¹ p with the sampler's mass matrix. */
  kinetic(state: ContinuousState, p: ArrayLike<number>): number {
    this.liveState(state);
    const pp = state.arena.allocF64(p);
    return this.engine.kernels.chainKinetic(state.ptr, pp);
  }

  /** Frees a chain's memory. */
  release(state: ContinuousState): void {
    if (this.states.delete(state)) state.arena.dispose();
  }

  dispose(): void {
    if (this.disposed) return;
    for (const s of this.states) s.arena.dispose();
    this.states.clear();
    this.arena.dispose();
    this.disposed = true;
  }
}

function checkStepSize(eps: number): void {
  if (!(eps > 0) || !Number.isFinite(eps)) throw new ModelError(`stepSize must be a finite number > 0, got ${eps}`);
}

/** HMC on p(x): ContinuousSampler with the HMC move. */
export class DHMCSampler extends ContinuousSampler {
  constructor(engine: Engine, target: ContinuousTarget, opts: ContinuousSamplerOptions = {}) {
    super(engine, target, 'hmc', opts);
  }
}

// ---------------------------------------------------------------------------------------------
// Runs: chains, warm-up, batches, estimators and diagnostics.

export interface ContinuousRunOptions {
  seed?: number;
  chains?: number;
  /** Transitions per chain that are kept. */
  samples?: number;
  /** Warm-up transitions per chain (adaptation; discarded). */
  burnin?: number;
  /** Batches per chain for the batch-means standard errors. */
  batches?: number;
  /** Dual averaging target of the mean acceptance statistic. */
  targetAccept?: number;
  /** Fixed step size (no dual averaging). */
  stepSize?: number;
  /** Adapt a diagonal mass matrix during warm-up (Stan's windows). Default false. */
  adaptMass?: boolean;
  parametrisation?: Parametrisation;
  /** User-variable pairs (u ≠ v) whose pairwise marginals to estimate (Rao–Blackwellised). */
  pairs?: readonly (readonly [number, number])[];
  /** Also estimate marginals from draws s ~ p(s|x) (for comparison). Default true. */
  empirical?: boolean;
  /**
   * Variables whose RB marginals are traced for ESS and R̂: 'auto' (all, or an evenly spaced subset
   * of at most 256 bits), 'none', or a list. log p(x) is always traced.
   */
  trace?: 'auto' | 'none' | readonly number[];
  /** Trace entries per chain (f64); the trace is thinned to fit. Default 2²¹ (16 MB). */
  traceBudget?: number;
  onProgress?: (p: Progress) => void;
  signal?: AbortSignal;
}

export interface DHMCOptions extends ContinuousRunOptions {
  /** Integrator steps per trajectory. Default 5. */
  leapfrogSteps?: number;
  integrator?: IntegratorName | readonly number[];
}

export const DHMC_DEFAULTS = {
  seed: 1, chains: 4, samples: 2000, burnin: 500, batches: 20, leapfrogSteps: 5, targetAccept: 0.9,
  adaptMass: false, parametrisation: 'whitened', empirical: true, integrator: 'leapfrog', trace: 'auto', traceBudget: 2 ** 21,
} as const;

export interface PairMarginals {
  pairs: [number, number][];
  /** tables[t][k·K_v + l] = p(x_u = k, x_v = l). */
  tables: Float64Array[];
  stdErr: Float64Array[];
}

export interface ContinuousResult extends InferenceResult {
  /** Rao–Blackwellised pairwise marginals of the requested pairs, with batch-means errors. */
  pairMarginals: PairMarginals | null;
  /** Marginals from draws s ~ p(s|x), with batch-means errors (null when not requested). */
  empiricalMarginals: Float64Array[] | null;
  empiricalStdErr: Float64Array[] | null;
  /** Per user variable: bulk/tail ESS of its RB marginal (min over both and its states; NaN when not traced or constant). */
  ess: Float64Array;
  /** Per user variable: rank-normalised split-R̂ (max over its states; NaN when not traced or constant). */
  rhat: Float64Array;
  /** Variables traced for ESS and R̂. */
  traced: Int32Array;
}

export interface RunSpec {
  move: MoveKind;
  method: string;
  defaults: { targetAccept: number };
  leapfrogSteps?: number;
  integrator?: IntegratorName | readonly number[];
  /** ULA: report that the estimates are biased. */
  biased?: boolean;
}

/** Bit code of the event x_v = k (see pairCodes). */
function stateCode(form: CanonicalForm, v: number, k: number): number {
  const b = form.blockStart[v];
  if (form.oneHot[v]) return b + k;
  return k === 1 ? b : -(b + 1);
}



function median(xs: number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  const k = s.length;
  return k % 2 ? s[(k - 1) / 2] : 0.5 * (s[k / 2 - 1] + s[k / 2]);
}

/**
 * What one chain of a continuous run produced, in order. Warm-up adapts each chain on its own (dual
 * averaging and the mass matrix use only that chain's draws; the reported step size is the median
 * of the chains' final ones, taken at the end), so a chain's events do not depend on the other
 * chains: feeding every chain's events, chain by chain, to a ContinuousReducer gives the same bits
 * whether the chains ran here one after another or in workers (runParallel).
 */
export type ContinuousEvent =
  | { kind: 'warmup'; iterations: number; divergences: number; gradientEvaluations: number; stopped: boolean }
  | { kind: 'stepSize'; value: number }
  | { kind: 'step'; iterations: number; acceptRate: number; acceptedFraction: number; divergences: number; gradientEvaluations: number; energyError: number; maxAbsEnergyError: number }
  | { kind: 'batch'; prob: Float64Array; empirical: Float64Array | null; pairs: Float64Array; length: number }
  /** The traced quantities of a chain that completed every batch. */
  | { kind: 'trace'; series: Float64Array[] };

/** A continuous run's options with defaults, validated, and what follows from them and the model's form. */
export interface ContinuousPlan {
  spec: RunSpec;
  opts: ContinuousRunOptions;
  seed: number;
  chains: number;
  samples: number;
  burnin: number;
  nBatches: number;
  targetAccept: number;
  adaptMass: boolean;
  parametrisation: Parametrisation;
  empirical: boolean;
  pairs: [number, number][];
  pairCodes: Int32Array;
  pairOffsets: number[];
  traced: number[];
  traceCodes: Int32Array;
  traceOwner: number[];
  thin: number;
  traceCapacity: number;
}

export function continuousPlan(form: CanonicalForm, opts: ContinuousRunOptions, spec: RunSpec): ContinuousPlan {
  const o = { ...DHMC_DEFAULTS, ...spec.defaults, ...definedOnly(opts) };
  const { seed, chains, samples, burnin, batches, targetAccept, adaptMass, parametrisation, empirical, traceBudget } = o;
  checkCount('chains', chains, 1);
  checkCount('samples', samples, 1);
  checkCount('burnin', burnin, 0);
  checkCount('batches', batches, 1);
  checkCount('traceBudget', traceBudget, 1);
  seedWords(seed);
  if (!(targetAccept > 0 && targetAccept < 1)) throw new ModelError(`targetAccept must be in (0, 1), got ${targetAccept}`);
  if (opts.stepSize !== undefined) checkStepSize(opts.stepSize);

  // Pairs → bit codes.
  const pairs: [number, number][] = [];
  const pairCodes: number[] = [];
  const pairOffsets: number[] = [];
  for (const pr of opts.pairs ?? []) {
    const [u, v] = pr;
    for (const w of [u, v]) if (!Number.isInteger(w) || w < 0 || w >= form.n) throw new ModelError(`pair (${u}, ${v}): variable out of range 0…${form.n - 1}`);
    if (u === v) throw new ModelError(`pair (${u}, ${v}): a pair needs two different variables`);
    pairs.push([u, v]);
    pairOffsets.push(pairCodes.length / 2);
    for (let k = 0; k < form.card[u]; k++) for (let l = 0; l < form.card[v]; l++) pairCodes.push(stateCode(form, u, k), stateCode(form, v, l));
  }

  // Traced variables → codes (every bit of each traced variable), then log p.
  let traced: number[];
  const tr = o.trace;
  if (tr === 'none') traced = [];
  else if (tr === 'auto') {
    const maxBits = 256;
    if (form.nBits <= maxBits) traced = Array.from({ length: form.n }, (_, v) => v);
    else {
      const avgBits = form.nBits / form.n;
      const count = Math.max(1, Math.floor(maxBits / avgBits));
      const set = new Set<number>();
      for (let i = 0; i < count; i++) set.add(Math.floor((i * form.n) / count));
      traced = [...set];
    }
  } else {
    traced = [...tr];
    for (const v of traced) if (!Number.isInteger(v) || v < 0 || v >= form.n) throw new ModelError(`trace: variable ${v} out of range 0…${form.n - 1}`);
  }
  const traceCodes: number[] = [];
  const traceOwner: number[] = [];
  for (const v of traced) {
    const b = form.blockStart[v], e = form.blockStart[v + 1];
    for (let q = b; q < e; q++) {
      traceCodes.push(q);
      traceOwner.push(v);
    }
  }
  traceCodes.push(-1);
  traceOwner.push(-1);
  const thin = Math.max(1, Math.ceil((traceCodes.length * samples) / traceBudget));
  const traceCapacity = Math.ceil(samples / thin);
  return {
    spec, opts, seed, chains, samples, burnin, nBatches: Math.min(batches, samples), targetAccept, adaptMass, parametrisation, empirical,
    pairs, pairCodes: Int32Array.from(pairCodes), pairOffsets, traced, traceCodes: Int32Array.from(traceCodes), traceOwner, thin, traceCapacity,
  };
}

/** The sampler a plan runs on (one per host: each worker builds its own on its own engine). */
export function continuousSampler(engine: Engine, relaxation: RelaxationData, plan: ContinuousPlan): ContinuousSampler {
  return new ContinuousSampler(engine, relaxation, plan.spec.move, {
    parametrisation: plan.parametrisation,
    integrator: plan.spec.integrator,
    leapfrogSteps: plan.spec.leapfrogSteps,
    pairCodes: plan.pairCodes,
    empirical: plan.empirical,
    traceCodes: plan.traceCodes,
    traceCapacity: plan.traceCapacity,
    thin: plan.thin,
  });
}

/**
 * Runs the given chains of a plan (all of them in runContinuous, a worker's share in runParallel),
 * reporting each chain's events as they happen; `onProgress(k)`: k more transitions done. Returns
 * false when the signal stopped it (an unfinished batch is dropped with its chain).
 */
export function continuousChains(sampler: ContinuousSampler, plan: ContinuousPlan, chains: Iterable<number>, emit: (chain: number, e: ContinuousEvent) => void, signal?: AbortSignal, onProgress?: (warmup: boolean, k: number) => void): boolean {
  const abort = () => signal?.aborted ?? false;
  const chunk = sampler.chunkSize();
  for (const c of chains) {
    if (abort()) return false;
    const state = sampler.init(plan.seed, c);
    try {
      let reported = 0;
      const wu = sampler.warmup(state, plan.burnin, {
        targetAccept: plan.targetAccept,
        adaptMass: plan.adaptMass,
        stepSize: plan.opts.stepSize,
        onChunk: (k) => {
          onProgress?.(true, k - reported);
          reported = k;
          return !abort();
        },
      });
      emit(c, { kind: 'warmup', iterations: wu.iterations, divergences: wu.divergences, gradientEvaluations: wu.gradientEvaluations, stopped: wu.stopped });
      if (wu.stopped) return false;
      emit(c, { kind: 'stepSize', value: sampler.stepSize(state) });
      sampler.resetTrace(state);
      for (const len of splitEvenly(plan.samples, plan.nBatches)) {
        for (let left = len; left > 0; ) {
          if (abort()) return false;
          const it = Math.min(chunk, left);
          const info = sampler.step(state, it, { accumulate: true, trace: true });
          left -= it;
          emit(c, { kind: 'step', ...info });
          onProgress?.(false, it);
        }
        const sums = sampler.readAndClear(state);
        emit(c, { kind: 'batch', prob: sums.prob, empirical: sums.empirical, pairs: sums.pairs, length: len });
      }
      emit(c, { kind: 'trace', series: sampler.trace(state) });
    } finally {
      sampler.release(state);
    }
  }
  return true;
}

/** Folds chain events (chain by chain, in order) into the estimates and diagnostics of a run. */
export class ContinuousReducer {
  readonly stats: BatchMeans;
  readonly empStats: BatchMeans | null;
  readonly pairStats: BatchMeans;
  readonly traces: Float64Array[][];
  readonly stepSizes: number[] = [];
  accSum = 0;
  acceptedSum = 0;
  iterSum = 0;
  divergences = 0;
  warmDivergences = 0;
  grads = 0;
  eSum = 0;
  eCount = 0;
  eMax = 0;

  constructor(readonly form: CanonicalForm, readonly plan: ContinuousPlan) {
    this.stats = new BatchMeans(form.nBits);
    this.empStats = plan.empirical ? new BatchMeans(form.nBits) : null;
    this.pairStats = new BatchMeans(plan.pairCodes.length / 2);
    this.traces = Array.from(plan.traceCodes, () => []);
  }

  /** Adds an event of chain `chain` (chains one after another, each chain's events in order). */
  add(e: ContinuousEvent, chain: number): void {
    switch (e.kind) {
      case 'warmup':
        this.warmDivergences += e.divergences;
        this.grads += e.gradientEvaluations;
        break;
      case 'stepSize':
        this.stepSizes.push(e.value);
        break;
      case 'step': {
        this.iterSum += e.iterations;
        this.accSum += e.acceptRate * e.iterations;
        this.acceptedSum += e.acceptedFraction * e.iterations;
        this.divergences += e.divergences;
        this.grads += e.gradientEvaluations;
        const ok = e.iterations - e.divergences;
        if (ok > 0) {
          this.eSum += e.energyError * ok;
          this.eCount += ok;
        }
        this.eMax = Math.max(this.eMax, e.maxAbsEnergyError);
        break;
      }
      case 'batch':
        this.stats.addBatch(e.prob, e.length, chain);
        this.empStats?.addBatch(e.empirical!, e.length, chain);
        this.pairStats.addBatch(e.pairs, e.length, chain);
        break;
      case 'trace':
        e.series.forEach((series, q) => this.traces[q].push(series));
        break;
    }
  }

  /** The run's result; `samplingSeconds`: time spent sampling (for the gradient rate). */
  result(seconds: number, samplingSeconds: number, partial: boolean, extra: InferenceResult['diagnostics'] = {}): ContinuousResult {
    const { form, plan, stats, empStats, pairStats, traces } = this;
    const { spec, traced, traceOwner, pairs, pairOffsets } = plan;
    if (stats.batches === 0) throw new EngineError(`${spec.method} was cancelled before the first batch completed: no estimate`);
    const toUser = (bits: Float64Array) => bitsToMarginals(form, bits);
    const seToUser = (se: Float64Array) => bitsToMarginals(form, se).map((row, v) => (form.oneHot[v] ? row : Float64Array.of(row[1], row[1])));
    const se = stats.stdErr();
    let maxSE = 0;
    for (const x of se) maxSE = Math.max(maxSE, x);

    // Pairwise tables.
    let pairMarginals: PairMarginals | null = null;
    if (pairs.length) {
      const mean = pairStats.mean(), pse = pairStats.stdErr();
      pairMarginals = {
        pairs,
        tables: pairs.map(([u, v], t) => mean.slice(pairOffsets[t], pairOffsets[t] + form.card[u] * form.card[v])),
        stdErr: pairs.map(([u, v], t) => pse.slice(pairOffsets[t], pairOffsets[t] + form.card[u] * form.card[v])),
      };
    }

    // ESS and R̂ from the traces (chains that completed every batch): per variable by
    // convergence.ts (bulk/tail ESS, rank-normalised R̂), and of log p(x) by summarizeTraces.
    let conv = seriesDiagnostics([], [], form.n, 'draws');
    let essLogp: number | null = null, rhatLogp: number | null = null;
    if (traces[0].length > 0) {
      conv = seriesDiagnostics(traces, traceOwner, form.n, 'draws');
      const q = traceOwner.indexOf(-1);
      const lp = summarizeTraces([traces[q]]);
      essLogp = finiteOrNull(lp.ess[0]);
      rhatLogp = finiteOrNull(lp.rhat[0]);
    }
    const { ess, rhat, essMedian, essMin, rhatMax } = conv;
    const { iterSum, accSum, acceptedSum, stepSizes, eSum, eCount, grads } = this;
    const leapfrogSteps = spec.leapfrogSteps ?? 5;
    const warnings = [
      ...convergenceWarnings(conv, { chains: traces[0].length, seriesLength: plan.traceCapacity, unit: 'draws', variables: traceOwner.length - 1 }),
      ...adaptationWarnings({
        adapted: plan.opts.stepSize === undefined, targetAccept: plan.targetAccept, acceptRate: iterSum ? accSum / iterSum : null,
        stepSizes, divergences: this.divergences, transitions: iterSum, biased: spec.biased ?? false,
      }),
    ];
    return {
      method: spec.method,
      logZ: null,
      logZStdErr: null,
      logZKind: null,
      marginals: toUser(stats.mean()),
      marginalStdErr: seToUser(se),
      pairMarginals,
      empiricalMarginals: empStats ? toUser(empStats.mean()) : null,
      empiricalStdErr: empStats ? seToUser(empStats.stdErr()) : null,
      ess,
      rhat,
      traced: Int32Array.from(traced),
      diagnostics: {
        chains: plan.chains,
        samplesPerChain: plan.samples,
        warmup: plan.burnin,
        batchesPerChain: plan.nBatches,
        parametrisation: plan.parametrisation,
        ...(spec.move === 'hmc' ? { leapfrogSteps, integrator: typeof spec.integrator === 'string' ? spec.integrator : spec.integrator ? 'custom' : 'leapfrog' } : {}),
        targetAccept: plan.opts.stepSize === undefined ? plan.targetAccept : null,
        adaptMass: plan.adaptMass,
        acceptRate: iterSum ? accSum / iterSum : null,
        acceptedFraction: iterSum ? acceptedSum / iterSum : null,
        stepSize: stepSizes.length ? median(stepSizes) : null,
        stepSizeMin: stepSizes.length ? Math.min(...stepSizes) : null,
        stepSizeMax: stepSizes.length ? Math.max(...stepSizes) : null,
        divergences: this.divergences,
        warmupDivergences: this.warmDivergences,
        energyErrorMean: eCount ? eSum / eCount : null,
        energyErrorMaxAbs: this.eMax,
        essMedian,
        essMin,
        rhatMax,
        essLogDensity: essLogp,
        rhatLogDensity: rhatLogp,
        tracedVariables: traced.length,
        traceThin: plan.thin,
        maxStdErr: Number.isFinite(maxSE) ? maxSE : null,
        gradientEvaluations: grads,
        gradientsPerSecond: grads / Math.max(1e-9, samplingSeconds),
        samplingSeconds,
        biased: spec.biased ?? false,
        seed: plan.seed,
        essUnit: 'draws',
        ...extra,
      },
      seconds,
      partial,
      warnings,
    };
  }
}

/** @internal The run driver shared by runDHMC, runMALA and runULA. */
export function runContinuous(engine: Engine, relaxation: RelaxationData, opts: ContinuousRunOptions, spec: RunSpec): ContinuousResult {
  const form = relaxation.form;
  const plan = continuousPlan(form, opts, spec);
  const t0 = performance.now();
  const sampler = continuousSampler(engine, relaxation, plan);
  try {
    const red = new ContinuousReducer(form, plan);
    const total = plan.chains * (plan.samples + plan.burnin);
    let done = 0;
    const finished = continuousChains(sampler, plan, range(plan.chains), (c, e) => red.add(e, c), opts.signal, (warmup, k) => {
      done += k;
      opts.onProgress?.({ phase: warmup ? `${spec.method}-warmup` : spec.method, done, total });
    });
    const samplingSeconds = (performance.now() - t0) / 1000;
    return red.result((performance.now() - t0) / 1000, samplingSeconds, !finished);
  } finally {
    sampler.dispose();
  }
}

function finiteOrNull(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}

/**
 * DHMC: HMC on the relaxation's p(x), Rao–Blackwellised marginals E[p(s|x)] with batch-means standard
 * errors, optional pairwise and empirical marginals, ESS/R̂ diagnostics. Method name 'dhmc'.
 */
export function runDHMC(engine: Engine, relaxation: RelaxationData, opts: DHMCOptions = {}): ContinuousResult {
  return runContinuous(engine, relaxation, opts, {
    move: 'hmc',
    method: 'dhmc',
    defaults: { targetAccept: DHMC_DEFAULTS.targetAccept },
    leapfrogSteps: opts.leapfrogSteps ?? DHMC_DEFAULTS.leapfrogSteps,
    integrator: opts.integrator ?? DHMC_DEFAULTS.integrator,
  });
}
