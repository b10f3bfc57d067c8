// AIS on the relaxed density p_β(x) with HMC transitions (assembly/logz/ais_hmc.ts,
// bindings/logz/ais-hmc.ts): the weights against the path's end points computed by enumeration over s,
// plain importance sampling (no transitions) and full AIS against exact log Z, options and the CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { runAIS, aisLogZ0, logMeanExp } from '../bindings/logz/logz.ts';
import { buildRelaxation } from '../bindings/relax/relaxation.ts';
import { BoundRelaxation } from '../bindings/relax/relaxation-bound.ts';
import { seedWords } from '../bindings/core/seed.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import { ModelBuilder } from '../bindings/core/model.ts';
import { ModelError } from '../bindings/core/errors.ts';
import { bruteForce, mulberry32, randomModel } from './helpers.ts';

const engine = await loadEngine();

/** A Potts-like model: 3 and 4 states, one state forbidden by its unary (bias −∞), mixed couplings. */
function multiValued(seed: number) {
  const rand = mulberry32(seed);
  const card = [3, 2, 4, 3, 2];
  const b = new ModelBuilder(card);
  for (let v = 0; v < card.length; v++) b.addUnary(v, Array.from({ length: card[v] }, (_, k) => (v === 2 && k === 1 ? -Infinity : rand() - 0.5)));
  for (const [i, j] of [[0, 1], [1, 2], [2, 3], [3, 4], [0, 4], [0, 2]]) b.addPairwise(i, j, Array.from({ length: card[i] * card[j] }, () => 1.2 * (rand() - 0.5)));
  return b.build();
}

/** log f_β(x) = −½|x|² + log Σ_s exp(√β sᵀMx + β bᵀs) over the valid s, by enumeration (dense M). */
function logFBrute(relax: ReturnType<typeof buildRelaxation>, x: Float64Array, beta: number): number {
  const { form, d, factor } = relax;
  assert.equal(factor.kind, 'dense');
  const M = (factor as { values: Float64Array }).values, m = factor.m;
  const Mx = new Float64Array(form.nBits);
  for (let i = 0; i < form.nBits; i++) for (let j = 0; j < m; j++) Mx[i] += M[i * m + j] * x[j];
  const terms: number[] = [];
  const choice = new Int32Array(form.n);
  const rec = (v: number, acc: number) => {
    if (v === form.n) {
      terms.push(acc);
      return;
    }
    const b0 = form.blockStart[v];
    const options = form.oneHot[v] ? form.card[v] : 2;
    for (let k = 0; k < options; k++) {
      choice[v] = k;
      // Free bit: k = 0 is s = 0 (no term); one-hot: bit b0 + k on.
      if (!form.oneHot[v] && k === 0) rec(v + 1, acc);
      else {
        const bit = form.oneHot[v] ? b0 + k : b0;
        const bias = form.a[bit] - 0.5 * d[bit];
        if (bias === -Infinity) continue;
        rec(v + 1, acc + Math.sqrt(beta) * Mx[bit] + beta * bias);
      }
    }
  };
  rec(0, 0);
  const top = Math.max(...terms);
  let s = 0;
  for (const t of terms) s += Math.exp(t - top);
  let sq = 0;
  for (const xi of x) sq += xi * xi;
  return -0.5 * sq + top + Math.log(s);
}

test('HMC AIS weights: with no transitions, log w = log f_1(x) − log f_0(x) at the start x for any schedule; importance sampling along the path within 4 SE of enumeration', () => {
  for (const [name, model] of [['binary', randomModel(mulberry32(3), 6, { density: 0.6, scale: 0.5 })], ['multi-valued', multiValued(4)]] as const) {
    const relax = buildRelaxation(engine, model, { factor: 'dense-cholesky' });
    const bound = new BoundRelaxation(engine, relax);
    try {
      const k = engine.kernels, arena = bound.arena;
      const chain = arena.alloc(k.aisHMCStateBytes(bound.relaxed));
      const betas = Float64Array.from([0, 0.01, 0.2, 0.21, 0.7, 1]);
      const betaPtr = arena.allocF64(betas), epsPtr = arena.allocF64(new Float64Array(betas.length).fill(0.5));
      const [lo, hi] = seedWords(7);
      const logW: number[] = [];
      const R = 20000;
      for (let r = 0; r < R; r++) {
        k.rngSeed(chain, lo, hi, r, 1);
        const lw = k.aisHMCRun(bound.relaxed, chain, betaPtr, betas.length, 0, 5, epsPtr, 0, 0, 0);
        if (r < 20) {
          const x = arena.readF64(chain + Number(k.aisHMCXOffset()), relax.factor.m);
          const want = logFBrute(relax, x, 1) - logFBrute(relax, x, 0);
          assert.ok(Math.abs(lw - want) < 1e-9 * Math.max(1, Math.abs(want)), `${name} run ${r}: log w ${lw} vs ${want}`);
        }
        logW.push(lw);
      }
      const exact = bruteForce(model).logZ;
      const lme = logMeanExp(logW);
      const est = lme.value + aisLogZ0(relax.form) + relax.form.logZOffset;
      const z = (est - exact) / lme.stdErr;
      console.log(`# importance sampling from f_0, ${name}: error ${(est - exact).toFixed(4)} = ${z.toFixed(2)} SE (SE ${lme.stdErr.toFixed(4)})`);
      assert.ok(lme.stdErr > 0 && lme.stdErr < 0.2 && Math.abs(z) < 4, `${name}: ${est} ± ${lme.stdErr} vs ${exact}`);
    } finally {
      bound.dispose();
    }
  }
});

test('AIS with HMC transitions: log Z within 4 SE of enumeration (binary, multi-valued with a forbidden state, a 4×4 grid with the sparse factor; tuned and given step sizes)', () => {
  const rand = mulberry32(12);
  const grid = isingLattice({ shape: [4, 4], J: () => rand() - 0.3, h: Array.from({ length: 16 }, () => 0.4 * rand() - 0.2) });
  const cases = [
    ['binary, tuned ε', randomModel(mulberry32(5), 10, { density: 0.4 }), {}],
    ['multi-valued, tuned ε', multiValued(8), {}],
    ['4×4 grid, sparse factor', grid, { relaxation: { factor: 'sparse-cholesky' as const } }],
    ['binary, ε = 0.6, linear schedule, 2 transitions', randomModel(mulberry32(6), 8, { density: 0.5 }), { stepSize: 0.6, schedule: 'linear' as const, sweepsPerStep: 2 }],
  ] as const;
  for (const [name, model, extra] of cases) {
    const exact = bruteForce(model).logZ;
    const r = runAIS(engine, model, { seed: 3, runs: 64, steps: 300, transition: 'hmc', ...extra });
    const z = (r.logZ - exact) / r.logZStdErr;
    const d = r.diagnostics;
    console.log(`# HMC AIS, ${name}: error ${(r.logZ - exact).toFixed(4)} = ${z.toFixed(2)} SE (SE ${r.logZStdErr.toFixed(4)}), accept ${Number(d.acceptRate).toFixed(3)}, ε ${Number(d.stepSizeMin).toFixed(3)}–${Number(d.stepSizeMax).toFixed(3)}`);
    assert.equal(d.transition, 'hmc');
    assert.equal(d.kernel, 'relaxed');
    assert.equal(d.leapfrogSteps, 5);
    assert.ok(Number(d.acceptRate) > 0.3 && Number(d.acceptRate) <= 1, `accept ${d.acceptRate}`);
    if ('stepSize' in extra) assert.equal(d.stepSizeMin, extra.stepSize);
    assert.ok(r.logZStdErr > 0 && r.logZStdErr < 0.2, `${name}: SE ${r.logZStdErr}`);
    assert.ok(Math.abs(z) < 4, `${name}: log Z ${r.logZ} vs exact ${exact} (${z.toFixed(2)} SE)`);
  }
});

test('HMC AIS: deterministic at a fixed seed, options checked', () => {
  const model = randomModel(mulberry32(9), 6, { density: 0.5 });
  const a = runAIS(engine, model, { seed: 2, runs: 4, steps: 50, transition: 'hmc' });
  const b = runAIS(engine, model, { seed: 2, runs: 4, steps: 50, transition: 'hmc' });
  const c = runAIS(engine, model, { seed: 3, runs: 4, steps: 50, transition: 'hmc' });
  assert.deepEqual(Array.from(a.logWeights), Array.from(b.logWeights));
  assert.notDeepEqual(Array.from(a.logWeights), Array.from(c.logWeights));
  assert.throws(() => runAIS(engine, model, { transition: 'hmc', stepSize: 2.5 }), /stepSize must be a number in \(0, 2\)/);
  assert.throws(() => runAIS(engine, model, { transition: 'hmc', leapfrogSteps: 0 }), ModelError);
  assert.throws(() => runAIS(engine, model, { transition: 'tree', leapfrogSteps: 3 }), /apply to transition 'hmc'/);
  assert.throws(() => runAIS(engine, model, { transition: 'hmc', runs: 32, population: 8 }), /population annealing runs on the discrete model/);
  // Zero couplings between variables have no relaxation.
  assert.throws(() => runAIS(engine, randomModel(mulberry32(1), 5, { density: 1, zeros: 0.3 }), { transition: 'hmc' }), ModelError);
});

test('relaxmrf infer --logz ais --ais-transition hmc: JSON within 4 SE of exact', () => {
  const BIN = fileURLToPath(new URL('../bin/relaxmrf.js', import.meta.url));
  const spec = 'ising:3x3,beta=0.3,h=0.1';
  const run = (...args: string[]) => spawnSync(process.execPath, [BIN, 'infer', spec, ...args], { encoding: 'utf8' });
  const exact = JSON.parse(run('--json').stdout).logZ;
  const r = run('--method', 'mf', '--logz', 'ais', '--ais-transition', 'hmc', '--ais-runs', '32', '--ais-steps', '200', '--seed', '2', '--json');
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.equal(j.diagnostics['logz.transition'], 'hmc');
  assert.ok(j.logZStdErr > 0 && Math.abs(j.logZ - exact) <= 4 * j.logZStdErr, `${j.logZ} ± ${j.logZStdErr} vs ${exact}`);
});
