// A relaxation (canonical form + diagonal d + factor M with M Mᵀ = W + D) copied into one engine's
// memory, with the Factor and Relaxed headers the kernels read (assembly/relax/factor_header.ts, relaxed.ts).
import type { Arena, Engine } from '../core/engine.ts';
import { EngineError } from '../core/errors.ts';
import { bindFFT } from './fft-factor.ts';
import type { RelaxationData } from './relaxation-types.ts';

export type { FactorData, RelaxationData } from './relaxation-types.ts';

const KIND_CODE = { dense: 0, sparse: 1 } as const;

/**
 * A relaxation bound into one engine's memory: the factor and relaxed-density headers the continuous samplers'
 * kernels read. Call dispose() when done.
 */
export class BoundRelaxation {
  /** The engine memory holding the relaxation (freed by dispose()). */
  readonly arena: Arena;
  /** Address of the relaxed-density header in WASM memory. */
  readonly relaxed: number;
  /** Address of the factor M's header in WASM memory. */
  readonly factor: number;
  /** f64 × nBits in WASM: π = p(s_i = 1 | x) after each density call. */
  readonly prob: number;
  /** Number of bits n (rows of M). */
  readonly n: number;
  /** Dimension m of the continuous variable x (columns of M). */
  readonly m: number;
  private scratch: { x: number; g: number } | null = null;

  /**
   * Copies `data` into `engine`'s memory and initialises the headers.
   * @param engine The engine whose memory holds the relaxation.
   * @param data The relaxation: canonical form, diagonal d and factor M with M Mᵀ = W + D.
   */
  constructor(readonly engine: Engine, readonly data: RelaxationData) {
    const { form, d, factor } = data;
    if (factor.n !== form.nBits) throw new EngineError(`factor has ${factor.n} rows for ${form.nBits} bits`);
    const arena = (this.arena = engine.arena());
    const k = engine.kernels;
    this.n = form.nBits;
    this.m = factor.m;
    if (factor.kind === 'fft') {
      this.factor = bindFFT(engine, arena, factor.shape, factor.sqrtSpectrum);
    } else {
      const data0 = arena.allocF64(factor.values);
      const index0 = factor.kind === 'sparse' ? arena.allocI32(factor.rowPtr) : 0;
      const index1 = factor.kind === 'sparse' ? arena.allocI32(factor.col) : 0;
      this.factor = arena.alloc(k.factorBytes());
      const aux = factor.kind === 'dense' && isLowerTriangular(factor.values, factor.n, factor.m) ? DENSE_LOWER : 0;
      k.factorInit(this.factor, KIND_CODE[factor.kind], factor.n, factor.m, aux, data0, index0, index1, 0);
    }
    const bias = arena.allocF64(form.a.map((ai, i) => ai - 0.5 * d[i]));
    const blockStart = arena.allocI32(form.blockStart);
    const oneHot = arena.alloc(form.n);
    new Uint8Array(k.memory.buffer, oneHot, form.n).set(form.oneHot);
    const u = arena.allocF64(form.nBits);
    this.prob = arena.allocF64(form.nBits);
    this.relaxed = arena.alloc(k.relaxedBytes());
    const allFree = form.oneHot.every((x) => x === 0) ? 1 : 0;
    k.relaxedInit(this.relaxed, form.n, form.nBits, factor.m, allFree, blockStart, oneHot, bias, this.factor, u, this.prob);
  }

  /** log p(x) up to its constant, and ∇ log p(x), π (copied out). For tests and diagnostics. */
  logDensity(x: ArrayLike<number>): { logp: number; grad: Float64Array; prob: Float64Array } {
    if (x.length !== this.m) throw new EngineError(`x has ${x.length} entries, expected ${this.m}`);
    const a = this.arena;
    // Scratch x and gradient, allocated on first use and reused (arena memory is freed only on dispose).
    this.scratch ??= { x: a.allocF64(this.m), g: a.allocF64(this.m) };
    const { x: xp, g: gp } = this.scratch;
    a.f64(xp, this.m).set(x);
    const logp = this.engine.call('relaxed log density', (k) => k.relaxedLogp(this.relaxed, xp, gp));
    return { logp, grad: a.readF64(gp, this.m), prob: a.readF64(this.prob, this.n) };
  }

  /** Frees the relaxation's engine memory. */
  dispose(): void {
    this.arena.dispose();
  }
}

/** The dense factor's `aux` when it is square and lower triangular (dense Cholesky): its products skip the zeros above the diagonal. */
const DENSE_LOWER = 1;

/** Whether a row-major n × m matrix is square with every entry above the diagonal exactly 0. */
export function isLowerTriangular(values: Float64Array, n: number, m: number): boolean {
  if (n !== m) return false;
  for (let i = 0; i < n; i++) for (let k = i + 1; k < m; k++) if (values[i * m + k] !== 0) return false;
  return true;
}
