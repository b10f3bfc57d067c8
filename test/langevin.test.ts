// Langevin samplers on p(x): MALA against enumeration within 4 MCSE (with power checks), MALA's
// acceptance ratio against the HMC identity (MALA = one leapfrog step), MALA on a Gaussian target,
// and ULA's bias — measured, against its closed form on a Gaussian.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { DHMCSampler, type GaussianTarget, type MassSpec } from '../bindings/samplers/dhmc.ts';
import { MALASampler, ULASampler, runMALA, runULA } from '../bindings/samplers/langevin.ts';
import { mcse } from '../bindings/samplers/diagnostics.ts';
import { bruteForce, mulberry32, randomModel } from './helpers.ts';
import { gershgorinRelaxation, relaxationFor, worstZ, randomCovariance, spdInverse, cholesky, checkGaussianMoments } from './relax-helpers.ts';

const engine = await loadEngine();

test('MALA marginals within 4 MCSE of enumeration (binary and multi-valued); acceptance near 0.574', async () => {
  const rand = mulberry32(303);
  const models = [
    randomModel(rand, 7, { density: 0.4, scale: 0.8 }),
    randomModel(rand, 10, { density: 0.3, scale: 0.6 }),
    randomModel(rand, 5, { cards: [2, 3, 4], density: 0.5, scale: 0.8 }),
    randomModel(rand, 6, { cards: [3], density: 0.5, scale: 0.6 }),
  ];
  for (const [t, model] of models.entries()) {
    const ex = bruteForce(model);
    const r = runMALA(engine, (await relaxationFor(model)).data, { seed: 30 + t, samples: 4000, burnin: 500, pairs: [[0, 1]] });
    const w = worstZ(r.marginals, r.marginalStdErr!, ex.marginals, 0.02);
    assert.ok(w.z <= 4, `model ${t}: ${w.where}`);
    assert.equal(r.method, 'mala');
    assert.ok(Math.abs((r.diagnostics.acceptRate as number) - 0.574) < 0.08, `accept ${r.diagnostics.acceptRate}`);
    assert.equal(r.diagnostics.biased, false);
    assert.ok((r.diagnostics.rhatMax as number) < 1.05);
  }
});

test('MALA power check: far (> 15 MCSE) from another model’s exact marginals', async () => {
  const rand = mulberry32(19);
  const a = randomModel(rand, 8, { density: 0.5, scale: 0.8 });
  const b = randomModel(rand, 8, { density: 0.5, scale: 0.8 });
  const r = runMALA(engine, (await relaxationFor(a)).data, { seed: 2, samples: 3000, burnin: 300 });
  assert.ok(worstZ(r.marginals, r.marginalStdErr!, bruteForce(b).marginals, 0.03).z > 15);
});

test('MALA’s log α equals −ΔH of one leapfrog step with the matching momentum (unit, diagonal, dense and zhang mass)', () => {
  const rel = gershgorinRelaxation(randomModel(mulberry32(6), 6, { cards: [2, 3], density: 0.6 }));
  const m = rel.factor.m;
  const rand = mulberry32(12);
  const diag = Float64Array.from({ length: m }, () => 0.3 + rand());
  const G = randomCovariance(rand, m, 0.5);
  const cases: { name: string; mass?: MassSpec; zhang?: boolean; momentum: (z: Float64Array) => Float64Array }[] = [
    { name: 'unit', momentum: (z) => z.slice() },
    { name: 'diagonal', mass: { kind: 'diag', inverse: diag }, momentum: (z) => z.map((v, i) => v / Math.sqrt(diag[i])) },
    {
      name: 'dense',
      mass: { kind: 'dense', matrix: G },
      momentum: (z) => {
        const R = cholesky(G, m); // the sampler's R: G = R Rᵀ, momentum p = R z
        return Float64Array.from({ length: m }, (_, i) => { let s = 0; for (let j = 0; j <= i; j++) s += R[i * m + j] * z[j]; return s; });
      },
    },
    {
      name: 'zhang',
      zhang: true,
      momentum: (z) => {
        const M = (rel.factor as { values: Float64Array }).values; // G = MᵀM, R = Mᵀ: p = Mᵀ z
        return Float64Array.from({ length: m }, (_, j) => { let s = 0; for (let i = j; i < m; i++) s += M[i * m + j] * z[i]; return s; });
      },
    },
  ];
  for (const c of cases) {
    const opts = { mass: c.mass, parametrisation: c.zhang ? ('zhang' as const) : ('whitened' as const) };
    const mala = new MALASampler(engine, rel, opts);
    const hmc = new DHMCSampler(engine, rel, { ...opts, leapfrogSteps: 1 });
    const st = mala.init(4, 0);
    const x = mala.position(st);
    const hs = hmc.init(4, 0, { x0: x });
    for (let rep = 0; rep < 3; rep++) {
      const eps = 0.3 + 0.4 * rep;
      mala.setStepSize(st, eps);
      const z = Float64Array.from({ length: m }, () => 2 * rand() - 1);
      const { logAlpha, proposal } = mala.logAccept(st, z);
      const p = c.momentum(z);
      const H0 = -hmc.logDensity(hs) + hmc.kinetic(hs, p);
      const traj = hmc.integrate(hs, x, p, 1, eps);
      const H1 = -traj.logp + hmc.kinetic(hs, traj.p);
      for (let i = 0; i < m; i++) assert.ok(Math.abs(proposal[i] - traj.x[i]) < 1e-12, `${c.name}: proposal ${i}`);
      assert.ok(Math.abs(logAlpha - (H0 - H1)) < 1e-10, `${c.name}, ε = ${eps}: log α ${logAlpha} vs −ΔH ${H0 - H1}`);
    }
    assert.deepEqual(mala.position(st), x); // logAccept does not move the chain
    mala.dispose();
    hmc.dispose();
  }
});

test('MALA on a correlated Gaussian target: mean and covariance within 4 MCSE', () => {
  const traceCodes = Int32Array.of(-2, -3, -4, -5);
  checkGaussianMoments(
    (t) => {
      // Precondition with a diagonal near the target's variances (MALA mixes slowly on an unscaled wide direction).
      const S = spdInverse(t.precision, 4);
      return new MALASampler(engine, t, { traceCodes, traceCapacity: 4000, mass: { kind: 'diag', inverse: [0, 1, 2, 3].map((i) => S[i * 5]) } });
    },
    { targetAccept: 0.574 },
    'MALA',
  );
});

test('ULA is biased, as its closed form on a Gaussian says: stationary variance 1/(1 − ε²/4) for N(0, 1)', () => {
  // x' = x − (ε²/2) x + ε ξ is AR(1) with coefficient a = 1 − ε²/2 and noise ε²: Var = ε²/(1 − a²) = 1/(1 − ε²/4).
  const m = 2;
  const target: GaussianTarget = { kind: 'gaussian', mean: new Float64Array(m), precision: Float64Array.of(1, 0, 0, 1) };
  const samples = 20000;
  for (const eps of [1.0, 0.5]) {
    const s = new ULASampler(engine, target, { traceCodes: Int32Array.of(-2, -3), traceCapacity: samples });
    const sq: Float64Array[] = [];
    for (let c = 0; c < 4; c++) {
      const st = s.init(9, c, { stepSize: eps });
      s.step(st, 200);
      s.resetTrace(st);
      const info = s.step(st, samples, { trace: true });
      assert.equal(info.acceptRate, 1);
      for (const series of s.trace(st)) sq.push(series.map((v) => v * v));
    }
    s.dispose();
    const est = sq.reduce((a, c) => a + c.reduce((x, y) => x + y, 0), 0) / (sq.length * samples);
    const se = mcse(sq);
    const exact = 1 / (1 - (eps * eps) / 4);
    assert.ok(Math.abs(est - exact) < 4 * se, `ε = ${eps}: variance ${est} vs ULA's ${exact} (MCSE ${se})`);
    assert.ok(Math.abs(est - 1) > 4 * se, `ε = ${eps}: the bias (${exact - 1}) should be visible at MCSE ${se}`);
  }
});

test('runULA: biased flag, fixed or MALA-adapted step size; the bias shrinks with the step', async () => {
  const model = randomModel(mulberry32(21), 7, { density: 0.5, scale: 0.8 });
  const ex = bruteForce(model);
  const rel = (await relaxationFor(model)).data;
  const big = runULA(engine, rel, { seed: 1, samples: 4000, burnin: 300, stepSize: 2 });
  // Smaller steps mix more slowly: more samples so that noise does not hide the comparison.
  const small = runULA(engine, rel, { seed: 1, samples: 8000, burnin: 300, stepSize: 0.7 });
  assert.equal(big.method, 'ula');
  assert.equal(big.diagnostics.biased, true);
  assert.equal(big.diagnostics.stepSize, 2);
  const maxErr = (r: typeof big) => Math.max(...r.marginals.map((row, v) => Math.abs(row[1] - ex.marginals[v][1])));
  const wBig = worstZ(big.marginals, big.marginalStdErr!, ex.marginals, 0.02);
  assert.ok(wBig.z > 6, `a large ULA step should show its bias: only ${wBig.z} MCSE (${wBig.where})`);
  assert.ok(maxErr(small) < 0.5 * maxErr(big), `bias ${maxErr(small)} at ε = 0.7 vs ${maxErr(big)} at ε = 2`);
  const adapted = runULA(engine, rel, { seed: 1, samples: 500, burnin: 500 });
  assert.ok((adapted.diagnostics.stepSize as number) > 0.2 && (adapted.diagnostics.stepSize as number) < 3);
  assert.equal(adapted.diagnostics.acceptRate, 1);
});

test('Langevin determinism and sampler shape', () => {
  const rel = gershgorinRelaxation(randomModel(mulberry32(3), 6, { cards: [2, 3] }));
  const a = runMALA(engine, rel, { seed: 5, samples: 300, burnin: 100 });
  const b = runMALA(engine, rel, { seed: 5, samples: 300, burnin: 100 });
  const c = runMALA(engine, rel, { seed: 6, samples: 300, burnin: 100 });
  assert.deepEqual(a.marginals, b.marginals);
  assert.notDeepEqual(a.marginals, c.marginals);
  const s = new MALASampler(engine, rel);
  const st = s.init(1, 0);
  const w = s.warmup(st, 300, { targetAccept: 0.574 });
  assert.equal(w.iterations, 300);
  const info = s.step(st, 100, { accumulate: true });
  assert.equal(info.iterations, 100);
  assert.equal(info.gradientEvaluations, 100);
  const sums = s.readAndClear(st);
  // Each iteration adds p(s|x) of every block: a one-hot block's sums total 100, a free bit's lie in [0, 100].
  const f = rel.form;
  for (let v = 0; v < f.n; v++) {
    let t = 0;
    for (let q = f.blockStart[v]; q < f.blockStart[v + 1]; q++) t += sums.prob[q];
    if (f.oneHot[v]) assert.ok(Math.abs(t - 100) < 1e-9);
    else assert.ok(t > 0 && t < 100);
  }
  assert.ok(s.readAndClear(st).prob.every((x) => x === 0));
  s.dispose();
});
