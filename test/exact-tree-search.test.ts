// The contraction-tree search (bindings/exact/tree-search.ts): rotations keep a valid tree (every
// variable summed at exactly one node; the order read off it runs bucket elimination to the
// brute-force log Z and marginals on random factor graphs of arity ≤ 4 with fixed variables and
// zeros), the start tree reproduces the start order's cliques, the search never returns an order
// worse than its start and the planner never a plan worse than the order search's alone, the same
// seed gives the same order, the work budget holds in CPU time, and the search runs on the planner's
// own engine instance.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { plannerEngine, PLANNER_KEEP_BYTES } from '../bindings/core/engine.ts';
import { bucketEliminationPlan, exactInference, orderSearchWork, searchSetup } from '../bindings/exact/exact.ts';
import { runBucketElimination } from '../bindings/exact/bucket-elimination.ts';
import { bucketPlan, interactionGraph } from '../bindings/exact/bucket-plan.ts';
import { fixedStates } from '../bindings/exact/enumeration.ts';
import { orderCost } from '../bindings/exact/order-search.ts';
import { bucketTreeOrder, searchContractionTree, type ContractionGraph } from '../bindings/exact/tree-search.ts';
import { infer } from '../bindings/infer.ts';
import { Model } from '../bindings/core/model.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import { bruteForce, hiddenGrid, mulberry32, randomFactorGraph } from './helpers.ts';

const engine = await loadEngine();

function graphOf(m: Model): ContractionGraph {
  const { fixed } = fixedStates(m);
  const scopes = Array.from({ length: m.nFactors }, (_, f) => m.scope(f).filter((v) => fixed[v] < 0));
  return { ...interactionGraph(m, fixed), scopes };
}

function maxDiff(a: { logZ: number; marginals: Float64Array[] }, b: { logZ: number; marginals: Float64Array[] }): number {
  let e = Math.abs(a.logZ - b.logZ) / Math.max(1, Math.abs(b.logZ));
  a.marginals.forEach((m, v) => m.forEach((p, k) => (e = Math.max(e, Math.abs(p - b.marginals[v][k])))));
  return e;
}

test('rotations keep a valid tree: each order read off a searched tree is a permutation and gives the brute-force log Z and marginals', () => {
  const rand = mulberry32(5501);
  let checked = 0, moved = 0;
  for (let t = 0; t < 24; t++) {
    // Arity ≤ 4, cardinalities 1–4 (cardinality 1: fixed variables), zeros, Z > 0 required below.
    const m = randomFactorGraph(rand, 8 + (t % 5), { cards: t % 3 === 0 ? [1, 2, 3, 4] : [2, 3], maxArity: 4, factors: 10 + (t % 7), zeros: t % 2 ? 0.2 : 0 });
    const truth = bruteForce(m);
    if (!(truth.logZ > -Infinity)) continue;
    const g = graphOf(m);
    const { fixed, impossible } = fixedStates(m);
    const start = bucketEliminationPlan(m, { orderSearchWork: 0, orderRestarts: 0 }).plan.order;
    const r = searchContractionTree(g, start, { maxLog2Message: t % 4 === 0 ? 3 : 30, work: 2e5, restarts: 2, seed: t });
    assert.ok(r.accepted > 0 && r.proposals >= r.accepted);
    for (const order of r.treeOrders) {
      assert.deepEqual([...order].sort((a, b) => a - b), Array.from({ length: m.n }, (_, v) => v), 'a permutation of the variables');
      const got = runBucketElimination(engine, m, bucketPlan(m, order, fixed, impossible));
      assert.ok(maxDiff(got as { logZ: number; marginals: Float64Array[] }, truth) < 1e-9, `model ${t}: error ${maxDiff(got as { logZ: number; marginals: Float64Array[] }, truth)}`);
      if (orderCost(g, order).log2Flops !== orderCost(g, start).log2Flops) moved++;
      checked++;
    }
  }
  assert.ok(checked >= 30 && moved >= 5, `${checked} orders checked, ${moved} differing from the start`);
});

test('the start order\'s own bucket tree reads back as an order with the same cliques', () => {
  const rand = mulberry32(5502);
  for (let t = 0; t < 10; t++) {
    const m = randomFactorGraph(rand, 25 + 3 * t, { cards: [2, 3], maxArity: 3, factors: 35 + 4 * t });
    const g = graphOf(m);
    const greedy = bucketEliminationPlan(m, { orderSearchWork: 0, orderRestarts: 0 }).plan;
    const back = bucketPlan(m, bucketTreeOrder(g, greedy.order), greedy.fixed, greedy.impossible);
    // The same cliques (in another order of the same tree): the same sums of integers.
    assert.deepEqual([back.flops, back.messageEntries, back.maxMessage, back.treewidth], [greedy.flops, greedy.messageEntries, greedy.maxMessage, greedy.treewidth]);
  }
});

test('never worse than the start or the order search; the same seed gives the same order; the planner reports the tree search', () => {
  const rand = mulberry32(5503);
  let improvedOnce = false;
  for (let t = 0; t < 6; t++) {
    const m = randomFactorGraph(rand, 40 + 8 * t, { cards: [2, 3], maxArity: 3, factors: 60 + 10 * t });
    const g = graphOf(m);
    const greedy = bucketEliminationPlan(m, { orderSearchWork: 0, orderRestarts: 0 });
    const start = orderCost(g, greedy.plan.order.length === m.n ? greedy.plan.order : Int32Array.from({ length: m.n }, (_, v) => v));
    const opts = { maxLog2Message: 40, work: 1e6, seed: t };
    const a = searchContractionTree(g, greedy.plan.order, opts), b = searchContractionTree(g, greedy.plan.order, opts);
    assert.deepEqual(Array.from(a.order), Array.from(b.order), 'deterministic');
    assert.deepEqual(a.treeOrders.map((o) => Array.from(o)), b.treeOrders.map((o) => Array.from(o)));
    assert.ok(a.log2Flops <= start.log2Flops + 1e-12, `tree search 2^${a.log2Flops} vs start 2^${start.log2Flops}`);
    assert.deepEqual(orderCost(g, a.order), { log2Flops: a.log2Flops, log2Message: a.log2Message, treewidth: a.treewidth });
    assert.equal(a.improved, a.log2Flops < start.log2Flops);
    // The planner: never worse than its order annealing (a quarter of the budget: the same search
    // as the order search alone given 10⁶ words), nor than the greedy order.
    const orderOnly = bucketEliminationPlan(m, { orderSearchWork: 1e6, orderRestarts: 0, treeSearch: false });
    const both = bucketEliminationPlan(m, { orderSearchWork: 4e6, orderRestarts: 0 });
    assert.ok(both.plan.flops <= orderOnly.plan.flops, `with tree search ${both.plan.flops} vs order search ${orderOnly.plan.flops}`);
    assert.ok(both.plan.flops <= greedy.plan.flops);
    assert.equal(both.search!.by === 'tree', both.name.endsWith('+ tree search'));
    assert.equal(orderOnly.search!.by === 'tree', false);
    if (both.search!.by === 'tree') {
      improvedOnce = true;
      const r = exactInference(engine, m, { orderSearchWork: 4e6, orderRestarts: 0, method: 'bucket' });
      assert.equal(r.planSearch, 'tree');
      assert.equal(infer(engine, m, { method: 'exact', exact: { orderSearchWork: 4e6, orderRestarts: 0, method: 'bucket' } }).diagnostics.planSearch, 'tree');
    }
  }
  assert.ok(improvedOnce, 'the tree search beat the order search at least once');
});

test('the work budget: reported work within one sweep of it, CPU time within 3× a nominal 10⁹ words per second (the engine runs ≈ 2·10⁹ here)', () => {
  const m = randomFactorGraph(mulberry32(5504), 300, { cards: [2, 3], maxArity: 3, factors: 420 });
  const g = graphOf(m);
  const start = bucketEliminationPlan(m, { orderSearchWork: 0, orderRestarts: 0 }).plan.order;
  for (const work of [2e7, 1e8]) {
    const c0 = process.cpuUsage();
    const r = searchContractionTree(g, start, { maxLog2Message: 26, work });
    const c = process.cpuUsage(c0), seconds = (c.user + c.system) / 1e6;
    assert.ok(r.work <= 1.05 * work && r.work >= 0.5 * work, `work ${r.work} for a budget of ${work}`);
    assert.ok(seconds <= (3 * work) / 1e9 + 0.05, `${seconds.toFixed(3)} s of CPU time for ${work} words`);
  }
  // No budget: no search, the start order back.
  const none = searchContractionTree(g, start, { maxLog2Message: 26, work: 0 });
  assert.equal(none.improved, false);
  assert.equal(none.proposals, 0);
});

test("the planner's kernels run on an instance of their own: the caller's engine memory is untouched, and a Node process that loaded no engine plans all the same", () => {
  const m = randomFactorGraph(mulberry32(5505), 200, { cards: [2, 3], maxArity: 3, factors: 300 });
  const before = { bytes: engine.memoryBytes, inUse: engine.bytesInUse };
  const plan = bucketEliminationPlan(m, { orderSearchWork: 2e7 });
  assert.ok(plan.search && plan.search.treeWork > 0, 'the tree search ran');
  assert.deepEqual({ bytes: engine.memoryBytes, inUse: engine.bytesInUse }, before);
  // A fresh process, no loadEngine: the planner reads build/release.wasm itself, and plans the same.
  const script = `
    import { bucketEliminationPlan } from './bindings/exact/exact.ts';
    import { mulberry32, randomFactorGraph } from './test/helpers.ts';
    const p = bucketEliminationPlan(randomFactorGraph(mulberry32(5505), 200, { cards: [2, 3], maxArity: 3, factors: 300 }), { orderSearchWork: 2e7 });
    console.log(JSON.stringify({ order: Array.from(p.plan.order), flops: p.plan.flops, treeWork: p.search.treeWork }));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: fileURLToPath(new URL('..', import.meta.url)), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { order: Array.from(plan.plan.order), flops: plan.plan.flops, treeWork: plan.search.treeWork });
});

test('a plan that grew the planner past PLANNER_KEEP_BYTES drops it when done; the next plan makes another and plans the same; small plans keep it', () => {
  const m = randomFactorGraph(mulberry32(5506), 120, { cards: [2, 3], maxArity: 3, factors: 180 });
  const plan = () => {
    const p = bucketEliminationPlan(m, { orderSearchWork: 2e7 });
    return { order: Array.from(p.plan.order), flops: p.plan.flops, treeWork: p.search!.treeWork };
  };
  const first = plan();
  const kept = plannerEngine();
  exactInference(engine, m, { method: 'bucket' });
  assert.equal(plannerEngine(), kept, 'a small plan keeps the instance');
  // A 300×300 grid's orderings grow the planner to 64 MB before the refusal.
  // (Hidden: by its layout or its pair graph the grid's own bound would refuse it before any ordering.)
  const grid = hiddenGrid(isingLattice({ shape: [300, 300], J: () => 0.3, h: 0.1 }), 300, 1);
  assert.throws(() => exactInference(engine, grid, { method: 'bucket' }), /treewidth/);
  const after = plannerEngine();
  assert.notEqual(after, kept, 'the grown instance was dropped');
  assert.ok(after.memoryBytes <= PLANNER_KEEP_BYTES, `${after.memoryBytes} bytes`);
  assert.deepEqual(plan(), first);
});

test('the searches run only when building their bitsets fits their budget: a 10⁵-variable strip of treewidth 8 is planned greedily (it ran the planner out of memory), a 2000×10 strip too, small models keep both searches', () => {
  const strip = (length: number, width: number): Model => isingLattice({ shape: [length, width], J: (i, j) => Math.sin(i + 7 * j) / 2, h: 0.1 });
  for (const [length, width] of [[12500, 8], [2000, 10]]) {
    const model = strip(length, width);
    const c = bucketEliminationPlan(model);
    assert.ok(c.search, `${length}×${width}: the plan (2^${Math.log2(c.plan.flops).toFixed(1)}) is expensive enough for a search budget`);
    const setup = searchSetup(model.n, model.nFactors);
    // Building the annealing's rows alone would cost more than the whole search budget.
    assert.ok(setup.annealWords > orderSearchWork(c.search.greedyFlops, 2 ** 34), `${setup.annealWords} words of set-up`);
    assert.deepEqual(c.search.skipped, ['annealing', 'tree']);
    assert.equal(c.search.by, 'greedy');
    assert.equal(c.plan.flops, c.search.greedyFlops);
    assert.equal(c.plan.treewidth, width);
  }
  // A model whose searches fit: both run.
  const g = randomFactorGraph(mulberry32(31), 60, { cards: [2, 3], maxArity: 3, factors: 110 });
  const c = bucketEliminationPlan(g, { orderSearchWork: 2e6 });
  assert.deepEqual(c.search!.skipped, []);
  assert.ok(c.search!.evaluations > 1 && c.search!.treeProposals > 0);
});
