// AIS on the relaxed density p_β(x) (s summed out, as DHMC samples it) with HMC transitions
// (assembly/logz/ais_hmc.ts): runAIS's transition 'hmc'.
//
// Step sizes: one ε per temperature. Unless given, pilot runs along a linear schedule adapt ε as they
// go (towards TARGET_ACCEPT); ε(β) is their mean log ε, smoothed over neighbouring temperatures and
// interpolated onto the final schedule. The pilot runs' weights are not used (their kernel depends on
// their own history); the estimating runs keep ε(β) fixed, so every transition leaves f_β invariant
// and each run's weight is unbiased for Z_1/Z_0. The same pilot runs' energy traces space an
// adaptive schedule.
import type { Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import type { CanonicalForm } from '../core/canonical.ts';
import { CancelledError, EngineError, ModelError } from '../core/errors.ts';
import { seedWords } from '../core/seed.ts';
import { progressTicker } from '../core/result.ts';
import { checkCount, MAX_LOOP_COUNT } from '../core/options.ts';
import { buildRelaxation, type RelaxationOptions } from '../relax/relaxation.ts';
import { BoundRelaxation } from '../relax/relaxation-bound.ts';
import { aisWeightStats, type AISSchedule, type LogZEstimate } from './estimate.ts';
import { aisWarnings } from './logz-checks.ts';
import type { AISHelpers, FactorGraphAISRun } from './ais-fg.ts';
import type { Relaxation } from '../relax/relaxation.ts';

/** What runAIS lends this file: its schedules, run loop, log Z_0 and stream tags. */
export interface HMCAISHelpers {
  aisSchedule(schedule: Exclude<AISSchedule, 'adaptive'>, steps: number): Float64Array;
  adaptiveSchedule(pilotBetas: Float64Array, energies: Float64Array[], steps: number): Float64Array;
  aisLogZ0(form: CanonicalForm): number;
  runSchedule: AISHelpers['runSchedule'];
  aisStream: number;
  pilotChain: number;
}

/** runAIS's options as this file takes them (defaults applied; sweepsPerStep: HMC transitions per temperature). */
export type HMCAISRun = Omit<FactorGraphAISRun, 'firstRun' | 'population'> & {
  relaxation?: RelaxationOptions;
  leapfrogSteps?: number;
  stepSize?: number;
};

/** Leapfrog steps per HMC transition by default (as DHMC's). */
export const AIS_HMC_LEAPFROG = 5;
/** Acceptance rate the pilot runs' step sizes aim at. */
const TARGET_ACCEPT = 0.8;
/** ε at β = 0 where the pilot starts: on N(0, I), five leapfrog steps of 1 accept about 90 %. */
const PILOT_START_EPS = 1;

/** ε at each β of `betas`: the pilots' mean log ε at their β, smoothed, linearly interpolated. */
export function stepSizeProfile(pilotBetas: Float64Array, pilotEps: Float64Array[], betas: Float64Array): Float64Array {
  const T = pilotBetas.length;
  const mean = new Float64Array(T);
  for (let t = 1; t < T - 1; t++) {
    for (const e of pilotEps) mean[t] += Math.log(e[t]) / pilotEps.length;
  }
  // Entries 0 and T−1 carry no transition: copy their neighbours.
  mean[0] = mean[1];
  mean[T - 1] = mean[T - 2];
  const half = Math.max(1, Math.floor(T / 50));
  const smooth = new Float64Array(T);
  for (let t = 0; t < T; t++) {
    const lo = Math.max(0, t - half), hi = Math.min(T, t + half + 1);
    for (let k = lo; k < hi; k++) smooth[t] += mean[k] / (hi - lo);
  }
  const out = new Float64Array(betas.length);
  let k = 1;
  for (let i = 0; i < betas.length; i++) {
    while (k < T - 1 && pilotBetas[k] < betas[i]) k++;
    const f = Math.min(1, Math.max(0, (betas[i] - pilotBetas[k - 1]) / (pilotBetas[k] - pilotBetas[k - 1])));
    out[i] = Math.exp(smooth[k - 1] + f * (smooth[k] - smooth[k - 1]));
  }
  return out;
}

/** AIS on p_β(x) with HMC transitions (see the file comment); the AIS result of runAIS. */
export function runHMCAIS(engine: Engine, model: Model, o: HMCAISRun, h: HMCAISHelpers): LogZEstimate & { logWeights: Float64Array; schedule: Float64Array; stepSizes: Float64Array } {
  const t0 = performance.now();
  const leapfrog = o.leapfrogSteps ?? AIS_HMC_LEAPFROG;
  checkCount('leapfrogSteps', leapfrog, 1, MAX_LOOP_COUNT);
  if (o.stepSize !== undefined && !(o.stepSize > 0 && o.stepSize < 2)) throw new ModelError(`AIS HMC stepSize must be a number in (0, 2), got ${o.stepSize}`);
  const relax = buildRelaxation(engine, model, o.relaxation ?? {});
  const form = relax.form;
  const logZ0 = h.aisLogZ0(form);
  const bound = new BoundRelaxation(engine, relax);
  try {
    const arena = bound.arena;
    const k = engine.kernels;
    const chain = arena.alloc(k.aisHMCStateBytes(bound.relaxed));
    const info = arena.allocF64(2);
    const [lo, hi] = seedWords(o.seed);
    // runMany with fixed ε (eps per β) or, when adapt, with adapting ε whose values are collected.
    const runMany = (betas: Float64Array, eps: Float64Array | null, runs: number, chainBase: number, traces: boolean, tick?: (runs: number) => void) => {
      const epsPtr = arena.allocF64(eps ?? betas.length);
      const used: Float64Array[] = [];
      const res = h.runSchedule(engine, arena, betas, runs, traces, o.signal, 'HMC AIS', (kk, r, betaPtr, ePtr) => {
        kk.rngSeed(chain, lo, hi, chainBase + r, h.aisStream);
        if (!eps) arena.f64(epsPtr, betas.length).fill(PILOT_START_EPS);
        const lw = kk.aisHMCRun(bound.relaxed, chain, betaPtr, betas.length, o.sweepsPerStep, leapfrog, epsPtr, eps ? 0 : TARGET_ACCEPT, ePtr, eps ? info : 0);
        if (!eps) used.push(arena.readF64(epsPtr, betas.length));
        return lw;
      }, tick);
      return { ...res, used };
    };
    let betas: Float64Array;
    let eps: Float64Array;
    const adaptive = o.schedule === 'adaptive';
    if (adaptive || o.stepSize === undefined) {
      const pilotBetas = h.aisSchedule('linear', o.pilotSteps);
      const fixed = o.stepSize === undefined ? null : new Float64Array(pilotBetas.length).fill(o.stepSize);
      const pilot = runMany(pilotBetas, fixed, o.pilotRuns, h.pilotChain, adaptive);
      if (pilot.logW.length === 0) throw new CancelledError('AIS was cancelled before the first run completed: no estimate');
      const finite = pilot.energies.filter((e) => e.every(Number.isFinite));
      betas = !adaptive ? h.aisSchedule(o.schedule as Exclude<AISSchedule, 'adaptive'>, o.steps)
        : finite.length >= 2 ? h.adaptiveSchedule(pilotBetas, finite, o.steps) : h.aisSchedule('linear', o.steps);
      eps = fixed ? new Float64Array(betas.length).fill(o.stepSize!) : stepSizeProfile(pilotBetas, pilot.used, betas);
    } else {
      betas = h.aisSchedule(o.schedule as Exclude<AISSchedule, 'adaptive'>, o.steps);
      eps = new Float64Array(betas.length).fill(o.stepSize!);
    }
    arena.f64(info, 2).fill(0);
    const w = runMany(betas, eps, o.runs, 0, false, progressTicker(o.onProgress, 'ais', o.runs)).logW;
    if (w.length === 0) throw new CancelledError('AIS was cancelled before the first run completed: no estimate');
    const [accepted, proposals] = arena.readF64(info, 2);
    let epsMin = Infinity, epsMax = 0;
    for (let t = 1; t < eps.length - 1; t++) {
      epsMin = Math.min(epsMin, eps[t]);
      epsMax = Math.max(epsMax, eps[t]);
    }
    const hmc = {
      leapfrogSteps: leapfrog,
      stepSizeMin: Number.isFinite(epsMin) ? epsMin : null,
      stepSizeMax: epsMax > 0 ? epsMax : null,
      acceptRate: proposals > 0 ? accepted / proposals : null,
    };
    return { ...relaxedAISResult(w, betas, relax, logZ0, o, 'hmc', t0, hmc), stepSizes: eps };
  } finally {
    bound.dispose();
  }
}

/**
 * The result of AIS on the relaxed path (transition 'relaxed' or 'hmc') from its log weights: the
 * discrete transitions' diagnostic keys too (null: not applicable), plus `extra`.
 */
export function relaxedAISResult(
  w: Float64Array, betas: Float64Array, relax: Relaxation, logZ0: number,
  o: { runs: number; sweepsPerStep: number; schedule: AISSchedule; seed: number }, transition: 'relaxed' | 'hmc', t0: number,
  extra: Record<string, number | string | boolean | null> = {},
): LogZEstimate & { logWeights: Float64Array; schedule: Float64Array } {
  const { lme, deadRuns, logWeightSD } = aisWeightStats(w);
  return {
    logZ: lme.value + logZ0 + relax.form.logZOffset,
    logZStdErr: w.length > 1 ? lme.stdErr : NaN,
    logZKind: 'estimate',
    logWeights: w,
    schedule: betas,
    diagnostics: {
      estimator: 'ais',
      runs: w.length,
      temperatures: betas.length - 1,
      sweepsPerStep: o.sweepsPerStep,
      transition,
      collapsed: false,
      population: 1,
      populations: null,
      resamplingsPerPopulation: null,
      treeBlocks: null,
      factor: relax.factorKind,
      dimension: relax.factor.m,
      schedule: typeof o.schedule === 'string' ? o.schedule : 'custom',
      weightESS: lme.ess,
      logWeightSD,
      deadRuns,
      siteUpdates: null,
      logZ0,
      partial: w.length < o.runs,
      seed: o.seed,
      kernel: 'relaxed',
      lanes: false,
      precision: 'f64',
      ...extra,
    },
    seconds: (performance.now() - t0) / 1000,
    warnings: aisWarnings({ weightESS: lme.ess, estimates: w.length, population: 1, partial: w.length < o.runs, logWeightSD }),
  };
}
