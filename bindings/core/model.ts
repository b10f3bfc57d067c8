// The user's model: a discrete pairwise Markov random field in factor-table form,
//
//   log p(x) = c + Σ_v θ_v(x_v) + Σ_{(i,j)} θ_ij(x_i, x_j) − log Z,   x_v ∈ {0 … K_v − 1},
//
// with every table in log space (−Infinity encodes a zero potential). Every builder, reader and
// converter produces this; `canonical.ts` turns it into the binary pairwise form the engine runs on.

import { ModelError } from './errors.ts';

/** Engine limits: a variable's states and a model's size must fit the WASM kernels' index types. */
export const LIMITS = Object.freeze({
  maxVariables: 1 << 24,
  maxCardinality: 1 << 16,
  maxEdges: 1 << 26,
  maxTableEntries: 1 << 26,
});

export interface Edge {
  readonly i: number;
  readonly j: number;
  /** log θ_ij, K_i × K_j, row-major: entry [k_i * K_j + k_j]. Always i < j. */
  readonly table: Float64Array;
}

export interface LatticeInfo {
  readonly shape: readonly number[];
  readonly periodic: boolean;
}

export class Model {
  /** Number of states of each variable. */
  readonly card: Int32Array;
  /** log θ_v per variable (length K_v); all zeros where the variable has no unary factor. */
  readonly unary: Float64Array[];
  /** One entry per connected pair, i < j, sorted by (i, j). */
  readonly edges: readonly Edge[];
  /** Constant log-potential (empty-scope factors, converter constants). */
  readonly logConst: number;
  /** Set by the lattice builders: the site layout (row-major, first axis slowest). */
  readonly lattice: LatticeInfo | null;

  constructor(card: Int32Array, unary: Float64Array[], edges: Edge[], logConst: number, lattice: LatticeInfo | null = null) {
    this.card = card;
    this.unary = unary;
    this.edges = edges;
    this.logConst = logConst;
    this.lattice = lattice;
  }

  /** The same model, marked as laid out on a lattice (enables the FFT factor when periodic). */
  withLattice(lattice: LatticeInfo): Model {
    return new Model(this.card, this.unary, this.edges as Edge[], this.logConst, lattice);
  }

  get n(): number {
    return this.card.length;
  }

  /** Unnormalised log-probability of a full configuration (for tests and enumeration). */
  logPotential(x: ArrayLike<number>): number {
    let s = this.logConst;
    for (let v = 0; v < this.n; v++) s += this.unary[v][x[v]];
    for (const e of this.edges) s += e.table[x[e.i] * this.card[e.j] + x[e.j]];
    return s;
  }
}

function checkIndex(v: number, n: number, what: string): void {
  if (!Number.isInteger(v) || v < 0 || v >= n) {
    throw new ModelError(`${what}: variable index ${v} is out of range 0…${n - 1}`);
  }
}

function checkLogTable(t: ArrayLike<number>, len: number, what: string): void {
  if (t.length !== len) throw new ModelError(`${what}: table has ${t.length} entries, expected ${len}`);
  for (let k = 0; k < len; k++) {
    const x = t[k];
    // −Infinity is a zero potential; NaN and +Infinity have no meaning.
    if (Number.isNaN(x) || x === Infinity || typeof x !== 'number') {
      throw new ModelError(`${what}: entry ${k} is ${x}, not a finite log-potential`);
    }
  }
}

/**
 * Collects factors and sums those on the same scope. Pairwise tables are given for (i, j) in the
 * caller's order, row-major in that order: entry [k_i * K_j + k_j].
 */
export class ModelBuilder {
  private readonly card: Int32Array;
  private readonly unary: (Float64Array | null)[];
  private readonly pairs = new Map<number, Edge>();
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
    this.unary = new Array(n).fill(null);
  }

  get n(): number {
    return this.card.length;
  }

  addConstant(logValue: number): this {
    if (!Number.isFinite(logValue) && logValue !== -Infinity) throw new ModelError(`constant factor ${logValue} is not a finite log-potential`);
    this.logConst += logValue;
    return this;
  }

  addUnary(v: number, logTable: ArrayLike<number>): this {
    checkIndex(v, this.n, 'unary factor');
    const K = this.card[v];
    checkLogTable(logTable, K, `unary factor on variable ${v}`);
    let t = this.unary[v];
    if (!t) t = this.unary[v] = new Float64Array(K);
    for (let k = 0; k < K; k++) t[k] += logTable[k];
    return this;
  }

  addPairwise(i: number, j: number, logTable: ArrayLike<number>): this {
    checkIndex(i, this.n, 'pairwise factor');
    checkIndex(j, this.n, 'pairwise factor');
    if (i === j) throw new ModelError(`pairwise factor on (${i}, ${j}) is a self-loop`);
    const Ki = this.card[i], Kj = this.card[j];
    if (Ki * Kj > LIMITS.maxTableEntries) throw new ModelError(`pairwise factor on (${i}, ${j}) has ${Ki * Kj} entries, past the limit`);
    checkLogTable(logTable, Ki * Kj, `pairwise factor on (${i}, ${j})`);
    const lo = Math.min(i, j), hi = Math.max(i, j);
    const key = lo * this.n + hi;
    let e = this.pairs.get(key);
    if (!e) {
      if (this.pairs.size >= LIMITS.maxEdges) throw new ModelError(`more than ${LIMITS.maxEdges} edges`);
      e = { i: lo, j: hi, table: new Float64Array(Ki * Kj) };
      this.pairs.set(key, e);
    }
    const Khi = this.card[hi];
    for (let a = 0; a < Ki; a++) {
      for (let b = 0; b < Kj; b++) {
        const x = logTable[a * Kj + b];
        // Store in (lo, hi) order.
        const idx = i < j ? a * Khi + b : b * Khi + a;
        e.table[idx] += x;
      }
    }
    return this;
  }

  build(): Model {
    const unary = this.unary.map((t, v) => t ?? new Float64Array(this.card[v]));
    const edges = [...this.pairs.values()];
    // Builders usually add pairs in order already; sorting 10⁶ edges is worth skipping then.
    const before = (p: Edge, q: Edge) => p.i - q.i || p.j - q.j;
    if (!edges.every((e, k) => k === 0 || before(edges[k - 1], e) < 0)) edges.sort(before);
    for (const e of edges) {
      for (let k = 0; k < e.table.length; k++) {
        // −∞ + ∞ cannot arise (+∞ is rejected); guard anyway against NaN from summed inputs.
        if (Number.isNaN(e.table[k])) throw new ModelError(`pairwise factor on (${e.i}, ${e.j}) sums to NaN`);
      }
    }
    return new Model(this.card.slice(), unary, edges, this.logConst);
  }
}
