// Parallel tempering on factor graphs of any arity (assembly/samplers/tempering_fg.ts) and with HMC
// replicas on the relaxed density p_β(x) (assembly/samplers/tempering_relaxed.ts) against
// enumeration: β = 1 marginals within 4 MCSE and stepping-stone log Z within 4 SE at fixed seeds;
// option refusals and the CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { runTempering, type PTOptions } from '../bindings/samplers/tempering.ts';
import { ModelBuilder, type Model } from '../bindings/core/model.ts';
import { ModelError } from '../bindings/core/errors.ts';
import { bruteForce, mulberry32, randomModel, randomFactorGraph } from './helpers.ts';

const engine = await loadEngine();

function assertMatchesExact(name: string, model: Model, opts: PTOptions, maxSE = 0.015) {
  const exact = bruteForce(model);
  const r = runTempering(engine, model, { chains: 4, burnin: 400, samples: 3000, ...opts });
  assert.equal(r.partial, false);
  let worst = 0;
  r.marginals.forEach((row, v) => {
    row.forEach((p, k) => {
      const se = r.marginalStdErr![v][k];
      assert.ok(se < maxSE, `${name}: variable ${v} state ${k}: standard error ${se} too large for a meaningful test`);
      const tol = 4 * se + 1e-12;
      worst = Math.max(worst, Math.abs(p - exact.marginals[v][k]) / (se + 1e-12));
      assert.ok(Math.abs(p - exact.marginals[v][k]) <= tol, `${name}: variable ${v} state ${k}: ${p} vs exact ${exact.marginals[v][k]} (tolerance ${tol})`);
    });
  });
  const z = (r.logZ! - exact.logZ) / r.logZStdErr!;
  const d = r.diagnostics;
  console.log(`# ${name}: worst marginal ${worst.toFixed(2)} SE; log Z error ${(r.logZ! - exact.logZ).toFixed(4)} = ${z.toFixed(2)} SE (SE ${r.logZStdErr!.toFixed(4)}); swap rate ≥ ${Number(d.swapRateMin).toFixed(2)}${d.acceptRate !== undefined ? `, accept ${Number(d.acceptRate).toFixed(2)}, ε ${Number(d.stepSizeMin).toFixed(2)}–${Number(d.stepSizeMax).toFixed(2)}` : ''}`);
  assert.equal(r.logZKind, 'estimate');
  assert.ok(r.logZStdErr! > 0 && r.logZStdErr! < 0.15, `${name}: log Z standard error ${r.logZStdErr}`);
  assert.ok(Math.abs(z) < 4, `${name}: log Z ${r.logZ} ± ${r.logZStdErr} vs exact ${exact.logZ}`);
  return r;
}

test('factor graphs of any arity (arities 1–4, cardinalities 2–3, hard zeros): marginals within 4 MCSE, log Z within 4 SE', () => {
  const rand = mulberry32(41);
  for (let t = 0; t < 3; t++) {
    const model = randomFactorGraph(rand, 7 + t, { cards: [2, 3], maxArity: 4, factors: 8, scale: 1.2, zeros: t === 2 ? 0.15 : 0 });
    assert.equal(model.isPairwise, false);
    const r = assertMatchesExact(`factor graph ${t}`, model, { seed: 5 + t });
    assert.equal(r.diagnostics.kernel, 'factor-graph');
  }
});

test('a pairwise model keeps the canonical kernel', () => {
  const model = randomModel(mulberry32(3), 7, { cards: [2, 3], density: 0.5 });
  const r = runTempering(engine, model, { seed: 1, samples: 200, burnin: 50 });
  assert.equal(r.diagnostics.kernel, 'canonical');
});

test("moves 'hmc' (HMC replicas on p_β(x)): binary and multi-valued models, marginals within 4 MCSE, log Z within 4 SE", () => {
  const rand = mulberry32(42);
  const binary = randomModel(rand, 8, { density: 0.5, scale: 1.2 });
  const r = assertMatchesExact('hmc replicas, binary', binary, { seed: 3, moves: 'hmc' });
  assert.equal(r.diagnostics.kernel, 'relaxed');
  assert.equal(r.diagnostics.leapfrogSteps, 5);
  assert.ok(Number(r.diagnostics.acceptRate) > 0.5, `accept ${r.diagnostics.acceptRate}`);
  const b = new ModelBuilder([3, 2, 4, 3, 2, 3]);
  const rr = mulberry32(8);
  const card = [3, 2, 4, 3, 2, 3];
  for (let v = 0; v < 6; v++) b.addUnary(v, Array.from({ length: card[v] }, (_, k) => (v === 2 && k === 1 ? -Infinity : rr() - 0.5)));
  for (const [i, j] of [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [0, 5], [0, 2]]) b.addPairwise(i, j, Array.from({ length: card[i] * card[j] }, () => 1.5 * (rr() - 0.5)));
  assertMatchesExact('hmc replicas, multi-valued with a forbidden state', b.build(), { seed: 4, moves: 'hmc', leapfrogSteps: 4, relaxation: { factor: 'dense-eigen' } });
});

test("moves 'hmc' default to 16 temperatures: at 8 the stepping-stone weights are heavy-tailed and log Z low (a mean 1.0–1.2 SE on 6×6 and 8×8 grids, silently), which now warns", async () => {
  const engine = await loadEngine();
  const { isingLattice } = await import('../bindings/core/builders.ts');
  const { exactInference } = await import('../bindings/exact/exact.ts');
  const grid = isingLattice({ shape: [6, 6], beta: 0.5, h: 0.05 });
  const exact = exactInference(engine, grid).logZ;
  const heavy = (r: { warnings?: string[] }) => (r.warnings ?? []).some((w) => /^log Z \(stepping stone\): its rungs' weights vary so much over the draws that the log of their means is biased low/.test(w));
  let warned8 = 0, warned16 = 0, z16 = 0;
  for (let seed = 1; seed <= 6; seed++) {
    const eight = runTempering(engine, grid, { moves: 'hmc', replicas: 8, samples: 600, burnin: 200, seed });
    warned8 += +heavy(eight);
    const dflt = runTempering(engine, grid, { moves: 'hmc', samples: 600, burnin: 200, seed });
    assert.equal(dflt.diagnostics.replicas, 16);
    warned16 += +heavy(dflt);
    z16 += (dflt.logZ! - exact) / dflt.logZStdErr! / 6;
  }
  assert.ok(warned8 >= 3, `8 temperatures warned in ${warned8} of 6 seeds`);
  assert.equal(warned16, 0);
  assert.ok(Math.abs(z16) < 1, `mean z at 16 temperatures ${z16}`);
  // Gibbs replicas keep 8 and do not warn.
  const gibbs = runTempering(engine, grid, { samples: 600, burnin: 200, seed: 1 });
  assert.equal(gibbs.diagnostics.replicas, 8);
  assert.ok(!heavy(gibbs));
});

test('options: bad moves, HMC options without moves hmc, higher-order factors and zero couplings with hmc are ModelErrors', () => {
  const model = randomModel(mulberry32(1), 5);
  assert.throws(() => runTempering(engine, model, { moves: 'metropolis' as 'gibbs' }), /moves must be one of gibbs, hmc/);
  assert.throws(() => runTempering(engine, model, { leapfrogSteps: 3 }), /apply to parallel tempering with moves 'hmc'/);
  assert.throws(() => runTempering(engine, model, { moves: 'hmc', leapfrogSteps: 0 }), ModelError);
  assert.throws(() => runTempering(engine, randomFactorGraph(mulberry32(2), 5, { maxArity: 3, factors: 6 }), { moves: 'hmc' }), ModelError);
  // Zeros between variables (seed 3: Z > 0; seed 1's zeros leave no configuration, refused first as Z = 0).
  assert.throws(() => runTempering(engine, randomModel(mulberry32(3), 5, { density: 1, zeros: 0.3 }), { moves: 'hmc' }), (e: unknown) => e instanceof ModelError && /zero potential/.test((e as Error).message));
  assert.throws(() => runTempering(engine, randomModel(mulberry32(1), 5, { density: 1, zeros: 0.3 }), { moves: 'hmc' }), /no configuration has positive probability/);
});

test('CLI: --pt-moves hmc within 4 SE of exact; a bad value exits 2 with one line', () => {
  const BIN = fileURLToPath(new URL('../bin/relaxmrf.js', import.meta.url));
  const spec = 'ising:3x3,beta=0.3,h=0.1';
  const run = (...args: string[]) => spawnSync(process.execPath, [BIN, 'infer', spec, ...args], { encoding: 'utf8' });
  const exact = JSON.parse(run('--json').stdout).logZ;
  const r = run('--method', 'pt', '--pt-moves', 'hmc', '--samples', '1000', '--seed', '2', '--json');
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.equal(j.diagnostics.moves, 'hmc');
  assert.equal(j.diagnostics.kernel, 'relaxed');
  assert.ok(j.logZStdErr > 0 && Math.abs(j.logZ - exact) <= 4 * j.logZStdErr, `${j.logZ} ± ${j.logZStdErr} vs ${exact}`);
  const bad = run('--method', 'pt', '--pt-moves', 'wolff');
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--pt-moves must be one of gibbs, hmc/);
  assert.equal(bad.stderr.trim().split('\n').length, 1);
  const wrong = run('--method', 'gibbs', '--pt-moves', 'hmc');
  assert.equal(wrong.status, 2);
  assert.match(wrong.stderr, /--pt-moves applies to --method pt/);
});
