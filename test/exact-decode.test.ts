// Exact samples and MAP by bucket elimination (bindings/exact/exact.ts exactSample, exactMAP):
// samples against the enumerated distribution by a χ² test at fixed seeds (never a zero-probability
// configuration, evidence respected, the same seed giving the same samples); MAP against the
// enumerated maximum on random factor graphs (arities 1–4, zeros, evidence, ±2000 nats); both again
// on sliced plans (each sample's slice drawn by its Z_s, MAP the best of the slices' maxima), and
// on worker threads (exactSampleParallel, exactMAPParallel: the same samples and configuration).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { exactMAP, exactSample, type ExactOptions } from '../bindings/exact/exact.ts';
import * as pkg from '../bindings/index.ts';
import { decodeSteps, driveDecode, SliceRunner } from '../bindings/exact/slicing.ts';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyEvidence, readUAI } from '../bindings/io/formats.ts';
import type { Model } from '../bindings/core/model.ts';
import { dataDir, mulberry32, randomFactorGraph } from './helpers.ts';

const engine = await loadEngine();

/** Every configuration (first variable slowest) with its log-potential. */
function enumerate(m: Model): { x: number[]; lp: number }[] {
  const all: { x: number[]; lp: number }[] = [];
  const x = new Array(m.n).fill(0);
  const rec = (v: number): void => {
    if (v === m.n) return void all.push({ x: [...x], lp: m.logPotential(x) });
    for (let k = 0; k < m.card[v]; k++) (x[v] = k), rec(v + 1);
  };
  rec(0);
  return all;
}

/** Upper 1e-4 point of χ²(df) (Wilson–Hilferty). */
function chi2Critical(df: number): number {
  const z = 3.719;
  return df * (1 - 2 / (9 * df) + z * Math.sqrt(2 / (9 * df))) ** 3;
}

/** MAP against the enumerated maximum on `count` random factor graphs (arities 1–4, zeros, evidence, ±2000 nats); how many were checked and how many plans sliced. */
function checkMAP(seed: number, count: number, opts: ExactOptions): { checked: number; sliced: number } {
  const rand = mulberry32(seed);
  let checked = 0, sliced = 0;
  for (let t = 0; t < count; t++) {
    let m = randomFactorGraph(rand, 3 + (t % 5), { cards: [[2], [2, 3], [1, 4], [3, 5]][t % 4], maxArity: 4, factors: 3 + (t % 5), zeros: t % 2 ? 0.25 : 0, scale: t % 6 === 0 ? 2000 : 2 });
    if (t % 3 === 1) m = applyEvidence(m, new Map([[0, 0]])).model;
    const all = enumerate(m);
    const best = Math.max(...all.map((c) => c.lp));
    if (best === -Infinity) continue;
    const r = exactMAP(engine, m, opts);
    assert.ok(Math.abs(r.logPotential - best) <= 1e-9 * Math.max(1, Math.abs(best)), `model ${t}: ${r.logPotential} vs ${best} (${r.slices} slices)`);
    assert.ok(Math.abs(m.logPotential(r.configuration) - best) <= 1e-9 * Math.max(1, Math.abs(best)), `model ${t}: the configuration's own log-potential`);
    checked++;
    if (r.slices > 1) sliced++;
  }
  return { checked, sliced };
}

/**
 * 20000 samples of each of 8 random factor graphs (4 variables, zeros, evidence) against the
 * enumerated distribution by χ² at p = 1e-4 (seeds seedBase + t), never a zero-probability
 * configuration, log Z exact; how many plans sliced.
 */
function checkSamples(seed: number, seedBase: number, opts: ExactOptions): number {
  const rand = mulberry32(seed);
  const N = 20000;
  let sliced = 0;
  for (let t = 0; t < 8; t++) {
    let m = randomFactorGraph(rand, 4, { cards: [2, 3], maxArity: 3, factors: 4, zeros: t % 2 ? 0.2 : 0, scale: 1.2 });
    const observed = t % 4 === 3 ? new Map([[1, 0]]) : null;
    if (observed) m = applyEvidence(m, observed).model;
    const all = enumerate(m);
    const top = Math.max(...all.map((c) => c.lp));
    if (top === -Infinity) continue;
    const w = all.map((c) => Math.exp(c.lp - top));
    const W = w.reduce((a, b) => a + b, 0);
    const index = new Map(all.map((c, i) => [c.x.join(','), i]));
    const counts = new Float64Array(all.length);
    const r = exactSample(engine, m, { count: N, seed: seedBase + t, ...opts });
    assert.equal(r.samples.length, N);
    if (r.slices > 1) sliced++;
    assert.ok(Math.abs(r.logZ - (top + Math.log(W))) <= 1e-9 * Math.max(1, Math.abs(r.logZ)), `model ${t}: log Z ${r.logZ}`);
    for (const x of r.samples) counts[index.get(Array.from(x).join(','))!]++;
    let chi2 = 0, df = -1;
    all.forEach((_, i) => {
      const e = (N * w[i]) / W;
      if (e === 0) return assert.equal(counts[i], 0, `model ${t}: a zero-probability configuration was drawn`);
      chi2 += (counts[i] - e) ** 2 / e;
      df++;
    });
    if (observed) for (const x of r.samples) assert.equal(x[1], 0);
    if (df > 0) assert.ok(chi2 < chi2Critical(df), `model ${t}: χ² ${chi2.toFixed(1)} with ${df} degrees of freedom (${r.slices} slices)`);
  }
  return sliced;
}

test('MAP by max-product elimination = the enumerated maximum (arities 1–4, zeros, evidence, ±2000 nats)', () => {
  const { checked } = checkMAP(1102, 60, {});
  assert.ok(checked >= 50, `${checked} models checked`);
});

test('exact samples follow the enumerated distribution (χ² at p = 1e-4, fixed seeds), never a zero-probability configuration', () => {
  checkSamples(1103, 40, {});
});

test('sliced plans (messages held to one entry): MAP = the enumerated maximum, samples by χ² (p = 1e-4, fixed seeds), the same seed the same samples', () => {
  const map = checkMAP(1105, 40, { maxMessageEntries: 1 });
  assert.ok(map.sliced >= 20, `${map.sliced} of ${map.checked} MAP plans sliced`);
  const sliced = checkSamples(1107, 60, { maxMessageEntries: 1 });
  assert.ok(sliced >= 6, `${sliced} sampling plans sliced`);
  const m = randomFactorGraph(mulberry32(1106), 6, { cards: [2, 3], maxArity: 4, factors: 5, scale: 1 });
  const a = exactSample(engine, m, { count: 50, seed: 7, maxMessageEntries: 1 });
  assert.ok(a.slices > 1);
  assert.deepEqual(a.samples, exactSample(engine, m, { count: 50, seed: 7, maxMessageEntries: 1 }).samples);
  assert.notDeepEqual(a.samples, exactSample(engine, m, { count: 50, seed: 8, maxMessageEntries: 1 }).samples);
});

test('exact samples: the same seed gives the same samples, another seed others', () => {
  const m = randomFactorGraph(mulberry32(1104), 6, { cards: [2, 3], maxArity: 4, factors: 5, scale: 1 });
  const a = exactSample(engine, m, { count: 50, seed: 7 }).samples;
  const b = exactSample(engine, m, { count: 50, seed: 7 }).samples;
  const c = exactSample(engine, m, { count: 50, seed: 8 }).samples;
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
});

test('on worker threads (exactSampleParallel, exactMAPParallel, from the package entry): the samples and MAP of this thread for 1–3 workers, over several batches of slices and slices drawn more than once', async () => {
  const m = randomFactorGraph(mulberry32(1108), 14, { cards: [2, 3], maxArity: 3, factors: 18, scale: 1 });
  const opts = { count: 600, seed: 5, maxMessageEntries: 1 };
  const want = pkg.exactSample(engine, m, opts), wantMAP = pkg.exactMAP(engine, m, { maxMessageEntries: 1 });
  assert.ok(want.slices > 512, `${want.slices} slices: more than two batches`);
  // Batches of the decoding: three of first samples, then one of slices drawn more than once.
  const plan = pkg.slicedBucketPlan(m, { maxMessageEntries: 1 }), sliced = plan.sliced, runner = new SliceRunner(engine, plan.model, sliced);
  const batches: number[] = [];
  driveDecode(decodeSteps(m.n, sliced.slices, 'sample', 600, 5), (tasks) => (batches.push(tasks.length), tasks.map((t) => runner.decodeTask(t, 'sample', 5))));
  assert.deepEqual(batches.slice(0, 3), [256, 256, sliced.slices - 512]);
  assert.ok(batches.length === 4 && batches[3] > 10, `batches ${batches}`);
  for (const workers of [1, 2, 3]) {
    const got = await pkg.exactSampleParallel(engine, m, { ...opts, workers });
    assert.equal(got.workers, workers);
    assert.deepEqual(got.samples, want.samples, `samples, ${workers} workers`);
    assert.ok(Object.is(got.logZ, want.logZ));
    const map = await pkg.exactMAPParallel(engine, m, { maxMessageEntries: 1, workers });
    assert.deepEqual(map.configuration, wantMAP.configuration, `MAP, ${workers} workers`);
    assert.ok(Object.is(map.logPotential, wantMAP.logPotential));
  }
  // Without workers: a plan this small (> 512 one-entry slices, far below 2^27 configurations) on this thread.
  const auto = await pkg.exactSampleParallel(engine, m, opts), autoMAP = await pkg.exactMAPParallel(engine, m, { maxMessageEntries: 1 });
  assert.deepEqual([auto.workers, autoMAP.workers], [1, 1]);
  assert.deepEqual(auto.samples, want.samples);
  assert.deepEqual(autoMAP.configuration, wantMAP.configuration);
  await assert.rejects(pkg.exactSampleParallel(engine, m, { ...opts, workers: 0 }), /workers must be an integer in \[1, 256\], got 0/);
  await assert.rejects(pkg.exactSampleParallel(engine, m, { ...opts, workers: 257 }), /workers must be an integer in \[1, 256\], got 257/);
});

test('CLI: --method exact --map writes the UAI MAP format, and the configuration after its summary line in plain text; --samples N one configuration per line; both sliced under --max-memory', () => {
  const bin = fileURLToPath(new URL('../bin/relaxmrf.js', import.meta.url));
  const file = join(dataDir(), 'uai2014-more', 'CSP_12.uai');
  const map = spawnSync(process.execPath, [bin, 'infer', file, '--map', '--out-format', 'uai'], { encoding: 'utf8' });
  assert.equal(map.status, 0, map.stderr);
  const lines = map.stdout.trim().split('\n');
  assert.equal(lines[0], 'MAP');
  const tokens = lines[1].split(' ').map(Number);
  assert.equal(tokens[0], 67);
  assert.equal(tokens.length, 68);
  const model = readUAI(readFileSync(file, 'utf8'), file);
  const r = exactMAP(engine, model);
  assert.deepEqual(tokens.slice(1), Array.from(r.configuration));
  // Plain text: the summary line, then the configuration (it printed only the summary).
  const plain = spawnSync(process.execPath, [bin, 'infer', file, '--map'], { encoding: 'utf8' });
  const [summary, states, ...rest] = plain.stdout.trim().split('\n');
  assert.match(summary, /^MAP by max-product elimination .*: log-potential /);
  assert.deepEqual(states.split(' ').map(Number), Array.from(r.configuration));
  assert.equal(rest.length, 0);
  const smp = spawnSync(process.execPath, [bin, 'infer', file, '--samples', '5', '--seed', '3'], { encoding: 'utf8' });
  assert.equal(smp.status, 0, smp.stderr);
  const rows = smp.stdout.trim().split('\n').map((l) => l.split(' ').map(Number));
  assert.equal(rows.length, 5);
  for (const x of rows) assert.ok(Number.isFinite(model.logPotential(x)), 'a configuration of positive probability');
  assert.deepEqual(rows, exactSample(engine, model, { count: 5, seed: 3 }).samples.map((s) => Array.from(s)));
  const bad = spawnSync(process.execPath, [bin, 'infer', file, '--map', '--method', 'gibbs'], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  // --max-memory slices the plan --map and --samples decode along: the JSON names the slices, the
  // maximum is the unsliced one's, the samples the API's with the same budget.
  const sliced = spawnSync(process.execPath, [bin, 'infer', file, '--map', '--max-memory', '300K', '--json'], { encoding: 'utf8' });
  assert.equal(sliced.status, 0, sliced.stderr);
  const j = JSON.parse(sliced.stdout) as { map: number[]; logPotential: number; slices: number };
  assert.ok(j.slices > 1, `${j.slices} slices`);
  assert.ok(Math.abs(j.logPotential - r.logPotential) <= 1e-12 * Math.abs(r.logPotential), `${j.logPotential} vs ${r.logPotential}`);
  assert.ok(Math.abs(model.logPotential(j.map) - r.logPotential) <= 1e-12 * Math.abs(r.logPotential));
  const ss = spawnSync(process.execPath, [bin, 'infer', file, '--samples', '4', '--seed', '3', '--max-memory', '300K', '--json'], { encoding: 'utf8' });
  assert.equal(ss.status, 0, ss.stderr);
  const js = JSON.parse(ss.stdout) as { samples: number[][]; slices: number };
  const api = exactSample(engine, model, { count: 4, seed: 3, maxMemory: 300 * 1024 });
  assert.equal(js.slices, api.slices);
  assert.ok(api.slices > 1);
  assert.deepEqual(js.samples, api.samples.map((x) => Array.from(x)));
  // The slices on two worker threads: the same samples and maximum.
  const sw = spawnSync(process.execPath, [bin, 'infer', file, '--samples', '4', '--seed', '3', '--max-memory', '300K', '--json', '--workers', '2'], { encoding: 'utf8' });
  assert.equal(sw.status, 0, sw.stderr);
  const jw = JSON.parse(sw.stdout) as { samples: number[][]; workers: number };
  assert.deepEqual([jw.samples, jw.workers], [js.samples, 2]);
  const mw = spawnSync(process.execPath, [bin, 'infer', file, '--map', '--max-memory', '300K', '--json', '--workers', '2'], { encoding: 'utf8' });
  assert.equal(mw.status, 0, mw.stderr);
  assert.deepEqual(JSON.parse(mw.stdout).map, j.map);
});
