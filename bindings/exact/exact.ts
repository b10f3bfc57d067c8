// Exact inference: log Z and every node marginal, by enumeration (small models) or by variable elimination
// on a junction tree built from an elimination ordering (any model of small enough treewidth).
//
// The ordering, the tree, the checkpointing schedule and the memory layout are planned here in
// TypeScript; every number is computed in WASM (assembly/exact_elim.ts, assembly/exact_enum.ts).
//
// Junction tree. For an elimination order, variable v's clique is C_v = {v} ∪ N⁺(v) (its neighbours at
// elimination time, all later in the order) and its parent is the earliest-eliminated variable of N⁺(v);
// the separator S_v = C_v \ {v} lies inside the parent's clique. Every table lists its variables by
// elimination position, EARLIEST = FASTEST digit: v is digit 0 of C_v and also digit 0 of every child's
// separator. Each unary factor belongs to its variable, each pairwise factor to its earlier-eliminated
// end; g_v is the product of v's factors, built in log space and exponentiated once (max-shifted), and
// widened over the first few digits of C_v so the kernels' inner loops are long.
//
// Messages (everything max-normalised, the log normalisers summed into log Z):
//   upward    λ_v(S_v) = Σ_{x_v} g_v · Π_{c child} λ_c                (a root's λ is a scalar)
//   downward  μ_c(S_c) = Σ_{C_p \ S_c} μ_p · g_p · Π_{c' ≠ c} λ_c'     (Shafer–Shenoy: no division)
//   marginal  p(x_p)  ∝ Σ_{S_c \ p} μ_c · λ_c for any child c of p  (a leaf: Σ_{C_p \ p} μ_p · g_p)
// Clique tables are never stored: with one child (the common case; a lattice in row order is a path)
// each message is one fused pass over the clique. Nodes with several children use one scratch table.
// Where a node has many children over a large clique, the downward step switches to Hugin updates
// (μ_c = Σ B_p / λ_c with 0/0 = 0) to avoid the quadratic leave-one-out products.
//
// Memory. Storing every λ of a 20×20 grid in row order would take 380 × 8 MB. Messages that are small
// are always kept; large ones are kept only at checkpoints (every k-th along a path, k ≈ √(number of
// large messages)), and the downward pass (depth-first from the roots) recomputes a missing λ from its
// subtree down to the stored ones, caching the recomputed ones until their parent has been processed.
// The whole schedule is simulated first with a first-fit allocator, so one arena sized from the plan is
// allocated before any kernel runs.

import type { Engine, Arena, Kernels } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { EngineError, ModelError } from '../core/errors.ts';
import { candidateOrders as orderCandidates, simulate, ORDERINGS, type OrderStats, type OrderingHeuristic } from './orderings.ts';

export { ORDERINGS, type OrderingHeuristic };



export interface ExactOptions {
  method?: 'auto' | 'enumeration' | 'elimination';
  /** Largest clique table (product of the clique's cardinalities) elimination accepts. Default 2^25. */
  maxTableEntries?: number;
  /** Orderings to try; the one with the smallest total table size within the limit is used. Default: all. */
  orderings?: OrderingHeuristic[];
}

export interface ExactResult {
  /** Natural log of the partition function, including model.logConst; −Infinity if every configuration has zero potential. */
  logZ: number;
  /** marginals[v][k] = p(x_v = k). Reading it throws an EngineError when logZ = −Infinity. */
  marginals: Float64Array[];
  method: 'enumeration' | 'elimination';
  /** Largest clique size − 1 (enumeration: number of variables − 1). */
  treewidth: number;
  /** Entries of the largest clique table (enumeration: the number of configurations). */
  maxTableEntries: number;
  /** Name of the elimination ordering used ('gray-code' for enumeration). */
  ordering: string;
  seconds: number;
}

export interface EliminationPlan {
  ordering: Int32Array;
  treewidth: number;
  maxTableEntries: number;
  totalTableEntries: number;
  name: string;
}

export const DEFAULT_MAX_TABLE_ENTRIES = 2 ** 25;

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
};
/** Largest number of configurations enumeration accepts. */
export const MAX_ENUMERATION = 2 ** 30;

// ---------------------------------------------------------------------------------------------------
// Elimination orderings: see orderings.ts.

function checkLimit(limit: number): number {
  if (!(limit >= 1) || !Number.isFinite(limit)) throw new ModelError(`maxTableEntries ${limit} is not a positive number`);
  return limit;
}

function candidateOrders(model: Model, opts: ExactOptions): OrderStats[] {
  const limit = checkLimit(opts.maxTableEntries ?? DEFAULT_MAX_TABLE_ENTRIES);
  return orderCandidates(model, opts.orderings ?? ORDERINGS, limit);
}

function choose(cands: OrderStats[], limit: number): { best: OrderStats; feasible: boolean } {
  const ok = cands.filter((c) => !c.aborted && c.maxEntries <= limit);
  if (ok.length > 0) {
    ok.sort((p, q) => p.totalEntries - q.totalEntries || p.maxEntries - q.maxEntries);
    return { best: ok[0], feasible: true };
  }
  const all = [...cands].sort((p, q) => p.maxEntries - q.maxEntries || p.treewidth - q.treewidth);
  return { best: all[0], feasible: false };
}

/**
 * The elimination ordering exactInference would use: every requested heuristic is run and the one with
 * the smallest total clique-table size among those within maxTableEntries is kept (if none is within
 * it, the one with the smallest largest clique). Pure TypeScript; no engine needed.
 */
export function eliminationPlan(model: Model, opts: ExactOptions = {}): EliminationPlan {
  const limit = checkLimit(opts.maxTableEntries ?? DEFAULT_MAX_TABLE_ENTRIES);
  const { best } = choose(candidateOrders(model, opts), limit);
  return { ordering: best.order, treewidth: best.treewidth, maxTableEntries: best.maxEntries, totalTableEntries: best.totalEntries, name: best.name };
}

function fmtEntries(e: number): string {
  const l = Math.log2(e);
  if (Number.isInteger(l)) return `2^${l}`;
  return Number.isFinite(e) ? `${e.toPrecision(3)} (2^${l.toFixed(1)})` : 'too many';
}
function fmtBytes(b: number): string {
  if (b >= 1e12) return `${(b / 1e12).toPrecision(3)} TB`;
  if (b >= 1e9) return `${Math.round(b / 1e9)} GB`;
  if (b >= 1e6) return `${Math.round(b / 1e6)} MB`;
  return `${Math.round(b / 1e3)} kB`;
}

function refusal(best: OrderStats, limit: number, tried: string[]): EngineError {
  const atLeast = best.aborted ? 'at least ' : '';
  const tw = Number.isFinite(best.treewidth) ? `treewidth ${atLeast}${best.treewidth}` : 'treewidth unknown (huge)';
  return new EngineError(
    `${tw}: the largest clique table would have ${atLeast}${fmtEntries(best.maxEntries)} entries (${fmtBytes(best.maxEntries * 8)}), ` +
      `past the limit of ${fmtEntries(limit)} entries (best of the orderings ${tried.join(', ')}: ${best.name})`,
  );
}

// ---------------------------------------------------------------------------------------------------
// Junction tree and schedule.

/** Element strides of a table over scope E (sorted by position, contiguous) inside iteration scope D ⊇ E. */
function subStrides(D: ArrayLike<number>, E: ArrayLike<number>, card: Int32Array): number[] {
  const s = new Array<number>(D.length).fill(0);
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

function prod(vars: ArrayLike<number>, card: Int32Array): number {
  let p = 1;
  for (let i = 0; i < vars.length; i++) p *= card[vars[i]];
  return p;
}

interface Node {
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

function buildTree(model: Model, order: Int32Array): Node[] {
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
  for (const node of nodes) {
    const { clique, v } = node;
    // Base scope: v and the other ends of its edges; then widen over the clique's leading digits.
    const inG = new Set<number>([v]);
    for (const k of node.edges) inG.add(model.edges[k].i === v ? model.edges[k].j : model.edges[k].i);
    const scopeOf = (q: number): number[] => Array.from(clique).filter((u, d) => d < q || inG.has(u));
    const baseSize = prod(scopeOf(1), card);
    let q = 1;
    let lead = card[v];
    while (q < clique.length && lead < WIDEN_TARGET) {
      const next = prod(scopeOf(q + 1), card);
      if (next > Math.max(8 * baseSize, 8192)) break;
      lead *= card[clique[q]];
      q++;
    }
    node.gScope = Int32Array.from(scopeOf(q));
    node.gSize = prod(node.gScope, card);
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

type Step =
  | { op: 'lambda'; v: number; out: number; children: number[]; scratch: number; g: [number, number] }
  | { op: 'down'; p: number; mu: number; lams: number[]; mus: number[]; scratch: number; g: [number, number] };

interface Schedule {
  steps: Step[];
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


function schedule(nodes: Node[], order: Int32Array): Schedule {
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

  const steps: Step[] = [];
  const lam = new Int32Array(n).fill(-2); // buffer id of the live λ instance; -2 = none
  const scratchFor = (nd: Node): number => (nd.children.length >= 2 || (nd.hugin && nd.children.length >= 1) ? newBuf(nd.cliqueSize) : -2);
  // A factor table rebuilt for one step: the table and its half-size ping-pong partner.
  const gFor = (nd: Node): [number, number] => (nd.gKept ? [-2, -2] : [newBuf(nd.gSize), newBuf(nd.gHalf)]);
  const emitLambda = (v: number): void => {
    const nd = nodes[v];
    const out = newBuf(nd.sepSize);
    const sc = nd.children.length >= 2 ? newBuf(nd.cliqueSize) : -2;
    const g = gFor(nd);
    steps.push({ op: 'lambda', v, out, children: nd.children.map((c) => lam[c]), scratch: sc, g });
    freeBuf(g[1]);
    freeBuf(g[0]);
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
  const upwardSteps = steps.length;

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
    const mus = nd.children.map((c) => (mu[c] = newBuf(nodes[c].sepSize)));
    const sc = scratchFor(nd);
    const g = gFor(nd);
    steps.push({ op: 'down', p, mu: mu[p], lams: nd.children.map((c) => lam[c]), mus, scratch: sc, g });
    freeBuf(g[1]);
    freeBuf(g[0]);
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

// ---------------------------------------------------------------------------------------------------
// Execution.

const MAX_DIMS = 64;
const DESC_INTS = 1 + 5 * MAX_DIMS;
/** Largest single WASM allocation (the runtime's allocator caps a block just under 1 GiB). */
const MAX_REGION_BYTES = 2 ** 30 - 2 ** 16;
/** Message storage beyond this is refused up front (WASM memory is at most 4 GiB in all). */
const MAX_MESSAGE_BYTES = 3.5 * 2 ** 30;

/** Drives the table kernel: coalesces the loop nest, writes the descriptor, calls elimTableOp. */
class TableOps {
  private readonly k: Kernels;
  constructor(private readonly arena: Arena, private readonly desc: number) {
    this.k = arena.engine.kernels;
  }
  /**
   * out (=|+=) A·B over the iteration scope `lens`, strides per dimension per operand (element strides).
   * mode 0: out = A·B; 1: out += A·B; 2: out = A + B.
   */
  run(mode: number, lens: ArrayLike<number>, so: ArrayLike<number>, out: number, sa: ArrayLike<number>, a: number, sb: ArrayLike<number>, b: number): void {
    const L: number[] = [], O: number[] = [], A: number[] = [], B: number[] = [];
    for (let d = 0; d < lens.length; d++) {
      const l = lens[d];
      if (l === 1) continue;
      const t = L.length - 1;
      if (t >= 0 && so[d] === O[t] * L[t] && sa[d] === A[t] * L[t] && sb[d] === B[t] * L[t]) {
        L[t] *= l;
        continue;
      }
      L.push(l);
      O.push(so[d]);
      A.push(sa[d]);
      B.push(sb[d]);
    }
    const nd = L.length;
    if (nd > MAX_DIMS) throw new EngineError(`a clique has ${nd} non-trivial dimensions, past the kernel's limit of ${MAX_DIMS}`);
    const view = this.arena.i32(this.desc, DESC_INTS);
    view[0] = nd;
    view.set(L, 1);
    view.set(O, 1 + nd);
    view.set(A, 1 + 2 * nd);
    view.set(B, 1 + 3 * nd);
    this.arena.engine.call('exact inference', (k) => k.elimTableOp(this.desc, out, a, b, mode));
  }
  maxScale(p: number, n: number): number {
    return this.k.elimMaxScale(p, n);
  }
  fill(p: number, n: number, v: number): void {
    this.k.elimFill(p, n, v);
  }
}

interface ElimOutcome {
  logZ: number;
  marginals: Float64Array[] | null;
}

class RangeFailure extends Error {}

/** Elimination's scaled linear arithmetic cannot represent the model (messages spanning > ~700 nats). */
class RangeExceeded extends EngineError {}

function runElimination(engine: Engine, model: Model, nodes: Node[], order: Int32Array): ElimOutcome {
  const n = model.n;
  const card = model.card;
  const sched = schedule(nodes, order);
  if (sched.bytes > MAX_MESSAGE_BYTES) {
    throw new EngineError(`exact elimination would need ${fmtBytes(sched.bytes)} of WASM memory for its messages, past the engine's ${fmtBytes(MAX_MESSAGE_BYTES)}`);
  }

  // Persistent layout: constants, descriptor, each variable's row vector (its unary table, then the log
  // row offsets of the pairwise tables it owns), the pairwise tables, the kept factor tables, marginals.
  const arena = engine.arena();
  try {
    const rowOff = new Int32Array(n);
    let rowEntries = 0;
    for (let v = 0; v < n; v++) {
      rowOff[v] = rowEntries;
      rowEntries += card[v];
    }
    const edgeOff = new Float64Array(model.edges.length);
    let edgeEntries = 0;
    model.edges.forEach((e, k) => {
      edgeOff[k] = edgeEntries;
      edgeEntries += e.table.length;
    });
    const gOff = new Float64Array(n);
    let gEntries = 0, gTemp = 0;
    for (const nd of nodes) {
      if (!nd.gKept) continue;
      gOff[nd.v] = gEntries;
      gEntries += nd.gSize;
      gTemp = Math.max(gTemp, nd.gHalf);
    }
    const consts = arena.allocF64(2); // [1, 0]
    const desc = arena.allocI32(DESC_INTS);
    const rows = arena.allocF64(rowEntries);
    const edgeBase = arena.allocF64(Math.max(1, edgeEntries));
    const gBase = arena.allocF64(Math.max(1, gEntries));
    const gTempBase = arena.allocF64(Math.max(1, gTemp));
    const margBase = arena.allocF64(rowEntries);
    const dyn = sched.regions.map((b) => arena.alloc(Math.max(16, b)));
    // Every allocation is done: views stay valid from here on.
    arena.f64(consts, 2).set([1, 0]);

    const one = consts;
    const ops = new TableOps(arena, desc);
    const k = engine.kernels;
    const addr = (id: number): number => (id === -1 ? one : dyn[sched.regionOf[id]] + sched.offsets[id]);
    const rowAddr = (v: number): number => rows + rowOff[v] * 8;
    const edgeAddr = (ek: number): number => edgeBase + edgeOff[ek] * 8;
    const partner = nodes.map((nd) => new Map(nd.edges.map((ek) => [model.edges[ek].i === nd.v ? model.edges[ek].j : model.edges[ek].i, ek])));

    // g_v over its scope, built one dimension at a time (each step appends the next-latest variable as the
    // slowest digit and multiplies in v's pairwise table with it), alternating between P and Q so the last
    // step lands in P. Costs about two passes over the final table.
    const buildG = (nd: Node, P: number, Q: number): void => {
      const D = nd.gScope;
      const d = D.length;
      if (d === 1) {
        ops.run(0, [card[nd.v]], [1], P, [1], rowAddr(nd.v), [0], one);
        return;
      }
      let prev = rowAddr(nd.v);
      for (let t = 1; t < d; t++) {
        const S = D.subarray(0, t + 1);
        const out = (d - 1 - t) % 2 === 0 ? P : Q;
        const lens = Array.from(S, (u) => card[u]);
        const so = subStrides(S, S, card);
        const sa = subStrides(S, D.subarray(0, t), card);
        const sb = new Array<number>(t + 1).fill(0);
        const ek = partner[nd.v].get(D[t]);
        if (ek === undefined) ops.run(0, lens, so, out, sa, prev, sb, one);
        else {
          const e = model.edges[ek];
          sb[0] = e.i === nd.v ? card[e.j] : 1;
          sb[t] = e.i === nd.v ? 1 : card[e.j];
          ops.run(0, lens, so, out, sa, prev, sb, edgeAddr(ek));
        }
        prev = out;
      }
    };

    // Input conversion (once; again in support mode). Pairwise tables become linear, normalised per row
    // of their owner; each owner's row vector collects its unary table and the row offsets, and is then
    // exponentiated with its max shifted out into log Z. Returns the total shift (−∞: Z = 0 exactly).
    const buildFactors = (support: boolean): number => {
      const rv = arena.f64(rows, rowEntries);
      for (let v = 0; v < n; v++) rv.set(model.unary[v], rowOff[v]);
      const ev = arena.f64(edgeBase, edgeEntries);
      model.edges.forEach((e, ek) => ev.set(e.table, edgeOff[ek]));
      let logShift = 0;
      for (const nd of nodes) {
        for (const ek of nd.edges) {
          const e = model.edges[ek];
          if (support) k.elimSupport(edgeAddr(ek), e.table.length);
          else if (e.i === nd.v) k.elimRowNormalise(edgeAddr(ek), card[e.i], card[e.j], card[e.j], 1, rowAddr(nd.v));
          else k.elimRowNormalise(edgeAddr(ek), card[e.j], 1, card[e.i], card[e.j], rowAddr(nd.v));
        }
      }
      for (let v = 0; v < n; v++) {
        if (support) k.elimSupport(rowAddr(v), card[v]);
        else {
          const m = k.elimExpShift(rowAddr(v), card[v]);
          if (m === -Infinity) return -Infinity;
          logShift += m;
        }
      }
      for (const nd of nodes) if (nd.gKept) buildG(nd, gBase + gOff[nd.v] * 8, gTempBase);
      return logShift;
    };
    const gOf = (nd: Node, g: [number, number]): number => {
      if (nd.gKept) return gBase + gOff[nd.v] * 8;
      buildG(nd, addr(g[0]), addr(g[1]));
      return addr(g[0]);
    };

    // One λ step. Returns log of the normaliser (−Infinity if the message is all zero).
    const lambdaStep = (s: Extract<Step, { op: 'lambda' }>): number => {
      const nd = nodes[s.v];
      const D = nd.clique;
      const lens = Array.from(D, (u) => card[u]);
      const out = addr(s.out);
      const so = subStrides(D, nd.sep, card);
      const gs = subStrides(D, nd.gScope, card);
      const g = gOf(nd, s.g);
      ops.fill(out, nd.sepSize, 0);
      const ch = nd.children;
      if (ch.length === 0) ops.run(1, lens, so, out, gs, g, new Array(D.length).fill(0), one);
      else if (ch.length === 1) ops.run(1, lens, so, out, subStrides(D, nodes[ch[0]].sep, card), addr(s.children[0]), gs, g);
      else {
        const X = addr(s.scratch);
        const sx = subStrides(D, D, card);
        ops.run(0, lens, sx, X, subStrides(D, nodes[ch[0]].sep, card), addr(s.children[0]), gs, g);
        for (let i = 1; i < ch.length - 1; i++) ops.run(0, lens, sx, X, sx, X, subStrides(D, nodes[ch[i]].sep, card), addr(s.children[i]));
        const last = ch.length - 1;
        ops.run(1, lens, so, out, sx, X, subStrides(D, nodes[ch[last]].sep, card), addr(s.children[last]));
      }
      const m = ops.maxScale(out, nd.sepSize);
      if (Number.isNaN(m) || m === Infinity) throw new EngineError(`exact elimination: message of variable ${s.v} is ${m}`);
      return m > 0 ? Math.log(m) : -Infinity;
    };

    const normaliseMu = (p: number, c: number, ptr: number, len: number): void => {
      const m = ops.maxScale(ptr, len);
      if (!(m > 0) || m === Infinity) throw new RangeFailure(`the message from ${p} to ${c} is ${m === 0 ? 'all zero' : String(m)}`);
    };

    const downStep = (s: Extract<Step, { op: 'down' }>): void => {
      const nd = nodes[s.p];
      const D = nd.clique;
      const lens = Array.from(D, (u) => card[u]);
      const gs = subStrides(D, nd.gScope, card);
      const g = gOf(nd, s.g);
      const muPtr = addr(s.mu);
      const sMu = subStrides(D, nd.sep, card); // all zero for a root (μ is the constant 1)
      const margPtr = margBase + rowOff[nd.v] * 8;
      const ch = nd.children;
      const zeros = new Array<number>(D.length).fill(0);
      if (ch.length === 0) {
        const sm = zeros.slice();
        sm[0] = 1;
        ops.run(1, lens, sm, margPtr, sMu, muPtr, gs, g);
        return;
      }
      const sepStr = ch.map((c) => subStrides(D, nodes[c].sep, card));
      if (nd.hugin) {
        // B = μ_p g_p Π λ_c; μ_c = (Σ_{C_p \ S_c} B) / λ_c; marginal from B.
        const X = addr(s.scratch);
        const sx = subStrides(D, D, card);
        ops.run(0, lens, sx, X, sMu, muPtr, gs, g);
        ch.forEach((_, i) => ops.run(0, lens, sx, X, sx, X, sepStr[i], addr(s.lams[i])));
        ch.forEach((c, i) => {
          const mp = addr(s.mus[i]);
          ops.fill(mp, nodes[c].sepSize, 0);
          ops.run(1, lens, sepStr[i], mp, sx, X, zeros, one);
          k.elimDivide(mp, addr(s.lams[i]), nodes[c].sepSize);
          normaliseMu(s.p, c, mp, nodes[c].sepSize);
        });
        const sm = zeros.slice();
        sm[0] = 1;
        ops.run(1, lens, sm, margPtr, sx, X, zeros, one);
        return;
      }
      ch.forEach((c, i) => {
        const mp = addr(s.mus[i]);
        ops.fill(mp, nodes[c].sepSize, 0);
        if (ch.length === 1) ops.run(1, lens, sepStr[i], mp, sMu, muPtr, gs, g);
        else {
          // Leave-one-out product in the scratch table, then marginalise with the last factor fused.
          const X = addr(s.scratch);
          const sx = subStrides(D, D, card);
          const others = ch.map((_, j) => j).filter((j) => j !== i);
          ops.run(0, lens, sx, X, sMu, muPtr, gs, g);
          for (let t = 0; t < others.length - 1; t++) ops.run(0, lens, sx, X, sx, X, sepStr[others[t]], addr(s.lams[others[t]]));
          const last = others[others.length - 1];
          ops.run(1, lens, sepStr[i], mp, sx, X, sepStr[last], addr(s.lams[last]));
        }
        normaliseMu(s.p, c, mp, nodes[c].sepSize);
      });
      // Marginal of p from the first child's separator: Σ μ_c λ_c, p is digit 0 of S_c.
      const c0 = nodes[ch[0]];
      const E = c0.sep;
      const sE = subStrides(E, E, card);
      const sm = new Array<number>(E.length).fill(0);
      sm[0] = 1;
      ops.run(1, Array.from(E, (u) => card[u]), sm, margPtr, sE, addr(s.mus[0]), sE, addr(s.lams[0]));
    };

    // Upward pass (log Z), with a support check when a message vanishes.
    const upward = (support: boolean): number => {
      let logZ = buildFactors(support);
      if (logZ === -Infinity) return -Infinity;
      for (let t = 0; t < sched.upwardSteps; t++) {
        const l = lambdaStep(sched.steps[t] as Extract<Step, { op: 'lambda' }>);
        if (l === -Infinity) return -Infinity;
        logZ += l;
      }
      return logZ;
    };
    let logZ = upward(false);
    if (logZ === -Infinity) {
      // Exactly zero, or a message underflowed? Count supported configurations instead.
      if (upward(true) !== -Infinity) {
        throw new RangeExceeded('exact elimination: the potentials span more than the floating-point range (a message underflowed to zero)');
      }
      return { logZ: -Infinity, marginals: null };
    }
    logZ += model.logConst;

    ops.fill(margBase, rowEntries, 0);
    try {
      for (let t = sched.upwardSteps; t < sched.steps.length; t++) {
        const s = sched.steps[t];
        if (s.op === 'lambda') lambdaStep(s);
        else downStep(s);
      }
    } catch (e) {
      if (e instanceof RangeFailure) throw new RangeExceeded(`exact elimination: the potentials span more than the floating-point range (${e.message})`);
      throw e;
    }
    const mv = arena.readF64(margBase, rowEntries);
    const marginals = Array.from(card, (K, v) => {
      const p = mv.slice(rowOff[v], rowOff[v] + K);
      let s = 0;
      for (const x of p) s += x;
      if (!(s > 0) || !Number.isFinite(s)) {
        throw new RangeExceeded(`exact elimination: the marginal of variable ${v} sums to ${s} (the potentials span more than the floating-point range)`);
      }
      for (let i = 0; i < K; i++) p[i] /= s;
      return p;
    });
    return { logZ, marginals };
  } finally {
    arena.dispose();
  }
}

// ---------------------------------------------------------------------------------------------------
// Enumeration.

/** Digits in the enumeration's inner block: at most this many configurations. */
const ENUM_BLOCK = 4096;

function runEnumeration(engine: Engine, model: Model): ElimOutcome {
  const n = model.n;
  const card = model.card;
  let configs = 1;
  for (let v = 0; v < n; v++) configs *= card[v];
  if (configs > MAX_ENUMERATION) {
    throw new EngineError(`enumeration would visit ${fmtEntries(configs)} configurations, past the limit of 2^30`);
  }
  const off = new Int32Array(n);
  let unaryEntries = 0;
  for (let v = 0; v < n; v++) {
    off[v] = unaryEntries;
    unaryEntries += card[v];
  }
  let total = unaryEntries;
  const base = model.edges.map((e) => {
    const b = total;
    total += e.table.length;
    return b;
  });
  const F = new Float64Array(total);
  const Z = new Int32Array(total);
  const put = (at: number, t: Float64Array): void => {
    for (let i = 0; i < t.length; i++) {
      if (t[i] === -Infinity) Z[at + i] = 1;
      else F[at + i] = t[i];
    }
  };
  for (let v = 0; v < n; v++) put(off[v], model.unary[v]);
  model.edges.forEach((e, k) => put(base[k], e.table));
  // CSR adjacency with per-direction strides.
  const deg = new Int32Array(n);
  for (const e of model.edges) {
    deg[e.i]++;
    deg[e.j]++;
  }
  const adjStart = new Int32Array(n + 1);
  for (let v = 0; v < n; v++) adjStart[v + 1] = adjStart[v] + deg[v];
  const m2 = adjStart[n];
  const fillAt = adjStart.slice(0, n);
  const nbr = new Int32Array(m2), eb = new Int32Array(m2), su = new Int32Array(m2), sw = new Int32Array(m2);
  model.edges.forEach((e, k) => {
    let t = fillAt[e.i]++;
    nbr[t] = e.j; eb[t] = base[k]; su[t] = card[e.j]; sw[t] = 1;
    t = fillAt[e.j]++;
    nbr[t] = e.i; eb[t] = base[k]; su[t] = 1; sw[t] = card[e.j];
  });
  // Digits: the variables that move, low degree fastest (fewest incremental updates per step).
  const digits = Int32Array.from([...Array(n).keys()].filter((v) => card[v] > 1).sort((a, b) => deg[a] - deg[b] || a - b));
  let nb = 0;
  for (let prodK = 1; nb < digits.length && (nb === 0 || prodK * card[digits[nb]] <= ENUM_BLOCK); nb++) prodK *= card[digits[nb]];

  const arena = engine.arena();
  try {
    const pCard = arena.allocI32(card);
    const pOff = arena.allocI32(off);
    const pX = arena.allocI32(n);
    const pDigits = arena.allocI32(digits);
    const pDir = arena.allocI32(Math.max(1, digits.length));
    const pF = arena.allocF64(F);
    const pZ = arena.allocI32(Z);
    const pStart = arena.allocI32(adjStart);
    const pNbr = arena.allocI32(nbr);
    const pBase = arena.allocI32(eb);
    const pSu = arena.allocI32(su);
    const pSw = arena.allocI32(sw);
    const pMarg = arena.allocF64(unaryEntries);
    const pMargC = arena.allocF64(unaryEntries);
    const pAcc = arena.allocF64(unaryEntries);
    const pStartW = arena.allocF64(n);
    const pRes = arena.allocF64(4);
    // Allocation moves memory.buffer: (re)write every input through fresh views.
    arena.i32(pCard, n).set(card);
    arena.i32(pOff, n).set(off);
    arena.i32(pDigits, digits.length).set(digits);
    arena.i32(pDir, digits.length).fill(1);
    arena.f64(pF, total).set(F);
    arena.i32(pZ, total).set(Z);
    arena.i32(pStart, n + 1).set(adjStart);
    arena.i32(pNbr, m2).set(nbr);
    arena.i32(pBase, m2).set(eb);
    arena.i32(pSu, m2).set(su);
    arena.i32(pSw, m2).set(sw);
    engine.call('enumeration', (k) =>
      k.enumRun(n, pCard, pOff, pX, digits.length, pDigits, pDir, nb, pF, pZ, pStart, pNbr, pBase, pSu, pSw, pMarg, pMargC, pAcc, pStartW, pRes),
    );
    const res = arena.readF64(pRes, 4);
    const S = res[1] + res[2];
    if (!(S > 0)) return { logZ: -Infinity, marginals: null };
    const logZ = model.logConst + res[0] + Math.log(S);
    const mg = arena.readF64(pMarg, unaryEntries);
    const mc = arena.readF64(pMargC, unaryEntries);
    const marginals = Array.from(card, (K, v) => {
      const p = new Float64Array(K);
      if (K === 1) {
        p[0] = 1;
        return p;
      }
      let s = 0;
      for (let i = 0; i < K; i++) s += p[i] = mg[off[v] + i] + mc[off[v] + i];
      for (let i = 0; i < K; i++) p[i] /= s;
      return p;
    });
    return { logZ, marginals };
  } finally {
    arena.dispose();
  }
}

// ---------------------------------------------------------------------------------------------------

function result(out: ElimOutcome, rest: Omit<ExactResult, 'logZ' | 'marginals'>): ExactResult {
  const r = { logZ: out.logZ, ...rest } as ExactResult;
  if (out.marginals) r.marginals = out.marginals;
  else {
    Object.defineProperty(r, 'marginals', {
      enumerable: true,
      get() {
        throw new EngineError('every configuration has zero potential (log Z = −Infinity): the marginals are undefined');
      },
    });
  }
  return r;
}

/**
 * Exact log Z (natural log, including model.logConst) and node marginals.
 * method 'auto' (default) eliminates when the best ordering's largest clique table is within
 * maxTableEntries, else enumerates when there are at most 2^30 configurations, else refuses.
 */
export function exactInference(engine: Engine, model: Model, opts: ExactOptions = {}): ExactResult {
  const t0 = performance.now();
  const method = opts.method ?? 'auto';
  if (method !== 'auto' && method !== 'enumeration' && method !== 'elimination') {
    throw new ModelError(`unknown exact method "${method as string}"; expected auto, enumeration or elimination`);
  }
  const limit = checkLimit(opts.maxTableEntries ?? DEFAULT_MAX_TABLE_ENTRIES);
  const seconds = (): number => (performance.now() - t0) / 1000;
  const enumerate = (): ExactResult => {
    let configs = 1;
    for (const K of model.card) configs *= K;
    const out = runEnumeration(engine, model);
    return result(out, { method: 'enumeration', treewidth: model.n - 1, maxTableEntries: configs, ordering: 'gray-code', seconds: seconds() });
  };
  if (method === 'enumeration') return enumerate();
  if (!model.isPairwise) {
    // Elimination on factors of arity > 2 is not written yet: enumeration is the exact method there.
    let configs = 1;
    for (const K of model.card) configs *= K;
    if (method === 'auto' && configs <= MAX_ENUMERATION) return enumerate();
    const f = model.firstHigherOrderFactor();
    throw new EngineError(`exact inference: factor ${f} has arity ${model.arity(f)}, and elimination takes factors of arity ≤ 2 only so far; enumeration would visit ${fmtEntries(configs)} configurations, past the limit of 2^30 (gibbs, mf and --logz ais take this model)`);
  }
  const cands = candidateOrders(model, opts);
  const { best, feasible } = choose(cands, limit);
  if (!feasible) {
    let configs = 1;
    for (const K of model.card) configs *= K;
    if (method === 'auto' && configs <= MAX_ENUMERATION) return enumerate();
    throw refusal(best, limit, cands.map((c) => c.name));
  }
  const nodes = buildTree(model, best.order);
  let out: ElimOutcome;
  try {
    out = runElimination(engine, model, nodes, best.order);
  } catch (e) {
    // Enumeration works in log space throughout: the fallback when scaled messages under/overflow.
    let configs = 1;
    for (const K of model.card) configs *= K;
    if (e instanceof RangeExceeded && method === 'auto' && configs <= MAX_ENUMERATION) return enumerate();
    throw e;
  }
  return result(out, { method: 'elimination', treewidth: best.treewidth, maxTableEntries: best.maxEntries, ordering: best.name, seconds: seconds() });
}

/** For tests and benchmarks: the checkpointing schedule's size for a model (no engine). */
export function eliminationMemory(model: Model, opts: ExactOptions = {}): { bytes: number; stored: number; recomputed: number; steps: number; huginNodes: number } {
  const limit = checkLimit(opts.maxTableEntries ?? DEFAULT_MAX_TABLE_ENTRIES);
  const cands = candidateOrders(model, opts);
  const { best, feasible } = choose(cands, limit);
  if (!feasible) throw refusal(best, limit, cands.map((c) => c.name));
  const nodes = buildTree(model, best.order);
  const s = schedule(nodes, best.order);
  const huginNodes = nodes.filter((nd) => nd.hugin).length;
  return { bytes: s.bytes, stored: s.stored, recomputed: s.recomputed, steps: s.steps.length, huginNodes };
}
