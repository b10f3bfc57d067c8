// Test helpers: brute-force answers computed independently of the engine.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { Model, ModelBuilder } from '../bindings/core/model.ts';
import type { InferenceResult } from '../bindings/core/result.ts';

/** Exact log Z and node marginals by enumerating every configuration (small models only). */
export function bruteForce(model: Model): { logZ: number; marginals: Float64Array[] } {
  const n = model.n;
  const x = new Int32Array(n);
  const logs: number[] = [];
  const configs: Int32Array[] = [];
  for (;;) {
    logs.push(model.logPotential(x));
    configs.push(x.slice());
    let v = n - 1;
    while (v >= 0 && ++x[v] === model.card[v]) x[v--] = 0;
    if (v < 0) break;
  }
  let top = -Infinity;
  for (const l of logs) top = Math.max(top, l);
  const w = logs.map((l) => Math.exp(l - top));
  const total = w.reduce((s, y) => s + y, 0);
  const marginals = Array.from(model.card, (K) => new Float64Array(K));
  configs.forEach((c, t) => c.forEach((k, v) => (marginals[v][k] += w[t] / total)));
  return { logZ: top + Math.log(total), marginals };
}

/** Deterministic pseudo-random numbers for building test models (not the engine's generator). */
import { mulberry32 } from '../bindings/core/seed.ts';
export { mulberry32 };

/** Random pairwise model: cardinalities from `cards`, each pair an edge with probability `density`. */
export function randomModel(rand: () => number, n: number, opts: { cards?: number[]; density?: number; scale?: number; zeros?: number } = {}): Model {
  const { cards = [2], density = 0.5, scale = 1, zeros = 0 } = opts;
  const card = Array.from({ length: n }, () => cards[Math.floor(rand() * cards.length)]);
  const b = new ModelBuilder(card);
  const entry = () => (rand() < zeros ? -Infinity : scale * (2 * rand() - 1));
  for (let v = 0; v < n; v++) b.addUnary(v, Array.from({ length: card[v] }, () => scale * (2 * rand() - 1)));
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      if (rand() < density) b.addPairwise(i, j, Array.from({ length: card[i] * card[j] }, entry));
    }
  }
  b.addConstant(rand() - 0.5);
  return b.build();
}

/**
 * The shared test models (UAI 2014 instances, libDAI's testfast.fg): RELAXMRF_DATA if set, else
 * shared/data beside the checkout (where CI puts it), else the workplace's copy.
 */
export function dataDir(): string {
  const candidates = [process.env.RELAXMRF_DATA, fileURLToPath(new URL('../../shared/data', import.meta.url)), '/work/shared/data'];
  for (const c of candidates) if (c && existsSync(join(c, 'uai2014'))) return c;
  throw new Error('test data not found: set RELAXMRF_DATA to the shared/data folder');
}

/** Every configuration of a small model, in odometer order (one buffer, rewritten each step). */
export function* configurations(card: ArrayLike<number>): Generator<Int32Array> {
  const x = new Int32Array(card.length);
  for (;;) {
    yield x;
    let v = card.length - 1;
    while (v >= 0 && ++x[v] === card[v]) x[v--] = 0;
    if (v < 0) return;
  }
}

/**
 * Random factor graph: every variable gets a unary factor, then `factors` factors of arity 1 to
 * `maxArity` on distinct random variables (scopes given in random order, so the builder's sorting
 * is exercised), entries uniform in ±scale and −∞ with probability `zeros`. The all-zero state
 * configuration keeps a finite potential, so Z > 0.
 */
export function randomFactorGraph(rand: () => number, n: number, opts: { cards?: number[]; maxArity?: number; factors?: number; scale?: number; zeros?: number } = {}): Model {
  const { cards = [2], maxArity = 3, factors = n, scale = 1, zeros = 0 } = opts;
  const card = Array.from({ length: n }, () => cards[Math.floor(rand() * cards.length)]);
  const b = new ModelBuilder(card);
  for (let v = 0; v < n; v++) b.addUnary(v, Array.from({ length: card[v] }, () => scale * (2 * rand() - 1)));
  for (let t = 0; t < factors; t++) {
    const k = 1 + Math.floor(rand() * Math.min(maxArity, n));
    const scope: number[] = [];
    while (scope.length < k) {
      const v = Math.floor(rand() * n);
      if (!scope.includes(v)) scope.push(v);
    }
    const size = scope.reduce((s, v) => s * card[v], 1);
    const table = Array.from({ length: size }, (_, e) => (e > 0 && rand() < zeros ? -Infinity : scale * (2 * rand() - 1)));
    b.addFactor(scope, table);
  }
  b.addConstant(rand() - 0.5);
  return b.build();
}

/** E_q[log p̃(x)] + Σ_v H(q_v) for q = Π_v q_v, by enumeration (0 · (−∞) = 0). */
export function mfObjectiveBrute(model: Model, q: Float64Array[]): number {
  const n = model.n;
  const x = new Int32Array(n);
  let e = 0;
  for (;;) {
    let w = 1;
    for (let v = 0; v < n; v++) w *= q[v][x[v]];
    if (w > 0) e += w * model.logPotential(x);
    let v = n - 1;
    while (v >= 0 && ++x[v] === model.card[v]) x[v--] = 0;
    if (v < 0) break;
  }
  let h = 0;
  for (const row of q) for (const p of row) if (p > 0) h -= p * Math.log(p);
  return e + h;
}

/**
 * A random factor graph whose variable–factor graph is a tree (or forest): each factor joins one
 * variable already placed with new ones. Arities 1–maxArity, cardinalities from `cards`, unary
 * factors on every variable, table entries uniform in ±scale, −∞ with probability `zeros` (entry 0
 * of every table stays finite, so Z > 0).
 */
export function randomTreeFactorGraph(rand: () => number, n: number, opts: { cards: number[]; maxArity: number; scale?: number; zeros?: number; forest?: boolean }): Model {
  const { cards, maxArity, scale = 1, zeros = 0, forest = false } = opts;
  const card = Array.from({ length: n }, () => cards[Math.floor(rand() * cards.length)]);
  const b = new ModelBuilder(card);
  const table = (scope: number[]) => Array.from({ length: scope.reduce((s, v) => s * card[v], 1) }, (_, e) => (e > 0 && rand() < zeros ? -Infinity : scale * (2 * rand() - 1)));
  for (let v = 0; v < n; v++) if (rand() < 0.7) b.addUnary(v, table([v]));
  let placed = 1;
  while (placed < n) {
    const k = Math.min(1 + Math.floor(rand() * maxArity), n - placed + 1);
    const scope = forest && rand() < 0.2 ? [] : [Math.floor(rand() * placed)];
    while (scope.length < k && placed < n) scope.push(placed++);
    if (scope.length > 1) b.addFactor(scope, table(scope));
  }
  b.addConstant(rand() - 0.5);
  return b.build();
}

/**
 * Every marginal of a sampler's result within 4 of its Monte Carlo standard errors of enumeration,
 * with each error below maxSE so the comparison has power.
 */
export function assertWithinMCSE(model: Model, r: InferenceResult, maxSE = 0.01): void {
  const exact = bruteForce(model);
  assert.equal(r.partial, false);
  r.marginals.forEach((row, v) => {
    row.forEach((p, k) => {
      const se = r.marginalStdErr![v][k];
      assert.ok(se < maxSE, `variable ${v} state ${k}: standard error ${se} too large for a meaningful test`);
      // An isolated variable's conditional is constant: its estimate is exact and its error 0.
      const tol = 4 * se + 1e-12;
      assert.ok(Math.abs(p - exact.marginals[v][k]) <= tol, `variable ${v} state ${k}: ${p} vs exact ${exact.marginals[v][k]} (tolerance ${tol})`);
    });
  });
}

/** A frustrated h×w grid of bits with couplings uniform in (−J, J) and fields uniform in (−1, 1). */
export function glassyGrid(seed: number, J: number, h = 4, w = 5): Model {
  const rand = mulberry32(seed);
  const b = new ModelBuilder(new Array(w * h).fill(2));
  for (let v = 0; v < w * h; v++) b.addUnary(v, [0, 2 * rand() - 1]);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const v = y * w + x;
      const c = () => J * (2 * rand() - 1);
      if (x + 1 < w) b.addPairwise(v, v + 1, [0, 0, 0, c()]);
      if (y + 1 < h) b.addPairwise(v, v + w, [0, 0, 0, c()]);
    }
  }
  return b.build();
}

/** A random 3-regular graph (configuration model, redrawn until simple) with random Ising couplings. */
export function regular3(n: number, seed: number): Model {
  const rand = mulberry32(seed);
  for (;;) {
    const stubs = Array.from({ length: 3 * n }, (_, k) => Math.floor(k / 3));
    for (let i = stubs.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [stubs[i], stubs[j]] = [stubs[j], stubs[i]];
    }
    const edges = new Set<string>();
    const pairs: [number, number][] = [];
    for (let k = 0; k < stubs.length; k += 2) {
      const a = Math.min(stubs[k], stubs[k + 1]), c = Math.max(stubs[k], stubs[k + 1]);
      if (a === c || edges.has(`${a},${c}`)) break;
      edges.add(`${a},${c}`);
      pairs.push([a, c]);
    }
    if (pairs.length < stubs.length / 2) continue;
    const b = new ModelBuilder(new Array(n).fill(2));
    for (const [a, c] of pairs) {
      const j = rand() - 0.5;
      b.addPairwise(a, c, [j, -j, -j, j]);
    }
    return b.build();
  }
}

/**
 * The model with its variables renumbered by a seeded shuffle (variable v becomes perm[v]; scopes
 * keep their order, so every table is unchanged, evidence factors included): the same distribution,
 * numbered otherwise. Returns the permutation too.
 */
export function renumbered(model: Model, seed: number): { model: Model; perm: Int32Array } {
  const rand = mulberry32(seed), perm = Int32Array.from({ length: model.n }, (_, v) => v);
  for (let v = model.n - 1; v > 0; v--) {
    const w = Math.floor(rand() * (v + 1));
    [perm[v], perm[w]] = [perm[w], perm[v]];
  }
  const card = new Array<number>(model.n);
  for (let v = 0; v < model.n; v++) card[perm[v]] = model.card[v];
  const b = new ModelBuilder(card);
  for (let f = 0; f < model.nFactors; f++) b.addFactor(Array.from(model.scope(f), (v) => perm[v]), model.table(f));
  b.addConstant(model.logConst);
  return { model: b.build(), perm };
}

/** A binary model of 9 variables with random fields and couplings from `rand`, and a few past exp's range (e^{±800}, e^{750}). */
export function extremeBinaryModel(rand: () => number): Model {
  const b = new ModelBuilder(new Array(9).fill(2));
  for (let v = 0; v < 9; v++) b.addUnary(v, [0, 4 * rand() - 2]);
  for (let i = 0; i < 9; i++) for (let j = i + 1; j < 9; j++) if (rand() < 0.5) b.addPairwise(i, j, [0, 0, 0, 4 * rand() - 2]);
  b.addPairwise(0, 1, [0, 0, 0, 800]);
  b.addPairwise(2, 3, [0, 0, 0, -800]);
  b.addUnary(4, [0, 750]);
  return b.build();
}

/**
 * A W-wide grid model with one diagonal pair more (sites 0 and W + 1), renumbered: its treewidth is
 * at least the grid's, but neither its numbering nor its pair graph shows the grid, so exact
 * inference's grid bound (bindings/exact/lattice-bound.ts) cannot refuse it and the orderings must.
 */
export function hiddenGrid(grid: Model, W: number, seed: number): Model {
  const b = new ModelBuilder(Array.from(grid.card));
  for (let f = 0; f < grid.nFactors; f++) b.addFactor(Array.from(grid.scope(f)), grid.table(f));
  b.addPairwise(0, W + 1, [0.1, -0.1, -0.1, 0.1]);
  b.addConstant(grid.logConst);
  return renumbered(b.build(), seed).model;
}

/** log10 Z = logZ / ln 10 within half a unit of the last digit a UAI .PR file prints (its second token as written). */
export function atPrintedPR(prText: string, logZ: number): boolean {
  const digits = prText.split(/\s+/).filter(Boolean)[1];
  const decimals = digits.includes('.') ? digits.split('.')[1].replace(/e.*$/i, '').length : 0;
  return Math.abs(logZ / Math.LN10 - Number(digits)) <= 0.5 * 10 ** -decimals + 1e-12 * Math.abs(Number(digits));
}

/** |got − published| within half a unit of the published value's last digit (6 significant: the UAI .PR and .MAR files). */
export function atPublishedDigits(got: number, published: number): boolean {
  const unit = published === 0 ? 1e-6 : 10 ** (Math.floor(Math.log10(Math.abs(published))) - 5);
  return Math.abs(got - published) <= 0.5 * unit + 1e-12;
}
