// A canonical form copied into one engine's memory, with the header the kernels read.
import type { Arena, Engine } from './engine.ts';
import type { Model } from './model.ts';
import { canonicalSize, toCanonical, type CanonicalForm } from './canonical.ts';

export interface FormSize {
  n: number;
  nBits: number;
  nnz: number;
  maxBlock: number;
}

/** A canonical form's size. */
export function formSize(form: CanonicalForm): FormSize {
  let maxBlock = 1;
  for (let v = 0; v < form.n; v++) maxBlock = Math.max(maxBlock, form.blockStart[v + 1] - form.blockStart[v]);
  return { n: form.n, nBits: form.nBits, nnz: form.val.length, maxBlock };
}

/** WASM bytes a BoundModel of this size allocates (each buffer rounded to 16 bytes as the arena does). */
export function boundBytes(engine: Engine, s: FormSize): number {
  const r = (b: number) => Math.max(16, Math.ceil(b / 16) * 16);
  return r(4 * (s.n + 1)) + r(s.n) + r(8 * s.nBits) + r(4 * (s.nBits + 1)) + r(4 * s.nnz) + r(8 * s.nnz) + r(engine.kernels.pairwiseFormBytes());
}

export class BoundModel {
  readonly arena: Arena;
  /** Address of the kernels' PairwiseForm header. */
  readonly header: number;
  readonly maxBlock: number;

  /**
   * The model's canonical form bound into the engine, after checking (from its size alone, before
   * building or allocating anything) that it fits with `extraBytes` more for the caller's buffers.
   * `form`: the model's canonical form, when the caller has built it (its size is then read off it).
   */
  static fromModel(engine: Engine, model: Model, what: string, extraBytes: (s: FormSize) => number = () => 0, form?: CanonicalForm): BoundModel {
    const size = form ? formSize(form) : canonicalSize(model);
    engine.ensureFits(boundBytes(engine, size) + extraBytes(size), `${what} on ${model.n} variables`, 8 * size.nnz);
    return new BoundModel(engine, form ?? toCanonical(model));
  }

  constructor(readonly engine: Engine, readonly form: CanonicalForm) {
    const k = engine.kernels;
    engine.ensureFits(boundBytes(engine, { n: form.n, nBits: form.nBits, nnz: form.val.length, maxBlock: 1 }), `the model's binary pairwise form (${form.nBits} bits)`, 8 * form.val.length);
    const arena = (this.arena = engine.arena());
    const maxBlock = (this.maxBlock = formSize(form).maxBlock);
    const blockStart = arena.allocI32(form.blockStart);
    const oneHot = arena.alloc(form.n);
    new Uint8Array(k.memory.buffer, oneHot, form.n).set(form.oneHot);
    const a = arena.allocF64(form.a);
    const rowPtr = arena.allocI32(form.rowPtr);
    const col = arena.allocI32(form.col);
    const val = arena.allocF64(form.val);
    this.header = arena.alloc(k.pairwiseFormBytes());
    this.layout = { blockStart, oneHot, rowPtr, col, allFree: form.oneHot.every((x) => x === 0) ? 1 : 0 };
    engine.call('pairwiseFormInit', (kk) =>
      kk.pairwiseFormInit(this.header, form.n, form.nBits, this.layout.allFree, maxBlock, blockStart, oneHot, a, rowPtr, col, val),
    );
  }

  private readonly layout: { blockStart: number; oneHot: number; rowPtr: number; col: number; allFree: number };

  /**
   * A second header over the same structure with its own (zeroed) a and W values, for kernels that
   * rewrite the parameters (e.g. AIS tempering) while the original stays intact.
   */
  copyWithOwnValues(): number {
    const { form, arena, engine } = this;
    const { blockStart, oneHot, rowPtr, col, allFree } = this.layout;
    const a = arena.allocF64(form.nBits);
    const val = arena.allocF64(Math.max(1, form.val.length));
    const hdr = arena.alloc(engine.kernels.pairwiseFormBytes());
    engine.kernels.pairwiseFormInit(hdr, form.n, form.nBits, allFree, this.maxBlock, blockStart, oneHot, a, rowPtr, col, val);
    return hdr;
  }

  dispose(): void {
    this.arena.dispose();
  }
}

/**
 * Refuses up front a relaxation sampler (DHMC, MALA) whose per-chain work area — one block of
 * 13 doubles per bit (assembly/samplers/hmc.ts) — cannot be allocated, before the relaxation is
 * built. The dimension is at least the number of bits, so this never refuses a job that fits.
 */
export function ensureChainWorkFits(engine: Engine, model: Model, what: string): void {
  const { nBits } = canonicalSize(model);
  const work = engine.kernels.chainWorkBytes(nBits, nBits) >>> 0;
  engine.ensureFits(work + 8 * nBits * 4, `${what} on ${model.n} variables (a chain's work area)`, work);
}

