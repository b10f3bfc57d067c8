// Average log-likelihood per sample of binary data under a learned machine, hidden units summed out
// (assembly/learn/evaluate.ts): log Z exactly by enumerating the visible states where that is cheap,
// otherwise by AIS from the base-rate model (Salakhutdinov & Murray 2008).

import type { Engine } from '../core/engine.ts';
import { ModelError } from '../core/errors.ts';
import { seedWords } from '../core/seed.ts';
import { checkCount, checkOptionKeys, definedOnly } from '../core/options.ts';
import { aisWeightStats, logMeanExp } from '../logz/estimate.ts';
import { aisWarnings } from '../logz/logz-checks.ts';
import { BoundMachine, checkStates, type BinaryData, type MachineParams } from './machine.ts';

export type { BinaryData } from './machine.ts';


/** Options of `logLikelihood()`; defaults in LIKELIHOOD_DEFAULTS. */
export interface LikelihoodOptions {
  /** Seed of the AIS runs (default 1; in learn(), learn's seed). */
  seed?: number;
  /** AIS runs. */
  runs?: number;
  /** AIS temperatures (linear in β from 0 to 1). */
  steps?: number;
  /** Data whose visible marginals make the base-rate start (default: the data evaluated). */
  baseData?: BinaryData;
  /** 'auto': exact when the visible configurations number at most 2^maxExactVisible, else AIS. */
  method?: 'auto' | 'exact' | 'ais';
  /**
   * Largest number of visible units (binary; Potts: log₂ of the visible configurations) summed exactly under
   * 'auto' (default 20).
   */
  maxExactVisible?: number;
  /**
   * A log Z already estimated for these parameters (e.g. by the call for the training data), reused instead of
   * running AIS again: `value` and `stdErr` of a previous result's logZ and logZStdErr.
   */
  logZ?: { value: number; stdErr: number };
}

/** Defaults of LikelihoodOptions. */
export const LIKELIHOOD_DEFAULTS = { seed: 1, runs: 100, steps: 2000, method: 'auto', maxExactVisible: 20 } as const;

/** The average log-likelihood of a data set under a machine, with how log Z was found. */
export interface LogLikelihood {
  /** Average log-likelihood per sample (nats). */
  value: number;
  /** Standard error of `value` from the log Z estimate (0 when exact). */
  stdErr: number;
  /** Standard deviation of the per-sample log-likelihoods over √samples: the spread over data sets (NaN for one sample; null in JSON). */
  sampleStdErr: number;
  /** Natural log of the machine's partition function. */
  logZ: number;
  /** Standard error of logZ (nats; 0 when exact). */
  logZStdErr: number;
  /** How logZ was found: enumeration of visible states or AIS. */
  method: 'exact' | 'ais';
  /** Number of data rows evaluated. */
  samples: number;
  /** AIS runs (AIS only). */
  aisRuns?: number;
  /** AIS temperatures (AIS only). */
  aisSteps?: number;
  /** Effective sample size of the AIS weights, (Σw)²/Σw² (AIS only). */
  aisEss?: number;
  /**
   * Caveats about the AIS estimate, one sentence each (empty when none; always empty when exact): the checks
   * `infer`'s AIS runs (logz-checks.ts: fewer than 8 runs, a low weight ESS, log weights spread too widely).
   * They cannot see a mode no run reached.
   */
  warnings: string[];
}

/** Every option logLikelihood takes. */
const LIKELIHOOD_KEYS: readonly string[] = [...Object.keys(LIKELIHOOD_DEFAULTS), 'baseData', 'logZ'];

/**
 * The options with defaults filled in, checked: names (a misspelt `method: 'exct'` ran AIS), the
 * method, counts. learn() calls it before training, so a bad option does not cost the run.
 */
export function checkLikelihoodOptions(opts: LikelihoodOptions = {}): LikelihoodOptions & { seed: number; runs: number; steps: number; method: 'auto' | 'exact' | 'ais'; maxExactVisible: number } {
  checkOptionKeys(opts, LIKELIHOOD_KEYS, 'likelihood');
  const o = { ...LIKELIHOOD_DEFAULTS, ...definedOnly(opts) } as LikelihoodOptions & { seed: number; runs: number; steps: number; method: 'auto' | 'exact' | 'ais'; maxExactVisible: number };
  if (!['auto', 'exact', 'ais'].includes(o.method)) throw new ModelError(`likelihood method must be auto, exact or ais, got "${String(o.method)}"`);
  checkCount('runs', o.runs, 2);
  checkCount('steps', o.steps, 2);
  if (!(typeof o.maxExactVisible === 'number' && o.maxExactVisible >= 0)) throw new ModelError(`maxExactVisible must be a number ≥ 0, got ${String(o.maxExactVisible)}`);
  return o;
}

/**
 * The base-rate data fit the machine: its columns are the visible units and its values states
 * (a 7 in binary data was counted into another column's frequencies).
 */
export function checkBaseData(base: BinaryData, cols: number, states: number): void {
  if (base.cols !== cols) throw new ModelError(`baseData has ${base.cols} columns, but the machine has ${cols} visible units`);
  if (!(Number.isInteger(base.rows) && base.rows >= 1)) throw new ModelError(`baseData's rows must be an integer ≥ 1, got ${base.rows}`);
  if (base.values?.length !== base.rows * base.cols) throw new ModelError(`baseData has ${base.values?.length} values, expected ${base.rows} × ${base.cols}`);
  try {
    checkStates(base, states);
  } catch (e) {
    throw new ModelError(`baseData ${(e as Error).message}`);
  }
}

/** Tag of the AIS runs' streams (the learner's particles use other tags). */
const AIS_STREAM = 41;

/**
 * The base-rate biases, from each column's smoothed state frequencies: binary (states 2, one bit a
 * column) the log-odds; Potts (one-hot, K bits a column) the log frequencies.
 */
export function baseRateBiases(d: BinaryData, states = 2, oneHot = false): Float64Array {
  const K = states, count = new Float64Array(d.cols * K);
  for (let r = 0; r < d.rows; r++) for (let c = 0; c < d.cols; c++) count[c * K + d.values[r * d.cols + c]]++;
  if (!oneHot) {
    return Float64Array.from({ length: d.cols }, (_, c) => Math.log((count[c * 2 + 1] + 0.5) / (count[c * 2] + 0.5)));
  }
  return count.map((x) => Math.log((x + 0.5 / K) / (d.rows + 0.5)));
}

function logSumExp(x: ArrayLike<number>): number {
  let m = -Infinity, t = 0;
  for (let i = 0; i < x.length; i++) m = Math.max(m, x[i]);
  for (let i = 0; i < x.length; i++) t += Math.exp(x[i] - m);
  return m + Math.log(t);
}

/**
 * Average log-likelihood per sample (nats) of `data` under `params`, hidden units summed out; log Z exact by
 * enumeration when small enough, otherwise by AIS from the base-rate model.
 */
export function logLikelihood(engine: Engine, params: MachineParams, data: BinaryData, opts: LikelihoodOptions = {}): LogLikelihood {
  const o = checkLikelihoodOptions(opts);
  if (data.rows < 1) throw new ModelError('no data to evaluate');
  // A base with other columns summed extra terms into log Z₀ or read its biases past their end (8 units: −10.95 and −1.70 against −5.30).
  if (o.baseData) checkBaseData(o.baseData, params.nVisible, params.states);
  // Visible configurations to enumerate, as bits of entropy: nVisible · log2 K.
  const size = params.nVisible * Math.log2(params.states);
  const exact = o.method === 'exact' || (o.method === 'auto' && size <= o.maxExactVisible);
  if (exact && size > 30) throw new ModelError(`exact log-likelihood enumerates ${params.states}^${params.nVisible} visible states: too many (at most 2^30)`);
  const m = new BoundMachine(engine, params.kind, params.nVisible, params.nHidden, params.states);
  try {
    m.set(params);
    const k = engine.kernels, ar = m.arena, n = m.nBits, vb = m.visibleBits;
    const dp = m.loadData(data);
    const out = ar.allocF64(data.rows);
    engine.call('learn log-visible', (kk) => kk.learnLogVisible(m.header, dp, vb, data.rows, vb, out));
    const lv = ar.readF64(out, data.rows);
    let mean = 0;
    for (const x of lv) mean += x;
    mean /= data.rows;
    let ss = 0;
    for (const x of lv) ss += (x - mean) ** 2;
    const sampleStdErr = data.rows > 1 ? Math.sqrt(ss / (data.rows - 1) / data.rows) : NaN;
    if (exact) {
      const s = ar.alloc(n);
      const logZ = engine.call('learn exact log Z', (kk) => kk.learnExactLogZ(m.header, vb, m.width, s));
      return { value: mean - logZ, stdErr: 0, sampleStdErr, logZ, logZStdErr: 0, method: 'exact', samples: data.rows, warnings: [] };
    }
    if (opts.logZ) {
      const { value: lz, stdErr } = opts.logZ;
      return { value: mean - lz, stdErr, sampleStdErr, logZ: lz, logZStdErr: stdErr, method: 'ais', samples: data.rows, warnings: [] };
    }
    const b0 = baseRateBiases(o.baseData ?? data, params.states, m.width > 1);
    let logZ0 = params.nHidden * Math.LN2;
    if (m.width === 1) for (const b of b0) logZ0 += b > 0 ? b + Math.log1p(Math.exp(-b)) : Math.log1p(Math.exp(b));
    else for (let v = 0; v < params.nVisible; v++) logZ0 += logSumExp(b0.subarray(v * m.width, (v + 1) * m.width));
    const betas = Float64Array.from({ length: o.steps }, (_, t) => t / (o.steps - 1));
    const b0p = ar.allocF64(b0), bp = ar.allocF64(betas);
    const chains = ar.alloc(o.runs * (k.learnParticleBytes(m.header) >>> 0));
    const lw = ar.allocF64(o.runs), scratch = ar.allocF64(m.width);
    const [lo, hi] = seedWords(o.seed);
    engine.call('learn AIS', (kk) => kk.learnAIS(m.header, vb, m.width, b0p, bp, o.steps, chains, o.runs, lo, hi, 0, AIS_STREAM, lw, scratch));
    const w = ar.readF64(lw, o.runs), est = logMeanExp(w);
    const logZ = logZ0 + est.value;
    // infer's AIS checks (few runs, low ESS, widely spread log weights): the estimate said nothing when they failed.
    // aisWeightStats refuses all-dead runs with the factor-graph start's explanation: here they come from a bias of −∞.
    const logWeightSD = est.value > -Infinity ? aisWeightStats(w).logWeightSD : null;
    const warnings = aisWarnings({ weightESS: est.ess, estimates: o.runs, population: 1, partial: false, logWeightSD, populationAnnealing: false });
    return {
      value: mean - logZ, stdErr: est.stdErr, sampleStdErr, logZ, logZStdErr: est.stdErr, method: 'ais', samples: data.rows,
      aisRuns: o.runs, aisSteps: o.steps, aisEss: est.ess, warnings,
    };
  } finally {
    m.dispose();
  }
}
