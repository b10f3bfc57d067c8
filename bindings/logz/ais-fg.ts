// AIS and population annealing on the factor graph itself (any arity), with sequential Gibbs
// transitions: what runAIS (bindings/logz/logz.ts) runs for a model with a factor of arity > 2
// (transition 'gibbs'; the tree and relaxed transitions need the binary pairwise form). The path
// keeps the canonical AIS's convention (assembly/logz/ais_fg.ts):
//
//   f_β(x) = 1[x_v allowed by v's unary factors, every v] · exp(β Σ_f θ_f(x)),   β: 0 → 1,
//
// so f_0 is uniform over the states the arity-1 factors allow (log Z_0 = Σ_v log #allowed states)
// and log Z = log mean w + log Z_0 + the model's constant. Zero potentials: a run that starts on a
// configuration a factor of arity ≥ 2 forbids has weight 0 (log −∞, counted in deadRuns); it is the
// price of a uniform start, and models whose support is a tiny part of the configurations (SAT
// instances, tight constraint networks) leave every run dead and get no estimate.
//
// Schedules, the run loop and log-mean-exp are logz.ts's, handed in by its caller (AISHelpers), so
// this file does not import logz.ts and the two form no cycle.

import type { Arena, Engine, Kernels } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { BoundFactorGraph } from '../core/bound-fg.ts';
import { EngineError, ModelError } from '../core/errors.ts';
import { seedWords } from '../core/seed.ts';
import { progressTicker, type Progress } from '../core/result.ts';
import { aisWeightStats, type AISSchedule, type LogZEstimate } from './estimate.ts';
import { aisWarnings } from './logz-checks.ts';

type Runs = { logW: Float64Array; energies: Float64Array[] };
type ScheduleRuns = (betas: Float64Array, runs: number, chainBase: number, traces: boolean, tick?: (runs: number) => void) => Runs;

/** What runAIS lends this file: its schedule choice, run loop and stream tags. */
export interface AISHelpers {
  chooseSchedule(o: { schedule: AISSchedule; steps: number; pilotRuns: number }, pilotSteps: number, runMany: ScheduleRuns): Float64Array;
  runSchedule(engine: Engine, arena: Arena, betas: Float64Array, runs: number, traces: boolean, signal: AbortSignal | undefined, label: string, oneRun: (k: Kernels, r: number, betaPtr: number, ePtr: number) => number, tick?: (runs: number) => void): Runs;
  aisStream: number;
  populationStream: number;
  resampleBelow: number;
}

export interface FactorGraphAISRun {
  seed: number;
  runs: number;
  steps: number;
  sweepsPerStep: number;
  schedule: AISSchedule;
  pilotRuns: number;
  pilotSteps: number;
  firstRun: number;
  population: number;
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
}

/** log Z_0 of f_0: Σ_v log(number of states every arity-1 factor on v allows). */
export function factorGraphLogZ0(model: Model): number {
  // Every state's flag in one array (v's at rowStart[v] …), read from the model's flat tables.
  const { n, card, scopeStart, scopeVars, tableStart, tables } = model;
  const rowStart = new Int32Array(n + 1);
  for (let v = 0; v < n; v++) rowStart[v + 1] = rowStart[v] + card[v];
  const allowed = new Uint8Array(rowStart[n]).fill(1);
  for (let f = 0; f < model.nFactors; f++) {
    if (scopeStart[f + 1] - scopeStart[f] !== 1) continue;
    const v = scopeVars[scopeStart[f]], t0 = tableStart[f];
    for (let k = 0; k < card[v]; k++) if (tables[t0 + k] === -Infinity) allowed[rowStart[v] + k] = 0;
  }
  let z = 0;
  for (let v = 0; v < n; v++) {
    let c = 0;
    for (let k = rowStart[v]; k < rowStart[v + 1]; k++) c += allowed[k];
    if (c === 0) throw new ModelError(`variable ${v} has no state with a nonzero potential: Z = 0`);
    z += Math.log(c);
  }
  return z;
}

/** AIS (population 1) or population annealing on the factor graph; the result as runAIS reports it. */
export function runFactorGraphAIS(engine: Engine, model: Model, o: FactorGraphAISRun, h: AISHelpers): LogZEstimate & { logWeights: Float64Array; schedule: Float64Array } {
  const t0 = performance.now();
  const logZ0 = factorGraphLogZ0(model);
  const P = o.population;
  const graph = BoundFactorGraph.fromModel(engine, model, 'AIS', (s) => 8 * s.maxCard + (P + 1) * (4 * s.n + 96) + 24 * P + 8 * (o.steps + 1) * 2);
  try {
    const arena = graph.arena;
    const k = engine.kernels;
    const header = graph.header;
    const scratch = arena.alloc(8 * graph.maxCard);
    const stateBytes = Number(k.aisFgStateBytes(header));
    const chain = arena.alloc(stateBytes);
    const [lo, hi] = seedWords(o.seed);
    let sweepsDone = 0;
    const runMany: ScheduleRuns = (betas, runs, chainBase, traces, tick) =>
      h.runSchedule(engine, arena, betas, runs, traces, o.signal, 'AIS', (kk, r, betaPtr, ePtr) => {
        kk.rngSeed(chain, lo, hi, chainBase + r, h.aisStream);
        sweepsDone += (betas.length - 2) * o.sweepsPerStep;
        return kk.aisFgRun(header, chain, betaPtr, betas.length, o.sweepsPerStep, scratch, ePtr);
      }, tick);
    const betas = h.chooseSchedule(o, o.pilotSteps, runMany);
    const tick = progressTicker(o.onProgress, 'ais', o.runs);
    let w: Float64Array;
    let resamplings = NaN;
    if (P > 1) {
      const stride = Math.ceil(stateBytes / 16) * 16;
      const particles = arena.alloc(stride * P);
      const pop = arena.alloc(k.rngStateBytes());
      const work = arena.alloc(k.popAnnealFgWorkBytes(header, P));
      const info = arena.allocF64(2);
      const betaPtr = arena.allocF64(betas);
      const out: number[] = [];
      resamplings = 0;
      for (let p = 0; p < o.runs / P; p++) {
        if (o.signal?.aborted) break;
        const lz = engine.call('population annealing', (kk) => {
          for (let r = 0; r < P; r++) kk.rngSeed(particles + r * stride, lo, hi, o.firstRun + p * P + r, h.aisStream);
          kk.rngSeed(pop, lo, hi, o.firstRun / P + p, h.populationStream);
          return kk.popAnnealFgRun(header, particles, stride, P, pop, betaPtr, betas.length, o.sweepsPerStep, scratch, work, info, h.resampleBelow);
        });
        if (Number.isNaN(lz)) throw new EngineError(`population ${p} produced a NaN estimate`);
        out.push(lz);
        resamplings += arena.readF64(info, 1)[0];
        sweepsDone += (betas.length - 2) * o.sweepsPerStep * P;
        tick?.(P);
      }
      resamplings /= Math.max(1, out.length);
      w = Float64Array.from(out);
    } else {
      w = runMany(betas, o.runs, o.firstRun, false, tick).logW;
    }
    const done = w.length;
    const { lme, deadRuns, logWeightSD } = aisWeightStats(w, done * P);
    return {
      logZ: lme.value + logZ0 + model.logConst,
      logZStdErr: done > 1 ? lme.stdErr : NaN,
      logZKind: 'estimate',
      logWeights: w,
      schedule: betas,
      diagnostics: {
        estimator: 'ais',
        runs: done * P,
        temperatures: betas.length - 1,
        sweepsPerStep: o.sweepsPerStep,
        transition: 'gibbs',
        collapsed: false,
        population: P,
        populations: P > 1 ? done : null,
        resamplingsPerPopulation: P > 1 ? resamplings : null,
        treeBlocks: null,
        factor: null,
        dimension: null,
        schedule: typeof o.schedule === 'string' ? o.schedule : 'custom',
        weightESS: lme.ess,
        logWeightSD,
        deadRuns,
        siteUpdates: sweepsDone * model.n,
        logZ0,
        partial: done * P < o.runs,
        seed: o.seed,
        kernel: 'factor-graph',
        lanes: false,
        precision: 'f64',
      },
      seconds: (performance.now() - t0) / 1000,
      warnings: aisWarnings({ weightESS: lme.ess, estimates: done, population: P, partial: done * P < o.runs, logWeightSD }),
    };
  } finally {
    graph.dispose();
  }
}
