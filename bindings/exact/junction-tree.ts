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
import { countingSort, GrowI32 } from '../core/flat-storage.ts';
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

/**
 * Element strides of a table over scope E inside iteration scope D ⊇ E (both sorted by position, E
 * contiguous), written into the first dn entries of `s` (returned); D = dv[d0 … d0 + dn) and
 * E = ev[e0 … e0 + en), ranges of flat arrays (no views made).
 */
export function stridesAt(s: Float64Array, dv: Int32Array, d0: number, dn: number, ev: Int32Array, e0: number, en: number, card: Int32Array): Float64Array {
  for (let d = 0; d < dn; d++) s[d] = 0;
  let j = 0, stride = 1;
  for (let d = 0; d < dn && j < en; d++) {
    if (dv[d0 + d] === ev[e0 + j]) {
      s[d] = stride;
      stride *= card[ev[e0 + j]];
      j++;
    }
  }
  if (j !== en) throw new Error('internal: scope is not a subset of the iteration scope');
  return s;
}

/**
 * The junction tree of an order, in flat arrays (a million-variable chain as objects per node was
 * most of its run in allocation and garbage collection). Per variable v (indexed by v):
 * C_v = cliqueVars[cliqueStart[v] … cliqueStart[v + 1]) sorted by position, v first (S_v is the
 * rest); v's children children[childStart[v] …], in elimination order; the pairs it owns (Model.pairTables)
 * edgeList[edgeStart[v] …], ascending; the scope of its widened factor table g_v
 * gVars[gStart[v] …] (⊆ C_v, sorted by position).
 */
export interface JunctionTree {
  n: number;
  cliqueStart: Int32Array;
  cliqueVars: Int32Array;
  cliqueSize: Float64Array;
  sepSize: Float64Array;
  /** −1: a root. */
  parent: Int32Array;
  childStart: Int32Array;
  children: Int32Array;
  edgeStart: Int32Array;
  edgeList: Int32Array;
  gStart: Int32Array;
  gVars: Int32Array;
  gSize: Float64Array;
  /** Entries of the ping-pong buffer used while building g_v. */
  gHalf: Float64Array;
  /** g_v is kept for the whole run (else it is rebuilt into scratch space by each step that needs it). */
  gKept: Uint8Array;
  /** Downward step by Hugin updates. */
  hugin: Uint8Array;
  /** The longest clique (variables). */
  maxClique: number;
}

/** Target length of the contiguous prefix a factor table is widened over (the kernels' inner loop). */
const WIDEN_TARGET = 1024;
/** Factor tables up to this many entries are kept for the whole run, up to G_KEEP_TOTAL entries in all. */
const G_KEEP_MAX = 2 ** 16;
const G_KEEP_TOTAL = 2 ** 22;

export function buildTree(model: Model, order: Int32Array): JunctionTree {
  const card = model.card;
  const n = model.n;
  const pos = new Int32Array(n);
  for (let t = 0; t < n; t++) pos[order[t]] = t;
  const { cliqueStart, cliqueVars } = simulate(model, order, true, Infinity).cliques!;
  const cliqueSize = new Float64Array(n), sepSize = new Float64Array(n), parent = new Int32Array(n);
  let maxClique = 0;
  for (let v = 0; v < n; v++) {
    const a = cliqueStart[v], b = cliqueStart[v + 1];
    let s = 1;
    for (let k = a + 1; k < b; k++) s *= card[cliqueVars[k]];
    sepSize[v] = s;
    cliqueSize[v] = s * card[v];
    parent[v] = b - a > 1 ? cliqueVars[a + 1] : -1;
    maxClique = Math.max(maxClique, b - a);
  }
  // Children in elimination order: a counting sort of the order by parent.
  const childStart = new Int32Array(n + 1), children = new Int32Array(n);
  {
    for (let t = 0; t < n; t++) if (parent[order[t]] >= 0) childStart[parent[order[t]] + 1]++;
    for (let v = 0; v < n; v++) childStart[v + 1] += childStart[v];
    const fill = childStart.slice(0, n);
    for (let t = 0; t < n; t++) {
      const v = order[t], p = parent[v];
      if (p >= 0) children[fill[p]++] = v;
    }
  }
  const { i: ei, j: ej } = model.pairTables();
  const owned = countingSort(ei.length, n, (k) => (pos[ei[k]] < pos[ej[k]] ? ei[k] : ej[k]));
  const edgeStart = owned.start, edgeList = owned.list;
  const gStart = new Int32Array(n + 1), gVars = new Int32Array(cliqueVars.length);
  const gSize = new Float64Array(n), gHalf = new Float64Array(n), hugin = new Uint8Array(n);
  const inG = new Int32Array(n).fill(-1); // inG[u] = v: u is in v's base scope
  for (let v = 0; v < n; v++) {
    const a = cliqueStart[v], len = cliqueStart[v + 1] - a;
    // Base scope: v and the other ends of its edges; then widen over the clique's leading digits.
    inG[v] = v;
    for (let k = edgeStart[v]; k < edgeStart[v + 1]; k++) {
      const e = edgeList[k];
      inG[ei[e] === v ? ej[e] : ei[e]] = v;
    }
    const baseSize = widenedSize(cliqueVars, a, len, 1, inG, v, card);
    let q = 1;
    let lead = card[v];
    while (q < len && lead < WIDEN_TARGET) {
      const next = widenedSize(cliqueVars, a, len, q + 1, inG, v, card);
      if (next > Math.max(8 * baseSize, 8192)) break;
      lead *= card[cliqueVars[a + q]];
      q++;
    }
    let at = gStart[v];
    for (let d = 0; d < len; d++) if (d < q || inG[cliqueVars[a + d]] === v) gVars[at++] = cliqueVars[a + d];
    gStart[v + 1] = at;
    gSize[v] = widenedSize(cliqueVars, a, len, q, inG, v, card);
    // The ping-pong partner: the largest of the scope's odd-length prefixes short of the whole.
    let half = 1, prefix = 1;
    const g0 = gStart[v], gl = at - g0;
    for (let t = 0; t <= gl - 2; t++) {
      prefix *= card[gVars[g0 + t]];
      if (t >= 1 && (gl - 2 - t) % 2 === 0) half = Math.max(half, prefix);
    }
    gHalf[v] = half;
    const m = childStart[v + 1] - childStart[v];
    hugin[v] = m >= exactTuning.huginMinChildren && m * m * cliqueSize[v] > exactTuning.huginMinCost ? 1 : 0;
  }
  const gKept = keptTables(gSize);
  return { n, cliqueStart, cliqueVars, cliqueSize, sepSize, parent, childStart, children, edgeStart, edgeList, gStart, gVars, gSize, gHalf, gKept, hugin, maxClique };
}

/** The size of v's factor-table scope widened over the first q of its clique's len digits (cliqueVars[a …]): those digits and v's base scope (inG[u] === v). */
function widenedSize(cliqueVars: Int32Array, a: number, len: number, q: number, inG: Int32Array, v: number, card: Int32Array): number {
  let p = 1;
  for (let d = 0; d < len; d++) if (d < q || inG[cliqueVars[a + d]] === v) p *= card[cliqueVars[a + d]];
  return p;
}

/**
 * Which factor tables to keep: the smallest (ties: the lower variable) up to G_KEEP_MAX entries each
 * and G_KEEP_TOTAL in all; larger ones are rebuilt where used (two cheap passes).
 */
function keptTables(gSize: Float64Array): Uint8Array {
  const n = gSize.length, kept = new Uint8Array(n);
  let total = 0;
  for (let v = 0; v < n; v++) if (gSize[v] <= G_KEEP_MAX) total += gSize[v];
  if (total <= G_KEEP_TOTAL) {
    for (let v = 0; v < n; v++) kept[v] = gSize[v] <= G_KEEP_MAX ? 1 : 0;
    return kept;
  }
  // Ascending size, then variable: one key each (size ≤ 2^16 and v < 2^31: exact in a double).
  const keys: number[] = [];
  for (let v = 0; v < n; v++) if (gSize[v] <= G_KEEP_MAX) keys.push(gSize[v] * 2 ** 31 + v);
  const sorted = Float64Array.from(keys).sort();
  let acc = 0;
  for (const key of sorted) {
    const v = key % 2 ** 31, s = (key - v) / 2 ** 31;
    if (acc + s > G_KEEP_TOTAL) break; // ascending: no later table fits either
    kept[v] = 1;
    acc += s;
  }
  return kept;
}

/**
 * First-fit allocator simulated offline. Buffers live in regions of at most `cap` bytes (one WASM
 * allocation each); a buffer goes to the first region with room, else opens a new region. Each
 * region's free blocks are two parallel lists sorted by offset.
 */
class OfflineAllocator {
  private readonly freeOff: number[][] = [];
  private readonly freeSize: number[][] = [];
  private readonly tops: number[] = [];
  readonly peaks: number[] = [];
  /** The region and offset of the last alloc. */
  region = 0;
  offset = 0;
  constructor(private readonly cap: number) {}
  alloc(bytes: number): void {
    const size = Math.max(16, Math.ceil(bytes / 16) * 16);
    if (size > this.cap) throw new EngineError(`exact elimination: one message needs ${fmtBytes(size)}, past the engine's largest block of ${fmtBytes(this.cap)}`);
    for (let r = 0; r < this.tops.length; r++) {
      const off = this.allocIn(r, size);
      if (off >= 0) {
        this.region = r;
        this.offset = off;
        return;
      }
    }
    this.freeOff.push([]);
    this.freeSize.push([]);
    this.tops.push(0);
    this.peaks.push(0);
    this.region = this.tops.length - 1;
    this.offset = this.allocIn(this.region, size);
  }
  private allocIn(r: number, size: number): number {
    const offs = this.freeOff[r], sizes = this.freeSize[r];
    for (let i = 0; i < offs.length; i++) {
      if (sizes[i] >= size) {
        const off = offs[i];
        if (sizes[i] === size) removeAt(offs, sizes, i);
        else {
          offs[i] += size;
          sizes[i] -= size;
        }
        return off;
      }
    }
    // Extend the top, absorbing a free block that ends there.
    let top = this.tops[r];
    const last = offs.length - 1;
    if (last >= 0 && offs[last] + sizes[last] === top) top = offs[last];
    if (top + size > this.cap) return -1;
    if (top !== this.tops[r]) {
      offs.pop();
      sizes.pop();
    }
    this.tops[r] = top + size;
    this.peaks[r] = Math.max(this.peaks[r], this.tops[r]);
    return top;
  }
  release(r: number, off: number, bytes: number): void {
    const offs = this.freeOff[r], sizes = this.freeSize[r];
    const size = Math.max(16, Math.ceil(bytes / 16) * 16);
    let i = 0;
    while (i < offs.length && offs[i] < off) i++;
    // Insert (off, size) at i, merging with its neighbours.
    offs.push(0);
    sizes.push(0);
    for (let k = offs.length - 1; k > i; k--) (offs[k] = offs[k - 1]), (sizes[k] = sizes[k - 1]);
    offs[i] = off;
    sizes[i] = size;
    if (i + 1 < offs.length && offs[i] + sizes[i] === offs[i + 1]) {
      sizes[i] += sizes[i + 1];
      removeAt(offs, sizes, i + 1);
    }
    if (i > 0 && offs[i - 1] + sizes[i - 1] === offs[i]) {
      sizes[i - 1] += sizes[i];
      removeAt(offs, sizes, i);
    }
    const last = offs.length - 1;
    if (last >= 0 && offs[last] + sizes[last] === this.tops[r]) {
      this.tops[r] = offs[last];
      offs.pop();
      sizes.pop();
    }
  }
}

/** Removes entry i of both lists (no array made, as splice would). */
function removeAt(a: number[], b: number[], i: number): void {
  for (let k = i; k + 1 < a.length; k++) (a[k] = a[k + 1]), (b[k] = b[k + 1]);
  a.pop();
  b.pop();
}

/** A step's kind (Steps.op): node's upward message λ, or the downward step from node to its children. */
export const STEP_LAMBDA = 0, STEP_DOWN = 1;

/**
 * The passes' steps in flat arrays (a million-variable chain has two million steps), recorded by
 * add and id, read after seal. Buffer ids index Schedule's regionOf and offsets; −1 is the constant
 * 1, −2 none.
 */
export class Steps {
  // Growable int32 lists: plain arrays of millions of numbers kept the garbage collector busy.
  private readonly rec = Array.from({ length: 8 }, () => new GrowI32());
  /** STEP_LAMBDA or STEP_DOWN. */
  op: Int32Array = new Int32Array(0);
  /** λ: the variable whose message it computes; down: the parent p. */
  node: Int32Array = new Int32Array(0);
  /** λ: its output buffer; down: p's μ. */
  buf: Int32Array = new Int32Array(0);
  /** The scratch table (several children, Hugin). */
  scratch: Int32Array = new Int32Array(0);
  /** A factor table rebuilt for this step and its ping-pong partner (−2: kept for the run). */
  g0: Int32Array = new Int32Array(0);
  g1: Int32Array = new Int32Array(0);
  /** ids[listStart[t] …]: λ: the children's λ buffers; down: the children's λ buffers, then their new μ buffers. */
  listStart: Int32Array = new Int32Array(0);
  ids: Int32Array = new Int32Array(0);

  get count(): number {
    return this.rec[0].length;
  }

  /** The next step's list gains buffer id x. */
  id(x: number): void {
    this.rec[7].push(x);
  }

  /** A step; its list is the ids given since the last step. */
  add(op: number, node: number, buf: number, scratch: number, g0: number, g1: number): void {
    const r = this.rec;
    r[0].push(op);
    r[1].push(node);
    r[2].push(buf);
    r[3].push(scratch);
    r[4].push(g0);
    r[5].push(g1);
    r[6].push(this.listLength);
    this.listLength = r[7].length;
  }
  private listLength = 0;

  /** Makes the fields views of what was recorded (listStart has count + 1 entries). */
  seal(): void {
    const r = this.rec;
    r[6].push(this.listLength);
    [this.op, this.node, this.buf, this.scratch, this.g0, this.g1, this.listStart, this.ids] = r.map((l) => l.view());
  }
}

export interface Schedule {
  steps: Steps;
  /** Number of leading steps that make up the upward pass. */
  upwardSteps: number;
  /** Region and byte offset of each buffer (by id); id -1 is the constant 1. */
  regionOf: Int32Array;
  offsets: Int32Array;
  /** Bytes of each region. */
  regions: number[];
  bytes: number;
  stored: number;
  recomputed: number;
}

export function schedule(tree: JunctionTree, order: Int32Array): Schedule {
  const { n, parent, childStart, children, sepSize, cliqueSize, gKept, gSize, gHalf, hugin } = tree;
  const alloc = new OfflineAllocator(MAX_REGION_BYTES);
  const offsets = new GrowI32(), regionOf = new GrowI32(), sizes = new GrowI32();
  const newBuf = (entries: number): number => {
    alloc.alloc(entries * 8);
    regionOf.push(alloc.region);
    offsets.push(alloc.offset);
    sizes.push(entries * 8);
    return offsets.length - 1;
  };
  const freeBuf = (id: number): void => {
    if (id >= 0) alloc.release(regionOf.a[id], offsets.a[id], sizes.a[id]);
  };
  const nChildren = (v: number): number => childStart[v + 1] - childStart[v];

  // Which λ to keep after the upward pass.
  const stored = new Uint8Array(n);
  let totalBytes = 0;
  for (let v = 0; v < n; v++) totalBytes += sepSize[v] * 8;
  if (totalBytes <= exactTuning.storeAllBytes) stored.fill(1);
  else {
    const bySize = Array.from({ length: n }, (_, v) => v).sort((a, b) => sepSize[a] - sepSize[b]);
    let acc = 0, t = 0;
    for (; t < n && acc + sepSize[bySize[t]] * 8 <= exactTuning.smallBytes; t++) {
      acc += sepSize[bySize[t]] * 8;
      stored[bySize[t]] = 1;
    }
    const large = n - t;
    const k = Math.max(1, Math.ceil(Math.sqrt(large)));
    const run = new Float64Array(n);
    for (const v of order) {
      if (parent[v] < 0) stored[v] = 1;
      if (stored[v]) continue;
      let r = 1;
      for (let i = childStart[v]; i < childStart[v + 1]; i++) if (!stored[children[i]]) r += run[children[i]];
      if (r >= k) stored[v] = 1;
      else run[v] = r;
    }
  }

  const steps = new Steps();
  const lam = new Int32Array(n).fill(-2); // buffer id of the live λ instance; -2 = none
  const scratchFor = (v: number): number => (nChildren(v) >= 2 || (hugin[v] && nChildren(v) >= 1) ? newBuf(cliqueSize[v]) : -2);
  const emitLambda = (v: number): void => {
    const out = newBuf(sepSize[v]);
    const sc = nChildren(v) >= 2 ? newBuf(cliqueSize[v]) : -2;
    // A factor table rebuilt for this step: the table and its half-size ping-pong partner.
    const g0 = gKept[v] ? -2 : newBuf(gSize[v]), g1 = gKept[v] ? -2 : newBuf(gHalf[v]);
    for (let i = childStart[v]; i < childStart[v + 1]; i++) steps.id(lam[children[i]]);
    steps.add(STEP_LAMBDA, v, out, sc, g0, g1);
    freeBuf(g1);
    freeBuf(g0);
    freeBuf(sc);
    lam[v] = out;
  };
  for (const v of order) {
    emitLambda(v);
    for (let i = childStart[v]; i < childStart[v + 1]; i++) {
      const c = children[i];
      if (!stored[c]) {
        freeBuf(lam[c]);
        lam[c] = -2;
      }
    }
  }
  const upwardSteps = steps.count;

  // Recompute a missing λ_v from its subtree (iterative post-order), caching every recomputed message.
  let recomputed = 0;
  const stackV: number[] = [], stackDone: boolean[] = [];
  const recompute = (v0: number): void => {
    stackV.push(v0);
    stackDone.push(false);
    while (stackV.length > 0) {
      const v = stackV.pop()!, expanded = stackDone.pop()!;
      if (expanded) {
        emitLambda(v);
        recomputed++;
        continue;
      }
      stackV.push(v);
      stackDone.push(true);
      for (let i = childStart[v]; i < childStart[v + 1]; i++) {
        if (lam[children[i]] === -2) {
          stackV.push(children[i]);
          stackDone.push(false);
        }
      }
    }
  };

  const mu = new Int32Array(n).fill(-2);
  // Roots depth-first, the last eliminated first.
  const todo: number[] = [];
  for (let t = 0; t < n; t++) {
    if (parent[order[t]] < 0) {
      todo.push(order[t]);
      mu[order[t]] = -1; // the constant 1
    }
  }
  while (todo.length > 0) {
    const p = todo.pop()!;
    const c0 = childStart[p], c1 = childStart[p + 1];
    for (let i = c0; i < c1; i++) if (lam[children[i]] === -2) recompute(children[i]);
    for (let i = c0; i < c1; i++) mu[children[i]] = newBuf(sepSize[children[i]]);
    const sc = scratchFor(p);
    const g0 = gKept[p] ? -2 : newBuf(gSize[p]), g1 = gKept[p] ? -2 : newBuf(gHalf[p]);
    for (let i = c0; i < c1; i++) steps.id(lam[children[i]]);
    for (let i = c0; i < c1; i++) steps.id(mu[children[i]]);
    steps.add(STEP_DOWN, p, mu[p], sc, g0, g1);
    freeBuf(g1);
    freeBuf(g0);
    freeBuf(sc);
    freeBuf(mu[p]);
    mu[p] = -2;
    for (let i = c0; i < c1; i++) {
      freeBuf(lam[children[i]]);
      lam[children[i]] = -2;
    }
    for (let i = c1 - 1; i >= c0; i--) todo.push(children[i]);
  }
  // Roots' λ (scalars) are still live; nothing else is.
  let storedCount = 0;
  for (let v = 0; v < n; v++) storedCount += stored[v];
  const regions = alloc.peaks;
  steps.seal();
  return { steps, upwardSteps, regionOf: regionOf.view(), offsets: offsets.view(), regions, bytes: regions.reduce((x, y) => x + y, 0), stored: storedCount, recomputed };
}
