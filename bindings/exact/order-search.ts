// Local search on elimination orders (pure TypeScript): simulated annealing from a greedy order,
// minimising the configurations bucket elimination streams subject to a bound on the largest
// message (Kjærulff 1992's annealing of elimination orders; the cost is OMEinsum's/TensorInference's
// time complexity with a space penalty).
//
// An order is evaluated by eliminating on adjacency bitsets (n/32 words per variable), stopping as
// soon as its cost passes the Metropolis threshold drawn before the evaluation, so most rejected
// moves cost a fraction of a full elimination. The search's work is counted in bitset words
// touched, a deterministic measure: the same graph, start, seed and budget give the same order on
// any machine and at any load, so results never depend on timing.

import type { OrderingGraph } from './orderings.ts';
import { mulberry32 } from '../core/seed.ts';

export interface OrderCost {
  /** log2 of Σ_v |C_v| (clique configurations of one upward pass). */
  log2Flops: number;
  /** log2 of the largest message |S_v| (= |C_v| / K_v). */
  log2Message: number;
  treewidth: number;
}

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

/** Adjacency bitsets of a graph, eliminated in place on a copy. */
class BitGraph {
  readonly words: number;
  readonly adj: Uint32Array;
  private readonly scratch: Uint32Array;
  readonly logK: Float64Array;

  constructor(readonly g: OrderingGraph) {
    const n = g.n;
    this.words = (n + 31) >>> 5;
    this.adj = new Uint32Array(n * this.words);
    this.scratch = new Uint32Array(n * this.words);
    this.logK = Float64Array.from(g.card, (k) => Math.log2(k));
    const { i, j } = g.pairwiseFactors();
    for (let k = 0; k < i.length; k++) {
      const a = i[k], b = j[k];
      if (a === b) continue;
      this.adj[a * this.words + (b >>> 5)] |= 1 << (b & 31);
      this.adj[b * this.words + (a >>> 5)] |= 1 << (a & 31);
    }
  }

  /**
   * Eliminates in `order`; stops (returning the cost so far, `complete` false) once the objective
   * passes `stopAt`. `used.work` grows by the words touched.
   */
  cost(order: Int32Array, maxLog2Message: number, penalty: number, stopAt: number, used: { work: number }): OrderCost & { objective: number; complete: boolean } {
    const n = this.g.n, W = this.words, a = this.scratch, logK = this.logK;
    a.set(this.adj);
    let flops = 0, maxMsg = 0, tw = 0, work = 0;
    let objective = -Infinity;
    let complete = true;
    for (let t = 0; t < n; t++) {
      const v = order[t], rv = v * W;
      let msg = 0, d = 0;
      for (let w = 0; w < W; w++) {
        let bits = a[rv + w];
        while (bits !== 0) {
          const low = bits & -bits;
          const u = (w << 5) + 31 - Math.clz32(low);
          bits ^= low;
          msg += logK[u];
          d++;
          // u gains v's other neighbours and loses v.
          const ru = u * W;
          for (let q = 0; q < W; q++) a[ru + q] |= a[rv + q];
          a[ru + (u >>> 5)] &= ~(1 << (u & 31));
          a[ru + (v >>> 5)] &= ~(1 << (v & 31));
        }
      }
      // Each neighbour costs its W words and about as much again as NEIGHBOUR_WORDS words in bit
      // scanning and bookkeeping: on small graphs (W = 1 or 2) that is most of the time.
      work += (d + 1) * (W + NEIGHBOUR_WORDS);
      flops += 2 ** (msg + logK[v]);
      if (msg > maxMsg) maxMsg = msg;
      if (d > tw) tw = d;
      objective = Math.log2(flops) + penalty * Math.max(0, maxMsg - maxLog2Message);
      if (objective > stopAt) {
        complete = false;
        break;
      }
    }
    used.work += work;
    return { log2Flops: Math.log2(flops), log2Message: maxMsg, treewidth: tw, objective, complete };
  }
}

/** The per-neighbour bookkeeping of an elimination step, in bitset words of the same time. */
const NEIGHBOUR_WORDS = 4;

/** The cost of one order (a full evaluation). */
export function orderCost(g: OrderingGraph, order: Int32Array): OrderCost {
  const c = new BitGraph(g).cost(order, Infinity, 0, Infinity, { work: 0 });
  return { log2Flops: c.log2Flops, log2Message: c.log2Message, treewidth: c.treewidth };
}

/**
 * Simulated annealing over elimination orders from `start`: moves one variable to another position
 * (at a distance drawn log-uniformly) or swaps two; Metropolis acceptance on the objective
 * log2 flops + penalty · (log2 largest message − bound)⁺, temperature falling geometrically from 1
 * to 0.02 (in log2 units) over the work budget. Returns the best order seen (never worse than
 * `start` by the objective).
 */
export function annealOrder(g: OrderingGraph, start: Int32Array, opts: AnnealOptions): AnnealResult {
  const n = g.n, penalty = opts.penalty ?? 4, bound = opts.maxLog2Message;
  const bits = new BitGraph(g);
  const used = { work: 0 };
  // Variables missing from `start` (fixed ones) go last: they have no edges.
  const cur = new Int32Array(n);
  const seen = new Uint8Array(n);
  let at = 0;
  for (const v of start) if (!seen[v]) (seen[v] = 1, (cur[at++] = v));
  for (let v = 0; v < n; v++) if (!seen[v]) cur[at++] = v;
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
