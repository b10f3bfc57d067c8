// The learner's negative-phase particle kernels: sequential Gibbs and tree-block Gibbs on the
// machine itself (assembly/learn/stats.ts), and block Gibbs or DHMC through a layer of Gaussian
// units on the visible–visible couplings (assembly/learn/gaussian_layer.ts; Martens & Sutskever
// 2010 §3.5). The Gaussian layer needs M Mᵀ = W_vv + αI: `refresh()` re-factors it from the
// current couplings before every parameter update — λ_min(W_vv) by Lanczos (k matrix–vector
// products of nV² each, k ≤ 300), α = (1 + ε)·max(0, −λ_min), then a dense Cholesky (nV³/3
// multiply–adds): for 784 visible units about 0.16 G multiply–adds an update, for 196 about 2.5 M.
// An RBM has no visible–visible couplings: no layer (m = 0), the kernels are the RBM's block Gibbs.
// nV counts visible bits: a Potts machine's layer spans its one-hot bits (units × K), and its
// particles draw each unit from the softmax over its K bits.

import type { Engine } from '../core/engine.ts';
import { EngineError, ModelError } from '../core/errors.ts';
import type { BoundMachine } from './machine.ts';
import { MAX_LOOP_COUNT } from '../core/options.ts';

/** The particle kernels: 'gibbs' sequential, 'tree' tree-block, 'blockgibbs' / 'dhmc' through the Gaussian layer. */
export type LearnSampler = 'gibbs' | 'tree' | 'blockgibbs' | 'dhmc';
/** All particle kernels. */
export const LEARN_SAMPLERS: readonly LearnSampler[] = ['gibbs', 'tree', 'blockgibbs', 'dhmc'];

/** Options of the Gaussian-layer kernels. */
export interface LayerOptions {
  /** ε of the shift α = (1 + ε)·max(0, −λ_min(W_vv)) (default 0.01). */
  shiftEpsilon?: number;
  /** DHMC: leapfrog steps per move (default 5). */
  leapfrogSteps?: number;
  /** DHMC: initial step size (default 0.1); adapted towards `targetAcceptance` between calls. */
  stepSize?: number;
  /** DHMC: the acceptance rate the step size is adapted to (default 0.9). */
  targetAcceptance?: number;
}

/** Defaults of LayerOptions. */
export const LAYER_DEFAULTS = { shiftEpsilon: 0.01, leapfrogSteps: 5, stepSize: 0.1, targetAcceptance: 0.9 } as const;

/** What the Gaussian layer reported at its last refresh and advance. */
export interface LayerInfo {
  /** The shift α of the last factorisation. */
  alpha: number;
  /** λ_min(W_vv) estimated by Lanczos (Ritz value minus its residual) at the last factorisation. */
  lambdaMin: number;
  /** Factorisations so far (one per parameter update). */
  refreshes: number;
  /** Their total seconds. */
  refreshSeconds: number;
  /** DHMC: mean acceptance probability of the last advance. */
  acceptance: number;
  /** DHMC: the step size now. */
  stepSize: number;
}

const LANCZOS_ITER = 300;

/** The Gaussian layer of a machine's visible part in engine memory, and its kernels. */
export class GaussianLayer {
  /** Visible bits (binary: the visible units; Potts: units × K). */
  readonly nV: number;
  /** Gaussian units (nV; 0 when the machine has no visible–visible couplings). */
  readonly m: number;
  M: number;
  d: number;
  private readonly work: number;
  private readonly A: number;
  private readonly op: number;
  private readonly lanczosWork: number;
  private readonly out: number;
  private readonly opts: Required<LayerOptions>;
  readonly info: LayerInfo;
  /** M is lower triangular (a Cholesky factor); a factor given to setFactor is not. */
  private lower = 1;
  /** A factor given to setFactor: refresh() keeps it. */
  private fixed = false;

  constructor(readonly engine: Engine, readonly machine: BoundMachine, readonly sampler: 'blockgibbs' | 'dhmc', opts: LayerOptions = {}) {
    this.opts = { ...LAYER_DEFAULTS, ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) };
    const { shiftEpsilon, leapfrogSteps, stepSize, targetAcceptance } = this.opts;
    if (!(shiftEpsilon > 0 && Number.isFinite(shiftEpsilon))) throw new ModelError(`shiftEpsilon must be a finite number > 0, got ${shiftEpsilon}`);
    if (!(Number.isInteger(leapfrogSteps) && leapfrogSteps >= 1 && leapfrogSteps <= MAX_LOOP_COUNT)) throw new ModelError(`leapfrogSteps must be an integer in [1, ${MAX_LOOP_COUNT}], got ${leapfrogSteps}`);
    if (!(stepSize > 0 && Number.isFinite(stepSize))) throw new ModelError(`stepSize must be a finite number > 0, got ${stepSize}`);
    if (!(targetAcceptance > 0 && targetAcceptance < 1)) throw new ModelError(`targetAcceptance must be in (0, 1), got ${targetAcceptance}`);
    const nV = (this.nV = machine.visibleBits);
    this.m = machine.kind === 'rbm' ? 0 : nV;
    const k = engine.kernels, ar = machine.arena, m = this.m;
    const bytes = 3 * 8 * nV * m + 4 * (nV + 1) + 4 * nV * m + (k.learnLayerWorkBytes(nV, m) >>> 0) + 8 * (3 * nV + 2 * LANCZOS_ITER) + 1024;
    engine.ensureFits(bytes, `the Gaussian layer of ${nV} visible ${machine.width > 1 ? 'bits' : 'units'}`, 8 * nV * m);
    this.M = ar.allocF64(Math.max(1, nV * m));
    this.A = ar.allocF64(Math.max(1, nV * m));
    this.d = ar.allocF64(nV);
    this.work = ar.alloc(k.learnLayerWorkBytes(nV, m) >>> 0);
    this.out = ar.allocF64(8);
    this.op = 0;
    this.lanczosWork = 0;
    if (m > 0) {
      // W_vv + αI as a CSR with every entry stored (the dense matrix A is its value array), for Lanczos.
      const rowPtr = ar.allocI32(nV + 1), col = ar.allocI32(nV * nV);
      k.learnDensePattern(nV, rowPtr, col);
      this.op = ar.alloc(k.symOpBytes());
      k.symOpInit(this.op, nV, rowPtr, col, this.A, 0, 0, 0, 0, 0);
      this.lanczosWork = ar.allocF64(3 * nV + 2 * Math.min(nV, LANCZOS_ITER));
    }
    this.info = { alpha: 0, lambdaMin: 0, refreshes: 0, refreshSeconds: 0, acceptance: NaN, stepSize: stepSize };
  }

  /** Re-factors W_vv + αI = M Mᵀ from the current couplings (call after every parameter change). */
  refresh(): void {
    if (this.m === 0 || this.fixed) return;
    const t0 = performance.now();
    const k = this.engine.kernels, nV = this.nV, ar = this.machine.arena, eps = this.opts.shiftEpsilon;
    const h = this.machine.header;
    k.learnVisibleMatrix(h, nV, 0, this.A);
    const iters = Math.min(nV, LANCZOS_ITER);
    this.engine.call('learn layer Lanczos', (kk) => kk.lanczosExtremes(this.op, iters, 1e-8, this.lanczosWork, this.out));
    const r = ar.readF64(this.out, 4);
    const lambdaMin = r[0] - r[2], rho = Math.max(Math.abs(r[0]), Math.abs(r[1]));
    let alpha = (1 + eps) * Math.max(0, -lambdaMin);
    // λ_min ≥ 0 (or a Ritz value not yet at the bottom of the spectrum): grow α until Cholesky succeeds.
    for (let tries = 0; ; tries++) {
      k.learnVisibleMatrix(h, nV, alpha, this.A);
      if (k.denseCholesky(this.A, this.M, nV) < 0) break;
      if (tries > 60) throw new EngineError(`the Gaussian layer: W_vv + αI is not positive definite even at α = ${alpha} (couplings not finite?)`);
      alpha = Math.max(2 * alpha, eps * Math.max(rho, 1e-3));
    }
    ar.f64(this.d, nV).fill(alpha);
    this.info.alpha = alpha;
    this.info.lambdaMin = lambdaMin;
    this.info.refreshes++;
    this.info.refreshSeconds += (performance.now() - t0) / 1000;
  }

  /**
   * Uses the given factor from now on (refresh() keeps it): M (nV × nV, row-major, any shape) and d with
   * M Mᵀ = W_vv + diag(d) — the caller's responsibility (e.g. Martens' §6 example, whose d is not uniform).
   */
  setFactor(M: ArrayLike<number>, d: ArrayLike<number>): void {
    const nV = this.nV;
    if (this.m === 0 || M.length !== nV * nV || d.length !== nV) throw new ModelError(`setFactor: M must be ${nV} × ${nV} and d of length ${nV} (machines with visible–visible couplings)`);
    this.machine.arena.f64(this.M, nV * nV).set(M);
    this.machine.arena.f64(this.d, nV).set(d);
    this.lower = 0;
    this.fixed = true;
  }

  /**
   * Reads M (nV × nV, row-major) and d from these engine addresses from now on, as they change (the
   * equivalent-RBM parametrisation's F and diag(F Fᵀ), bindings/learn/factored.ts); refresh() keeps them.
   */
  useFactor(M: number, d: number): void {
    if (this.m === 0) throw new ModelError('useFactor: the machine has no visible–visible couplings');
    this.M = M;
    this.d = d;
    this.lower = 0;
    this.fixed = true;
  }

  /** Advances `count` particles (Gibbs layout) `sweeps` sweeps; returns the number of bit changes. */
  advance(particles: number, count: number, sweeps: number): number {
    const k = this.engine.kernels, h = this.machine.header, lower = this.lower;
    if (this.sampler === 'blockgibbs') return k.learnLayerGibbs(h, this.nV, this.M, this.m, lower, this.d, particles, count, sweeps, this.work);
    const out = this.machine.arena.f64(this.out, 1);
    out[0] = 0;
    const changed = k.learnLayerHMC(h, this.nV, this.M, this.m, lower, this.d, particles, count, sweeps, this.opts.leapfrogSteps, this.info.stepSize, this.work, this.out);
    const acc = this.machine.arena.f64(this.out, 1)[0] / (count * sweeps);
    this.info.acceptance = acc;
    return changed;
  }

  /**
   * Adapts the DHMC step size after an advance whose mean acceptance was `info.acceptance`: a
   * multiplicative step towards the target (between kernel calls, never within a move).
   */
  adapt(gain = 0.5): void {
    if (this.sampler !== 'dhmc' || this.m === 0 || !(this.info.acceptance >= 0)) return;
    this.info.stepSize *= Math.exp(gain * (this.info.acceptance - this.opts.targetAcceptance));
  }
}

/** One of the learner's particle kernels over a machine in engine memory. */
export class ParticleKernel {
  readonly layer: GaussianLayer | null;
  private readonly scratch: number;

  constructor(readonly engine: Engine, readonly machine: BoundMachine, readonly sampler: LearnSampler, opts: LayerOptions = {}) {
    if (!LEARN_SAMPLERS.includes(sampler)) throw new ModelError(`sampler ${sampler} is not available for learning (available: ${LEARN_SAMPLERS.join(', ')})`);
    this.layer = sampler === 'blockgibbs' || sampler === 'dhmc' ? new GaussianLayer(engine, machine, sampler, opts) : null;
    this.scratch = machine.arena.allocF64(machine.width);
    if (sampler === 'tree') machine.treeBlocks();
  }

  /**
   * Advances `count` particles `sweeps` sweeps at the machine's current parameters (`refresh`: they
   * changed since the last call, so the Gaussian layer is re-factored; `adapt`: DHMC adapts its step size after the
   * call); returns the bit changes.
   */
  advance(particles: number, count: number, sweeps: number, refresh = true, adapt = true): number {
    const m = this.machine;
    if (this.layer) {
      if (refresh) this.layer.refresh();
      const changed = this.engine.call('learn layer particles', () => this.layer!.advance(particles, count, sweeps));
      if (adapt) this.layer.adapt();
      return changed;
    }
    if (this.sampler === 'tree') {
      const tree = m.treeBlocks();
      return this.engine.call('learn tree particles', (kk) => kk.learnParticlesAdvanceTree(m.header, tree.header, particles, count, sweeps, tree.work));
    }
    return this.engine.call('learn Gibbs particles', (kk) => kk.learnParticlesAdvance(m.header, particles, count, sweeps, this.scratch));
  }
}
