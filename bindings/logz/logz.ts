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
//
// Files: estimate.ts (the result type, log-mean-exp), relaxed-logz.ts (Zhang, mirror), chib.ts,
// ais-fg.ts (AIS on factor graphs of any arity), logz-checks.ts (standard errors, warnings); this
// file is AIS on the canonical form and the one entry point.

import type { Arena, Engine, Kernels } from '../core/engine.ts';
import { requirePairwise, type Model } from '../core/model.ts';
import { canonicalFits } from '../core/model-range.ts';
import { toCanonical, type CanonicalForm } from '../core/canonical.ts';
import { BoundModel } from '../core/bound.ts';
import { EngineError, ModelError } from '../core/errors.ts';
import { progressTicker, type Progress } from '../core/result.ts';
import { seedWords } from '../core/seed.ts';
import { checkCount, checkOptionKeys, definedOnly, MAX_LOOP_COUNT } from '../core/options.ts';
import { buildRelaxation, type RelaxationOptions } from '../relax/relaxation.ts';
import { BoundRelaxation } from '../relax/relaxation-bound.ts';
import { BoundTreeBlocks } from '../samplers/treegibbs.ts';
import { treePartition, type TreePartition } from '../samplers/treeblocks.ts';
import { runFactorGraphAIS } from './ais-fg.ts';
import { runHMCAIS, relaxedAISResult } from './ais-hmc.ts';
import { lanesApply, runLanesSchedule, runPopulationsLanes, type LanesSetup } from './ais-lanes.ts';
import { aisWarnings } from './logz-checks.ts';
import { checkedAgainstLowerBound } from './ais-bound-check.ts';
import { aisWeightStats, logMeanExp, type AISSchedule, type LogZEstimate } from './estimate.ts';
import { runZhangLogZ, runMirrorLogZ, type RelaxedLogZOptions } from './relaxed-logz.ts';
import { runChibLogZ, type ChibOptions } from './chib.ts';

// The pieces in their own files, re-exported so importers of logz.ts keep working.
export { aisWeightStats, logMeanExp, logMeanExpBatched, type AISSchedule, type LogZEstimate } from './estimate.ts';
export { runZhangLogZ, runMirrorLogZ, RELAXED_LOGZ_DEFAULTS, ZHANG_LOGZ_OPTION_KEYS, MIRROR_LOGZ_OPTION_KEYS, type RelaxedLogZOptions } from './relaxed-logz.ts';
export { runChibLogZ, CHIB_DEFAULTS, CHIB_OPTION_KEYS, type ChibOptions } from './chib.ts';

/**
 * The log Z estimators of `estimateLogZ`: 'zhang' and 'mirror' from DHMC samples of the relaxation, 'chib' from
 * Gibbs samples, 'ais' annealed importance sampling.
 */
export type LogZEstimator = 'zhang' | 'mirror' | 'chib' | 'ais';
/** All log Z estimators. */
export const LOGZ_ESTIMATORS: readonly LogZEstimator[] = ['zhang', 'mirror', 'chib', 'ais'];

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
// AIS.


/** The key of estimateLogZ's request that runAIS passes over (its name, the estimator's). */
const SHARED_REQUEST_KEYS: readonly string[] = ['estimator'];

/** Every option runAIS takes (AISOptions). */
export const AIS_RUN_OPTION_KEYS: readonly string[] = [
  'seed', 'runs', 'steps', 'sweepsPerStep', 'transition', 'relaxation', 'leapfrogSteps', 'stepSize', 'partition', 'collapse', 'population',
  'schedule', 'firstRun', 'pilotRuns', 'pilotSteps', 'lanes', 'precision', 'signal', 'onProgress',
];

/** Options of AIS and population annealing (`runAIS`); defaults in AIS_DEFAULTS. */
export interface AISOptions {
  /** Seed: run r draws from stream (seed, r) (default 1). */
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
   * with zero potentials between variables have no relaxation (ModelError). 'hmc' — AIS on the
   * relaxed density p_β(x) (s summed out) with HMC transitions (bindings/logz/ais-hmc.ts; step
   * sizes per temperature tuned by pilot runs unless `stepSize` is given). Models with a factor
   * of arity > 2 take 'gibbs' only — its default for them — on the factor graph itself
   * (bindings/logz/ais-fg.ts).
   */
  transition?: AISTransition;
  /** relaxed, hmc: options of the relaxation (shift and factor; default buildRelaxation's). */
  relaxation?: RelaxationOptions;
  /** hmc: leapfrog steps per HMC transition (default 5). */
  leapfrogSteps?: number;
  /**
   * hmc: the leapfrog step size at every temperature, in (0, 2) (the potential's curvature is at most
   * 1 at every β). Default: per temperature, tuned by the pilot runs towards 80 % acceptance.
   */
  stepSize?: number;
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
  /**
   * Run the chains in SIMD lanes (assembly/logz/ais_lanes.ts: independent runs in batches of 64, a
   * population as one batch, two chains per f64x2 vector), with tree or Gibbs transitions, on models
   * whose canonical form is all free bits with finite tables (Ising, Boltzmann machines, the UAI
   * grids); others, and collapsed weights, take the one-chain kernels. The same runs bit for bit,
   * faster. Default true; false forces the one-chain kernels.
   */
  lanes?: boolean;
  /**
   * Arithmetic of the lanes' transitions: 'f64' (default; two chains a vector, the one-chain
   * kernels' runs bit for bit) or 'f32' (opt-in: four chains a vector in single precision — other
   * chains with the same targets; the weights' energies stay f64). 'f32' needs the lanes kernels
   * (a free-bit model, `lanes` not false, weights not collapsed).
   */
  precision?: 'f64' | 'f32';
  /** Stops the run between runs (or populations); the estimate then uses those done. */
  signal?: AbortSignal;
  /** Called as runs complete (phase 'ais', in runs — a population's particles count when it completes; pilot runs are not counted). */
  onProgress?: (p: Progress) => void;
}

/** AIS transition kernel at each temperature (see AISOptions.transition). */
export type AISTransition = 'tree' | 'gibbs' | 'relaxed' | 'hmc';
/** All AIS transitions. */
export const AIS_TRANSITIONS: readonly AISTransition[] = ['tree', 'gibbs', 'relaxed', 'hmc'];

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
/** Defaults of AISOptions. */
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

type ScheduleRuns = (betas: Float64Array, runs: number, chainBase: number, traces: boolean, tick?: (runs: number) => void) => { logW: Float64Array; energies: Float64Array[] };

/**
 * Runs `runs` AIS runs through the schedule `betas`, one WASM call each (`oneRun` seeds run r and runs
 * it, writing the energy at every β into ePtr when traces are asked for); stops early on abort.
 */
function runSchedule(
  engine: Engine, arena: Arena, betas: Float64Array, runs: number, traces: boolean, signal: AbortSignal | undefined, label: string,
  oneRun: (k: Kernels, r: number, betaPtr: number, ePtr: number) => number, tick?: (runs: number) => void,
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
    tick?.(1);
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
 * the estimate and its standard error combine; `schedule`: the β values used. The estimate is
 * checked against mean field's lower bound (ais-bound-check.ts: `meanFieldBound`, and a warning
 * when it is far below).
 */
export function runAIS(engine: Engine, model: Model, opts: AISOptions = {}): LogZEstimate & { logWeights: Float64Array; schedule: Float64Array } {
  // A misspelt option ran the default ({ run: 4 } ran 32 runs), and the chain estimators' counts
  // were ignored (AIS counts runs and temperatures). estimateLogZ's request carries the estimator's name.
  checkOptionKeys(opts, [...AIS_RUN_OPTION_KEYS, ...SHARED_REQUEST_KEYS]);
  return checkedAgainstLowerBound(engine, model, runAISRuns(engine, model, opts), opts.signal);
}

/** runAIS without the lower-bound check: a piece of a run (ais-split.ts), checked once folded. */
export function runAISRuns(engine: Engine, model: Model, opts: AISOptions = {}): LogZEstimate & { logWeights: Float64Array; schedule: Float64Array } {
  return runAISOrSchedule(engine, model, opts, false) as LogZEstimate & { logWeights: Float64Array; schedule: Float64Array };
}

/** An AIS schedule on its own (aisSchedulePilots). */
export interface AISScheduleOnly {
  schedule: Float64Array;
  /** Site updates the pilot runs made (0 unless the schedule is adaptive). */
  siteUpdates: number;
}

/**
 * The β values runAIS with these options uses — for an adaptive schedule, from the same pilot runs —
 * without the runs themselves: so runs done elsewhere with this schedule (ais-split.ts pieces) are
 * runAIS's runs. Discrete transitions (tree, gibbs) on pairwise models (aisSplits).
 */
export function aisSchedulePilots(engine: Engine, model: Model, opts: AISOptions = {}): AISScheduleOnly {
  return runAISOrSchedule(engine, model, opts, true) as AISScheduleOnly;
}

function runAISOrSchedule(engine: Engine, model: Model, opts: AISOptions, scheduleOnly: boolean): (LogZEstimate & { logWeights: Float64Array; schedule: Float64Array }) | AISScheduleOnly {
  // Models with a factor of arity > 2, or pair tables that would not fit, take Gibbs transitions on
  // the factor graph (bindings/logz/ais-fg.ts).
  const fits = canonicalFits(model);
  const o = { ...AIS_DEFAULTS, ...(fits ? {} : { transition: 'gibbs' as const }), ...definedOnly(opts) };
  checkCount('runs', o.runs, 1);
  checkCount('sweepsPerStep', o.sweepsPerStep, 1, MAX_LOOP_COUNT);
  checkCount('steps', o.steps, 1);
  if (!AIS_TRANSITIONS.includes(o.transition)) throw new ModelError(`AIS transition must be one of ${AIS_TRANSITIONS.join(', ')}, got "${String(o.transition)}"`);
  const population = o.population ?? 1;
  checkCount('population', population, 1);
  if (o.runs % population !== 0) throw new ModelError(`AIS runs (${o.runs}) must be a multiple of the population size (${population})`);
  if ((o.firstRun ?? 0) % population !== 0) throw new ModelError(`AIS firstRun (${o.firstRun}) must be a multiple of the population size (${population})`);
  if (o.collapse && (o.transition !== 'tree' || population > 1)) throw new ModelError('collapsed AIS weights need the tree transition and independent runs (population 1)');
  if (o.partition !== undefined && o.transition !== 'tree') throw new ModelError(`an AIS tree partition applies to transition 'tree', not '${o.transition}'`);
  if (o.relaxation !== undefined && o.transition !== 'relaxed' && o.transition !== 'hmc') throw new ModelError(`AIS relaxation options apply to transition 'relaxed' or 'hmc', not '${o.transition}'`);
  if ((o.leapfrogSteps !== undefined || o.stepSize !== undefined) && o.transition !== 'hmc') throw new ModelError(`AIS leapfrogSteps and stepSize apply to transition 'hmc', not '${o.transition}'`);
  checkCount('pilotRuns', o.pilotRuns, 2);
  const firstRun = o.firstRun ?? 0;
  checkCount('firstRun', firstRun, 0, PILOT_CHAIN - o.runs);
  const pilotSteps = o.pilotSteps ?? Math.max(200, Math.ceil(o.steps / 4));
  checkCount('pilotSteps', pilotSteps, 2);
  const onGraph = !model.isPairwise || (!fits && o.transition === 'gibbs');
  // hmc returned before the precision was read: f32, or any string, ran in f64 silently.
  if (o.precision !== undefined && o.precision !== 'f64' && o.precision !== 'f32') throw new ModelError(`AIS precision must be f64 or f32, got "${String(o.precision)}"`);
  if (o.precision === 'f32' && (onGraph || o.transition === 'relaxed' || o.transition === 'hmc')) throw new ModelError("AIS precision 'f32' runs in the lanes kernels only (tree or gibbs transitions on a model of free bits with finite potentials)");
  if (onGraph) {
    if (scheduleOnly) requirePairwise(model, 'an AIS schedule on its own', 'AIS on higher-order factors computes its schedule inside runAIS');
    if (o.transition !== 'gibbs') requirePairwise(model, `AIS with transition '${o.transition}'`, "AIS takes higher-order factors with transition 'gibbs' (its default for them)");
    const helpers = { chooseSchedule, runSchedule, aisStream: AIS_STREAM, populationStream: POPULATION_STREAM, resampleBelow: RESAMPLE_BELOW };
    return runFactorGraphAIS(engine, model, { ...o, pilotSteps, firstRun, population }, helpers);
  }
  if (scheduleOnly && o.transition !== 'tree' && o.transition !== 'gibbs') throw new ModelError(`an AIS schedule on its own needs transition tree or gibbs, not '${o.transition}'`);
  if (o.transition === 'relaxed' || o.transition === 'hmc') {
    if (population > 1) throw new ModelError('population annealing runs on the discrete model (transition tree or gibbs)');
    if (firstRun !== 0) throw new ModelError('firstRun applies to the discrete transitions (tree or gibbs)');
    if (o.transition === 'relaxed') return runRelaxedAIS(engine, model, o, pilotSteps);
    const helpers = { aisSchedule, adaptiveSchedule, aisLogZ0, runSchedule, aisStream: AIS_STREAM, pilotChain: PILOT_CHAIN };
    const { stepSizes: _e, ...r } = runHMCAIS(engine, model, { ...o, pilotSteps }, helpers);
    return r;
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
    const precision = o.precision ?? 'f64';
    if (precision !== 'f64' && precision !== 'f32') throw new ModelError(`AIS precision must be f64 or f32, got "${String(precision)}"`);
    const lanes: LanesSetup | null = (o.lanes ?? true) && !collapse && lanesApply(form)
      ? { engine, arena, bound, tempered, tree, seedLo: lo, seedHi: hi, stream: AIS_STREAM, sweepsPerStep: o.sweepsPerStep, precision }
      : null;
    if (precision === 'f32' && !lanes) throw new ModelError("AIS precision 'f32' runs in the lanes kernels only: a model of free bits with finite potentials, lanes not false, weights not collapsed");
    const runMany: ScheduleRuns = (betas, runs, chainBase, traces, tick) => {
      if (!lanes) return runOneByOne(betas, runs, chainBase, traces, tick);
      const done = runLanesSchedule(lanes, betas, runs, chainBase, traces, opts.signal, tick);
      sweepsDone += (betas.length - 2) * o.sweepsPerStep * done.logW.length;
      return done;
    };
    const runOneByOne: ScheduleRuns = (betas, runs, chainBase, traces, tick) =>
      runSchedule(engine, arena, betas, runs, traces, opts.signal, 'AIS', (kk, r, betaPtr, ePtr) => {
        kk.rngSeed(chain, lo, hi, chainBase + r, AIS_STREAM);
        sweepsDone += (betas.length - 2) * o.sweepsPerStep;
        if (collapse) return kk.aisCollapsedRun(bound.header, tempered, chain, betaPtr, betas.length, o.sweepsPerStep, tree!.header, tree!.work, ePtr, zSlot);
        return kk.aisRun(bound.header, tempered, chain, betaPtr, betas.length, o.sweepsPerStep, scratch, ePtr, 0, tree?.header ?? 0, tree?.work ?? 0);
      }, tick);
    const betas = chooseSchedule(o, pilotSteps, runMany);
    if (scheduleOnly) return { schedule: betas, siteUpdates: sweepsDone * form.n };
    const tick = progressTicker(o.onProgress, 'ais', o.runs);
    let w: Float64Array;
    let resamplings = NaN;
    if (population > 1 && lanes) {
      const done = runPopulationsLanes(lanes, betas, population, o.runs / population, firstRun, POPULATION_STREAM, RESAMPLE_BELOW, opts.signal, tick);
      w = done.logZ;
      resamplings = done.resamplings;
      sweepsDone += (betas.length - 2) * o.sweepsPerStep * population * w.length;
    } else if (population > 1) {
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
        tick?.(population);
      }
      resamplings /= Math.max(1, out.length);
      w = Float64Array.from(out);
    } else {
      w = runMany(betas, o.runs, firstRun, false, tick).logW;
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
        kernel: 'canonical',
        lanes: lanes !== null,
        precision,
      },
      seconds: (performance.now() - t0) / 1000,
      warnings: aisWarnings({ weightESS: lme.ess, estimates: done, population, partial: done * population < o.runs, logWeightSD }),
    };
  } finally {
    bound.dispose();
  }
}

/** AIS on the relaxed joint p_β(x, s) with block-Gibbs transitions (assembly/aisrelaxed.ts). */
function runRelaxedAIS(engine: Engine, model: Model, o: AISOptions & { seed: number; runs: number; steps: number; sweepsPerStep: number; pilotRuns: number; schedule: AISSchedule }, pilotSteps: number): LogZEstimate & { logWeights: Float64Array; schedule: Float64Array } {
  const t0 = performance.now();
  const relax = buildRelaxation(engine, model, o.relaxation ?? {});
  const form = relax.form;
  const logZ0 = aisLogZ0(form);
  const bound = new BoundRelaxation(engine, relax);
  try {
    const arena = bound.arena;
    const chain = arena.alloc(engine.kernels.aisRelaxedStateBytes(bound.relaxed));
    const [lo, hi] = seedWords(o.seed);
    const runMany: ScheduleRuns = (betas, runs, chainBase, traces, tick) =>
      runSchedule(engine, arena, betas, runs, traces, o.signal, 'relaxed AIS', (kk, r, betaPtr, ePtr) => {
        kk.rngSeed(chain, lo, hi, chainBase + r, AIS_STREAM);
        return kk.aisRelaxedRun(bound.relaxed, chain, betaPtr, betas.length, o.sweepsPerStep, ePtr);
      }, tick);
    const betas = chooseSchedule(o, pilotSteps, runMany);
    const w = runMany(betas, o.runs, 0, false, progressTicker(o.onProgress, 'ais', o.runs)).logW;
    return relaxedAISResult(w, betas, relax, logZ0, o, 'relaxed', t0);
  } finally {
    bound.dispose();
  }
}

// ---------------------------------------------------------------------------------------------
// One entry point.

/** Options of `estimateLogZ`: the estimator's name with that estimator's options. */
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
    // The estimator's name is the request's, not an option of the estimator (which refuses it).
    case 'zhang':
      return runZhangLogZ(engine, model, withoutEstimator(opts));
    case 'mirror':
      return runMirrorLogZ(engine, model, withoutEstimator(opts));
    case 'chib':
      return runChibLogZ(engine, model, withoutEstimator(opts));
    default:
      throw new ModelError(`unknown log Z estimator "${String((opts as { estimator: unknown }).estimator)}"; expected ${LOGZ_ESTIMATORS.join(', ')}`);
  }
}

/** A request's options without its `estimator`. */
function withoutEstimator<T extends { estimator: string }>(opts: T): Omit<T, 'estimator'> {
  const { estimator: _e, ...rest } = opts;
  return rest;
}
