// Runs of the continuous samplers (continuous-sampler.ts): chains, warm-up, batches, Rao–Blackwellised
// estimators E[p(s|x)] and diagnostics, shared by runDHMC, runMALA and runULA and by the parallel
// hosts (a plan, the chains of a plan, and a reducer that folds chain events into a result).

import { checkCount, definedOnly, MAX_CHAINS } from '../core/options.ts';
import type { Engine } from '../core/engine.ts';
import type { RelaxationData } from '../relax/relaxation-bound.ts';
import { bitsToMarginals, type CanonicalForm } from '../core/canonical.ts';
import { BatchMeans, splitEvenly } from './estimators.ts';
import type { InferenceResult, Progress } from '../core/result.ts';
import { CancelledError, EngineError, ModelError } from '../core/errors.ts';
import { seedWords } from '../core/seed.ts';
import { summarizeTraces } from './diagnostics.ts';
import { adaptationWarnings, convergenceWarnings, seriesDiagnostics } from './convergence.ts';
import { chainOrderFolder, range, relaxedBatchWidth } from './chains.ts';
import { ContinuousSampler, checkStepSize, type ContinuousState, type IntegratorName, type MoveKind, type Parametrisation } from './continuous-sampler.ts';

// ---------------------------------------------------------------------------------------------
// Runs: chains, warm-up, batches, estimators and diagnostics.

/**
 * Options of the continuous samplers' runs (`runDHMC`, `runMALA`, `runULA`); defaults in DHMC_DEFAULTS,
 * MALA_DEFAULTS, ULA_DEFAULTS.
 */
export interface ContinuousRunOptions {
  /** Seed: chain c draws from streams keyed by (seed, c) (default 1). */
  seed?: number;
  /** Independent chains (default 4). */
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
  /** How the chains move: 'whitened' (default) or 'zhang' (see Parametrisation). */
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
  /** Called as transitions are done (phase '<method>-warmup' during warm-up, then '<method>'). */
  onProgress?: (p: Progress) => void;
  /** Stops the run; the result is then marked partial and uses the batches completed. */
  signal?: AbortSignal;
}

/** ContinuousRunOptions' keys: every option runMALA and runULA read (runDHMC reads these and its integrator's). */
export const CONTINUOUS_RUN_OPTION_KEYS: readonly string[] = [
  'seed', 'chains', 'samples', 'burnin', 'batches', 'targetAccept', 'stepSize', 'adaptMass', 'parametrisation', 'pairs', 'empirical', 'trace', 'traceBudget',
  'onProgress', 'signal',
];

/** Defaults of every continuous run (runDHMC's; MALA and ULA override what differs). */
export const DHMC_DEFAULTS = {
  seed: 1, chains: 4, samples: 2000, burnin: 500, batches: 20, leapfrogSteps: 5, targetAccept: 0.9,
  adaptMass: false, parametrisation: 'whitened', empirical: true, integrator: 'leapfrog', trace: 'auto', traceBudget: 2 ** 21,
} as const;

/** Rao–Blackwellised pairwise marginals of user-variable pairs. */
export interface PairMarginals {
  /** The pairs (u, v), as requested. */
  pairs: [number, number][];
  /** tables[t][k·K_v + l] = p(x_u = k, x_v = l). */
  tables: Float64Array[];
  /** Batch-means standard error of each entry of `tables`. */
  stdErr: Float64Array[];
}

/**
 * What the continuous samplers return: the InferenceResult with pairwise and empirical marginals and per-variable
 * ESS and R̂.
 */
export interface ContinuousResult extends InferenceResult {
  /** Rao–Blackwellised pairwise marginals of the requested pairs, with batch-means errors. */
  pairMarginals: PairMarginals | null;
  /** Marginals from draws s ~ p(s|x), with batch-means errors (null when not requested). */
  empiricalMarginals: Float64Array[] | null;
  /** Batch-means standard errors of empiricalMarginals (null when not requested). */
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
  checkCount('chains', chains, 1, MAX_CHAINS);
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
    // null, 5 or {} threw "tr is not iterable"; 'x' was read letter by letter.
    if (tr === null || typeof tr !== 'object' || typeof (tr as Iterable<number>)[Symbol.iterator] !== 'function') throw new ModelError(`trace must be 'auto', 'none' or a list of variables, got ${tr === null ? 'null' : typeof tr === 'string' ? `"${tr}"` : typeof tr}`);
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

/** Chains per lockstep batch: HMC's chains share batched gradients; Langevin chains run one by one. */
export function continuousWidth(sampler: ContinuousSampler, plan: ContinuousPlan): number {
  if (sampler.move !== 'hmc' || !sampler.form) return 1;
  const { m, n } = sampler;
  // A chain's work area, accumulators and trace, and its share of the batch's scratch (hmc_batch.ts).
  return relaxedBatchWidth(8 * (13 * m + 4 * n + plan.traceCapacity * plan.traceCodes.length + m + 2 * n + 8));
}

/**
 * Runs the given chains of a plan (all of them in runContinuous, a worker's share in runParallel) in
 * consecutive batches of continuousWidth chains in lockstep, reporting each chain's events as they
 * happen (a batch's chains interleaved, each chain's events those of the chain run alone, bit for bit);
 * `onProgress(k)`: k more transitions done. Returns false when the signal stopped it (an unfinished
 * batch is dropped with its chains).
 */
export function continuousChains(sampler: ContinuousSampler, plan: ContinuousPlan, chains: Iterable<number>, emit: (chain: number, e: ContinuousEvent) => void, signal?: AbortSignal, onProgress?: (warmup: boolean, k: number) => void): boolean {
  const abort = () => signal?.aborted ?? false;
  const chunk = sampler.chunkSize();
  const all = [...chains];
  const width = continuousWidth(sampler, plan);
  for (let at = 0; at < all.length; at += width) {
    if (abort()) return false;
    const ids = all.slice(at, at + width);
    const states: ContinuousState[] = [];
    try {
      for (const c of ids) states.push(sampler.init(plan.seed, c));
      let reported = 0;
      const wu = sampler.warmupChains(states, plan.burnin, {
        targetAccept: plan.targetAccept,
        adaptMass: plan.adaptMass,
        stepSize: plan.opts.stepSize,
        onChunk: (k) => {
          onProgress?.(true, (k - reported) * ids.length);
          reported = k;
          return !abort();
        },
      });
      ids.forEach((c, i) => emit(c, { kind: 'warmup', iterations: wu[i].iterations, divergences: wu[i].divergences, gradientEvaluations: wu[i].gradientEvaluations, stopped: wu[i].stopped }));
      if (wu[0].stopped) return false;
      ids.forEach((c, i) => emit(c, { kind: 'stepSize', value: sampler.stepSize(states[i]) }));
      for (const s of states) sampler.resetTrace(s);
      for (const len of splitEvenly(plan.samples, plan.nBatches)) {
        for (let left = len; left > 0; ) {
          if (abort()) return false;
          const it = Math.min(chunk, left);
          const infos = sampler.stepChains(states, it, { accumulate: true, trace: true });
          left -= it;
          ids.forEach((c, i) => emit(c, { kind: 'step', ...infos[i] }));
          onProgress?.(false, it * ids.length);
        }
        ids.forEach((c, i) => {
          const sums = sampler.readAndClear(states[i]);
          emit(c, { kind: 'batch', prob: sums.prob, empirical: sums.empirical, pairs: sums.pairs, length: len });
        });
      }
      ids.forEach((c, i) => emit(c, { kind: 'trace', series: sampler.trace(states[i]) }));
    } finally {
      for (const s of states) sampler.release(s);
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
    if (stats.batches === 0) throw new CancelledError(`${spec.method} was cancelled before the first batch completed: no estimate`);
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
    // A stopped run: its traces are those of the chains that completed (a chain's trace comes at its
    // end), while its marginals pool the batches of every chain begun. With 4 chains begun and none
    // or one completed, the only warning was "one chain" and R̂ and ESS were null, unexplained.
    const completed = traces[0].length, begun = stats.chains;
    const stopped = partial && completed < begun
      ? [`the run was stopped: ${completed > 0 ? `R̂ and ESS come from the ${completed} chain${completed > 1 ? 's' : ''} that completed` : 'no chain completed its samples, so there is no R̂ or ESS'}, while the marginals pool the batches of the ${begun} chain${begun > 1 ? 's' : ''} begun; nothing checks that the unfinished ones mixed`]
      : [];
    // R̂ and ESS come from the draws here, so convergenceWarnings' "too few batch means" never fires:
    // with batches: 1 the standard errors rest on the chain means' spread alone (3 degrees of
    // freedom for 4 chains), and a 4×4 grid's came out 12.6 standard errors off, silently.
    const few = plan.nBatches < MIN_BATCHES_PER_CHAIN
      ? [`only ${plan.nBatches} batch mean${plan.nBatches > 1 ? 's' : ''} per chain: the standard errors rest on ${plan.chains * plan.nBatches} numbers and can be far too small; use more batches (at least ${MIN_BATCHES_PER_CHAIN})`]
      : [];
    const warnings = [
      ...stopped,
      ...few,
      // R̂ and ESS (and ESS's floor) are the completed chains'; "one chain" only when one was begun.
      ...(completed > 0 || !partial ? convergenceWarnings(conv, { chains: completed, seriesLength: plan.traceCapacity, unit: 'draws', variables: traceOwner.length - 1 }).filter((w) => !(partial && begun > 1 && w.startsWith('one chain'))) : []),
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
        // A stopped run: what was recorded, per chain on average (see chains.ts batchMeansResult).
        samplesPerChain: partial ? Math.floor(stats.samples / plan.chains) : plan.samples,
        warmup: plan.burnin,
        batchesPerChain: partial ? Math.floor(stats.batches / plan.chains) : plan.nBatches,
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

/** Batch means per chain below which the standard errors get a warning (the discrete samplers' R̂ and ESS need 4). */
const MIN_BATCHES_PER_CHAIN = 4;

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
    const fold = chainOrderFolder<ContinuousEvent>(plan.chains, continuousWidth(sampler, plan), (e, c) => red.add(e, c));
    const finished = continuousChains(sampler, plan, range(plan.chains), fold.emit, opts.signal, (warmup, k) => {
      done += k;
      opts.onProgress?.({ phase: warmup ? `${spec.method}-warmup` : spec.method, done, total });
    });
    fold.finish();
    const samplingSeconds = (performance.now() - t0) / 1000;
    return red.result((performance.now() - t0) / 1000, samplingSeconds, !finished);
  } finally {
    sampler.dispose();
  }
}

function finiteOrNull(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}
