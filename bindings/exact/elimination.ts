// Exact elimination: the upward and downward message passes over a junction tree
// (junction-tree.ts), every number computed in WASM (assembly/exact/exact_elim.ts). Each pass is
// recorded as a program of table operations (elim-program.ts) that the engine runs in one call per
// 2^16 words, so a chain's or a thin strip's thousands of tiny cliques cost no call each.
//
// Messages (everything max-normalised, the log normalisers summed into log Z):
//   upward    λ_v(S_v) = Σ_{x_v} g_v · Π_{c child} λ_c                (a root's λ is a scalar)
//   downward  μ_c(S_c) = Σ_{C_p \ S_c} μ_p · g_p · Π_{c' ≠ c} λ_c'     (Shafer–Shenoy: no division)
//   marginal  p(x_p)  ∝ Σ_{S_c \ p} μ_c · λ_c for any child c of p  (a leaf: Σ_{C_p \ p} μ_p · g_p)
// Clique tables are never stored: with one child (the common case; a lattice in row order is a path)
// each message is one fused pass over the clique. Nodes with several children use one scratch table.
// Where a node has many children over a large clique, the downward step switches to Hugin updates
// (μ_c = Σ B_p / λ_c with 0/0 = 0) to avoid the quadratic leave-one-out products.

import type { Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { EngineError } from '../core/errors.ts';
import { exactTuning, schedule, stridesAt, STEP_LAMBDA, type JunctionTree } from './junction-tree.ts';
import { Program, CHECK_FINITE, CHECK_POSITIVE } from './elim-program.ts';
import { CompensatedSum, fmtBytes, MemoryBudgetExceeded, RangeExceeded, type ExactOutcome } from './outcome.ts';

/** What a range refusal of the junction tree (method 'elimination') tells the caller to do instead. */
const RANGE_HINT = "; method 'auto' (the default) or 'bucket' runs bucket elimination, which works in log space where the range needs it";

/** Message storage beyond this is refused up front (WASM memory is at most 4 GiB in all). */
const MAX_MESSAGE_BYTES = 3.5 * 2 ** 30;

/** What a program result is (Program's tags): a factor row's log shift, an upward λ's max, a recomputed λ's, a μ's. */
const TAG_SHIFT = 0, TAG_LAMBDA_UP = 1, TAG_LAMBDA_DOWN = 2, TAG_MU = 3;

class RangeFailure extends Error {}

/** How far below its row's largest entry a log-potential may lie and stay a normal double once linear (e^−708 is the smallest). */
const LINEAR_SPAN = 700;
/** The smallest product the linear kernels may form and keep exact: e^−708 > 2^−1022, the smallest normal double. */
const LINEAR_FLOOR = -708;
/** The smallest product that does not vanish: e^−744 > 2^−1074, the smallest subnormal double. */
const ZERO_FLOOR = -744;
/** The relative precision (bits) a message entry keeps where products went below the normal doubles: 2^−45 ≈ 3e−14. */
const KEPT_BITS = 45;
/** The smallest entry a stored message may have and keep KEPT_BITS (subnormals have an absolute precision of 2^−1075). */
const STORED_FLOOR = (KEPT_BITS - 1075) * Math.LN2;

/**
 * Why the linear tables would lose entries, or null: a pairwise table's row (per state of its owner),
 * an owner's row vector (its unary table plus its tables' row maxima), or its factor table g_v (that
 * vector times the tables' normalised rows: the spans add) spanning more than LINEAR_SPAN nats. Such
 * an entry became 0, and no message check saw it when other factors made its configuration the
 * likely one: entries of 1e−100 … 1e300 gave log10 Z 650 against 920 and a marginal of ½ against
 * 1e−70; three tables of ≤ 660 nats in one g_v, log Z 907 against 1062 — silently. Writes each
 * g_v's span bound (−log of its smallest positive entry) to gSpan: the messages' checks start from it.
 */
function linearRangeLoss(model: Model, pairs: ReturnType<Model['pairTables']>, rowOff: Int32Array, unaryRows: Float64Array, edgeStart: Int32Array, edgeList: Int32Array, gSpan: Float64Array): string | null {
  const card = model.card, tables = pairs.tables;
  // Every span is at most 2·max|entry| per table and per unary row: most models are cleared here,
  // in two flat passes, before the per-row walk (5 ms of a 10^5-variable chain's 0.29 s).
  let maxAbs = 0, maxOwned = 0;
  for (const x of tables) if (x > -Infinity && Math.abs(x) > maxAbs) maxAbs = Math.abs(x);
  for (const x of unaryRows) if (x > -Infinity && Math.abs(x) > maxAbs) maxAbs = Math.abs(x);
  for (let v = 0; v < model.n; v++) maxOwned = Math.max(maxOwned, edgeStart[v + 1] - edgeStart[v]);
  const bound = 2 * maxAbs * (1 + 2 * maxOwned);
  if (bound <= LINEAR_SPAN) {
    gSpan.fill(bound);
    return null;
  }
  // One scratch row for every variable (no array per variable: a 10^5-variable strip runs this too).
  let maxK = 1;
  for (let v = 0; v < model.n; v++) maxK = Math.max(maxK, card[v]);
  const row = new Float64Array(maxK);
  for (let v = 0; v < model.n; v++) {
    const K = card[v];
    for (let s = 0; s < K; s++) row[s] = unaryRows[rowOff[v] + s];
    // v's factor table g_v multiplies its row vector and its tables' normalised rows: their spans add.
    let rowsSpan = 0;
    for (let k = edgeStart[v]; k < edgeStart[v + 1]; k++) {
      const e = edgeList[k], a = pairs.i[e], b = pairs.j[e], t0 = pairs.start[e];
      // Owner state s's row: entries t0 + s·card[b] + y·1 (v = a) or t0 + s·1 + y·card[b] (v = b).
      const other = a === v ? card[b] : card[a], sStride = a === v ? card[b] : 1, yStride = a === v ? 1 : card[b];
      let span = 0;
      for (let s = 0; s < K; s++) {
        let max = -Infinity, min = Infinity;
        for (let y = 0, at = t0 + s * sStride; y < other; y++, at += yStride) {
          const x = tables[at];
          if (x > max) max = x;
          if (x > -Infinity && x < min) min = x;
        }
        if (max - min > LINEAR_SPAN) return `the table of (${a}, ${b}) spans ${(max - min).toFixed(0)} nats within a row, past ${LINEAR_SPAN}`;
        row[s] += max;
        if (max - min > span) span = max - min;
      }
      rowsSpan += span;
    }
    let max = -Infinity, min = Infinity;
    for (let s = 0; s < K; s++) {
      const x = row[s];
      if (x > max) max = x;
      if (x > -Infinity && x < min) min = x;
    }
    if (max - min > LINEAR_SPAN) return `variable ${v}'s states span ${(max - min).toFixed(0)} nats, past ${LINEAR_SPAN}`;
    if (max - min + rowsSpan > LINEAR_SPAN) return `variable ${v}'s factor table spans up to ${(max - min + rowsSpan).toFixed(0)} nats, past ${LINEAR_SPAN}`;
    gSpan[v] = max - min + rowsSpan;
  }
  return null;
}

/** `maxBytes`: the memory budget for the messages (exactInference's maxMemory); past it a MemoryBudgetExceeded, before anything is allocated. */
export function runElimination(engine: Engine, model: Model, tree: JunctionTree, order: Int32Array, maxBytes = Infinity): ExactOutcome {
  const n = model.n;
  const card = model.card;
  const sched = schedule(tree, order);
  const { cliqueStart: cs, cliqueVars: cv, childStart, children, parent, sepSize, cliqueSize, gStart, gVars, gSize, gHalf, gKept, hugin, edgeStart, edgeList } = tree;
  const pairs = model.pairTables(), pi = pairs.i, pj = pairs.j;
  // Each variable's unary factors summed (its row vector starts from them), variable v's at rowOff[v].
  const { start: rowOff, values: unaryRows } = model.unaryRows();
  const nChildren = (v: number): number => childStart[v + 1] - childStart[v];
  if (sched.bytes > MAX_MESSAGE_BYTES) {
    throw new EngineError(`exact elimination would need ${fmtBytes(sched.bytes)} of WASM memory for its messages, past the engine's ${fmtBytes(MAX_MESSAGE_BYTES)}`);
  }
  if (sched.bytes > maxBytes) {
    throw new MemoryBudgetExceeded(`the junction tree would need ${fmtBytes(sched.bytes)} of WASM memory for its messages, past the memory budget of ${fmtBytes(maxBytes)}`);
  }
  const gSpan = new Float64Array(n);
  const lost = linearRangeLoss(model, pairs, rowOff, unaryRows, edgeStart, edgeList, gSpan);
  if (lost) throw new RangeExceeded(`exact elimination: the potentials span more than the floating-point range of its linear tables (${lost})${RANGE_HINT}`);

  // Persistent layout: constants, descriptor, each variable's row vector (its unary table, then the log
  // row offsets of the pairwise tables it owns), the pairwise tables, the kept factor tables, marginals.
  const arena = engine.arena();
  try {
    const rowEntries = rowOff[n];
    const edgeEntries = pairs.tables.length;
    const gOff = new Float64Array(n);
    let gEntries = 0, gTemp = 0;
    for (let v = 0; v < n; v++) {
      if (!gKept[v]) continue;
      gOff[v] = gEntries;
      gEntries += gSize[v];
      gTemp = Math.max(gTemp, gHalf[v]);
    }
    const consts = arena.allocF64(2); // [1, 0]
    const rows = arena.allocF64(rowEntries);
    const edgeBase = arena.allocF64(Math.max(1, edgeEntries));
    const gBase = arena.allocF64(Math.max(1, gEntries));
    const gTempBase = arena.allocF64(Math.max(1, gTemp));
    const margBase = arena.allocF64(rowEntries);
    // Every message, scratch and g table is written (filled or mode 0) before it is read.
    const dyn = sched.regions.map((b) => arena.alloc(Math.max(16, b), false));
    // The passes are recorded as programs and run in one kernel call per exactTuning.programWords; each
    // result (a log shift, a message's max) is handled here in the order the old per-call code did.
    let acc = new CompensatedSum(); // log Z: the factors' log shifts, then the upward messages' logs
    let zero = false; // an upward message (or a factor row) vanished: Z = 0 or an underflow
    // A message's entries are sums of products of its inputs' entries. A product under 2^−1022 keeps
    // fewer digits, one under 2^−1074 vanishes, and no later check saw it when other factors made
    // that configuration the likely one (a chain of equalities with unaries of ±300 nats said log Z 0
    // against ln 2). So each message's smallest positive and largest entries are kept (their logs
    // after the scaling: *Low, *High), and a step bounds its products by its inputs':
    //  * at or above e^LINEAR_FLOOR every product, and every partial product, is a normal double: exact;
    //  * else each product is off by at most e^err (2^−1075 per partial product, times the largest
    //    entries of the inputs multiplied in after it); an entry summing N of them is still exact to
    //    2^−KEPT_BITS when it is at least N · e^err · 2^KEPT_BITS, unless entries vanished: on a model without
    //    zeros any zero entry is lost; otherwise products may not go below e^ZERO_FLOOR, where none vanishes;
    //  * else the step refuses (auto then runs bucket elimination, in log space where needed).
    // A bound, not the smallest product itself: some models that would have been exact refuse.
    // The stored entries, after the scaling, must keep KEPT_BITS too: at least e^STORED_FLOOR.
    const lamLow = new Float64Array(n), muLow = new Float64Array(n); // μ of a root is the constant 1
    const lamHigh = new Float64Array(n), muHigh = new Float64Array(n).fill(1); // their largest entries (linear: rarely read)
    const positive = !pairs.tables.includes(-Infinity) && !unaryRows.includes(-Infinity);
    let checking = true; // not in support mode (0/1 tables)
    /** A step's inputs: Σ log of their smallest entries below 1 (a partial product must not dip below the whole). */
    let inLow = 0, inV = 0, inMu = false, inSkip = -1;
    // Per node, the sum over its children's λ, once all are known (a star's centre has 10^5 children and as many μ steps).
    const kidsLow = new Float64Array(n).fill(NaN);
    /** Sets inLow for a step at v over g_v, μ_v if `withMu`, and v's children's λ but `skip`'s. */
    const stepInputs = (v: number, withMu: boolean, skip: number): void => {
      if (Number.isNaN(kidsLow[v])) {
        let lo = 0;
        for (let i = childStart[v]; i < childStart[v + 1]; i++) lo += Math.min(0, lamLow[children[i]]);
        kidsLow[v] = lo;
      }
      inLow = kidsLow[v] - gSpan[v];
      if (withMu) inLow += Math.min(0, muLow[v]);
      if (skip >= 0) inLow -= Math.min(0, lamLow[skip]);
      (inV = v), (inMu = withMu), (inSkip = skip);
    };
    /** The same step's Σ log of its inputs' largest entries above 1. */
    const inHigh = (): number => {
      let hi = inMu ? Math.max(0, Math.log(muHigh[inV])) : 0;
      for (let i = childStart[inV]; i < childStart[inV + 1]; i++) if (children[i] !== inSkip) hi += Math.max(0, Math.log(lamHigh[children[i]]));
      return hi;
    };
    const LN2 = Math.LN2;
    /**
     * What a step's products lost (see above), or null: `partials` its stages of partial products
     * (1: a single product and sum), `terms` per entry, `entry` the log of its smallest positive entry.
     */
    const lost = (partials: number, terms: number, entry: number, hasZero: boolean): string | null => {
      if (inLow >= LINEAR_FLOOR) return null;
      const product = `a product reaches e^${inLow.toFixed(0)}, below e^${LINEAR_FLOOR}`;
      if (positive ? hasZero : !(inLow >= ZERO_FLOOR)) return positive ? `${product} and an entry vanished` : `a product reaches e^${inLow.toFixed(0)}, below e^${ZERO_FLOOR}`;
      const err = -1075 * LN2 + Math.log(partials) + (partials > 1 ? inHigh() : 0);
      const floor = err + Math.log(terms) + KEPT_BITS * LN2;
      return entry >= floor ? null : `${product} and an entry of e^${entry.toFixed(0)} sums ${terms} of them, below e^${floor.toFixed(0)}`;
    };
    /** Checks a step (inputs set by stepInputs) whose scale reported (m, signed low, max); leaves its stored output's smallest entry (log) and largest. */
    let outLow = 0, outHigh = 0;
    const checked = (partials: number, terms: number, signedLow: number, max: number, m: number, entryShift: number, a: number, b: number): void => {
      const low = Math.abs(signedLow);
      outLow = Math.log(low / m);
      outHigh = max / m;
      if (!checking || (inLow >= LINEAR_FLOOR && outLow >= STORED_FLOOR)) return;
      const what = b < 0 ? `variable ${a}'s upward message` : `the message from ${a} to ${b}`;
      const why = lost(partials, terms, Math.log(low) + entryShift, signedLow < 0);
      if (why) throw new RangeFailure(`${what}: ${why}`);
      if (!(outLow >= STORED_FLOOR)) throw new RangeFailure(`${what}: scaled, an entry falls to e^${outLow.toFixed(0)}, below e^${STORED_FLOOR.toFixed(0)}`);
    };
    const ops = new Program(arena, (tag, a, b, m, low, max) => {
      if (tag === TAG_SHIFT) {
        if (m === -Infinity) return !(zero = true);
        acc.add(m);
        return true;
      }
      if (tag === TAG_MU) {
        if (!(m > 0) || m === Infinity) throw new RangeFailure(`the message from ${a} to ${b} is ${m === 0 ? 'all zero' : String(m)}`);
        // μ_b: Σ over a's clique but b's separator of μ_a · g_a · the other children's λ; Hugin: of
        // all of them, then ÷ λ_b (the sums' entries are then at least μ_b's low times λ_b's).
        const k = nChildren(a), h = hugin[a] !== 0;
        stepInputs(a, true, h ? -1 : b);
        checked(h ? k + 1 : k, cliqueSize[a] / sepSize[b], low, max, m, h ? lamLow[b] : 0, a, b);
        (muLow[b] = outLow), (muHigh[b] = outHigh);
        return true;
      }
      if (Number.isNaN(m) || m === Infinity) throw new EngineError(`exact elimination: message of variable ${a} is ${m}`);
      // λ_a: Σ over x_a of g_a · its children's λ.
      if (m > 0) {
        stepInputs(a, false, -1);
        checked(Math.max(1, nChildren(a)), card[a], low, max, m, 0, a, -1);
        (lamLow[a] = outLow), (lamHigh[a] = outHigh);
      }
      if (tag === TAG_LAMBDA_DOWN) return true;
      if (!(m > 0)) return !(zero = true);
      acc.add(Math.log(m));
      return true;
    }, exactTuning.programWords);
    // Every allocation is done: views stay valid from here on.
    arena.f64(consts, 2).set([1, 0]);

    const one = consts;
    const addr = (id: number): number => (id === -1 ? one : dyn[sched.regionOf[id]] + sched.offsets[id]);
    const rowAddr = (v: number): number => rows + rowOff[v] * 8;
    const edgeAddr = (ek: number): number => edgeBase + pairs.start[ek] * 8;
    // A message may stay unnormalised while the products its consumer forms of up to `k` messages
    // (each max in [2^-bits, 2^bits]; factor tables are ≤ 1) stay within 2^±256: bits = 256 / k. A
    // node's downward step multiplies its μ and its children's λ, so k is 1 + its children for both.
    const slack = (k: number): number => Math.floor(256 / Math.max(1, k));
    /** The edge v owns to u, if any (a node owns few edges: a scan). */
    const edgeTo = (v: number, u: number): number => {
      for (let k = edgeStart[v]; k < edgeStart[v + 1]; k++) {
        const e = edgeList[k];
        if ((pi[e] === v ? pj[e] : pi[e]) === u) return e;
      }
      return -1;
    };

    // Loop-nest scratch for the λ and μ steps (a clique's lengths, strides of its separator, its factor
    // table, one child's separator; zeros; 1 on digit 0 only: a marginal's out strides).
    const cap = Math.max(1, tree.maxClique);
    const lensS = new Float64Array(cap), sepS = new Float64Array(cap), gS = new Float64Array(cap), childS = new Float64Array(cap);
    const zeros = new Float64Array(cap), firstDigit = new Float64Array(cap);
    firstDigit[0] = 1;
    /** The lengths of the variables vars[a … b). */
    const lensOf = (vars: Int32Array, a: number, b: number): Float64Array => {
      for (let d = a; d < b; d++) lensS[d - a] = card[vars[d]];
      return lensS;
    };
    // Strides inside v's clique: of its separator, of its factor table, of child c's separator; of
    // the whole clique (a scratch table over it).
    // Every stride list is a Float64Array of scratch (the ops copy them into the program at once):
    // fresh plain arrays beside typed ones made each store here a megamorphic one, 80 ms of a
    // 160 000-variable strip's 1.3 s. A downward step holds one per child at a time (childScratch).
    const wholeS = new Float64Array(cap), childPool: Float64Array[] = [];
    const childScratch = (i: number): Float64Array => (childPool[i] ??= new Float64Array(cap));
    const sepIn = (s: Float64Array, v: number) => stridesAt(s, cv, cs[v], cs[v + 1] - cs[v], cv, cs[v] + 1, cs[v + 1] - cs[v] - 1, card);
    const gIn = (s: Float64Array, v: number) => stridesAt(s, cv, cs[v], cs[v + 1] - cs[v], gVars, gStart[v], gStart[v + 1] - gStart[v], card);
    const childIn = (s: Float64Array, v: number, c: number) => stridesAt(s, cv, cs[v], cs[v + 1] - cs[v], cv, cs[c] + 1, cs[c + 1] - cs[c] - 1, card);
    const wholeIn = (v: number): Float64Array => stridesAt(wholeS, cv, cs[v], cs[v + 1] - cs[v], cv, cs[v], cs[v + 1] - cs[v], card);

    // g_v over its scope, built one dimension at a time (each step appends the next-latest variable as the
    // slowest digit and multiplies in v's pairwise table with it), alternating between P and Q so the last
    // step lands in P. Costs about two passes over the final table.
    // Step t's loop nest is over D[0..t]: lengths and out strides are prefixes of gLens and gSo, A (the
    // table so far) has gSo's strides but none along digit t, B (v's edge to D[t]) moves along 0 and t.
    const gLens = new Float64Array(cap), gSo = new Float64Array(cap), gSa = new Float64Array(cap), gSb = new Float64Array(cap);
    const buildG = (v: number, P: number, Q: number): void => {
      const g0 = gStart[v];
      const d = gStart[v + 1] - g0;
      let stride = 1;
      for (let t = 0; t < d; t++) {
        gLens[t] = card[gVars[g0 + t]];
        gSo[t] = gSa[t] = stride;
        gSb[t] = 0;
        stride *= card[gVars[g0 + t]];
      }
      if (d === 1) {
        ops.table(0, gLens, gSo, P, gSa, rowAddr(v), gSb, one, 1);
        return;
      }
      let prev = rowAddr(v);
      for (let t = 1; t < d; t++) {
        const out = (d - 1 - t) % 2 === 0 ? P : Q;
        gSa[t] = 0;
        const ek = edgeTo(v, gVars[g0 + t]);
        if (ek < 0) ops.table(0, gLens, gSo, out, gSa, prev, gSb, one, t + 1);
        else {
          gSb[0] = pi[ek] === v ? card[pj[ek]] : 1;
          gSb[t] = pi[ek] === v ? 1 : card[pj[ek]];
          ops.table(0, gLens, gSo, out, gSa, prev, gSb, edgeAddr(ek), t + 1);
          gSb[0] = gSb[t] = 0;
        }
        gSa[t] = gSo[t];
        prev = out;
      }
    };

    // Input conversion (once; again in support mode). Pairwise tables become linear, normalised per row
    // of their owner; each owner's row vector collects its unary table and the row offsets, and is then
    // exponentiated with its max shifted out into log Z (results TAG_SHIFT; −∞: Z = 0 exactly).
    const buildFactors = (support: boolean): void => {
      arena.f64(rows, rowEntries).set(unaryRows);
      arena.f64(edgeBase, edgeEntries).set(pairs.tables);
      for (let v = 0; v < n; v++) {
        for (let k = edgeStart[v]; k < edgeStart[v + 1]; k++) {
          const ek = edgeList[k], a = pi[ek], b = pj[ek];
          if (support) ops.support(edgeAddr(ek), card[a] * card[b]);
          else if (a === v) ops.rowNormalise(edgeAddr(ek), card[a], card[b], card[b], 1, rowAddr(v));
          else ops.rowNormalise(edgeAddr(ek), card[b], 1, card[a], card[b], rowAddr(v));
        }
      }
      for (let v = 0; v < n; v++) {
        if (support) ops.support(rowAddr(v), card[v]);
        else ops.expShift(rowAddr(v), card[v], TAG_SHIFT, v, 0);
      }
      for (let v = 0; v < n; v++) if (gKept[v]) buildG(v, gBase + gOff[v] * 8, gTempBase);
    };
    const gOf = (v: number, g0: number, g1: number): number => {
      if (gKept[v]) return gBase + gOff[v] * 8;
      buildG(v, addr(g0), addr(g1));
      return addr(g0);
    };
    const steps = sched.steps, ids = steps.ids;

    // Step t, a λ step; its normaliser is a result tagged `tag` (TAG_LAMBDA_UP: log Z gains its log).
    // Its children's λ buffers are ids[steps.listStart[t] …].
    const lambdaStep = (t: number, tag: number): void => {
      const v = steps.node[t], kids = steps.listStart[t];
      const dims = cs[v + 1] - cs[v];
      const lens = lensOf(cv, cs[v], cs[v + 1]);
      const out = addr(steps.buf[t]);
      const so = sepIn(sepS, v);
      const gs = gIn(gS, v);
      const g = gOf(v, steps.g0[t], steps.g1[t]);
      const c0 = childStart[v], m = nChildren(v);
      if (m === 0) ops.reduce(sepSize[v], lens, so, out, gs, g, zeros, one, dims);
      else if (m === 1) ops.reduce(sepSize[v], lens, so, out, childIn(childS, v, children[c0]), addr(ids[kids]), gs, g, dims);
      else {
        const X = addr(steps.scratch[t]);
        const sx = wholeIn(v);
        ops.table(0, lens, sx, X, childIn(childS, v, children[c0]), addr(ids[kids]), gs, g, dims);
        for (let i = 1; i < m - 1; i++) ops.table(0, lens, sx, X, sx, X, childIn(childS, v, children[c0 + i]), addr(ids[kids + i]), dims);
        const last = m - 1;
        ops.reduce(sepSize[v], lens, so, out, sx, X, childIn(childS, v, children[c0 + last]), addr(ids[kids + last]), dims);
      }
      const check = tag === TAG_LAMBDA_UP ? CHECK_POSITIVE : CHECK_FINITE;
      ops.scale(out, sepSize[v], parent[v] >= 0 ? slack(1 + nChildren(parent[v])) : 0, true, check, tag, v, 0);
    };

    // μ_c's max-normalisation, with the max its reduce knew (useKnown) or read again.
    const normaliseMu = (p: number, c: number, ptr: number, len: number, useKnown: boolean): void => {
      ops.scale(ptr, len, slack(1 + nChildren(c)), useKnown, CHECK_POSITIVE, TAG_MU, p, c);
    };

    const sepStrs: Float64Array[] = [];
    // Step t, a downward step from p: ids[steps.listStart[t] …] are its children's λ buffers, then their μ buffers.
    const downStep = (t: number): void => {
      const p = steps.node[t], m = nChildren(p), lam = steps.listStart[t], mu = lam + m;
      const dims = cs[p + 1] - cs[p];
      const lens = lensOf(cv, cs[p], cs[p + 1]);
      const gs = gIn(gS, p);
      const g = gOf(p, steps.g0[t], steps.g1[t]);
      const muPtr = addr(steps.buf[t]);
      const sMu = sepIn(sepS, p); // all zero for a root (μ is the constant 1)
      const margPtr = margBase + rowOff[p] * 8;
      if (m === 0) {
        ops.table(1, lens, firstDigit, margPtr, sMu, muPtr, gs, g, dims);
        return;
      }
      const c0 = childStart[p];
      const sepStr = sepStrs;
      for (let i = 0; i < m; i++) sepStr[i] = childIn(childScratch(i), p, children[c0 + i]);
      if (hugin[p]) {
        // B = μ_p g_p Π λ_c; μ_c = (Σ_{C_p \ S_c} B) / λ_c; marginal from B.
        const X = addr(steps.scratch[t]);
        const sx = wholeIn(p);
        ops.table(0, lens, sx, X, sMu, muPtr, gs, g, dims);
        for (let i = 0; i < m; i++) ops.table(0, lens, sx, X, sx, X, sepStr[i], addr(ids[lam + i]), dims);
        for (let i = 0; i < m; i++) {
          const c = children[c0 + i], mp = addr(ids[mu + i]);
          ops.reduce(sepSize[c], lens, sepStr[i], mp, sx, X, zeros, one, dims);
          ops.divide(mp, addr(ids[lam + i]), sepSize[c]);
          normaliseMu(p, c, mp, sepSize[c], false);
        }
        ops.table(1, lens, firstDigit, margPtr, sx, X, zeros, one, dims);
        return;
      }
      for (let i = 0; i < m; i++) {
        const c = children[c0 + i], mp = addr(ids[mu + i]);
        if (m === 1) ops.reduce(sepSize[c], lens, sepStr[i], mp, sMu, muPtr, gs, g, dims);
        else {
          // Leave-one-out product in the scratch table, then marginalise with the last factor fused.
          const X = addr(steps.scratch[t]);
          const sx = wholeIn(p);
          const others: number[] = [];
          for (let j = 0; j < m; j++) if (j !== i) others.push(j);
          ops.table(0, lens, sx, X, sMu, muPtr, gs, g, dims);
          for (let q = 0; q < others.length - 1; q++) ops.table(0, lens, sx, X, sx, X, sepStr[others[q]], addr(ids[lam + others[q]]), dims);
          const last = others[others.length - 1];
          ops.reduce(sepSize[c], lens, sepStr[i], mp, sx, X, sepStr[last], addr(ids[lam + last]), dims);
        }
        normaliseMu(p, c, mp, sepSize[c], true);
      }
      // Marginal of p from the first child's separator: Σ μ_c λ_c, p is digit 0 of S_c.
      const c = children[c0], e0 = cs[c] + 1, en = cs[c + 1] - e0;
      const sE = stridesAt(sepS, cv, e0, en, cv, e0, en, card);
      ops.table(1, lensOf(cv, e0, e0 + en), firstDigit, margPtr, sE, addr(ids[mu]), sE, addr(ids[lam]), en);
    };

    // Upward pass (log Z), with a support check when a message vanishes.
    const upward = (support: boolean): number => {
      ops.reset();
      acc = new CompensatedSum();
      zero = false;
      checking = !support;
      kidsLow.fill(NaN);
      buildFactors(support);
      for (let t = 0; t < sched.upwardSteps && !ops.stopped; t++) lambdaStep(t, TAG_LAMBDA_UP);
      ops.flush();
      return zero ? -Infinity : acc.value;
    };
    const rangeRefusal = (e: unknown): unknown => (e instanceof RangeFailure ? new RangeExceeded(`exact elimination: the potentials span more than the floating-point range (${e.message})${RANGE_HINT}`) : e);
    let logZ: number;
    try {
      logZ = upward(false);
    } catch (e) {
      throw rangeRefusal(e);
    }
    if (logZ === -Infinity) {
      // Exactly zero, or a message underflowed? Count supported configurations instead.
      if (upward(true) !== -Infinity) {
        throw new RangeExceeded(`exact elimination: the potentials span more than the floating-point range (a message underflowed to zero)${RANGE_HINT}`);
      }
      return { logZ: -Infinity, marginals: null };
    }
    logZ += model.logConst;

    ops.fill0(margBase, rowEntries);
    try {
      for (let t = sched.upwardSteps; t < steps.count; t++) {
        if (steps.op[t] === STEP_LAMBDA) lambdaStep(t, TAG_LAMBDA_DOWN);
        else downStep(t);
      }
      ops.flush();
    } catch (e) {
      throw rangeRefusal(e);
    }
    // One copy out of the engine; each marginal a view of it (a buffer per variable made a
    // million-variable result weigh 230 MB).
    const mv = arena.readF64(margBase, rowEntries);
    const marginals = Array.from(card, (K, v) => {
      const p = mv.subarray(rowOff[v], rowOff[v] + K);
      // The products: a leaf's μ·g, a Hugin node's B (μ·g·Π λ), else its first child's μ·λ.
      const c = children[childStart[v]], m = nChildren(v);
      if (m === 0 || hugin[v]) stepInputs(v, true, -1);
      else inLow = Math.min(0, muLow[c]) + Math.min(0, lamLow[c]);
      let s = 0;
      for (const x of p) s += x;
      if (!(inLow >= LINEAR_FLOOR)) {
        let low = Infinity, hasZero = false;
        for (const x of p) {
          if (x > 0 && x < low) low = x;
          if (x === 0) hasZero = true;
        }
        const why = lost(hugin[v] ? m + 1 : 1, (m === 0 || hugin[v] ? cliqueSize[v] : sepSize[c]) / K, Math.log(low), hasZero);
        if (why) throw rangeRefusal(new RangeFailure(`variable ${v}'s marginal: ${why}`));
      }
      if (!(s > 0) || !Number.isFinite(s)) {
        throw new RangeExceeded(`exact elimination: the marginal of variable ${v} sums to ${s} (the potentials span more than the floating-point range)${RANGE_HINT}`);
      }
      for (let i = 0; i < K; i++) p[i] /= s;
      return p;
    });
    return { logZ, marginals };
  } finally {
    arena.dispose();
  }
}
