// Exact enumeration on factor graphs of any arity against brute force: log Z and every marginal on
// random models (arities 1–4, cardinalities 1–5, zeros), with evidence, over a huge dynamic range,
// split into components; zero-probability models and evidence; the refusal past the limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { exactInference } from '../bindings/exact/exact.ts';
import { exactModel } from '../bindings/exact/separable.ts';
import { enumerationPlan, runFactorGraphEnumeration } from '../bindings/exact/enumeration.ts';
import { applyEvidence } from '../bindings/io/formats.ts';
import { infer } from '../bindings/infer.ts';
import { ModelBuilder, type Model } from '../bindings/core/model.ts';
import { EngineError } from '../bindings/core/errors.ts';
import { bruteForce, mulberry32, randomFactorGraph, randomModel } from './helpers.ts';

const engine = await loadEngine();

function assertExact(model: Model, got: { logZ: number; marginals: Float64Array[] }, tol: number, what: string): void {
  const want = bruteForce(model);
  assert.ok(Math.abs(got.logZ - want.logZ) <= tol * Math.max(1, Math.abs(want.logZ)), `${what}: log Z ${got.logZ} vs ${want.logZ}`);
  for (let v = 0; v < model.n; v++) {
    for (let k = 0; k < model.card[v]; k++) {
      assert.ok(Math.abs(got.marginals[v][k] - want.marginals[v][k]) <= tol, `${what}: p(x_${v} = ${k}) ${got.marginals[v][k]} vs ${want.marginals[v][k]}`);
    }
  }
}

test('random factor graphs (arities 1–4, cardinalities 1–5, zeros): log Z and marginals = brute force to 1e-10', () => {
  const rand = mulberry32(11);
  const cards = [[2], [1, 2, 3], [3, 5], [2, 4], [1, 5]];
  let higher = 0;
  for (let t = 0; t < 40; t++) {
    const m = randomFactorGraph(rand, 3 + (t % 5), { cards: cards[t % 5], maxArity: 4, factors: 3 + (t % 6), zeros: t % 3 === 0 ? 0.3 : 0, scale: 2 });
    const r = exactInference(engine, m);
    // Higher-order once its separable factors are split (a factor over card-1 variables and one other is a unary).
    if (!exactModel(m).isPairwise) (higher++, assert.equal(r.algorithm, 'bucket'));
    assertExact(m, r, 1e-10, `model ${t} (arity ≤ ${m.maxArity})`);
    assertExact(m, exactInference(engine, m, { method: 'enumeration' }), 1e-10, `model ${t}, enumeration`);
  }
  assert.ok(higher >= 20, `${higher} models with a factor of arity > 2`);
});

test('the kernel on pairwise models equals elimination and brute force', () => {
  const rand = mulberry32(12);
  for (let t = 0; t < 10; t++) {
    const m = randomModel(rand, 6 + (t % 3), { cards: [[2], [2, 3], [3, 4]][t % 3], density: 0.6, zeros: t % 2 ? 0.2 : 0 });
    const en = runFactorGraphEnumeration(engine, m);
    const el = exactInference(engine, m, { method: 'elimination' });
    assertExact(m, { logZ: en.logZ, marginals: en.marginals! }, 1e-10, `pairwise model ${t}`);
    assert.ok(Math.abs(en.logZ - el.logZ) < 1e-10);
  }
});

test('evidence on any arity: observed variables are held fixed (not enumerated) and reported as point masses', () => {
  const rand = mulberry32(13);
  for (let t = 0; t < 12; t++) {
    const m0 = randomFactorGraph(rand, 7, { cards: [2, 3], maxArity: 4, factors: 6, scale: 1.5 });
    const evidence = new Map<number, number>();
    for (let v = 0; v < m0.n; v += 2 + (t % 2)) evidence.set(v, Math.floor(rand() * m0.card[v]));
    const m = applyEvidence(m0, evidence).model;
    const plan = enumerationPlan(m);
    for (const [v, s] of evidence) assert.equal(plan.fixed[v], s, `variable ${v} held at its observed state`);
    let free = 1;
    for (let v = 0; v < m.n; v++) if (!evidence.has(v) && m.card[v] > 1) free *= m.card[v];
    assert.ok(plan.configs <= free, `${plan.configs} configurations visited, at most ${free}`);
    const r = exactInference(engine, m, { method: 'enumeration' });
    assertExact(m, r, 1e-10, `model ${t} with ${evidence.size} observed`);
    for (const [v, s] of evidence) assert.deepEqual([...r.marginals[v]], Array.from({ length: m.card[v] }, (_, k) => (k === s ? 1 : 0)));
  }
});

test('a huge dynamic range (log-potentials ±3000, −∞ entries) stays exact', () => {
  const rand = mulberry32(14);
  for (let t = 0; t < 6; t++) {
    const m = randomFactorGraph(rand, 6, { cards: [2, 3], maxArity: 4, factors: 5, scale: 3000, zeros: 0.2 });
    const r = exactInference(engine, m, { method: 'enumeration' });
    assert.ok(Number.isFinite(r.logZ) && Math.abs(r.logZ) > 700, `log Z ${r.logZ} is far outside exp's range`);
    assertExact(m, r, 1e-9, `model ${t}`);
  }
});

test('independent components are enumerated one by one: Σ_c K^{n_c} configurations, log Z = Σ_c log Z_c', () => {
  const rand = mulberry32(15);
  const parts = [0, 1, 2].map(() => randomFactorGraph(rand, 11, { cards: [2, 3], maxArity: 3, factors: 14 }));
  const card = parts.flatMap((p) => [...p.card]);
  const b = new ModelBuilder(card);
  let base = 0;
  for (const p of parts) {
    for (let f = 0; f < p.nFactors; f++) b.addFactor(Array.from(p.scope(f), (v) => v + base), p.table(f));
    b.addConstant(p.logConst);
    base += p.n;
  }
  const m = b.build();
  const plan = enumerationPlan(m);
  assert.equal(plan.components.length, parts.reduce((c, p) => c + enumerationPlan(p).components.length, 0));
  assert.ok(card.reduce((a, b) => a * b, 1) > 2 ** 30 && plan.configs < 2 ** 20, `${plan.configs} configurations, not the product`);
  const r = exactInference(engine, m, { method: 'enumeration' });
  assert.equal(r.method, 'enumeration');
  assert.equal(r.maxTableEntries, plan.configs);
  base = 0;
  let logZ = 0;
  for (const p of parts) {
    const want = bruteForce(p);
    logZ += want.logZ;
    for (let v = 0; v < p.n; v++) for (let k = 0; k < p.card[v]; k++) assert.ok(Math.abs(r.marginals[base + v][k] - want.marginals[v][k]) < 1e-10);
    base += p.n;
  }
  assert.ok(Math.abs(r.logZ - logZ) < 1e-9 * Math.abs(logZ), `${r.logZ} vs ${logZ}`);
});

test('zero probability: evidence no state of which is possible, or excluded by a factor of arity 3; an all-zero table', () => {
  const b = new ModelBuilder([2, 2, 3]);
  b.addUnary(0, [0, -Infinity]);
  // Entry x0·6 + x1·3 + x2: with x0 = 0 (its only state), (x1, x2) = (0, 1) is impossible.
  b.addFactor([0, 1, 2], [0, -Infinity, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]);
  const m = b.build();
  // Observing x0 = 1 contradicts its unary factor: found by the plan, named in the refusal.
  const a = exactInference(engine, applyEvidence(m, new Map([[0, 1]])).model);
  assert.equal(a.logZ, -Infinity);
  assert.throws(() => a.marginals, (e: unknown) => e instanceof EngineError && /variable 0/.test(e.message) && /zero potential/.test(e.message));
  // Observing x1 = 0, x2 = 1 is excluded only by the arity-3 factor: found by the enumeration.
  const c = exactInference(engine, applyEvidence(m, new Map([[1, 0], [2, 1]])).model);
  assert.equal(c.logZ, -Infinity);
  assert.throws(() => c.marginals, EngineError);
  // Through infer (what the CLI runs): an EngineError, never NaN.
  assert.throws(() => infer(engine, applyEvidence(m, new Map([[1, 0], [2, 1]])).model, { method: 'exact' }), EngineError);
  assert.ok(Number.isFinite(exactInference(engine, applyEvidence(m, new Map([[1, 0], [2, 2]])).model).logZ));
  const allZero = new ModelBuilder([2, 2, 2]).addFactor([2, 0, 1], new Array(8).fill(-Infinity)).build();
  assert.throws(() => infer(engine, allZero, { method: 'exact' }), (e: unknown) => e instanceof EngineError && /factor 0/.test(e.message) && /zero everywhere/.test(e.message));
});

test('past the limit: enumeration refuses within 0.1 s naming the configurations; bucket elimination solves the chain', () => {
  const n = 60;
  const b = new ModelBuilder(new Array(n).fill(2));
  for (let v = 0; v + 2 < n; v++) b.addFactor([v, v + 1, v + 2], [0, 1, 1, 0, 1, 0, 0, 1]);
  const m = b.build();
  const t0 = process.cpuUsage(); // CPU time: wall time stretches on a loaded machine
  assert.throws(() => exactInference(engine, m, { method: 'enumeration' }), (e: unknown) => e instanceof EngineError && /2\^60 configurations/.test(e.message) && /past the limit of 2\^30/.test(e.message));
  const used = process.cpuUsage(t0), ms = (used.user + used.system) / 1000;
  assert.ok(ms < 100, `refused in ${ms.toFixed(1)} ms of CPU time`);
  // Treewidth 2: every ordering gives the same log Z and marginals.
  const r = exactInference(engine, m);
  assert.equal(r.algorithm, 'bucket');
  assert.equal(r.treewidth, 2);
  const nat = exactInference(engine, m, { method: 'bucket', orderings: ['natural'] });
  assert.ok(Math.abs(r.logZ - nat.logZ) < 1e-9 * Math.abs(r.logZ));
  for (let v = 0; v < n; v++) for (let k = 0; k < 2; k++) assert.ok(Math.abs(r.marginals[v][k] - nat.marginals[v][k]) < 1e-12);
});
