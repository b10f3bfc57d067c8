// Local search on contraction trees: simulated annealing over tree rotations, the move set of TreeSA
// (Kalachev, Panteleev, Yung 2021; OMEinsum.jl's tree optimiser), scored for bucket elimination,
// then turned back into an elimination order the executors run. This file builds the start tree
// and judges the results; the sweeps and the order read-back run in the engine
// (assembly/exact/exact_tree.ts) on the planner's own instance (core/engine.ts, plannerEngine).
//
// The tree's leaves are the factors (their free variables); an inner node joins two subtrees and its
// output is the set of its subtrees' variables still needed outside it. A variable is summed at the
// node where it stops being needed, so a node that sums something holds bucket-elimination cliques
// (within its bag: the union of its children's outputs), and the elimination order read off the
// tree (post-order, each node's summed variables) has every clique inside a bag. A rotation
// ((Z, (C, D)) → ((Z, C), D)) changes one inner node's output and two nodes' bags, so a move is
// evaluated on a few bitsets (n/64 u64 words each): 40–120 ns per move on the UAI files and the
// rescue tests' models. Work is counted in bitset words (of 32 bits, the unit of the TypeScript
// search this replaced, so budgets buy what they did), a deterministic measure: the same graph,
// start, seed and budget give the same order in every host (WASM's own log2 and exp).

import { plannerEngine } from '../core/engine.ts';
import { completeOrder, orderCost, searchObjective, type OrderCost } from './order-search.ts';
import type { OrderingGraph } from './orderings.ts';

/** What the tree search reads of a model: variables, cardinalities and the factors' free scopes. */
export interface ContractionGraph extends OrderingGraph {
  /** Each factor's free variables (fixed ones removed; an empty scope is skipped). */
  scopes: Int32Array[];
}

export interface TreeSearchOptions {
  /** Largest message allowed (log2 entries): each bit past it costs `penalty` in the objective. */
  maxLog2Message: number;
  /** Bitset words the search may touch (its deterministic work budget), over all restarts. */
  work: number;
  seed?: number;
  /** Objective units (log2 flops) per log2 of message past the bound. Default 1. */
  penalty?: number;
  /** Independent annealing runs from the start tree (the budget split between them). Default 2. */
  restarts?: number;
  /** Inverse temperatures (1 / log2 units) of the first and last sweep. Default 0.5 and 30. */
  betas?: [number, number];
  /** The start order's cost, when the caller knows it (else computed). */
  startCost?: OrderCost;
}

export interface TreeSearchResult extends OrderCost {
  /** The best elimination order (the start order when no tree beat it). */
  order: Int32Array;
  /** The tree search's order beat the start order by the objective. */
  improved: boolean;
  /** log2 of the best tree's score (Σ nodeWeight; NaN when no tree beat the start). */
  treeLog2Flops: number;
  /** Rotations proposed and accepted, over all restarts. */
  proposals: number;
  accepted: number;
  /** Bitset words touched. */
  work: number;
  /** Each restart's order (read off its best tree). */
  treeOrders: Int32Array[];
  /** The start order's cost (completed with the variables it lacks). */
  start: OrderCost;
  /** Searches run one after another, each from the best order before (the planner's staged rescue search); else absent (one). */
  stages?: number;
  /** The staged rescue stopped early, standing still short of the limit (absent: not staged). */
  stalled?: boolean;
}

/**
 * Variables by cardinality class, for the engine's set sizes: log2 |set| is Σ_c log2(K_c) ·
 * |set ∩ class_c|. With one class a variable's set index is its local index; with several, each
 * class's variables take words of their own (in local order, class by class), so a move counts a
 * set's variables per class in its one pass over the words, not one masked pass per class.
 */
class SetLayout {
  readonly classes: number;
  readonly logs: Float64Array;
  /** K_c^k at c · stride + k (k ≤ the variables in all): by repeated multiplication, exact wherever it can be and the same in every host. */
  readonly pows: Float64Array;
  readonly stride: number;
  /** u64 words per set (each class's whole words). */
  readonly W64: number;
  /** The words of the unpadded sets: the budget's unit counts these. */
  readonly countW64: number;
  /** Set indices: index[q] of local variable q; local[i] of set index i (−1: padding). */
  readonly index: Int32Array;
  readonly local: Int32Array;
  /** Class c's words: classWords[c] … classWords[c + 1]. */
  readonly classWords: Int32Array;
  /** Classes sit in words of their own (several classes): set indices are not local indices. */
  readonly padded: boolean;
  /** The leaves' variables as set indices. */
  readonly leafVars: Int32Array;
  constructor(card: ArrayLike<number>, leafVars: Int32Array) {
    const nLocal = card.length;
    const distinct = [...new Set(Array.from(card))].sort((a, b) => a - b);
    const classOf = (q: number): number => distinct.indexOf(card[q]);
    this.classes = distinct.length;
    this.logs = Float64Array.from(distinct, (k) => Math.log2(k));
    this.countW64 = (nLocal + 63) >>> 6;
    this.index = new Int32Array(nLocal);
    this.padded = this.classes > 1;
    if (!this.padded) {
      this.W64 = this.countW64;
      this.classWords = Int32Array.of(0, this.W64);
      for (let q = 0; q < nLocal; q++) this.index[q] = q;
    } else {
      const counts = new Int32Array(this.classes);
      for (let q = 0; q < nLocal; q++) counts[classOf(q)]++;
      this.classWords = new Int32Array(this.classes + 1);
      for (let c = 0; c < this.classes; c++) this.classWords[c + 1] = this.classWords[c] + ((counts[c] + 63) >>> 6);
      this.W64 = this.classWords[this.classes];
      const next = Int32Array.from(this.classWords.subarray(0, this.classes), (w) => 64 * w);
      for (let q = 0; q < nLocal; q++) this.index[q] = next[classOf(q)]++;
    }
    this.local = new Int32Array(Math.max(1, 64 * this.W64)).fill(-1);
    this.index.forEach((i, q) => (this.local[i] = q));
    this.leafVars = this.padded ? Int32Array.from(leafVars, (q) => this.index[q]) : leafVars;
    this.stride = nLocal + 1;
    this.pows = new Float64Array(this.classes * this.stride);
    distinct.forEach((K, c) => {
      let x = 1;
      for (let k = 0; k < this.stride; k++) (this.pows[c * this.stride + k] = x), (x *= K);
    });
  }
}

/**
 * A contraction tree in the planner engine (assembly/exact/exact_tree.ts): built there as the
 * bucket tree of an order — each bucket's tables (its factors, its children's messages) joined one
 * after another, the message going to the bucket of its first variable eliminated later, the roots
 * joined last — then annealed and read back as an elimination order there. Nodes 0 … L−1 are the
 * leaves (factors), L … 2L−2 the inner nodes; each node's output set (the variables its result
 * still carries) and variable set are W u64 words, over the layout's set indices. dispose() frees it.
 */
class EngineTree {
  private readonly engine = plannerEngine();
  private readonly arena = this.engine.arena();
  readonly leaves: number;
  readonly nodes: number;
  readonly W64: number;
  readonly root: number;
  private readonly pLeft: number;
  private readonly pRight: number;
  private readonly pOut: number;
  /** Each node's variables; the first L rows are the leaves' scopes. */
  private readonly pAll: number;

  constructor(
    lv: Leaves,
    private readonly layout: SetLayout,
    order: Int32Array,
    n: number,
  ) {
    const arena = this.arena, nLocal = lv.globalOf.length, L = lv.count, index = layout.index;
    this.leaves = L;
    this.nodes = Math.max(1, 2 * L - 1);
    this.W64 = layout.W64;
    const nIndex = layout.local.length;
    const pos = new Int32Array(nIndex).fill(-1), byPos = new Int32Array(nLocal);
    let p = 0;
    const place = (v: number): void => {
      const i = lv.local[v] >= 0 ? index[lv.local[v]] : -1;
      if (i >= 0 && pos[i] < 0) (byPos[p] = i), (pos[i] = p++);
    };
    for (const v of order) place(v);
    for (let v = 0; v < n; v++) place(v);
    const leafVars = layout.leafVars;
    const nodes = this.nodes, setBytes = 8 * this.W64;
    this.pLeft = arena.alloc(4 * nodes, false);
    this.pRight = arena.alloc(4 * nodes, false);
    this.pOut = arena.alloc(nodes * setBytes);
    this.pAll = arena.alloc(nodes * setBytes);
    const scratch = this.engine.arena();
    try {
      const pLive = scratch.alloc(nodes * setBytes);
      const pHead = scratch.alloc(4 * nIndex, false), pTail = scratch.alloc(4 * nIndex, false);
      const pNext = scratch.alloc(4 * nodes, false), pRoots = scratch.alloc(4 * nodes, false);
      const pLeafStart = scratch.allocI32(lv.leafStart), pLeafVars = scratch.allocI32(leafVars.length > 0 ? leafVars : [0]);
      const pPos = scratch.allocI32(pos), pByPos = scratch.allocI32(nLocal > 0 ? byPos : [0]);
      this.root = this.engine.call('contraction tree', (k) => k.treeBuild(L, nLocal, nIndex, this.W64, pLeafStart, pLeafVars, pPos, pByPos, this.pLeft, this.pRight, this.pOut, this.pAll, pLive, pHead, pTail, pNext, pRoots));
    } finally {
      scratch.dispose();
    }
  }

  /**
   * One annealing run over rotations (the tree changed in place into the best tree seen at a
   * sweep's end): objective log2 Σ weight + Σ penalty, a move judged by its local change; sweeps
   * and moves counted in bitset words of the unpadded sets (a rotation 2W(3 + classes) + 100 words,
   * the costs of the TypeScript search this replaced: its budgets still are the budgets).
   */
  anneal(opts: { bound: number; penalty: number; work: number; betas: [number, number]; seed: number }, used: { work: number; proposals: number; accepted: number }): { objective: number; log2Flops: number } {
    const arena = this.arena, n = this.nodes, sizes = this.layout;
    const pLogs = arena.allocF64(sizes.logs), pPows = arena.allocF64(sizes.pows);
    const pScratch = arena.alloc(this.engine.kernels.treeScratchBytes(n, this.W64), false);
    const pRanges = arena.allocI32(sizes.classWords);
    const pStats = arena.allocF64([0, 0, used.work, used.proposals, used.accepted]);
    this.engine.call('contraction-tree search', (k) => k.treeAnneal(this.pLeft, this.pRight, this.pOut, n, this.leaves, this.W64, sizes.countW64, pLogs, pPows, sizes.stride, sizes.classes, pRanges, opts.bound, opts.penalty, opts.work, opts.betas[0], opts.betas[1], opts.seed >>> 0, pScratch, pStats));
    const [objective, log2Flops, work, proposals, accepted] = arena.f64(pStats, 5);
    used.work = work;
    used.proposals = proposals;
    used.accepted = accepted;
    return { objective, log2Flops };
  }

  /**
   * The tree's elimination order: in post-order, the variables each node sums (a leaf: those of its
   * factor alone; an inner node: its bag less its output); then the variables in no scope.
   */
  order(lv: Leaves, n: number): Int32Array {
    const arena = this.arena, nLocal = lv.globalOf.length;
    const pOrder = arena.alloc(4 * Math.max(1, nLocal), false), pStack = arena.alloc(4 * this.nodes, false);
    const pVisited = arena.alloc(this.nodes), pBag = arena.alloc(8 * Math.max(1, this.W64), false);
    // Set indices back to local ones; with classes in words of their own, each node's summed
    // variables in local order (rank), as with one class.
    const pRank = this.layout.padded ? arena.allocI32(this.layout.local) : 0;
    const m = this.engine.call('contraction-tree order', (k) => k.treeOrder(this.pLeft, this.pRight, this.pOut, this.nodes, this.leaves, this.W64, this.root, this.pAll, pOrder, nLocal, pStack, pVisited, pBag, pRank));
    // A valid tree sums each variable at exactly one node.
    if (m > nLocal) throw new Error(`contraction tree: ${m - nLocal} variables summed twice`);
    if (m < nLocal) throw new Error(`contraction tree: ${nLocal - m} variables never summed`);
    const indices = arena.i32(pOrder, nLocal), order = new Int32Array(n), seen = new Uint8Array(n);
    for (let k = 0; k < nLocal; k++) {
      const v = lv.globalOf[this.layout.local[indices[k]]];
      if (seen[v]) throw new Error(`contraction tree: variable ${v} summed twice`);
      seen[v] = 1;
      order[k] = v;
    }
    let at = nLocal;
    for (let v = 0; v < n; v++) if (!seen[v]) order[at++] = v;
    return order;
  }

  dispose(): void {
    this.arena.dispose();
  }
}

/**
 * Simulated annealing over contraction trees from `start`'s bucket tree: `restarts` runs (seeds
 * seed, seed + 1, …) over an inverse-temperature ladder rising geometrically from betas[0] to
 * betas[1], each sweep proposing one rotation at every inner node (Metropolis on the objective);
 * each run's best tree becomes an elimination order, evaluated exactly (orderCost). Returns the
 * best order by log2 flops + penalty · (log2 largest message − bound)⁺, never worse than `start`.
 */
export function searchContractionTree(g: ContractionGraph, start: Int32Array, opts: TreeSearchOptions): TreeSearchResult {
  const penalty = opts.penalty ?? 1, bound = opts.maxLog2Message, restarts = Math.max(1, opts.restarts ?? 2);
  const objective = searchObjective(bound, penalty);
  start = completeOrder(start, g.n);
  const first = opts.startCost ?? orderCost(g, start);
  let best = { order: start, cost: first, obj: objective(first), tree: NaN };
  const lv = leavesOf(g);
  const used = { work: 0, proposals: 0, accepted: 0 };
  const treeOrders: Int32Array[] = [];
  const done = (improved: boolean): TreeSearchResult => ({ order: best.order, ...best.cost, improved, treeLog2Flops: best.tree, proposals: used.proposals, accepted: used.accepted, work: used.work, treeOrders, start: first });
  if (lv.count < 3 || opts.work <= 0) return done(false);
  const layout = layoutOf(g, lv);
  const seed = opts.seed ?? 0x7e5a;
  let improved = false;
  for (let r = 0; r < restarts; r++) {
    const t = new EngineTree(lv, layout, start, g.n);
    let a: { log2Flops: number }, order: Int32Array;
    try {
      a = t.anneal({ bound, penalty, work: opts.work / restarts, betas: opts.betas ?? [0.5, 30], seed: seed + r }, used);
      order = t.order(lv, g.n);
    } finally {
      t.dispose();
    }
    treeOrders.push(order);
    const cost = orderCost(g, order);
    const obj = objective(cost);
    if (obj < best.obj) (best = { order, cost, obj, tree: a.log2Flops }), (improved = true);
  }
  return done(improved);
}

/**
 * The tree's leaves: each nonempty scope (duplicates dropped) in local indices (the variables some
 * scope holds, numbered densely), leaf l's at leafVars[leafStart[l] … leafStart[l+1]).
 */
interface Leaves {
  count: number;
  leafStart: Int32Array;
  leafVars: Int32Array;
  /** Local index of each variable (−1: in no scope). */
  local: Int32Array;
  /** The variable of each local index. */
  globalOf: Int32Array;
}

/** The set layout of the leaves' variables (their cardinalities' classes), made once per leaves as they are. */
const layoutCache = new WeakMap<Leaves, SetLayout>();
function layoutOf(g: ContractionGraph, lv: Leaves): SetLayout {
  let layout = layoutCache.get(lv);
  if (!layout) layoutCache.set(lv, (layout = new SetLayout(Array.from(lv.globalOf, (v) => g.card[v]), lv.leafVars)));
  return layout;
}

/** Leaves by scope list: the rescue search's stages all start from the same graph. */
const leavesCache = new WeakMap<Int32Array[], Leaves>();

function leavesOf(g: ContractionGraph): Leaves {
  const cached = leavesCache.get(g.scopes);
  if (cached && cached.local.length === g.n) return cached;
  const local = new Int32Array(g.n).fill(-1), stamp = new Int32Array(g.n).fill(-1);
  const globalOf: number[] = [], leafStart: number[] = [0], leafVars: number[] = [];
  for (let f = 0; f < g.scopes.length; f++) {
    const sc = g.scopes[f];
    for (let k = 0; k < sc.length; k++) {
      const v = sc[k];
      if (stamp[v] === f) continue;
      stamp[v] = f;
      if (local[v] < 0) (local[v] = globalOf.length), globalOf.push(v);
      leafVars.push(local[v]);
    }
    if (leafVars.length > leafStart[leafStart.length - 1]) leafStart.push(leafVars.length);
  }
  const lv = { count: leafStart.length - 1, leafStart: Int32Array.from(leafStart), leafVars: Int32Array.from(leafVars), local, globalOf: Int32Array.from(globalOf) };
  leavesCache.set(g.scopes, lv);
  return lv;
}

/** The order read off `start`'s own bucket tree, without search (its cliques are the start order's). */
export function bucketTreeOrder(g: ContractionGraph, start: Int32Array): Int32Array {
  const lv = leavesOf(g);
  if (lv.count === 0) return start;
  const t = new EngineTree(lv, layoutOf(g, lv), start, g.n);
  try {
    return t.order(lv, g.n);
  } finally {
    t.dispose();
  }
}
