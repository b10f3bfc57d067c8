// The parameters of a binary Boltzmann machine being learned, held in engine memory as a canonical
// pairwise form (bindings/core/canonical.ts, bound by BoundModel) over the whole architecture:
// every coupling is stored (zeros included), so the kernels update a and W in place and the
// particles' Gibbs sweeps read the current values with no rebuild.
//
// Bits 0…nVisible−1 are the visible units in data-column order, then the hidden units.
//   boltzmann: fully visible, every pair coupled;   rbm: visible–hidden pairs only;
//   srbm: visible–visible and visible–hidden pairs (no hidden–hidden: the kernels rely on it).

import type { Arena, Engine } from '../core/engine.ts';
import { Model, ModelBuilder } from '../core/model.ts';
import { ModelError } from '../core/errors.ts';
import { BoundModel } from '../core/bound.ts';
import type { CanonicalForm } from '../core/canonical.ts';
import { BoundTreeBlocks } from '../samplers/treegibbs.ts';
import { treePartition } from '../samplers/treeblocks.ts';

export type MachineKind = 'boltzmann' | 'rbm' | 'srbm';
export const MACHINE_KINDS: readonly MachineKind[] = ['boltzmann', 'rbm', 'srbm'];

export interface MachineParams {
  readonly kind: MachineKind;
  readonly nVisible: number;
  readonly nHidden: number;
  /** Biases, length nVisible + nHidden. */
  readonly a: Float64Array;
  /** Couplings, one per architecture pair in `pairs` order. */
  readonly w: Float64Array;
  /** Architecture pairs (i < j) as [i0, j0, i1, j1, …]. */
  readonly pairs: Int32Array;
}

/** The architecture's pairs, i < j, sorted. */
export function machinePairs(kind: MachineKind, nVisible: number, nHidden: number): Int32Array {
  const out: number[] = [];
  const n = nVisible + nHidden;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const vv = j < nVisible, vh = i < nVisible && j >= nVisible;
      if ((kind === 'boltzmann' && vv) || (kind === 'rbm' && vh) || (kind === 'srbm' && (vv || vh))) out.push(i, j);
    }
  }
  return Int32Array.from(out);
}

/** The machine as a Model: a unary factor per unit and a pairwise factor per architecture pair. */
export function machineModel(p: MachineParams): Model {
  const n = p.nVisible + p.nHidden;
  const b = new ModelBuilder(new Array(n).fill(2));
  for (let i = 0; i < n; i++) b.addUnary(i, [0, p.a[i]]);
  for (let e = 0; e < p.w.length; e++) b.addPairwise(p.pairs[2 * e], p.pairs[2 * e + 1], [0, 0, 0, p.w[e]]);
  return b.build();
}

/** A machine's canonical form in engine memory, with the header the kernels read. */
export class BoundMachine {
  readonly arena: Arena;
  readonly header: number;
  readonly nBits: number;
  readonly nnz: number;
  readonly aPtr: number;
  readonly valPtr: number;
  readonly bound: BoundModel;
  private tree: BoundTreeBlocks | undefined;
  /** For pair e: its two entries' positions in val. */
  private readonly entry: Int32Array;

  constructor(readonly engine: Engine, readonly kind: MachineKind, readonly nVisible: number, readonly nHidden: number) {
    const n = (this.nBits = nVisible + nHidden);
    if (kind === 'boltzmann' && nHidden !== 0) throw new ModelError('a fully visible Boltzmann machine has no hidden units');
    if (kind !== 'boltzmann' && nHidden < 1) throw new ModelError(`an ${kind.toUpperCase()} needs at least one hidden unit`);
    this.pairs = machinePairs(kind, nVisible, nHidden);
    const E = this.pairs.length / 2;
    const rowPtr = new Int32Array(n + 1);
    for (let e = 0; e < E; e++) {
      rowPtr[this.pairs[2 * e] + 1]++;
      rowPtr[this.pairs[2 * e + 1] + 1]++;
    }
    for (let p = 0; p < n; p++) rowPtr[p + 1] += rowPtr[p];
    // Pairs come sorted by (i, j), so filling rows in pair order leaves every row sorted by column:
    // row p receives its smaller partners (as j) before its larger ones (as i), each in order.
    const fill = rowPtr.slice(0, n), col = new Int32Array(2 * E), entry = new Int32Array(2 * E);
    for (let e = 0; e < E; e++) {
      const i = this.pairs[2 * e], j = this.pairs[2 * e + 1];
      entry[2 * e] = fill[i];
      col[fill[i]++] = j;
      entry[2 * e + 1] = fill[j];
      col[fill[j]++] = i;
    }
    for (let p = 0; p < n; p++) for (let k = rowPtr[p] + 1; k < rowPtr[p + 1]; k++) if (col[k] <= col[k - 1]) throw new Error('machine rows not sorted');
    this.entry = entry;
    this.nnz = 2 * E;
    const form: CanonicalForm = {
      n, nBits: n, blockStart: Int32Array.from({ length: n + 1 }, (_, i) => i), oneHot: new Uint8Array(n), card: new Int32Array(n).fill(2),
      a: new Float64Array(n), rowPtr, col, val: new Float64Array(2 * E), logZOffset: 0,
    };
    this.bound = new BoundModel(engine, form);
    this.arena = this.bound.arena;
    this.header = this.bound.header;
    this.aPtr = engine.kernels.learnFormBiases(this.header) >>> 0;
    this.valPtr = engine.kernels.learnFormCouplings(this.header) >>> 0;
  }

  /** Tree-block Gibbs blocks over the architecture (zero couplings included, as they will change). */
  treeBlocks(): BoundTreeBlocks {
    return (this.tree ??= new BoundTreeBlocks(this.bound, treePartition(this.bound.form)));
  }

  readonly pairs: Int32Array;

  /** Writes the parameters into engine memory. */
  set(p: MachineParams): void {
    this.arena.f64(this.aPtr, this.nBits).set(p.a);
    const val = this.arena.f64(this.valPtr, Math.max(1, this.nnz));
    for (let e = 0; e < p.w.length; e++) val[this.entry[2 * e]] = val[this.entry[2 * e + 1]] = p.w[e];
  }

  /** Copies the parameters out of engine memory. */
  get(): MachineParams {
    const a = this.arena.readF64(this.aPtr, this.nBits);
    return { kind: this.kind, nVisible: this.nVisible, nHidden: this.nHidden, a, w: this.perPair(this.valPtr), pairs: this.pairs };
  }

  /** Per pair, the value at its first entry of an array laid out like W's entries (at ptr). */
  perPair(ptr: number): Float64Array {
    const val = this.arena.f64(ptr, Math.max(1, this.nnz));
    const w = new Float64Array(this.pairs.length / 2);
    for (let e = 0; e < w.length; e++) w[e] = val[this.entry[2 * e]];
    return w;
  }

  dispose(): void {
    this.arena.dispose();
  }
}
