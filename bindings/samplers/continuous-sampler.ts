// The continuous samplers on a relaxation's p(x) (DESIGN.md §2) or a Gaussian test target: one class,
// ContinuousSampler, for the HMC, MALA and ULA moves (assembly/samplers/hmc.ts, langevin.ts). It owns
// chain memory, seeding and the warm-up schedule; the runs over many chains are in continuous-run.ts.
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


import type { Engine, Arena } from '../core/engine.ts';
import { BoundRelaxation, type RelaxationData } from '../relax/relaxation-bound.ts';
import type { CanonicalForm } from '../core/canonical.ts';
import { EngineError, ModelError } from '../core/errors.ts';
import { chainSeedWords } from '../core/seed.ts';
import { massCholesky, zhangMassFactor } from './zhang-mass.ts';
import { MAX_LOOP_COUNT } from '../core/options.ts';

export type MoveKind = 'hmc' | 'mala' | 'ula';

const STREAMS: Record<MoveKind, [number, number]> = { hmc: [4, 5], mala: [6, 7], ula: [8, 9] };

const TARGET_RELAXED = 0, TARGET_GAUSS = 1;
const MASS_DIAG = 0, MASS_DENSE_LOWER = 1, MASS_DENSE_UPPER = 2;
const STEP_ADAPT = 1, STEP_WELFORD = 2, STEP_ACCUMULATE = 4, STEP_TRACE = 8;


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
/** The named integrators (see INTEGRATORS). */
export type IntegratorName = keyof typeof INTEGRATORS;

/** A Gaussian target log p(x) = −½ (x − μ)ᵀ P (x − μ): a reference path for testing the samplers. */
export interface GaussianTarget {
  /** Tag of the Gaussian target. */
  kind: 'gaussian';
  /** Mean μ (length m). */
  mean: Float64Array;
  /** Precision P, m × m row-major, symmetric positive definite. */
  precision: Float64Array;
}

/** What a continuous sampler runs on: a relaxation's p(x) or a Gaussian test target. */
export type ContinuousTarget = RelaxationData | GaussianTarget;

/** An explicit mass matrix: diagonal (given by its inverse) or dense G (m × m, SPD). */
export type MassSpec = { kind: 'diag'; inverse: ArrayLike<number> } | { kind: 'dense'; matrix: ArrayLike<number> };

/**
 * How HMC moves on the relaxation: 'whitened' (x with M Mᵀ = W + D, identity or adapted diagonal mass) or 'zhang'
 * (Zhang's A = I form: mass matrix MᵀM). Both sample the same p(s); samples are reported in whitened x either way.
 */
export type Parametrisation = 'whitened' | 'zhang';

/** Options of a ContinuousSampler. */
export interface ContinuousSamplerOptions {
  /** 'whitened' (default) or 'zhang'. */
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

/** A chain of a ContinuousSampler (release with release(state) or dispose()). */
export interface ContinuousState {
  /** Address of the chain's state in WASM memory. */
  readonly ptr: number;
  /** The chain's id (its streams are keyed by (seed, chain)). */
  readonly chain: number;
  /** @internal */ readonly arena: Arena;
  /** @internal */ readonly buffers: { info: number; acc: number; accEmp: number; accPair: number; traceBuf: number; traceCap: number; nTrace: number };
}

/** What a call of step() or warmup() reports, over its transitions. */
export interface ContinuousInfo {
  /** Transitions run. */
  iterations: number;
  /** Mean acceptance statistic min(1, e^{−ΔH}) (divergent transitions count 0). ULA: fraction of finite moves. */
  acceptRate: number;
  /** Fraction of proposals accepted. */
  acceptedFraction: number;
  /** Step size ε at the end of the call. */
  stepSize: number;
  /** Divergent transitions (energy error beyond the divergence threshold; the trajectory is abandoned). */
  divergences: number;
  /** Mean energy error ΔH over non-divergent transitions (Langevin: −log α of MALA's test). */
  energyError: number;
  /** Largest |ΔH| over the transitions. */
  maxAbsEnergyError: number;
  /** Gradient evaluations of log p(x). */
  gradientEvaluations: number;
}

/** Options of warm-up (step-size and optional mass adaptation). */
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

const INFO_WORDS = 8;

/**
 * The chains of one continuous sampler on one target. Each chain's memory lives in its own arena
 * (released with release(state) or dispose()).
 */
export class ContinuousSampler {
  /** Dimension of x. */
  readonly m: number;
  /** Bits of the canonical form (0 for a Gaussian target). */
  readonly n: number;
  /** The relaxation's canonical form (null for a Gaussian target). */
  readonly form: CanonicalForm | null;
  /** The integrator's coefficient table [b0, a0, …, bS] (leapfrog for MALA and ULA). */
  readonly integrator: readonly number[];
  /** Integrator steps per HMC trajectory (default 5; 1 for MALA and ULA). */
  readonly steps: number;
  /** The parametrisation ('whitened' by default). */
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
  /** hmcStepBatch's buffers per batch width. */
  private readonly batches = new Map<number, { hdrs: number; scratch: number }>();
  private disposed = false;
  /** Work per gradient evaluation, in multiply-adds (for sizing WASM calls). */
  readonly gradientCost: number;

  /**
   * Binds the target into `engine`'s memory (ModelError on bad options).
   * @param engine The engine whose memory holds the sampler and its chains.
   * @param move The move: 'hmc', 'mala' or 'ula'.
   */
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
    if (!Number.isInteger(this.steps) || this.steps < 1 || this.steps > MAX_LOOP_COUNT) throw new ModelError(`leapfrogSteps must be an integer in [1, ${MAX_LOOP_COUNT}], got ${opts.leapfrogSteps}`);

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
        const T = massCholesky(engine, G, m);
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
    const [lo, hi] = chainSeedWords(seed, chain);
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
    return this.movesAll([state], iterations, flags, adjusted)[0];
  }

  /**
   * moves() of several chains: HMC runs them in lockstep (assembly/samplers/hmc_batch.ts, one batched
   * gradient for all), the same chains as one by one, bit for bit; Langevin moves run one by one.
   */
  protected movesAll(states: readonly ContinuousState[], iterations: number, flags: number, adjusted?: boolean): ContinuousInfo[] {
    for (const s of states) this.liveState(s);
    if (!Number.isInteger(iterations) || iterations < 0 || iterations > MAX_LOOP_COUNT) throw new ModelError(`iterations must be an integer in [0, ${MAX_LOOP_COUNT}], got ${iterations}`);
    const what = `${this.move} step`;
    if (this.move === 'hmc' && states.length > 1) {
      const { hdrs, scratch } = this.batchBuffers(states.length);
      this.arena.u32(hdrs, states.length).set(states.map((s) => s.ptr));
      this.engine.call(what, (k) => k.hmcStepBatch(hdrs, states.length, iterations, flags, scratch));
    } else if (this.move === 'hmc') {
      this.engine.call(what, (k) => k.hmcStep(states[0].ptr, iterations, flags));
    } else {
      const adj = adjusted ?? this.move === 'mala';
      for (const s of states) this.engine.call(what, (k) => k.langevinStep(s.ptr, iterations, flags, adj ? 1 : 0));
    }
    return states.map((s) => this.info(s));
  }

  /** The chain-pointer array and scratch of hmcStepBatch for B chains, allocated once per B. */
  private batchBuffers(B: number): { hdrs: number; scratch: number } {
    let b = this.batches.get(B);
    if (!b) {
      if (!this.bound) throw new EngineError('batched HMC needs a relaxed target');
      const k = this.engine.kernels;
      b = { hdrs: this.arena.alloc(4 * B), scratch: this.arena.alloc(k.hmcBatchScratchBytes(this.bound.relaxed, B) >>> 0) };
      this.batches.set(B, b);
    }
    return b;
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
    return this.stepChains([state], iterations, opts)[0];
  }

  /** step() of several chains, in lockstep for HMC (see movesAll); each chain's info. */
  stepChains(states: readonly ContinuousState[], iterations: number, opts: { accumulate?: boolean; trace?: boolean } = {}): ContinuousInfo[] {
    return this.movesAll(states, iterations, (opts.accumulate ? STEP_ACCUMULATE : 0) | (opts.trace ? STEP_TRACE : 0));
  }

  /**
   * Warm-up: dual averaging of ε towards targetAccept (unless stepSize is fixed) and, with adaptMass,
   * a diagonal mass matrix from the windowed variance of x (Stan's schedule: after each slow window
   * the inverse mass becomes the regularised window variance, ε is re-initialised by the heuristic
   * and dual averaging restarts). At the end ε is fixed at the dual-averaging average.
   */
  warmup(state: ContinuousState, iterations: number, opts: WarmupOptions): ContinuousInfo & { stopped: boolean } {
    return this.warmupChains([state], iterations, opts)[0];
  }

  /**
   * warmup() of several chains in lockstep (each adapts on its own draws; HMC's transitions run batched):
   * each chain's result is that of warmup() on it alone. onChunk sees the iterations per chain.
   */
  warmupChains(states: readonly ContinuousState[], iterations: number, opts: WarmupOptions): (ContinuousInfo & { stopped: boolean })[] {
    for (const s of states) this.liveState(s);
    const k = this.engine.kernels;
    const adaptStep = opts.stepSize === undefined;
    if (!adaptStep) {
      checkStepSize(opts.stepSize!);
      for (const s of states) k.chainSetStepSize(s.ptr, opts.stepSize!);
    }
    const adaptMass = opts.adaptMass ?? false;
    if (adaptMass && this.massKind !== MASS_DIAG) throw new ModelError('mass matrix adaptation is diagonal: not available with a dense mass matrix (zhang parametrisation)');
    const target = opts.targetAccept;
    if (!(target > 0 && target < 1)) throw new ModelError(`targetAccept must be in (0, 1), got ${target}`);
    if (adaptStep) for (const s of states) k.chainDaRestart(s.ptr, target);
    const sums = states.map(() => ({
      total: { iterations: 0, acceptRate: 0, acceptedFraction: 0, stepSize: NaN, divergences: 0, energyError: 0, maxAbsEnergyError: 0, gradientEvaluations: 0 } as ContinuousInfo,
      accSum: 0, accepted: 0, eSum: 0, eCount: 0,
    }));
    const chunk = this.chunkSize();
    // ULA adapts its step as MALA would (the unadjusted chain has no acceptance to steer by).
    const adjusted = this.move === 'ula' ? adaptStep : undefined;
    let stopped = false;
    outer: for (const phase of warmupSchedule(iterations, adaptMass)) {
      const flags = (adaptStep ? STEP_ADAPT : 0) | (phase.slow ? STEP_WELFORD : 0);
      for (let left = phase.iterations; left > 0; ) {
        const len = Math.min(chunk, left);
        const infos = this.movesAll(states, len, flags, adjusted);
        left -= len;
        infos.forEach((info, i) => {
          const a = sums[i], total = a.total;
          total.iterations += info.iterations;
          a.accSum += info.acceptRate * info.iterations;
          a.accepted += info.acceptedFraction * info.iterations;
          total.divergences += info.divergences;
          total.gradientEvaluations += info.gradientEvaluations;
          const ok = info.iterations - info.divergences;
          if (ok > 0) {
            a.eSum += info.energyError * ok;
            a.eCount += ok;
          }
          total.maxAbsEnergyError = Math.max(total.maxAbsEnergyError, info.maxAbsEnergyError);
        });
        if (opts.onChunk && opts.onChunk(sums[0].total.iterations) === false) {
          stopped = true;
          break outer;
        }
      }
      if (phase.slow) {
        for (const s of states) {
          k.chainUpdateMass(s.ptr);
          if (adaptStep) {
            k.chainDaFinal(s.ptr);
            this.engine.call('step size heuristic', (kk) => kk.hmcFindStepSize(s.ptr, kk.chainStepSize(s.ptr)));
            k.chainDaRestart(s.ptr, target);
          }
        }
      }
    }
    return states.map((s, i) => {
      if (adaptStep) k.chainDaFinal(s.ptr);
      const { total, accSum, accepted, eSum, eCount } = sums[i];
      total.acceptRate = total.iterations ? accSum / total.iterations : NaN;
      total.acceptedFraction = total.iterations ? accepted / total.iterations : NaN;
      total.energyError = eCount ? eSum / eCount : NaN;
      total.stepSize = k.chainStepSize(s.ptr);
      return { ...total, stopped };
    });
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

  /** Empties the chain's trace buffer. */
  resetTrace(state: ContinuousState): void {
    this.liveState(state);
    this.engine.kernels.chainResetTrace(state.ptr);
  }

  /** The chain's current x (copied). */
  position(state: ContinuousState): Float64Array {
    this.liveState(state);
    return state.arena.readF64(this.engine.kernels.chainPosition(state.ptr), this.m);
  }

  /** π = p(s_i = 1 | x) at the chain's current x. */
  conditional(state: ContinuousState): Float64Array {
    this.liveState(state);
    return state.arena.readF64(this.engine.kernels.chainProb(state.ptr), this.n);
  }

  /** log p(x) at the chain's current x, up to the target's constant. */
  logDensity(state: ContinuousState): number {
    this.liveState(state);
    return this.engine.kernels.chainLogp(state.ptr);
  }

  /** The chain's current step size ε. */
  stepSize(state: ContinuousState): number {
    this.liveState(state);
    return this.engine.kernels.chainStepSize(state.ptr);
  }

  /** Sets the chain's step size ε (a finite number > 0). */
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

  /** Frees the engine memory of the sampler and all its chains. */
  dispose(): void {
    if (this.disposed) return;
    for (const s of this.states) s.arena.dispose();
    this.states.clear();
    this.arena.dispose();
    this.disposed = true;
  }
}

export function checkStepSize(eps: number): void {
  if (!(eps > 0) || !Number.isFinite(eps)) throw new ModelError(`stepSize must be a finite number > 0, got ${eps}`);
}

