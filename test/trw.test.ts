import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine } from '../bindings/index.ts';
import { ModelBuilder } from '../bindings/core/model.ts';
import { ModelError } from '../bindings/core/errors.ts';
import { runTRW, trwUpperBound, randomTreeWeights, argsortStable, mergeRepeatedScopes } from '../bindings/variational/trw.ts';
import { runBounds } from '../bindings/variational/bounds.ts';
import { readFG } from '../bindings/io/formats.ts';
import { loadModelFile } from '../bindings/io/files.ts';
import { infer } from '../bindings/infer.ts';
import { bruteForce, dataDir, mulberry32, randomFactorGraph, randomModel, randomTreeFactorGraph } from './helpers.ts';
import { EngineError } from '../bindings/core/errors.ts';

test('TRW is never below exact log Z on random pairwise models (enumeration; cardinalities 2–3, zeros), and the gradient steps lower it', async () => {
  const engine = await loadEngine();
  const rand = mulberry32(7);
  let lowered = 0, converged = 0, models = 0;
  for (let t = 0; t < 30; t++) {
    const m = randomModel(rand, 7 + (t % 3), { cards: t % 2 ? [2] : [2, 3], density: 0.6, scale: 1 + (t % 3), zeros: t % 5 === 0 ? 0.15 : 0 });
    const exact = bruteForce(m).logZ;
    const opts = { schedule: 'sequential', maxIterations: 5000, seed: t } as const;
    if (Number.isNaN(exact)) {
      // Z = 0 (every configuration hits a zero): refused, not a number.
      assert.throws(() => runTRW(engine, m, opts), EngineError);
      continue;
    }
    models++;
    const r = runTRW(engine, m, opts);
    r.marginals.forEach((p) => assert.ok(Math.abs(p.reduce((a, b) => a + b) - 1) < 1e-12));
    // The certified bound holds whether or not the iteration converged.
    assert.ok(r.logZ! >= exact - 1e-9, `model ${t}: TRW ${r.logZ} below exact ${exact}`);
    if (!r.diagnostics.converged) continue;
    converged++;
    // At a fixed point the tree decomposition's bound is the TRW free energy.
    assert.ok(Math.abs(r.logZ! - (r.diagnostics.freeEnergy as number)) < 1e-6, `model ${t}: ${r.logZ} vs free energy ${r.diagnostics.freeEnergy}`);
    assert.ok((r.diagnostics.freeEnergy as number) <= (r.diagnostics.randomTreeFreeEnergy as number) + 1e-12, `model ${t}: the steps raised the bound`);
    if (r.logZ! < (r.diagnostics.randomTreeFreeEnergy as number) - 1e-3) lowered++;
  }
  assert.ok(converged >= models - 2, `${converged} of ${models} converged`);
  assert.ok(lowered >= converged - 3, `gradient steps lowered the bound on only ${lowered} of ${converged} models`);
});

test('TRW\'s tree-decomposition bound holds without convergence: one iteration, strong couplings', async () => {
  const engine = await loadEngine();
  const rand = mulberry32(23);
  for (let t = 0; t < 10; t++) {
    const m = randomModel(rand, 8, { cards: [2, 3], density: 0.7, scale: 4 });
    const exact = bruteForce(m).logZ;
    const r = runTRW(engine, m, { maxIterations: 1 + (t % 3), seed: t });
    assert.equal(r.diagnostics.converged, false);
    assert.ok(r.logZ! >= exact - 1e-9, `model ${t}: ${r.logZ} below exact ${exact}`);
  }
});

test('TRW is exact on pairwise trees (every spanning tree is the tree: ρ = 1)', async () => {
  const engine = await loadEngine();
  const rand = mulberry32(2);
  for (let t = 0; t < 12; t++) {
    const m = randomTreeFactorGraph(rand, 3 + (t % 6), { cards: [1, 2, 3, 4], maxArity: 2, scale: 2, forest: t % 3 === 0 });
    const want = bruteForce(m);
    const r = runTRW(engine, m, { tolerance: 1e-13 });
    assert.ok(Math.abs(r.logZ! - want.logZ) < 1e-9, `model ${t}: ${r.logZ} vs ${want.logZ}`);
    r.marginals.forEach((p, v) => p.forEach((x, k) => assert.ok(Math.abs(x - want.marginals[v][k]) < 1e-9)));
  }
});

test('TRW sums factors on the same pair first (a shared table used twice on one pair)', async () => {
  const engine = await loadEngine();
  const b = new ModelBuilder([2, 2, 3]);
  const id = b.shareTable([0.3, -1, 2, 0.5]);
  b.addSharedFactor([0, 1], id).addSharedFactor([0, 1], id).addPairwise(1, 2, [1, 0, -1, 0.2, 0.1, 2]).addPairwise(0, 2, [0, 1, 0.5, -0.5, 2, 0]);
  const m = b.build();
  const exact = bruteForce(m).logZ;
  const r = runTRW(engine, m);
  assert.ok(r.logZ! >= exact - 1e-9 && r.logZ! < exact + 1, `${r.logZ} vs ${exact}`);
});

test('random spanning forests: every edge covered, ρ in (0, 1], Σ_e ρ_e = n − components', () => {
  // A 4×4 grid plus a separate triangle: 16 + 3 variables, 2 components.
  const ei: number[] = [], ej: number[] = [];
  for (let r = 0; r < 4; r++) for (let c = 0; c < 4; c++) {
    if (c < 3) (ei.push(4 * r + c), ej.push(4 * r + c + 1));
    if (r < 3) (ei.push(4 * r + c), ej.push(4 * r + c + 4));
  }
  ei.push(16, 17, 16), ej.push(17, 18, 18);
  const { rho, trees } = randomTreeWeights(19, Int32Array.from(ei), Int32Array.from(ej), 3, 5);
  assert.ok(trees >= 3);
  assert.ok(rho.every((x) => x > 0 && x <= 1));
  assert.ok(Math.abs(rho.reduce((a, b) => a + b) - (19 - 2)) < 1e-12);
});

test('TRW on the shipped pairwise UAI files: never below the published log Z', async () => {
  const engine = await loadEngine();
  for (const [name, trwSteps, maxIterations] of [['CSP_11', 10, 2000], ['Segmentation_11', 2, 2000], ['Grids_11', 0, 300]] as const) {
    const file = join(dataDir(), 'uai2014', `${name}.uai`);
    const { model } = await loadModelFile(file);
    // .PR: log10 Z to 6 significant digits; the margin is one unit of the last digit (in nats).
    const pr = Number(readFileSync(`${file}.PR`, 'utf8').trim().split(/\s+/).pop());
    const exact = pr * Math.LN10, margin = 10 ** (Math.floor(Math.log10(Math.abs(pr))) - 5) * Math.LN10;
    const r = runTRW(engine, model, { damping: 0.5, schedule: 'sequential', maxIterations, trwSteps });
    assert.ok(r.logZ! >= exact - margin, `${name}: TRW ${r.logZ} below exact ${exact}`);
    // Grids_11 (couplings up to 4.9) does not converge in 300 (or 2000) iterations; the bound holds all the same.
    assert.equal(r.diagnostics.converged, name !== 'Grids_11', name);
  }
});

test('libDAI testfast.fg: TRW above exact; with ρ ≡ 1 (libDAI\'s TRWBP row, nrtrees = 0) it is BP', async () => {
  const engine = await loadEngine();
  const m = readFG(readFileSync(join(dataDir(), 'libdai', 'testfast.fg'), 'utf8'), 'testfast.fg');
  const exact = bruteForce(m).logZ;
  const r = trwUpperBound(engine, m, { tolerance: 1e-12 });
  assert.ok(r.converged && r.logZ >= exact, `TRW ${r.logZ} vs exact ${exact}`);
  assert.ok(r.logZ < r.initialLogZ, 'gradient steps tighten the bound');
  const bp = infer(engine, m, { method: 'bp', tolerance: 1e-12 });
  assert.ok(Math.abs(bp.logZ! - exact - 7.187e-4) < 1e-6); // libDAI's TRWBP row: LOGZ ERROR +7.187e-04
});

test('bounds: logZLower ≤ exact ≤ logZUpper on random binary and ternary pairwise models; logZ null, kind "interval"', async () => {
  const engine = await loadEngine();
  const rand = mulberry32(19);
  for (let t = 0; t < 8; t++) {
    const m = randomModel(rand, 8, { cards: t % 2 ? [2] : [2, 3], density: 0.5, scale: 1.5 });
    const exact = bruteForce(m).logZ;
    const r = infer(engine, m, { method: 'bounds', seed: t, damping: 0.3 });
    assert.equal(r.logZ, null);
    assert.equal(r.logZKind, 'interval');
    assert.ok(r.logZLower! <= exact + 1e-9 && exact <= r.logZUpper! + 1e-9, `model ${t}: [${r.logZLower}, ${r.logZUpper}] vs ${exact}`);
    assert.equal(r.diagnostics.lowerMethod, 'mf');
  }
  const other = infer(engine, randomModel(rand, 5), { method: 'bp' });
  assert.equal(other.logZLower, null);
  assert.equal(other.logZUpper, null);
});

test('argsortStable: the order of a stable comparator sort — ties in index order, ±0 equal, negatives, subnormals, huge values', () => {
  const rand = mulberry32(31);
  const pool = [0, -0, 1, -1, 0.5, 5e-324, -5e-324, 1e308, -1e308, 2 ** -1074 * 3, 0.1 + 0.2, 0.3];
  for (const m of [0, 1, 2, 17, 1000, 4096, 70000]) {
    const w = Float64Array.from({ length: m }, () => (rand() < 0.5 ? pool[Math.floor(rand() * pool.length)] : (rand() - 0.5) * 10 ** Math.floor(rand() * 12 - 6)));
    const expected = Array.from({ length: m }, (_, e) => e).sort((a, b) => w[a] - w[b]);
    assert.deepEqual(Array.from(argsortStable(w)), expected, `m = ${m}`);
  }
});

test('mergeRepeatedScopes: the same model when no scope repeats, summed factors when one does (unary, pair, triple)', () => {
  const build = (scopes: number[][]) => {
    const b = new ModelBuilder([2, 2, 2, 2]);
    // Shared tables keep factors on one scope separate (addFactor would sum them already).
    for (const sc of scopes) b.addSharedFactor(sc, b.shareTable(new Float64Array(2 ** sc.length).map((_, k) => 0.1 * (k + sc.length))));
    return b.build();
  };
  const distinct = build([[0], [1], [0, 1], [1, 2], [0, 2], [1, 2, 3], [0, 2, 3], [3]]);
  assert.equal(mergeRepeatedScopes(distinct), distinct);
  for (const extra of [[3], [0, 2], [1, 2, 3]]) {
    const m = build([[0], [1], [0, 1], [1, 2], [0, 2], [1, 2, 3], [0, 2, 3], [3], extra]);
    const merged = mergeRepeatedScopes(m);
    assert.notEqual(merged, m, `repeated ${extra}`);
    assert.equal(merged.nFactors, m.nFactors - 1, `repeated ${extra}`);
  }
});

test('bounds warns when its interval comes out empty (fields of ±10⁶: mean field a rounding above TRW, returned silently)', async () => {
  const { runBounds } = await import('../bindings/variational/bounds.ts');
  const { ising } = await import('../bindings/core/builders.ts');
  const engine = await loadEngine();
  const m = ising({ n: 3, couplings: [[0, 1, 0.3]], h: [1e6, -1e6, 0] });
  const r = runBounds(engine, m);
  assert.ok(r.logZLower! > r.logZUpper!, 'this model crosses by rounding');
  assert.ok(r.warnings!.some((w) => /^the bounds cross: .*the rounding of their sums in double precision/.test(w)), JSON.stringify(r.warnings));
  const fine = runBounds(engine, ising({ n: 3, couplings: [[0, 1, 0.3], [1, 2, -0.2]], h: 0.1 }));
  assert.ok(fine.logZLower! <= fine.logZUpper!);
  assert.ok(!fine.warnings!.some((w) => /bounds cross/.test(w)));
});

test('TRW reports progress by BP runs (phase trw: the start, then each step, ending at 1 + trwSteps); bounds reports TRW then mean field (both ran in silence for 10 s on Pedigree_12)', async () => {
  const { isingLattice } = await import('../bindings/core/builders.ts');
  const { infer } = await import('../bindings/infer.ts');
  const engine = await loadEngine();
  const m = isingLattice({ shape: [6, 6], beta: 0.3, h: 0.1 });
  const seen: { phase: string; done: number; total: number }[] = [];
  infer(engine, m, { method: 'trw', trwSteps: 4, onProgress: (p) => seen.push({ ...p }) });
  assert.ok(seen.length >= 2 && seen.every((p) => p.phase === 'trw' && p.total === 5), JSON.stringify(seen));
  for (let k = 1; k < seen.length; k++) assert.ok(seen[k].done >= seen[k - 1].done);
  assert.equal(seen.at(-1)!.done, 5);
  const phases: string[] = [];
  infer(engine, m, { method: 'bounds', trwSteps: 2, onProgress: (p) => void (phases.at(-1) !== p.phase && phases.push(p.phase)) });
  assert.deepEqual(phases, ['trw', 'mf']);
});
