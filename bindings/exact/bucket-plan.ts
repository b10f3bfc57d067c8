// The plan of bucket elimination (bucket-elimination.ts runs it), from the model's structure alone:
//  * variables whose unary factors (evidence) allow one state are held fixed: they are folded into
//    the factor copies and never become a clique digit; a variable allowing none makes Z = 0;
//  * each factor goes to the bucket of its free variable eliminated first; eliminating v streams
//    the clique C_v = {v} ∪ S_v over the bucket's tables into the message m_v on S_v (the union of
//    the bucket's scopes minus v), which goes to the bucket of S_v's first-eliminated variable (its
//    parent; a bucket with S_v = ∅ is a root and m_v is a scalar: log Z is their sum).
// The separators are found in the engine (assembly/exact/exact_order.ts); the plan's sizes and costs
// name what a run needs, and its refusal what the best order would need.

import { plannerEngine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import type { OrderingGraph } from './orderings.ts';
import { fmtBytes, fmtEntries } from './outcome.ts';

/** A table the kernel reads: a factor (its copy, fixed variables folded in) or a message. */
export interface TableRef {
  kind: 'factor' | 'up' | 'down';
  /** Factor index, or the variable whose message it is. */
  id: number;
}

export interface BucketPlan {
  /** Fixed state per variable, −1 where free. */
  fixed: Int32Array;
  impossible: number;
  order: Int32Array;
  /** Per variable (free): S_v sorted by elimination position; parent (−1: root). */
  readonly sep: Int32Array[];
  parent: Int32Array;
  /** Tables in each free variable's bucket. */
  readonly bucket: TableRef[][];
  /** Factors whose every variable is fixed. */
  constantFactors: number[];
  treewidth: number;
  /** Entries of the largest message (≥ 1). */
  maxMessage: number;
  /** Σ_v |S_v|: entries of all upward messages (the downward ones are as many). */
  messageEntries: number;
  /** Clique configurations streamed: upward, downward and marginals. */
  flops: number;
  /**
   * The sizes pass stopped once the upward configurations passed bucketPlan's stopPast: treewidth,
   * maxMessage, messageEntries, flops and bytes are lower bounds (enough for a refusal).
   */
  cutShort?: boolean;
  upFlops: number;
  /** WASM bytes the run allocates. */
  bytes: number;
}

/**
 * The interaction graph of the free variables (any arity: every pair sharing a factor). Its pairs
 * are listed on first use: callers that only need n and card (a refusal whose orders came from the
 * model itself) never pay for them.
 */
export function interactionGraph(model: Model, fixed: Int32Array): OrderingGraph {
  const card = model.card.slice();
  for (let v = 0; v < card.length; v++) if (fixed[v] >= 0) card[v] = 1;
  let pairs: { i: Int32Array; j: Int32Array } | null = null;
  return { n: model.n, card, pairwiseFactors: () => (pairs ??= interactionPairs(model, fixed)) };
}

function interactionPairs(model: Model, fixed: Int32Array): { i: Int32Array; j: Int32Array } {
  // Scopes read in place (strictly increasing, so each pair comes out (smaller, larger)); two
  // passes, counting then filling, so no array per factor.
  const { scopeStart, scopeVars } = model;
  const buf = new Int32Array(Math.max(1, model.maxArity)); // one factor's free variables
  let pairs = 0;
  for (let f = 0; f < model.nFactors; f++) {
    let m = 0;
    for (let k = scopeStart[f]; k < scopeStart[f + 1]; k++) if (fixed[scopeVars[k]] < 0) m++;
    pairs += (m * (m - 1)) / 2;
  }
  const i = new Int32Array(pairs), j = new Int32Array(pairs);
  let at = 0;
  for (let f = 0; f < model.nFactors; f++) {
    const k0 = scopeStart[f], k1 = scopeStart[f + 1];
    let m = 0;
    for (let k = k0; k < k1; k++) if (fixed[scopeVars[k]] < 0) buf[m++] = scopeVars[k];
    for (let a = 0; a < m; a++) {
      for (let b = a + 1; b < m; b++) {
        i[at] = Math.min(buf[a], buf[b]);
        j[at++] = Math.max(buf[a], buf[b]);
      }
    }
  }
  return { i, j };
}

/**
 * The buckets, messages and costs of eliminating in `order` (variables fixed in `fixed` are
 * skipped). The separators are found in the engine (assembly/exact/exact_order.ts,
 * bucketSeparators) on the planner's instance; each is a view into one array.
 */
export function bucketPlan(model: Model, order: Int32Array, fixed: Int32Array, impossible = -1, stopPast = Infinity): BucketPlan {
  const n = model.n;
  const pos = new Int32Array(n).fill(-1);
  let t = 0;
  const elim = new Int32Array(n);
  for (let q = 0; q < order.length; q++) {
    const v = order[q];
    if (fixed[v] < 0 && pos[v] < 0) (pos[v] = t), (elim[t++] = v);
  }
  for (let v = 0; v < n; v++) if (fixed[v] < 0 && pos[v] < 0) (pos[v] = t), (elim[t++] = v);
  const m = t;
  // Each factor's bucket: its free variable eliminated first (−1: a constant factor); and the
  // entries of all factor tables (the run copies them).
  const { scopeStart, scopeVars, card } = model, F = model.nFactors;
  const bucketOf = new Int32Array(F), constantFactors: number[] = [];
  let factorEntries = 0;
  for (let f = 0; f < F; f++) {
    let first = -1, size = 1;
    for (let k = scopeStart[f]; k < scopeStart[f + 1]; k++) {
      const v = scopeVars[k];
      size *= card[v];
      if (fixed[v] < 0 && (first < 0 || pos[v] < pos[first])) first = v;
    }
    bucketOf[f] = first;
    if (first < 0) constantFactors.push(f);
    factorEntries += size;
  }
  const parent = new Int32Array(n);
  /** The kernel's pass: the sizes (and parent) always; the separators (all, by offset and length) when kept. */
  const separatorPass = (keep: boolean): { stats: Float64Array; all: Int32Array; off: Int32Array; len: Int32Array } => {
    const engine = plannerEngine(), arena = engine.arena();
    try {
      const pScopeStart = arena.allocI32(scopeStart), pScopeVars = arena.allocI32(scopeVars.length > 0 ? scopeVars : [0]);
      const pBucketOf = arena.allocI32(model.nFactors > 0 ? bucketOf : [0]);
      const pFixed = arena.allocI32(fixed.length > 0 ? fixed : [0]), pCard = arena.allocI32(model.card.length > 0 ? model.card : [0]);
      const pElim = arena.allocI32(m > 0 ? elim.subarray(0, m) : [0]), pPos = arena.allocI32(n > 0 ? pos : [0]);
      const pParent = arena.alloc(4 * Math.max(1, n), false), pStats = arena.alloc(48, false);
      const total = engine.call('bucket plan', (k) => k.bucketSeparators(n, model.nFactors, pScopeStart, pScopeVars, pBucketOf, pFixed, pCard, pElim, m, pPos, pParent, pStats, keep ? 1 : 0, keep ? Infinity : stopPast));
      const k = engine.kernels;
      parent.set(arena.i32(pParent, n));
      const none = new Int32Array(0);
      return {
        stats: arena.f64(pStats, 6).slice(),
        all: keep ? arena.i32(k.plannedSeparators(), total).slice() : none,
        off: keep ? arena.i32(k.plannedSeparatorOffsets(), n).slice() : none,
        len: keep ? arena.i32(k.plannedSeparatorLengths(), n).slice() : none,
      };
    } finally {
      arena.dispose();
    }
  };
  const { stats } = separatorPass(false);
  // The buckets (factors in factor order, then the children's messages in elimination order) and
  // the separators are built on first use, the separators by a second pass of the kernel that keeps
  // them: a refusal reads only the sizes, and the first pass's memory follows the live messages.
  let bucket: TableRef[][] | null = null, sep: Int32Array[] | null = null;
  const buckets = (): TableRef[][] => {
    const b: TableRef[][] = Array.from({ length: n }, () => []);
    for (let f = 0; f < model.nFactors; f++) if (bucketOf[f] >= 0) b[bucketOf[f]].push({ kind: 'factor', id: f });
    for (let q = 0; q < m; q++) if (parent[elim[q]] >= 0) b[parent[elim[q]]].push({ kind: 'up', id: elim[q] });
    return b;
  };
  const separators = (): Int32Array[] => {
    const { all, off, len } = separatorPass(true);
    const out: Int32Array[] = new Array(n).fill(new Int32Array(0));
    for (let q = 0; q < m; q++) out[elim[q]] = all.subarray(off[elim[q]], off[elim[q]] + len[elim[q]]);
    return out;
  };
  const [treewidth, maxMessage, messageEntries, upFlops, peak, cutShort] = stats;
  // Downward: each clique is streamed once more (in log space, where linear products would not be
  // exact, once per child and once for the marginal: flops counts the linear case).
  const flops = 2 * upFlops;
  const bytes = 8 * (peak + factorEntries) + 16 * (2 * n + 1) + 96 * n + 1024;
  const plan: BucketPlan = {
    fixed, impossible, order: elim.slice(0, m), parent, constantFactors, treewidth, maxMessage, messageEntries, flops, upFlops, bytes, cutShort: cutShort === 1,
    get sep() {
      return (sep ??= separators());
    },
    get bucket() {
      return (bucket ??= buckets());
    },
  };
  plannedFor.set(plan, model);
  return plan;
}

/** The model each plan was made for (bucketPlan; withFixedStates keeps it): its buckets name that model's factors by index. */
const plannedFor = new WeakMap<BucketPlan, Model>();

/** The model a plan was made for (undefined for a plan not made by bucketPlan). */
export function plannedModel(p: BucketPlan): Model | undefined {
  return plannedFor.get(p);
}

export function sizeOf(vars: ArrayLike<number>, card: Int32Array): number {
  let s = 1;
  for (let k = 0; k < vars.length; k++) s *= card[vars[k]];
  return s;
}

/**
 * The refusal naming what the best order would need, and what limits it: the work in all slices,
 * since larger messages and memory are sliced.
 */
export function bucketRefusal(p: BucketPlan, maxMessage: number, maxFlops: number, name: string): string {
  const limits = `the limit is ${fmtEntries(maxFlops)} configurations streamed in all slices (plans past ${fmtEntries(maxMessage)} entries per message or past the memory budget are sliced)`;
  // Past the doubles' range (a 40×40×40 lattice, treewidth 1220) the sizes are not numbers: said so, not "Infinity TB, NaN bytes".
  if (!(Number.isFinite(p.maxMessage) && Number.isFinite(p.bytes))) {
    return `exact elimination (best order: ${name}) needs treewidth ${p.treewidth}: a largest message, WASM memory and clique configurations past 2^1024, more than a double counts; ${limits}`;
  }
  // A plan sized only until it was far past the limit: what it needs at least.
  const least = p.cutShort ? 'at least ' : '';
  return (
    `exact elimination (best order: ${name}) needs treewidth ${least}${p.treewidth}, a largest message of ${least}${fmtEntries(p.maxMessage)} entries ` +
    `(${fmtBytes(8 * p.maxMessage)}), ${least}${fmtBytes(p.bytes)} of WASM memory and ${least}${fmtEntries(p.flops)} clique configurations streamed; ${limits}`
  );
}

/** Whether two plans have one shape: the same order and the same free variables (the fixed states' values may differ). */
export function sameShape(a: BucketPlan, b: BucketPlan): boolean {
  if (a === b) return true;
  if (a.order !== b.order || a.fixed.length !== b.fixed.length) return false;
  for (let v = 0; v < a.fixed.length; v++) if (a.fixed[v] < 0 !== b.fixed[v] < 0) return false;
  return true;
}

/**
 * The plan with the same free variables fixed to other states (a slice: bucketPlan reads only which
 * variables are fixed, so the order, separators and costs are the same): its shape is `p`'s.
 */
export function withFixedStates(p: BucketPlan, fixed: Int32Array): BucketPlan {
  const q: BucketPlan = {
    fixed, impossible: p.impossible, order: p.order, parent: p.parent, constantFactors: p.constantFactors, treewidth: p.treewidth, maxMessage: p.maxMessage,
    messageEntries: p.messageEntries, flops: p.flops, upFlops: p.upFlops, bytes: p.bytes,
    get sep() {
      return p.sep;
    },
    get bucket() {
      return p.bucket;
    },
  };
  if (!sameShape(p, q)) throw new Error('withFixedStates: other variables are fixed');
  const m = plannedFor.get(p);
  if (m) plannedFor.set(q, m);
  return q;
}
