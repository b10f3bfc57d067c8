// Parallel tempering against enumeration: β = 1 marginals within 4 MCSE and the stepping-stone
// log Z within 4 of its standard errors, at fixed seeds, on random (frustrated: couplings of both
// signs) binary and multi-valued models, hard zeros, and a glassy ±J grid; the ladder checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { runTempering, ptRun, defaultLadder, respaceLadder, type PTOptions } from '../bindings/samplers/tempering.ts';
import { ModelBuilder, type Model } from '../bindings/core/model.ts';
import { ising } from '../bindings/core/builders.ts';
import { ModelError } from '../bindings/core/errors.ts';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { assertWithinMCSE, bruteForce, mulberry32, randomModel } from './helpers.ts';

const engine = await loadEngine();

function assertMatchesExact(model: Model, opts: PTOptions, maxSE = 0.01): void {
  const exact = bruteForce(model);
  const r = runTempering(engine, model, { samples: 4000, chains: 4, burnin: 400, ...opts });
  assertWithinMCSE(model, r, maxSE);
  assert.equal(r.logZKind, 'estimate');
  assert.ok(r.logZStdErr! > 0 && r.logZStdErr! < 0.1, `log Z standard error ${r.logZStdErr}`);
  assert.ok(Math.abs(r.logZ! - exact.logZ) <= 4 * r.logZStdErr!, `log Z ${r.logZ} ± ${r.logZStdErr} vs exact ${exact.logZ}`);
  assert.ok(Number.isFinite(r.diagnostics.rhatMax as number));
}

test('binary models with couplings of both signs: marginals within 4 MCSE, log Z within 4 SE', () => {
  const rand = mulberry32(31);
  for (let t = 0; t < 4; t++) assertMatchesExact(randomModel(rand, 7 + t, { density: 0.5, scale: 1.5 }), { seed: 10 + t });
});

test('multi-valued models (one-hot blocks at every temperature)', () => {
  const rand = mulberry32(32);
  for (let t = 0; t < 3; t++) assertMatchesExact(randomModel(rand, 6 + t, { cards: [2, 3, 4], density: 0.5 }), { seed: 20 + t });
});

test('hard zeros: β = 0 is uniform over all one-hot states and the stepping stone still gives log Z', () => {
  const b = new ModelBuilder(new Array(10).fill(2));
  const rand = mulberry32(7);
  for (let v = 0; v < 10; v++) b.addUnary(v, [0, rand() - 0.2]);
  for (let v = 0; v < 10; v++) b.addPairwise(v, (v + 1) % 10, [0, 0, 0, -Infinity]);
  assertMatchesExact(b.build(), { seed: 3 });
});

test('a glassy ±J 4×4 grid at β = 1.5 (two global modes), with a given fixed ladder and with the adaptive one', () => {
  const rand = mulberry32(11);
  const couplings: [number, number, number][] = [];
  for (let i = 0; i < 4; i++) {
    for (let j = 0; j < 4; j++) {
      if (j + 1 < 4) couplings.push([4 * i + j, 4 * i + j + 1, rand() < 0.5 ? 1 : -1]);
      if (i + 1 < 4) couplings.push([4 * i + j, 4 * i + j + 4, rand() < 0.5 ? 1 : -1]);
    }
  }
  const m = ising({ n: 16, couplings, h: Array.from({ length: 16 }, () => 0.2 * rand() - 0.1), beta: 1.5 });
  assertMatchesExact(m, { seed: 4, samples: 8000 }, 0.02);
  assertMatchesExact(m, { seed: 5, samples: 8000, ladder: [0, 0.1, 0.2, 0.35, 0.5, 0.7, 1] }, 0.02);
});

test('the ladder: default shape, re-spacing equalises rates, bad ladders refused', () => {
  const l = defaultLadder(5, 0.1);
  assert.equal(l[0], 0);
  assert.equal(l[4], 1);
  assert.ok(Math.abs(l[1] - 0.1) < 1e-12 && Math.abs(l[2] ** 3 - 0.01) < 1e-12);
  // A gap that swaps rarely is narrowed, one that always swaps is widened; endpoints stay.
  const r = respaceLadder([0, 0.25, 0.5, 0.75, 1], [0.99, 0.99, 0.1, 0.99]);
  assert.equal(r[0], 0);
  assert.equal(r[4], 1);
  assert.ok(r[3] - r[2] < 0.25, `${r}`);
  for (let k = 1; k < 5; k++) assert.ok(r[k] > r[k - 1]);
  for (const bad of [[0, 0.5, 0.5, 1], [0, 0.6, 0.4, 1], [0, 0.5], [1], [-0.1, 1], [0, 0.5, 1.2]]) {
    assert.throws(() => ptRun({ ladder: bad }), ModelError, `${bad}`);
  }
  assert.throws(() => ptRun({ replicas: 1 }), /at least 2 replicas/);
  assert.throws(() => ptRun({ replicas: 3, ladder: [0, 1] }), ModelError);
  assert.equal(ptRun({ ladder: [0.2, 1] }).adapt, false);
  assert.equal(ptRun({}).adapt, true);
});

test('the power check, determinism, and no log Z without β = 0', () => {
  const rand = mulberry32(9);
  const m = randomModel(rand, 8, { density: 0.5 });
  const other = bruteForce(randomModel(rand, 8, { density: 0.5 }));
  const a = runTempering(engine, m, { seed: 1, samples: 2000 });
  let worst = 0;
  a.marginals.forEach((row, v) => (worst = Math.max(worst, Math.abs(row[1] - other.marginals[v][1]) / a.marginalStdErr![v][1])));
  assert.ok(worst > 20, `only ${worst} standard errors apart`);
  const b = runTempering(engine, m, { seed: 1, samples: 2000 });
  assert.deepEqual(b.marginals, a.marginals);
  assert.equal(b.logZ, a.logZ);
  const c = runTempering(engine, m, { seed: 2, samples: 2000 });
  assert.notDeepEqual(c.marginals, a.marginals);
  const d = runTempering(engine, m, { seed: 1, samples: 500, ladder: [0.3, 0.6, 1] });
  assert.equal(d.logZ, null);
  assert.equal(d.diagnostics.replicas, 3);
});

test('CLI: --method pt reports log Z; bad replicas and ladders exit 2 with one line', () => {
  const BIN = fileURLToPath(new URL('../bin/relaxmrf.js', import.meta.url));
  const run = (...args: string[]) => spawnSync(process.execPath, [BIN, 'infer', 'ising:3x3,beta=0.3,h=0.1', ...args], { encoding: 'utf8' });
  const ok = run('--method', 'pt', '--replicas', '4', '--samples', '500', '--json');
  assert.equal(ok.status, 0, ok.stderr);
  const j = JSON.parse(ok.stdout);
  assert.equal(j.method, 'pt');
  assert.equal(j.logZKind, 'estimate');
  assert.equal(j.diagnostics.replicas, 4);
  for (const bad of [['--replicas', '1'], ['--ladder', '0,0.5,0.5,1'], ['--ladder', '0,0.7,0.3,1'], ['--ladder', '0,0.5'], ['--ladder', '0,0.5,0.9'], ['--ladder', '0,x,1'], ['--replicas', '3', '--ladder', '0,1']]) {
    const r = run('--method', 'pt', ...bad);
    assert.equal(r.status, 2, `${bad}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
  assert.equal(run('--method', 'gibbs', '--replicas', '4').status, 2);
});
