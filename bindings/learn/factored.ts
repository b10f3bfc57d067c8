// The equivalent-RBM parametrisation (Martens & Sutskever 2010 §4, §5.4; assembly/learn/factored.ts):
// the visible–visible couplings of a fully visible BM or an SRBM learned as W_vv = F Fᵀ (off the
// diagonal; ½ diag(F Fᵀ) joins the visible biases), F an nV × nV matrix of weights to as many
// Gaussian units. The machine's canonical form always holds the marginal model, so everything else
// (statistics, Gibbs particles, evaluation, the UAI output) is unchanged; block Gibbs and DHMC
// particles use F itself as their factor (no shift, no Cholesky per update). Costs 3 nV³
// multiply–adds per update (the gradient S F and the products F Fᵀ).

import type { Engine } from '../core/engine.ts';
import type { BoundMachine } from './machine.ts';

/** F, its velocity and gradient, and the diagonal the visible biases carry, in engine memory. */
export class VisibleFactor {
  readonly F: number;
  readonly d: number;
  private readonly G: number;
  private readonly vel: number;
  private readonly S: number;
  readonly nV: number;

  /** Allocates F = 0.01·N(0, 1) from `normals` (nV² standard normals) and writes the marginal form. */
  constructor(readonly engine: Engine, readonly machine: BoundMachine, normals: Float64Array) {
    const nV = (this.nV = machine.nVisible), ar = machine.arena;
    engine.ensureFits(5 * 8 * nV * nV + 1024, `the Gaussian-unit weights of ${nV} visible units`, 8 * nV * nV);
    this.F = ar.allocF64(normals.map((z) => 0.01 * z));
    this.G = ar.allocF64(nV * nV);
    this.vel = ar.allocF64(nV * nV);
    this.S = ar.allocF64(nV * nV);
    this.d = ar.allocF64(nV);
    engine.kernels.learnFactorApply(machine.header, nV, this.F, nV, this.G, this.vel, 0, 0, 0, this.d);
  }

  /** Before learnUpdate zeroes them: the gradient for F from the statistics (scales as learnUpdate's). */
  gradient(posA: number, posW: number, negA: number, negW: number, posScale: number, negScale: number): void {
    this.engine.kernels.learnFactorGradient(this.machine.header, this.nV, this.F, this.nV, posA, posW, negA, negW, posScale, negScale, this.S, this.G);
  }

  /** After learnUpdate: the step on F and the marginal form rewritten; returns the largest |F_ij|. */
  apply(rate: number, momentum: number, decay: number): number {
    return this.engine.kernels.learnFactorApply(this.machine.header, this.nV, this.F, this.nV, this.G, this.vel, rate, momentum, decay, this.d);
  }

  /** The last gradient for F, row-major nV × nV. */
  readGradient(): Float64Array {
    return this.machine.arena.readF64(this.G, this.nV * this.nV);
  }

  /** F, row-major nV × nV. */
  read(): Float64Array {
    return this.machine.arena.readF64(this.F, this.nV * this.nV);
  }
}
