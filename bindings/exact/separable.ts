// Factors that couple nothing: a table that is a sum of one term per variable of its scope (a zero
// coupling, a constant, evidence-like products of unary supports) is the product of unary factors.
// Exact inference plans on the interaction graph, so such a factor made its scope a clique for
// nothing: a 100×120 grid whose horizontal couplings were all zero (120 independent chains) was
// refused as a grid of treewidth 100. exactModel splits them before anything is planned.
import { ModelError } from '../core/errors.ts';
import { Model, pairsKnownToCouple } from '../core/model.ts';
import { withSumInRange } from '../core/model-range.ts';

/**
 * How far (relative to the magnitudes summed) an entry may lie from its unary decomposition and still
 * count as separable: a few dozen ulps, so tables read from decimals (log 0.06 against log 0.3 +
 * log 0.2) split, while the model's distribution moves by at most 2^−46 of an entry's magnitude per
 * split factor — far below the kernels' own rounding of log Z.
 */
export const SEPARABLE_REL_TOL = 2 ** -46;

/**
 * Factor f's unary decomposition θ_f(x) = c + Σ_v u_v(x_v), when it has one (null otherwise):
 * `c` the entry at the first configuration of positive potential x0, u_v(a) = θ_f(x0 with x_v = a) − c
 * (−∞ for states outside the support). A table with zeros decomposes only when its support is a
 * product of per-variable sets, which the check of every entry against c + Σ u_v enforces.
 * Factors of arity < 2 and tables of zeros only (Z = 0, reported elsewhere) are not split.
 */
export function unaryDecomposition(model: Model, f: number): { c: number; u: Float64Array[] } | null {
  const k = model.arity(f);
  if (k < 2) return null;
  const t0 = model.tableStart[f], size = model.tableSize(f), t = model.tables;
  let x0 = t0;
  while (x0 < t0 + size && t[x0] === -Infinity) x0++;
  if (x0 === t0 + size) return null;
  const scope = model.scope(f), c = t[x0];
  // Strides of the scope's variables (the last fastest) and x0's digits.
  const stride = new Int32Array(k), digit = new Int32Array(k);
  for (let p = k - 1, s = 1; p >= 0; p--) (stride[p] = s), (digit[p] = Math.floor((x0 - t0) / s) % model.card[scope[p]]), (s *= model.card[scope[p]]);
  const u = Array.from({ length: k }, (_, p) => {
    const K = model.card[scope[p]], row = new Float64Array(K);
    for (let a = 0; a < K; a++) row[a] = t[x0 + (a - digit[p]) * stride[p]] - c;
    return row;
  });
  // Every entry against its prediction, the digits advanced as an odometer (the last fastest).
  const x = new Int32Array(k);
  for (let e = t0; e < t0 + size; e++) {
    let pred = c, scale = Math.abs(c);
    for (let p = 0; p < k; p++) (pred += u[p][x[p]]), (scale += Math.abs(u[p][x[p]]));
    const entry = t[e];
    if (pred === -Infinity || entry === -Infinity) {
      if (pred !== entry) return null;
    } else if (!(Math.abs(entry - pred) <= SEPARABLE_REL_TOL * (scale + Math.abs(entry)))) return null;
    for (let p = k - 1; p >= 0 && ++x[p] === model.card[scope[p]]; p--) x[p] = 0;
  }
  return { c, u };
}

/**
 * True when factor f is a 2 × 2 table without zeros whose interaction a − b − c + d passes the
 * tolerance: it couples its two variables. False says nothing (other shapes, zeros, or separable:
 * ask unaryDecomposition). Read without allocating: nearly every factor of a spin lattice is one,
 * and the grid bound asks it of each bond (2·10⁶ on a 1000 × 1000 lattice).
 */
export function binaryPairCouples(model: Model, f: number): boolean {
  const { scopeStart, scopeVars, card, tableStart, tables } = model;
  const p = scopeStart[f];
  if (scopeStart[f + 1] - p !== 2 || card[scopeVars[p]] !== 2 || card[scopeVars[p + 1]] !== 2) return false;
  const o = tableStart[f];
  return pairInteraction(tables[o], tables[o + 1], tables[o + 2], tables[o + 3]);
}

/** Whether the 2 × 2 table (a, b; c, d) has an interaction a − b − c + d past the tolerance, all four entries finite (NaN or ±∞ fail the test). */
export function pairInteraction(a: number, b: number, c: number, d: number): boolean {
  const dev = Math.abs(a - b - c + d);
  return dev < Infinity && dev > SEPARABLE_REL_TOL * (Math.abs(a) + Math.abs(b) + Math.abs(c) + Math.abs(d));
}

/**
 * True when factor f (of arity 2 or more) is not separable (see unaryDecomposition): it couples
 * its variables. Shared tables are asked once per table offset and scope shape through `seen`.
 */
export function factorCouples(model: Model, f: number, seen?: Map<string, boolean>): boolean {
  if (binaryPairCouples(model, f)) return true;
  if (!seen) return unaryDecomposition(model, f) === null;
  const key = `${model.tableStart[f]}:${Array.from(model.scope(f), (v) => model.card[v]).join(',')}`;
  let couples = seen.get(key);
  if (couples === undefined) seen.set(key, (couples = unaryDecomposition(model, f) === null));
  return couples;
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
  const splits: { f: number; c: number; u: Float64Array[] }[] = [];
  const { scopeStart, scopeVars, tableStart, tables, card } = model;
  // The lattice builders' pairs are known to couple (pairsKnownToCouple): only larger factors are read.
  const known = pairsKnownToCouple(model);
  for (let f = 0; f < F; f++) {
    const k = scopeStart[f + 1] - scopeStart[f];
    if (k < 2 || (k === 2 && known) || binaryPairCouples(model, f)) continue;
    const d = unaryDecomposition(model, f);
    if (d) splits.push({ f, ...d });
  }
  if (splits.length === 0) return model;
  const gone = new Uint8Array(F);
  let logConst = model.logConst;
  const unaries: { v: number; table: Float64Array }[] = [];
  for (const { f, c, u } of splits) {
    gone[f] = 1;
    logConst += c;
    const scope = model.scope(f);
    u.forEach((row, p) => {
      if (row.some((x) => x !== 0)) unaries.push({ v: scope[p], table: row });
    });
  }
  const kept = F - splits.length, E = unaries.length;
  let keptVars = 0;
  for (let f = 0; f < F; f++) if (!gone[f]) keptVars += model.arity(f);
  const start = new Int32Array(kept + E + 1), vars = new Int32Array(keptVars + E), offsets = new Int32Array(kept + E);
  const extra = unaries.reduce((n, x) => n + x.table.length, 0);
  const all = new Float64Array(tables.length + extra);
  all.set(tables);
  let g = 0, at = 0;
  for (let f = 0; f < F; f++) {
    if (gone[f]) continue;
    for (let p = scopeStart[f]; p < scopeStart[f + 1]; p++) vars[at++] = scopeVars[p];
    offsets[g] = tableStart[f];
    start[++g] = at;
  }
  let t = tables.length;
  for (const { v, table } of unaries) {
    vars[at++] = v;
    offsets[g] = t;
    all.set(table, t);
    t += table.length;
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
