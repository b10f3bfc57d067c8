// The mass matrices of the continuous samplers: Zhang's A = I parametrisation, G = MᵀM = R Rᵀ
// (see continuous-sampler.ts's header), and the Cholesky factor of a user's dense mass matrix.
import type { Engine } from '../core/engine.ts';
import type { BoundRelaxation } from '../relax/relaxation-bound.ts';
import { ModelError } from '../core/errors.ts';
import { denseCholesky } from '../linalg/dense.ts';

/** Largest m for which 'zhang' forms MᵀM densely (m² doubles). */
export const ZHANG_DENSE_LIMIT = 2048;

/**
 * Lower-triangular T with T Tᵀ = A (row-major m × m, lower triangle read) by the engine's dense
 * Cholesky; null if A is not positive definite or T is not finite.
 */
export function massCholesky(engine: Engine, A: Float64Array, m: number): Float64Array | null {
  const r = denseCholesky(engine, A, m);
  return r.ok && r.L.every(Number.isFinite) ? r.L : null;
}

/**
 * The dense mass factor of Zhang's A = I parametrisation: G = MᵀM = R Rᵀ. A square lower-triangular
 * dense M gives R = Mᵀ directly; any other storage (dense, sparse, FFT) has G formed column by column
 * as Mᵀ(M e_j) with the engine's own factor products, then factored here.
 */
export function zhangMassFactor(bound: BoundRelaxation): { kind: 'lower' | 'upper'; T: Float64Array } {
  const f = bound.data.factor;
  const { n, m } = f;
  if (f.kind === 'dense' && n === m) {
    let lower = true;
    for (let i = 0; i < n && lower; i++) for (let j = i + 1; j < m; j++) if (f.values[i * m + j] !== 0) { lower = false; break; }
    if (lower) {
      for (let i = 0; i < n; i++) if (!(f.values[i * m + i] !== 0)) throw new ModelError('zhang parametrisation: the triangular factor M is singular');
      return { kind: 'upper', T: f.values.slice() };
    }
  }
  if (m > n) throw new ModelError(`zhang parametrisation: M has more columns (m = ${m}) than rows (n = ${n}), so MᵀM is singular; use 'whitened' with this factor`);
  if (m > ZHANG_DENSE_LIMIT) throw new ModelError(`zhang parametrisation: MᵀM would be ${m}×${m} (limit ${ZHANG_DENSE_LIMIT}); use 'whitened', or a dense Cholesky factor`);
  const G = new Float64Array(m * m);
  const a = bound.engine.arena();
  try {
    const e = a.allocF64(m), u = a.allocF64(n), g = a.allocF64(m);
    for (let j = 0; j < m; j++) {
      const ev = a.f64(e, m);
      ev.fill(0);
      ev[j] = 1;
      bound.engine.call('factor product', (k) => {
        k.factorMul(bound.factor, e, u);
        k.factorMulT(bound.factor, u, g);
      });
      G.set(a.f64(g, m), j * m);
    }
  } finally {
    a.dispose();
  }
  // Symmetrise the rounding.
  for (let i = 0; i < m; i++) for (let j = 0; j < i; j++) G[i * m + j] = G[j * m + i] = 0.5 * (G[i * m + j] + G[j * m + i]);
  const T = massCholesky(bound.engine, G, m);
  if (!T) throw new ModelError('zhang parametrisation: MᵀM is not positive definite (M does not have full column rank)');
  return { kind: 'lower', T };
}
