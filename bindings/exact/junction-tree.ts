// The junction tree of an elimination ordering and the schedule of its message passes (the
// passes themselves are in elimination.ts).
//
// Junction tree. For an elimination order, variable v's clique is C_v = {v} ∪ N⁺(v) (its neighbours at
// elimination time, all later in the order) and its parent is the earliest-eliminated variable of N⁺(v);
// the separator S_v = C_v \ {v} lies inside the parent's clique. Every table lists its variables by
// elimination position, EARLIEST = FASTEST digit: v is digit 0 of C_v and also digit 0 of every child's
// separator. Each unary factor belongs to its variable, each pairwise factor to its earlier-eliminated
// end; g_v is the product of v's factors, built in log space and exponentiated once (max-shifted), and
// widened over the first few digits of C_v so the kernels' inner loops are long.
//
// Memory. Storing every λ of a 20×20 grid in row order would take 380 × 8 MB. Messages that are small
// are always kept; large ones are kept only at checkpoints (every k-th along a path, k ≈ √(number of
// large messages)), and the downward pass (depth-first from the roots) recomputes a missing λ from its
// subtree down to the stored ones, caching the recomputed ones until their parent has been processed.
// The whole schedule is simulated first with a first-fit allocator, so one arena sized from the plan is
// allocated before any kernel runs.

import type { Model } from '../core/model.ts';
import { EngineError } from '../core/errors.ts';
import { simulate } from './orderings.ts';
import { fmtBytes } from './outcome.ts';

/**
 * Internal thresholds of the elimination schedule, exported so tests can force every code path on small
 * models (and benchmarks can explore). Changing them never changes results beyond rounding.
 */
export const exactTuning = {
  /** Downward step by Hugin updates at nodes with at least this many children … */
  huginMinChildren: 5,
  /** … and (children² × clique entries) above this (else leave-one-out products, no division). */
  huginMinCost: 2 ** 24,
  /** Keep every upward message when they all fit in this many bytes; otherwise checkpoint the large ones. */
  storeAllBytes: 256 * 2 ** 20,
  /** When checkpointing, the smallest messages up to this many bytes in total are kept regardless. */
  smallBytes: 32 * 2 ** 20,
  /** i32 words of table operations recorded per kernel call (elim-program.ts; at least one op's worth). */
  programWords: 2 ** 16,
};

/** Largest single WASM allocation (the runtime's allocator caps a block just under 1 GiB). */
const MAX_REGION_BYTES = 2 ** 30 - 2 ** 16;

/** Element strides of a table over scope E (sorted by position, contiguous) inside iteration scope D ⊇ E. */
export function subStrides(D: ArrayLike<number>, E: ArrayLike<number>, card: Int32Array): number[] {
  return stridesInto(new Array<number>(D.length), D, E, card);
}

/** subStrides written into the first D.length entries of `s` (returned). */
export function stridesInto<T extends { [i: number]: number }>(s: T, D: ArrayLike<number>, E: ArrayLike<number>, card: Int32Array): T {
  for (let d = 0; d < D.length; d++) s[d] = 0;
  let j = 0, stride = 1;
  for (let d = 0; d < D.length && j < E.length; d++) {
    if (D[d] === E[j]) {
      s[d] = stride;
      stride *= card[E[j]];
      j++;
    }
  }
  if (j !== E.length) throw new Error('internal: scope is not a subset of the iteration scope');
  return s;
}

export function prod(vars: ArrayLike<number>, card: Int32Array): number {
  let p = 1;
  for (let i = 0; i < vars.length; i++) p *= card[vars[i]];
  return p;
}

export interface Node {
  v: number;
  clique: Int32Array; // C_v sorted by position
  sep: Int32Array; // S_v = clique minus v
  cliqueSize: number;
  sepSize: number;
  parent: number;
  children: number[];
  unary: boolean; // owns its unary table
  edges: number[]; // indices into model.edges owned by v
  gScope: Int32Array; // scope of the widened factor table g_v (⊆ clique, sorted by position)
  gSize: number;
  /** g_v is kept for the whole run (else it is rebuilt into scratch space by each step that needs it). */
  gKept: boolean;
  /** Entries of the ping-pong buffer used while building g_v. */
  gHalf: number;
  hugin: boolean; // downward step by Hugin updates
}

/** Target length of the contiguous prefix a factor table is widened over (the kernels' inner loop). */
const WIDEN_TARGET = 1024;
/** Factor tables up to this many entries are kept for the whole run, up to G_KEEP_TOTAL entries in all. */
const G_KEEP_MAX = 2 ** 16;
const G_KEEP_TOTAL = 2 ** 22;

export function buildTree(model: Model, order: Int32Array): Node[] {
  const card = model.card;
  const n = model.n;
  const pos = new Int32Array(n);
  order.forEach((v, t) => (pos[v] = t));
  const { cliques } = simulate(model, order, true, Infinity);
  const nodes: Node[] = new Array(n);
  for (let v = 0; v < n; v++) {
    const clique = cliques![v];
    const sep = clique.subarray(1);
    nodes[v] = {
      v, clique, sep, cliqueSize: prod(clique, card), sepSize: prod(sep, card), parent: clique.length > 1 ? clique[1] : -1, children: [],
      unary: true, edges: [], gScope: clique, gSize: 0, gKept: true, gHalf: 1, hugin: false,
    };
  }
  for (const v of order) if (nodes[v].parent >= 0) nodes[nodes[v].parent].children.push(v);
  model.edges.forEach((e, k) => nodes[pos[e.i] < pos[e.j] ? e.i : e.j].edges.push(k));
  const inG = new Int32Array(n).fill(-1); // inG[u] = v: u is in v's base scope
  for (const node of nodes) {
    const { clique, v } = node;
    // Base scope: v and the other ends of its edges; then widen over the clique's leading digits.
    inG[v] = v;
    for (const k of node.edges) inG[model.edges[k].i === v ? model.edges[k].j : model.edges[k].i] = v;
    // The scope widened over the first q digits: its size, or (into) its variables.
    const sizeOf = (q: number): number => {
      let p = 1;
      for (let d = 0; d < clique.length; d++) if (d < q || inG[clique[d]] === v) p *= card[clique[d]];
      return p;
    };
    const baseSize = sizeOf(1);
    let q = 1;
    let lead = card[v];
    while (q < clique.length && lead < WIDEN_TARGET) {
      const next = sizeOf(q + 1);
      if (next > Math.max(8 * baseSize, 8192)) break;
      lead *= card[clique[q]];
      q++;
    }
    let len = 0;
    for (let d = 0; d < clique.length; d++) if (d < q || inG[clique[d]] === v) len++;
    if (len === clique.length) node.gScope = clique;
    else {
      node.gScope = new Int32Array(len);
      for (let d = 0, j = 0; d < clique.length; d++) if (d < q || inG[clique[d]] === v) node.gScope[j++] = clique[d];
    }
    node.gSize = sizeOf(q);
    let half = 1;
    for (let t = node.gScope.length - 2; t >= 1; t -= 2) half = Math.max(half, prod(node.gScope.subarray(0, t + 1), card));
    node.gHalf = half;
    const m = node.children.length;
    node.hugin = m >= exactTuning.huginMinChildren && m * m * node.cliqueSize > exactTuning.huginMinCost;
  }
  // Keep the smallest factor tables, up to a budget; larger ones are rebuilt where used (two cheap passes).
  const bySize = [...nodes].sort((a, b) => a.gSize - b.gSize);
  let kept = 0;
  for (const nd of bySize) {
    nd.gKept = nd.gSize <= G_KEEP_MAX && kept + nd.gSize <= G_KEEP_TOTAL;
    if (nd.gKept) kept += nd.gSize;
  }
  return nodes;
}

/**
 * First-fit allocator simulated offline. Buffers live in regions of at most `cap` bytes (one WASM
 * allocation each); a buffer goes to the first region with room, else opens a new region.
 */
class OfflineAllocator {
  private regions: { free: { off: number; size: number }[]; top: number; peak: number }[] = [];
  constructor(private readonly cap: number) {}
  get peaks(): number[] {
    return this.regions.map((r) => r.peak);
  }
  alloc(bytes: number): [number, number] {
    const size = Math.max(16, Math.ceil(bytes / 16) * 16);
    if (size > this.cap) throw new EngineError(`exact elimination: one message needs ${fmtBytes(size)}, past the engine's largest block of ${fmtBytes(this.cap)}`);
    for (let r = 0; r < this.regions.length; r++) {
      const off = this.allocIn(this.regions[r], size);
      if (off >= 0) return [r, off];
    }
    this.regions.push({ free: [], top: 0, peak: 0 });
    return [this.regions.length - 1, this.allocIn(this.regions[this.regions.length - 1], size)];
  }
  private allocIn(reg: { free: { off: number; size: number }[]; top: number; peak: number }, size: number): number {
    const free = reg.free;
    for (let i = 0; i < free.length; i++) {
      const f = free[i];
      if (f.size >= size) {
        const off = f.off;
        if (f.size === size) free.splice(i, 1);
        else {
          f.off += size;
          f.size -= size;
        }
        return off;
      }
    }
    // Extend the top, absorbing a free block that ends there.
    let top = reg.top;
    const lastFree = free[free.length - 1];
    if (lastFree && lastFree.off + lastFree.size === top) top = lastFree.off;
    if (top + size > this.cap) return -1;
    if (top !== reg.top) free.pop();
    reg.top = top + size;
    reg.peak = Math.max(reg.peak, reg.top);
    return top;
  }
  release(r: number, off: number, bytes: number): void {
    const reg = this.regions[r];
    const free = reg.free;
    const size = Math.max(16, Math.ceil(bytes / 16) * 16);
    let i = 0;
    while (i < free.length && free[i].off < off) i++;
    free.splice(i, 0, { off, size });
    if (i + 1 < free.length && free[i].off + free[i].size === free[i + 1].off) {
      free[i].size += free[i + 1].size;
      free.splice(i + 1, 1);
    }
    if (i > 0 && free[i - 1].off + free[i - 1].size === free[i].off) {
      free[i - 1].size += free[i].size;
      free.splice(i, 1);
    }
    const last = free[free.length - 1];
    if (last && last.off + last.size === reg.top) {
      free.pop();
      reg.top = last.off;
    }
  }
}

/** A step's kind (Steps.op): node's upward message λ, or the downward step from node to its children. */
export const STEP_LAMBDA = 0, STEP_DOWN = 1;

/**
 * The passes' steps in flat arrays (a million-variable chain has two million steps: objects per
 * step kept the garbage collector busy). Buffer ids index Schedule's regionOf and offsets; −1 is
 * the constant 1, −2 none.
 */
export class Steps {
  /** STEP_LAMBDA or STEP_DOWN. */
  readonly op: number[] = [];
  /** λ: the variable whose message it computes; down: the parent p. */
  readonly node: number[] = [];
  /** λ: its output buffer; down: p's μ. */
  readonly buf: number[] = [];
  /** The scratch table (several children, Hugin). */
  readonly scratch: number[] = [];
  /** A factor table rebuilt for this step and its ping-pong partner (−2: kept for the run). */
  readonly g0: number[] = [];
  readonly g1: number[] = [];
  /** ids[listStart[t] …]: λ: the children's λ buffers; down: the children's λ buffers, then their new μ buffers. */
  readonly listStart: number[] = [0];
  readonly ids: number[] = [];

  get count(): number {
    return this.op.length;
  }

  add(op: number, node: number, buf: number, scratch: number, g0: number, g1: number): void {
    this.op.push(op);
    this.node.push(node);
    this.buf.push(buf);
    this.scratch.push(scratch);
    this.g0.push(g0);
    this.g1.push(g1);
    this.listStart.push(this.ids.length);
  }
}

export interface Schedule {
  steps: Steps;
  /** Number of leading steps that make up the upward pass. */
  upwardSteps: number;
  /** Region and byte offset of each buffer (by id); id -1 is the constant 1. */
  regionOf: number[];
  offsets: number[];
  /** Bytes of each region. */
  regions: number[];
  bytes: number;
  stored: number;
  recomputed: number;
}


export function schedule(nodes: Node[], order: Int32Array): Schedule {
  const n = nodes.length;
  const alloc = new OfflineAllocator(MAX_REGION_BYTES);
  const offsets: number[] = [];
  const regionOf: number[] = [];
  const sizes: number[] = [];
  const newBuf = (entries: number): number => {
    const [r, off] = alloc.alloc(entries * 8);
    regionOf.push(r);
    offsets.push(off);
    sizes.push(entries * 8);
    return offsets.length - 1;
  };
  const freeBuf = (id: number): void => {
    if (id >= 0) alloc.release(regionOf[id], offsets[id], sizes[id]);
  };

  // Which λ to keep after the upward pass.
  const stored = new Uint8Array(n);
  let totalBytes = 0;
  for (const nd of nodes) totalBytes += nd.sepSize * 8;
  if (totalBytes <= exactTuning.storeAllBytes) stored.fill(1);
  else {
    const bySize = nodes.map((nd) => nd.v).sort((a, b) => nodes[a].sepSize - nodes[b].sepSize);
    let acc = 0, t = 0;
    for (; t < n && acc + nodes[bySize[t]].sepSize * 8 <= exactTuning.smallBytes; t++) {
      acc += nodes[bySize[t]].sepSize * 8;
      stored[bySize[t]] = 1;
    }
    const large = n - t;
    const k = Math.max(1, Math.ceil(Math.sqrt(large)));
    const run = new Float64Array(n);
    for (const v of order) {
      const nd = nodes[v];
      if (nd.parent < 0) stored[v] = 1;
      if (stored[v]) continue;
      let r = 1;
      for (const c of nd.children) if (!stored[c]) r += run[c];
      if (r >= k) stored[v] = 1;
      else run[v] = r;
    }
  }

  const steps = new Steps();
  const lam = new Int32Array(n).fill(-2); // buffer id of the live λ instance; -2 = none
  const scratchFor = (nd: Node): number => (nd.children.length >= 2 || (nd.hugin && nd.children.length >= 1) ? newBuf(nd.cliqueSize) : -2);
  const emitLambda = (v: number): void => {
    const nd = nodes[v];
    const out = newBuf(nd.sepSize);
    const sc = nd.children.length >= 2 ? newBuf(nd.cliqueSize) : -2;
    // A factor table rebuilt for this step: the table and its half-size ping-pong partner.
    const g0 = nd.gKept ? -2 : newBuf(nd.gSize), g1 = nd.gKept ? -2 : newBuf(nd.gHalf);
    for (let i = 0; i < nd.children.length; i++) steps.ids.push(lam[nd.children[i]]);
    steps.add(STEP_LAMBDA, v, out, sc, g0, g1);
    freeBuf(g1);
    freeBuf(g0);
    freeBuf(sc);
    lam[v] = out;
  };
  for (const v of order) {
    emitLambda(v);
    if (nodes[v].children.length === 0) continue;
    for (const c of nodes[v].children) {
      if (!stored[c]) {
        freeBuf(lam[c]);
        lam[c] = -2;
      }
    }
  }
  const upwardSteps = steps.count;

  // Recompute a missing λ_v from its subtree (iterative post-order), caching every recomputed message.
  let recomputed = 0;
  const recompute = (v0: number): void => {
    const stack: [number, boolean][] = [[v0, false]];
    while (stack.length > 0) {
      const [v, expanded] = stack.pop()!;
      if (expanded) {
        emitLambda(v);
        recomputed++;
        continue;
      }
      stack.push([v, true]);
      for (const c of nodes[v].children) if (lam[c] === -2) stack.push([c, false]);
    }
  };

  const mu = new Int32Array(n).fill(-2);
  const roots = [...order].reverse().filter((v) => nodes[v].parent < 0);
  const todo: number[] = [...roots].reverse();
  for (const r of roots) mu[r] = -1; // the constant 1
  while (todo.length > 0) {
    const p = todo.pop()!;
    const nd = nodes[p];
    for (const c of nd.children) if (lam[c] === -2) recompute(c);
    for (let i = 0; i < nd.children.length; i++) mu[nd.children[i]] = newBuf(nodes[nd.children[i]].sepSize);
    const sc = scratchFor(nd);
    const g0 = nd.gKept ? -2 : newBuf(nd.gSize), g1 = nd.gKept ? -2 : newBuf(nd.gHalf);
    for (let i = 0; i < nd.children.length; i++) steps.ids.push(lam[nd.children[i]]);
    for (let i = 0; i < nd.children.length; i++) steps.ids.push(mu[nd.children[i]]);
    steps.add(STEP_DOWN, p, mu[p], sc, g0, g1);
    freeBuf(g1);
    freeBuf(g0);
    freeBuf(sc);
    freeBuf(mu[p]);
    mu[p] = -2;
    for (const c of nd.children) {
      freeBuf(lam[c]);
      lam[c] = -2;
    }
    for (let i = nd.children.length - 1; i >= 0; i--) todo.push(nd.children[i]);
  }
  // Roots' λ (scalars) are still live; nothing else is.
  let storedCount = 0;
  for (let v = 0; v < n; v++) storedCount += stored[v];
  const regions = alloc.peaks;
  return { steps, upwardSteps, regionOf, offsets, regions, bytes: regions.reduce((x, y) => x + y, 0), stored: storedCount, recomputed };
}
