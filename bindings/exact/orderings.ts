// Elimination orderings for exact inference, and their clique sizes. The greedy heuristics and the
// clique measurements run in the engine (assembly/exact/exact_greedy.ts) on the planner's instance
// (core/engine.ts, plannerEngine), as do the interaction graph's adjacency lists and RCM
// (assembly/exact/exact_graph.ts); this file chooses among the orders.
//
// The adjacency lists keep the insertion order of the Set-based code the pooled lists replaced
// (removal shifts, additions append), which makes the orderings — scores, floating sums and
// tie-breaks — the same, so exact results do not move.

/** What the orderings read of a model: its size and the pairs of variables that share a factor. */
export interface OrderingGraph {
  n: number;
  card: Int32Array;
  pairwiseFactors(): { i: Int32Array; j: Int32Array };
}
import { ModelError } from '../core/errors.ts';
import { plannerEngine, type Arena, type Kernels } from '../core/engine.ts';

export type OrderingHeuristic = 'minfill' | 'weightedminfill' | 'mindegree' | 'minweight' | 'rcm' | 'natural';
export const ORDERINGS: readonly OrderingHeuristic[] = ['minfill', 'weightedminfill', 'mindegree', 'minweight', 'rcm', 'natural'];

export interface OrderStats {
  name: string;
  order: Int32Array;
  treewidth: number;
  maxEntries: number;
  totalEntries: number;
  /** The simulation stopped early (cliques far past any limit): sizes are lower bounds. */
  aborted: boolean;
}

/**
 * The interaction graph's adjacency lists (CSR: v's neighbours at adj[rowStart[v] … rowStart[v+1])),
 * each in the insertion order elimination starts from: distinct pairs (i < j) in (i, j) order —
 * the order Model.edges lists them in — each appended to both ends' lists.
 */
interface Adjacency {
  rowStart: Int32Array;
  adj: Int32Array;
  /** log2 of each cardinality (computed once for every run on the graph). */
  logK: Float64Array;
}

function adjacency(model: OrderingGraph): Adjacency {
  const n = model.n;
  const { i, j } = model.pairwiseFactors();
  const engine = plannerEngine(), arena = engine.arena();
  try {
    const pi = arena.allocI32(i.length > 0 ? i : [0]), pj = arena.allocI32(j.length > 0 ? j : [0]);
    const total = engine.call('interaction graph', (k) => k.adjacencyBuild(n, i.length, pi, pj));
    const k = engine.kernels;
    const rowStart = arena.i32(k.adjacencyRowStarts(), n + 1).slice(), adj = arena.i32(k.adjacencyLists(), total).slice();
    const logK = new Float64Array(n);
    for (let v = 0; v < n; v++) logK[v] = Math.log2(model.card[v]);
    return { rowStart, adj, logK };
  } finally {
    arena.dispose();
  }
}

/** The graph, cardinalities and their log2 in the planner engine, for one kernel call. */
function withGraph<T>(model: OrderingGraph, g: Adjacency, run: (k: Kernels, p: { rowStart: number; adj: number; card: number; logK: number }, arena: Arena) => T): T {
  const engine = plannerEngine(), arena = engine.arena();
  try {
    const p = {
      rowStart: arena.allocI32(g.rowStart),
      adj: arena.allocI32(g.adj.length > 0 ? g.adj : [0]),
      card: arena.allocI32(model.card),
      logK: arena.allocF64(g.logK),
    };
    return engine.call('elimination ordering', (k) => run(k, p, arena));
  } finally {
    arena.dispose();
  }
}

type Greedy = 'minfill' | 'weightedminfill' | 'mindegree' | 'minweight';
const GREEDY_KIND: Record<Greedy, number> = { minfill: 0, weightedminfill: 1, mindegree: 2, minweight: 3 };

/**
 * Greedy elimination by a local score, ties broken by a second score, then by index (min-fill and
 * weighted min-fill: fill, then clique log2; min-degree: degree, then clique log2; min-weight:
 * clique log2, then degree), with its cliques' stats (what simulate gives for any limit at or past
 * abortLog2: the run measures each clique as it eliminates it). Returns null as soon as the variable
 * to eliminate has a clique of more than 2^abortLog2 entries.
 */
function greedyOrder(model: OrderingGraph, kind: Greedy, abortLog2: number, g: Adjacency): { order: Int32Array; stats: Simulation['stats'] } | null {
  return withGraph(model, g, (k, p, arena) => {
    const pOrder = arena.alloc(4 * Math.max(1, model.n), false), pStats = arena.alloc(32, false);
    const m = k.greedyOrderRun(model.n, p.rowStart, p.adj, p.card, p.logK, GREEDY_KIND[kind], abortLog2, pOrder, pStats);
    if (m < 0) return null;
    const [treewidth, , maxEntries, totalEntries] = arena.f64(pStats, 4);
    return { order: arena.i32(pOrder, model.n).slice(), stats: { treewidth, maxEntries, totalEntries, aborted: false } };
  });
}

/** 0, 1, …, n − 1. */
export function naturalOrder(n: number): Int32Array {
  const order = new Int32Array(n);
  for (let v = 0; v < n; v++) order[v] = v;
  return order;
}

/** Reverse Cuthill–McKee (assembly/exact/exact_graph.ts, rcmRun): BFS from a pseudo-peripheral vertex of each component, neighbours by degree. */
function rcmOrder(model: OrderingGraph, g: Adjacency): Int32Array {
  const engine = plannerEngine(), arena = engine.arena();
  try {
    const pRow = arena.allocI32(g.rowStart), pAdj = arena.allocI32(g.adj.length > 0 ? g.adj : [0]);
    engine.call('elimination ordering', (k) => k.rcmRun(model.n, pRow, pAdj));
    return arena.i32(engine.kernels.rcmOrder(), model.n).slice();
  } finally {
    arena.dispose();
  }
}

export interface Simulation {
  stats: Omit<OrderStats, 'name' | 'order'>;
  /** C_v = cliqueVars[cliqueStart[v] … cliqueStart[v + 1]), variables sorted by elimination position (v first). Only when asked. */
  cliques?: { cliqueStart: Int32Array; cliqueVars: Int32Array };
}

/** Eliminates in the given order, measuring every clique (stopping past 2^abortLog2 entries). */
export function simulate(model: OrderingGraph, order: Int32Array, wantCliques: boolean, abortLog2: number, g: Adjacency = adjacency(model)): Simulation {
  const n = model.n;
  return withGraph(model, g, (k, p, arena) => {
    const pOrder = arena.allocI32(order.length > 0 ? order : [0]), pStats = arena.alloc(40, false);
    const room = k.simulateRun(n, p.rowStart, p.adj, p.card, p.logK, pOrder, abortLog2, pStats, 0);
    const [tw, maxLog2, maxEntries, total, aborted] = arena.f64(pStats, 5);
    if (aborted) return { stats: { treewidth: tw, maxEntries: 2 ** maxLog2, totalEntries: total, aborted: true } };
    const stats = { treewidth: tw, maxEntries, totalEntries: total, aborted: false };
    if (!wantCliques) return { stats };
    // Again, writing each clique: v, |N|, its neighbours; then into CSR by variable.
    const pCliques = arena.alloc(4 * Math.max(1, room), false);
    k.simulateRun(n, p.rowStart, p.adj, p.card, p.logK, pOrder, abortLog2, pStats, pCliques);
    const flat = arena.i32(pCliques, room), pos = new Int32Array(n);
    for (let t = 0; t < n; t++) pos[order[t]] = t;
    const cliqueStart = new Int32Array(n + 1), cliqueVars = new Int32Array(room - n);
    for (let at = 0; at < room; at += flat[at + 1] + 2) cliqueStart[flat[at] + 1] = flat[at + 1] + 1;
    for (let v = 0; v < n; v++) cliqueStart[v + 1] += cliqueStart[v];
    for (let at = 0; at < room; ) {
      const v = flat[at], d = flat[at + 1], c = cliqueStart[v];
      cliqueVars[c] = v;
      // The neighbours by position: small cliques by insertion (a comparator sort per clique was
      // most of this on models of 10⁵ variables), large ones by the comparator sort.
      if (d <= 32) {
        for (let k = 1; k <= d; k++) {
          const u = flat[at + 1 + k], p = pos[u];
          let j = k - 1;
          while (j >= 1 && pos[cliqueVars[c + j]] > p) (cliqueVars[c + j + 1] = cliqueVars[c + j]), j--;
          cliqueVars[c + j + 1] = u;
        }
      } else {
        cliqueVars.set(flat.subarray(at + 2, at + 2 + d), c + 1);
        cliqueVars.subarray(c + 1, c + 1 + d).sort((a, b) => pos[a] - pos[b]);
      }
      at += d + 2;
    }
    return { stats, cliques: { cliqueStart, cliqueVars } };
  });
}

/**
 * How far past the limit callers still plan an order's cliques (log2): bucket elimination plans
 * orders whose cliques reach 16 × its order limit (exact.ts, bucketOrderLimit).
 */
export const PLANNED_PAST_LIMIT_LOG2 = 4;

/** Cheapest first: natural and RCM are linear, the greedy ones cost more, fill-based ones most. */
const BY_COST: readonly OrderingHeuristic[] = ['natural', 'rcm', 'mindegree', 'minweight', 'minfill', 'weightedminfill'];
/**
 * When natural, RCM and the first greedy ordering all need a clique table past the limit by at
 * least this factor (log2), the remaining, slower greedy heuristics are not tried on a model of
 * more than SKIP_MIN_VARIABLES variables: a model far past the limit (a 100×100 grid) is refused in
 * tens of milliseconds (16 ms against 59 ms with every heuristic run to its abort).
 */
export const SKIP_MARGIN_LOG2 = 10;
/**
 * Up to this many variables every heuristic runs (to its abort at 2^12 past the limit): they cost a
 * few milliseconds there (a 40×40 grid: 15 → 22 ms), and min-degree is not a guide to the others.
 * On 2bitcomp_5.cnf with its variables renumbered, min-degree's largest clique is 2^41–2^43 and
 * min-fill's 2^35–2^36: skipped after min-degree, min-fill's plan was never made and the model was
 * refused in 1 ms, although the one min-fill finds is within reach of the order search.
 */
export const SKIP_MIN_VARIABLES = 2000;

/**
 * Every requested ordering with its clique sizes, in the order requested (a skipped one is
 * reported as aborted with unknown sizes). They run cheapest first; see SKIP_MARGIN_LOG2 (the
 * default of farMarginLog2).
 */
export function candidateOrders(model: OrderingGraph, names: readonly OrderingHeuristic[], limit: number, farMarginLog2 = SKIP_MARGIN_LOG2): OrderStats[] {
  if (!Array.isArray(names)) throw new ModelError(`orderings must be a list of ordering heuristics (${ORDERINGS.join(', ')}), got ${JSON.stringify(names)}`);
  if (names.length === 0) throw new ModelError('orderings: give at least one ordering heuristic');
  for (const name of names) if (!ORDERINGS.includes(name)) throw new ModelError(`unknown ordering "${name as string}"; expected one of ${ORDERINGS.join(', ')}`);
  // Stop simulating an ordering whose cliques are far past the limit (the refusal message then reports a
  // lower bound); ordinary refusals (up to 4096 times the limit) are measured exactly.
  const limitLog2 = Math.log2(limit);
  const abortLog2 = limitLog2 + 12;
  const unique = [...new Set(names)];
  const byName = new Map<string, OrderStats>();
  const failed = (name: string): OrderStats => ({ name, order: new Int32Array(0), treewidth: Infinity, maxEntries: Infinity, totalEntries: Infinity, aborted: true });
  // With one cardinality throughout, minweight orders exactly as mindegree (weight is monotone in
  // degree) and weighted min-fill as min-fill (K² × the fill): each pair is computed once.
  let uniform = true;
  for (let v = 1; v < model.n; v++) if (model.card[v] !== model.card[0]) uniform = false;
  const twin: Partial<Record<OrderingHeuristic, OrderingHeuristic>> = uniform ? { minweight: 'mindegree', weightedminfill: 'minfill' } : {};
  const farLog2 = model.n > SKIP_MIN_VARIABLES ? limitLog2 + farMarginLog2 : Infinity;
  const base = adjacency(model); // every run starts from it
  let feasible = false, greedyTried = false, bestLog2 = Infinity, tried = 0;
  // The smallest largest clique of an order run to its end: a greedy run past it and past what
  // any caller plans (PLANNED_PAST_LIMIT_LOG2) can no longer be chosen, so it stops there.
  let completedLog2 = Infinity;
  for (const name of BY_COST) {
    if (!unique.includes(name)) continue;
    const same = twin[name];
    const done = same ? byName.get(same) : undefined;
    if (done) {
      byName.set(name, { ...done, name });
      continue;
    }
    if (greedyTried && !feasible && bestLog2 >= farLog2) {
      byName.set(name, failed(name));
      continue;
    }
    let order: Int32Array | null, measured: Simulation['stats'] | null = null;
    // While the orderings tried so far do not fit, a greedy run stops once it is far past the limit
    // (its abort is at most abortLog2, so a run that ends measured every clique as simulate would).
    const abort = Math.min(tried > 0 && !feasible ? Math.min(abortLog2, farLog2) : abortLog2, Math.max(limitLog2 + PLANNED_PAST_LIMIT_LOG2, completedLog2 + 1e-9));
    if (name === 'natural') order = naturalOrder(model.n);
    else if (name === 'rcm') order = rcmOrder(model, base);
    else {
      const run = greedyOrder(model, name, abort, base);
      (order = run?.order ?? null), (measured = run?.stats ?? null);
      greedyTried = true;
    }
    const stats = order ? { name, order, ...(measured ?? simulate(model, order, false, abortLog2, base).stats) } : failed(name);
    if (!stats.aborted && stats.maxEntries <= limit) feasible = true;
    // An aborted greedy run only says a clique passed 2^abort.
    bestLog2 = Math.min(bestLog2, order ? Math.log2(stats.maxEntries) : abort);
    if (!stats.aborted) completedLog2 = Math.min(completedLog2, Math.log2(stats.maxEntries));
    byName.set(name, stats);
    tried++;
  }
  return unique.map((name) => byName.get(name)!);
}
