// Factors that couple nothing: a table that is a sum of one term per variable of its scope (a zero
// coupling, a constant, evidence-like products of unary supports) is the product of unary factors.
// Exact inference plans on the interaction graph, so such a factor made its scope a clique for
// nothing: a 100×120 grid whose horizontal couplings were all zero (120 independent chains) was
// refused as a grid of treewidth 100. exactModel splits them before anything is planned.
import { ModelError } from '../core/errors.ts';
import { Model, pairsKnownToCouple } from '../core/model.ts';
import { withSumInRange } from '../core/model-range.ts';
import { GrowF64, GrowI32 } from '../core/flat-storage.ts';

/**
 * How far in nats an entry may lie from its unary decomposition c + Σ_v u_v(x_v) and still count as
 * separable: the split model's log-potential moves by at most this much per split factor in any
 * configuration (so log Z and every marginal by at most that many times 1.5·10⁻¹¹, relatively). An
 * absolute bound: one relative to the entries dropped a 0.02-nat coupling beside big-M penalties
 * of 10¹². Tables read from decimals (log 0.06 against log 0.3 + log 0.2) still split.
 */
export const SEPARABLE_ABS_TOL = 2 ** -36;
/** The rounding of a double, relative (half an ulp of the magnitude summed, twice over). */
const ROUNDING = 2 ** -52;

/** Scratch of the check (module state; grown as needed): u rows back to back, and per scope position its stride, x0's digit, the odometer's digit and the row's offset. */
let rowsScratch = new Float64Array(64);
let posScratch = new Int32Array(4 * 8);

/**
 * Whether factor f (arity ≥ 2) is separable, θ_f(x) = c + Σ_v u_v(x_v) within SEPARABLE_ABS_TOL for
 * every x: c the entry at the first configuration of positive potential x0, u_v(a) = θ_f(x0 with
 * x_v = a) − c (−∞ for states outside the support). A table with zeros is separable only when its
 * support is a product of per-variable sets, which the check of every entry enforces. The sums are
 * formed in doubles: an entry counts as matched within half the tolerance, and only where the
 * magnitudes summed are small enough that their rounding (≤ (k + 2) · 2^−52 of them) stays within the
 * other half — larger tables are kept as they are (a lost split, never a lost coupling). Returns c
 * and the rows in the shared scratch (read them before the next call; unaryDecomposition copies
 * them); a factor that couples allocates nothing past the scratch's growth.
 */
function separable(model: Model, f: number): { c: number; rows: Float64Array; rowStart: Int32Array } | null {
  const { scopeStart, scopeVars, card } = model;
  const s0 = scopeStart[f];
  if (scopeStart[f + 1] - s0 === 2) {
    const K1 = card[scopeVars[s0]], K2 = card[scopeVars[s0 + 1]];
    const pair = K1 === 2 && K2 === 2 ? binaryPair(model.tables, model.tableStart[f]) : pairTable(model.tables, model.tableStart[f], K1, K2);
    if (pair !== undefined) return pair;
  }
  return separableByEntries(model, f);
}

/** The general test for factor couples, without the 2 × 2 shortcut: tests hold the shortcut to its decisions. */
export function couplesByEntries(model: Model, f: number): boolean {
  return separableByEntries(model, f) === null;
}

/** `separable` for any table, entry by entry (the odometer over its configurations). */
function separableByEntries(model: Model, f: number): { c: number; rows: Float64Array; rowStart: Int32Array } | null {
  const { scopeStart, scopeVars, card, tableStart, tables: t } = model;
  const s0 = scopeStart[f], k = scopeStart[f + 1] - s0;
  if (k < 2) return null;
  let size = 1, rowsLen = 0;
  for (let p = 0; p < k; p++) (size *= card[scopeVars[s0 + p]]), (rowsLen += card[scopeVars[s0 + p]]);
  const t0 = tableStart[f];
  let x0 = t0;
  while (x0 < t0 + size && t[x0] === -Infinity) x0++;
  if (x0 === t0 + size) return null;
  if (rowsScratch.length < rowsLen) rowsScratch = new Float64Array(2 * rowsLen);
  if (posScratch.length < 4 * k) posScratch = new Int32Array(8 * k);
  const rows = rowsScratch, pos = posScratch, c = t[x0];
  // pos: [stride, x0's digit, odometer digit, row offset] per scope position (the last variable fastest).
  for (let p = k - 1, st = 1; p >= 0; p--) {
    const K = card[scopeVars[s0 + p]];
    pos[4 * p] = st;
    pos[4 * p + 1] = Math.floor((x0 - t0) / st) % K;
    pos[4 * p + 2] = 0;
    st *= K;
  }
  for (let p = 0, off = 0; p < k; p++) {
    const K = card[scopeVars[s0 + p]], st = pos[4 * p], d = pos[4 * p + 1];
    pos[4 * p + 3] = off;
    for (let a = 0; a < K; a++) rows[off + a] = t[x0 + (a - d) * st] - c;
    off += K;
  }
  const half = SEPARABLE_ABS_TOL / 2, roundingLimit = half / ((k + 2) * ROUNDING);
  for (let e = t0; e < t0 + size; e++) {
    let pred = c, scale = Math.abs(c);
    for (let p = 0; p < k; p++) {
      const u = rows[pos[4 * p + 3] + pos[4 * p + 2]];
      pred += u;
      scale += Math.abs(u);
    }
    const entry = t[e];
    if (pred === -Infinity || entry === -Infinity) {
      if (pred !== entry) return null;
    } else if (!(Number.isFinite(pred) && scale + Math.abs(entry) <= roundingLimit && Math.abs(entry - pred) <= half)) return null;
    for (let p = k - 1; p >= 0 && ++pos[4 * p + 2] === card[scopeVars[s0 + p]]; p--) pos[4 * p + 2] = 0;
  }
  const rowStart = new Int32Array(k + 1);
  for (let p = 0; p < k; p++) rowStart[p + 1] = rowStart[p] + card[scopeVars[s0 + p]];
  return { c, rows, rowStart };
}

const PAIR_ROW_START = Int32Array.of(0, 2, 4);
const PAIR_HALF = SEPARABLE_ABS_TOL / 2, PAIR_LIMIT = PAIR_HALF / (4 * ROUNDING);

/**
 * `separable` on a K1 × K2 table at t[o …] without a zero (pair factors of Potts and multi-state
 * models): the same sums in the same order, so the same decision, without the odometer (3 × 3 bonds of
 * a 10⁶-site lattice took 0.17 s through it); undefined for a table with a zero (the general way).
 * 2 × 2 tables keep binaryPair, without loops: through this function 2·10⁶ of them took 0.07 s
 * against 0.04 s, in the renumbered lattice's refusal (the grid bound asks binaryPairSplits).
 */
function pairTable(t: Float64Array, o: number, K1: number, K2: number): { c: number; rows: Float64Array; rowStart: Int32Array } | null | undefined {
  const c = t[o], absC = Math.abs(c);
  if (c === -Infinity) return undefined;
  if (rowsScratch.length < K1 + K2) rowsScratch = new Float64Array(2 * (K1 + K2));
  const rows = rowsScratch;
  // x0 is the first entry: u0[a] = θ(a, 0) − c, u1[b] = θ(0, b) − c. Entry (a, b)'s prediction reads
  // (a, 0) and (0, b), both visited before it: a zero is met before any prediction it enters, and
  // up to there both ways decide alike.
  for (let a = 0; a < K1; a++) rows[a] = t[o + a * K2] - c;
  for (let b = 0; b < K2; b++) rows[K1 + b] = t[o + b] - c;
  for (let a = 0, e = o; a < K1; a++) {
    const p0 = c + rows[a], s0 = absC + Math.abs(rows[a]);
    for (let b = 0; b < K2; b++, e++) {
      const x = t[e];
      if (x === -Infinity) return undefined;
      if (!pairEntryOk(x, p0 + rows[K1 + b], s0 + Math.abs(rows[K1 + b]))) return null;
    }
  }
  return { c, rows, rowStart: Int32Array.of(0, K1, K1 + K2) };
}

/** `separable`'s test of one entry of a two-variable table (k = 2: its rounding limit). */
function pairEntryOk(entry: number, pred: number, scale: number): boolean {
  return Number.isFinite(pred) && scale + Math.abs(entry) <= PAIR_LIMIT && Math.abs(entry - pred) <= PAIR_HALF;
}

/**
 * `separable` on a 2 × 2 table at t[o … o + 3] (most factors of a spin lattice): the same sums in
 * the same order, so the same decision, without its loops; undefined for a table with a zero (the general way).
 */
function binaryPair(t: Float64Array, o: number): { c: number; rows: Float64Array; rowStart: Int32Array } | null | undefined {
  const split = binaryPairSplits(t, o);
  if (split !== true) return split === false ? null : undefined;
  const a = t[o], rows = rowsScratch;
  (rows[0] = 0), (rows[1] = t[o + 2] - a), (rows[2] = 0), (rows[3] = t[o + 1] - a);
  return { c: a, rows, rowStart: PAIR_ROW_START };
}

/** binaryPair's decision alone: whether the 2 × 2 table at t[o … o + 3] is separable (undefined: it has a zero). */
export function binaryPairSplits(t: Float64Array, o: number): boolean | undefined {
  const a = t[o], b = t[o + 1], c = t[o + 2], d = t[o + 3];
  if (a === -Infinity || b === -Infinity || c === -Infinity || d === -Infinity) return undefined;
  const u0 = c - a, u1 = b - a;
  // Entries (0, 0), (0, 1), (1, 0), (1, 1): pred = (a + u0[x0]) + u1[x1], scale = |a| + |u0[x0]| + |u1[x1]|.
  return pairEntryOk(a, a + 0 + 0, Math.abs(a)) && pairEntryOk(b, a + 0 + u1, Math.abs(a) + Math.abs(u1)) && pairEntryOk(c, a + u0 + 0, Math.abs(a) + Math.abs(u0)) && pairEntryOk(d, a + u0 + u1, Math.abs(a) + Math.abs(u0) + Math.abs(u1));
}

/**
 * Factor f's unary decomposition θ_f(x) = c + Σ_v u_v(x_v) when it is separable (null otherwise;
 * see `separable` for the test and SEPARABLE_ABS_TOL for how close): u[p] is the row of the scope's
 * p-th variable. Factors of arity < 2 and tables of zeros only (Z = 0, reported elsewhere) are not split.
 */
export function unaryDecomposition(model: Model, f: number): { c: number; u: Float64Array[] } | null {
  const d = separable(model, f);
  if (!d) return null;
  return { c: d.c, u: Array.from({ length: d.rowStart.length - 1 }, (_, p) => d.rows.slice(d.rowStart[p], d.rowStart[p + 1])) };
}

/**
 * True when factor f (of arity 2 or more) is not separable: it couples its variables. The grid
 * bound asks it of each bond (2·10⁶ on a 1000 × 1000 lattice); it decides as exactModel does.
 */
export function factorCouples(model: Model, f: number): boolean {
  return separable(model, f) === null;
}

/**
 * True when exactModel splits factor f (arity ≥ 2) and its table has a zero: its unary terms then
 * forbid states, and may fix variables. Tables without a zero are not tested.
 */
export function splitsToZero(model: Model, f: number): boolean {
  const t0 = model.tableStart[f], t1 = t0 + model.tableSize(f);
  let zero = false;
  for (let e = t0; e < t1 && !zero; e++) zero = model.tables[e] === -Infinity;
  return zero && model.arity(f) >= 2 && separable(model, f) !== null;
}

/** exactModel's answer per model (the split model maps to itself). */
const splitCache = new WeakMap<Model, Model>();

/**
 * The model exact inference plans and runs on: `model` itself when no factor of arity ≥ 2 is
 * separable (unaryDecomposition), else a model of the same distribution whose separable factors are
 * replaced by their unary terms (each u_v that is not all zero a unary factor; their constants in
 * logConst) — the other factors and their tables kept as they are, and the lattice layout too (the
 * grid bound checks every bond again). Cached per model: plans cached per model object stay valid.
 */
export function exactModel(model: Model): Model {
  let m = splitCache.get(model);
  if (!m) {
    m = splitSeparable(model);
    splitCache.set(model, m);
    splitCache.set(m, m);
  }
  return m;
}

function splitSeparable(model: Model): Model {
  const F = model.nFactors;
  const { scopeStart, scopeVars, tableStart, tables, card } = model;
  // The lattice builders' pairs are known to couple (pairsKnownToCouple): a model of those alone is
  // returned without a pass over its factors.
  const known = pairsKnownToCouple(model);
  if (known && model.maxArity <= 2) return model;
  const gone = new Uint8Array(F);
  let logConst = model.logConst, splits = 0;
  // The unary rows kept (their variables and entries), in flat growing arrays: an object and a
  // typed array per row took ≈ 480 B each (10⁶ arity-3 factors, half separable: +478 MiB of heap).
  const rowVar = new GrowI32(), rowEntries = new GrowF64();
  for (let f = 0; f < F; f++) {
    const k = scopeStart[f + 1] - scopeStart[f];
    if (k < 2 || (k === 2 && known)) continue;
    const d = separable(model, f);
    if (!d) continue;
    (gone[f] = 1), splits++;
    logConst += d.c;
    for (let p = 0; p < k; p++) {
      const r0 = d.rowStart[p], r1 = d.rowStart[p + 1];
      // A row of zeros is no factor at all.
      let zero = true;
      for (let a = r0; a < r1 && zero; a++) zero = d.rows[a] === 0;
      if (zero) continue;
      rowVar.push(scopeVars[scopeStart[f] + p]);
      const at = rowEntries.reserve(r1 - r0);
      rowEntries.a.set(d.rows.subarray(r0, r1), at);
    }
  }
  if (splits === 0) return model;
  const kept = F - splits, E = rowVar.length;
  let keptVars = 0;
  for (let f = 0; f < F; f++) if (!gone[f]) keptVars += model.arity(f);
  const start = new Int32Array(kept + E + 1), vars = new Int32Array(keptVars + E), offsets = new Int32Array(kept + E);
  const all = new Float64Array(tables.length + rowEntries.length);
  all.set(tables);
  all.set(rowEntries.a.subarray(0, rowEntries.length), tables.length);
  let g = 0, at = 0;
  for (let f = 0; f < F; f++) {
    if (gone[f]) continue;
    for (let p = scopeStart[f]; p < scopeStart[f + 1]; p++) vars[at++] = scopeVars[p];
    offsets[g] = tableStart[f];
    start[++g] = at;
  }
  for (let r = 0, t = tables.length; r < E; r++) {
    const v = rowVar.a[r];
    vars[at++] = v;
    offsets[g] = t;
    t += card[v];
    start[++g] = at;
  }
  try {
    return withSumInRange(new Model({ card, scopeStart: start, scopeVars: vars, tableStart: offsets, tables: all, logConst, lattice: model.lattice }));
  } catch (e) {
    // Terms of a split past the double range where the table was not: planned as it is.
    if (e instanceof ModelError) return model;
    throw e;
  }
}
