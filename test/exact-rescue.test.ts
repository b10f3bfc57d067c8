// The rescue search (bindings/exact/exact.ts, rescueTreeSearch): a greedy plan past maxFlops by at
// most 2^10 gets 10⁹ words of tree search, in doubling stages stopped when three stages in a row gain
// nothing. Models the search cannot bring within the limit (a 30×30 Ising grid, a dense random
// pairwise model of 45 variables: treewidth 30–33, the full budget gains nothing there either) are
// refused after 1/16 of the budget from each start (the best greedy order's, then RCM's); one it can
// (a random 3-regular graph, greedy 2^36.7 configurations) still gets the whole budget and a plan
// within the limit. A 40×40 grid, past the range, gets no search and is refused within 0.1 s.
// Renumbered linkage_11 and 2bitcomp_5.cnf: the probe past the range, the second start from RCM's
// order, and min-fill run on small models whatever min-degree found. The rescue-range refusals'
// times are asserted as regression guards (a warm call below 0.25 s of CPU time: 0.3–0.4 s before
// the planning kernels moved into the engine, 0.03–0.07 s since); bench:exact-refusal measures them
// against the 0.1 s target.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { bucketEliminationPlan, exactInference, RESCUE_WORK, rescueStages, slicedBucketPlan } from '../bindings/exact/exact.ts';
import { loadModelFile } from '../bindings/io/files.ts';
import { readMAR, readPR } from '../bindings/io/formats.ts';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { EngineError } from '../bindings/core/errors.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import { atPublishedDigits, dataDir, mulberry32, randomModel, regular3, renumbered } from './helpers.ts';

const engine = await loadEngine();

const cpuSeconds = (f: () => void): number => {
  const c0 = process.cpuUsage();
  f();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1e6;
};

for (const [name, make] of [['dense random pairwise model, 45 variables', () => randomModel(mulberry32(4501), 45, { density: 0.5 })], ['30×30 Ising grid', () => isingLattice({ shape: [30, 30], J: (i, j) => Math.sin(i + 7 * j) / 2, h: 0.1 })]] as const) {
  const model = make();
  test(`${name} within the rescue range: refused after three stages from each start (1/16 of the rescue budget each), with the memory and configurations its best order needs`, () => {
    const greedy = bucketEliminationPlan(model, { orderSearchWork: 0 });
    assert.ok(greedy.plan.flops > 2 ** 34 && greedy.plan.flops <= 2 ** 44, `greedy plan 2^${Math.log2(greedy.plan.flops)}: within the rescue range`);
    // CPU time, not wall time: planning (greedy orders, the junction tree's and bucket elimination's,
    // the order annealing, three tree-search stages) and the refusal; the first call, then warm ones,
    // each on a model object of its own (the same object's plan would come from the plan cache).
    let message = '';
    const refuse = (m = make()): number =>
      cpuSeconds(() => {
        try {
          exactInference(engine, m);
        } catch (e) {
          if (e instanceof EngineError) message = e.message;
          else throw e;
        }
      });
    const first = refuse();
    assert.match(message, /treewidth \d+, a largest message of 2\^\d+/);
    assert.match(message, /GB|TB/);
    assert.match(message, /configurations streamed/);
    const again = message;
    const warm = [refuse(), refuse(), refuse()].sort((a, b) => a - b)[1];
    assert.equal(message, again, 'the same refusal every time');
    console.log(`# ${name}: greedy 2^${Math.log2(greedy.plan.flops).toFixed(1)}, refused in ${first.toFixed(3)} s of CPU time, then ${warm.toFixed(3)} s (median of 3)`);
    assert.ok(first < 0.8, `first refusal in ${first.toFixed(3)} s of CPU time`);
    assert.ok(warm < 0.25, `warm refusals in ${warm.toFixed(3)} s of CPU time (median of 3)`);
    const search = bucketEliminationPlan(model).search!;
    // Three stages from the best greedy order; when that is not RCM's (the dense model: min-fill),
    // three more from RCM's, which stops there, its plan still behind the first start's.
    const starts = greedy.name.startsWith('rcm') ? 1 : 2;
    assert.equal(search.treeStages, 3 * starts, 'stopped after three stages without progress from each start');
    assert.ok(search.treeWork <= (starts * RESCUE_WORK) / 16 + 1e6, `${search.treeWork} words of tree search`);
  });
}

test('a random 3-regular graph of 190 variables (greedy 2^36.7): the first stages gain nothing, the full rescue budget brings it within the limit', () => {
  const model = regular3(190, 4);
  const sp = slicedBucketPlan(model);
  const s = sp.choice.search!;
  assert.ok(s.greedyFlops > 2 ** 34 && s.greedyFlops <= 2 ** 44, `greedy plan 2^${Math.log2(s.greedyFlops)}`);
  assert.equal(sp.fits, true, `plan 2^${Math.log2(sp.sliced.flops)}`);
  assert.equal(s.by, 'tree');
  assert.equal(s.treeStages, 7, 'every stage ran');
  console.log(`# 3-regular, 190 variables: greedy 2^${Math.log2(s.greedyFlops).toFixed(1)}, tree search 2^${Math.log2(sp.sliced.flops).toFixed(1)} in ${sp.sliced.slices} slice(s)`);
});

test('under a lower maxFlops the rescue runs fewer stages: Pedigree_12 refused after three (10⁶), rescued in three (10⁷) to the published digits', async () => {
  // Stages whose work up to their end is within maxFlops / 16 words, at least three; all seven at the default limit.
  assert.deepEqual([2 ** 34, 1.6e10, 8e9, 2e9, 1e9, 1e6].map(rescueStages), [7, 7, 6, 4, 3, 3]);
  const path = join(dataDir(), 'uai2014-more', 'Pedigree_12.uai');
  const { model } = await loadModelFile(path);
  // 10⁶: the search gains bits in every stage (the full budget brings 2^29.6 to 2^22.1) but not the
  // last 2.2; it stops after the first three stages, 1/16 of the budget, instead of running all seven.
  const low = bucketEliminationPlan(model, { maxFlops: 1e6 });
  assert.ok(low.search!.greedyFlops > 1e6 && low.search!.greedyFlops <= 2 ** 10 * 1e6, `greedy plan 2^${Math.log2(low.search!.greedyFlops)}: in the rescue range`);
  assert.equal(low.feasible, false);
  assert.equal(low.search!.treeStages, 3);
  assert.ok(low.search!.treeWork <= RESCUE_WORK / 16 + 1e6, `${low.search!.treeWork} words of tree search`);
  assert.throws(() => exactInference(engine, model, { maxFlops: 1e6 }), (e: unknown) => e instanceof EngineError && /configurations streamed/.test(e.message));
  // 10⁷: the first stage already finds a plan within the limit; three stages, and it runs.
  const r = exactInference(engine, model, { maxFlops: 1e7 });
  assert.equal(r.planSearch, 'tree');
  assert.ok(r.flops <= 1e7, `${r.flops} configurations`);
  const published = readPR(readFileSync(`${path}.PR`, 'utf8'));
  assert.ok(Math.abs(r.logZ / Math.LN10 - published) <= 0.5e-5 * Math.max(1, Math.abs(published)), `log10 Z ${r.logZ / Math.LN10} vs ${published}`);
  assert.equal(bucketEliminationPlan(model, { maxFlops: 1e7 }).search!.treeStages, 3);
});

test('the order annealing alone (treeSearch: false) in the rescue range runs in the same stages: linkage_11 refused after 1/16 of the budget', async () => {
  const { model } = await loadModelFile(join(dataDir(), 'uai2014-more', 'linkage_11.uai'));
  const plan = bucketEliminationPlan(model, { treeSearch: false });
  const s = plan.search!;
  assert.ok(s.greedyFlops > 2 ** 34 && s.greedyFlops <= 2 ** 44, `greedy plan 2^${Math.log2(s.greedyFlops)}: in the rescue range`);
  assert.equal(plan.feasible, false);
  assert.equal(s.treeStages, 0, 'no tree search');
  // All of the budget was 10⁹ words of annealing (0.4–0.5 s); three stages that gain nothing take 1/16.
  // (each stage may pass its share by the last order it evaluates: a few 10⁵ words here)
  assert.ok(s.work > 0 && s.work <= RESCUE_WORK / 16 + 4e6, `${s.work} words of annealing`);
  assert.throws(() => exactInference(engine, model, { treeSearch: false }), (e: unknown) => e instanceof EngineError && /rcm \+ annealing|configurations streamed/.test(e.message));
});

test('a 40×40 Ising grid (greedy plan past the rescue range) is refused by auto within 0.1 s of CPU time, the orders computed once for the junction tree and bucket elimination', () => {
  const model = isingLattice({ shape: [40, 40], J: (i, j) => Math.cos(i + 3 * j) / 2, h: 0.1 });
  const greedy = bucketEliminationPlan(model, { orderSearchWork: 0 });
  assert.ok(greedy.plan.flops > 2 ** 44, `greedy plan 2^${Math.log2(greedy.plan.flops)}: past the rescue range`);
  const refuse = (): string => {
    try {
      exactInference(engine, model);
    } catch (e) {
      if (e instanceof EngineError) return e.message;
      throw e;
    }
    return '';
  };
  refuse(); // the planning code compiled once (the grid above ran other paths)
  let message = '';
  const seconds = cpuSeconds(() => (message = refuse()));
  // The junction tree's refusal, then bucket elimination's, both from the same best order.
  assert.match(message, /^treewidth 40: the largest clique table would have 2\^41 entries/);
  assert.match(message, /treewidth 40, a largest message of 2\^40/);
  console.log(`# 40×40 Ising grid: greedy 2^${Math.log2(greedy.plan.flops).toFixed(1)}, refused in ${seconds.toFixed(3)} s of CPU time`);
  assert.ok(seconds < 0.1, `refused in ${seconds.toFixed(3)} s of CPU time`);
});

test('linkage_11 renumbered: past the rescue range the probe brings it within reach (seed 7), a start caught in its basin is tried again from RCM (seed 8); both to the published digits', async () => {
  const path = join(dataDir(), 'uai2014-more', 'linkage_11.uai');
  const { model } = await loadModelFile(path);
  const published = readPR(readFileSync(`${path}.PR`, 'utf8'));
  const mar = readMAR(readFileSync(`${path}.MAR`, 'utf8'));
  for (const [seed, why] of [[7, 'probe'], [8, 'second start']] as const) {
    const { model: m, perm } = renumbered(model, seed);
    const s = bucketEliminationPlan(m).search!;
    if (why === 'probe') {
      // Every greedy plan past 2^10 × the limit: before the probe, refused in ≈ 20 ms with no search.
      assert.ok(s.greedyFlops > 2 ** 44 && s.greedyFlops <= 2 ** 54, `greedy plan 2^${Math.log2(s.greedyFlops)}: past the rescue range, within the probe's`);
    } else {
      // The best greedy order's search stands still short of the limit (4 stages), RCM's runs all 7.
      assert.ok(s.treeStages > 7, `${s.treeStages} stages: two searches`);
    }
    const r = exactInference(engine, m);
    assert.equal(r.planSearch, 'tree');
    assert.ok(r.flops <= 2 ** 34, `${r.flops} configurations`);
    assert.ok(Math.abs(r.logZ / Math.LN10 - published) <= 0.5e-5 * Math.abs(published), `seed ${seed} (${why}): log10 Z ${r.logZ / Math.LN10} vs ${published}`);
    mar.forEach((row, v) => row.forEach((p, k) => assert.ok(atPublishedDigits(r.marginals[perm[v]][k], p), `seed ${seed}: variable ${v} (now ${perm[v]}) state ${k}: ${r.marginals[perm[v]][k]} vs ${p}`)));
    console.log(`# linkage_11 renumbered (seed ${seed}, ${why}): greedy 2^${Math.log2(s.greedyFlops).toFixed(1)}, ${s.treeStages} stages, ${r.ordering}: 2^${Math.log2(r.flops).toFixed(1)} configurations`);
  }
});

test(`a random 3-regular graph of 196 variables renumbered: min-fill's start stands still, RCM's, behind it after three stages but gaining fast, goes on and brings the plan within the limit`, () => {
  const sp = slicedBucketPlan(renumbered(regular3(196, 7), 3).model);
  const s = sp.choice.search!;
  assert.equal(sp.fits, true, sp.refusal);
  assert.equal(sp.choice.name, 'rcm + tree search');
  assert.equal(s.treeStages, 3 + 7, 'three stages from min-fill, all seven from RCM');
  assert.ok(sp.sliced.flops <= 2 ** 34, `plan 2^${Math.log2(sp.sliced.flops)}`);
});

test('2bitcomp_5.cnf renumbered (seeds 1–3): min-fill is run on a small model even when min-degree is far past the limit, and the search brings its plan within it', async () => {
  const { model } = await loadModelFile(join(dataDir(), 'uai2014-more', '2bitcomp_5.cnf.uai'));
  for (const seed of [1, 2, 3]) {
    // Min-degree's largest clique is past 2^40 here; min-fill's 2^35–2^36 (skipped before: refused in 1 ms).
    const sp = slicedBucketPlan(renumbered(model, seed).model);
    assert.equal(sp.fits, true, `seed ${seed}: ${sp.refusal}`);
    assert.match(sp.choice.name, /^(weighted)?minfill/);
    assert.ok(sp.sliced.flops <= 2 ** 34 && sp.choice.search!.greedyFlops <= 2 ** 44, `seed ${seed}: greedy 2^${Math.log2(sp.choice.search!.greedyFlops)}, plan 2^${Math.log2(sp.sliced.flops)}`);
  }
});
