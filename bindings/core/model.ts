// The user's model: a discrete Markov random field as a factor graph of any arity, in flat typed
// arrays,
//
//   log p(x) = c + Σ_f θ_f(x_{scope f}) − log Z,   x_v ∈ {0 … K_v − 1},
//
// every table in log space (−Infinity encodes a zero potential). Scopes are stored sorted
// (strictly increasing variable indices) in compressed rows (scopeStart / scopeVars); a factor's
// table lists its LAST scope variable fastest (the UAI order) and lives in the one `tables` array
// at tableStart[f]. Several factors may point at the same table (a uniform lattice has one bond
// table), so a 1024² Ising model costs a few tens of MB. The pairwise views (`unary`, `edges`,
// `pairwiseEdges`) are derived from the factors on demand, never stored beside them.

import { countingSort, GrowF64, GrowI32, SmallScopeIndex } from './flat-storage.ts';
import { EngineError, ModelError } from './errors.ts';
import { MAX_PAIR_TABLE_ENTRIES, knownWithoutZeroEntries, pairTablesRefusal, sameZeroEntries, withSumInRange } from './model-range.ts';
import { isIdentity, permuteAdd } from './table-permute.ts';

/** Engine limits: a variable's states and a model's size must fit the WASM kernels' index types. */
export const LIMITS = Object.freeze({
  /** Variables in one model (2²⁴). */
  maxVariables: 1 << 24,
  /** States of one variable (2¹⁶). */
  maxCardinality: 1 << 16,
  /** Distinct pairs joined by pairwise factors (2²⁶). */
  maxEdges: 1 << 26,
  /** Factors in one model (2²⁶). */
  maxFactors: 1 << 26,
  /** Variables in one factor's scope. */
  maxArity: 64,
  /** Entries of one factor's table. */
  maxTableEntries: 1 << 26,
  /** Entries of all distinct tables together (8 bytes each). */
  maxTotalTableEntries: 1 << 27,
});

/** Model.pairTables: the connected pairs (i < j, sorted by (i, j)) and their summed log tables, flat. */
export interface PairTables {
  i: Int32Array;
  j: Int32Array;
  /** Pair k's table is tables[start[k] … start[k + 1]) (K_i × K_j, row-major); start has pairs + 1 entries. */
  start: Int32Array;
  tables: Float64Array;
}

/** A pairwise factor in the derived pairwise view (`Model.edges`): factors on one pair summed. */
export interface Edge {
  /** The smaller variable index. */
  readonly i: number;
  /** The larger variable index. */
  readonly j: number;
  /** log θ_ij, K_i × K_j, row-major: entry [k_i * K_j + k_j]. Always i < j. */
  readonly table: Float64Array;
}

export interface LatticeInfo {
  readonly shape: readonly number[];
  readonly periodic: boolean;
}

/**
 * Models whose builder knows each pair factor couples its two variables (the lattice builders, when
 * no coupling is zero): exact inference's grid bound and its split of separable factors
 * (exact/separable.ts) then need not read 2·10⁶ bond tables of a 10⁶-site lattice (≈ 20 ms of a
 * 0.09 s refusal). A hint from our own builders only: any other model is checked table by table.
 */
const pairsCouple = new WeakSet<object>();

/** Marks a model built so that each of its pair factors couples its variables (see pairsKnownToCouple); returns it. */
export function markPairsCouple<M extends object>(model: M): M {
  pairsCouple.add(model);
  return model;
}

/** True when the model's builder marked each of its pair factors as coupling its variables (markPairsCouple). */
export function pairsKnownToCouple(model: object): boolean {
  return pairsCouple.has(model);
}

/** A model as plain data (typed arrays and numbers): what crosses to workers and back. */
export interface ModelData {
  card: Int32Array;
  scopeStart: Int32Array;
  scopeVars: Int32Array;
  tableStart: Int32Array;
  tables: Float64Array;
  logConst: number;
  lattice: LatticeInfo | null;
}

/**
 * A discrete Markov random field, log p(x) = c + Σ_f θ_f(x_scope(f)) − log Z, as a factor graph of
 * any arity in flat typed arrays (log tables; −Infinity is a zero potential). Immutable: build one
 * with `ModelBuilder`, the lattice builders (`isingLattice`, `pottsLattice`, …) or a reader
 * (`readUAI`, `readFG`, `loadModelFile`).
 */
export class Model {
  /** Number of states of each variable. */
  readonly card: Int32Array;
  /** Factor f's scope is scopeVars[scopeStart[f] … scopeStart[f+1]−1], strictly increasing. */
  readonly scopeStart: Int32Array;
  /** The scopes' variables, factor after factor (see `scopeStart`). */
  readonly scopeVars: Int32Array;
  /** Offset of factor f's table in `tables` (shared tables share offsets). */
  readonly tableStart: Int32Array;
  /** Every distinct log table, one after another; a table lists its last scope variable fastest. */
  readonly tables: Float64Array;
  /** Constant log-potential (empty-scope factors, converter constants). */
  readonly logConst: number;
  /** Set by the lattice builders: the site layout (row-major, first axis slowest). */
  readonly lattice: LatticeInfo | null;

  private maxArityCache = -1;
  private unaryCache: Float64Array[] | null = null;
  private edgesCache: Edge[] | null = null;
  /** zeroReason's answer (undefined: not asked yet): a pass over every table, asked by each method as it starts. */
  private zeroReasonCache: string | null | undefined = undefined;
  private pairsCache: PairTables | null = null;

  /** Wraps arrays that already satisfy the invariants (builders and readers); see fromData to check them. */
  constructor(d: ModelData) {
    this.card = d.card;
    this.scopeStart = d.scopeStart;
    this.scopeVars = d.scopeVars;
    this.tableStart = d.tableStart;
    this.tables = d.tables;
    this.logConst = d.logConst;
    this.lattice = d.lattice;
  }

  /** A model from plain data, every invariant checked (data from another thread or the user). */
  static fromData(d: ModelData): Model {
    const n = d.card.length;
    if (n === 0) throw new ModelError('empty model: no variables');
    const F = d.tableStart.length;
    if (d.scopeStart.length !== F + 1 || d.scopeStart[0] !== 0 || d.scopeStart[F] !== d.scopeVars.length) throw new ModelError('model data: scopeStart does not match the factors');
    for (let v = 0; v < n; v++) if (!(Number.isInteger(d.card[v]) && d.card[v] >= 1 && d.card[v] <= LIMITS.maxCardinality)) throw new ModelError(`model data: variable ${v} has cardinality ${d.card[v]}`);
    if (!(Number.isFinite(d.logConst) || d.logConst === -Infinity)) throw new ModelError(`model data: the constant log-potential is ${d.logConst}`);
    for (const [name, a] of [['card', d.card], ['scopeStart', d.scopeStart], ['scopeVars', d.scopeVars], ['tableStart', d.tableStart]] as const) {
      if (!(a instanceof Int32Array)) throw new ModelError(`model data: ${name} must be an Int32Array`);
    }
    if (!(d.tables instanceof Float64Array)) throw new ModelError('model data: tables must be a Float64Array');
    if (d.lattice && d.lattice.shape.reduce((a, b) => a * b, 1) !== n) throw new ModelError(`model data: a lattice of shape ${d.lattice.shape.join('×')} does not lay out ${n} variables`);
    for (let f = 0; f < F; f++) {
      // Constants live in logConst (ModelBuilder, the readers): one as a factor was dropped by exact, TRW (a "bound" below log Z), MF;
      // a decreasing start gave arity −1 and log Z 4.947 against enumeration's 4.133.
      if (!(d.scopeStart[f + 1] > d.scopeStart[f])) throw new ModelError(d.scopeStart[f + 1] === d.scopeStart[f] ? `model data: factor ${f} has no variables: put a constant log-potential in logConst` : `model data: scopeStart decreases at factor ${f} (${d.scopeStart[f]} then ${d.scopeStart[f + 1]})`);
      let size = 1;
      for (let p = d.scopeStart[f]; p < d.scopeStart[f + 1]; p++) {
        const v = d.scopeVars[p];
        if (!(v >= 0 && v < n) || (p > d.scopeStart[f] && v <= d.scopeVars[p - 1])) throw new ModelError(`model data: factor ${f} has a bad scope`);
        size *= d.card[v];
      }
      if (!(d.tableStart[f] >= 0 && d.tableStart[f] + size <= d.tables.length)) throw new ModelError(`model data: factor ${f}'s table lies outside the tables`);
    }
    for (let k = 0; k < d.tables.length; k++) {
      const x = d.tables[k];
      if (Number.isNaN(x) || x === Infinity) throw new ModelError(`model data: table entry ${k} is ${x}`);
    }
    return withSumInRange(new Model(d));
  }

  /** The model as plain data (the same arrays, not copies): what `fromData` and workers take. */
  toData(): ModelData {
    const { card, scopeStart, scopeVars, tableStart, tables, logConst, lattice } = this;
    return { card, scopeStart, scopeVars, tableStart, tables, logConst, lattice };
  }

  /** The same model, marked as laid out on a lattice (enables the FFT factor when periodic). */
  withLattice(lattice: LatticeInfo): Model {
    if (lattice.shape.reduce((a, b) => a * b, 1) !== this.n) throw new ModelError(`a lattice of shape ${lattice.shape.join('×')} does not lay out ${this.n} variables`);
    return sameZeroEntries(this, new Model({ ...this.toData(), lattice }));
  }

  /** Number of variables. */
  get n(): number {
    return this.card.length;
  }

  /** This model with unary factors appended (tables of length card[v]; the arrays are copied once). */
  withUnaryFactors(factors: readonly { v: number; logTable: ArrayLike<number> }[]): Model {
    const F = this.nFactors, E = factors.length;
    let extra = 0;
    for (const { v, logTable } of factors) {
      if (logTable.length !== this.card[v]) throw new ModelError(`unary factor on variable ${v}: table has ${logTable.length} entries, expected ${this.card[v]}`);
      extra += logTable.length;
    }
    const scopeStart = new Int32Array(F + E + 1), scopeVars = new Int32Array(this.scopeVars.length + E);
    const tableStart = new Int32Array(F + E), tables = new Float64Array(this.tables.length + extra);
    scopeStart.set(this.scopeStart);
    scopeVars.set(this.scopeVars);
    tableStart.set(this.tableStart);
    tables.set(this.tables);
    let at = this.tables.length;
    factors.forEach(({ v, logTable }, e) => {
      scopeVars[this.scopeVars.length + e] = v;
      scopeStart[F + e + 1] = this.scopeVars.length + e + 1;
      tableStart[F + e] = at;
      tables.set(logTable, at);
      at += logTable.length;
    });
    return new Model({ ...this.toData(), scopeStart, scopeVars, tableStart, tables });
  }

  /** Number of factors (the constant `logConst` is not one). */
  get nFactors(): number {
    return this.tableStart.length;
  }

  /** Number of variables in factor f's scope. */
  arity(f: number): number {
    return this.scopeStart[f + 1] - this.scopeStart[f];
  }

  /** Factor f's scope (a view: do not modify). */
  scope(f: number): Int32Array {
    return this.scopeVars.subarray(this.scopeStart[f], this.scopeStart[f + 1]);
  }

  /** Entries of factor f's table: the product of its scope's cardinalities. */
  tableSize(f: number): number {
    let s = 1;
    for (let p = this.scopeStart[f]; p < this.scopeStart[f + 1]; p++) s *= this.card[this.scopeVars[p]];
    return s;
  }

  /** Factor f's log table (a view: do not modify; it may be shared with other factors). */
  table(f: number): Float64Array {
    return this.tables.subarray(this.tableStart[f], this.tableStart[f] + this.tableSize(f));
  }

  /** The largest factor arity (0 for a model with no factors). */
  get maxArity(): number {
    if (this.maxArityCache < 0) {
      const { scopeStart } = this, F = this.nFactors;
      let m = 0;
      for (let f = 0; f < F; f++) m = Math.max(m, scopeStart[f + 1] - scopeStart[f]);
      this.maxArityCache = m;
    }
    return this.maxArityCache;
  }

  /** True when every factor has arity ≤ 2 (the pairwise views exist). */
  get isPairwise(): boolean {
    return this.maxArity <= 2;
  }

  /** The first factor of arity > 2, or −1. */
  firstHigherOrderFactor(): number {
    for (let f = 0; f < this.nFactors; f++) if (this.scopeStart[f + 1] - this.scopeStart[f] > 2) return f;
    return -1;
  }

  /**
   * Why the model has no configuration of positive probability, when that shows in one place: its
   * constant factor (factors of no variable) is zero, a factor is zero everywhere, or a variable's
   * unary factors (evidence is one) give each of its states zero potential; else null.
   */
  zeroReason(): string | null {
    if (this.zeroReasonCache === undefined) this.zeroReasonCache = this.findZeroReason();
    return this.zeroReasonCache;
  }

  private findZeroReason(): string | null {
    if (this.logConst === -Infinity) return "the model's constant factor (a factor of no variables) is zero";
    if (knownWithoutZeroEntries(this)) return null;
    const dead = this.firstAllZeroFactor();
    if (dead >= 0) return `${this.describeFactor(dead)} is zero everywhere`;
    // States some unary factor forbids; a variable with none left has no state.
    const { n, card, scopeStart, scopeVars, tables, tableStart } = this;
    // Made at the first zero (most models have none: 10⁶ variables' arrays were a third of the check).
    let start: Int32Array | null = null, forbidden: Uint8Array | null = null;
    for (let f = 0; f < this.nFactors; f++) {
      if (scopeStart[f + 1] - scopeStart[f] !== 1) continue;
      const v = scopeVars[scopeStart[f]];
      for (let k = 0; k < card[v]; k++) {
        if (tables[tableStart[f] + k] !== -Infinity) continue;
        if (!start || !forbidden) {
          start = new Int32Array(n + 1);
          for (let u = 0; u < n; u++) start[u + 1] = start[u] + card[u];
          forbidden = new Uint8Array(start[n]);
        }
        forbidden[start[v] + k] = 1;
      }
    }
    if (!start || !forbidden) return null;
    for (let v = 0; v < n; v++) {
      let k = start[v];
      while (k < start[v + 1] && forbidden[k]) k++;
      if (k === start[v + 1]) return `variable ${v}: its unary factors (or evidence) give every state zero potential`;
    }
    return null;
  }

  /** The first factor whose table is −∞ everywhere (the model has Z = 0), or −1. */
  firstAllZeroFactor(): number {
    const { tableStart, tables, scopeStart, scopeVars, card } = this, F = tableStart.length;
    let lastChecked = -1;
    for (let f = 0; f < F; f++) {
      const at = tableStart[f];
      if (at === lastChecked) continue; // shared tables (lattices) are checked once per run of factors
      lastChecked = at;
      if (tables[at] !== -Infinity) continue; // a nonzero first entry: not zero everywhere
      let size = 1;
      for (let p = scopeStart[f]; p < scopeStart[f + 1]; p++) size *= card[scopeVars[p]];
      const end = at + size;
      let k = at;
      while (k < end && tables[k] === -Infinity) k++;
      if (k === end) return f;
    }
    return -1;
  }

  /** A factor's description for messages: "factor f (variables a b c)". */
  describeFactor(f: number): string {
    const scope = Array.from(this.scope(f));
    return `factor ${f} (variables ${scope.length > 8 ? `${scope.slice(0, 8).join(' ')} …` : scope.join(' ')})`;
  }

  /** Table index of configuration x within factor f (last scope variable fastest). */
  entryIndex(f: number, x: ArrayLike<number>): number {
    let idx = 0;
    for (let p = this.scopeStart[f]; p < this.scopeStart[f + 1]; p++) {
      const v = this.scopeVars[p];
      idx = idx * this.card[v] + x[v];
    }
    return idx;
  }

  /** Unnormalised log-probability of a full configuration (for tests and enumeration). */
  logPotential(x: ArrayLike<number>): number {
    let s = this.logConst;
    for (let f = 0; f < this.nFactors; f++) s += this.tables[this.tableStart[f] + this.entryIndex(f, x)];
    return s;
  }

  /**
   * Derived pairwise view: per variable, the sum of its unary factors (zeros where it has none).
   * One array per variable: meant for small models and tests; `unaryRows` is the same in one array.
   */
  get unary(): Float64Array[] {
    if (!this.unaryCache) {
      const { start, values } = this.unaryRows();
      this.unaryCache = Array.from(this.card, (_, v) => values.slice(start[v], start[v + 1]));
    }
    return this.unaryCache;
  }

  /** `unary` in one array: variable v's row is values[start[v] … start[v + 1]) (a new copy each call). */
  unaryRows(): { start: Int32Array; values: Float64Array } {
    const start = new Int32Array(this.n + 1);
    for (let v = 0; v < this.n; v++) start[v + 1] = start[v] + this.card[v];
    const values = new Float64Array(start[this.n]);
    // Summed in factor order.
    for (let f = 0; f < this.nFactors; f++) {
      if (this.scopeStart[f + 1] - this.scopeStart[f] !== 1) continue;
      const v = this.scopeVars[this.scopeStart[f]], o = start[v], t = this.tableStart[f];
      for (let k = 0; k < this.card[v]; k++) values[o + k] += this.tables[t + k];
    }
    return { start, values };
  }

  /**
   * Derived pairwise view: one entry per connected pair, i < j, sorted by (i, j), factors on the
   * same pair summed (in factor order). Throws a ModelError on a model with a factor of arity > 2.
   * An object per pair: for small models and tests; `pairTables` is the same in flat arrays.
   */
  get edges(): readonly Edge[] {
    if (!this.edgesCache) {
      const p = this.pairTables();
      this.edgesCache = Array.from(p.i, (i, k) => ({ i, j: p.j[k], table: p.tables.slice(p.start[k], p.start[k + 1]) }));
    }
    return this.edgesCache;
  }

  /** `edges` in flat arrays: pair k is (i[k], j[k]) with table tables[start[k] … start[k + 1]). */
  pairTables(): PairTables {
    if (!this.pairsCache) {
      requirePairwise(this, 'this operation');
      const pf = this.pairwiseFactors(), m = pf.factor.length, n = this.n;
      // The arity-2 factors by (i, j), stable (a pair's factors stay in factor order): a counting
      // sort by j, then by i.
      const byJ = countingSort(m, n, (k) => pf.j[k]).list;
      const sorted = countingSort(m, n, (k) => pf.i[k], byJ).list;
      let pairs = 0;
      for (let t = 0; t < m; t++) if (t === 0 || pf.i[sorted[t]] !== pf.i[sorted[t - 1]] || pf.j[sorted[t]] !== pf.j[sorted[t - 1]]) pairs++;
      const i = new Int32Array(pairs), j = new Int32Array(pairs), start = new Int32Array(pairs + 1);
      let entries = 0, k = -1;
      for (let t = 0; t < m; t++) {
        const a = pf.i[sorted[t]], b = pf.j[sorted[t]];
        if (k < 0 || a !== i[k] || b !== j[k]) {
          k++;
          i[k] = a;
          j[k] = b;
          start[k] = entries;
          entries += this.card[a] * this.card[b];
        }
      }
      start[pairs] = entries;
      if (entries > MAX_PAIR_TABLE_ENTRIES) throw new EngineError(pairTablesRefusal('the pairwise tables', 8 * entries, 8 * MAX_PAIR_TABLE_ENTRIES));
      const tables = new Float64Array(entries);
      k = -1;
      for (let t = 0; t < m; t++) {
        const f = pf.factor[sorted[t]], a = pf.i[sorted[t]], b = pf.j[sorted[t]];
        const first = k < 0 || a !== i[k] || b !== j[k];
        if (first) k++;
        const src = this.tableStart[f], dst = start[k], len = start[k + 1] - dst;
        if (first) for (let e = 0; e < len; e++) tables[dst + e] = this.tables[src + e];
        else for (let e = 0; e < len; e++) tables[dst + e] += this.tables[src + e];
      }
      this.pairsCache = { i, j, start, tables };
    }
    return this.pairsCache;
  }

  /** Number of distinct variable pairs joined by an arity-2 factor (the interaction graph's edges among them). */
  countPairs(): number {
    const { i, j } = this.pairwiseFactors();
    // Bucket the second variables by the first, then count distinct ones per bucket: O(factors).
    const start = new Int32Array(this.n + 1);
    for (let k = 0; k < i.length; k++) start[i[k] + 1]++;
    for (let v = 0; v < this.n; v++) start[v + 1] += start[v];
    const fill = start.slice(0, this.n), second = new Int32Array(i.length);
    for (let k = 0; k < i.length; k++) second[fill[i[k]]++] = j[k];
    const stamp = new Int32Array(this.n).fill(-1);
    let m = 0;
    for (let v = 0; v < this.n; v++) {
      for (let k = start[v]; k < start[v + 1]; k++) {
        if (stamp[second[k]] !== v) {
          stamp[second[k]] = v;
          m++;
        }
      }
    }
    return m;
  }

  /** Derived pairwise view as typed arrays: the arity-2 factors' indices and their (i < j) variables. */
  pairwiseFactors(): {
    /** Index of each arity-2 factor. */
    factor: Int32Array;
    /** Its smaller variable. */
    i: Int32Array;
    /** Its larger variable. */
    j: Int32Array;
  } {
    const { scopeStart, scopeVars } = this, F = this.nFactors;
    let m = 0;
    for (let f = 0; f < F; f++) if (scopeStart[f + 1] - scopeStart[f] === 2) m++;
    const factor = new Int32Array(m), i = new Int32Array(m), j = new Int32Array(m);
    m = 0;
    for (let f = 0; f < F; f++) {
      if (scopeStart[f + 1] - scopeStart[f] !== 2) continue;
      factor[m] = f;
      i[m] = scopeVars[scopeStart[f]];
      j[m++] = scopeVars[scopeStart[f] + 1];
    }
    return { factor, i, j };
  }
}

/** Refuses a model with a factor of arity > 2 for an operation that needs pairwise factors. */
export function requirePairwise(model: Model, what: string, accepted = ''): void {
  const f = model.firstHigherOrderFactor();
  if (f < 0) return;
  const scope = Array.from(model.scope(f));
  const vars = scope.length > 8 ? `${scope.slice(0, 8).join(' ')} …` : scope.join(' ');
  throw new ModelError(`factor ${f} has arity ${scope.length} (variables ${vars}): ${what} needs factors of arity ≤ 2${accepted ? `; ${accepted}` : ''}`);
}

function checkIndex(v: number, n: number, what: Name): void {
  if (!Number.isInteger(v) || v < 0 || v >= n) {
    throw new ModelError(`${nameOf(what)}: variable index ${v} is out of range 0…${n - 1}`);
  }
}

/** A factor's name for error messages, built only when one is thrown (the builders add millions of factors). */
type Name = string | (() => string);
const nameOf = (w: Name): string => (typeof w === 'string' ? w : w());
const scopeName = (scope: ArrayLike<number>): Name => () => `factor on (${Array.from(scope).join(' ')})`;

function checkLogTable(t: ArrayLike<number>, len: number, what: Name): void {
  if (t === null || typeof t !== 'object' || typeof t.length !== 'number') throw new ModelError(`${nameOf(what)}: the table must be an array of log-potentials, got ${t === null ? 'null' : typeof t}`);
  if (t.length !== len) throw new ModelError(`${nameOf(what)}: table has ${t.length} entries, expected ${len}`);
  for (let k = 0; k < len; k++) {
    const x = t[k];
    // −Infinity is a zero potential; NaN and +Infinity have no meaning.
    if (Number.isNaN(x) || x === Infinity || typeof x !== 'number') {
      throw new ModelError(`${nameOf(what)}: entry ${k} is ${x}, not a finite log-potential`);
    }
  }
}

/**
 * Collects factors of any arity. Tables are given in the caller's scope order, last variable
 * fastest (pairwise: row-major, entry [k_i * K_j + k_j]); the builder stores the scope sorted and
 * permutes the table to match. Factors added with addFactor/addUnary/addPairwise on the same scope
 * are summed into one; `shareTable` + `addSharedFactor` / `addSharedPairs` let many factors point
 * at one table (no summing then: the factors stay separate and every derived view adds them up).
 * Arity 1 and 2 take allocation-free paths: a 1024² lattice's 2·10⁶ bonds are added in tens of ms.
 */
export class ModelBuilder {
  private readonly card: Int32Array;
  private readonly scopeStart = new GrowI32();
  private readonly scopeVars = new GrowI32();
  private readonly tableStart = new GrowI32();
  private readonly tables = new GrowF64();
  /** Sorted-scope key → factor, for summing factors on one scope: arity ≥ 3 (strings) … */
  private readonly byScope = new Map<string, number>();
  /** … and arity 1 and 2 (SmallScopeIndex); made on the first such factor (lattices built from shared tables never need it). */
  private small: SmallScopeIndex | null = null;
  /** Shared table id (its offset), scope permutation and cardinalities → offset of the permuted copy. */
  private readonly permuted = new Map<string, number>();
  /** Shared table id → its entries: a scope must take them all (a smaller one let a later one read past them). */
  private readonly sharedSize = new Map<number, number>();
  /** Shared pair table id and (K_i, K_j) of the caller's order → offset of its transpose. */
  private readonly transposed = new Map<number, number>();
  private logConst = 0;

  constructor(card: ArrayLike<number>) {
    const n = card.length;
    if (n === 0) throw new ModelError('empty model: no variables');
    if (n > LIMITS.maxVariables) throw new ModelError(`${n} variables is past the engine's limit of ${LIMITS.maxVariables}`);
    this.card = new Int32Array(n);
    for (let v = 0; v < n; v++) {
      const k = card[v];
      if (!Number.isInteger(k) || k < 1) throw new ModelError(`variable ${v}: cardinality ${k} is not a positive integer`);
      if (k > LIMITS.maxCardinality) throw new ModelError(`variable ${v}: cardinality ${k} is past the limit of ${LIMITS.maxCardinality}`);
      this.card[v] = k;
    }
    this.scopeStart.push(0);
  }

  /** Number of variables. */
  get n(): number {
    return this.card.length;
  }

  /** Number of factors added so far (factors on one scope count once). */
  get nFactors(): number {
    return this.tableStart.length;
  }

  /** Adds a constant log-potential c (log Z grows by c). */
  addConstant(logValue: number): this {
    if (!Number.isFinite(logValue) && logValue !== -Infinity) throw new ModelError(`constant factor ${logValue} is not a finite log-potential`);
    this.logConst += logValue;
    return this;
  }

  /** A factor on variable v: `logTable[k]` = θ_v(k) for its card[v] states (summed with earlier ones on v). */
  addUnary(v: number, logTable: ArrayLike<number>): this {
    checkIndex(v, this.n, 'unary factor');
    return this.addSmall(v, -1, logTable, () => `unary factor on variable ${v}`);
  }

  /** A factor on (i, j), i ≠ j: `logTable[k_i · K_j + k_j]` = θ_ij(k_i, k_j), in the order (i, j) given. */
  addPairwise(i: number, j: number, logTable: ArrayLike<number>): this {
    checkIndex(i, this.n, 'pairwise factor');
    checkIndex(j, this.n, 'pairwise factor');
    if (i === j) throw new ModelError(`pairwise factor on (${i}, ${j}) is a self-loop`);
    return this.addSmall(i, j, logTable, () => `pairwise factor on (${i}, ${j})`);
  }

  /** A factor on `scope` (any arity, distinct variables), table last-variable-fastest in that order. */
  addFactor(scope: ArrayLike<number>, logTable: ArrayLike<number>, what?: string): this {
    const name: Name = what ?? scopeName(scope);
    if (scope.length === 1 || scope.length === 2) {
      const i = scope[0], j = scope.length === 2 ? scope[1] : -1;
      checkIndex(i, this.n, name);
      if (j >= 0 || scope.length === 2) {
        checkIndex(j, this.n, name);
        if (i === j) throw new ModelError(`${nameOf(name)}: variable ${i} appears twice in the scope`);
      }
      return this.addSmall(i, j, logTable, name);
    }
    const { sorted, perm, size } = this.checkScope(scope, name);
    if (sorted.length === 0) {
      checkLogTable(logTable, 1, name);
      return this.addConstant(logTable[0]);
    }
    checkLogTable(logTable, size, name);
    const key = sorted.join(',');
    const f = this.byScope.get(key);
    let at: number;
    if (f === undefined) {
      at = this.tables.reserve(size);
      this.tables.a.fill(0, at, at + size);
      this.byScope.set(key, this.pushScope(sorted, at));
    } else {
      at = this.tableStart.a[f];
    }
    permuteAdd(logTable, this.card, scope, perm, this.tables.a, at);
    return this;
  }

  /** addFactor on one variable (j < 0) or a pair, indices already checked: no arrays allocated. */
  private addSmall(i: number, j: number, logTable: ArrayLike<number>, name: Name): this {
    const Ki = this.card[i], Kj = j >= 0 ? this.card[j] : 1, size = Ki * Kj;
    if (size > LIMITS.maxTableEntries) throw new ModelError(`${nameOf(name)}: ${size} table entries is past the limit of ${LIMITS.maxTableEntries}`);
    checkLogTable(logTable, size, name);
    const lo = j < 0 || i < j ? i : j, hi = j < 0 ? -1 : i < j ? j : i;
    const small = (this.small ??= new SmallScopeIndex(this.n)), f = small.get(lo, hi);
    let at: number;
    if (f < 0) {
      at = this.tables.reserve(size);
      this.tables.a.fill(0, at, at + size);
      small.add(lo, hi, this.pushSmall(lo, hi, at));
    } else {
      at = this.tableStart.a[f];
    }
    const dst = this.tables.a;
    if (hi < 0 || i < j) for (let e = 0; e < size; e++) dst[at + e] += logTable[e];
    else for (let l = 0; l < Kj; l++) for (let k = 0; k < Ki; k++) dst[at + l * Ki + k] += logTable[k * Kj + l];
    return this;
  }

  /** Stores a table once (for addSharedFactor), in the order of the scopes it will be used with. */
  shareTable(logTable: ArrayLike<number>, what = 'shared table'): number {
    checkLogTable(logTable, logTable.length, what);
    const at = this.tables.reserve(logTable.length);
    this.tables.a.set(logTable as ArrayLike<number>, at);
    this.sharedSize.set(at, logTable.length);
    return at;
  }

  /** A factor on `scope` whose table is the shared table `id` (in `scope`'s order). */
  addSharedFactor(scope: ArrayLike<number>, id: number): this {
    const k = scope.length;
    if (k === 1 || k === 2) {
      const name = scopeName(scope);
      const i = scope[0], j = k === 2 ? scope[1] : -1;
      checkIndex(i, this.n, name);
      if (k === 2) {
        checkIndex(j, this.n, name);
        if (i === j) throw new ModelError(`${nameOf(name)}: variable ${i} appears twice in the scope`);
      }
      const at = this.sharedPairAt(i, j, id, name);
      this.pushSmall(j < 0 || i < j ? i : j, j < 0 ? -1 : i < j ? j : i, at);
      return this;
    }
    const { sorted, perm, size } = this.checkScope(scope, scopeName(scope));
    if (sorted.length === 0) throw new ModelError('a shared table needs a non-empty scope');
    if (this.sharedSize.get(id) !== size) throw new ModelError(`shared table ${id} does not fit the scope (${Array.from(scope).join(' ')}): ${this.sharedSize.has(id) ? `it has ${this.sharedSize.get(id)} entries, the scope's table ${size}` : 'no table was shared at that id'}`);
    let at = id;
    if (!isIdentity(perm)) {
      // The cardinalities too: scopes of one permutation but other shapes permute the table differently.
      const key = `${id}:${perm.join(',')}:${Array.from(scope, (v) => this.card[v]).join(',')}`;
      const cached = this.permuted.get(key);
      if (cached === undefined) {
        at = this.tables.reserve(size);
        this.tables.a.fill(0, at, at + size);
        permuteAdd(this.tables.a.subarray(id, id + size), this.card, scope, perm, this.tables.a, at);
        this.permuted.set(key, at);
      } else {
        at = cached;
      }
    }
    this.pushScope(sorted, at);
    return this;
  }

  /**
   * Many pair factors sharing table `id` (in each pair's (i[k], j[k]) order): factor k is on
   * (i[k], j[k]). The bulk path of the lattice builders: validated in one pass, stored without
   * per-factor allocation.
   */
  addSharedPairs(i: Int32Array, j: Int32Array, id: number): this {
    const m = i.length, n = this.n, card = this.card;
    if (j.length !== m) throw new ModelError(`addSharedPairs: ${m} first variables but ${j.length} second ones`);
    const F = this.tableStart.length;
    if (F + m > LIMITS.maxFactors) throw new ModelError(`more than ${LIMITS.maxFactors} factors`);
    this.scopeVars.ensure(2 * m);
    this.scopeStart.ensure(m);
    this.tableStart.ensure(m);
    const sv = this.scopeVars.a, ss = this.scopeStart.a, ts = this.tableStart.a;
    let p = this.scopeVars.length;
    // The table's offset for the last (K_i, K_j, swapped) seen: lattices use one or two.
    let lastKey = -1, lastAt = 0;
    for (let k = 0; k < m; k++) {
      const a = i[k], b = j[k];
      if (!(a >= 0 && a < n && b >= 0 && b < n) || a === b) {
        const name = `pair factor ${k} on (${a}, ${b})`;
        checkIndex(a, n, name);
        checkIndex(b, n, name);
        throw new ModelError(`${name}: variable ${a} appears twice in the scope`);
      }
      const key = (card[a] * 65537 + card[b]) * 2 + (a < b ? 0 : 1);
      if (key !== lastKey) {
        lastAt = this.sharedPairAt(a, b, id, `pair factor ${k} on (${a}, ${b})`);
        lastKey = key;
      }
      sv[p] = a < b ? a : b;
      sv[p + 1] = a < b ? b : a;
      p += 2;
      ss[F + 1 + k] = p;
      ts[F + k] = lastAt;
    }
    this.scopeVars.length = p;
    this.scopeStart.length += m;
    this.tableStart.length += m;
    return this;
  }

  /** Offset of shared table `id` laid out for the sorted scope of (i, j) (j < 0: one variable). */
  private sharedPairAt(i: number, j: number, id: number, name: Name): number {
    const Ki = this.card[i], Kj = j >= 0 ? this.card[j] : 1, size = Ki * Kj;
    if (this.sharedSize.get(id) !== size) throw new ModelError(`shared table ${id} does not fit the ${nameOf(name)}: ${this.sharedSize.has(id) ? `it has ${this.sharedSize.get(id)} entries, the scope's table ${size}` : 'no table was shared at that id'}`);
    if (j < 0 || i < j) return id;
    const key = (id * 65537 + Ki) * 65537 + Kj; // exact: id < 2^27, K ≤ 2^16
    let at = this.transposed.get(key);
    if (at === undefined) {
      at = this.tables.reserve(size);
      const t = this.tables.a;
      for (let l = 0; l < Kj; l++) for (let k = 0; k < Ki; k++) t[at + l * Ki + k] = t[id + k * Kj + l];
      this.transposed.set(key, at);
    }
    return at;
  }

  private checkScope(scope: ArrayLike<number>, what: Name): { sorted: number[]; perm: number[]; size: number } {
    const k = scope.length;
    if (k > LIMITS.maxArity) throw new ModelError(`${nameOf(what)}: arity ${k} is past the limit of ${LIMITS.maxArity}`);
    let size = 1;
    for (let p = 0; p < k; p++) {
      checkIndex(scope[p], this.n, what);
      size *= this.card[scope[p]];
    }
    if (size > LIMITS.maxTableEntries) throw new ModelError(`${nameOf(what)}: ${size} table entries is past the limit of ${LIMITS.maxTableEntries}`);
    // perm[q] = position in the caller's scope of the q-th smallest variable.
    const perm = Array.from({ length: k }, (_, p) => p).sort((p, q) => scope[p] - scope[q]);
    const sorted = perm.map((p) => scope[p]);
    for (let q = 1; q < k; q++) if (sorted[q] === sorted[q - 1]) throw new ModelError(`${nameOf(what)}: variable ${sorted[q]} appears twice in the scope`);
    return { sorted, perm, size };
  }

  private checkRoom(): number {
    const f = this.tableStart.length;
    if (f >= LIMITS.maxFactors) throw new ModelError(`more than ${LIMITS.maxFactors} factors`);
    if (this.tables.length > LIMITS.maxTotalTableEntries) throw new ModelError(`the tables hold more than ${LIMITS.maxTotalTableEntries} entries, past the engine's limit`);
    return f;
  }

  private pushScope(sorted: number[], tableAt: number): number {
    const f = this.checkRoom();
    for (const v of sorted) this.scopeVars.push(v);
    this.scopeStart.push(this.scopeVars.length);
    this.tableStart.push(tableAt);
    return f;
  }

  /** pushScope for a sorted scope (lo) or (lo, hi), hi < 0 for one variable. */
  private pushSmall(lo: number, hi: number, tableAt: number): number {
    const f = this.checkRoom();
    this.scopeVars.push(lo);
    if (hi >= 0) this.scopeVars.push(hi);
    this.scopeStart.push(this.scopeVars.length);
    this.tableStart.push(tableAt);
    return f;
  }

  /** The model (the builder's arrays are handed over: do not add to the builder afterwards). */
  build(): Model {
    if (this.tables.length > LIMITS.maxTotalTableEntries) throw new ModelError(`the tables hold more than ${LIMITS.maxTotalTableEntries} entries, past the engine's limit`);
    const tables = this.tables.done();
    for (let k = 0; k < tables.length; k++) {
      // Finite inputs can sum past the double range (1e308 + 1e308): +∞ there, NaN after −∞ + ∞.
      if (Number.isNaN(tables[k]) || tables[k] === Infinity) throw new ModelError(`a factor's summed table has ${tables[k]} at entry ${k}: its summed log-potentials leave the double range`);
    }
    if (this.logConst === Infinity) throw new ModelError('the constant factors sum to +Infinity: their log-potentials leave the double range');
    return withSumInRange(new Model({
      card: this.card.slice(),
      scopeStart: this.scopeStart.done(),
      scopeVars: this.scopeVars.done(),
      tableStart: this.tableStart.done(),
      tables,
      logConst: this.logConst,
      lattice: null,
    }));
  }
}
