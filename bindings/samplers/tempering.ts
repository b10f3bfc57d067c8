// Parallel tempering (replica exchange). The moves and swaps of all replicas run in one WASM call;
// the replicas' moves are a ReplicaKernel: single-site Gibbs on the canonical form (pairwise models,
// assembly/samplers/tempering.ts, this file), Gibbs on the factor graph itself (models with a factor
// of arity > 2, tempering-fg.ts), or HMC on the relaxed density p_β(x) (moves 'hmc',
// tempering-relaxed.ts). This file owns the ladder, its tuning during warm-up, chain memory, the
// batch means of the β = 1 marginals and the stepping-stone estimate of log Z.
//
// A run is `chains` independent tempering chains, each of R replicas on one shared ladder
// 0 ≤ β_0 < … < β_{R−1} = 1. Warm-up runs all chains round by round; after each of the first
// rounds the ladder is re-spaced from the pooled swap rates (below), then frozen: sampling sees a
// fixed ladder, so the chains are time-homogeneous Markov chains with the right invariant law.
//
// log Z (when β_0 = 0): stepping stone, log Z_s = Σ_v log K_v + Σ_k log E_{β_k}[exp((β_{k+1} − β_k) E)],
// each expectation the mean over sampling sweeps of all chains; its standard error by the delta
// method, through the batch means of the linearised series Σ_k ḡ_{b,k} / m_k (BatchMeans, so it
// sees between-chain spread as the marginals' errors do).

import type { Arena, Engine } from '../core/engine.ts';
import { requirePairwise, type Model } from '../core/model.ts';
import { canonicalFits } from '../core/model-range.ts';
import { BoundModel } from '../core/bound.ts';
import type { StateLayout } from '../core/canonical.ts';
import { CancelledError, EngineError, ModelError } from '../core/errors.ts';
import { chainSeedWords, seedWords } from '../core/seed.ts';
import { checkCount, checkOptionKeys, definedOnly, MAX_CHAINS, MAX_LOOP_COUNT } from '../core/options.ts';
import type { InferenceResult, Progress } from '../core/result.ts';
import { batchMeansResult, DiscreteReducer } from './chains.ts';
import type { RelaxationOptions } from '../relax/relaxation.ts';
import { BatchMeans, splitEvenly } from './estimators.ts';
import type { ReplicaKernel } from './replica-kernel.ts';
import { FactorGraphTemperingSampler } from './tempering-fg.ts';
import { RelaxedTemperingSampler, PT_HMC_LEAPFROG } from './tempering-relaxed.ts';
import { refuseZeroModel } from '../core/feasible.ts';

/** Stream tags: (seed, chain, PT_STREAM) for the swaps, PT_STREAM + 1 + k for replica slot k. */
export const PT_STREAM = 0x50540000; // "PT"

/** Options of parallel tempering (`runTempering`); defaults in PT_DEFAULTS. */
export interface PTOptions {
  /** Seed: chain c draws from stream (seed, c) (default 1). */
  seed?: number;
  /** Independent chains, each with its own R replicas (default 4). */
  chains?: number;
  /** Sweeps of every replica per chain that are kept. */
  samples?: number;
  /** Warm-up sweeps per chain (the ladder is tuned in their first three quarters). */
  burnin?: number;
  /** Batches per chain for the standard errors (default 20). */
  batches?: number;
  /** Number of temperatures R (≥ 2; default 8, with moves 'hmc' 16); with `ladder`, its length. */
  replicas?: number;
  /** The inverse temperatures, strictly increasing, in [0, 1], ending at 1. Default: 0, then geometric from betaMin to 1. */
  ladder?: number[];
  /** Smallest positive β of the default ladder. */
  betaMin?: number;
  /** Re-space the ladder for equal swap rates during warm-up (default: on for the default ladder, off for a given one). */
  adaptLadder?: boolean;
  /**
   * The replicas' moves: 'gibbs' (default) — a single-site Gibbs scan at each β (on the canonical
   * form, or on the factor graph itself for models with a factor of arity > 2); 'hmc' — one HMC
   * transition on the relaxed density p_β(x) (DESIGN.md §2; pairwise models without zero couplings),
   * identity mass, a step size per temperature adapted during warm-up towards 80 % acceptance.
   */
  moves?: PTMoves;
  /** moves 'hmc': leapfrog steps per transition (default 5). */
  leapfrogSteps?: number;
  /** moves 'hmc': options of the relaxation (shift and factor). */
  relaxation?: RelaxationOptions;
  /** Called as sweeps are done. */
  onProgress?: (p: Progress) => void;
  /** Stops the run; the result is then marked partial and uses the batches completed. */
  signal?: AbortSignal;
}

/**
 * Every option runTempering reads (PTOptions): it refuses any other. leapfrogSteps and relaxation are
 * read with moves 'hmc' (and refused with 'gibbs').
 */
export const PT_OPTION_KEYS: readonly string[] = [
  'seed', 'chains', 'samples', 'burnin', 'batches', 'replicas', 'ladder', 'betaMin', 'adaptLadder', 'moves', 'leapfrogSteps', 'relaxation', 'onProgress', 'signal',
];

/** The replicas' moves (PTOptions.moves). */
export type PTMoves = 'gibbs' | 'hmc';
/** All replica moves. */
export const PT_MOVES: readonly PTMoves[] = ['gibbs', 'hmc'];

/** Defaults of PTOptions; with moves 'hmc' the replicas default to PT_HMC_REPLICAS. */
export const PT_DEFAULTS = { seed: 1, chains: 4, samples: 2000, burnin: 400, batches: 20, replicas: 8, betaMin: 0.05 } as const;

/** The default number of temperatures with moves 'hmc'. */
export const PT_HMC_REPLICAS = 16;

/** Warm-up rounds; the ladder is re-spaced after each of the first ADAPT_ROUNDS of them. */
const WARMUP_ROUNDS = 8;
const ADAPT_ROUNDS = 6;

export interface PTRun {
  seed: number;
  chains: number;
  samples: number;
  burnin: number;
  batches: number;
  ladder: number[];
  adapt: boolean;
  moves: PTMoves;
  leapfrogSteps: number;
}

/** 0, then R − 1 temperatures geometric from betaMin to 1. */
export function defaultLadder(R: number, betaMin: number): number[] {
  if (R === 2) return [0, 1];
  return [0, ...Array.from({ length: R - 1 }, (_, k) => betaMin ** ((R - 2 - k) / (R - 2)))];
}

/** Refuses a ladder that is not strictly increasing in [0, 1] and ending at 1, or shorter than 2. */
export function checkLadder(ladder: readonly number[]): void {
  if (ladder.length < 2) throw new ModelError(`parallel tempering needs at least 2 replicas, got ${ladder.length}`);
  for (const b of ladder) if (!(Number.isFinite(b) && b >= 0 && b <= 1)) throw new ModelError(`ladder: every β must be a number in [0, 1], got ${b}`);
  for (let k = 1; k < ladder.length; k++) {
    if (!(ladder[k] > ladder[k - 1])) throw new ModelError(`ladder must be strictly increasing: β_${k - 1} = ${ladder[k - 1]}, β_${k} = ${ladder[k]}`);
  }
  if (ladder[ladder.length - 1] !== 1) throw new ModelError(`ladder must end at β = 1 (the model itself), got ${ladder[ladder.length - 1]}`);
}

export function ptRun(opts: PTOptions): PTRun {
  // HMC replicas' stepping-stone weights are heavy-tailed at 8 temperatures (8×8 grids: log Z a mean
  // 1.0–1.2 SE low, 3–5 SE in some seeds, more samples no cure); 16 bring it within 0.2 SE.
  const o = { ...PT_DEFAULTS, ...(opts.moves === 'hmc' && opts.ladder === undefined ? { replicas: PT_HMC_REPLICAS } : {}), ...definedOnly(opts) };
  checkCount('chains', o.chains, 1, MAX_CHAINS);
  checkCount('samples', o.samples, 1);
  checkCount('burnin', o.burnin, 0);
  checkCount('batches', o.batches, 1);
  seedWords(o.seed);
  if (opts.ladder !== undefined && opts.replicas !== undefined && opts.replicas !== opts.ladder.length) {
    throw new ModelError(`replicas (${opts.replicas}) differs from the ladder's length (${opts.ladder.length})`);
  }
  if (opts.ladder === undefined) {
    if (!Number.isInteger(o.replicas) || o.replicas < 2) throw new ModelError(`parallel tempering needs at least 2 replicas, got ${o.replicas}`);
    checkCount('replicas', o.replicas, 2, 4096);
    if (!(o.betaMin > 0 && o.betaMin < 1)) throw new ModelError(`betaMin must be in (0, 1), got ${o.betaMin}`);
  }
  const ladder = opts.ladder ? [...opts.ladder] : defaultLadder(o.replicas, o.betaMin);
  checkLadder(ladder);
  checkCount('replicas', ladder.length, 2, 4096);
  const moves = opts.moves ?? 'gibbs';
  if (!PT_MOVES.includes(moves)) throw new ModelError(`parallel tempering moves must be one of ${PT_MOVES.join(', ')}, got "${String(moves)}"`);
  if ((opts.leapfrogSteps !== undefined || opts.relaxation !== undefined) && moves !== 'hmc') throw new ModelError("leapfrogSteps and relaxation apply to parallel tempering with moves 'hmc'");
  const leapfrogSteps = opts.leapfrogSteps ?? PT_HMC_LEAPFROG;
  checkCount('leapfrogSteps', leapfrogSteps, 1, MAX_LOOP_COUNT);
  return { seed: o.seed, chains: o.chains, samples: o.samples, burnin: o.burnin, batches: o.batches, ladder, adapt: opts.adaptLadder ?? opts.ladder === undefined, moves, leapfrogSteps };
}

/**
 * The ladder re-spaced for equal swap rates, endpoints fixed: gap k gets length −log A_k (A_k its
 * swap acceptance rate, clamped to [0.01, 0.999]), which for small gaps grows like Δβ·σ_E (the
 * thermodynamic length); the new β's sit at equal steps of that cumulative length (piecewise
 * linear between the old ones), averaged with the old ladder to damp the noise of the rates.
 */
export function respaceLadder(betas: readonly number[], acceptRate: readonly number[]): number[] {
  const R = betas.length;
  const cum = [0];
  for (let k = 0; k + 1 < R; k++) cum.push(cum[k] + -Math.log(Math.min(0.999, Math.max(0.01, acceptRate[k]))));
  const total = cum[R - 1];
  const out = [betas[0]];
  let j = 0;
  for (let i = 1; i + 1 < R; i++) {
    const target = (total * i) / (R - 1);
    while (j + 2 < R && cum[j + 1] < target) j++;
    const f = Math.min(1, Math.max(0, (target - cum[j]) / (cum[j + 1] - cum[j])));
    const b = betas[j] + f * (betas[j + 1] - betas[j]);
    out.push(0.5 * (betas[i] + b));
  }
  out.push(betas[R - 1]);
  return out;
}


/** The PT kernel on one bound model: each state is one chain's R replicas. */
export class TemperingSampler implements ReplicaKernel {
  readonly kernel = 'canonical' as const;
  /** The model in engine memory. */
  readonly bound: BoundModel;

  /**
   * Binds `model` into `engine`'s memory for chains of `R` replicas.
   * @param engine The engine whose memory holds the sampler.
   * @param R Number of replicas (temperatures) per chain.
   */
  constructor(readonly engine: Engine, model: Model, readonly R: number) {
    this.bound = BoundModel.fromModel(engine, model, 'parallel tempering', (s) => R * (s.nBits + 96) + 80 * R + 8 * s.maxBlock + 8 * s.nBits + 256);
  }

  /** The model's canonical form. */
  get form() {
    return this.bound.form;
  }

  /** The accumulator's layout: the canonical form's bits. */
  get layout(): StateLayout {
    return this.bound.form;
  }

  /** The engine memory holding the sampler and its chains. */
  get arena(): Arena {
    return this.bound.arena;
  }

  /** Σ_v log K_v plus the model's constant: log Z at β = 0 of the user's model. */
  get logZ0(): number {
    let z = this.form.logZOffset;
    for (let v = 0; v < this.form.n; v++) z += Math.log(this.form.card[v]);
    return z;
  }

  /** No diagnostics of its own. */
  facts(): Record<string, number | string | boolean | null> {
    return {};
  }

  private header(): number {
    if (this.bound.arena.isDisposed) throw new EngineError('use after dispose(): this sampler has released its engine memory');
    return this.bound.header;
  }

  /**
   * A chain's state of R replicas at the inverse temperatures `ladder` (from 0 to 1), from stream (seed, chain);
   * returns its address.
   */
  init(seed: number, chain: number, ladder: readonly number[]): number {
    const header = this.header();
    const st = this.bound.arena.alloc(this.engine.kernels.ptStateBytes(header, this.R));
    const betas = this.bound.arena.allocF64(ladder);
    const [lo, hi] = chainSeedWords(seed, chain);
    this.engine.call('pt init', (k) => k.ptInit(header, st, this.R, betas, lo, hi, chain, PT_STREAM));
    return st;
  }

  /** Runs sweeps; with accumulate the β = 1 conditionals go into acc (f64 per bit). Returns the change rate. */
  step(st: number, sweeps: number, accumulate: boolean, acc = 0, _warmup = false): number {
    const header = this.header();
    const changed = this.engine.call('pt step', (k) => k.ptStep(header, st, sweeps, accumulate ? 1 : 0, acc));
    return changed / (sweeps * this.R * this.form.n);
  }

  /** A view of one of the state's arrays (0 β, 2 E, 3 ΣE, 4 accepts, 5 attempts, 6 shift, 7 gap sums). */
  array(st: number, which: number): Float64Array {
    const len = which >= 4 ? this.R - 1 : this.R;
    return this.bound.arena.f64(this.engine.kernels.ptArray(st, which) >>> 0, len);
  }

  /** Frees the sampler's engine memory. */
  dispose(): void {
    this.bound.dispose();
  }
}

const BETAS = 0, ENERGY_SUM = 3, ACCEPTS = 4, ATTEMPTS = 5, SHIFT = 6, GAPS = 7;

/** Parallel tempering: β = 1 marginals with batch-means standard errors, and log Z by stepping stone. */
export function runTempering(engine: Engine, model: Model, opts: PTOptions = {}): InferenceResult {
  checkOptionKeys(opts, PT_OPTION_KEYS);
  const run = ptRun(opts);
  refuseZeroModel(model, 'pt', engine);
  const t0 = performance.now();
  const R = run.ladder.length;
  if (run.moves === 'hmc' && !model.isPairwise) requirePairwise(model, "parallel tempering with moves 'hmc'", "parallel tempering takes higher-order factors with moves 'gibbs' (its default)");
  const sampler: ReplicaKernel = run.moves === 'hmc' ? new RelaxedTemperingSampler(engine, model, R, run.leapfrogSteps, opts.relaxation ?? {})
    : canonicalFits(model) ? new TemperingSampler(engine, model, R) : new FactorGraphTemperingSampler(engine, model, R);
  try {
    const form = sampler.layout;
    const chunk = Math.max(1, Math.floor(2e6 / Math.max(1, R * form.n * (run.moves === 'hmc' ? 4 * run.leapfrogSteps : 1))));
    const total = run.chains * (run.samples + run.burnin);
    const red = new DiscreteReducer(form, false);
    let cancelled = false;
    const advance = (st: number, sweeps: number, accumulate: boolean, acc: number): boolean => {
      for (let left = sweeps; left > 0; ) {
        if (opts.signal?.aborted) return false;
        const m = Math.min(chunk, left);
        const changeRate = sampler.step(st, m, accumulate, acc, !accumulate);
        left -= m;
        red.add({ kind: 'step', sweeps: m, changeRate }, 0);
        opts.onProgress?.({ phase: 'pt', done: red.done, total });
      }
      return true;
    };

    // Warm-up: all chains round by round, the ladder re-spaced from the pooled swap rates.
    const states = Array.from({ length: run.chains }, (_, c) => sampler.init(run.seed, c, run.ladder));
    let ladder = run.ladder;
    const rounds = splitEvenly(run.burnin, Math.min(WARMUP_ROUNDS, run.burnin));
    const lastMeanE = new Float64Array(R);
    for (let r = 0; r < rounds.length && !cancelled; r++) {
      const acc = new Float64Array(R - 1), att = new Float64Array(R - 1);
      lastMeanE.fill(0);
      for (const st of states) {
        sampler.array(st, ENERGY_SUM).fill(0);
        if (!advance(st, rounds[r], false, 0)) {
          cancelled = true;
          break;
        }
        const [a, t, e] = [sampler.array(st, ACCEPTS), sampler.array(st, ATTEMPTS), sampler.array(st, ENERGY_SUM)];
        for (let k = 0; k < R - 1; k++) [acc[k], att[k]] = [acc[k] + a[k], att[k] + t[k]];
        for (let k = 0; k < R; k++) lastMeanE[k] += e[k] / (rounds[r] * run.chains);
        a.fill(0);
        t.fill(0);
      }
      if (run.adapt && r < Math.min(ADAPT_ROUNDS, rounds.length - 1) && !cancelled) {
        ladder = respaceLadder(ladder, Array.from(acc, (x, k) => (att[k] > 0 ? x / att[k] : 1)));
        for (const st of states) sampler.array(st, BETAS).set(ladder);
      }
    }
    // Shifts for the stepping-stone exponentials: the mean energies of the last warm-up round (or
    // of the starting states without warm-up), shared by all chains so their terms can be pooled.
    if (rounds.length === 0) {
      for (const st of states) {
        const e = sampler.array(st, 2);
        for (let k = 0; k < R; k++) lastMeanE[k] += e[k] / run.chains;
      }
    }
    const shift = Array.from({ length: R - 1 }, (_, k) => (Number.isFinite(lastMeanE[k]) ? lastMeanE[k] : 0));
    for (const st of states) sampler.array(st, SHIFT).set(shift);

    // Sampling: chains one after another, fixed ladder.
    const accum = sampler.arena.alloc(form.nBits * 8);
    const gapStats = new BatchMeans(R - 1);
    const gapBatches: { chain: number; g: Float64Array }[] = [];
    const swapAcc = new Float64Array(R - 1), swapAtt = new Float64Array(R - 1);
    for (let c = 0; c < run.chains && !cancelled; c++) {
      const st = states[c];
      for (const len of splitEvenly(run.samples, Math.min(run.batches, run.samples))) {
        if (!advance(st, len, true, accum)) {
          cancelled = true;
          break;
        }
        const view = sampler.arena.f64(accum, form.nBits);
        red.add({ kind: 'batch', sums: view.slice(), length: len }, c);
        view.fill(0);
        const gaps = sampler.array(st, GAPS);
        gapStats.addBatch(gaps, len, c);
        gapBatches.push({ chain: c, g: gaps.map((x) => x / len) });
        gaps.fill(0);
      }
      const [a, t] = [sampler.array(st, ACCEPTS), sampler.array(st, ATTEMPTS)];
      for (let k = 0; k < R - 1; k++) [swapAcc[k], swapAtt[k]] = [swapAcc[k] + a[k], swapAtt[k] + t[k]];
    }
    if (red.stats.batches === 0) throw new CancelledError('parallel tempering was cancelled before the first batch completed: no estimate');

    const swapRates = Array.from(swapAcc, (x, k) => (swapAtt[k] > 0 ? x / swapAtt[k] : 0));
    const result = batchMeansResult(
      'pt',
      form,
      red,
      run,
      {
        replicas: R,
        ladder: ladder.map((b) => +b.toPrecision(6)).join(','),
        ladderAdapted: run.adapt,
        swapRateMin: Math.min(...swapRates),
        swapRateMean: swapRates.reduce((s, x) => s + x, 0) / swapRates.length,
        changeRate: sampler.kernel === 'relaxed' ? null : red.changeRate,
        siteUpdatesPerSecond: sampler.kernel === 'relaxed' ? null : (red.done * R * form.n) / Math.max(1e-9, (performance.now() - t0) / 1000),
        kernel: sampler.kernel,
        moves: run.moves,
        ...(sampler.kernel === 'relaxed' ? { acceptRate: red.changeRate } : {}),
        ...sampler.facts(states),
      },
      (performance.now() - t0) / 1000,
      cancelled,
    );
    const warnings = result.warnings ?? [];
    if (Math.min(...swapRates) < 0.05) warnings.push(`swap rate ${Math.min(...swapRates).toFixed(3)} between some neighbouring temperatures: the ladder has a bottleneck; use more replicas`);
    const lz = steppingStone(sampler.logZ0, ladder, shift, gapStats, gapBatches);
    if (lz !== null && !Number.isFinite(lz.logZ)) warnings.push('stepping-stone log Z is not finite (an energy gap overflowed); no log Z reported');
    const ok = lz !== null && Number.isFinite(lz.logZ);
    if (ok && lz.se !== null && lz.bias > SS_BIAS_LIMIT * lz.se) warnings.push(`log Z (stepping stone): its rungs' weights vary so much over the draws that the log of their means is biased low — by ${lz.bias.toPrecision(2)} (${(lz.bias / lz.se).toFixed(2)} standard errors) at second order alone, and heavy tails add more — so the estimate is likely low by about a standard error or more; use more samples or more replicas${run.moves === 'hmc' ? ', or Gibbs moves' : ''}`);
    return { ...result, logZ: ok ? lz.logZ : null, logZStdErr: ok ? lz.se : null, logZKind: ok ? 'estimate' : null, warnings };
  } finally {
    sampler.dispose();
  }
}

/**
 * Past this many standard errors of second-order bias the stepping-stone estimate warns: HMC
 * replicas at 8 temperatures measured 0.15–0.5 with log Z a mean 1–1.2 SE low; at 16 temperatures,
 * and Gibbs replicas, 0.02–0.13 and unbiased. Short runs whose standard error passes ≈ 0.3 nats
 * warn too (the ratio is ≈ SE / 2), and were low as well (Gibbs moves on an 18×50 grid, 60–150
 * samples: a mean 1 SE low).
 */
const SS_BIAS_LIMIT = 0.15;

/** log Z of the user's model by stepping stone over the ladder, with its delta-method standard error; null unless β_0 = 0. */
function steppingStone(
  logZ0: number,
  ladder: readonly number[],
  shift: readonly number[],
  gapStats: BatchMeans,
  gapBatches: readonly { chain: number; g: Float64Array }[],
): { logZ: number; se: number | null; bias: number } | null {
  if (ladder[0] !== 0) return null;
  const m = gapStats.mean();
  let logZ = logZ0;
  for (let k = 0; k < m.length; k++) logZ += Math.log(m[k]) + (ladder[k + 1] - ladder[k]) * shift[k];
  const lin = new BatchMeans(1);
  for (const { chain, g } of gapBatches) {
    let y = 0;
    for (let k = 0; k < m.length; k++) y += g[k] / m[k];
    lin.addBatch([y], 1, chain);
  }
  const se = lin.stdErr()[0];
  // The log of a mean is biased low by about half its relative variance: summed over the rungs, the
  // second-order bias (≈ SE²/2 where the rungs are weakly correlated, so large when the SE is; with
  // heavy tails the bias is larger still).
  const rel = new BatchMeans(m.length);
  for (const { chain, g } of gapBatches) rel.addBatch(Array.from(g, (x, k) => x / m[k]), 1, chain);
  const bias = 0.5 * rel.stdErr().reduce((s, e) => s + e * e, 0);
  return { logZ, se: Number.isFinite(se) ? se : null, bias };
}
