// Orders, symbolically. The cost of an elimination order on adjacency bitsets (bindings/exact/
// order-search.ts: the order annealing's evaluations and orderCost): each variable's neighbours
// gain its other neighbours, one OR of W u64 words per neighbour; work is counted in the budget's
// unit (bitset words of 32 bits and per-neighbour bookkeeping), so a budget buys the same
// evaluations on every machine. And bucket elimination's separators for an order (bucketPlan).

import { Buf } from './exact_greedy';
import { sortBy } from './exact_graph';

/** The per-neighbour bookkeeping of an elimination step, in bitset words of the same time. */
const NEIGHBOUR_WORDS: f64 = 4;

/**
 * Eliminates the variables in order (i32[n] at `order`) on a copy of the adjacency bitsets (u64[n ·
 * W] at adj, copied to scratch), stopping once the objective log2 Σ_v |C_v| + penalty · (log2
 * largest message − bound)⁺ passes stopAt. logK: f64[n], log2 of each cardinality. out (f64[6]) =
 * [log2 flops, log2 largest message, treewidth, objective, complete (1/0), work], work in 32-bit
 * words (words32 per set).
 */
export function orderCostRun(adj: usize, scratch: usize, W: i32, words32: i32, n: i32, order: usize, logK: usize, maxLog2Message: f64, penalty: f64, stopAt: f64, out: usize): void {
  const setBytes = <usize>W << 3;
  memory.copy(scratch, adj, <usize>n * setBytes);
  let flops: f64 = 0, maxMsg: f64 = 0, objective: f64 = -Infinity, work: f64 = 0;
  let tw = 0, complete = 1;
  for (let t = 0; t < n; t++) {
    const v = load<i32>(order + (<usize>t << 2));
    const rv = scratch + <usize>v * setBytes;
    let msg: f64 = 0;
    let d = 0;
    for (let w = 0; w < W; w++) {
      let bits = load<u64>(rv + (<usize>w << 3));
      while (bits != 0) {
        const u = (w << 6) + <i32>ctz<u64>(bits);
        bits &= bits - 1;
        msg += load<f64>(logK + (<usize>u << 3));
        d++;
        // u gains v's other neighbours and loses v.
        const ru = scratch + <usize>u * setBytes;
        for (let q: usize = 0; q < setBytes; q += 8) store<u64>(ru + q, load<u64>(ru + q) | load<u64>(rv + q));
        const pu = ru + (<usize>(u >>> 6) << 3), pv = ru + (<usize>(v >>> 6) << 3);
        store<u64>(pu, load<u64>(pu) & ~(<u64>1 << <u64>(u & 63)));
        store<u64>(pv, load<u64>(pv) & ~(<u64>1 << <u64>(v & 63)));
      }
    }
    work += <f64>(d + 1) * (<f64>words32 + NEIGHBOUR_WORDS);
    flops += exp2Exact(msg + load<f64>(logK + (<usize>v << 3)));
    if (msg > maxMsg) maxMsg = msg;
    if (d > tw) tw = d;
    // The objective only when it could pass stopAt: log2 flops < e + 1 for flops = m · 2^e, so
    // with that bound in its place the sum (rounded the same way, monotone) is at least it.
    const excess = penalty * max(0, maxMsg - maxLog2Message);
    if (<f64>(<i32>(reinterpret<u64>(flops) >>> 52) - 1022) + excess <= stopAt) continue;
    objective = Math.log2(flops) + excess;
    if (objective > stopAt) {
      complete = 0;
      break;
    }
  }
  // A run that ended within stopAt: its objective after the last step, as that step would have it.
  if (complete && n > 0) objective = Math.log2(flops) + penalty * max(0, maxMsg - maxLog2Message);
  store<f64>(out, Math.log2(flops));
  store<f64>(out, maxMsg, 8);
  store<f64>(out, <f64>tw, 16);
  store<f64>(out, objective, 24);
  store<f64>(out, <f64>complete, 32);
  store<f64>(out, work, 40);
}

/**
 * 2^x as Math.exp2 gives it: built from its bits when x is a whole number in the normal range (a
 * clique's log2 size with cardinalities that are powers of two; exp2 is exact there, see
 * assembly/__tests__/exact-search.spec.ts), else Math.exp2.
 */
@inline function exp2Exact(x: f64): f64 {
  return x == Math.floor(x) && x >= -1022 && x <= 1023 ? reinterpret<f64>(<u64>(<i64>x + 1023) << 52) : Math.exp2(x);
}

// Bucket elimination's separators for an order (bindings/exact/bucket-elimination.ts, bucketPlan),
// kept in module buffers the caller reads right after the call (plannedSeparators).
let sepVars = new Buf<i32>(1024);
let sepOff = new Buf<i32>(16);
let sepLen = new Buf<i32>(16);
let sepSize = new Buf<f64>(16);
let kids = new Buf<f64>(16);
let markB = new Buf<i32>(16);
let atB = new Buf<i32>(16);
let flagB = new Buf<u8>(16);
let headF = new Buf<i32>(16);
let nextF = new Buf<i32>(16);
let headC = new Buf<i32>(16);
let tailC = new Buf<i32>(16);
let nextC = new Buf<i32>(16);

/**
 * The separator of each variable eliminated in `elim` (i32[m]; pos: i32[n], each variable's
 * position, −1 when fixed): the variables, by position, of the tables in its bucket — the factors
 * whose first free variable it is (bucketOf), its children's separators — less itself. Fixed variables
 * (fixed[v] ≥ 0) are left out. Writes parent (i32[n], −1: a root) and stats (f64[5]) = [treewidth,
 * largest separator's entries, Σ entries, Σ entries × K_v, peak entries: every upward message,
 * then the downward ones as bucketPlan counts them]; returns Σ |separators|: the separators are
 * then at plannedSeparators(), variable v's at its offset plannedSeparatorOffsets()[v] (i32),
 * |sep| at plannedSeparatorLengths()[v]. With keep = 0 only the sizes are wanted (a refusal): a
 * separator's room is reused once its parent has read it, so memory follows the live messages,
 * not all of them, and the separators are not left for the caller. With keep = 0 the pass also
 * stops once Σ entries × K_v passes stopPast: stats are then lower bounds (stats[5] = 1; else 0) —
 * a 1000×1000 lattice's refusal spent 10 s here on separators of 1000 variables.
 */
export function bucketSeparators(n: i32, F: i32, scopeStart: usize, scopeVars: usize, bucketOf: usize, fixed: usize, card: usize, elim: usize, m: i32, pos: usize, parent: usize, stats: usize, keep: i32, stopPast: f64): i32 {
  sepOff.reserve(n);
  sepLen.reserve(n);
  sepSize.reserve(n);
  kids.reserve(n);
  markB.reserve(n);
  atB.reserve(n);
  flagB.reserve(n + 1);
  headF.reserve(n);
  nextF.reserve(F);
  headC.reserve(n);
  tailC.reserve(n);
  nextC.reserve(n);
  for (let v = 0; v < n; v++) {
    headF.set(v, -1);
    headC.set(v, -1);
    tailC.set(v, -1);
    markB.set(v, -1);
    sepLen.set(v, 0);
    sepOff.set(v, 0);
    kids.set(v, 0);
    store<i32>(parent + (<usize>v << 2), -1);
  }
  for (let p = 0; p <= n; p++) flagB.set(p, 0);
  // Factors by their first free variable (bucketOf: i32[F], −1 for a constant factor).
  for (let f = F - 1; f >= 0; f--) {
    const first = load<i32>(bucketOf + (<usize>f << 2));
    if (first < 0) continue;
    nextF.set(f, headF.get(first));
    headF.set(first, f);
  }
  let total = 0, tw = 0, sum = 0, liveSep = 0;
  let maxMessage: f64 = 1, messageEntries: f64 = 0, upFlops: f64 = 0, cutShort = 0;
  for (let t = 0; t < m; t++) {
    if (keep == 0 && upFlops > stopPast) {
      cutShort = 1;
      break;
    }
    const v = load<i32>(elim + (<usize>t << 2));
    if (keep == 0 && total > 2 * liveSep + COMPACT_SLACK) {
      total = compact(elim, t, pos, parent);
      liveSep = total;
    }
    const c = gatherSeparator(v, total, n, scopeStart, scopeVars, fixed, pos, elim, card);
    const first = c > 0 ? sepVars.get(total) : -1;
    sepOff.set(v, total);
    sepLen.set(v, c);
    total += c;
    sum += c;
    if (keep == 0) {
      // v's children have been read: their room is free (after the next compaction).
      liveSep += c;
      for (let ch = headC.get(v); ch >= 0; ch = nextC.get(ch)) liveSep -= sepLen.get(ch);
    }
    const size = separatorEntries;
    sepSize.set(v, size);
    tw = max(tw, c);
    maxMessage = max(maxMessage, size);
    messageEntries += size;
    upFlops += size * <f64>load<i32>(card + (<usize>v << 2));
    if (c > 0) {
      // The parent: the separator's variable eliminated first.
      const p = first;
      store<i32>(parent + (<usize>v << 2), p);
      // Appended in elimination order: the order bucketPlan lists a bucket's children in.
      nextC.set(v, -1);
      if (tailC.get(p) < 0) headC.set(p, v);
      else nextC.set(tailC.get(p), v);
      tailC.set(p, v);
      kids.set(p, kids.get(p) + size);
    }
  }
  // Peak memory: every upward message, then downward δ_c allocated when c's parent is processed,
  // δ_v and the children's upward messages freed once v is.
  let live = messageEntries, peak = live;
  for (let t = m - 1; t >= 0; t--) {
    const v = load<i32>(elim + (<usize>t << 2));
    const k = kids.get(v);
    live += k;
    peak = max(peak, live);
    live -= k + (load<i32>(parent + (<usize>v << 2)) >= 0 ? sepSize.get(v) : 0);
  }
  store<f64>(stats, <f64>tw);
  store<f64>(stats, maxMessage, 8);
  store<f64>(stats, messageEntries, 16);
  store<f64>(stats, upFlops, 24);
  store<f64>(stats, peak, 32);
  store<f64>(stats, <f64>cutShort, 40);
  return sum;
}

/** The entries of the separator gatherSeparator wrote last. */
let separatorEntries: f64 = 1;

/**
 * Variable v's separator, written by position at sepVars[total …] (room reserved here); returns
 * its length, its entries in separatorEntries. A function of its own, not part of
 * bucketSeparators' loop, so that it runs optimised after its first calls: V8 compiles WASM first
 * with its baseline compiler and swaps in optimised code only between calls (there is no
 * on-stack replacement), and bucketSeparators is one long call.
 */
function gatherSeparator(v: i32, total: i32, n: i32, scopeStart: usize, scopeVars: usize, fixed: usize, pos: usize, elim: usize, card: usize): i32 {
  const only = headC.get(v);
  if (only >= 0 && nextC.get(only) < 0) {
    const c = mergeOneChild(v, only, total, scopeStart, scopeVars, fixed, pos, elim, card);
    if (c >= 0) return c;
  }
  let c = 0, lo = n, hi = -1;
  markB.set(v, v);
  // The bucket's factors, then its children's separators (a set: the order does not matter).
  for (let f = headF.get(v); f >= 0; f = nextF.get(f)) {
    const k1 = load<i32>(scopeStart + (<usize>(f + 1) << 2));
    for (let k = load<i32>(scopeStart + (<usize>f << 2)); k < k1; k++) {
      const u = load<i32>(scopeVars + (<usize>k << 2));
      if (load<i32>(fixed + (<usize>u << 2)) >= 0 || markB.get(u) == v) continue;
      markB.set(u, v);
      const p = load<i32>(pos + (<usize>u << 2));
      atB.set(c++, p);
      if (p < lo) lo = p;
      if (p > hi) hi = p;
    }
  }
  for (let ch = headC.get(v); ch >= 0; ch = nextC.get(ch)) {
    const o = sepOff.get(ch), l = sepLen.get(ch);
    for (let k = 0; k < l; k++) {
      const u = sepVars.get(o + k);
      if (markB.get(u) == v) continue;
      markB.set(u, v);
      const p = load<i32>(pos + (<usize>u << 2));
      atB.set(c++, p);
      if (p < lo) lo = p;
      if (p > hi) hi = p;
    }
  }
  // By position: a flag scan over their range when it is short (banded orders), else a sort.
  sepVars.reserve(total + c);
  const s = sepVars.ptr + (<usize>total << 2);
  if (c > 1 && hi - lo < 8 * c) {
    for (let k = 0; k < c; k++) flagB.set(atB.get(k) - lo, 1);
    let k = 0;
    for (let p = lo; p <= hi; p++) {
      if (flagB.get(p - lo) == 0) continue;
      flagB.set(p - lo, 0);
      store<i32>(s + (<usize>k << 2), load<i32>(elim + (<usize>p << 2)));
      k++;
    }
  } else {
    sortBy(atB.ptr, c, 0);
    for (let k = 0; k < c; k++) store<i32>(s + (<usize>k << 2), load<i32>(elim + (<usize>atB.get(k) << 2)));
  }
  let size: f64 = 1;
  for (let k = 0; k < c; k++) size *= <f64>load<i32>(card + (<usize>load<i32>(s + (<usize>k << 2)) << 2));
  separatorEntries = size;
  return c;
}

/** Most factor-scope entries a bucket may have for mergeOneChild (past it, gatherSeparator's general path). */
const MERGE_MAX_NEW = 16;

/**
 * gatherSeparator for a bucket with one child (chains, strips, banded orders: most buckets): the
 * child's separator less its first variable — v itself — is already in position order, and the
 * bucket's factor variables it lacks (a few) are merged in; the same separator as the general
 * path, in O(|sep|) without marks or a range scan. Returns −1, having changed nothing, when the
 * bucket's factors have more than MERGE_MAX_NEW scope entries.
 */
function mergeOneChild(v: i32, child: i32, total: i32, scopeStart: usize, scopeVars: usize, fixed: usize, pos: usize, elim: usize, card: usize): i32 {
  let entries = 0;
  for (let f = headF.get(v); f >= 0; f = nextF.get(f)) entries += load<i32>(scopeStart + (<usize>(f + 1) << 2)) - load<i32>(scopeStart + (<usize>f << 2));
  if (entries > MERGE_MAX_NEW) return -1;
  const o = sepOff.get(child), l = sepLen.get(child);
  // The factor variables not in the child's separator (binary search by position), each once,
  // their positions sorted into atB.
  let k = 0;
  for (let f = headF.get(v); f >= 0; f = nextF.get(f)) {
    const k1 = load<i32>(scopeStart + (<usize>(f + 1) << 2));
    for (let q = load<i32>(scopeStart + (<usize>f << 2)); q < k1; q++) {
      const u = load<i32>(scopeVars + (<usize>q << 2));
      if (u == v || load<i32>(fixed + (<usize>u << 2)) >= 0) continue;
      const p = load<i32>(pos + (<usize>u << 2));
      let a = 1, b = l;
      while (a < b) {
        const mid = (a + b) >>> 1;
        if (load<i32>(pos + (<usize>sepVars.get(o + mid) << 2)) < p) a = mid + 1;
        else b = mid;
      }
      if (a < l && sepVars.get(o + a) == u) continue;
      let j = k;
      while (j > 0 && atB.get(j - 1) > p) j--;
      if (j > 0 && atB.get(j - 1) == p) continue; // taken from another factor already
      for (let r = k; r > j; r--) atB.set(r, atB.get(r - 1));
      atB.set(j, p);
      k++;
    }
  }
  const c = l - 1 + k;
  sepVars.reserve(total + c);
  const from = sepVars.ptr + (<usize>o << 2), s = sepVars.ptr + (<usize>total << 2);
  let i = 1, j = 0, at = 0;
  let size: f64 = 1;
  while (i < l || j < k) {
    let u: i32;
    if (j >= k || (i < l && load<i32>(pos + (<usize>load<i32>(from + (<usize>i << 2)) << 2)) < atB.get(j))) u = load<i32>(from + (<usize>(i++) << 2));
    else u = load<i32>(elim + (<usize>atB.get(j++) << 2));
    store<i32>(s + (<usize>(at++) << 2), u);
    size *= <f64>load<i32>(card + (<usize>u << 2));
  }
  separatorEntries = size;
  return c;
}

/** Entries of dead separators bucketSeparators tolerates (beyond the live ones) before compacting. */
const COMPACT_SLACK = 1 << 18;

/**
 * Moves the separators still to be read (those of elim[0 … t) whose parent comes at t or later)
 * to the front of sepVars, in order; returns the entries they take.
 */
function compact(elim: usize, t: i32, pos: usize, parent: usize): i32 {
  let to = 0;
  for (let q = 0; q < t; q++) {
    const u = load<i32>(elim + (<usize>q << 2)), p = load<i32>(parent + (<usize>u << 2));
    if (p < 0 || load<i32>(pos + (<usize>p << 2)) < t) continue;
    const l = sepLen.get(u), from = sepOff.get(u);
    if (from != to) memory.copy(sepVars.ptr + (<usize>to << 2), sepVars.ptr + (<usize>from << 2), <usize>l << 2);
    sepOff.set(u, to);
    to += l;
  }
  return to;
}

export function plannedSeparators(): usize {
  return sepVars.ptr;
}
export function plannedSeparatorOffsets(): usize {
  return sepOff.ptr;
}
export function plannedSeparatorLengths(): usize {
  return sepLen.ptr;
}
