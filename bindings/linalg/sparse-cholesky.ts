// Sparse Cholesky P (W + D) Pᵀ = L Lᵀ in the engine (assembly/linalg/ordering.ts,
// sparse_cholesky.ts): a minimum-degree ordering and the symbolic factorisation once per pattern,
// held in engine memory, then one numeric factorisation per diagonal d. The TypeScript side sizes
// every buffer: the ordering's graph pool (retried larger if it runs out), then nnz(L) from the
// column counts before the pattern is filled.
import type { Arena, Engine } from '../core/engine.ts';
import { EngineError } from '../core/errors.ts';

/** M = Pᵀ L as CSR rows over bits (columns are positions, m = n). */
export interface CholeskyRows {
  rowPtr: Int32Array;
  col: Int32Array;
  values: Float64Array;
}

/** The fill-reducing ordering: minimum degree, nested dissection, or by size (DISSECTION_MIN_BITS). */
export type OrderingChoice = 'auto' | 'min-degree' | 'dissection';

/**
 * From this many bits `auto` orders by nested dissection (assembly/linalg/dissection.ts): the
 * minimum-degree ordering's time grows with the squared degrees of its late eliminations.
 */
export const DISSECTION_MIN_BITS = 2 ** 16;

/**
 * Below DISSECTION_MIN_BITS, `auto` gives minimum degree (the least fill on chains, strips and
 * sparse random graphs, where dissection's fill was 1.5–7× larger) at most
 * max(MIN_DEGREE_WORK × the dissection order's factorisation flops, MIN_DEGREE_FREE_WORK) of work,
 * and orders by dissection past that. Its work runs at ≈ 1 ns a unit, a flop of the factorisation at
 * ≈ 0.6 ns, so giving up costs at most about the factorisation it could have saved; the minimum-
 * degree orders of random graphs needed 0.11–0.45 × dissection's flops, those of lattices 1.5–5.6 ×
 * (a 32³ lattice's took 21 s where dissection's took 9 ms and its factorisation 1.5 s).
 */
export const MIN_DEGREE_WORK = 0.5;
/** Work minimum degree may always spend (≈ 0.27 s): 2-D lattices to 128×128 and 3-D ones to 16³ keep it. */
export const MIN_DEGREE_FREE_WORK = 2 ** 28;

export class SparseCholesky {
  readonly n: number;
  /** The ordering used. */
  readonly ordering: 'min-degree' | 'dissection';
  /** perm[k] = bit eliminated k-th; pos[bit] = its position. */
  readonly perm: Int32Array;
  readonly pos: Int32Array;
  /** Column pointers of L's strictly-lower pattern (positions); nnz(L) = colPtr[n] + n. */
  readonly colPtr: Int32Array;
  /** Seconds spent on the ordering and on the symbolic factorisation. */
  readonly seconds: { ordering: number; symbolic: number };
  private readonly arena: Arena;
  private readonly p: { rowPtr: number; col: number; perm: number; pos: number; colPtr: number; rowIdx: number };

  /**
   * Orders and analyses the symmetric pattern (rowPtr, col) over n bits (diagonal entries ignored).
   * poolWords: the ordering's first graph pool (i32 words; doubled until it suffices).
   */
  constructor(readonly engine: Engine, n: number, rowPtr: Int32Array, col: Int32Array, poolWords = 4 * col.length + 32 * n + 64, ordering: OrderingChoice = 'auto') {
    if (rowPtr.length !== n + 1 || rowPtr[n] !== col.length) throw new EngineError(`sparse Cholesky: CSR of ${n} rows has rowPtr of ${rowPtr.length} and ${col.length} columns`);
    this.n = n;
    const k = engine.kernels;
    const t0 = performance.now();
    const arena = (this.arena = engine.arena());
    try {
      const rp = arena.allocI32(rowPtr), cl = arena.allocI32(col), perm = arena.allocI32(n), pos = arena.allocI32(n);
      const dissect = () => {
        const scratch = engine.arena();
        try {
          const ws = scratch.allocI32(k.dissectionWorkWords(n)), stack = scratch.allocI32(4 * (n + 1));
          engine.call('nested dissection ordering', (kk) => kk.nestedDissectionOrder(n, rp, cl, perm, pos, ws, stack));
        } finally {
          scratch.dispose();
        }
      };
      if (ordering === 'dissection' || (ordering === 'auto' && n >= DISSECTION_MIN_BITS)) {
        dissect();
        this.ordering = 'dissection';
      } else if (ordering === 'min-degree') {
        this.minimumDegree(n, rp, cl, perm, pos, poolWords, Infinity);
        this.ordering = 'min-degree';
      } else {
        // Minimum degree, unless it would cost more than it could save (the dissection's order and
        // its flops take a few ms).
        dissect();
        const limit = Math.max(MIN_DEGREE_WORK * this.factorFlops(n, rp, cl, perm, pos), MIN_DEGREE_FREE_WORK);
        const done = this.minimumDegree(n, rp, cl, perm, pos, poolWords, limit);
        if (!done) dissect();
        this.ordering = done ? 'min-degree' : 'dissection';
      }
      const t1 = performance.now();
      const parent = arena.allocI32(n), counts = arena.allocI32(n), colPtr = arena.allocI32(n + 1);
      const scratch = engine.arena();
      let nnz: number;
      try {
        const flag = scratch.allocI32(n);
        nnz = engine.call('symbolic Cholesky', (kk) => kk.symbolicCounts(n, rp, cl, perm, pos, parent, counts, flag));
        if (nnz > 2 ** 31 - 1 - n) throw new EngineError(`sparse Cholesky: L would have ${nnz} entries, past the engine's 2³¹ index limit`);
        const c = arena.i32(counts, n), cp = arena.i32(colPtr, n + 1);
        for (let j = 0; j < n; j++) cp[j + 1] = cp[j] + c[j];
        engine.ensureFits(4 * nnz, `the pattern of L (${nnz} entries)`, 4 * nnz);
        const rowIdx = arena.allocI32(nnz), next = scratch.allocI32(n);
        engine.call('symbolic Cholesky', (kk) => kk.symbolicPattern(n, rp, cl, perm, pos, parent, colPtr, rowIdx, next, flag));
        this.p = { rowPtr: rp, col: cl, perm, pos, colPtr, rowIdx };
      } finally {
        scratch.dispose();
      }
      this.perm = arena.i32(perm, n).slice();
      this.pos = arena.i32(pos, n).slice();
      this.colPtr = arena.i32(colPtr, n + 1).slice();
      this.seconds = { ordering: (t1 - t0) / 1000, symbolic: (performance.now() - t1) / 1000 };
    } catch (e) {
      arena.dispose();
      throw e;
    }
  }

  /**
   * The minimum-degree ordering into perm and pos (engine addresses), its graph pool grown as it
   * needs; false (perm and pos incomplete) when its work passed workLimit.
   */
  private minimumDegree(n: number, rp: number, cl: number, perm: number, pos: number, poolWords: number, workLimit: number): boolean {
    // The ordering's graph pool: by default the pattern with room to grow. When it runs short the
    // kernel stops; its pool is copied into one twice as large and the ordering resumes.
    const engine = this.engine, k = engine.kernels;
    const words = k.minDegreeWorkWords(n);
    const scratch = engine.arena();
    const ws = scratch.allocI32(words);
    let resume = 0;
    let poolArena = engine.arena();
    try {
      engine.ensureFits(4 * (poolWords + words), `the minimum-degree ordering of ${n} bits`, 4 * poolWords);
      let pool = poolArena.allocI32(poolWords);
      let rc: number;
      while ((rc = engine.call('minimum-degree ordering', (kk) => kk.minimumDegreeOrder(n, rp, cl, perm, pos, ws, pool, poolWords, resume, workLimit))) !== 0) {
        if (rc === 3) return false;
        const bigger = Math.max(64, 2 * poolWords);
        engine.ensureFits(4 * bigger, `the minimum-degree ordering of ${n} bits`, 4 * bigger);
        const nextArena = engine.arena();
        const nextPool = nextArena.allocI32(bigger);
        resume = rc === 1 ? 1 : 0;
        if (resume) nextArena.i32(nextPool, poolWords).set(poolArena.i32(pool, poolWords));
        poolArena.dispose();
        poolArena = nextArena;
        pool = nextPool;
        poolWords = bigger;
      }
      return true;
    } finally {
      poolArena.dispose();
      scratch.dispose();
    }
  }

  /** Σ_j (c_j + 1)², c_j column j's count below the diagonal: the numeric factorisation's flops in this order. */
  private factorFlops(n: number, rp: number, cl: number, perm: number, pos: number): number {
    const scratch = this.engine.arena();
    try {
      const parent = scratch.allocI32(n), counts = scratch.allocI32(n), flag = scratch.allocI32(n);
      this.engine.call('symbolic Cholesky', (kk) => kk.symbolicCounts(n, rp, cl, perm, pos, parent, counts, flag));
      let flops = 0;
      for (const c of scratch.i32(counts, n)) flops += (c + 1) * (c + 1);
      return flops;
    } finally {
      scratch.dispose();
    }
  }

  /** nnz(L), diagonal included. */
  get fill(): number {
    return this.colPtr[this.n] + this.n;
  }

  /** L's strictly-lower rows by columns (positions, ascending), copied out. */
  rowIdx(): Int32Array {
    return this.arena.i32(this.p.rowIdx, this.colPtr[this.n]).slice();
  }

  /**
   * Numeric factorisation of P (W + diag(d)) Pᵀ, W's values `val` on the analysed pattern; returns
   * M = Pᵀ L as CSR rows, or the bit whose pivot was not positive.
   */
  factor(val: Float64Array, d: Float64Array): { ok: true; rows: CholeskyRows } | { ok: false; failedBit: number } {
    const n = this.n, nnz = this.colPtr[n], p = this.p;
    if (d.length !== n || val.length !== this.arena.i32(p.rowPtr, n + 1)[n]) throw new EngineError('sparse Cholesky: values or diagonal do not match the analysed pattern');
    const engine = this.engine;
    engine.ensureFits(8 * nnz + 8 * (nnz + n) + 4 * (nnz + n) + 48 * n + val.length * 8, `sparse Cholesky with ${nnz + n} entries`, 8 * (nnz + n));
    const a = engine.arena();
    try {
      const v = a.allocF64(val), dd = a.allocF64(d);
      const Lx = a.allocF64(nnz), diag = a.allocF64(n), w = a.allocF64(n);
      const headL = a.allocI32(n), link = a.allocI32(n), nextEntry = a.allocI32(n);
      const failed = engine.call('sparse Cholesky', (k) => k.choleskyNumeric(n, p.rowPtr, p.col, v, dd, p.perm, p.pos, p.colPtr, p.rowIdx, Lx, diag, w, headL, link, nextEntry));
      if (failed >= 0) return { ok: false, failedBit: failed };
      const mRowPtr = a.allocI32(n + 1), mCol = a.allocI32(nnz + n), mVal = a.allocF64(nnz + n);
      engine.call('sparse Cholesky', (k) => k.choleskyRows(n, p.perm, p.pos, p.colPtr, p.rowIdx, Lx, diag, mRowPtr, mCol, mVal, headL));
      return { ok: true, rows: { rowPtr: a.i32(mRowPtr, n + 1).slice(), col: a.i32(mCol, nnz + n).slice(), values: a.readF64(mVal, nnz + n) } };
    } finally {
      a.dispose();
    }
  }

  dispose(): void {
    this.arena.dispose();
  }
}
