// Tree-block Gibbs on the discrete model (Hamze & de Freitas 2004): the blocks of
// bindings/treeblocks.ts, each redrawn exactly given the rest by forward filtering / backward
// sampling in WASM (assembly/treegibbs.ts). Used as AIS's transition (bindings/logz.ts) and as a
// sampler of its own with the shape init(seed, chain) → state, step(state, sweeps, acc?) → info.

import type { Engine } from './engine.ts';
import type { Model } from './model.ts';
import { toCanonical } from './canonical.ts';
import { BoundModel } from './bound.ts';
import { treePartition, type TreePartition } from './treeblocks.ts';
import { EngineError, ModelError } from './errors.ts';
import { seedWords } from './seed.ts';

/** Tag of the tree-block sampler's stream within a chain. */
const TREE_STREAM = 0x5442; // "TB"

/**
 * The partition copied into a bound model's arena: the header assembly/treegibbs.ts reads, and a
 * work buffer of the size it needs. Edge tables index W's value array, so they serve any header
 * sharing the model's structure (AIS's tempered copy).
 */
export class BoundTreeBlocks {
  readonly header: number;
  readonly work: number;

  constructor(readonly bound: BoundModel, readonly partition: TreePartition) {
    const form = bound.form;
    const { arena, engine } = bound;
    const n = form.n;
    if (partition.n !== n) throw new ModelError(`tree partition over ${partition.n} variables for a model of ${n}`);
    const stateStart = new Int32Array(n + 1);
    let maxCard = 1;
    for (let v = 0; v < n; v++) {
      const K = form.oneHot[v] ? form.card[v] : 2;
      stateStart[v + 1] = stateStart[v] + K;
      maxCard = Math.max(maxCard, K);
    }
    // The bit of (v, k), or −1 for a free bit's state 0 (which sets no bit).
    const bitOf = (v: number, k: number) => (form.oneHot[v] ? form.blockStart[v] + k : k === 1 ? form.blockStart[v] : -1);
    const findEntry = (p: number, q: number) => {
      if (p < 0 || q < 0) return -1;
      for (let k = form.rowPtr[p]; k < form.rowPtr[p + 1]; k++) if (form.col[k] === q) return k;
      return -1;
    };
    const pairOff = new Int32Array(n).fill(-1);
    const pairIdx: number[] = [];
    for (let v = 0; v < n; v++) {
      const p = partition.parent[v];
      if (p < 0) continue;
      pairOff[v] = pairIdx.length;
      const Kv = stateStart[v + 1] - stateStart[v], Kp = stateStart[p + 1] - stateStart[p];
      for (let k = 0; k < Kv; k++) for (let l = 0; l < Kp; l++) pairIdx.push(findEntry(bitOf(v, k), bitOf(p, l)));
    }
    const blockPtr = new Int32Array(partition.blocks.length + 1);
    const order = new Int32Array(n);
    partition.blocks.forEach((b, i) => {
      order.set(b, blockPtr[i]);
      blockPtr[i + 1] = blockPtr[i] + b.length;
    });
    if (blockPtr[partition.blocks.length] !== n) throw new ModelError('tree partition does not cover every variable once');
    const ptrs = [blockPtr, order, partition.parent, stateStart, pairOff, Int32Array.from(pairIdx.length ? pairIdx : [-1])].map((a) => arena.allocI32(a));
    ptrs.push(arena.allocF64(n), arena.allocF64(n)); // the free-bit path's coupling cache
    this.header = arena.alloc(engine.kernels.treeBlocksBytes());
    engine.call('treeBlocksInit', (k) => k.treeBlocksInit(this.header, partition.blocks.length, stateStart[n], maxCard, ...ptrs));
    this.work = arena.alloc(engine.kernels.treeWorkBytes(bound.header, this.header));
    engine.kernels.treeRefresh(bound.header, this.header);
  }
}

export interface TreeGibbsState {
  /** Address of the chain's state in WASM memory: generator stream, then one byte per bit. */
  readonly ptr: number;
  readonly chain: number;
}

export interface TreeGibbsInfo {
  sweeps: number;
  /** Fraction of variable updates that changed the variable's state. */
  changeRate: number;
}

export class TreeGibbsSampler {
  private readonly bound: BoundModel;
  readonly tree: BoundTreeBlocks;

  constructor(readonly engine: Engine, model: Model, partition?: TreePartition) {
    const form = toCanonical(model);
    this.bound = new BoundModel(engine, form);
    this.tree = new BoundTreeBlocks(this.bound, partition ?? treePartition(form));
  }

  get form() {
    return this.bound.form;
  }

  get partition(): TreePartition {
    return this.tree.partition;
  }

  private header(): number {
    if (this.bound.arena.isDisposed) throw new EngineError('use after dispose(): this sampler has released its engine memory');
    return this.bound.header;
  }

  /** A chain's state, drawn uniformly at random from its own stream (seed, chain). */
  init(seed: number, chain: number): TreeGibbsState {
    const header = this.header();
    const ptr = this.bound.arena.alloc(this.engine.kernels.gibbsStateBytes(header));
    const [lo, hi] = seedWords(seed);
    this.engine.call('tree gibbs init', (k) => {
      k.rngSeed(ptr, lo, hi, chain, TREE_STREAM);
      k.gibbsInit(header, ptr);
    });
    return { ptr, chain };
  }

  /** Runs `sweeps` passes over the blocks; with `acc` (f64 per bit) adds every bit's value after each sweep. */
  step(state: TreeGibbsState, sweeps: number, acc = 0): TreeGibbsInfo {
    const header = this.header();
    const changed = this.engine.call('tree gibbs step', (k) => k.treeGibbsStep(header, this.tree.header, state.ptr, sweeps, acc, this.tree.work));
    return { sweeps, changeRate: changed / (sweeps * this.form.n) };
  }

  /** Sets a chain's configuration (user states). */
  setConfiguration(state: TreeGibbsState, x: ArrayLike<number>): void {
    const f = this.form;
    this.header();
    const s = new Uint8Array(this.engine.kernels.memory.buffer, state.ptr + this.engine.kernels.rngStateBytes(), f.nBits);
    s.fill(0);
    for (let v = 0; v < f.n; v++) {
      if (!(x[v] >= 0 && x[v] < f.card[v])) throw new ModelError(`state ${x[v]} of variable ${v} out of range`);
      if (f.oneHot[v]) s[f.blockStart[v] + x[v]] = 1;
      else s[f.blockStart[v]] = x[v];
    }
  }

  /** Current configuration of a chain, as user states. */
  configuration(state: TreeGibbsState): Int32Array {
    const f = this.form;
    this.header();
    const s = new Uint8Array(this.engine.kernels.memory.buffer, state.ptr + this.engine.kernels.rngStateBytes(), f.nBits);
    const x = new Int32Array(f.n);
    for (let v = 0; v < f.n; v++) {
      const b = f.blockStart[v];
      if (!f.oneHot[v]) x[v] = s[b];
      else for (let k = 0; k < f.card[v]; k++) if (s[b + k]) x[v] = k;
    }
    return x;
  }

  /** A zeroed f64-per-bit accumulator in this sampler's memory. */
  accumulator(): number {
    return this.bound.arena.alloc(this.form.nBits * 8);
  }

  readAndClear(acc: number): Float64Array {
    const view = this.bound.arena.f64(acc, this.form.nBits);
    const out = view.slice();
    view.fill(0);
    return out;
  }

  dispose(): void {
    this.bound.dispose();
  }
}
