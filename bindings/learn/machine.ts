// The parameters of a Boltzmann machine being learned, held in engine memory as a canonical
// pairwise form (bindings/core/canonical.ts, bound by BoundModel) over the whole architecture:
// every coupling is stored (zeros included), so the kernels update a and W in place and the
// particles' Gibbs sweeps read the current values with no rebuild.
//
// Units 0…nVisible−1 are the visible units in data-column order, then the hidden units.
//   boltzmann: fully visible, every pair coupled;   rbm: visible–hidden pairs only;
//   srbm: visible–visible and visible–hidden pairs (no hidden–hidden: the kernels rely on it);
//   potts: fully visible, K states a unit: a one-hot block of K bits, K² couplings a pair.
// Binary units are one bit each. Data rows reach the kernels as bit rows (Potts: one-hot).

import type { Arena, Engine } from '../core/engine.ts';
import { Model, ModelBuilder } from '../core/model.ts';
import { ModelError } from '../core/errors.ts';
import { BoundModel } from '../core/bound.ts';
import type { CanonicalForm } from '../core/canonical.ts';
import { BoundTreeBlocks } from '../samplers/treegibbs.ts';
import { treePartition } from '../samplers/treeblocks.ts';

/**
 * Architectures: 'boltzmann' fully visible binary, 'rbm' restricted (visible–hidden couplings), 'srbm'
 * semi-restricted (also visible–visible), 'potts' fully visible with K states a unit.
 */
export type MachineKind = 'boltzmann' | 'rbm' | 'srbm' | 'potts';
/** All machine kinds. */
export const MACHINE_KINDS: readonly MachineKind[] = ['boltzmann', 'rbm', 'srbm', 'potts'];

/** The parameters of a learned machine. */
export interface MachineParams {
  /** The architecture. */
  readonly kind: MachineKind;
  /** Number of visible units (data columns). */
  readonly nVisible: number;
  /** Number of hidden units (0 for boltzmann and potts). */
  readonly nHidden: number;
  /** States per unit: K for potts, 2 otherwise. */
  readonly states: number;
  /** Biases: one per unit (binary), or per (unit, state) (potts: a[v·K + k]). */
  readonly a: Float64Array;
  /** Couplings: one per architecture pair in `pairs` order (binary), or K × K per pair (potts: w[e·K² + k·K + l]). */
  readonly w: Float64Array;
  /** Architecture pairs (i < j) as [i0, j0, i1, j1, …]. */
  readonly pairs: Int32Array;
}

/**
 * Every value an integer in 0…K−1 (K = Infinity: any non-negative integer): a plain array's 0.5,
 * NaN or −1 passed and were stored as 0, 0 and 255.
 */
export function checkStates(data: BinaryData, K: number): void {
  for (let i = 0; i < data.values.length; i++) {
    const x = data.values[i];
    if (!(Number.isInteger(x) && x >= 0 && x < K)) throw new ModelError(`data row ${Math.floor(i / data.cols) + 1}, column ${(i % data.cols) + 1}: ${x} is not a state${K < Infinity ? ` in 0…${K - 1}` : ' (an integer ≥ 0)'}`);
  }
}

/** Data: `rows` samples of `cols` states (0/1 for binary machines, 0…K−1 for Potts), row-major. */
export interface BinaryData {
  /** Number of samples. */
  readonly rows: number;
  /** Number of variables per sample. */
  readonly cols: number;
  /** The states, row-major: values[r·cols + c]. */
  readonly values: Uint8Array;
}

/** The architecture's pairs, i < j, sorted. */
export function machinePairs(kind: MachineKind, nVisible: number, nHidden: number): Int32Array {
  const out: number[] = [];
  const n = nVisible + nHidden;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const vv = j < nVisible, vh = i < nVisible && j >= nVisible;
      if (((kind === 'boltzmann' || kind === 'potts') && vv) || (kind === 'rbm' && vh) || (kind === 'srbm' && (vv || vh))) out.push(i, j);
    }
  }
  return Int32Array.from(out);
}

/** The machine as a Model: a unary factor per unit and a pairwise factor per architecture pair. */
export function machineModel(p: MachineParams): Model {
  const n = p.nVisible + p.nHidden;
  const b = new ModelBuilder(new Array(n).fill(p.states));
  const E = p.pairs.length / 2;
  if (p.kind === 'potts') {
    const K = p.states;
    for (let i = 0; i < n; i++) b.addUnary(i, p.a.slice(i * K, (i + 1) * K));
    for (let e = 0; e < E; e++) b.addPairwise(p.pairs[2 * e], p.pairs[2 * e + 1], p.w.slice(e * K * K, (e + 1) * K * K));
    return b.build();
  }
  for (let i = 0; i < n; i++) b.addUnary(i, [0, p.a[i]]);
  for (let e = 0; e < E; e++) b.addPairwise(p.pairs[2 * e], p.pairs[2 * e + 1], [0, 0, 0, p.w[e]]);
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

  /** Bits per unit: K for potts, 1 otherwise. */
  readonly width: number;
  /** Bits of the visible units (the data rows' length in the kernels). */
  readonly visibleBits: number;

  constructor(readonly engine: Engine, readonly kind: MachineKind, readonly nVisible: number, readonly nHidden: number, readonly states = 2) {
    if ((kind === 'boltzmann' || kind === 'potts') && nHidden !== 0) throw new ModelError(`a fully visible ${kind === 'potts' ? 'Potts model' : 'Boltzmann machine'} has no hidden units`);
    if ((kind === 'rbm' || kind === 'srbm') && nHidden < 1) throw new ModelError(`an ${kind.toUpperCase()} needs at least one hidden unit`);
    if (kind !== 'potts' && states !== 2) throw new ModelError(`a ${kind} has binary units, not ${states} states`);
    if (!(Number.isInteger(states) && states >= 2 && states <= 255)) throw new ModelError(`states must be an integer in [2, 255], got ${states}`);
    if (!MACHINE_KINDS.includes(kind)) throw new ModelError(`kind must be one of ${MACHINE_KINDS.join(', ')}, got ${String(kind)}`);
    if (!(Number.isInteger(nVisible) && nVisible >= 1 && Number.isInteger(nHidden) && nHidden >= 0)) throw new ModelError(`a machine needs an integer ≥ 1 of visible units and ≥ 0 of hidden units, got ${nVisible} and ${nHidden}`);
    const B = (this.width = kind === 'potts' ? states : 1);
    const units = nVisible + nHidden, n = (this.nBits = units * B);
    this.visibleBits = nVisible * B;
    this.pairs = machinePairs(kind, nVisible, nHidden);
    const E = this.pairs.length / 2, per = B * B;
    const rowPtr = new Int32Array(n + 1);
    for (let e = 0; e < E; e++) {
      for (let k = 0; k < B; k++) {
        rowPtr[this.pairs[2 * e] * B + k + 1] += B;
        rowPtr[this.pairs[2 * e + 1] * B + k + 1] += B;
      }
    }
    for (let p = 0; p < n; p++) rowPtr[p + 1] += rowPtr[p];
    // Pairs come sorted by (i, j), so filling rows in pair order leaves every row sorted by column:
    // row p receives its smaller partners (as j) before its larger ones (as i), each in order.
    const fill = rowPtr.slice(0, n), col = new Int32Array(2 * E * per), entry = new Int32Array(2 * E * per);
    for (let e = 0; e < E; e++) {
      const i = this.pairs[2 * e], j = this.pairs[2 * e + 1];
      for (let k = 0; k < B; k++) {
        for (let l = 0; l < B; l++) {
          const p = i * B + k, q = j * B + l, t = e * per + k * B + l;
          entry[2 * t] = fill[p];
          col[fill[p]++] = q;
          entry[2 * t + 1] = fill[q];
          col[fill[q]++] = p;
        }
      }
    }
    this.entry = entry;
    this.nnz = 2 * E * per;
    const form: CanonicalForm = {
      n: units, nBits: n, blockStart: Int32Array.from({ length: units + 1 }, (_, v) => v * B), oneHot: new Uint8Array(units).fill(B > 1 ? 1 : 0),
      card: new Int32Array(units).fill(states), a: new Float64Array(n), rowPtr, col, val: new Float64Array(this.nnz), logZOffset: 0,
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

  /**
   * Writes the parameters into engine memory, after checking they are this machine's: a short `a` or a
   * long `w` was read past its end or cut silently, and a NaN gave a NaN log-likelihood.
   */
  set(p: MachineParams): void {
    this.check(p);
    this.arena.f64(this.aPtr, this.nBits).set(p.a);
    const val = this.arena.f64(this.valPtr, Math.max(1, this.nnz));
    for (let t = 0; t < p.w.length; t++) val[this.entry[2 * t]] = val[this.entry[2 * t + 1]] = p.w[t];
  }

  /**
   * Refuses parameters of another architecture or size, and values that are not numbers: biases may
   * be −∞ (a state the machine forbids), nothing may be NaN or +∞, couplings must be finite.
   */
  check(p: MachineParams): void {
    if (p === null || typeof p !== 'object') throw new ModelError(`machine parameters must be an object, got ${p === null ? 'null' : typeof p}`);
    const name = { boltzmann: 'a Boltzmann machine', rbm: 'an RBM', srbm: 'an SRBM', potts: `a ${this.states}-state Potts machine` }[this.kind];
    const what = `${name} with ${this.nVisible} visible${this.nHidden ? ` and ${this.nHidden} hidden` : ''} units`;
    if (p.kind !== this.kind || p.nVisible !== this.nVisible || p.nHidden !== this.nHidden || p.states !== this.states) {
      throw new ModelError(`the parameters are of a ${p.kind} with ${p.nVisible} visible and ${p.nHidden} hidden units, ${p.states} states each, but the machine is ${what}`);
    }
    const E = this.pairs.length / 2, per = this.width * this.width;
    if (p.a?.length !== this.nBits) throw new ModelError(`params.a has ${p.a?.length} entries, but ${what} has ${this.nBits} biases`);
    if (p.w?.length !== E * per) throw new ModelError(`params.w has ${p.w?.length} entries, but ${what} has ${E * per} couplings${per > 1 ? ` (${E} pairs × ${per})` : ''}`);
    if (p.pairs !== undefined && (p.pairs.length !== this.pairs.length || p.pairs.some((x, i) => x !== this.pairs[i]))) throw new ModelError(`params.pairs are not the pairs of ${what} (machinePairs gives them; w follows their order)`);
    for (let i = 0; i < p.a.length; i++) if (!(typeof p.a[i] === 'number' && p.a[i] < Infinity)) throw new ModelError(`params.a[${i}] is ${p.a[i]}: a bias must be a number or −∞`);
    for (let i = 0; i < p.w.length; i++) if (!Number.isFinite(p.w[i])) throw new ModelError(`params.w[${i}] is ${p.w[i]}: a coupling must be a finite number`);
  }

  /** Copies the parameters out of engine memory. */
  get(): MachineParams {
    const a = this.arena.readF64(this.aPtr, this.nBits);
    return { kind: this.kind, nVisible: this.nVisible, nHidden: this.nHidden, states: this.states, a, w: this.perPair(this.valPtr), pairs: this.pairs };
  }

  /** Per coupling (params.w's layout), the value at its first entry of an array laid out like W's entries (at ptr). */
  perPair(ptr: number): Float64Array {
    const val = this.arena.f64(ptr, Math.max(1, this.nnz));
    const w = new Float64Array(this.nnz / 2);
    for (let t = 0; t < w.length; t++) w[t] = val[this.entry[2 * t]];
    return w;
  }

  /**
   * The data's rows in engine memory as bit rows of `stride` = visibleBits bytes (Potts: one-hot,
   * expanded by a kernel), after checking every value is a state.
   */
  loadData(data: BinaryData): number {
    if (data.cols !== this.nVisible) throw new ModelError(`the data have ${data.cols} columns but the model has ${this.nVisible} visible units`);
    if (!Number.isInteger(data.rows) || data.rows < 1) throw new ModelError(`the data's rows must be an integer ≥ 1, got ${data.rows}`);
    if (data.values.length !== data.rows * data.cols) throw new ModelError(`the data have ${data.values.length} values, expected ${data.rows} × ${data.cols}`);
    const K = this.states;
    checkStates(data, K);
    const k = this.engine.kernels, ar = this.arena;
    const raw = ar.alloc(data.values.length);
    new Uint8Array(k.memory.buffer, raw, data.values.length).set(data.values);
    if (this.width === 1) return raw;
    const bits = ar.alloc(data.rows * this.visibleBits);
    this.engine.call('learn one-hot rows', (kk) => kk.learnOneHotRows(raw, data.rows * data.cols, K, bits));
    return bits;
  }

  dispose(): void {
    this.arena.dispose();
  }
}
