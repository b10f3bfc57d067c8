// Local search on elimination orders: simulated annealing from a greedy order, minimising the
// configurations bucket elimination streams subject to a bound on the largest message (Kjærulff
// 1992's annealing of elimination orders; the cost is OMEinsum's/TensorInference's time complexity
// with a space penalty).
//
// An order is evaluated by eliminating on adjacency bitsets in the engine (n/64 u64 words per
// variable), stopping as soon as its cost passes the Metropolis threshold drawn before the
// evaluation, so most rejected moves cost a fraction of a full elimination. The search's work is
// counted in bitset words touched, a deterministic measure: the same graph, start, seed and budget
// give the same order on any machine and at any load, so results never depend on timing.

import type { OrderingGraph } from './orderings.ts';
import { mulberry32 } from '../core/seed.ts';
import { plannerEngine } from '../core/engine.ts';

export interface OrderCost {
  /** log2 of Σ_v |C_v| (clique configurations of one upward pass). */
  log2Flops: number;
  /** log2 of the largest message |S_v| (= |C_v| / K_v). */
  log2Message: number;
  treewidth: number;
}

/** The searches' objective: log2 flops plus `penalty` per bit of message past `bound` (log2 entries). */
export const searchObjective =
  (bound: number, penalty: number) =>
  (c: OrderCost): number =>
    c.log2Flops + penalty * Math.max(0, c.log2Message - bound);

export interface AnnealOptions {
  /** Largest message allowed (log2 entries): each bit past it costs `penalty` in the objective. */
  maxLog2Message: number;
  /** Bitset words the search may touch (its deterministic work budget). */
  work: number;
  seed?: number;
  /** Objective units (log2 flops) per log2 of message past the bound. Default 4. */
  penalty?: number;
}

export interface AnnealResult extends OrderCost {
  order: Int32Array;
  /** Orders evaluated (in full or stopped early). */
  evaluations: number;
  /** Bitset words touched. */
  work: number;
}

/** Adjacency bitsets of a graph in the planner engine, eliminated there on a copy (assembly/exact/exact_order.ts). dispose() frees them. */
class BitGraph {
  /** 32-bit words per set: the work unit's (whole u64 words in the engine). */
  readonly words: number;
  private readonly W64: number;
  private readonly engine = plannerEngine();
  private readonly arena = this.engine.arena();
  private readonly pAdj: number;
  private readonly pScratch: number;
  private readonly pLogK: number;
  private readonly pOrder: number;
  private readonly pOut: number;

  constructor(readonly g: OrderingGraph) {
    const n = g.n, arena = this.arena;
    this.words = (n + 31) >>> 5;
    this.W64 = (n + 63) >>> 6;
    const W = 2 * this.W64;
    this.pAdj = arena.alloc(4 * n * W);
    const adj = arena.u32(this.pAdj, n * W);
    const { i, j } = g.pairwiseFactors();
    for (let k = 0; k < i.length; k++) {
      const a = i[k], b = j[k];
      if (a === b) continue;
      adj[a * W + (b >>> 5)] |= 1 << (b & 31);
      adj[b * W + (a >>> 5)] |= 1 << (a & 31);
    }
    this.pScratch = arena.alloc(4 * n * W, false);
    const logK = new Float64Array(n);
    for (let v = 0; v < n; v++) logK[v] = Math.log2(g.card[v]);
    this.pLogK = arena.allocF64(logK);
    this.pOrder = arena.alloc(4 * n, false);
    this.pOut = arena.alloc(48, false);
  }

  /**
   * Eliminates in `order`; stops (returning the cost so far, `complete` false) once the objective
   * passes `stopAt`. `used.work` grows by the words touched: each neighbour its W words and
   * NEIGHBOUR_WORDS (4) of bit scanning and bookkeeping, most of the time on small graphs.
   */
  cost(order: Int32Array, maxLog2Message: number, penalty: number, stopAt: number, used: { work: number }): OrderCost & { objective: number; complete: boolean } {
    const arena = this.arena, n = this.g.n;
    arena.i32(this.pOrder, n).set(order.length === n ? order : completeOrder(order, n));
    this.engine.call('order cost', (k) => k.orderCostRun(this.pAdj, this.pScratch, this.W64, this.words, n, this.pOrder, this.pLogK, maxLog2Message, penalty, stopAt, this.pOut));
    const [log2Flops, log2Message, treewidth, objective, complete, work] = arena.f64(this.pOut, 6);
    used.work += work;
    return { log2Flops, log2Message, treewidth, objective, complete: complete === 1 };
  }

  dispose(): void {
    this.arena.dispose();
  }
}

/** `order` followed by the variables it lacks (fixed ones: they have no edges), each once. */
export function completeOrder(order: ArrayLike<number>, n: number): Int32Array {
  const seen = new Uint8Array(n), full = new Int32Array(n);
  let at = 0;
  for (let k = 0; k < order.length; k++) if (!seen[order[k]]) (seen[order[k]] = 1), (full[at++] = order[k]);
  for (let v = 0; v < n; v++) if (!seen[v]) full[at++] = v;
  return full;
}

/** The cost of one order (a full evaluation; variables it lacks are eliminated last). */
export function orderCost(g: OrderingGraph, order: Int32Array): OrderCost {
  const bits = new BitGraph(g);
  try {
    const c = bits.cost(order, Infinity, 0, Infinity, { work: 0 });
    return { log2Flops: c.log2Flops, log2Message: c.log2Message, treewidth: c.treewidth };
  } finally {
    bits.dispose();
  }
}

/**
 * Simulated annealing over elimination orders from `start`: moves one variable to another position
 * (at a distance drawn log-uniformly) or swaps two; Metropolis acceptance on the objective
 * log2 flops + penalty · (log2 largest message − bound)⁺, temperature falling geometrically from 1
 * to 0.02 (in log2 units) over the work budget. Returns the best order seen (never worse than
 * `start` by the objective).
 */
export function annealOrder(g: OrderingGraph, start: Int32Array, opts: AnnealOptions): AnnealResult {
  const bits = new BitGraph(g);
  try {
    return anneal(bits, g, start, opts);
  } finally {
    bits.dispose();
  }
}

function anneal(bits: BitGraph, g: OrderingGraph, start: Int32Array, opts: AnnealOptions): AnnealResult {
  const n = g.n, penalty = opts.penalty ?? 4, bound = opts.maxLog2Message;
  const used = { work: 0 };
  const cur = completeOrder(start, n);
  const first = bits.cost(cur, bound, penalty, Infinity, used);
  let curObj = first.objective;
  let best = { order: Int32Array.from(cur), ...first };
  let evaluations = 1;
  if (n < 3 || opts.work <= 0) return { order: best.order, log2Flops: best.log2Flops, log2Message: best.log2Message, treewidth: best.treewidth, evaluations, work: used.work };
  const rand = mulberry32(opts.seed ?? 0x5a11);
  const budget = opts.work;
  const T0 = 1, T1 = 0.02;
  const next = new Int32Array(n);
  while (used.work < budget) {
    const T = T0 * (T1 / T0) ** Math.min(1, used.work / budget);
    next.set(cur);
    const i = Math.floor(rand() * n);
    const dist = Math.max(1, Math.floor(2 ** (rand() * Math.log2(n))));
    const j = Math.min(n - 1, Math.max(0, i + (rand() < 0.5 ? -dist : dist)));
    if (i === j) continue;
    if (rand() < 0.5) {
      const x = next[i];
      next[i] = next[j];
      next[j] = x;
    } else if (i < j) {
      const x = next[i];
      next.copyWithin(i, i + 1, j + 1);
      next[j] = x;
    } else {
      const x = next[i];
      next.copyWithin(j + 1, j, i);
      next[j] = x;
    }
    // Accept when objective ≤ cur + T·ln(1/u)/ln 2: the threshold is known before evaluating.
    const stopAt = curObj - (T * Math.log(1 - rand())) / Math.LN2;
    const c = bits.cost(next, bound, penalty, stopAt, used);
    evaluations++;
    if (!c.complete) continue;
    cur.set(next);
    curObj = c.objective;
    if (c.objective < best.objective) best = { order: Int32Array.from(cur), ...c };
  }
  return { order: best.order, log2Flops: best.log2Flops, log2Message: best.log2Message, treewidth: best.treewidth, evaluations, work: used.work };
}
