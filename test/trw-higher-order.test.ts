// TRW's certified bound computed in WASM (equal to the forest-by-forest elimination it replaced), and
// TRW on factor graphs of any arity through the bipartite pairwise form.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine } from '../bindings/index.ts';
import { ModelBuilder, type Model } from '../bindings/core/model.ts';
import { EngineError } from '../bindings/core/errors.ts';
import type { Engine } from '../bindings/core/engine.ts';
import { exactInference } from '../bindings/exact/exact.ts';
import { BPSolver } from '../bindings/variational/bp.ts';
import { factorNodesPairwise, mergeRepeatedScopes, randomTreeWeights, runTRW, treeDecompositionBound } from '../bindings/variational/trw.ts';
import { loadModelFile } from '../bindings/io/files.ts';
import { infer } from '../bindings/infer.ts';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { bruteForce, dataDir, mulberry32, randomFactorGraph, randomModel, randomTreeFactorGraph } from './helpers.ts';

/** The bound as it was computed before: each forest's reparametrised model built here, its log Z by exact elimination. */
function referenceBound(engine: Engine, m: Model, solver: BPSolver, edgeFactor: number[], ei: Int32Array, ej: Int32Array, forests: Uint8Array[], mu: number[], rho: Float64Array): number {
  const msg = solver.messages(), at = solver.msgStart;
  const { card, scopeStart } = m;
  const finite = (x: number) => (x === -Infinity ? 0 : x);
  const unary = Array.from(card, (K) => new Float64Array(K));
  for (let f = 0; f < m.nFactors; f++) {
    if (m.arity(f) !== 1) continue;
    const v = m.scopeVars[scopeStart[f]], th = m.table(f);
    for (let k = 0; k < card[v]; k++) unary[v][k] += th[k];
  }
  const pair = edgeFactor.map((f, e) => {
    const th = m.table(f), Ki = card[ei[e]], Kj = card[ej[e]];
    const mi = at[scopeStart[f]], mj = at[scopeStart[f] + 1];
    for (let k = 0; k < Ki; k++) unary[ei[e]][k] += rho[e] * msg[mi + k];
    for (let k = 0; k < Kj; k++) unary[ej[e]][k] += rho[e] * msg[mj + k];
    const table = new Float64Array(Ki * Kj);
    for (let a = 0; a < Ki; a++) for (let b = 0; b < Kj; b++) table[a * Kj + b] = th[a * Kj + b] / rho[e] - finite(msg[mi + a]) - finite(msg[mj + b]);
    return table;
  });
  let bound = m.logConst;
  forests.forEach((T, t) => {
    const b = new ModelBuilder(card);
    for (let v = 0; v < m.n; v++) b.addUnary(v, unary[v]);
    for (let e = 0; e < edgeFactor.length; e++) if (T[e]) b.addPairwise(ei[e], ej[e], pair[e]);
    bound += mu[t] * exactInference(engine, b.build()).logZ;
  });
  return bound;
}

test('the WASM tree-decomposition bound equals per-forest exact elimination (to 1e-12), converged or not, with zeros and higher-order nodes', async () => {
  const engine = await loadEngine();
  const rand = mulberry32(5);
  let compared = 0;
  // Model 12: a factor that rules out x_0 = 1 and a pair that rules out x_2 = 0, so some messages are −∞.
  const forced = new ModelBuilder([2, 2, 2, 3])
    .addFactor([0, 1, 2], [0.5, -1, 0.2, 1, -Infinity, -Infinity, -Infinity, -Infinity])
    .addPairwise(2, 3, [-Infinity, -Infinity, -Infinity, 0.3, -0.7, 1.1]).addPairwise(1, 3, [0.4, 0, -2, 1, 0.5, 0]).addPairwise(0, 3, [1, 2, 0, 0, 1, 0.5]).addPairwise(0, 1, [0, 1, 1, 0])
    .build();
  for (let t = 0; t < 13; t++) {
    const base = t === 12 ? forced : t % 3 === 2
      ? randomFactorGraph(rand, 6, { cards: [1, 2, 3], maxArity: 3, factors: 8, zeros: 0.1 })
      : randomModel(rand, 7, { cards: t % 2 ? [2] : [1, 2, 3], density: 0.6, scale: 2, zeros: t % 4 === 0 ? 0.1 : 0 });
    const m = factorNodesPairwise(mergeRepeatedScopes(base)).model;
    const edgeFactor: number[] = [];
    for (let f = 0; f < m.nFactors; f++) if (m.arity(f) === 2) edgeFactor.push(f);
    const ei = Int32Array.from(edgeFactor, (f) => m.scope(f)[0]), ej = Int32Array.from(edgeFactor, (f) => m.scope(f)[1]);
    const { rho, forests } = randomTreeWeights(m.n, ei, ej, 4, t);
    const mu = forests.map(() => 1 / forests.length);
    const w = new Float64Array(m.nFactors).fill(1);
    edgeFactor.forEach((f, e) => (w[f] = rho[e]));
    const solver = new BPSolver(engine, m);
    try {
      solver.setWeights(w);
      try {
        solver.run({ damping: 0.3, schedule: 'sequential', maxIterations: 1 + 40 * (t % 2), tolerance: 1e-12 });
      } catch (e) {
        assert.ok(e instanceof EngineError); // Z = 0
        continue;
      }
      const got = treeDecompositionBound(solver, ei, ej, edgeFactor, forests, mu);
      const want = referenceBound(engine, m, solver, edgeFactor, ei, ej, forests, mu, rho);
      assert.ok(Math.abs(got - want) <= 1e-12 * Math.max(1, Math.abs(want)), `model ${t}: ${got} vs ${want}`);
      compared++;
    } finally {
      solver.dispose();
    }
  }
  assert.ok(compared >= 10, `${compared} models compared`);
});

test('the bipartite pairwise form has the factor graph\'s log Z and marginals (enumeration)', async () => {
  const rand = mulberry32(11);
  for (let t = 0; t < 6; t++) {
    const m = randomFactorGraph(rand, 4, { cards: [1, 2, 3], maxArity: 4, factors: 4, zeros: 0.2 });
    const { model: p, factorNodes } = factorNodesPairwise(m);
    assert.ok(p.isPairwise);
    let big = 0;
    for (let f = 0; f < m.nFactors; f++) if (m.arity(f) > 2) big++;
    assert.equal(factorNodes, big);
    const want = bruteForce(m), got = bruteForce(p);
    if (Number.isNaN(want.logZ)) continue;
    assert.ok(Math.abs(got.logZ - want.logZ) < 1e-9, `model ${t}: ${got.logZ} vs ${want.logZ}`);
    want.marginals.forEach((q, v) => q.forEach((x, k) => assert.ok(Math.abs(got.marginals[v][k] - x) < 1e-9)));
  }
});

test('TRW is never below exact log Z on random higher-order factor graphs (arities 1–4, cardinalities 1–4, zeros)', async () => {
  const engine = await loadEngine();
  const rand = mulberry32(29);
  let models = 0, nodes = 0;
  for (let t = 0; t < 24; t++) {
    const m = randomFactorGraph(rand, 6 + (t % 3), { cards: t % 2 ? [2] : [1, 2, 3, 4], maxArity: 4, factors: 6 + (t % 4), scale: 1 + (t % 3), zeros: t % 3 === 0 ? 0.15 : 0 });
    const exact = bruteForce(m).logZ;
    const opts = { schedule: 'sequential', damping: 0.3, maxIterations: 300 + 300 * (t % 2), seed: t, trwSteps: 3 } as const;
    if (Number.isNaN(exact)) {
      assert.throws(() => runTRW(engine, m, opts), EngineError);
      continue;
    }
    models++;
    const r = runTRW(engine, m, opts);
    nodes += r.diagnostics.factorNodes as number;
    assert.equal(r.marginals.length, m.n);
    r.marginals.forEach((p, v) => (assert.equal(p.length, m.card[v]), assert.ok(Math.abs(p.reduce((a, b) => a + b) - 1) < 1e-12)));
    assert.ok(r.logZ! >= exact - 1e-9, `model ${t}: TRW ${r.logZ} below exact ${exact}`);
    assert.ok(r.logZ! < exact + 10, `model ${t}: TRW ${r.logZ} far above exact ${exact}`);
  }
  assert.ok(models >= 18 && nodes >= 2 * models, `${models} models, ${nodes} factor nodes`);
});

test('TRW is exact on tree-structured factor graphs of any arity (the bipartite graph is a tree)', async () => {
  const engine = await loadEngine();
  const rand = mulberry32(3);
  for (let t = 0; t < 8; t++) {
    const m = randomTreeFactorGraph(rand, 4 + (t % 4), { cards: [1, 2, 3], maxArity: 4, scale: 2, zeros: 0.1, forest: t % 3 === 0 });
    const want = bruteForce(m);
    if (Number.isNaN(want.logZ)) continue;
    const r = runTRW(engine, m, { tolerance: 1e-13, schedule: 'sequential' });
    assert.ok(Math.abs(r.logZ! - want.logZ) < 1e-8, `model ${t}: ${r.logZ} vs ${want.logZ}`);
    r.marginals.forEach((p, v) => p.forEach((x, k) => assert.ok(Math.abs(x - want.marginals[v][k]) < 1e-8)));
  }
});

test('bounds on higher-order factor graphs: logZLower ≤ exact ≤ logZUpper', async () => {
  const engine = await loadEngine();
  const rand = mulberry32(41);
  for (let t = 0; t < 6; t++) {
    const m = randomFactorGraph(rand, 7, { cards: [2, 3], maxArity: 4, factors: 8, scale: 1.5 });
    const exact = bruteForce(m).logZ;
    const r = infer(engine, m, { method: 'bounds', seed: t, damping: 0.3 });
    assert.equal(r.logZKind, 'interval');
    assert.ok(r.logZLower! <= exact + 1e-9 && exact <= r.logZUpper! + 1e-9, `model ${t}: [${r.logZLower}, ${r.logZUpper}] vs ${exact}`);
  }
});

test('UAI CSP_12 and Alchemy_11 (arity 3): TRW and bounds hold the published log Z', async () => {
  const engine = await loadEngine();
  for (const name of ['CSP_12', 'Alchemy_11']) {
    const file = join(dataDir(), 'uai2014-more', `${name}.uai`);
    const { model } = await loadModelFile(file);
    const pr = Number(readFileSync(`${file}.PR`, 'utf8').trim().split(/\s+/).pop());
    const exact = pr * Math.LN10, margin = 10 ** (Math.floor(Math.log10(Math.abs(pr))) - 5) * Math.LN10;
    // The residual schedule converges on both (damped sequential sweeps oscillate on Alchemy_11; the bound then holds but is far off).
    const r = infer(engine, model, { method: 'bounds', damping: 0.5, schedule: 'residual', maxIterations: 300, trwSteps: 1, maxSweeps: 200 });
    assert.equal(r.diagnostics['trw.converged'], true, name);
    assert.ok(r.logZUpper! >= exact - margin, `${name}: TRW ${r.logZUpper} below exact ${exact}`);
    assert.ok(r.logZLower! <= exact + margin, `${name}: mean field ${r.logZLower} above exact ${exact}`);
    assert.ok((r.diagnostics['trw.factorNodes'] as number) > 0);
  }
});

test('a factor too large for one node is refused by the engine (CLI exit 3, with the size)', async () => {
  const engine = await loadEngine();
  const b = new ModelBuilder(Array(5).fill(10));
  b.addFactor([0, 1, 2, 3, 4], new Float64Array(1e5));
  assert.throws(() => runTRW(engine, b.build()), (e: Error) => e instanceof EngineError && e.message.includes('100000 states') && !e.message.includes('\n'));
  const file = join(mkdtempSync(join(tmpdir(), 'relaxmrf-trw-')), 'wide.uai');
  writeFileSync(file, `MARKOV\n5\n10 10 10 10 10\n1\n5 0 1 2 3 4\n100000\n${'1 '.repeat(1e5)}\n`);
  const bin = fileURLToPath(new URL('../bin/relaxmrf.js', import.meta.url));
  for (const method of ['trw', 'bounds']) {
    const r = spawnSync(process.execPath, [bin, 'infer', file, '--method', method], { encoding: 'utf8' });
    assert.equal(r.status, 3, r.stderr);
    assert.match(r.stderr, /100000 states is past the limit of 65536/);
  }
});

test('the certified bound from messages BP did not compute exactly: damped or diverging log messages gave Alchemy_11 a "bound" of 1274.98 (converged) and 6.5e306 against an exact 1396.01; arc consistency keeps the −∞ messages it may, the rest are made finite', async () => {
  const engine = await loadEngine();
  const { arcConsistentStates } = await import('../bindings/core/feasible.ts');
  // Arc consistency: x0 = 1 is forbidden by a unary, so the pair (x0, x1) that needs x0 = 1 for x1 = 2 rules it out too.
  const small = new ModelBuilder([2, 3]).addUnary(0, [0, -Infinity]).addPairwise(0, 1, [0, 0, -Infinity, -Infinity, -Infinity, 0]).build();
  assert.deepEqual(Array.from(arcConsistentStates(small).alive), [1, 0, 1, 1, 0]);
  const { model } = await loadModelFile(join(dataDir(), 'uai2014-more', 'Alchemy_11.uai'));
  const exact = 1396.0093;
  for (const opts of [{ schedule: 'parallel', damping: 0.5 }, { schedule: 'parallel', maxIterations: 300 }] as const) {
    const r = runTRW(engine, model, { ...opts, trwSteps: 0 });
    assert.ok(Number.isFinite(r.logZ!) && r.logZ! >= exact, `${JSON.stringify(opts)}: ${r.logZ}`);
  }
  // The default on higher-order models: the residual schedule, damped (it converges, 1590).
  const d = runTRW(engine, model);
  assert.equal(d.diagnostics.schedule, 'residual');
  assert.equal(d.diagnostics.damping, 0.5);
  assert.ok(d.diagnostics.converged && d.logZ! >= exact && d.logZ! < 1600, `${d.logZ}`);
});
