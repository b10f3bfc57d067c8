// Model builders for the common families. Each returns a Model (factor tables in log space) whose
// log Z is that of the model as the user wrote it.
//
// Ising convention (DESIGN.md §1): σ ∈ {−1, +1}, log p(σ) = β (Σ h_i σ_i + Σ_{i<j} J_ij σ_i σ_j) − log Z;
// state 0 is σ = −1 and state 1 is σ = +1. (A physicist's H = −Σ J σσ − Σ hσ at inverse temperature
// β is the same thing; the 2022 note's H = σᵀJ'σ + bᵀσ is J = −2J', h = −b.)
// Boltzmann machines and RBMs use s ∈ {0, 1}: log p(s) = aᵀs + ½ sᵀWs − log Z.

import { LIMITS, markPairsCouple, Model, ModelBuilder } from './model.ts';
import { ModelError } from './errors.ts';
import { checkOptionKeys } from './options.ts';

/** An Ising coupling J between variables i and j (the term β·J·σᵢσⱼ). */
export type Coupling = readonly [i: number, j: number, J: number];

function checkFinite(x: number, what: string): number {
  if (typeof x !== 'number' || !Number.isFinite(x)) throw new ModelError(`${what} is ${typeof x === 'string' ? JSON.stringify(x) : x}, not a finite number`);
  return x;
}

function fieldAt(h: number | ArrayLike<number> | undefined, i: number, n: number): number {
  if (h === undefined) return 0;
  if (typeof h === 'number') return checkFinite(h, 'field h');
  if (h.length !== n) throw new ModelError(`field h has ${h.length} entries for ${n} variables`);
  return checkFinite(h[i], `field h[${i}]`);
}

export interface IsingSpec {
  n: number;
  couplings: Iterable<Coupling>;
  h?: number | ArrayLike<number>;
  beta?: number;
}

/** Ising model on an edge list. Repeated pairs add up. */
export function ising(spec: IsingSpec): Model {
  // Each builder refuses a misspelt option: it built another model silently (isingLattice { bet: 0.2 } was β = 1).
  checkOptionKeys(spec, ['n', 'couplings', 'h', 'beta'], 'ising');
  const { n, couplings, h, beta = 1 } = spec;
  if (!Number.isInteger(n) || n < 1) throw new ModelError(`n must be an integer ≥ 1, got ${typeof n === 'string' ? `"${n}"` : n}`);
  if (couplings === undefined || typeof (couplings as Iterable<unknown>)[Symbol.iterator] !== 'function') throw new ModelError('couplings must be a list of [i, j, J] triples');
  checkFinite(beta, 'beta');
  const b = new ModelBuilder(new Array(n).fill(2));
  addIsingFields(b, n, h, beta);
  const table = new Float64Array(4); // reused: addPairwise copies it
  for (const [i, j, J] of couplings) {
    const w = beta * checkFinite(J, `coupling (${i}, ${j})`);
    table[0] = table[3] = w;
    table[1] = table[2] = -w;
    b.addPairwise(i, j, table);
  }
  return b.build();
}

/** Unary factors β h_i σ_i: one shared table when h is a constant, none when it is 0. */
function addIsingFields(b: ModelBuilder, n: number, h: number | ArrayLike<number> | undefined, beta: number): void {
  if (h === undefined || (typeof h === 'number' && checkFinite(h, 'field h') * beta === 0)) return;
  if (typeof h === 'number') {
    const f = beta * h;
    const id = b.shareTable([-f, f]);
    const scope = new Int32Array(1);
    for (let i = 0; i < n; i++) {
      scope[0] = i;
      b.addSharedFactor(scope, id);
    }
    return;
  }
  for (let i = 0; i < n; i++) {
    const f = beta * fieldAt(h, i, n);
    if (f !== 0) b.addUnary(i, [-f, f]);
  }
}

/** Ising model from a dense symmetric coupling matrix (n × n, row-major or nested arrays). */
export function denseIsing(spec: { J: ArrayLike<number> | readonly ArrayLike<number>[]; h?: number | ArrayLike<number>; beta?: number }): Model {
  checkOptionKeys(spec, ['J', 'h', 'beta'], 'denseIsing');
  const { J, h, beta = 1 } = spec;
  const { n, at } = squareMatrix(J, 'J');
  const couplings: Coupling[] = [];
  for (let i = 0; i < n; i++) {
    if (at(i, i) !== 0) throw new ModelError(`J[${i}][${i}] = ${at(i, i)}: a self-coupling; the diagonal of J must be zero`);
    for (let j = i + 1; j < n; j++) {
      const x = checkFinite(at(i, j), `J[${i}][${j}]`), y = checkFinite(at(j, i), `J[${j}][${i}]`);
      if (Math.abs(x - y) > 1e-12 * Math.max(1, Math.abs(x))) throw new ModelError(`J is not symmetric: J[${i}][${j}] = ${x} but J[${j}][${i}] = ${y}`);
      if (x !== 0) couplings.push([i, j, x]);
    }
  }
  return ising({ n, couplings, h, beta });
}

export interface LatticeSpec {
  /** Side lengths, 1 to 3 dimensions, e.g. [32, 32]. */
  shape: readonly number[];
  periodic?: boolean;
  /** Nearest-neighbour coupling: a constant, or a function of the two sites and the axis. */
  J?: number | ((i: number, j: number, axis: number) => number);
  h?: number | ArrayLike<number>;
  beta?: number;
}

/** Site index of lattice coordinates, first axis slowest (row-major). */
export function latticeIndex(shape: readonly number[], coord: readonly number[]): number {
  let idx = 0;
  for (let d = 0; d < shape.length; d++) idx = idx * shape[d] + coord[d];
  return idx;
}

/** Nearest-neighbour pairs of a 1-D/2-D/3-D lattice, each bond once ([i, j, axis]). */
export function latticeBonds(shape: readonly number[], periodic: boolean): [number, number, number][] {
  const { i, j, axis } = latticeBondArrays(shape, periodic);
  return Array.from(i, (a, k): [number, number, number] => [a, j[k], axis[k]]);
}

/** The same bonds as typed arrays (no object per bond: lattices of 10⁶ sites and more). */
export function latticeBondArrays(shape: readonly number[], periodic: boolean): { i: Int32Array; j: Int32Array; axis: Uint8Array } {
  if (shape.length < 1 || shape.length > 3) throw new ModelError(`lattice shape must have 1 to 3 dimensions, got ${shape.length}`);
  for (const L of shape) if (!Number.isInteger(L) || L < 1) throw new ModelError(`lattice side ${L} is not a positive integer`);
  const n = shape.reduce((p, L) => p * L, 1);
  if (n > LIMITS.maxVariables) throw new ModelError(`a lattice of ${n} sites is past the engine's limit of ${LIMITS.maxVariables} variables`);
  // Row-major strides: moving one step along axis d adds stride[d] to the site index.
  const stride = shape.map((_, d) => shape.slice(d + 1).reduce((p, L) => p * L, 1));
  let m = 0;
  for (const L of shape) m += (n / L) * (periodic && L > 1 ? L : L - 1);
  const bi = new Int32Array(m), bj = new Int32Array(m), ax = new Uint8Array(m);
  m = 0;
  for (let i = 0; i < n; i++) {
    for (let d = 0; d < shape.length; d++) {
      const L = shape[d];
      const c = Math.floor(i / stride[d]) % L;
      // On a periodic side of 1 the bond would be a self-loop; of 2, it doubles the inner bond
      // (both bonds are real on a 2-cycle torus and add up).
      if (c + 1 < L) {
        bi[m] = i;
        bj[m] = i + stride[d];
        ax[m++] = d;
      } else if (periodic && L > 1) {
        bi[m] = i;
        bj[m] = i - c * stride[d];
        ax[m++] = d;
      }
    }
  }
  return { i: bi, j: bj, axis: ax };
}

/** Nearest-neighbour Ising model on an open or periodic lattice (one shared bond table when J is a constant). */
export function isingLattice(spec: LatticeSpec): Model {
  checkOptionKeys(spec, ['shape', 'periodic', 'J', 'h', 'beta'], 'isingLattice');
  const { shape, periodic = false, J = 1, h, beta = 1 } = spec;
  checkFinite(beta, 'beta');
  const bonds = latticeBondArrays(shape, periodic);
  const n = shape.reduce((p, L) => p * L, 1);
  const b = new ModelBuilder(new Int32Array(n).fill(2));
  addIsingFields(b, n, h, beta);
  const bondTable = (w: number) => [w, -w, -w, w];
  // A bond couples its spins unless its coupling is zero (its table's interaction is 4w).
  let couple = true;
  if (typeof J !== 'function') {
    const w = beta * checkFinite(J, 'J');
    couple = w !== 0;
    b.addSharedPairs(bonds.i, bonds.j, b.shareTable(bondTable(w)));
  } else {
    const scope = new Int32Array(2);
    for (let k = 0; k < bonds.i.length; k++) {
      const i = (scope[0] = bonds.i[k]), j = (scope[1] = bonds.j[k]);
      const w = beta * checkFinite(J(i, j, bonds.axis[k]), `coupling (${i}, ${j})`);
      if (w === 0) couple = false;
      b.addSharedFactor(scope, b.shareTable(bondTable(w)));
    }
  }
  const model = b.build().withLattice({ shape: [...shape], periodic });
  // A periodic side of 2 puts two bonds on one pair, merged into one table (+J and −J would cancel).
  return couple && !(periodic && shape.some((L) => L <= 2)) ? markPairsCouple(model) : model;
}

/** q-state Potts model on a lattice: log p(x) = β J Σ_bonds [x_i = x_j] − log Z. */
export function pottsLattice(spec: { shape: readonly number[]; q: number; periodic?: boolean; J?: number; beta?: number }): Model {
  checkOptionKeys(spec, ['shape', 'q', 'periodic', 'J', 'beta'], 'pottsLattice');
  const { shape, q, periodic = false, J = 1, beta = 1 } = spec;
  if (!Number.isInteger(q) || q < 2) throw new ModelError(`Potts q = ${q} must be an integer ≥ 2`);
  const w = checkFinite(beta, 'beta') * checkFinite(J, 'J');
  const n = shape.reduce((p, L) => p * L, 1);
  const bonds = latticeBondArrays(shape, periodic);
  const b = new ModelBuilder(new Int32Array(n).fill(q));
  const table = new Float64Array(q * q);
  for (let k = 0; k < q; k++) table[k * q + k] = w;
  b.addSharedPairs(bonds.i, bonds.j, b.shareTable(table));
  // The bond table's interaction is 2w: it couples unless w is zero.
  const model = b.build().withLattice({ shape: [...shape], periodic });
  return w !== 0 && !(periodic && shape.some((L) => L <= 2)) ? markPairsCouple(model) : model;
}

/**
 * Boltzmann machine on s ∈ {0,1}: log p(s) = aᵀs + ½ sᵀWs, from a dense symmetric W (whose diagonal
 * folds into a, since s_i² = s_i) or from an edge list of [i, j, W_ij].
 */
export function boltzmann(spec: { a: ArrayLike<number>; W?: ArrayLike<number> | readonly ArrayLike<number>[]; edges?: Iterable<Coupling> }): Model {
  checkOptionKeys(spec, ['a', 'W', 'edges'], 'boltzmann');
  const { a, W, edges } = spec;
  if (a?.length === undefined) throw new ModelError('boltzmann needs a, the biases (one per unit)');
  if ((W === undefined) === (edges === undefined)) throw new ModelError('boltzmann: give exactly one of W (dense matrix) or edges ([i, j, w] list)');
  const n = a.length;
  const b = new ModelBuilder(new Array(n).fill(2));
  const bias = Float64Array.from(a, (x, i) => checkFinite(x, `a[${i}]`));
  const addEdge = (i: number, j: number, w: number) => b.addPairwise(i, j, [0, 0, 0, checkFinite(w, `W[${i}][${j}]`)]);
  if (edges !== undefined) {
    for (const [i, j, w] of edges) {
      if (i === j) throw new ModelError(`edge (${i}, ${i}) is a self-loop; put a diagonal term into a`);
      addEdge(i, j, w);
    }
  } else {
    const { n: m, at } = squareMatrix(W!, 'W');
    if (m !== n) throw new ModelError(`W is ${m} × ${m} but a has ${n} entries`);
    for (let i = 0; i < n; i++) {
      bias[i] += 0.5 * checkFinite(at(i, i), `W[${i}][${i}]`);
      for (let j = i + 1; j < n; j++) {
        const x = checkFinite(at(i, j), `W[${i}][${j}]`), y = checkFinite(at(j, i), `W[${j}][${i}]`);
        if (Math.abs(x - y) > 1e-12 * Math.max(1, Math.abs(x))) throw new ModelError(`W is not symmetric: W[${i}][${j}] = ${x} but W[${j}][${i}] = ${y}`);
        if (x !== 0) addEdge(i, j, x);
      }
    }
  }
  for (let i = 0; i < n; i++) if (bias[i] !== 0) b.addUnary(i, [0, bias[i]]);
  return b.build();
}

/**
 * Restricted Boltzmann machine on s ∈ {0,1}: log p(v, h) = bᵀv + cᵀh + vᵀWh. Variables 0…nv−1 are
 * visible, nv…nv+nh−1 hidden; `weights` is nv × nh, row-major.
 */
export function rbm(spec: { visibleBias: ArrayLike<number>; hiddenBias: ArrayLike<number>; weights: ArrayLike<number> }): Model {
  checkOptionKeys(spec, ['visibleBias', 'hiddenBias', 'weights'], 'rbm');
  const { visibleBias, hiddenBias, weights } = spec;
  for (const [name, x] of [['visibleBias', visibleBias], ['hiddenBias', hiddenBias], ['weights', weights]] as const) if (x?.length === undefined) throw new ModelError(`rbm needs ${name}`);
  const nv = visibleBias.length, nh = hiddenBias.length;
  if (weights.length !== nv * nh) throw new ModelError(`RBM weights have ${weights.length} entries, expected ${nv} × ${nh} = ${nv * nh}`);
  const b = new ModelBuilder(new Array(nv + nh).fill(2));
  for (let i = 0; i < nv; i++) b.addUnary(i, [0, checkFinite(visibleBias[i], `visibleBias[${i}]`)]);
  for (let k = 0; k < nh; k++) b.addUnary(nv + k, [0, checkFinite(hiddenBias[k], `hiddenBias[${k}]`)]);
  for (let i = 0; i < nv; i++) {
    for (let k = 0; k < nh; k++) {
      const w = checkFinite(weights[i * nh + k], `weights[${i}][${k}]`);
      if (w !== 0) b.addPairwise(i, nv + k, [0, 0, 0, w]);
    }
  }
  return b.build();
}

function squareMatrix(M: ArrayLike<number> | readonly ArrayLike<number>[], name: string): { n: number; at: (i: number, j: number) => number } {
  if (M.length > 0 && (Array.isArray((M as unknown[])[0]) || ArrayBuffer.isView((M as unknown[])[0]))) {
    const rows = M as readonly ArrayLike<number>[];
    const n = rows.length;
    for (let i = 0; i < n; i++) if (rows[i].length !== n) throw new ModelError(`${name} is not square: row ${i} has ${rows[i].length} entries, expected ${n}`);
    return { n, at: (i, j) => rows[i][j] };
  }
  const flat = M as ArrayLike<number>;
  const n = Math.round(Math.sqrt(flat.length));
  if (n * n !== flat.length || n === 0) throw new ModelError(`${name} has ${flat.length} entries, not a non-empty square matrix`);
  return { n, at: (i, j) => flat[i * n + j] };
}
