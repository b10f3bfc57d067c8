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
  const top = Math.max(...logs);
  const w = logs.map((l) => Math.exp(l - top));
  const total = w.reduce((s, y) => s + y, 0);
  const marginals = Array.from(model.card, (K) => new Float64Array(K));
  configs.forEach((c, t) => c.forEach((k, v) => (marginals[v][k] += w[t] / total)));
  return { logZ: top + Math.log(total), marginals };
}

/** Deterministic pseudo-random numbers for building test models (not the engine's generator). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

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
