// Dense linear algebra in the engine (assembly/linalg/cholesky.ts, eigen.ts): each call allocates
// arena memory, runs one kernel and copies the result out once.
import type { Engine } from '../core/engine.ts';
import { EngineError } from '../core/errors.ts';

function checkSquare(A: ArrayLike<number>, n: number): void {
  if (!Number.isInteger(n) || n < 1 || A.length !== n * n) throw new EngineError(`expected an ${n} × ${n} matrix (${n * n} entries), got ${A.length} entries`);
}

/** A = L Lᵀ with L lower triangular (row-major n × n); failedAt: the column whose pivot was ≤ 0. */
export function denseCholesky(engine: Engine, A: ArrayLike<number>, n: number): { ok: true; L: Float64Array } | { ok: false; failedAt: number } {
  checkSquare(A, n);
  engine.ensureFits(16 * n * n + 64, `dense Cholesky of ${n} × ${n}`, 8 * n * n);
  const arena = engine.arena();
  try {
    const a = arena.allocF64(A), l = arena.allocF64(n * n);
    const failed = engine.call('dense Cholesky', (k) => k.denseCholesky(a, l, n));
    return failed < 0 ? { ok: true, L: arena.readF64(l, n * n) } : { ok: false, failedAt: failed };
  } finally {
    arena.dispose();
  }
}

/**
 * Eigenvalues (ascending) and optionally eigenvectors (row-major, column k = vector k) of the
 * symmetric A (row-major n × n; only read): Householder tridiagonalisation and implicit QL.
 */
export function symmetricEigen(engine: Engine, A: ArrayLike<number>, n: number, wantVectors: boolean): { values: Float64Array; vectors: Float64Array | null } {
  checkSquare(A, n);
  engine.ensureFits((wantVectors ? 16 : 8) * n * n + 32 * n + 64, `symmetric eigendecomposition of ${n} × ${n}`, 8 * n * n);
  const arena = engine.arena();
  try {
    const a = arena.allocF64(A);
    const values = arena.allocF64(n), d = arena.allocF64(n), e = arena.allocF64(n), idx = arena.allocI32(n);
    const vt = wantVectors ? arena.allocF64(n * n) : 0;
    const rc = engine.call('symmetric eigensolver', (k) => k.symEigen(a, n, wantVectors ? 1 : 0, values, d, e, idx, vt));
    if (rc !== 0) throw new EngineError('symmetric eigensolver did not converge');
    return { values: arena.readF64(values, n), vectors: wantVectors ? arena.readF64(a, n * n) : null };
  } finally {
    arena.dispose();
  }
}

/** A + diag(d) as a new row-major n × n matrix. */
export function addDiagonal(A: Float64Array, n: number, d: ArrayLike<number>): Float64Array {
  const B = A.slice();
  for (let i = 0; i < n; i++) B[i * n + i] += d[i];
  return B;
}
