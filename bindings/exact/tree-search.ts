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
// evaluated on a few bitsets (n/64 u64 words each): 40–150 ns per move on the UAI files and the
// rescue tests' models. Work is counted in bitset words (of 32 bits, the unit of the TypeScript
// search this replaced, so budgets buy what they did), a deterministic measure: the same graph,
// start, seed and budget give the same order in every host (WASM's own log2 and exp).

import { plannerEngine } from '../core/engine.ts';
import { completeOrder, orderCost, type OrderCost } from './order-search.ts';
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
}

/**
 * A binary contraction tree on bitsets: nodes 0 … L−1 are the leaves (factors), L … 2L−2 the inner
 * nodes; out[N] (W words from N·W) is the set of variables N's result still carries.
 */
class ContractionTree {
  readonly W: number;
  readonly nodes: number;
  readonly left: Int32Array;
  readonly right: Int32Array;
  readonly out: Uint32Array;
  root = 0;
  /** The leaves' scopes (L sets of W words). */
  leafSets: Uint32Array = new Uint32Array(0);

  constructor(readonly leaves: number, words: number) {
    this.W = words;
    if (words % 2 !== 0) throw new Error('contraction tree: sets must be whole u64 words');
    this.nodes = Math.max(1, 2 * leaves - 1);
    this.left = new Int32Array(this.nodes).fill(-1);
    this.right = new Int32Array(this.nodes).fill(-1);
    this.out = new Uint32Array(this.nodes * words);
  }
}

/**
 * Variables by cardinality class, for the engine's set sizes: log2 |set| is Σ_c log2(K_c) ·
 * |set ∩ class_c|, one masked popcount per class and word (models have a few distinct cardinalities).
 */
class Sizes {
  readonly classes: number;
  readonly logs: Float64Array;
  readonly masks: Uint32Array;
  /** K_c^k at c · stride + k (k ≤ the variables in all): by repeated multiplication, exact wherever it can be and the same in every host. */
  readonly pows: Float64Array;
  readonly stride: number;
  constructor(W: number, card: ArrayLike<number>) {
    const distinct = [...new Set(Array.from(card))].sort((a, b) => a - b);
    this.classes = distinct.length;
    this.logs = Float64Array.from(distinct, (k) => Math.log2(k));
    this.masks = new Uint32Array(this.classes * W);
    for (let v = 0; v < card.length; v++) this.masks[distinct.indexOf(card[v]) * W + (v >>> 5)] |= 1 << (v & 31);
    this.stride = card.length + 1;
    this.pows = new Float64Array(this.classes * this.stride);
    distinct.forEach((K, c) => {
      let x = 1;
      for (let k = 0; k < this.stride; k++) (this.pows[c * this.stride + k] = x), (x *= K);
    });
  }
}

/** 32-bit words per set of n variables: whole u64 words, as the engine reads them. */
const setWords = (n: number): number => 2 * ((n + 63) >>> 6);

/**
 * The tree of bucket elimination in `order`: each bucket's tables (its factors, its children's
 * messages) joined one after another, the message going to the bucket of its first variable
 * eliminated later; the roots (messages over no variable) joined last.
 */
function treeFromOrder(g: ContractionGraph, lv: Leaves, order: Int32Array): ContractionTree {
  const { local, scopes: leafScopes } = lv, nLocal = lv.globalOf.length;
  const L = leafScopes.length, W = setWords(nLocal);
  const t = new ContractionTree(L, W);
  const all = new Uint32Array(t.nodes * W);
  const pos = new Int32Array(nLocal).fill(-1);
  const byPos = new Int32Array(nLocal);
  let p = 0;
  for (const v of order) if (local[v] >= 0 && pos[local[v]] < 0) (byPos[p] = local[v]), (pos[local[v]] = p++);
  for (let v = 0; v < g.n; v++) if (local[v] >= 0 && pos[local[v]] < 0) (byPos[p] = local[v]), (pos[local[v]] = p++);
  const bucket: number[][] = Array.from({ length: nLocal }, () => []);
  // live[N]: N's variables not yet eliminated (all[N] keeps every variable below N, for the
  // outputs). A table goes to the bucket of its first live variable.
  const live = new Uint32Array(t.nodes * W);
  /** The live variable of `node` eliminated first (−1: none). */
  const firstLive = (node: number): number => {
    let best = -1;
    for (let w = 0; w < W; w++) {
      let bits = live[node * W + w];
      while (bits !== 0) {
        const low = bits & -bits;
        const u = (w << 5) + 31 - Math.clz32(low);
        bits ^= low;
        if (best < 0 || pos[u] < pos[best]) best = u;
      }
    }
    return best;
  };
  leafScopes.forEach((sc, l) => {
    for (const u of sc) all[l * W + (u >>> 5)] |= 1 << (u & 31);
    for (let w = 0; w < W; w++) live[l * W + w] = all[l * W + w];
    bucket[firstLive(l)].push(l);
  });
  let next = L;
  const join = (a: number, b: number): number => {
    const N = next++;
    t.left[N] = a;
    t.right[N] = b;
    for (let w = 0; w < W; w++) {
      all[N * W + w] = all[a * W + w] | all[b * W + w];
      live[N * W + w] = live[a * W + w] | live[b * W + w];
    }
    return N;
  };
  const roots: number[] = [];
  for (let q = 0; q < nLocal; q++) {
    const x = byPos[q], items = bucket[x];
    if (items.length === 0) continue;
    let node = items[0];
    for (let k = 1; k < items.length; k++) node = join(node, items[k]);
    live[node * W + (x >>> 5)] &= ~(1 << (x & 31));
    const to = firstLive(node);
    if (to >= 0) bucket[to].push(node);
    else roots.push(node);
  }
  let root = roots[0];
  for (let k = 1; k < roots.length; k++) root = join(root, roots[k]);
  t.root = root;
  t.leafSets = all.slice(0, L * W);
  // Outputs top-down: what a child carries is what it has that its sibling or the outside needs.
  for (let N = t.nodes - 1; N >= L; N--) {
    const a = t.left[N], b = t.right[N];
    for (let w = 0; w < W; w++) {
      const o = t.out[N * W + w];
      t.out[a * W + w] = all[a * W + w] & (o | all[b * W + w]);
      t.out[b * W + w] = all[b * W + w] & (o | all[a * W + w]);
    }
  }
  return t;
}

/**
 * A contraction tree copied into the planner engine (assembly/exact/exact_tree.ts), annealed and
 * read back as an elimination order there. dispose() frees it.
 */
class EngineTree {
  private readonly engine = plannerEngine();
  private readonly arena = this.engine.arena();
  private readonly W64: number;
  private readonly pLeft: number;
  private readonly pRight: number;
  private readonly pOut: number;

  constructor(private readonly t: ContractionTree) {
    const arena = this.arena;
    this.W64 = t.W / 2;
    this.pLeft = arena.allocI32(t.left);
    this.pRight = arena.allocI32(t.right);
    this.pOut = arena.alloc(4 * t.out.length, false);
    arena.u32(this.pOut, t.out.length).set(t.out);
  }

  /**
   * One annealing run over rotations (the tree changed in place into the best tree seen at a
   * sweep's end): objective log2 Σ weight + Σ penalty, a move judged by its local change; sweeps
   * and moves counted in bitset words (a rotation 2W(3 + classes) + 100 words, the costs of the
   * TypeScript search this replaced: its budgets still are the budgets).
   */
  anneal(sizes: Sizes, opts: { bound: number; penalty: number; work: number; betas: [number, number]; seed: number }, used: { work: number; proposals: number; accepted: number }): { objective: number; log2Flops: number } {
    const { arena, t } = this, n = t.nodes;
    const pMasks = arena.alloc(4 * sizes.masks.length, false);
    arena.u32(pMasks, sizes.masks.length).set(sizes.masks);
    const pLogs = arena.allocF64(sizes.logs), pPows = arena.allocF64(sizes.pows);
    const pScratch = arena.alloc(this.engine.kernels.treeScratchBytes(n, this.W64), false);
    const pStats = arena.allocF64([0, 0, used.work, used.proposals, used.accepted]);
    this.engine.call('contraction-tree search', (k) => k.treeAnneal(this.pLeft, this.pRight, this.pOut, n, t.leaves, this.W64, pMasks, pLogs, pPows, sizes.stride, sizes.classes, opts.bound, opts.penalty, opts.work, opts.betas[0], opts.betas[1], opts.seed >>> 0, pScratch, pStats));
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
    const { arena, t } = this, nLocal = lv.globalOf.length;
    const pLeafSets = arena.alloc(4 * t.leafSets.length, false);
    arena.u32(pLeafSets, t.leafSets.length).set(t.leafSets);
    const pOrder = arena.alloc(4 * nLocal, false), pStack = arena.alloc(4 * t.nodes, false);
    const pVisited = arena.alloc(t.nodes), pBag = arena.alloc(8 * this.W64, false);
    const m = this.engine.call('contraction-tree order', (k) => k.treeOrder(this.pLeft, this.pRight, this.pOut, t.nodes, t.leaves, this.W64, t.root, pLeafSets, pOrder, nLocal, pStack, pVisited, pBag));
    // A valid tree sums each variable at exactly one node.
    if (m > nLocal) throw new Error(`contraction tree: ${m - nLocal} variables summed twice`);
    if (m < nLocal) throw new Error(`contraction tree: ${nLocal - m} variables never summed`);
    const local = arena.i32(pOrder, nLocal), order = new Int32Array(n), seen = new Uint8Array(n);
    for (let k = 0; k < nLocal; k++) {
      const v = lv.globalOf[local[k]];
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
  const objective = (c: OrderCost): number => c.log2Flops + penalty * Math.max(0, c.log2Message - bound);
  start = completeOrder(start, g.n);
  const first = opts.startCost ?? orderCost(g, start);
  let best = { order: start, cost: first, obj: objective(first), tree: NaN };
  const lv = leavesOf(g);
  const used = { work: 0, proposals: 0, accepted: 0 };
  const treeOrders: Int32Array[] = [];
  const done = (improved: boolean): TreeSearchResult => ({ order: best.order, ...best.cost, improved, treeLog2Flops: best.tree, proposals: used.proposals, accepted: used.accepted, work: used.work, treeOrders, start: first });
  if (lv.scopes.length < 3 || opts.work <= 0) return done(false);
  const sizes = new Sizes(setWords(lv.globalOf.length), Int32Array.from(lv.globalOf, (v) => g.card[v]));
  const seed = opts.seed ?? 0x7e5a;
  let improved = false;
  const startTree = treeFromOrder(g, lv, start);
  for (let r = 0; r < restarts; r++) {
    const t = new EngineTree(startTree);
    let a: { log2Flops: number }, order: Int32Array;
    try {
      a = t.anneal(sizes, { bound, penalty, work: opts.work / restarts, betas: opts.betas ?? [0.5, 30], seed: seed + r }, used);
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

/** The tree's leaves: each nonempty scope in local indices (the variables some scope holds, numbered densely). */
interface Leaves {
  scopes: Int32Array[];
  /** Local index of each variable (−1: in no scope). */
  local: Int32Array;
  /** The variable of each local index. */
  globalOf: Int32Array;
}

/** Leaves by scope list: the rescue search's stages all start from the same graph. */
const leavesCache = new WeakMap<Int32Array[], Leaves>();

function leavesOf(g: ContractionGraph): Leaves {
  const cached = leavesCache.get(g.scopes);
  if (cached && cached.local.length === g.n) return cached;
  const local = new Int32Array(g.n).fill(-1), stamp = new Int32Array(g.n).fill(-1);
  const globalOf: number[] = [];
  const scopes: Int32Array[] = [];
  for (let f = 0; f < g.scopes.length; f++) {
    const sc = g.scopes[f];
    let m = 0;
    for (let k = 0; k < sc.length; k++) if (stamp[sc[k]] !== f) (stamp[sc[k]] = f), m++;
    if (m === 0) continue;
    const leaf = new Int32Array(m);
    m = 0;
    for (let k = 0; k < sc.length; k++) {
      const v = sc[k];
      if (stamp[v] !== f) continue;
      stamp[v] = -1 - f; // taken
      if (local[v] < 0) (local[v] = globalOf.length), globalOf.push(v);
      leaf[m++] = local[v];
    }
    scopes.push(leaf);
  }
  const lv = { scopes, local, globalOf: Int32Array.from(globalOf) };
  leavesCache.set(g.scopes, lv);
  return lv;
}

/** The order read off `start`'s own bucket tree, without search (its cliques are the start order's). */
export function bucketTreeOrder(g: ContractionGraph, start: Int32Array): Int32Array {
  const lv = leavesOf(g);
  if (lv.scopes.length === 0) return start;
  const t = new EngineTree(treeFromOrder(g, lv, start));
  try {
    return t.order(lv, g.n);
  } finally {
    t.dispose();
  }
}
