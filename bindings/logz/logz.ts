// log Z estimators (DESIGN.md §4, issue 4):
//
//   * 'ais'    — annealed importance sampling (Neal 2001) on the canonical form along the β path
//                f_β(s) = 1[s in the support of the biases] · exp(β (aᵀs + ½ sᵀWs)), β: 0 → 1, with
//                tree-block Gibbs sweeps (bindings/treegibbs.ts; default) or sequential single-site
//                Gibbs sweeps at β as transitions — or on the relaxed joint p_β(x, s) with
//                block-Gibbs sweeps (assembly/aisrelaxed.ts). Each run goes through the whole schedule in one
//                WASM call (assembly/ais.ts); runs are combined by log-mean-exp, with a
//                delta-method standard error. Zero potentials (−∞): β·(−∞) = −∞ for β > 0 — the run
//                starts uniform over the states every *bias* allows (log Z_0 = Σ_blocks log #finite
//                states) and a start that a −∞ *coupling* forbids gets weight 0 at the first step.
//                Options: collapsed weights (tree block 0 summed out exactly), and population
//                annealing (runs in populations resampled by weight, assembly/popanneal.ts), which
//                glassy models need.
//   * 'zhang'  — Zhang et al. (2012) eq. 14 generalised to any reference state s*: p(s*) = E_x[p(s*|x)]
//                over DHMC samples x ~ p(x), so log Z = log f(s*) − log mean_x p(s*|x). With s* = 0
//                (reference: 'zero') this is eq. 14: Z⁻¹ = p(s = 0) up to f(0); the default s* is the
//                marginal mode, whose probability is far easier to estimate.
//   * 'mirror' — Zhang §3.4's mirrored importance estimator: 1/∫e^ℓ = E_p[q(x)/e^{ℓ(x)}] with q a
//                Gaussian fitted to the x samples (full or diagonal covariance; cross-fitted: q from
//                one half of each chain weighs the other half, since a q fitted to the samples it
//                weighs biases log Z low; eigenvalues capped below 2 so the weights have finite
//                variance), and log Z = log ∫e^ℓ + logZRelation (bindings/relaxation.ts).
//   * 'chib'   — Chib (1995) for the sequential Gibbs sampler (Zhang §5): for a point s*,
//                p(s*) = E_{s ~ p}[K(s → s*)] with K the systematic-scan Gibbs kernel (a product of
//                full conditionals, computable exactly), so log Z = log f(s*) − log mean_t K(s_t → s*).
//
// Standard errors: over independent runs (AIS) or over per-chain batch estimates (the others), always
// for log Z by the delta method on the mean of the (max-shifted) weights.

import type { Arena, Engine, Kernels } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { toCanonical, canonicalLogPotential, type CanonicalForm } from '../core/canonical.ts';
import { BoundModel } from '../core/bound.ts';
import { EngineError, ModelError } from '../core/errors.ts';
import { seedWords } from '../core/seed.ts';
import { checkCount, definedOnly } from '../core/options.ts';
import { buildRelaxation, symmetricEigen, type RelaxationOptions } from '../relax/relaxation.ts';
import { BoundRelaxation } from '../relax/relaxation-bound.ts';
import { DHMCSampler } from '../samplers/dhmc.ts';
import { GibbsSampler } from '../samplers/gibbs.ts';
import { BoundTreeBlocks } from '../samplers/treegibbs.ts';
import { treePartition, type TreePartition } from '../samplers/treeblocks.ts';

export type LogZEstimator = 'zhang' | 'mirror' | 'chib' | 'ais';
export const LOGZ_ESTIMATORS: readonly LogZEstimator[] = ['zhang', 'mirror', 'chib', 'ais'];

export interface LogZEstimate {
  logZ: number;
  logZStdErr: number;
  logZKind: 'estimate';
  diagnostics: Record<string, number | string | boolean | null>;
  seconds: number;
}

/** Tag of AIS's stream within a chain (Gibbs uses 1, block Gibbs 3). */
const AIS_STREAM = 0x4149; // "AI"
/**
 * Population annealing resamples when the weights' effective sample size falls below this fraction
 * of the population (the usual SMC choice; on Grids_12, 0.9 measured about the same, 0.3 and
 * resampling at every temperature worse).
 */
const RESAMPLE_BELOW = 0.5;
/** Tag of population annealing's resampling stream (one per population). */
const POPULATION_STREAM = 0x5041; // "PA"

// ---------------------------------------------------------------------------------------------
// Log-mean-exp with a delta-method standard error.

/**
 * log((1/R) Σ e^{l_r}) and its standard error sd(w)/(√R · mean w) (delta method on the mean of the
 * weights w_r = e^{l_r − max l}). −∞ entries are weights of 0.
 */
export function logMeanExp(l: ArrayLike<number>): { value: number; stdErr: number; ess: number } {
  const R = l.length;
  if (R === 0) return { value: NaN, stdErr: NaN, ess: 0 };
  let top = -Infinity;
  for (let r = 0; r < R; r++) top = Math.max(top, l[r]);
  if (top === -Infinity) return { value: -Infinity, stdErr: NaN, ess: 0 };
  let s = 0, s2 = 0;
  for (let r = 0; r < R; r++) {
    const w = Math.exp(l[r] - top);
    s += w;
    s2 += w * w;
  }
  const mean = s / R;
  const varW = R > 1 ? Math.max(0, (s2 - R * mean * mean) / (R - 1)) : NaN;
  return { value: top + Math.log(mean), stdErr: Math.sqrt(varW / R) / mean, ess: (s * s) / s2 };
}

// ---------------------------------------------------------------------------------------------
// AIS.

export type AISSchedule = 'adaptive' | 'linear' | 'sigmoid' | readonly number[] | Float64Array;

export interface AISOptions {
  seed?: number;
  /** Independent runs (log-mean-exp over them). Default 32. */
  runs?: number;
  /** Intermediate distributions (temperatures after β = 0). Default 2000. Ignored with an explicit schedule. */
  steps?: number;
  /** Transition sweeps at each temperature. Default 1. */
  sweepsPerStep?: number;
  /**
   * The transition at each temperature: 'tree' (default) — one pass of tree-block Gibbs
   * (bindings/treegibbs.ts: every block of an induced-forest partition redrawn exactly given the
   * rest); 'gibbs' — one sequential single-site Gibbs sweep. Both leave f_β invariant. See
   * AIS_DEFAULTS for why tree is the default. 'relaxed' — AIS on the relaxed joint p_β(x, s)
   * (M_β = √β M) with Martens & Sutskever's block-Gibbs sweeps (assembly/aisrelaxed.ts); models
   * with zero potentials between variables have no relaxation (ModelError).
   */
  transition?: AISTransition;
  /** relaxed: options of the relaxation (shift and factor; default buildRelaxation's). */
  relaxation?: RelaxationOptions;
  /** tree: the partition (default treePartition of the canonical form). */
  partition?: TreePartition;
  /**
   * tree transition, independent runs: weigh by the marginal of the variables outside tree block 0,
   * summing that block out exactly (assembly/ais.ts, aisCollapsedRun) — Rao–Blackwellised weights.
   * It removes that block's share of the weights' variance (on small models about half of it, and a
   * run whose start is forbidden only through block 0's couplings no longer dies), at about twice the
   * cost per temperature; on
   * the glassy UAI grids, whose weights spread because runs end in different valleys, it gains
   * nothing. Default false.
   */
  collapse?: boolean;
  /**
   * Particles per population. 1 (default): independent AIS runs. P > 1: population annealing (AIS
   * with resampling, assembly/popanneal.ts): the runs move through the schedule in populations of P,
   * resampled by weight whenever their effective sample size falls below P/2; each population gives
   * one unbiased estimate of Z, and the estimate and its standard error come from runs / P
   * independent populations (runs must be a multiple of P).
   */
  population?: number;
  /**
   * 'adaptive' (default): spacing ∝ √Var_β(E) from pilot runs (adaptiveSchedule). 'linear': β_t = t/T. 'sigmoid': β_t ∝ σ(δ(2t/T − 1)) rescaled to [0, 1] (δ = 4), denser
   * near both ends. Or the β values themselves: strictly increasing from 0 to 1.
   */
  schedule?: AISSchedule;
  /**
   * Index of the first run (default 0): run r draws from stream (seed, r), so runs done in pieces
   * (firstRun = 0, 1, …, each with the schedule of the first piece) are the runs of one call.
   */
  firstRun?: number;
  /** Pilot runs of the adaptive schedule (their weights are not used). Default 4. */
  pilotRuns?: number;
  /** Temperatures of each pilot run (linear). Default max(200, steps/4). */
  pilotSteps?: number;
  signal?: AbortSignal;
}

export type AISTransition = 'tree' | 'gibbs' | 'relaxed';
export const AIS_TRANSITIONS: readonly AISTransition[] = ['tree', 'gibbs', 'relaxed'];

// transition 'tree' by default: per temperature it redraws whole trees exactly, at about twice the
// cost of a single-site sweep (free-bit models). Where single-site sweeps already mix (weakly coupled
// models) that cost buys nothing; where they do not, it can buy a lot, and that is where the
// estimator is needed. Measured (bench/results/logz.json and the tests): on the 16×16 periodic
// ferromagnet at β_c, 32 runs, the log weights' sd is 0.134 with 40 000 tree temperatures (16 s) and
// 0.120 with 120 000 Gibbs ones (23 s) — about equal at equal time; on UAI Grids_12 (glassy) tree
// transitions keep the chain closer to f_β (independent runs: sd 2.1 vs 3.2 nats at ~12 s;
// population annealing: SE 0.05 in 4 s vs 0.07 in 9 s); on Grids_11 with population annealing it
// is mixed (Gibbs SE 0.041 in 2 s but stuck 0.07–0.11 nats high at 2 and 8 s; tree SE 0.022 and
// 0.013 nats off at 15 s).
export const AIS_DEFAULTS = { seed: 1, runs: 32, steps: 2000, sweepsPerStep: 1, schedule: 'adaptive', pilotRuns: 4, transition: 'tree' } as const;

/** The β values of a schedule (length T + 1, β_0 = 0, β_T = 1). */
export function aisSchedule(schedule: Exclude<AISSchedule, 'adaptive'>, steps: number): Float64Array {
  if (typeof schedule !== 'string') {
    const b = Float64Array.from(schedule);
    if (b.length < 2 || b[0] !== 0 || b[b.length - 1] !== 1) throw new ModelError('AIS schedule must start at 0 and end at 1');
    for (let t = 1; t < b.length; t++) if (!(b[t] > b[t - 1])) throw new ModelError(`AIS schedule must increase strictly (entry ${t})`);
    return b;
  }
  checkCount('steps', steps, 1);
  const b = new Float64Array(steps + 1);
  if (schedule === 'linear') {
    for (let t = 0; t <= steps; t++) b[t] = t / steps;
  } else if (schedule === 'sigmoid') {
    const d = 4, sig = (z: number) => 1 / (1 + Math.exp(-z));
    const lo = sig(-d), hi = sig(d);
    for (let t = 0; t <= steps; t++) b[t] = (sig(d * ((2 * t) / steps - 1)) - lo) / (hi - lo);
  } else {
    throw new ModelError(`unknown AIS schedule "${String(schedule)}"; expected 'linear', 'sigmoid' or an array of β values`);
  }
  b[0] = 0;
  b[steps] = 1;
  return b;
}

/** log Z_0 of f_0: Σ over blocks of log(number of states with a finite bias). */
export function aisLogZ0(form: CanonicalForm): number {
  let z = 0;
  for (let v = 0; v < form.n; v++) {
    if (!form.oneHot[v]) {
      z += Math.LN2;
      continue;
    }
    let c = 0;
    for (let q = form.blockStart[v]; q < form.blockStart[v + 1]; q++) if (form.a[q] > -Infinity) c++;
    if (c === 0) throw new ModelError(`variable ${v} has no state with a nonzero potential: Z = 0`);
    z += Math.log(c);
  }
  return z;
}

/**
 * A schedule of `steps` temperatures with density ∝ √Var_β(E) (+ 10 % uniform), from pilot energy
 * traces: energies[r][t] = E at pilotBetas[t] in pilot run r. Var_β(E) is the spread over runs and
 * a window of neighbouring temperatures around each run's local mean. For equilibrium transitions
 * this spacing minimises Σ_t Δβ_t² Var(E), the leading term of Var(log w) (thermodynamic length).
 */
export function adaptiveSchedule(pilotBetas: Float64Array, energies: Float64Array[], steps: number): Float64Array {
  const T = pilotBetas.length;
  const half = Math.max(1, Math.floor(T / 50));
  const g = new Float64Array(T);
  for (let t = 0; t < T; t++) {
    const lo = Math.max(0, t - half), hi = Math.min(T, t + half + 1);
    let ss = 0, cnt = 0;
    for (const e of energies) {
      let m = 0;
      for (let k = lo; k < hi; k++) m += e[k];
      m /= hi - lo;
      for (let k = lo; k < hi; k++) ss += (e[k] - m) ** 2;
      cnt += hi - lo - 1;
    }
    g[t] = Number.isFinite(ss) && cnt > 0 ? Math.sqrt(ss / cnt) : 0;
  }
  let mean = 0;
  for (const x of g) mean += x / T;
  if (!(mean > 0)) return aisSchedule('linear', steps);
  // Cumulative ∫ g dβ (trapezoid), then invert at equal increments.
  const cum = new Float64Array(T);
  for (let t = 1; t < T; t++) cum[t] = cum[t - 1] + 0.5 * (g[t] + g[t - 1] + 0.2 * mean) * (pilotBetas[t] - pilotBetas[t - 1]);
  const out = new Float64Array(steps + 1);
  let k = 1;
  for (let i = 1; i < steps; i++) {
    const target = (cum[T - 1] * i) / steps;
    while (k < T - 1 && cum[k] < target) k++;
    const f = cum[k] > cum[k - 1] ? (target - cum[k - 1]) / (cum[k] - cum[k - 1]) : 0;
    out[i] = pilotBetas[k - 1] + f * (pilotBetas[k] - pilotBetas[k - 1]);
  }
  out[steps] = 1;
  for (let i = 1; i <= steps; i++) if (!(out[i] > out[i - 1])) out[i] = Math.min(1, out[i - 1] + 1e-12);
  out[steps] = 1;
  return out;
}

/** Chain ids of pilot runs: disjoint from the main runs' ids, so their streams are independent. */
const PILOT_CHAIN = 0x8000_0000;

type ScheduleRuns = (betas: Float64Array, runs: number, chainBase: number, traces: boolean) => { logW: Float64Array; energies: Float64Array[] };

/**
 * Runs `runs` AIS runs through the schedule `betas`, one WASM call each (`oneRun` seeds run r and runs
 * it, writing the energy at every β into ePtr when traces are asked for); stops early on abort.
 */
function runSchedule(
  engine: Engine, arena: Arena, betas: Float64Array, runs: number, traces: boolean, signal: AbortSignal | undefined, label: string,
  oneRun: (k: Kernels, r: number, betaPtr: number, ePtr: number) => number,
): { logW: Float64Array; energies: Float64Array[] } {
  const betaPtr = arena.allocF64(betas);
  const ePtr = traces ? arena.allocF64(betas.length) : 0;
  const logW: number[] = [];
  const energies: Float64Array[] = [];
  for (let r = 0; r < runs; r++) {
    if (signal?.aborted) break;
    const lw = engine.call(`${label} run`, (k) => oneRun(k, r, betaPtr, ePtr));
    if (Number.isNaN(lw)) throw new EngineError(`${label} run ${r} produced a NaN log weight`);
    logW.push(lw);
    if (traces) energies.push(arena.readF64(ePtr, betas.length));
  }
  return { logW: Float64Array.from(logW), energies };
}

/** The β schedule: as configured, or 'adaptive' — spaced by the energy variance of linear pilot runs. */
function chooseSchedule(o: { schedule: AISSchedule; steps: number; pilotRuns: number }, pilotSteps: number, runMany: ScheduleRuns): Float64Array {
  if (o.schedule !== 'adaptive') return aisSchedule(o.schedule, o.steps);
  const pilot = aisSchedule('linear', pilotSteps);
  const finite = runMany(pilot, o.pilotRuns, PILOT_CHAIN, true).energies.filter((e) => e.every(Number.isFinite));
  return finite.length >= 2 ? adaptiveSchedule(pilot, finite, o.steps) : aisSchedule('linear', o.steps);
}

/**
 * log Z by AIS (see AISOptions). `logWeights`: one log weight per run — or, with population > 1, one
 * log Ẑ per population (the log mean weight of its particles, resampling included), which is what
 * the estimate and its standard error combine; `schedule`: the β values used.
 */
export function runAIS(engine: Engine, model: Model, opts: AISOptions = {}): LogZEstimate & { logWeights: Float64Array; schedule: Float64Array } {
  const o = { ...AIS_DEFAULTS, ...definedOnly(opts) };
  checkCount('runs', o.runs, 1);
  checkCount('sweepsPerStep', o.sweepsPerStep, 1);
  checkCount('steps', o.steps, 1);
  if (!AIS_TRANSITIONS.includes(o.transition)) throw new ModelError(`AIS transition must be one of ${AIS_TRANSITIONS.join(', ')}, got "${String(o.transition)}"`);
  const population = o.population ?? 1;
  checkCount('population', population, 1);
  if (o.runs % population !== 0) throw new ModelError(`AIS runs (${o.runs}) must be a multiple of the population size (${population})`);
  if ((o.firstRun ?? 0) % population !== 0) throw new ModelError(`AIS firstRun (${o.firstRun}) must be a multiple of the population size (${population})`);
  if (o.collapse && (o.transition !== 'tree' || population > 1)) throw new ModelError('collapsed AIS weights need the tree transition and independent runs (population 1)');
  if (o.partition !== undefined && o.transition !== 'tree') throw new ModelError(`an AIS tree partition applies to transition 'tree', not '${o.transition}'`);
  if (o.relaxation !== undefined && o.transition !== 'relaxed') throw new ModelError(`AIS relaxation options apply to transition 'relaxed', not '${o.transition}'`);
  checkCount('pilotRuns', o.pilotRuns, 2);
  const firstRun = o.firstRun ?? 0;
  checkCount('firstRun', firstRun, 0, PILOT_CHAIN - o.runs);
  const pilotSteps = o.pilotSteps ?? Math.max(200, Math.ceil(o.steps / 4));
  checkCount('pilotSteps', pilotSteps, 2);
  if (o.transition === 'relaxed') {
    if (population > 1) throw new ModelError('population annealing runs on the discrete model (transition tree or gibbs)');
    if (firstRun !== 0) throw new ModelError('firstRun applies to the discrete transitions (tree or gibbs)');
    return runRelaxedAIS(engine, model, o, pilotSteps);
  }
  const t0 = performance.now();
  const form = toCanonical(model);
  const logZ0 = aisLogZ0(form);
  const bound = new BoundModel(engine, form);
  try {
    const arena = bound.arena;
    const k = engine.kernels;
    const scratch = arena.alloc(bound.maxBlock * 8);
    // The tempered copy the kernel rewrites at each β: same structure, its own a and val.
    const tempered = bound.copyWithOwnValues();
    const chain = arena.alloc(k.aisStateBytes(bound.header));
    const tree = o.transition === 'tree' ? new BoundTreeBlocks(bound, o.partition ?? treePartition(form)) : null;
    const collapse = o.transition === 'tree' && population === 1 && (o.collapse ?? false);
    const zSlot = collapse ? arena.allocF64(1) : 0;
    const [lo, hi] = seedWords(o.seed);
    let sweepsDone = 0;
    const runMany = (betas: Float64Array, runs: number, chainBase: number, traces: boolean) =>
      runSchedule(engine, arena, betas, runs, traces, opts.signal, 'AIS', (kk, r, betaPtr, ePtr) => {
        kk.rngSeed(chain, lo, hi, chainBase + r, AIS_STREAM);
        sweepsDone += (betas.length - 2) * o.sweepsPerStep;
        if (collapse) return kk.aisCollapsedRun(bound.header, tempered, chain, betaPtr, betas.length, o.sweepsPerStep, tree!.header, tree!.work, ePtr, zSlot);
        return kk.aisRun(bound.header, tempered, chain, betaPtr, betas.length, o.sweepsPerStep, scratch, ePtr, 0, tree?.header ?? 0, tree?.work ?? 0);
      });
    const betas = chooseSchedule(o, pilotSteps, runMany);
    let w: Float64Array;
    let resamplings = NaN;
    if (population > 1) {
      const pops = o.runs / population;
      const stride = Math.ceil(Number(k.aisStateBytes(bound.header)) / 16) * 16;
      const particles = arena.alloc(stride * population);
      const pop = arena.alloc(k.rngStateBytes());
      const work = arena.alloc(k.popAnnealWorkBytes(bound.header, population));
      const info = arena.allocF64(2);
      const betaPtr = arena.allocF64(betas);
      const out: number[] = [];
      resamplings = 0;
      for (let p = 0; p < pops; p++) {
        if (opts.signal?.aborted) break;
        const lz = engine.call('population annealing', (kk) => {
          for (let r = 0; r < population; r++) kk.rngSeed(particles + r * stride, lo, hi, firstRun + p * population + r, AIS_STREAM);
          kk.rngSeed(pop, lo, hi, firstRun / population + p, POPULATION_STREAM);
          return kk.popAnnealRun(bound.header, tempered, particles, stride, population, pop, betaPtr, betas.length, o.sweepsPerStep, scratch, tree?.header ?? 0, tree?.work ?? 0, work, info, RESAMPLE_BELOW);
        });
        if (Number.isNaN(lz)) throw new EngineError(`population ${p} produced a NaN estimate`);
        out.push(lz);
        resamplings += arena.readF64(info, 1)[0];
        sweepsDone += (betas.length - 2) * o.sweepsPerStep * population;
      }
      resamplings /= Math.max(1, out.length);
      w = Float64Array.from(out);
    } else {
      w = runMany(betas, o.runs, firstRun, false).logW;
    }
    const done = w.length;
    const { lme, deadRuns, logWeightSD } = aisWeightStats(w);
    return {
      logZ: lme.value + logZ0 + form.logZOffset,
      logZStdErr: done > 1 ? lme.stdErr : NaN,
      logZKind: 'estimate',
      logWeights: w,
      schedule: betas,
      diagnostics: {
        estimator: 'ais',
        runs: done * population,
        temperatures: betas.length - 1,
        sweepsPerStep: o.sweepsPerStep,
        transition: o.transition,
        collapsed: collapse,
        population,
        populations: population > 1 ? w.length : null,
        resamplingsPerPopulation: population > 1 ? resamplings : null,
        treeBlocks: tree ? tree.partition.blocks.length : null,
        factor: null,
        dimension: null,
        schedule: typeof o.schedule === 'string' ? o.schedule : 'custom',
        weightESS: lme.ess,
        logWeightSD,
        deadRuns,
        siteUpdates: sweepsDone * form.n,
        logZ0,
        partial: done * population < o.runs,
        seed: o.seed,
      },
      seconds: (performance.now() - t0) / 1000,
    };
  } finally {
    bound.dispose();
  }
}

/**
 * log-mean-exp of the discrete AIS log weights (one per run, or per population) and the spread
 * runAIS reports; refuses no runs and all-dead runs. Shared with runs split into pieces (ais-split.ts).
 */
export function aisWeightStats(w: Float64Array): { lme: ReturnType<typeof logMeanExp>; deadRuns: number; logWeightSD: number | null } {
  if (w.length === 0) throw new EngineError('AIS was cancelled before the first run completed: no estimate');
  const lme = logMeanExp(w);
  if (lme.value === -Infinity) throw new EngineError(`every AIS run (${w.length}) started where a zero potential between variables forbids: no estimate; try more runs`);
  let mean = 0, sq = 0, dead = 0;
  for (const x of w) if (x === -Infinity) dead++;
  const live = w.filter((x) => x > -Infinity);
  for (const x of live) mean += x / live.length;
  for (const x of live) sq += (x - mean) ** 2;
  return { lme, deadRuns: dead, logWeightSD: live.length > 1 ? Math.sqrt(sq / (live.length - 1)) : null };
}

/** AIS on the relaxed joint p_β(x, s) with block-Gibbs transitions (assembly/aisrelaxed.ts). */
function runRelaxedAIS(engine: Engine, model: Model, o: AISOptions & { seed: number; runs: number; steps: number; sweepsPerStep: number; pilotRuns: number; schedule: AISSchedule }, pilotSteps: number): LogZEstimate & { logWeights: Float64Array; schedule: Float64Array } {
  const t0 = performance.now();
  const relax = buildRelaxation(model, o.relaxation ?? {});
  const form = relax.form;
  const logZ0 = aisLogZ0(form);
  const bound = new BoundRelaxation(engine, relax);
  try {
    const arena = bound.arena;
    const chain = arena.alloc(engine.kernels.aisRelaxedStateBytes(bound.relaxed));
    const [lo, hi] = seedWords(o.seed);
    const runMany = (betas: Float64Array, runs: number, chainBase: number, traces: boolean) =>
      runSchedule(engine, arena, betas, runs, traces, o.signal, 'relaxed AIS', (kk, r, betaPtr, ePtr) => {
        kk.rngSeed(chain, lo, hi, chainBase + r, AIS_STREAM);
        return kk.aisRelaxedRun(bound.relaxed, chain, betaPtr, betas.length, o.sweepsPerStep, ePtr);
      });
    const betas = chooseSchedule(o, pilotSteps, runMany);
    const w = runMany(betas, o.runs, 0, false).logW;
    if (w.length === 0) throw new EngineError('AIS was cancelled before the first run completed: no estimate');
    const lme = logMeanExp(w);
    if (lme.value === -Infinity) throw new EngineError(`every relaxed AIS run (${w.length}) has weight 0: no estimate`);
    let mean = 0, sq = 0;
    for (const x of w) mean += x / w.length;
    for (const x of w) sq += (x - mean) ** 2;
    return {
      logZ: lme.value + logZ0 + form.logZOffset,
      logZStdErr: w.length > 1 ? lme.stdErr : NaN,
      logZKind: 'estimate',
      logWeights: w,
      schedule: betas,
      diagnostics: {
        estimator: 'ais',
        runs: w.length,
        temperatures: betas.length - 1,
        sweepsPerStep: o.sweepsPerStep,
        transition: 'relaxed',
        // The discrete transitions' keys too (null: not applicable), so the keys do not depend on it.
        collapsed: false,
        population: 1,
        populations: null,
        resamplingsPerPopulation: null,
        treeBlocks: null,
        factor: relax.factorKind,
        dimension: relax.factor.m,
        schedule: typeof o.schedule === 'string' ? o.schedule : 'custom',
        weightESS: lme.ess,
        logWeightSD: w.length > 1 ? Math.sqrt(sq / (w.length - 1)) : null,
        deadRuns: 0,
        siteUpdates: null,
        logZ0,
        partial: w.length < o.runs,
        seed: o.seed,
      },
      seconds: (performance.now() - t0) / 1000,
    };
  } finally {
    bound.dispose();
  }
}

// ---------------------------------------------------------------------------------------------
// Batch aggregation shared by the MCMC-based estimators.

/**
 * log of the mean of e^{l} over all values of all chains, with a batch-means standard error (each
 * chain's sequence cut into `batches` consecutive batches; delta method on the weights' mean).
 */
export function logMeanExpBatched(chains: Float64Array[], batches: number): { value: number; stdErr: number } {
  let top = -Infinity, count = 0;
  for (const c of chains) for (const x of c) {
    top = Math.max(top, x);
    count++;
  }
  if (top === -Infinity || count === 0) return { value: -Infinity, stdErr: NaN };
  if (top === Infinity) throw new EngineError('an estimator weight is +∞');
  let total = 0;
  const means: number[] = [];
  for (const c of chains) {
    const B = Math.min(batches, c.length);
    for (let b = 0; b < B; b++) {
      const lo = Math.floor((b * c.length) / B), hi = Math.floor(((b + 1) * c.length) / B);
      let s = 0;
      for (let t = lo; t < hi; t++) s += Math.exp(c[t] - top);
      total += s;
      means.push(s / (hi - lo));
    }
  }
  const mean = total / count;
  const B = means.length;
  let v = 0;
  for (const m of means) v += (m - mean) ** 2;
  const se = B > 1 ? Math.sqrt(v / (B - 1) / B) / mean : NaN;
  return { value: top + Math.log(mean), stdErr: se };
}

// ---------------------------------------------------------------------------------------------
// Zhang's eq. 14 and the mirrored estimator, from DHMC samples of the relaxed density p(x).

export interface RelaxedLogZOptions {
  seed?: number;
  chains?: number;
  samples?: number;
  burnin?: number;
  /** Batches per chain for the standard error. Default 10. */
  batches?: number;
  leapfrogSteps?: number;
  targetAccept?: number;
  relaxation?: RelaxationOptions;
  /**
   * zhang: the state s* whose probability is estimated. 'mode' (default): each variable's most
   * probable state under the Rao–Blackwellised marginals E[π(x)] (the same samples). 'zero': every
   * user variable in state 0 — s = 0 for a binary model, eq. 14 as printed; falls back to 'mode'
   * when its potential is 0. p(s = 0) is usually tiny and the estimate then worthless (on Zhang's own
   * 10×10 grids it is off by tens of nats; bench/results/logz.json).
   */
  reference?: 'zero' | 'mode';
  /** mirror: covariance of the Gaussian q. Default 'full' up to 256 dimensions, else 'diag'. */
  covariance?: 'full' | 'diag';
  /**
   * mirror: eigenvalues of q's covariance are capped at this value (default 1.9). In the whitened x
   * of the relaxation, p(x) is a mixture of N(Mᵀs, I), so E_p[(q/p)²] = ∫q²/p is finite iff q's
   * covariance is below 2I; the fitted covariance is I + Cov(Mᵀs) and breaks that whenever the
   * model is more than weakly coupled (heavy-tailed weights, standard errors that lie). Infinity:
   * Zhang's plain fit.
   */
  covarianceCap?: number;
  signal?: AbortSignal;
}

export const RELAXED_LOGZ_DEFAULTS = { seed: 1, chains: 4, samples: 2000, burnin: 500, batches: 10, leapfrogSteps: 5, targetAccept: 0.9 } as const;

/** x samples (per chain: samples × m, row-major), ℓ(x) and π per sample, from DHMC on the relaxation. */
function relaxedSamples(engine: Engine, model: Model, o: RelaxedLogZOptions & { [K in keyof typeof RELAXED_LOGZ_DEFAULTS]: number }) {
  checkCount('chains', o.chains, 1);
  checkCount('samples', o.samples, 2);
  checkCount('burnin', o.burnin, 0);
  checkCount('batches', o.batches, 1);
  const relax = buildRelaxation(model, o.relaxation ?? {});
  const m = relax.factor.m, n = relax.form.nBits;
  // Traced per transition: ℓ(x) (code −1), x_j (codes −2 − j), π_i (codes i).
  const codes = new Int32Array(1 + m + n);
  codes[0] = -1;
  for (let j = 0; j < m; j++) codes[1 + j] = -2 - j;
  for (let i = 0; i < n; i++) codes[1 + m + i] = i;
  const sampler = new DHMCSampler(engine, relax, { leapfrogSteps: o.leapfrogSteps, traceCodes: codes, traceCapacity: o.samples });
  const out: { logp: Float64Array; x: Float64Array[]; pi: Float64Array[] }[] = [];
  let acceptRate = 0, divergences = 0;
  try {
    for (let c = 0; c < o.chains; c++) {
      if (o.signal?.aborted) break;
      const state = sampler.init(o.seed, c);
      try {
        sampler.warmup(state, o.burnin, { targetAccept: o.targetAccept });
        sampler.resetTrace(state);
        const info = sampler.step(state, o.samples, { trace: true });
        acceptRate += info.acceptRate / o.chains;
        divergences += info.divergences;
        const tr = sampler.trace(state);
        out.push({ logp: tr[0], x: tr.slice(1, 1 + m), pi: tr.slice(1 + m) });
      } finally {
        sampler.release(state);
      }
    }
  } finally {
    sampler.dispose();
  }
  if (out.length === 0) throw new EngineError('cancelled before the first chain completed: no estimate');
  return { relax, m, n, chains: out, acceptRate, divergences };
}

/** Zhang et al. (2012) eq. 14: log Z = log f(s*) − log mean_x p(s*|x), x ~ p(x) by DHMC. */
export function runZhangLogZ(engine: Engine, model: Model, opts: RelaxedLogZOptions = {}): LogZEstimate {
  const o = { ...RELAXED_LOGZ_DEFAULTS, ...definedOnly(opts) };
  const t0 = performance.now();
  const { relax, chains, acceptRate, divergences } = relaxedSamples(engine, model, o);
  const form = relax.form;
  // The reference configuration (user states).
  let ref = new Int32Array(form.n);
  let refKind: string = o.reference ?? 'mode';
  if (refKind === 'zero' && !Number.isFinite(model.logPotential(ref))) refKind = 'mode';
  if (refKind === 'mode') {
    const mean = new Float64Array(form.nBits);
    let cnt = 0;
    for (const c of chains) for (let i = 0; i < form.nBits; i++) for (const p of c.pi[i]) mean[i] += p;
    for (const c of chains) cnt += c.logp.length;
    ref = new Int32Array(form.n);
    for (let v = 0; v < form.n; v++) {
      const b = form.blockStart[v];
      if (!form.oneHot[v]) ref[v] = mean[b] / cnt > 0.5 ? 1 : 0;
      else for (let k = 1; k < form.card[v]; k++) if (mean[b + k] > mean[b + ref[v]]) ref[v] = k;
    }
  } else if (refKind !== 'zero') throw new ModelError(`reference must be 'zero' or 'mode', got "${refKind}"`);
  const logF = model.logPotential(ref);
  if (!Number.isFinite(logF)) throw new ModelError('the reference state has probability 0: no estimate');
  const logCond = chains.map((c) => {
    const T = c.logp.length, out = new Float64Array(T);
    for (let v = 0; v < form.n; v++) {
      const b = form.blockStart[v];
      if (form.oneHot[v]) {
        const col = c.pi[b + ref[v]];
        for (let t = 0; t < T; t++) out[t] += Math.log(col[t]);
      } else {
        const col = c.pi[b];
        // log(1 − π) loses relative accuracy only where 1 − π < ~1e−8, i.e. p(s*|x) is negligible.
        if (ref[v]) for (let t = 0; t < T; t++) out[t] += Math.log(col[t]);
        else for (let t = 0; t < T; t++) out[t] += Math.log1p(-col[t]);
      }
    }
    return out;
  });
  const lme = logMeanExpBatched(logCond, o.batches);
  if (lme.value === -Infinity) throw new EngineError('p(s*|x) underflowed to 0 on every sample: no estimate (try reference: "mode")');
  return {
    logZ: logF - lme.value,
    logZStdErr: lme.stdErr,
    logZKind: 'estimate',
    diagnostics: { estimator: 'zhang', reference: refKind, chains: chains.length, samplesPerChain: o.samples, burnin: o.burnin, acceptRate, divergences, factor: relax.factorKind, seed: o.seed },
    seconds: (performance.now() - t0) / 1000,
  };
}

/** Zhang §3.4's mirrored estimator: 1/∫e^ℓ = E_p[q(x)/e^{ℓ(x)}], q a Gaussian fitted to the samples (cross-fitted halves). */
export function runMirrorLogZ(engine: Engine, model: Model, opts: RelaxedLogZOptions = {}): LogZEstimate {
  const o = { ...RELAXED_LOGZ_DEFAULTS, ...definedOnly(opts) };
  const t0 = performance.now();
  const { relax, m, chains, acceptRate, divergences } = relaxedSamples(engine, model, o);
  let cov = o.covariance ?? (m <= 256 ? 'full' : 'diag');
  if (cov !== 'full' && cov !== 'diag') throw new ModelError(`covariance must be 'full' or 'diag', got "${String(cov)}"`);
  const cap = o.covarianceCap ?? 1.9;
  if (!(cap > 0)) throw new ModelError(`covarianceCap must be > 0, got ${cap}`);
  // Cross-fitting: q fitted on the first halves of the chains weighs the second halves and vice
  // versa (a q fitted to the very samples it weighs is biased towards them, and log Z low).
  const halves = chains.map((c) => Math.floor(c.logp.length / 2));
  const fitA = fitGaussian(chains.map((c, i) => ({ x: c.x, lo: 0, hi: halves[i] })), m, cov, cap);
  const fitB = fitGaussian(chains.map((c, i) => ({ x: c.x, lo: halves[i], hi: c.logp.length })), m, cov, cap);
  const logRatio = chains.map((c, i) => {
    const T = c.logp.length, out = new Float64Array(T);
    for (let t = 0; t < T; t++) out[t] = (t < halves[i] ? fitB : fitA).logq(c.x, t) - c.logp[t];
    return out;
  });
  cov = fitA.kind === 'full' && fitB.kind === 'full' ? 'full' : 'diag';
  const lme = logMeanExpBatched(logRatio, o.batches);
  return {
    logZ: -lme.value + relax.logZRelation,
    logZStdErr: lme.stdErr,
    logZKind: 'estimate',
    diagnostics: { estimator: 'mirror', covariance: cov, covarianceCap: cap, dimension: m, chains: chains.length, samplesPerChain: o.samples, burnin: o.burnin, acceptRate, divergences, factor: relax.factorKind, seed: o.seed },
    seconds: (performance.now() - t0) / 1000,
  };
}

/** A Gaussian fitted to rows lo … hi−1 of each chain's x columns; covariance eigenvalues capped. */
function fitGaussian(parts: { x: Float64Array[]; lo: number; hi: number }[], m: number, cov: 'full' | 'diag', cap: number) {
  let N = 0;
  const mu = new Float64Array(m);
  for (const { x, lo, hi } of parts) {
    N += hi - lo;
    for (let j = 0; j < m; j++) for (let t = lo; t < hi; t++) mu[j] += x[j][t];
  }
  if (N < 2) throw new EngineError('too few samples to fit the mirror distribution');
  for (let j = 0; j < m; j++) mu[j] /= N;
  let L: Float64Array | null = null; // lower Cholesky factor of Σ (full)
  const sd = new Float64Array(m);
  if (cov === 'full') {
    const S = new Float64Array(m * m);
    const d = new Float64Array(m);
    for (const { x, lo, hi } of parts) {
      for (let t = lo; t < hi; t++) {
        for (let j = 0; j < m; j++) d[j] = x[j][t] - mu[j];
        for (let i = 0; i < m; i++) {
          const di = d[i];
          for (let j = 0; j <= i; j++) S[i * m + j] += di * d[j];
        }
      }
    }
    for (let i = 0; i < m; i++) for (let j = 0; j <= i; j++) S[j * m + i] = S[i * m + j] /= N - 1;
    if (cap < Infinity) {
      const { values, vectors } = symmetricEigen(S, m, true);
      const V = vectors!;
      S.fill(0);
      for (let k = 0; k < m; k++) {
        const lam = Math.min(values[k], cap);
        for (let i = 0; i < m; i++) for (let j = 0; j < m; j++) S[i * m + j] += lam * V[i * m + k] * V[j * m + k];
      }
    }
    L = cholesky(S, m);
  }
  if (!L) {
    for (const { x, lo, hi } of parts) for (let j = 0; j < m; j++) for (let t = lo; t < hi; t++) sd[j] += (x[j][t] - mu[j]) ** 2;
    for (let j = 0; j < m; j++) sd[j] = Math.sqrt(Math.min(cap, sd[j] / (N - 1)));
    if (!sd.every((v) => v > 0)) throw new EngineError('the x samples have zero variance in some coordinate: cannot fit q');
  }
  let logNorm = -0.5 * m * Math.log(2 * Math.PI);
  for (let j = 0; j < m; j++) logNorm -= Math.log(L ? L[j * m + j] : sd[j]);
  const z = new Float64Array(m);
  const logq = (x: Float64Array[], t: number): number => {
    let q = 0;
    if (L) {
      for (let i = 0; i < m; i++) {
        let r = x[i][t] - mu[i];
        for (let j = 0; j < i; j++) r -= L[i * m + j] * z[j];
        z[i] = r / L[i * m + i];
        q += z[i] * z[i];
      }
    } else {
      for (let j = 0; j < m; j++) q += ((x[j][t] - mu[j]) / sd[j]) ** 2;
    }
    return logNorm - 0.5 * q;
  };
  return { kind: L ? ('full' as const) : ('diag' as const), logq };
}

function cholesky(A: Float64Array, n: number): Float64Array | null {
  const L = new Float64Array(n * n);
  for (let j = 0; j < n; j++) {
    let d = A[j * n + j];
    for (let k = 0; k < j; k++) d -= L[j * n + k] ** 2;
    if (!(d > 0)) return null;
    const ljj = Math.sqrt(d);
    L[j * n + j] = ljj;
    for (let i = j + 1; i < n; i++) {
      let s = A[i * n + j];
      for (let k = 0; k < j; k++) s -= L[i * n + k] * L[j * n + k];
      L[i * n + j] = s / ljj;
    }
  }
  return L;
}

// ---------------------------------------------------------------------------------------------
// Chib-style log Z for the sequential Gibbs sampler (Zhang §5).

export interface ChibOptions {
  seed?: number;
  chains?: number;
  samples?: number;
  burnin?: number;
  /** Sweeps between evaluations of K(s → s*). Default 1. */
  thin?: number;
  batches?: number;
  signal?: AbortSignal;
}

export const CHIB_DEFAULTS = { seed: 1, chains: 4, samples: 2000, burnin: 200, thin: 1, batches: 10 } as const;

/** Stream tag of Chib's Gibbs chains (distinct from the Gibbs sampler's own runs). */
const CHIB_STREAM = 0x4348; // "CH"

/**
 * Chib (1995): p(s*) = Σ_s p(s) K(s → s*), estimated by mean_t K(s_t → s*) over Gibbs samples, with
 * K the systematic-scan kernel (computed exactly in WASM, assembly/chib.ts); log Z = log f(s*) − log p̂(s*). s* is the
 * highest-potential state among the chains after burn-in.
 */
export function runChibLogZ(engine: Engine, model: Model, opts: ChibOptions = {}): LogZEstimate {
  const o = { ...CHIB_DEFAULTS, ...definedOnly(opts) };
  checkCount('chains', o.chains, 1);
  checkCount('samples', o.samples, 1);
  checkCount('burnin', o.burnin, 0);
  checkCount('thin', o.thin, 1);
  checkCount('batches', o.batches, 1);
  const t0 = performance.now();
  const form = toCanonical(model);
  const bound = new BoundModel(engine, form);
  try {
    const arena = bound.arena;
    const k = engine.kernels;
    const header = bound.header;
    const scratch = arena.alloc(bound.maxBlock * 8);
    const work = arena.alloc(form.nBits);
    const ref = arena.alloc(form.nBits);
    const out = arena.allocF64(o.samples);
    const [lo, hi] = seedWords(o.seed);
    const bytes = k.gibbsStateBytes(header);
    const rng = k.rngStateBytes();
    const chains: number[] = [];
    let best = -Infinity, bestBits: Uint8Array | null = null;
    for (let c = 0; c < o.chains; c++) {
      const ptr = arena.alloc(bytes);
      engine.call('chib init', (kk) => {
        kk.rngSeed(ptr, lo, hi, c, CHIB_STREAM);
        kk.gibbsInit(header, ptr);
        if (o.burnin > 0) kk.gibbsStep(header, ptr, o.burnin, 0, scratch);
      });
      chains.push(ptr);
      const bits = new Uint8Array(k.memory.buffer, ptr + rng, form.nBits).slice();
      const lp = canonicalLogPotential(form, bits);
      if (lp > best) {
        best = lp;
        bestBits = bits;
      }
    }
    if (!bestBits) throw new EngineError('every Gibbs chain is outside the support after burn-in: no reference state');
    new Uint8Array(k.memory.buffer, ref, form.nBits).set(bestBits);
    const logK: Float64Array[] = [];
    for (const ptr of chains) {
      if (opts.signal?.aborted) break;
      engine.call('chib run', (kk) => kk.chibRun(header, ptr, ref, o.samples, o.thin, work, scratch, out));
      logK.push(arena.readF64(out, o.samples));
    }
    if (logK.length === 0) throw new EngineError('Chib was cancelled before the first chain completed: no estimate');
    const lme = logMeanExpBatched(logK, o.batches);
    if (lme.value === -Infinity) throw new EngineError('K(s → s*) was 0 for every sample: no estimate');
    return {
      logZ: best - lme.value,
      logZStdErr: lme.stdErr,
      logZKind: 'estimate',
      diagnostics: { estimator: 'chib', chains: logK.length, samplesPerChain: o.samples, burnin: o.burnin, thin: o.thin, referenceLogPotential: best, seed: o.seed },
      seconds: (performance.now() - t0) / 1000,
    };
  } finally {
    bound.dispose();
  }
}

// ---------------------------------------------------------------------------------------------
// One entry point.

export type EstimateLogZOptions =
  | ({ estimator: 'ais' } & AISOptions)
  | ({ estimator: 'zhang' | 'mirror' } & RelaxedLogZOptions)
  | ({ estimator: 'chib' } & ChibOptions);

/** log Z of the model as the user built it, by the chosen estimator, with a Monte Carlo standard error. */
export function estimateLogZ(engine: Engine, model: Model, opts: EstimateLogZOptions): LogZEstimate {
  switch (opts.estimator) {
    case 'ais': {
      const { logWeights: _w, schedule: _s, ...r } = runAIS(engine, model, opts);
      return r;
    }
    case 'zhang':
      return runZhangLogZ(engine, model, opts);
    case 'mirror':
      return runMirrorLogZ(engine, model, opts);
    case 'chib':
      return runChibLogZ(engine, model, opts);
    default:
      throw new ModelError(`unknown log Z estimator "${String((opts as { estimator: unknown }).estimator)}"; expected ${LOGZ_ESTIMATORS.join(', ')}`);
  }
}
