// Naive mean field: the lower bound log Z ≥ max_q E_q[log p̃] + H(q) over fully factorised q, by
// coordinate ascent in WASM (assembly/meanfield.ts) with J random restarts. Works on any canonical
// model: free bits (Bernoulli factors) and one-hot blocks (categorical factors, zero potentials
// handled exactly: see the kernel's header).
//
// Every restart j draws its start from its own stream (seed, chain j, tag MF_STREAM), so a run is
// a pure function of (model, options) and restarts 0 … J−1 of a larger run repeat those of a smaller one.

import { checkCount, checkTol, definedOnly } from '../core/options.ts';
import type { Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { toCanonical, bitsToMarginals, type CanonicalForm } from '../core/canonical.ts';
import { BoundModel } from '../core/bound.ts';
import type { InferenceResult, Progress } from '../core/result.ts';
import { EngineError, ModelError } from '../core/errors.ts';
import { seedWords } from '../core/seed.ts';

/** Tag of mean field's generator streams (Gibbs uses 1). */
export const MF_STREAM = 0x4d46; // "MF"

export interface MeanFieldOptions {
  seed?: number;
  /** Random initialisations; the best bound is kept. */
  restarts?: number;
  /** Sweeps per restart at most. */
  maxSweeps?: number;
  /** A restart has converged when a sweep raises the bound by at most tol · max(1, |bound|). */
  tol?: number;
  onProgress?: (p: Progress) => void;
  signal?: AbortSignal;
}

export const MF_DEFAULTS = { seed: 1, restarts: 10, maxSweeps: 1000, tol: 1e-10 } as const;

export interface AscentInfo {
  /** The bound of the model as the user built it (canonical offset included). */
  logZ: number;
  sweeps: number;
  converged: boolean;
  /** The last sweep's increase of the bound and largest change of a marginal. */
  lastIncrease: number;
  lastStep: number;
}

/** One model's mean-field state in WASM memory: marginals per bit, entropies per block. */
export class MeanFieldSolver {
  readonly form: CanonicalForm;
  private readonly bound: BoundModel;
  private readonly mu: number;
  private readonly ent: number;
  private readonly scratch: number;
  private readonly out: number;
  private readonly rng: number;

  constructor(readonly engine: Engine, model: Model | CanonicalForm) {
    this.form = 'nBits' in model ? model : toCanonical(model);
    this.bound = new BoundModel(engine, this.form);
    const arena = this.bound.arena;
    this.mu = arena.alloc(this.form.nBits * 8);
    this.ent = arena.alloc(this.form.n * 8);
    this.scratch = arena.alloc(2 * this.bound.maxBlock * 8);
    this.out = arena.alloc(4 * 8);
    this.rng = arena.alloc(engine.kernels.rngStateBytes());
  }

  private header(): number {
    if (this.bound.arena.isDisposed) throw new EngineError('use after dispose(): this solver has released its engine memory');
    return this.bound.header;
  }

  /** Random start of restart `j` from stream (seed, j). */
  randomStart(seed: number, j: number): void {
    const h = this.header();
    const [lo, hi] = seedWords(seed);
    this.engine.call('mean field init', (k) => {
      k.rngSeed(this.rng, lo, hi, j, MF_STREAM);
      k.mfRandomInit(h, this.mu, this.ent, this.rng);
    });
  }

  /** Sets the per-bit marginals (p(s_i = 1); one-hot blocks must sum to 1). */
  setBitMarginals(mu: ArrayLike<number>): void {
    const h = this.header();
    if (mu.length !== this.form.nBits) throw new ModelError(`expected ${this.form.nBits} bit marginals, got ${mu.length}`);
    this.bound.arena.f64(this.mu, this.form.nBits).set(mu);
    this.engine.call('mean field entropies', (k) => k.mfEntropies(h, this.mu, this.ent));
  }

  bitMarginals(): Float64Array {
    this.header();
    return this.bound.arena.readF64(this.mu, this.form.nBits);
  }

  /** The bound at the current marginals, for the model as the user built it. */
  objective(): number {
    const h = this.header();
    return this.engine.call('mean field objective', (k) => k.mfObjective(h, this.mu, this.ent)) + this.form.logZOffset;
  }

  /** Coordinate ascent from the current marginals. tol < 0 runs exactly maxSweeps sweeps. */
  ascend(maxSweeps: number, tol: number): AscentInfo {
    const h = this.header();
    const sweeps = this.engine.call('mean field ascent', (k) => k.mfAscend(h, this.mu, this.ent, maxSweeps, tol, this.scratch, this.out));
    const o = this.bound.arena.readF64(this.out, 4);
    return { logZ: o[0] + this.form.logZOffset, sweeps, converged: o[1] === 1, lastIncrease: o[2], lastStep: o[3] };
  }

  dispose(): void {
    this.bound.dispose();
  }
}

/** Mean-field lower bound on log Z (best of `restarts` random starts) and its marginals. */
export function runMeanField(engine: Engine, model: Model, opts: MeanFieldOptions = {}): InferenceResult {
  const { seed, restarts, maxSweeps, tol } = { ...MF_DEFAULTS, ...definedOnly(opts) };
  checkCount('restarts', restarts, 1);
  checkCount('maxSweeps', maxSweeps, 1);
  checkTol(tol);
  seedWords(seed);
  const t0 = performance.now();
  const solver = new MeanFieldSolver(engine, model);
  try {
    let best: AscentInfo | null = null;
    let bestMu: Float64Array | null = null;
    let bestRestart = -1;
    let sweeps = 0, converged = 0, done = 0;
    let worst = Infinity;
    for (let j = 0; j < restarts; j++) {
      if (opts.signal?.aborted) break;
      solver.randomStart(seed, j);
      const info = solver.ascend(maxSweeps, tol);
      sweeps += info.sweeps;
      if (info.converged) converged++;
      worst = Math.min(worst, info.logZ);
      if (best === null || info.logZ > best.logZ) {
        best = info;
        bestMu = solver.bitMarginals();
        bestRestart = j;
      }
      done++;
      opts.onProgress?.({ phase: 'mf', done, total: restarts });
    }
    if (best === null || bestMu === null) throw new EngineError('mean field was cancelled before the first restart completed: no bound');
    return {
      method: 'mf',
      logZ: best.logZ,
      logZStdErr: null,
      logZKind: 'lower-bound',
      marginals: bitsToMarginals(solver.form, bestMu),
      marginalStdErr: null,
      diagnostics: {
        restarts: done,
        bestRestart,
        sweeps,
        sweepsBest: best.sweeps,
        converged: converged === done,
        convergedRestarts: converged,
        worstRestartLogZ: Number.isFinite(worst) ? worst : null,
        maxSweeps,
        tol,
        seed,
      },
      seconds: (performance.now() - t0) / 1000,
      partial: done < restarts,
    };
  } finally {
    solver.dispose();
  }
}
