// Plain-JS reference of the batched relaxed samplers (assembly/relax/factor_batch.ts, samplers/
// blockgibbs_batch.ts, hmc_batch.ts) for bench/batch.ts: the same algorithm on the same data layout
// (X of m × B and U of n × B, chains innermost; the factor products in the kernels' summation order, so
// its products equal the WASM ones bit for bit, which the bench checks), for models whose bits are all free
// (σ per bit; no one-hot blocks). Streams: PhiloxJS with the kernels' uniform and Box–Muller normal; block
// Gibbs draws s | x and x | s, HMC unit mass, leapfrog, fixed ε, per-chain Metropolis test.

import type { FactorData } from '../../bindings/relax/relaxation-types.ts';
import { PhiloxJS } from './gibbs.ts';
import { isLowerTriangular } from '../../bindings/relax/relaxation-bound.ts';

/** PhiloxJS with rng.ts's 53-bit uniform and Box–Muller normal (its second value kept). */
export class StreamJS extends PhiloxJS {
  private spare = 0;
  private hasSpare = false;

  next32(): number {
    if (this.pos >= 4) this.refill();
    return this.out[this.pos++];
  }

  uniform(): number {
    const a = this.next32() >>> 5, b = this.next32() >>> 6;
    return (a * 67108864.0 + b + 0.5) * 1.1102230246251565e-16;
  }

  normal(): number {
    if (this.hasSpare) {
      this.hasSpare = false;
      return this.spare;
    }
    const rad = Math.sqrt(-2 * Math.log(this.uniform()));
    const t = 6.283185307179586 * this.uniform();
    this.spare = rad * Math.sin(t);
    this.hasSpare = true;
    return rad * Math.cos(t);
  }
}

/** The batched products and samplers for B chains on one factor M (dense or CSR) with bias b = a − ½ d. */
export class RelaxedBatchJS {
  readonly n: number;
  readonly m: number;
  private readonly U: Float64Array;
  private readonly V: Float64Array;
  /** A square lower triangular dense M: the products skip the zeros above the diagonal. */
  private readonly lower: boolean;

  constructor(readonly factor: Extract<FactorData, { kind: 'dense' | 'sparse' }>, readonly bias: Float64Array, readonly B: number) {
    this.n = factor.n;
    this.m = factor.m;
    this.lower = factor.kind === 'dense' && isLowerTriangular(factor.values, factor.n, factor.m);
    this.U = new Float64Array(this.n * B);
    this.V = new Float64Array(this.m * B);
  }

  /** U = M X. */
  apply(X: Float64Array, U: Float64Array): void {
    const { n, m, B } = this;
    const f = this.factor;
    if (f.kind === 'dense') {
      const M = f.values;
      for (let i = 0; i < n; i++) {
        // A lower triangular M (dense Cholesky): up to the diagonal, rounded up to an even count (as the WASM kernels).
        const len = this.lower ? Math.min(m, (i + 2) & ~1) : m;
        for (let b = 0; b < B; b++) {
          let ev = 0, od = 0, k = 0;
          for (; k + 1 < len; k += 2) {
            ev += M[i * m + k] * X[k * B + b];
            od += M[i * m + k + 1] * X[(k + 1) * B + b];
          }
          let s = ev + od;
          if (k < len) s += M[i * m + k] * X[k * B + b];
          U[i * B + b] = s;
        }
      }
      return;
    }
    const { rowPtr, col, values } = f;
    for (let i = 0; i < n; i++) {
      for (let b = 0; b < B; b++) {
        let s = 0;
        for (let e = rowPtr[i]; e < rowPtr[i + 1]; e++) s += values[e] * X[col[e] * B + b];
        U[i * B + b] = s;
      }
    }
  }

  /** G = Mᵀ V (rows in order; a row zero in every chain skipped). */
  applyT(V: Float64Array, G: Float64Array): void {
    const { n, m, B } = this;
    const f = this.factor;
    G.fill(0);
    for (let i = 0; i < n; i++) {
      let zero = true;
      for (let b = 0; b < B && zero; b++) zero = V[i * B + b] === 0;
      if (zero) continue;
      if (f.kind === 'dense') {
        const M = f.values;
        for (let k = 0, lim = this.lower ? Math.min(m, i + 1) : m; k < lim; k++) {
          const w = M[i * m + k];
          for (let b = 0; b < B; b++) G[k * B + b] += V[i * B + b] * w;
        }
      } else {
        for (let e = f.rowPtr[i]; e < f.rowPtr[i + 1]; e++) {
          const w = f.values[e], k = f.col[e];
          for (let b = 0; b < B; b++) G[k * B + b] += V[i * B + b] * w;
        }
      }
    }
  }

  /** Block Gibbs sweeps: s ~ σ(M x + b) per bit and chain, then x ~ N(Mᵀ s, I); returns the bit changes. */
  blockGibbs(X: Float64Array, S: Float64Array, rngs: StreamJS[], sweeps: number): number {
    const { n, m, B, U, bias } = this;
    let changed = 0;
    for (let t = 0; t < sweeps; t++) {
      this.apply(X, U);
      for (let b = 0; b < B; b++) {
        const r = rngs[b];
        for (let i = 0; i < n; i++) {
          const u = U[i * B + b] + bias[i];
          const e = Math.exp(-Math.abs(u));
          const p = (u >= 0 ? 1 : e) / (1 + e);
          const bit = r.uniform32() < p ? 1 : 0;
          if (bit !== S[i * B + b]) changed++;
          S[i * B + b] = bit;
        }
      }
      this.applyT(S, X);
      for (let b = 0; b < B; b++) for (let k = 0; k < m; k++) X[k * B + b] += rngs[b].normal();
    }
    return changed;
  }

  /**
   * ∇ log p at X into G for the chains with live[b]; with logp, log p per chain too (−½|x|² + Σ softplus).
   */
  gradient(X: Float64Array, G: Float64Array, live: Uint8Array, logp: Float64Array | null): void {
    const { n, m, B, U, V, bias } = this;
    this.apply(X, U);
    for (let b = 0; b < B; b++) {
      let lp = 0;
      if (logp) for (let k = 0; k < m; k++) lp -= 0.5 * X[k * B + b] * X[k * B + b];
      for (let i = 0; i < n; i++) {
        const u = U[i * B + b] + bias[i];
        const e = Math.exp(-Math.abs(u));
        U[i * B + b] = live[b] ? (u >= 0 ? 1 : e) / (1 + e) : 0;
        if (logp) lp += Math.max(u, 0) + Math.log1p(e);
      }
      if (logp) logp[b] = lp;
    }
    this.applyT(U, V);
    for (let q = 0; q < m * B; q++) G[q] = V[q] - X[q];
  }

  /** HMC transitions (unit mass, L leapfrog steps of ε[b]); state X, G, logp; returns the accepted count. */
  hmc(X: Float64Array, G: Float64Array, logp: Float64Array, eps: Float64Array, L: number, iters: number, rngs: StreamJS[]): number {
    const { m, B } = this;
    const P = new Float64Array(m * B), Xp = new Float64Array(m * B), Gp = new Float64Array(m * B);
    const lp1 = new Float64Array(B), H0 = new Float64Array(B);
    const live = new Uint8Array(B).fill(1);
    let accepted = 0;
    for (let it = 0; it < iters; it++) {
      for (let b = 0; b < B; b++) {
        let k0 = 0;
        for (let k = 0; k < m; k++) {
          const z = rngs[b].normal();
          P[k * B + b] = z;
          k0 += z * z;
        }
        H0[b] = -logp[b] + 0.5 * k0;
      }
      Xp.set(X);
      Gp.set(G);
      for (let s = 0; s < L; s++) {
        for (let q = 0; q < m * B; q++) {
          const b = q % B;
          P[q] += 0.5 * eps[b] * Gp[q];
          Xp[q] += eps[b] * P[q];
        }
        this.gradient(Xp, Gp, live, s === L - 1 ? lp1 : null);
        for (let q = 0; q < m * B; q++) P[q] += 0.5 * eps[q % B] * Gp[q];
      }
      for (let b = 0; b < B; b++) {
        let k1 = 0;
        for (let k = 0; k < m; k++) k1 += P[k * B + b] * P[k * B + b];
        const dH = -lp1[b] + 0.5 * k1 - H0[b];
        if (Math.log(rngs[b].uniform()) < -dH) {
          accepted++;
          logp[b] = lp1[b];
          for (let k = 0; k < m; k++) {
            X[k * B + b] = Xp[k * B + b];
            G[k * B + b] = Gp[k * B + b];
          }
        }
      }
    }
    return accepted;
  }
}
