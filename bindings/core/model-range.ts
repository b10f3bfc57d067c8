// A model's range check, apart from model.ts (which it would push past its size): whether some
// configuration's log-potential could leave the double range.
import { ModelError } from './errors.ts';

/** What the check reads of a model (model.ts's Model; named here so the two files do not import each other). */
interface FactorTables {
  readonly logConst: number;
  readonly nFactors: number;
  readonly tableStart: ArrayLike<number>;
  readonly tables: ArrayLike<number>;
  tableSize(f: number): number;
}

/**
 * The model, after checking that no configuration's log-potential can pass the double range: every
 * factor's largest entry summed stays finite, and so does that sum with the constant. Finite factors
 * of 1e308 on one variable's two scopes summed to +∞: enumeration and bucket elimination answered
 * Z = 0, the junction tree NaN. The factors are summed without the constant, as the kernels sum them
 * (the constant is added last): factors of 1e308 beside a constant of −1.5e308 passed a sum begun at
 * the constant, and bucket elimination said log Z NaN, the junction tree +∞ or NaN.
 */
export function withSumInRange<M extends FactorTables>(m: M): M {
  // up: Σ of the positive maxima (what the kernels' sums can reach); sum: Σ of the finite maxima
  // (the largest log-potential; a table of zeros only makes Z = 0, which is reported elsewhere).
  let up = 0, sum = 0, zero = false;
  for (let f = 0; f < m.nFactors; f++) {
    let max = -Infinity;
    const t0 = m.tableStart[f], t1 = t0 + m.tableSize(f);
    for (let e = t0; e < t1; e++) {
      const x = m.tables[e];
      if (x > max) max = x;
      else if (x === -Infinity) zero = true;
    }
    if (max > 0) up += max;
    if (max > -Infinity) sum += max;
  }
  return withRangeSums(m, { up, sum, zero });
}

/** What withSumInRange sums over a model's factors, in factor order: the positive maxima, the finite maxima, and whether an entry is −∞. */
export interface RangeSums {
  up: number;
  sum: number;
  zero: boolean;
}

/** withSumInRange with its sums made elsewhere (the engine's UAI reader, as it writes the tables). */
export function withRangeSums<M extends { readonly logConst: number }>(m: M, { up, sum, zero }: RangeSums): M {
  if (up === Infinity) throw new ModelError('the factors\' largest log-potentials sum past the double range (+Infinity): rescale them');
  const c = m.logConst === -Infinity ? 0 : m.logConst;
  if (!Number.isFinite(sum + c)) throw new ModelError(`the largest log-potential, the factors' largest entries (${sum.toPrecision(3)}) plus the constant (${c.toPrecision(3)}), leaves the double range: rescale them`);
  if (!zero) withoutZeroEntries.add(m);
  return m;
}

/**
 * Models none of whose table entries is −∞ (no zero potential), as withSumInRange's pass over every
 * entry saw them: Model.zeroReason and the grid bound then need no pass of their own (on a 10⁶-site
 * lattice the two passes took 0.07 s of a refusal's 0.1 s).
 */
const withoutZeroEntries = new WeakSet<object>();

/** True when withSumInRange saw no −∞ entry in the model's tables (false: a zero may be there, or it was not checked). */
export function knownWithoutZeroEntries(m: object): boolean {
  return withoutZeroEntries.has(m);
}

/** Marks a model whose tables are those of one known to hold no zero (the same arrays); returns it. */
export function sameZeroEntries<M extends object>(from: object, m: M): M {
  if (withoutZeroEntries.has(from)) withoutZeroEntries.add(m);
  return m;
}

/**
 * Entries the pairwise tables take once every pair has its own (`Model.pairTables`, which the
 * canonical form and the kernels on it read): Σ over arity-2 factors of card_i · card_j. A shared
 * table is counted once per pair — a 64×64 Potts lattice of 200 states stores one 200 × 200 table
 * and expanded it to 3.2·10⁸ entries, 5.8 GB.
 */
export function pairTableEntries(m: FactorTables & { arity(f: number): number; scopeStart: ArrayLike<number>; scopeVars: ArrayLike<number>; card: ArrayLike<number> }): number {
  let entries = 0;
  for (let f = 0; f < m.nFactors; f++) if (m.arity(f) === 2) entries += m.card[m.scopeVars[m.scopeStart[f]]] * m.card[m.scopeVars[m.scopeStart[f] + 1]];
  return entries;
}

/** Pairwise tables past this many entries send Gibbs, mean field, AIS and parallel tempering to their factor-graph kernels, which read a shared table once (the binary pairwise form would take 24 bytes per entry: 1.5 GiB). */
export const CANONICAL_PAIR_ENTRIES = 2 ** 26;
/** Pairwise tables past this many entries (2 GiB) are refused before they are built. */
export const MAX_PAIR_TABLE_ENTRIES = 2 ** 28;
/** The binary pairwise form's rows past this size (2 GiB; 24 bytes per pair-table entry, both triangles) are refused before they are built. */
export const MAX_CANONICAL_BYTES = 2 ** 31;

/** Whether the kernels on the binary pairwise form take this model: pairwise, with pair tables that fit (CANONICAL_PAIR_ENTRIES). */
export function canonicalFits(m: Parameters<typeof pairTableEntries>[0] & { readonly isPairwise: boolean }): boolean {
  return m.isPairwise && pairTableEntries(m) <= CANONICAL_PAIR_ENTRIES;
}

/** The refusal of pair tables (`what`) that would take `bytes`, past `limit`. */
export function pairTablesRefusal(what: string, bytes: number, limit: number): string {
  return `${what}, one table per pair of variables (a shared table copied for each), would take ${(bytes / 2 ** 30).toFixed(1)} GiB, past ${(limit / 2 ** 30).toFixed(0)} GiB; gibbs, pt, mf and AIS (with gibbs transitions, their default there) run on the factor graph for such models, reading each shared table once`;
}
