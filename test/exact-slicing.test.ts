// Slicing, workers and the order search of bucket elimination (bindings/exact/slicing.ts,
// exact-parallel.ts, order-search.ts): sliced plans against unsliced ones and brute force on random
// factor graphs with hard zeros (slices of Z = 0 included), slices summed as they arrive in any
// order; every slice run on the slices' shared plan and shape the same bits as planned alone;
// workers 1 and 2 bit for bit; a UAI file sliced to its published digits; a memory budget
// too small even for the sliced plan refused with the smallest budget that would do, which then
// runs; each slice's set-up counted in the work limit, so a small message limit is refused at once
// instead of cut into 2^17 slices; annealing never worse than the greedy order; under a budget, the
// cheaper of the two slicing criteria's plans, and a named budget that fits again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { eliminationMemory, exactInference, exactMAP, exactSample, bucketEliminationPlan, slicedBucketPlan } from '../bindings/exact/exact.ts';
import { exactInferenceParallel, PARALLEL_MIN_FLOPS } from '../bindings/exact/exact-parallel.ts';
import { availableParallelism } from 'node:os';
import { isingLattice } from '../bindings/core/builders.ts';
import { runSlices, SliceRunner, SliceSum, sliceAlong, sliceFixed, sliceToFit, slicedCost, slicedWork, CACHE_KNEE_LOG2, SLICE_SETUP_PER_VARIABLE } from '../bindings/exact/slicing.ts';
import { bucketShape, runBucketElimination } from '../bindings/exact/bucket-elimination.ts';
import { annealOrder, orderCost } from '../bindings/exact/order-search.ts';
import { bucketPlan, interactionGraph, withFixedStates } from '../bindings/exact/bucket-plan.ts';
import { fixedStates } from '../bindings/exact/enumeration.ts';
import { loadModelFile } from '../bindings/io/files.ts';
import { readMAR, readPR } from '../bindings/io/formats.ts';
import { EngineError } from '../bindings/core/errors.ts';
import { checkJobOpts } from '../bindings/queue/queue-jobs.ts';
import { Model } from '../bindings/core/model.ts';
import type { Progress } from '../bindings/core/result.ts';
import { infer } from '../bindings/infer.ts';
import { bruteForce, dataDir, hiddenGrid, mulberry32, randomFactorGraph } from './helpers.ts';

const engine = await loadEngine();

function sameBits(a: { logZ: number; marginals: Float64Array[] }, b: { logZ: number; marginals: Float64Array[] }, what: string): void {
  assert.ok(Object.is(a.logZ, b.logZ), `${what}: log Z ${a.logZ} vs ${b.logZ}`);
  a.marginals.forEach((m, v) => assert.deepEqual(Array.from(m), Array.from(b.marginals[v]), `${what}: marginal of ${v}`));
}

function maxDiff(a: { logZ: number; marginals: Float64Array[] }, b: { logZ: number; marginals: Float64Array[] }): number {
  let e = Math.abs(a.logZ - b.logZ) / Math.max(1, Math.abs(b.logZ));
  a.marginals.forEach((m, v) => m.forEach((p, k) => (e = Math.max(e, Math.abs(p - b.marginals[v][k])))));
  return e;
}

/** A random model whose unsliced plan has messages worth slicing. */
function randomModel(rand: () => number, t: number): Model {
  return randomFactorGraph(rand, 9 + (t % 4), { cards: t % 2 ? [2, 3] : [2], maxArity: 3, factors: 14 + (t % 5), zeros: 0.35, scale: t % 7 === 0 ? 800 : 2 });
}

test('sliced = unsliced = brute force on random factor graphs with hard zeros (some slices have Z = 0)', () => {
  const rand = mulberry32(4401);
  let sliced = 0, zeroSlices = 0;
  for (let t = 0; t < 30; t++) {
    const m = randomModel(rand, t);
    const whole = exactInference(engine, m, { method: 'bucket' });
    assert.equal(whole.slices, 1);
    const bytes = slicedBucketPlan(m, { method: 'bucket' }).sliced.plan.bytes;
    // A budget just under the unsliced plan's: at least one variable is sliced.
    const sp = slicedBucketPlan(m, { method: 'bucket', maxMemory: bytes - 1 });
    if (!sp.fits) continue;
    sliced++;
    assert.ok(sp.sliced.slices > 1 && sp.sliced.plan.bytes < bytes);
    const r = exactInference(engine, m, { method: 'bucket', maxMemory: bytes - 1 });
    assert.equal(r.slices, sp.sliced.slices);
    if (!(whole.logZ > -Infinity)) {
      assert.equal(r.logZ, -Infinity);
      continue;
    }
    const want = bruteForce(m);
    assert.ok(maxDiff(whole, want) < 1e-9, `unsliced vs brute force, model ${t}`);
    assert.ok(maxDiff(r, want) < 1e-9, `sliced vs brute force, model ${t}: ${maxDiff(r, want)}`);
    // Slices run on the plan's model (separable factors split: a card-1 variable's pairs are).
    const outcomes = runSlices(engine, sp.model, sp.sliced, Array.from({ length: sp.sliced.slices }, (_, s) => s));
    zeroSlices += outcomes.filter((o) => o.logZ === -Infinity).length;
    // Summed as they arrive, in any order, the same bits as exactInference (in slice order); every
    // slice needed; and the two-pass sum (shift by the largest Z_s, then weight) to 1e-14.
    const inOrder = r as { logZ: number; marginals: Float64Array[] };
    const shuffled = new SliceSum(m, outcomes.length);
    for (const o of [...outcomes].reverse()) shuffled.add(o);
    sameBits(shuffled.result() as typeof inOrder, inOrder, `model ${t}, slices summed in reverse arrival`);
    const partial = new SliceSum(m, outcomes.length);
    outcomes.slice(1).forEach((o) => partial.add(o));
    assert.throws(() => partial.result(), /not summed/);
    const live = outcomes.filter((o) => o.logZ > -Infinity), top = Math.max(...live.map((o) => o.logZ));
    const logZ = top + Math.log(live.reduce((a, o) => a + Math.exp(o.logZ - top), 0));
    assert.ok(Math.abs(r.logZ - logZ) <= 1e-14 * Math.max(1, Math.abs(logZ)));
    r.marginals.forEach((p, v) => p.forEach((x, k) => assert.ok(Math.abs(x - live.reduce((a, o) => a + Math.exp(o.logZ - logZ) * o.marginals![v][k], 0)) < 1e-14)));
  }
  assert.ok(sliced >= 20, `${sliced} of 30 models sliced`);
  assert.ok(zeroSlices > 0, 'some slice has Z = 0');
});

test('the slices share one plan and run shape: each slice, its samples and its MAP the same bits as a slice planned alone; another plan\'s shape refused', () => {
  const rand = mulberry32(4403);
  let compared = 0, logCliques = 0;
  for (let t = 0; t < 24; t++) {
    const m = randomModel(rand, t);
    const bytes = slicedBucketPlan(m, { method: 'bucket' }).sliced.plan.bytes;
    const sp = slicedBucketPlan(m, { method: 'bucket', maxMemory: bytes - 1 });
    if (!sp.fits || sp.sliced.slices < 2) continue;
    compared++;
    if (t % 7 === 0) logCliques++;
    // The plan's model: the one planned (separable factors split, SlicedBucketPlan.model).
    const pm = sp.model;
    const runner = new SliceRunner(engine, pm, sp.sliced);
    for (let s = 0; s < sp.sliced.slices; s++) {
      const alone = bucketPlan(pm, sp.sliced.order, sliceFixed(sp.sliced, pm.card, s), sp.sliced.impossible);
      const want = runBucketElimination(engine, pm, alone), got = runner.run(s);
      assert.ok(Object.is(got.logZ, want.logZ), `model ${t}, slice ${s}: log Z ${got.logZ} vs ${want.logZ}`);
      if (want.marginals) sameBits(got as { logZ: number; marginals: Float64Array[] }, want as { logZ: number; marginals: Float64Array[] }, `model ${t}, slice ${s}`);
      for (const mode of ['sample', 'max'] as const) {
        const a = runner.decodeTask({ slice: s, count: 3, chain: s }, mode, 7), b = runBucketElimination(engine, pm, alone, { mode, count: 3, seed: 7, chain: s });
        assert.ok(Object.is(a.logZ, b.logZ), `model ${t}, slice ${s}, ${mode}: log Z`);
        if (b.configurations) assert.deepEqual(Array.from(a.configurations!), Array.from(b.configurations), `model ${t}, slice ${s}: ${mode} configurations`);
      }
    }
    // A plan fixing other variables has another shape.
    const other = sp.sliced.fixed.slice();
    const free = Array.from(sp.sliced.order).find((v) => other[v] < 0 && !sp.sliced.sliceVars.includes(v))!;
    other[free] = 0;
    assert.throws(() => withFixedStates(sp.sliced.plan, other), /other variables are fixed/);
    const otherPlan = bucketPlan(pm, sp.sliced.order, other, sp.sliced.impossible);
    assert.throws(() => runBucketElimination(engine, pm, otherPlan, undefined, bucketShape(pm, sp.sliced.plan)), /another plan's/);
  }
  assert.ok(compared >= 15 && logCliques >= 2, `${compared} models compared, ${logCliques} with log-space cliques`);
});

test('progress: clique configurations streamed, never decreasing, ending at the result\'s flops; on this thread (also through infer), with workers, and with slices of Z = 0', async () => {
  const rand = mulberry32(4404);
  let checked = 0, zeroSlices = 0;
  for (let t = 0; checked < 4 && t < 30; t++) {
    const m = randomModel(rand, t);
    const bytes = slicedBucketPlan(m, { method: 'bucket' }).sliced.plan.bytes;
    const opts = { method: 'bucket' as const, maxMemory: bytes - 1 };
    const sp = slicedBucketPlan(m, opts);
    if (!sp.fits || sp.sliced.slices < 3) continue;
    checked++;
    zeroSlices += runSlices(engine, sp.model, sp.sliced, Array.from({ length: sp.sliced.slices }, (_, s) => s)).filter((o) => o.logZ === -Infinity).length;
    const seen = (events: Progress[], flops: number, what: string): void => {
      assert.ok(events.length > 0, `${what}: no progress`);
      for (let k = 0; k < events.length; k++) {
        assert.equal(events[k].phase, 'exact');
        assert.equal(events[k].total, flops, `${what}: total`);
        if (k > 0) assert.ok(events[k].done >= events[k - 1].done, `${what}: done went down`);
      }
      assert.equal(events.at(-1)!.done, flops, `${what}: the last event`);
    };
    const here: Progress[] = [];
    const r = exactInference(engine, m, { ...opts, onProgress: (p) => here.push({ ...p }) });
    seen(here, r.flops, `model ${t}, this thread`);
    // An event per clique stream, both passes (a slice found to have Z_s = 0 early: one for its rest).
    assert.ok(here.length > sp.sliced.slices && here.length <= 2 * sp.sliced.plan.order.length * sp.sliced.slices, `${here.length} events`);
    const viaInfer: Progress[] = [];
    infer(engine, m, { method: 'exact', exact: opts, onProgress: (p) => viaInfer.push({ ...p }) });
    assert.deepEqual(viaInfer, here);
    const two: Progress[] = [];
    const w = await exactInferenceParallel(engine, m, { ...opts, workers: 2, onProgress: (p) => two.push({ ...p }) });
    seen(two, w.flops, `model ${t}, two workers`);
    assert.equal(two.length, sp.sliced.slices, 'one event per slice');
  }
  assert.equal(checked, 4);
  assert.ok(zeroSlices > 0, 'some slice has Z = 0');
});

test('workers 1 and 2 give exactInference bit for bit (random models, CSP_12 sliced to the published digits)', async () => {
  const rand = mulberry32(4402);
  let compared = 0;
  for (let t = 0; compared < 2 && t < 20; t++) {
    const m = randomModel(rand, t);
    const bytes = slicedBucketPlan(m, { method: 'bucket' }).sliced.plan.bytes;
    const opts = { method: 'bucket' as const, maxMemory: bytes - 1 };
    if (!slicedBucketPlan(m, opts).fits) continue;
    const sync = exactInference(engine, m, opts);
    if (!(sync.logZ > -Infinity) || sync.slices! < 3) continue;
    compared++;
    const one = await exactInferenceParallel(engine, m, { ...opts, workers: 1 });
    const two = await exactInferenceParallel(engine, m, { ...opts, workers: 2 });
    assert.equal(two.workers, 2);
    sameBits(one, sync, 'one worker');
    sameBits(two, sync, 'two workers');
  }
  assert.equal(compared, 2);
  const path = join(dataDir(), 'uai2014-more', 'CSP_12.uai');
  const { model } = await loadModelFile(path);
  const opts = { maxMemory: 2 ** 21 };
  const sync = exactInference(engine, model, opts);
  assert.ok(sync.slices! >= 4 && sync.memoryBytes! <= 2 ** 21, `${sync.slices} slices, ${sync.memoryBytes} bytes`);
  const two = await exactInferenceParallel(engine, model, { ...opts, workers: 2 });
  sameBits(two, sync, 'CSP_12 on two workers');
  // Without workers: this thread below PARALLEL_MIN_FLOPS configurations in all (CSP_12 sliced: 2^22,
  // 0.03 s here against 0.3 s on two workers), min(slices, cores) past it (a 19×19 grid cut in two, 2^27.9).
  const auto = await exactInferenceParallel(engine, model, opts);
  assert.equal(auto.workers, 1);
  sameBits(auto, sync, 'CSP_12 without workers');
  const big = isingLattice({ shape: [19, 19], J: 0.3, h: 0.1 }), wholeBytes = slicedBucketPlan(big, { method: 'bucket' }).sliced.plan.bytes;
  const bigOpts = { method: 'bucket' as const, maxMemory: wholeBytes - 1 }, cut = slicedBucketPlan(big, bigOpts).sliced;
  assert.ok(cut.slices >= 2 && cut.slices * cut.plan.flops >= PARALLEL_MIN_FLOPS, `${cut.slices} slices of ${cut.plan.flops}`);
  const bigAuto = await exactInferenceParallel(engine, big, bigOpts);
  assert.equal(bigAuto.workers, Math.min(cut.slices, availableParallelism()));
  sameBits(bigAuto, exactInference(engine, big, bigOpts), '19×19 without workers');
  const pr = readPR(readFileSync(`${path}.PR`, 'utf8'));
  const got = sync.logZ / Math.LN10;
  assert.ok(Math.abs(got - pr) <= 0.5 * 10 ** (Math.floor(Math.log10(Math.abs(pr))) - 5) + 1e-12, `log10 Z ${got} vs published ${pr}`);
  const mar = readMAR(readFileSync(`${path}.MAR`, 'utf8'));
  mar.forEach((p, v) => p.forEach((q, k) => assert.ok(Math.abs(sync.marginals[v][k] - q) < 1e-5, `p(x${v} = ${k}) ${sync.marginals[v][k]} vs ${q}`)));
  const whole = exactInference(engine, model);
  assert.ok(maxDiff(sync, whole) < 1e-12, 'sliced CSP_12 = unsliced');
});

test('a memory budget too small even for the sliced plan: refused at once with the smallest budget that would do, which runs', () => {
  const m = randomModel(mulberry32(4403), 1);
  const tiny = 1000;
  let smallest = 0;
  const c0 = process.cpuUsage();
  assert.throws(
    () => exactInference(engine, m, { method: 'bucket', maxMemory: tiny }),
    (e: unknown) => {
      const match = e instanceof EngineError && /the smallest budget that would do is .* \(--max-memory (\d+)\)/.exec(e.message);
      if (match) smallest = Number(match[1]);
      return !!match;
    },
  );
  const c = process.cpuUsage(c0);
  assert.ok(c.user + c.system < 100_000, `refused in ${((c.user + c.system) / 1000).toFixed(1)} ms of CPU time`);
  assert.ok(smallest > tiny);
  const r = exactInference(engine, m, { method: 'bucket', maxMemory: smallest });
  assert.ok(r.memoryBytes! <= smallest && r.slices! > 1);
  assert.ok(maxDiff(r, exactInference(engine, m, { method: 'bucket' })) < 1e-9);
  assert.throws(() => exactInference(engine, m, { method: 'bucket', maxMemory: smallest - 1 }), EngineError);

  // The CLI: exit 3, one line naming the budget.
  const BIN = fileURLToPath(new URL('../bin/relaxmrf.js', import.meta.url));
  const file = join(dataDir(), 'uai2014-more', 'CSP_12.uai');
  const out = spawnSync(process.execPath, [BIN, 'infer', file, '--max-memory', '10K'], { encoding: 'utf8' });
  assert.equal(out.status, 3, out.stderr);
  assert.match(out.stderr.trim(), /^relaxmrf: .*the memory budget of 10 kB is too small even for the sliced plan: the smallest budget that would do is \d+ kB \(--max-memory \d+\)/);
  assert.equal(out.stderr.trim().split('\n').length, 1);
  // The budget and the other exact limits cross the job queue.
  const opts = { method: 'exact', exact: { maxMemory: 2 ** 21, maxFlops: 2 ** 30, maxMessageEntries: 2 ** 20, orderSearchWork: 0, orderRestarts: 2, speedSlicing: false } };
  assert.deepEqual(checkJobOpts(opts), opts);
});

test('each slice\'s set-up counts in the work limit: a message limit of 1000 entries on Pedigree_12 refused at once, naming the smallest that would do', async () => {
  const { model } = await loadModelFile(join(dataDir(), 'uai2014-more', 'Pedigree_12.uai'));
  // Messages of ≤ 1000 entries took 2^17 slices of 2^16 configurations (2^33.2 streamed, within 2^34):
  // ≈ 0.25 ms of set-up each, minutes in all, and their marginals ran the JavaScript heap out of memory.
  const refused = slicedBucketPlan(model, { maxMessageEntries: 1000 });
  assert.equal(refused.fits, false);
  assert.ok(slicedWork(refused.sliced.slices, refused.sliced.plan) > 2 ** 34);
  assert.ok(refused.sliced.slices * refused.sliced.plan.flops <= 2 ** 34, 'streamed alone, within the limit: the set-up is what refuses it');
  const match = /slicing brings the largest message to 2\^(\d+) entries at most within the work limit, not to 1\.00e\+3 .*: (\d+) slices would take .* configurations of work/.exec(refused.refusal);
  assert.ok(match, refused.refusal);
  let message = '';
  // Timed on a model object of its own: the first's plan would come from the plan cache.
  const { model: again } = await loadModelFile(join(dataDir(), 'uai2014-more', 'Pedigree_12.uai'));
  const c0 = process.cpuUsage();
  assert.throws(() => exactInference(engine, again, { maxMessageEntries: 1000 }), (e: unknown) => e instanceof EngineError && !!(message = e.message));
  const c = process.cpuUsage(c0);
  assert.ok(message.includes(refused.refusal), message);
  assert.ok(c.user + c.system < 500_000, `refused in ${((c.user + c.system) / 1000).toFixed(1)} ms of CPU time`);
  // The message size it names fits, within the work limit with the set-up counted.
  const named = 2 ** Number(match![1]);
  const fits = slicedBucketPlan(model, { maxMessageEntries: named });
  assert.equal(fits.fits, true);
  assert.ok(fits.sliced.plan.maxMessage <= named);
  const work = slicedWork(fits.sliced.slices, fits.sliced.plan);
  assert.equal(work, fits.sliced.slices * fits.sliced.plan.flops + (fits.sliced.slices - 1) * SLICE_SETUP_PER_VARIABLE * model.n);
  assert.ok(work <= 2 ** 34, `${work} configurations of work`);
});

test('order search: annealing is never worse than its greedy start, the same order every time; the plan keeps the better', () => {
  const rand = mulberry32(4404);
  for (let t = 0; t < 6; t++) {
    const m = randomFactorGraph(rand, 30 + 5 * t, { cards: [2, 3], maxArity: 3, factors: 45 + 8 * t });
    const { fixed } = fixedStates(m);
    const g = interactionGraph(m, fixed);
    const greedy = bucketEliminationPlan(m, { orderSearchWork: 0, orderRestarts: 0 });
    const start = orderCost(g, greedy.plan.order);
    const a = annealOrder(g, greedy.plan.order, { maxLog2Message: 40, work: 3e5, seed: t });
    const b = annealOrder(g, greedy.plan.order, { maxLog2Message: 40, work: 3e5, seed: t });
    assert.deepEqual(Array.from(a.order), Array.from(b.order), 'deterministic');
    assert.ok(a.log2Flops <= start.log2Flops + 1e-12, `annealed 2^${a.log2Flops} vs greedy 2^${start.log2Flops}`);
    assert.deepEqual(orderCost(g, a.order), { log2Flops: a.log2Flops, log2Message: a.log2Message, treewidth: a.treewidth });
    const searched = bucketEliminationPlan(m, { orderSearchWork: 3e5, orderRestarts: 0 });
    assert.ok(searched.plan.flops <= greedy.plan.flops, `plan with search ${searched.plan.flops} vs ${greedy.plan.flops}`);
    assert.equal(searched.search!.improved, searched.plan.flops < greedy.plan.flops);
  }
});

test('a model plans once per set of planning options: the same plan object again (progress callbacks aside), a new one for other options or another model object, a few kept per model; a cached plan gives the bits of a fresh one', () => {
  const build = (): Model => randomFactorGraph(mulberry32(7301), 90, { cards: [2, 3], maxArity: 3, factors: 150 });
  const m = build(), copy = build();
  const opts = { maxMemory: 1e6 };
  const sp = slicedBucketPlan(m, opts);
  assert.ok(sp.fits && sp.sliced.slices > 1, 'sliced to fit');
  assert.equal(slicedBucketPlan(m, { ...opts }), sp);
  assert.equal(slicedBucketPlan(m, { ...opts, onProgress: () => {} }), sp);
  const other = slicedBucketPlan(m, { maxMemory: 2e6 });
  assert.notEqual(other, sp);
  // Another model object, equal in every number: planned afresh, to the same plan.
  const fresh = slicedBucketPlan(copy, opts);
  assert.notEqual(fresh, sp);
  assert.deepEqual([fresh.choice.plan.order, fresh.sliced.sliceVars], [sp.choice.plan.order, sp.sliced.sliceVars]);
  // Runs on a plan used before give the bits of runs on a plan used first (nothing a run does to
  // its plan carries over): m's plan runs inference twice, then samples and MAP; copy's the other way.
  const bits = (r: { logZ: number; marginals: Float64Array[] }): string => [r.logZ, ...r.marginals.flatMap((p) => [...p])].join(',');
  const sampleOf = (x: Model) => exactSample(engine, x, { ...opts, count: 20, seed: 3 }).samples;
  const [copySamples, copyMAP] = [sampleOf(copy), exactMAP(engine, copy, opts).configuration];
  const first = bits(exactInference(engine, m, opts));
  assert.equal(bits(exactInference(engine, m, opts)), first);
  assert.equal(first, bits(exactInference(engine, copy, opts)));
  assert.deepEqual(sampleOf(m), copySamples);
  assert.deepEqual(exactMAP(engine, m, opts).configuration, copyMAP);
  // A refusal asked again is the cached one.
  const tiny = slicedBucketPlan(m, { maxMemory: 100 });
  assert.ok(!tiny.fits);
  assert.equal(slicedBucketPlan(m, { maxMemory: 100 }), tiny);
  // Four per model: the oldest of five goes.
  for (const b of [3e6, 4e6, 5e6]) slicedBucketPlan(m, { maxMemory: b });
  assert.notEqual(slicedBucketPlan(m, opts), sp);
});

test('slicing for speed: a plan whose messages pass the cache knee is sliced further while slicedCost falls (CSP_11 by bucket elimination: 2^23-entry messages, 16 slices of 2^19, the published digits), and left whole where slices cost more than they save (ObjectDetection_11, linkage_11)', async () => {
  const { model } = await loadModelFile(join(dataDir(), 'uai2014', 'CSP_11.uai'));
  const whole = slicedBucketPlan(model, { method: 'bucket', speedSlicing: false });
  const fast = slicedBucketPlan(model, { method: 'bucket' });
  assert.equal(whole.sliced.slices, 1);
  assert.ok(Math.log2(whole.sliced.plan.maxMessage) > CACHE_KNEE_LOG2 + 2);
  assert.ok(fast.sliced.slices > 1 && fast.sliced.plan.maxMessage <= 2 ** (CACHE_KNEE_LOG2 + 1), `${fast.sliced.slices} slices of 2^${Math.log2(fast.sliced.plan.maxMessage)}`);
  // The cheapest step by the cost model, along the same order, within the work limit.
  assert.deepEqual(fast.choice.plan.order, whole.choice.plan.order);
  assert.ok(slicedCost(fast.sliced.slices, fast.sliced.plan) < slicedCost(1, whole.sliced.plan));
  assert.ok(slicedWork(fast.sliced.slices, fast.sliced.plan) <= 2 ** 34);
  const r = exactInference(engine, model, { method: 'bucket' });
  assert.equal(r.slices, fast.sliced.slices);
  // The published digits (13.563: half a unit of the last), and every marginal.
  const pr = readPR(readFileSync(join(dataDir(), 'uai2014', 'CSP_11.uai.PR'), 'utf8'));
  assert.ok(Math.abs(r.logZ / Math.LN10 - pr) <= 0.5e-3, `log10 Z ${r.logZ / Math.LN10} against ${pr}`);
  const mar = readMAR(readFileSync(join(dataDir(), 'uai2014', 'CSP_11.uai.MAR'), 'utf8'));
  mar.forEach((p, v) => p.forEach((x, k) => assert.ok(Math.abs(x - r.marginals[v][k]) <= 2e-6, `variable ${v}`)));
  assert.ok(maxDiff(r, exactInference(engine, model, { method: 'bucket', speedSlicing: false })) < 1e-9);
  // Card-16 slices would double ObjectDetection_11's work; linkage_11's first slice adds 0.7 bits.
  for (const [dir, f] of [['uai2014', 'ObjectDetection_11.uai'], ['uai2014-more', 'linkage_11.uai']]) {
    const { model: m } = await loadModelFile(join(dataDir(), dir, f));
    const sp = slicedBucketPlan(m, { method: 'bucket' });
    assert.ok(Math.log2(sp.sliced.plan.maxMessage) > CACHE_KNEE_LOG2, f);
    assert.equal(sp.sliced.slices, 1, f);
  }
});

test('the memory budget binds the junction tree too: past it auto runs bucket elimination sliced to fit, and elimination refuses, naming both sizes', async () => {
  const { model } = await loadModelFile(join(dataDir(), 'uai2014', 'Grids_12.uai'));
  const whole = exactInference(engine, model);
  assert.equal(whole.algorithm, 'junction-tree');
  const jt = eliminationMemory(model).bytes;
  const budget = Math.floor(jt / 2);
  const r = exactInference(engine, model, { maxMemory: budget });
  assert.equal(r.algorithm, 'bucket', 'the junction tree would pass the budget');
  assert.ok(Math.abs(r.logZ - whole.logZ) <= 1e-9 * Math.abs(whole.logZ), `${r.logZ} vs ${whole.logZ}`);
  assert.throws(
    () => exactInference(engine, model, { method: 'elimination', maxMemory: budget }),
    (e: unknown) => e instanceof EngineError && /junction tree would need .* past the memory budget/.test((e as Error).message),
  );
  assert.throws(() => exactInference(engine, model, { maxMemory: -5 }), /maxMemory -5 is not a positive number of bytes/);
});

test('planning options are checked before the plan cache, named as given, and small budgets are written in bytes', async () => {
  const engine = await loadEngine();
  const { ModelError } = await import('../bindings/core/errors.ts');
  const m = randomFactorGraph(mulberry32(77), 10, { cards: [2, 3], maxArity: 3, factors: 14 });
  exactInference(engine, m, { method: 'bucket' });
  // The cache's key wrote NaN as null: after a default run these found its plan and passed.
  for (const [opts, re] of [[{ maxFlops: NaN }, /^maxFlops NaN is not a positive number/], [{ maxMessageEntries: NaN }, /^maxMessageEntries NaN is not a positive number/], [{ maxMessageEntries: 0 }, /^maxMessageEntries 0 is not/], [{ maxFlops: Infinity }, /^maxFlops Infinity is not/]] as const) {
    assert.throws(() => exactInference(engine, m, { method: 'bucket', ...opts }), (e: unknown) => e instanceof ModelError && re.test((e as Error).message), JSON.stringify(opts));
  }
  // Taken before: a bad search budget or restart count, treeSearch 'no' (ran the search), method null (ran auto),
  // maxMessageEntries 0.5 where the junction tree ran. Every path checks them: exactInference (auto), exactSample, exactMAP.
  const { exactMAP, exactSample } = await import('../bindings/exact/exact.ts');
  const pair = isingLattice({ shape: [3, 3], beta: 0.3 }); // pairwise: auto plans the junction tree
  for (const [opts, re] of [[{ orderSearchWork: -1 }, /orderSearchWork -1 is not a number ≥ 0/], [{ orderSearchWork: NaN }, /orderSearchWork NaN/], [{ orderRestarts: -3 }, /orderRestarts -3 is not an integer/], [{ orderRestarts: 2.5 }, /orderRestarts 2.5/], [{ treeSearch: 'no' as unknown as boolean }, /treeSearch must be true or false, got "no"/], [{ speedSlicing: 1 as unknown as boolean }, /speedSlicing must be true or false/], [{ maxMessageEntries: 0.5 }, /maxMessageEntries 0.5 is not a positive number/], [{ method: null as unknown as 'auto' }, /option "method" is null/]] as const) {
    const runs: (() => unknown)[] = [() => exactInference(engine, pair, opts), () => exactInference(engine, m, opts)];
    if (!('method' in opts)) runs.push(() => exactSample(engine, m, { count: 2, ...opts }), () => exactMAP(engine, m, opts)); // they take no method
    for (const run of runs) assert.throws(run, (e: unknown) => e instanceof ModelError && re.test((e as Error).message), JSON.stringify(opts));
  }
  // "the memory budget of 0 kB is too small" for 100 bytes; "4 kB … would do is 4 kB" for 4000 against 4248.
  assert.throws(() => exactInference(engine, m, { method: 'bucket', maxMemory: 100 }), (e: unknown) => /the memory budget of 100 bytes is too small even for the sliced plan: the smallest budget that would do is (\d+) bytes \(--max-memory \1\)/.test((e as Error).message));
});

test('refusals past the engine\'s memory and past the doubles\' range say so: no budget named beyond what WASM can hold (it named --max-memory 24964616936, which the engine refused again), a budget of 8 GB is the engine\'s, and a 40×40×40 lattice has no "Infinity TB" or "NaN bytes"', async () => {
  const engine = await loadEngine();
  const grid = isingLattice({ shape: [25, 25], beta: 0.4 });
  for (const maxMemory of [8e9, 1e11]) {
    assert.throws(() => exactInference(engine, grid, { maxMemory }), (e: unknown) => e instanceof EngineError && /no memory budget would do: within the work limit even the sliced plan needs at least 25 GB, past the 4 GB of WASM memory the engine can hold/.test((e as Error).message) && !/--max-memory \d/.test((e as Error).message));
  }
  // Its plan (treewidth 1220) is sized only until far past the limit: lower bounds, finite.
  // (Renumbered, with a diagonal more: the lattice's bound, and a square on a face under any
  // numbering, would refuse it before any plan.)
  const cube = hiddenGrid(isingLattice({ shape: [40, 40, 40], beta: 0.4 }), 40, 1);
  assert.throws(() => exactInference(engine, cube), (e: unknown) => e instanceof EngineError && /needs treewidth at least \d+, a largest message of at least 2\^\d+ entries .*at least 2\^\d+(\.\d+)? clique configurations streamed|needs treewidth at least \d+, a largest message of at least .* clique configurations streamed/.test((e as Error).message) && !/Infinity|NaN/.test((e as Error).message));
});

test('a greedy order\'s plan far past the work limit is sized only until it passes bucketPlan\'s stopPast: lower bounds of the whole plan\'s sizes, marked cutShort (a 1000×1000 lattice\'s refusal took 13.7 s, 10 of them here)', async () => {
  const { bucketPlan } = await import('../bindings/exact/bucket-plan.ts');
  const { ORDERINGS, candidateOrders } = await import('../bindings/exact/orderings.ts');
  const grid = isingLattice({ shape: [60, 60], beta: 0.4 });
  const free = new Int32Array(grid.n).fill(-1);
  const rcm = candidateOrders(grid, ORDERINGS.filter((h) => h === 'rcm'), Infinity, 8)[0].order;
  const whole = bucketPlan(grid, rcm, free);
  const cut = bucketPlan(grid, rcm, free, -1, 2 ** 30);
  assert.equal(whole.cutShort, false);
  assert.equal(cut.cutShort, true);
  assert.ok(whole.upFlops > 2 ** 30 && cut.upFlops > 2 ** 30 && cut.upFlops < whole.upFlops, `${cut.upFlops} of ${whole.upFlops}`);
  for (const k of ['treewidth', 'maxMessage', 'messageEntries', 'flops', 'bytes'] as const) assert.ok(cut[k] <= whole[k], k);
  assert.deepEqual(bucketPlan(grid, rcm, free, -1, 2 * whole.upFlops), { ...whole, cutShort: false }, 'a stop past the whole plan changes nothing');
});

test('under a memory budget both slicing criteria are followed and the cheaper plan that fits is taken; the smallest budget named is the least of both, and fits again', async () => {
  const cheaperOrSame = (model: Model, sp: ReturnType<typeof slicedBucketPlan>, maxMemory: number): { largest: ReturnType<typeof sliceAlong>; bytes: ReturnType<typeof sliceAlong> } => {
    const c = sp.choice;
    const largest = sliceAlong(sp.model, c.plan, 'largest', maxMemory, c.maxMessage, c.maxFlops, true);
    const bytes = sliceAlong(sp.model, c.plan, 'bytes', maxMemory, c.maxMessage, c.maxFlops, true);
    const cost = slicedCost(sp.sliced.slices, sp.sliced.plan);
    for (const r of [largest, bytes]) if (r.fits) assert.ok(sp.fits && cost <= slicedCost(r.sliced.slices, r.sliced.plan), `${model.n} variables under ${maxMemory} bytes`);
    assert.equal(sp.fits, largest.fits || bytes.fits);
    return { largest, bytes };
  };
  // linkage_11 under 256 MiB: the plan's messages sum past its largest one 24-fold, and conditioning on
  // what removes the most entries needs fewer slices than shrinking the largest message (32 against 128).
  const read = async (name: string): Promise<Model> => (await loadModelFile(join(dataDir(), name))).model;
  const linkage = await read('uai2014-more/linkage_11.uai');
  const l = cheaperOrSame(linkage, slicedBucketPlan(linkage, { maxMemory: 2 ** 28 }), 2 ** 28);
  assert.ok(l.largest.fits && l.bytes.fits && slicedCost(l.bytes.sliced.slices, l.bytes.sliced.plan) < slicedCost(l.largest.sliced.slices, l.largest.sliced.plan) / 2, `linkage_11: ${l.largest.sliced.slices} and ${l.bytes.sliced.slices} slices`);
  // ObjectDetection_11 under 9.8 MB: only the second criterion fits within the work limit.
  const od = await read('uai2014/ObjectDetection_11.uai');
  const o = cheaperOrSame(od, slicedBucketPlan(od, { method: 'bucket', maxMemory: 9.8e6 }), 9.8e6);
  assert.ok(!o.largest.fits && o.bytes.fits, `ObjectDetection_11: ${o.largest.fits}, ${o.bytes.fits}`);
  // Random models under budgets from tight to loose: the choice is never dearer than either
  // sequence, runs to the unsliced answer, and a refusal's budget fits while one byte less does not.
  const rand = mulberry32(5150);
  let refused = 0;
  for (let t = 0; t < 24; t++) {
    const m = randomModel(rand, t);
    const whole = slicedBucketPlan(m, { method: 'bucket' }).sliced.plan.bytes;
    const budget = Math.ceil(whole * [0.05, 0.3, 0.6][t % 3]);
    const sp = slicedBucketPlan(m, { method: 'bucket', maxMemory: budget });
    cheaperOrSame(m, sp, budget);
    if (sp.fits) {
      const r = exactInference(engine, m, { method: 'bucket', maxMemory: budget });
      if (r.logZ > -Infinity) assert.ok(maxDiff(r, exactInference(engine, m, { method: 'bucket' })) < 1e-9, `model ${t}`);
      continue;
    }
    const named = /--max-memory (\d+)/.exec(sp.refusal);
    if (!named) continue;
    refused++;
    assert.ok(slicedBucketPlan(m, { method: 'bucket', maxMemory: Number(named[1]) }).fits, `model ${t}: the budget named does not fit`);
    assert.ok(!slicedBucketPlan(m, { method: 'bucket', maxMemory: Number(named[1]) - 1 }).fits, `model ${t}: one byte less fits`);
  }
  assert.ok(refused >= 3, `${refused} refusals`);
});

test('a plan sliced to fit is searched again on the graph its first slice variables leave, the cheaper kept: Promedus_11 under 1/8 of its messages, to the published digits, on two workers bit for bit, its MAP the unsliced one', async () => {
  const path = join(dataDir(), 'uai2014-more', 'Promedus_11.uai');
  const { model } = await loadModelFile(path);
  const whole = slicedBucketPlan(model, { method: 'bucket' });
  let tableBytes = 0;
  for (let f = 0; f < whole.model.nFactors; f++) tableBytes += 8 * whole.model.tableSize(f);
  const maxMemory = Math.ceil(whole.sliced.plan.bytes - (7 / 8) * (whole.sliced.plan.bytes - tableBytes));
  const opts = { method: 'bucket' as const, maxMemory };
  const sp = slicedBucketPlan(model, opts);
  assert.ok(sp.fits && sp.sliced.plan.bytes <= maxMemory, `${sp.sliced.plan.bytes} bytes under ${maxMemory}`);
  assert.match(sp.sliced.ordering ?? '', /, searched again with [12] of the sliced variables fixed$/);
  // Cheaper than slicing the whole graph's order (64 slices, 2^27.5 configurations, when this was written).
  const c = sp.choice, first = sliceToFit(sp.model, c.plan, maxMemory, c.maxMessage, c.maxFlops, true);
  assert.ok(first.fits && slicedCost(sp.sliced.slices, sp.sliced.plan) < slicedCost(first.sliced.slices, first.sliced.plan) / 2, `${sp.sliced.slices} slices against ${first.sliced.slices}`);
  const r = exactInference(engine, model, opts);
  assert.equal(r.ordering, sp.sliced.ordering);
  assert.equal(r.slices, sp.sliced.slices);
  const pr = readPR(readFileSync(`${path}.PR`, 'utf8'));
  assert.ok(Math.abs(r.logZ / Math.LN10 - pr) <= 0.5 * 10 ** (Math.floor(Math.log10(Math.abs(pr))) - 5) + 1e-12, `log10 Z ${r.logZ / Math.LN10} vs ${pr}`);
  assert.ok(maxDiff(r, exactInference(engine, model, { method: 'bucket' })) < 1e-12, 'sliced = unsliced');
  sameBits(await exactInferenceParallel(engine, model, { ...opts, workers: 2 }), r, 'two workers');
  // Another order sums in another order: the largest log-potential to the rounding.
  const map = exactMAP(engine, model, opts).logPotential, mapWhole = exactMAP(engine, model, { method: 'bucket' }).logPotential;
  assert.ok(Math.abs(map - mapWhole) < 1e-12 * Math.abs(mapWhole), `MAP ${map} vs ${mapWhole}`);
});
