// Bucket elimination on factor graphs of any arity (bindings/exact/bucket-elimination.ts): log Z
// and every marginal against brute force on random models (arities 1–4, cardinalities 1–5, zeros,
// evidence, log-potentials of ±3000), against libDAI's testfast.fg and a published UAI 2014
// instance; the refusal within 0.1 s naming the message size, memory and work the best order needs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { exactInference, exactMAP, bucketEliminationPlan } from '../bindings/exact/exact.ts';
import { applyEvidence, readFG, readMAR, readPR, readUAI } from '../bindings/io/formats.ts';
import { ModelBuilder, type Model } from '../bindings/core/model.ts';
import { EngineError } from '../bindings/core/errors.ts';
import { bruteForce, dataDir, mulberry32, randomFactorGraph } from './helpers.ts';
import { bucketPlan } from '../bindings/exact/bucket-plan.ts';
import { fixedStates } from '../bindings/exact/enumeration.ts';

const engine = await loadEngine();

function maxError(m: Model, r: { logZ: number; marginals: Float64Array[] }): number {
  const want = bruteForce(m);
  let e = Math.abs(r.logZ - want.logZ) / Math.max(1, Math.abs(want.logZ));
  for (let v = 0; v < m.n; v++) for (let k = 0; k < m.card[v]; k++) e = Math.max(e, Math.abs(r.marginals[v][k] - want.marginals[v][k]));
  return e;
}

test('random factor graphs (arities 1–4, cardinalities 1–5, zeros, evidence, ±3000 nats): bucket elimination = brute force to 1e-9', () => {
  const rand = mulberry32(1101);
  const cards = [[2], [1, 2, 3], [3, 5], [2, 4], [1, 5]];
  let zero = 0, huge = 0, observed = 0;
  for (let t = 0; t < 150; t++) {
    const scale = t % 10 === 0 ? 3000 : 2;
    let m = randomFactorGraph(rand, 2 + (t % 6), { cards: cards[t % 5], maxArity: 4, factors: 2 + (t % 7), zeros: t % 3 === 0 ? 0.3 : 0, scale });
    if (t % 4 === 1) {
      const ev = new Map<number, number>();
      for (let v = 0; v < m.n; v += 3) ev.set(v, Math.floor(rand() * m.card[v]));
      m = applyEvidence(m, ev).model;
      observed++;
    }
    for (const orderings of [undefined, ['natural' as const]]) {
      const r = exactInference(engine, m, { method: 'bucket', orderings });
      assert.equal(r.algorithm, 'bucket');
      const want = bruteForce(m);
      if (!Number.isFinite(want.logZ)) {
        assert.equal(r.logZ, -Infinity, `model ${t}`);
        assert.throws(() => r.marginals, EngineError);
        zero++;
        continue;
      }
      if (scale > 100 && Math.abs(want.logZ) > 700) huge++;
      const e = maxError(m, r);
      assert.ok(e <= 1e-9, `model ${t} (${orderings ?? 'best'} order): error ${e}`);
    }
  }
  assert.ok(zero >= 2 && huge >= 10 && observed >= 30, `${zero} zero-Z, ${huge} huge-range, ${observed} with evidence`);
});

test('bucket elimination past the work limit even sliced: refused within 0.1 s of CPU time naming message, memory and work', () => {
  // A 12×12 grid of cardinality 8: treewidth 12, messages of 8^12 = 2^36 entries.
  const L = 12;
  const b = new ModelBuilder(new Array(L * L).fill(8));
  const t8 = Array.from({ length: 64 }, (_, k) => ((k * 7) % 5) / 5);
  for (let r = 0; r < L; r++) for (let c = 0; c < L; c++) {
    if (c + 1 < L) b.addFactor([r * L + c, r * L + c + 1], t8);
    if (r + 1 < L) b.addFactor([r * L + c, (r + 1) * L + c], t8);
  }
  const m = b.build();
  // CPU time, not wall time: the refusal's own work, whatever else the machine runs.
  const c0 = process.cpuUsage();
  assert.throws(
    () => exactInference(engine, m, { method: 'bucket' }),
    (e: unknown) => e instanceof EngineError && /treewidth \d+, a largest message of 2\^\d+/.test(e.message) && /GB|TB/.test(e.message) && /configurations streamed in all slices/.test(e.message),
  );
  const c = process.cpuUsage(c0);
  assert.ok(c.user + c.system < 100_000, `refused in ${((c.user + c.system) / 1000).toFixed(1)} ms of CPU time`);
  const plan = bucketEliminationPlan(m);
  assert.equal(plan.feasible, false);
  assert.ok(plan.plan.maxMessage > 2 ** 26);
});

test("libDAI testfast.fg by bucket elimination: log Z = 14.3282332811", () => {
  const model = readFG(readFileSync(join(dataDir(), 'libdai', 'testfast.fg'), 'utf8'), 'testfast.fg');
  const r = exactInference(engine, model, { method: 'bucket' });
  assert.ok(Math.abs(r.logZ - 14.3282332811) < 1e-9, `log Z ${r.logZ}`);
  const en = exactInference(engine, model, { method: 'enumeration' });
  for (let v = 0; v < model.n; v++) for (let k = 0; k < model.card[v]; k++) assert.ok(Math.abs(r.marginals[v][k] - en.marginals[v][k]) < 1e-12);
});

test('UAI 2014 Grids_12 (pairwise) by bucket elimination: the published log10 Z and marginals', () => {
  const path = join(dataDir(), 'uai2014', 'Grids_12.uai');
  const model = readUAI(readFileSync(path, 'utf8'), path);
  const r = exactInference(engine, model, { method: 'bucket' });
  assert.ok(Math.abs(r.logZ / Math.LN10 - readPR(readFileSync(`${path}.PR`, 'utf8'))) <= 0.5e-3, `log10 Z ${r.logZ / Math.LN10}`);
  const mar = readMAR(readFileSync(`${path}.MAR`, 'utf8'));
  mar.forEach((row, v) => row.forEach((p, k) => assert.ok(Math.abs(r.marginals[v][k] - p) <= 2e-6, `x${v}[${k}]`)));
});

test('block layouts of 63- to 70-state variables beside 2- and 6-state ones (the layout cache keyed both ways) = brute force', () => {
  // The cache of each table's runs over a block is keyed by (cardinality, stride): a small integer
  // below 64 states, a wider number from 64; the two must never meet (stride · 64 + card read for a
  // 70-state variable would be a 6-state one's at stride 2).
  const rand = mulberry32(7070);
  const shapes = [[70, 6, 2, 63], [64, 2, 6, 70], [63, 64, 2], [6, 70, 2, 2, 6], [2, 70, 6, 64]];
  for (let t = 0; t < 10; t++) {
    const card = shapes[t % shapes.length], n = card.length;
    const b = new ModelBuilder(card);
    for (let v = 0; v < n; v++) b.addUnary(v, Array.from({ length: card[v] }, () => 2 * rand() - 1));
    for (let f = 0; f < 2 * n; f++) {
      const scope = [Math.floor(rand() * n)];
      while (scope.length < 2 + (f % 2)) {
        const v = Math.floor(rand() * n);
        if (!scope.includes(v)) scope.push(v);
      }
      const size = scope.reduce((s, v) => s * card[v], 1);
      b.addFactor(scope, Array.from({ length: size }, () => (t % 3 === 0 && rand() < 0.2 ? -Infinity : 2 * rand() - 1)));
    }
    const m = b.build();
    const want = bruteForce(m);
    assert.ok(Number.isFinite(want.logZ));
    for (const orderings of [undefined, ['natural' as const], ['rcm' as const]]) {
      const r = exactInference(engine, m, { method: 'bucket', orderings });
      const e = maxError(m, r);
      assert.ok(e <= 1e-9, `model ${t} (cardinalities ${Array.from(m.card).join(', ')}): error ${e}`);
    }
  }
});

test('randomised order restarts: never a costlier plan, the same plan every time, the same log Z', () => {
  const rand = mulberry32(1105);
  const m = randomFactorGraph(rand, 40, { cards: [2, 3], maxArity: 3, factors: 70, scale: 1 });
  const base = bucketEliminationPlan(m, { orderRestarts: 0 });
  const a = bucketEliminationPlan(m, { orderRestarts: 12 });
  const b = bucketEliminationPlan(m, { orderRestarts: 12 });
  assert.ok(a.plan.flops <= base.plan.flops, `${a.plan.flops} vs ${base.plan.flops}`);
  assert.deepEqual(a.plan.order, b.plan.order);
  assert.equal(a.name, b.name);
  const r0 = exactInference(engine, m, { method: 'bucket', orderRestarts: 0 });
  const r1 = exactInference(engine, m, { method: 'bucket', orderRestarts: 12 });
  assert.ok(Math.abs(r0.logZ - r1.logZ) < 1e-9 * Math.abs(r0.logZ));
});

test('cliques past one block (outer separator digits): dense 5-state models, linear and log-space streams, = brute force; MAP = the enumerated maximum', () => {
  // 8 variables of 5 states, every pair coupled: separators of 5^6 > 4096 configurations, so the
  // block kernels walk outer separator digits; scale 1 runs linear cliques, scale 400 log-space ones.
  const rand = mulberry32(2718);
  for (const scale of [1, 400]) {
    const n = 8, b = new ModelBuilder(new Array(n).fill(5));
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) b.addFactor([j, i], Array.from({ length: 25 }, () => scale * (rand() - 0.5)));
    b.addFactor([3], [0, -Infinity, 0.5, 0, 1]);
    const m = b.build();
    const r = exactInference(engine, m, { method: 'bucket' });
    assert.equal(r.algorithm, 'bucket');
    assert.ok(r.treewidth >= 6, `treewidth ${r.treewidth}`);
    // Enumeration (5^8 configurations): log Z, marginals and the maximum.
    const x = new Int32Array(n), lp = new Float64Array(5 ** n);
    let best = -Infinity;
    for (let c = 0; c < lp.length; c++) {
      for (let v = 0, k = c; v < n; v++, k = Math.floor(k / 5)) x[v] = k % 5;
      best = Math.max(best, (lp[c] = m.logPotential(x)));
    }
    let z = 0;
    const marg = Array.from({ length: n }, () => new Float64Array(5));
    for (let c = 0; c < lp.length; c++) {
      const w = Math.exp(lp[c] - best);
      z += w;
      for (let v = 0, k = c; v < n; v++, k = Math.floor(k / 5)) marg[v][k % 5] += w;
    }
    const logZ = best + Math.log(z);
    let e = Math.abs(r.logZ - logZ) / Math.max(1, Math.abs(logZ));
    for (let v = 0; v < n; v++) for (let k = 0; k < 5; k++) e = Math.max(e, Math.abs(r.marginals[v][k] - marg[v][k] / z));
    assert.ok(e <= 1e-9, `scale ${scale}: error ${e}`);
    // MAP by max-product elimination against the enumerated maximum.
    const map = exactMAP(engine, m, { method: 'bucket' });
    assert.ok(Math.abs(map.logPotential - best) <= 1e-9 * Math.max(1, Math.abs(best)), `scale ${scale}: MAP ${map.logPotential}, max ${best}`);
  }
});

test('bucketPlan: the sizes a refusal reads (the pass that reuses a separator\'s room once its parent has read it) are those of the separators the second pass keeps', () => {
  // A 120×120 grid in natural order (Σ|S_v| ≈ 1.7·10⁶ entries: the first pass compacts its
  // separators several times), its reverse, and a random factor graph with evidence-like fixed variables.
  const b = new ModelBuilder(new Array(120 * 120).fill(2));
  for (let r = 0; r < 120; r++) {
    for (let c = 0; c < 120; c++) {
      if (c + 1 < 120) b.addPairwise(r * 120 + c, r * 120 + c + 1, [0.3, 0, 0, 0.3]);
      if (r + 1 < 120) b.addPairwise(r * 120 + c, (r + 1) * 120 + c, [0.3, 0, 0, 0.3]);
    }
  }
  const grid = b.build();
  const fg = randomFactorGraph(mulberry32(31), 300, { maxArity: 3, cards: [1, 2, 3] });
  const cases: [Model, Int32Array][] = [
    [grid, Int32Array.from({ length: grid.n }, (_, v) => v)],
    [grid, Int32Array.from({ length: grid.n }, (_, v) => grid.n - 1 - v)],
    [fg, Int32Array.from({ length: fg.n }, (_, v) => v)],
  ];
  for (const [model, order] of cases) {
    const { fixed, impossible } = fixedStates(model);
    const plan = bucketPlan(model, order, fixed, impossible);
    const sizes = { treewidth: plan.treewidth, maxMessage: plan.maxMessage, messageEntries: plan.messageEntries, upFlops: plan.upFlops, parent: [...plan.parent] };
    let tw = 0, maxMessage = 1, entries = 0, up = 0, total = 0;
    const parent = new Array<number>(model.n).fill(-1);
    for (const v of plan.order) {
      const s = plan.sep[v];
      let size = 1;
      for (const u of s) size *= model.card[u];
      (tw = Math.max(tw, s.length)), (maxMessage = Math.max(maxMessage, size)), (entries += size), (up += size * model.card[v]), (total += s.length);
      if (s.length > 0) parent[v] = s[0];
    }
    assert.deepEqual(sizes, { treewidth: tw, maxMessage, messageEntries: entries, upFlops: up, parent });
    if (model === grid) assert.ok(total > 1.5e6, `Σ|S_v| = ${total}`);
  }
});

test('bucketPlan: every separator is its definition — the bucket\'s free factor variables and its children\'s separators, less itself, by position — on the one-child merge and the general path', () => {
  // Chains and strips in their natural order and a grid in RCM-like diagonal order: buckets with
  // one child (merged); random orders on random factor graphs with fixed variables, repeated
  // variables across a bucket's factors and factors of arity 8 (past the merge's 16 entries).
  const chain = new ModelBuilder(new Array(200).fill(3));
  for (let v = 0; v + 1 < 200; v++) chain.addPairwise(v, v + 1, new Array(9).fill(0.1));
  const strip = new ModelBuilder(new Array(400).fill(2));
  for (let r = 0; r < 100; r++) for (let c = 0; c < 4; c++) {
    if (c + 1 < 4) strip.addPairwise(4 * r + c, 4 * r + c + 1, [0.3, 0, 0, 0.3]);
    if (r + 1 < 100) strip.addPairwise(4 * r + c, 4 * r + c + 4, [0.3, 0, 0, 0.3]);
  }
  const cases: [Model, Int32Array][] = [];
  const natural = (m: Model): Int32Array => Int32Array.from({ length: m.n }, (_, v) => v);
  for (const m of [chain.build(), strip.build()]) cases.push([m, natural(m)], [m, natural(m).reverse()]);
  const rand = mulberry32(77);
  let big = 0;
  for (let k = 0; k < 12; k++) {
    let m = randomFactorGraph(mulberry32(600 + k), 20 + 5 * k, { maxArity: k % 3 === 0 ? 8 : 4, cards: [1, 2, 3], factors: 30 + 6 * k });
    if (k % 2 === 1) m = applyEvidence(m, new Map([[0, 0], [3, 0]])).model;
    for (let f = 0; f < m.nFactors; f++) if (m.arity(f) >= 7) big++;
    const perm = natural(m);
    for (let v = m.n - 1; v > 0; v--) {
      const w = Math.floor(rand() * (v + 1));
      [perm[v], perm[w]] = [perm[w], perm[v]];
    }
    cases.push([m, natural(m)], [m, perm]);
  }
  assert.ok(big > 0, 'some factors of arity ≥ 7');
  let merged = 0;
  for (const [model, order] of cases) {
    const { fixed, impossible } = fixedStates(model);
    const plan = bucketPlan(model, order, fixed, impossible);
    const pos = new Int32Array(model.n).fill(-1);
    plan.order.forEach((v, t) => (pos[v] = t));
    const want: number[][] = new Array(model.n);
    const children: number[][] = Array.from({ length: model.n }, () => []);
    for (const v of plan.order) {
      const set = new Set<number>();
      for (let f = 0; f < model.nFactors; f++) {
        const free = [...model.scope(f)].filter((u) => fixed[u] < 0);
        if (free.length > 0 && free.reduce((a, u) => (pos[u] < pos[a] ? u : a)) === v) free.forEach((u) => set.add(u));
      }
      for (const c of children[v]) want[c].forEach((u) => set.add(u));
      set.delete(v);
      want[v] = [...set].sort((a, b) => pos[a] - pos[b]);
      if (want[v].length > 0) children[want[v][0]].push(v);
      if (children[v].length === 1) merged++;
      assert.deepEqual([...plan.sep[v]], want[v], `variable ${v}`);
    }
  }
  assert.ok(merged > 1000, `${merged} one-child buckets`);
});
