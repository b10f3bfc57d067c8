// Extreme eigenvalues of a sparse symmetric operator by Lanczos in the engine
// (assembly/linalg/lanczos.ts): W + diag(d) in CSR, or S (W + diag(d)) S for one-hot blocks.
import type { Engine } from '../core/engine.ts';
import { EngineError } from '../core/errors.ts';

export interface LanczosResult {
  min: number;
  max: number;
  /** Residual norms of the extreme Ritz pairs: an eigenvalue lies within each of its Ritz value. */
  minResidual: number;
  maxResidual: number;
  iterations: number;
}

/** The operator: symmetric CSR W over n rows, an optional diagonal, optional blocks for S. */
export interface SymmetricOperator {
  n: number;
  rowPtr: Int32Array;
  col: Int32Array;
  val: Float64Array;
  /** Added to W's diagonal. */
  diag?: Float64Array | null;
  /**
   * Wrap the operator in S: ½ on free bits, (I − 11ᵀ/K)/√2 on a one-hot block of K bits (blockStart
   * over variables, oneHot per variable), i.e. S (W + diag(d)) S.
   */
  blocks?: { blockStart: Int32Array; oneHot: Uint8Array } | null;
}

export function lanczosExtremes(engine: Engine, op: SymmetricOperator, opts: { maxIter?: number; tol?: number } = {}): LanczosResult {
  const n = op.n;
  const maxIter = Math.min(n, opts.maxIter ?? 1500);
  const tol = opts.tol ?? 1e-9;
  if (op.rowPtr.length !== n + 1) throw new EngineError(`Lanczos: rowPtr has ${op.rowPtr.length} entries for ${n} rows`);
  const arena = engine.arena();
  try {
    const rowPtr = arena.allocI32(op.rowPtr), col = arena.allocI32(op.col), val = arena.allocF64(op.val);
    const diag = op.diag ? arena.allocF64(op.diag) : 0;
    const nBlocks = op.blocks ? op.blocks.oneHot.length : 0;
    const blockStart = op.blocks ? arena.allocI32(op.blocks.blockStart) : 0;
    let oneHot = 0;
    if (op.blocks) {
      oneHot = arena.alloc(nBlocks);
      new Uint8Array(engine.kernels.memory.buffer, oneHot, nBlocks).set(op.blocks.oneHot);
    }
    const tmp = op.blocks ? arena.allocF64(n) : 0;
    const k = engine.kernels;
    const hdr = arena.alloc(k.symOpBytes());
    k.symOpInit(hdr, n, rowPtr, col, val, diag, nBlocks, blockStart, oneHot, tmp);
    const work = arena.allocF64(3 * n + 2 * maxIter), out = arena.allocF64(5);
    const rc = engine.call('Lanczos', (kk) => kk.lanczosExtremes(hdr, maxIter, tol, work, out));
    if (rc !== 0) throw new EngineError('Lanczos failed');
    const r = arena.readF64(out, 5);
    return { min: r[0], max: r[1], minResidual: r[2], maxResidual: r[3], iterations: r[4] };
  } finally {
    arena.dispose();
  }
}
