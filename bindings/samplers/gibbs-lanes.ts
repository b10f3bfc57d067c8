// Single-site Gibbs for a batch of chains, one chain per SIMD lane (assembly/samplers/gibbs_lanes.ts):
// f64x2 by default, where chain c of a batch is the chain GibbsSampler runs for the same (seed, c),
// bit for bit; f32x4 on request (`precision: 'f32'`), four chains a vector, a different chain with
// the same target. `scan: 'colored'` visits the blocks color by color (a proper coloring of the
// interaction graph), so consecutive updates are independent and overlap; a different valid chain.
//
// The batch runs in lockstep: every chain gets the same calls, so each chain's events (steps,
// batches) are those the one-chain driver (chains.ts) reports for it; the caller folds them chain
// after chain, as before (gibbs.ts runGibbs, parallel-job.ts).

import type { Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { decode, type CanonicalForm } from '../core/canonical.ts';
import { BoundModel, type FormSize } from '../core/bound.ts';
import { EngineError, ModelError } from '../core/errors.ts';
import { checkChainId, seedWords } from '../core/seed.ts';
import { checkCount, MAX_LOOP_COUNT } from '../core/options.ts';
import { SupportStarts } from '../core/feasible.ts';
import { splitEvenly } from './estimators.ts';
import type { DiscreteEvent } from './chains.ts';
import { checkTableMode, probabilityTable, tableMayApply, tablePlanBytes, type ProbabilityTable, type TableMode } from './gibbs-table.ts';

/** Arithmetic of the lanes' Gibbs kernel: 'f64' (two chains per vector) or 'f32' (four). */
export const PRECISIONS = ['f64', 'f32'] as const;
/** See PRECISIONS. */
export type Precision = (typeof PRECISIONS)[number];
/** Visiting orders of a sweep: 'sequential' blocks in index order, 'colored' color by color (coloredOrder). */
export const SCANS = ['sequential', 'colored'] as const;
/** See SCANS. */
export type Scan = (typeof SCANS)[number];

export function checkPrecision(p: unknown): Precision {
  if (!PRECISIONS.includes(p as Precision)) throw new ModelError(`precision must be one of ${PRECISIONS.join(', ')}, got "${String(p)}"`);
  return p as Precision;
}

export function checkScan(s: unknown): Scan {
  if (!SCANS.includes(s as Scan)) throw new ModelError(`scan must be one of ${SCANS.join(', ')}, got "${String(s)}"`);
  return s as Scan;
}

/**
 * Whether the tree-block lanes kernels (AIS's, tree-block Gibbs chains') take this form: every block
 * a free bit, every bias and coupling finite.
 */
export function lanesApply(form: CanonicalForm): boolean {
  if (form.oneHot.some((x) => x !== 0)) return false;
  return form.a.every(Number.isFinite) && form.val.every(Number.isFinite);
}

/**
 * WASM bytes a GibbsLanes sampler allocates besides the bound form, at most (each buffer rounded up
 * as the arena does): a batch of `chains` chains (streams, states), its accumulator, the scratch,
 * and the visiting order or the f32 copies when asked for.
 */
export function lanesMemory(s: FormSize, chains: number, precision: Precision, scan: Scan): number {
  const B = Math.ceil(Math.max(1, chains) / (precision === 'f32' ? 4 : 2)) * (precision === 'f32' ? 4 : 2);
  return B * (9 * s.nBits + 256) + 32 * s.maxBlock + 64 + (scan === 'colored' ? 4 * s.n + 16 : 0) + (precision === 'f32' ? 4 * (s.nBits + s.nnz) + 32 : 0);
}

/** A batch of chains run together in SIMD lanes. */
export interface LanesBatch {
  /** Address of the batch's states in WASM memory. */
  readonly ptr: number;
  /** The chain ids of the batch's lanes (padding lanes excluded). */
  readonly chains: number[];
  /** Lanes, a multiple of the vector width (padding lanes run a copy of the last chain's stream). */
  readonly width: number;
}

/**
 * A proper coloring's visiting order of the blocks: a two-coloring when the block graph is
 * bipartite (checkerboard on lattices), greedy coloring in index order otherwise; blocks of color 0
 * first, each color in index order. Returns the order, the number of colors and each block's color.
 */
export function coloredOrder(form: CanonicalForm): { order: Int32Array; colors: number; color: Int32Array } {
  const n = form.n;
  const blockOf = new Int32Array(form.nBits);
  for (let v = 0; v < n; v++) for (let b = form.blockStart[v]; b < form.blockStart[v + 1]; b++) blockOf[b] = v;
  // Block u's neighbours, read off the bits' compressed rows (an array per block made a 10⁶-site
  // lattice's coloring take 0.6 s): u's bits in order, each row in order, other blocks only (a
  // neighbour may repeat, as it did in the lists).
  const { blockStart, rowPtr, col } = form;
  const forNeighbours = (u: number, visit: (w: number) => void): void => {
    for (let i = blockStart[u]; i < blockStart[u + 1]; i++) {
      for (let k = rowPtr[i]; k < rowPtr[i + 1]; k++) {
        const w = blockOf[col[k]];
        if (w !== u) visit(w);
      }
    }
  };
  const color = new Int32Array(n).fill(-1);
  // Breadth-first two-coloring, component by component; abandoned at the first odd cycle.
  let bipartite = true;
  const queue = new Int32Array(n);
  for (let s = 0; s < n && bipartite; s++) {
    if (color[s] >= 0) continue;
    color[s] = 0;
    let head = 0, tail = 0;
    queue[tail++] = s;
    while (head < tail && bipartite) {
      const u = queue[head++];
      forNeighbours(u, (w) => {
        if (color[w] < 0) (color[w] = 1 - color[u]), (queue[tail++] = w);
        else if (color[w] === color[u]) bipartite = false;
      });
    }
  }
  if (!bipartite) {
    color.fill(-1);
    const used = new Int32Array(n + 1).fill(-1);
    for (let u = 0; u < n; u++) {
      forNeighbours(u, (w) => {
        if (color[w] >= 0) used[color[w]] = u;
      });
      let c = 0;
      while (used[c] === u) c++;
      color[u] = c;
    }
  }
  let colors = 0;
  for (let u = 0; u < n; u++) colors = Math.max(colors, color[u] + 1);
  const order = new Int32Array(n);
  let at = 0;
  for (let c = 0; c < colors; c++) for (let u = 0; u < n; u++) if (color[u] === c) order[at++] = u;
  return { order, colors, color };
}

/**
 * Single-site Gibbs chains in SIMD lanes: 2 (f64) or 4 (f32) chains per 128-bit vector, each with its own stream.
 * Call dispose() when done.
 */
export class GibbsLanes {
  protected readonly bound: BoundModel;
  private readonly scratch: number;
  /** Visiting order (0: natural). */
  private readonly order: number;
  private readonly a32: number = 0;
  private readonly val32: number = 0;
  /** Chains per vector. */
  readonly lanes: number;
  /** Number of colors of the colored scan (0 for the sequential scan). */
  readonly colors: number = 0;
  /** The most chains a batch holds (padded to whole vectors). */
  readonly width: number;
  /** The batch memory and accumulator, allocated on the first init and reused by later ones. */
  private batchPtr = 0;
  /** The batch of the latest init: the only one whose memory is still its own. */
  private current: LanesBatch | null = null;
  private accPtr = 0;
  /** The probability table the f64 sequential scan reads (batches of 2 or 4 chains), or null. */
  readonly table: ProbabilityTable | null = null;

  /**
   * `width`: the most chains a batch will hold (memory is checked for it up front). `stream`: the
   * sampler's tag within a chain (GibbsSampler's, so the lanes reproduce its chains).
   * @param engine The engine whose memory holds the sampler.
   * @param precision 'f64' (default) or 'f32'.
   * @param scan 'sequential' (default) or 'colored'.
   * @param table Probability table (gibbs-table.ts): 'auto' (default), 'on' or 'off'; used by the
   *   f64 sequential scan of batches of 2 or 4 chains ('on' with f32 or the colored scan: ModelError).
   * @param updates Site updates per site this sampler is expected to run (all chains), for 'auto'.
   * @param form The model's canonical form, when the caller has built it (else built here).
   */
  constructor(readonly engine: Engine, private readonly model: Model, width: number, private readonly stream: number, readonly precision: Precision = 'f64', readonly scan: Scan = 'sequential', table: TableMode = 'auto', updates?: number, form?: CanonicalForm) {
    checkPrecision(precision);
    checkScan(scan);
    checkTableMode(table);
    const tableScan = precision === 'f64' && scan === 'sequential';
    if (table === 'on' && !tableScan) throw new ModelError("probabilityTable 'on' needs the f64 sequential scan");
    this.lanes = precision === 'f32' ? 4 : 2;
    this.width = Math.ceil(Math.max(1, width) / this.lanes) * this.lanes;
    this.bound = BoundModel.fromModel(engine, model, 'gibbs', (s) => lanesMemory(s, width, precision, scan) + (tableMayApply(table, tableScan, updates) ? tablePlanBytes(s.nBits) : 0), form);
    const arena = this.bound.arena;
    const k = engine.kernels;
    this.scratch = arena.alloc(k.gibbsLanesScratchBytes(this.bound.header) >>> 0);
    if (scan === 'colored') {
      const c = coloredOrder(this.form);
      this.order = arena.allocI32(c.order);
      this.colors = c.colors;
    } else {
      this.order = 0;
    }
    if (precision === 'f32') {
      const f = this.form;
      this.a32 = arena.alloc(4 * Math.max(1, f.nBits));
      new Float32Array(k.memory.buffer, this.a32, f.nBits).set(f.a);
      this.val32 = arena.alloc(4 * Math.max(1, f.val.length));
      new Float32Array(k.memory.buffer, this.val32, f.val.length).set(f.val);
    }
    if (tableScan) this.table = probabilityTable(engine, this.bound, table, updates);
  }

  /** Whether a batch of `width` lanes reads the probability table. */
  usesTable(width = this.width): boolean {
    return this.table !== null && (width === 2 || width === 4);
  }

  /** The model's canonical form. */
  get form(): CanonicalForm {
    return this.bound.form;
  }

  protected header(): number {
    if (this.bound.arena.isDisposed) throw new EngineError('use after dispose(): this sampler has released its engine memory');
    return this.bound.header;
  }

  /**
   * A batch of chains (at most the constructor's width), each started uniformly at random from its
   * own stream (seed, chain). One batch at a time: a new init reuses the previous batch's memory.
   */
  init(seed: number, chains: number[]): LanesBatch {
    if (chains.length === 0) throw new ModelError('a batch needs at least one chain');
    const header = this.header();
    const k = this.engine.kernels;
    const width = Math.ceil(chains.length / this.lanes) * this.lanes;
    if (width > this.width) throw new ModelError(`a batch of ${chains.length} chains is wider than this sampler's ${this.width}`);
    if (!this.batchPtr) this.batchPtr = this.bound.arena.alloc(k.gibbsLanesBytes(header, this.width) >>> 0);
    const ptr = this.batchPtr;
    for (const c of chains) checkChainId(c);
    const [lo, hi] = seedWords(seed);
    const rng = k.rngStateBytes();
    this.engine.call('gibbs init', (kk) => {
      for (let c = 0; c < width; c++) kk.rngSeed(ptr + c * rng, lo, hi, chains[Math.min(c, chains.length - 1)], this.stream);
      kk.gibbsLanesInit(header, ptr, width);
    });
    const batch = { ptr, chains: chains.slice(), width };
    this.current = batch;
    // A random start of zero probability (hard pair constraints) is replaced by one of positive
    // probability, from which no site update leaves the support (supportStart).
    const starts = new SupportStarts(this.engine, this.model);
    try {
      for (let c = 0; c < width; c++) {
        const x = starts.start(() => this.configuration(batch, c), seed, chains[Math.min(c, chains.length - 1)]);
        if (x) this.setConfiguration(batch, c, x);
      }
    } finally {
      starts.dispose();
    }
    return batch;
  }

  /** Sets lane c's state bits to configuration x (user states). */
  private setConfiguration(batch: LanesBatch, c: number, x: Int32Array): void {
    const f = this.form, k = this.engine.kernels, B = batch.width;
    const all = new Uint8Array(k.memory.buffer, batch.ptr + k.gibbsLanesStateOffset(B), f.nBits * B);
    for (let v = 0; v < f.n; v++) {
      const b = f.blockStart[v];
      if (!f.oneHot[v]) all[b * B + c] = x[v];
      else for (let q = 0; q < f.card[v]; q++) all[(b + q) * B + c] = q === x[v] ? 1 : 0;
    }
  }

  /** Runs `sweeps` scans of every chain; acc: accumulator(batch) or 0. Returns each chain's change rate. */
  step(batch: LanesBatch, sweeps: number, acc = 0): Float64Array {
    checkCount('sweeps', sweeps, 1, MAX_LOOP_COUNT);
    this.sweeps(batch, sweeps, acc);
    const changed = this.bound.arena.f64(batch.ptr + this.engine.kernels.gibbsLanesChangedOffset(batch.width), batch.chains.length);
    return changed.map((x) => x / (sweeps * this.form.n));
  }

  /** The kernel call of step: `sweeps` scans, each chain's change count left in the batch. */
  protected sweeps(batch: LanesBatch, sweeps: number, acc: number): void {
    const header = this.header();
    this.checkBatch(batch);
    if (acc !== 0 && acc !== this.accPtr) throw new ModelError(`accumulator ${acc} was not made by this sampler's accumulator()`);
    this.engine.call('gibbs step', (k) => {
      const t = this.table;
      if (t && (batch.width === 2 || batch.width === 4)) k.gibbsLanesTableStep(header, batch.ptr, batch.width, sweeps, acc, t.off, t.table);
      else if (this.precision === 'f32') k.gibbsLanesStepF32(header, this.a32, this.val32, batch.ptr, batch.width, sweeps, acc, this.scratch, this.order);
      else k.gibbsLanesStep(header, batch.ptr, batch.width, sweeps, acc, this.scratch, this.order);
    });
  }

  /** Throws unless `batch` is this sampler's latest (a later init reuses the memory; another sampler's is not its own). */
  private checkBatch(batch: LanesBatch): void {
    if (batch !== this.current) throw new ModelError("this batch is not this sampler's latest init (a later init reuses its memory, or it is another sampler's)");
  }

  /** A zeroed f64 per (bit, lane) accumulator for the current batch. */
  accumulator(_batch?: LanesBatch): number {
    const bytes = 8 * Math.max(1, this.form.nBits * this.width);
    if (!this.accPtr) this.accPtr = this.bound.arena.alloc(bytes);
    this.bound.arena.f64(this.accPtr, bytes / 8).fill(0);
    return this.accPtr;
  }

  /** Each chain's sums, and the accumulator zeroed. */
  readAndClear(batch: LanesBatch, acc: number): Float64Array[] {
    const nBits = this.form.nBits, B = batch.width;
    const view = this.bound.arena.f64(acc, nBits * B);
    const out = batch.chains.map(() => new Float64Array(nBits));
    for (let i = 0; i < nBits; i++) for (let c = 0; c < out.length; c++) out[c][i] = view[i * B + c];
    view.fill(0);
    return out;
  }

  /** Lane c's state bits (one byte per bit of the canonical form) and its generator state, copies. */
  chainState(batch: LanesBatch, c: number): { bits: Uint8Array; stream: Uint8Array } {
    this.header();
    this.checkBatch(batch);
    if (!(Number.isInteger(c) && c >= 0 && c < batch.width)) throw new ModelError(`lane ${c} is outside the batch's ${batch.width}`);
    const k = this.engine.kernels;
    const nBits = this.form.nBits, B = batch.width;
    const all = new Uint8Array(k.memory.buffer, batch.ptr + k.gibbsLanesStateOffset(B), nBits * B);
    const bits = new Uint8Array(nBits);
    for (let i = 0; i < nBits; i++) bits[i] = all[i * B + c];
    const rng = k.rngStateBytes();
    return { bits, stream: new Uint8Array(k.memory.buffer, batch.ptr + c * rng, rng).slice() };
  }

  /** Lane c's configuration, as user states. */
  configuration(batch: LanesBatch, c: number): Int32Array {
    const f = this.form;
    const { bits } = this.chainState(batch, c);
    return decode(f, bits);
  }

  /** Frees the sampler's engine memory. */
  dispose(): void {
    this.bound.dispose();
  }
}

export interface LanesSchedule {
  seed: number;
  chains: number[];
  samples: number;
  burnin: number;
  batches: number;
  /** Sweeps per WASM call at most (the same for every chain). */
  chunk: number;
  signal?: AbortSignal;
}

/**
 * Runs the chains as one batch in lockstep and reports each chain's events through `emit`: after
 * every call, a step event per chain (chain order); after every batch, a batch event per chain.
 * These are the events driveChains reports for each chain alone. Returns false when cancelled.
 */
export function lanesChains(sampler: GibbsLanes, s: LanesSchedule, emit: (chain: number, e: DiscreteEvent) => void): boolean {
  if (s.chains.length === 0) return true;
  const batch = sampler.init(s.seed, s.chains);
  const acc = sampler.accumulator(batch);
  const advance = (sweeps: number, into: number): boolean => {
    for (let left = sweeps; left > 0; ) {
      if (s.signal?.aborted) return false;
      const m = Math.min(s.chunk, left);
      const rates = sampler.step(batch, m, into);
      left -= m;
      s.chains.forEach((c, i) => emit(c, { kind: 'step', sweeps: m, changeRate: rates[i] }));
    }
    return true;
  };
  if (!advance(s.burnin, 0)) return false;
  for (const len of splitEvenly(s.samples, Math.min(s.batches, s.samples))) {
    if (!advance(len, acc)) return false;
    const sums = sampler.readAndClear(batch, acc);
    s.chains.forEach((c, i) => emit(c, { kind: 'batch', sums: sums[i], length: len }));
  }
  return true;
}
