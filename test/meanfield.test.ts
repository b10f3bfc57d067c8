// Naive mean field against enumeration: the reported bound is exactly the mean-field objective
// E_q[log p̃] + H(q) of the returned marginals (computed here by brute force), it never exceeds the
// exact log Z, and the kernel's per-sweep bookkeeping equals the objective's actual change.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { runMeanField, MeanFieldSolver, MF_DEFAULTS } from '../bindings/variational/meanfield.ts';
import { MFRPSolver } from '../bindings/variational/mfrp.ts';
import { exactInference } from '../bindings/exact/exact.ts';
import { ModelBuilder, type Model } from '../bindings/core/model.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import { ModelError } from '../bindings/core/errors.ts';
import { bruteForce, mfObjectiveBrute, mulberry32, randomModel } from './helpers.ts';

const engine = await loadEngine();

function close(a: number, b: number, tol: number, what: string): void {
  assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);
}

test('binary models: the bound equals the brute-force MF objective at the returned marginals and is ≤ log Z', () => {
  const rand = mulberry32(31);
  for (let t = 0; t < 12; t++) {
    const model = randomModel(rand, 5 + (t % 8), { density: 0.5, scale: 1 + t / 3 });
    const r = runMeanField(engine, model, { seed: t, restarts: 4 });
    const exact = bruteForce(model).logZ;
    assert.equal(r.method, 'mf');
    assert.equal(r.logZKind, 'lower-bound');
    assert.equal(r.logZStdErr, null);
    assert.equal(r.diagnostics.converged, true);
    close(r.logZ!, mfObjectiveBrute(model, r.marginals), 1e-10, `model ${t}: bound vs objective`);
    assert.ok(r.logZ! <= exact + 1e-10, `model ${t}: MF ${r.logZ} above exact ${exact}`);
    for (const row of r.marginals) close(row[0] + row[1], 1, 1e-14, 'normalised');
  }
});

test('multi-valued models (one-hot blocks), with and without zero potentials', () => {
  // With zeros, coordinate ascent first minimises the expected number of violated zeros — a local
  // search that can stall on a hard constraint problem (the last model has 6 valid configurations of
  // 6912): then the bound is −∞, still valid; more restarts find a finite one.
  const rand = mulberry32(32);
  for (let t = 0; t < 10; t++) {
    const zeros = t >= 5 ? 0.25 : 0;
    const model = randomModel(rand, 4 + (t % 5), { cards: [2, 3, 4], density: 0.6, zeros });
    const exact = bruteForce(model).logZ;
    const r = runMeanField(engine, model, { seed: 100 + t, restarts: t === 9 ? 50 : 5 });
    assert.ok(r.logZ! <= exact + 1e-10, `model ${t}: MF ${r.logZ} above exact ${exact}`);
    assert.ok(Number.isFinite(r.logZ!), `model ${t}: the bound should be finite (the support has an interior)`);
    close(r.logZ!, mfObjectiveBrute(model, r.marginals), 1e-10, `model ${t}: bound vs objective`);
    r.marginals.forEach((row, v) => {
      close(row.reduce((s, p) => s + p, 0), 1, 1e-12, 'normalised');
      // Under q, no state of a zero unary potential may carry mass.
      row.forEach((p, k) => assert.ok(!(p > 0 && model.unary[v][k] === -Infinity), `variable ${v} state ${k} is impossible but has mass ${p}`));
    });
  }
});

test('hard-core model (zeros between neighbours): a finite bound below the exact value', () => {
  const b = new ModelBuilder(new Array(10).fill(2));
  const rand = mulberry32(7);
  for (let v = 0; v < 10; v++) b.addUnary(v, [0, rand() + 0.3]);
  for (let v = 0; v < 10; v++) b.addPairwise(v, (v + 1) % 10, [0, 0, 0, -Infinity]);
  const model = b.build();
  const r = runMeanField(engine, model, { seed: 3 });
  const exact = bruteForce(model).logZ;
  assert.ok(Number.isFinite(r.logZ!) && r.logZ! <= exact + 1e-12);
  close(r.logZ!, mfObjectiveBrute(model, r.marginals), 1e-10, 'bound vs objective');
});

test('independent variables: mean field is exact', () => {
  const rand = mulberry32(8);
  const b = new ModelBuilder([2, 3, 2, 5, 2]);
  for (let v = 0; v < 5; v++) b.addUnary(v, Array.from({ length: [2, 3, 2, 5, 2][v] }, () => 3 * rand() - 1.5));
  b.addConstant(0.7);
  const model = b.build();
  const exact = bruteForce(model);
  const r = runMeanField(engine, model, { restarts: 1 });
  close(r.logZ!, exact.logZ, 1e-12, 'log Z');
  r.marginals.forEach((row, v) => row.forEach((p, k) => close(p, exact.marginals[v][k], 1e-12, 'marginal')));
});

test('kernel bookkeeping: each sweep raises the bound by exactly the amount the kernel reports', () => {
  const rand = mulberry32(33);
  for (const cards of [[2], [2, 3]]) {
    const model = randomModel(rand, 9, { cards, density: 0.6, scale: 2 });
    const s = new MeanFieldSolver(engine, model);
    s.randomStart(5, 0);
    let prev = s.objective();
    for (let sweep = 0; sweep < 6; sweep++) {
      const info = s.ascend(1, -1);
      assert.ok(info.logZ >= prev - 1e-12, 'the bound never decreases');
      close(info.logZ - prev, info.lastIncrease, 1e-9, `cards ${cards}: sweep ${sweep} increase`);
      prev = info.logZ;
    }
    s.dispose();
  }
});

test('fixed point: at convergence every free bit satisfies μ = σ(a + Σ W μ)', () => {
  const model = randomModel(mulberry32(34), 12, { density: 0.4, scale: 1.5 });
  const s = new MeanFieldSolver(engine, model);
  s.randomStart(1, 0);
  const info = s.ascend(5000, 1e-15);
  const f = s.form;
  const mu = s.bitMarginals();
  for (let i = 0; i < f.nBits; i++) {
    let u = f.a[i];
    for (let k = f.rowPtr[i]; k < f.rowPtr[i + 1]; k++) u += f.val[k] * mu[f.col[k]];
    close(mu[i], 1 / (1 + Math.exp(-u)), 1e-7, `bit ${i}`);
  }
  assert.ok(info.sweeps > 1);
  s.dispose();
});

test('MF kernel and the MFRP kernel at m = 0 (spin form) agree on the objective of the same marginals', () => {
  const model = randomModel(mulberry32(35), 10, { density: 0.5, scale: 2 });
  const a = new MeanFieldSolver(engine, model);
  const b = new MFRPSolver(engine, model, 0);
  b.setProjection([], []);
  const rand = mulberry32(1);
  for (let t = 0; t < 5; t++) {
    const mu = Float64Array.from({ length: 10 }, () => rand());
    a.setBitMarginals(mu);
    b.setFreeMarginals(mu);
    close(a.objective(), b.evaluate().logGamma, 1e-12, 'objective');
  }
  a.dispose();
  b.dispose();
});

test('Ising grid 10 × 10 with strong mixed couplings: MF ≤ exact; more restarts never lower the bound', () => {
  const rand = mulberry32(36);
  const model = isingLattice({ shape: [10, 10], J: () => 20 * rand() - 10, h: Array.from({ length: 100 }, () => 2 * rand() - 1) });
  const exact = exactInference(engine, model).logZ;
  const r1 = runMeanField(engine, model, { seed: 9, restarts: 1 });
  const r8 = runMeanField(engine, model, { seed: 9, restarts: 8 });
  assert.ok(r8.logZ! >= r1.logZ!, 'restart 0 is shared, so the best of 8 is at least it');
  assert.ok(r8.logZ! <= exact + 1e-9, `MF ${r8.logZ} above exact ${exact}`);
  assert.ok(r8.logZ! > exact - 0.2 * Math.abs(exact), 'and not absurdly loose');
});

test('determinism, defaults, and refused options', () => {
  const model = randomModel(mulberry32(37), 8, { cards: [2, 3] });
  const a = runMeanField(engine, model, { seed: 4 });
  const b = runMeanField(engine, model, { seed: 4 });
  assert.equal(a.logZ, b.logZ);
  assert.deepEqual(a.marginals, b.marginals);
  assert.equal(a.diagnostics.restarts, MF_DEFAULTS.restarts);
  assert.throws(() => runMeanField(engine, model, { restarts: 0 }), ModelError);
  assert.throws(() => runMeanField(engine, model, { maxSweeps: 1.5 }), ModelError);
  assert.throws(() => runMeanField(engine, model, { seed: -1 }), ModelError);
  const s = new MeanFieldSolver(engine, model);
  s.dispose();
  assert.throws(() => s.objective(), /use after dispose/);
});

test('convergence rule: the default tolerance stops within tol · max(n, |F|) per sweep of a long run, and the bound stays ≤ exact', () => {
  // The default rule against 20 000 sweeps at tol = 0 from the same start: a concave-in-each-block
  // ascent that stops where a sweep gains ≤ tol·max(n, |F|) is, on these small models, within a few
  // such gains of the long run's value (and never above it: both are the same monotone sequence).
  const rand = mulberry32(50);
  for (let t = 0; t < 8; t++) {
    const model = randomModel(rand, 5 + (t % 5), { cards: t % 2 ? [2, 3] : [2], density: 0.5, scale: 1 + t / 2 });
    const exact = bruteForce(model).logZ;
    const s = new MeanFieldSolver(engine, model);
    s.randomStart(t, 0);
    const short = s.ascend(MF_DEFAULTS.maxSweeps, MF_DEFAULTS.tol);
    assert.ok(short.converged, `model ${t}: the default rule should stop`);
    s.randomStart(t, 0);
    const long = s.ascend(20000, 0);
    const scale = Math.max(s.form.n, Math.abs(long.logZ));
    assert.ok(short.logZ <= long.logZ + 1e-12 * scale, `model ${t}: stopped ${short.logZ} above the long run ${long.logZ}`);
    assert.ok(long.logZ - short.logZ <= 1e3 * MF_DEFAULTS.tol * scale, `model ${t}: stopped ${long.logZ - short.logZ} short of the long run`);
    assert.ok(long.logZ <= exact + 1e-10 && short.logZ <= exact + 1e-10, `model ${t}: above exact ${exact}`);
    s.dispose();
  }
});

test('ordered starts: every variable in its first / last state; on a ferromagnet they reach the ordered optimum', () => {
  const model = randomModel(mulberry32(51), 6, { cards: [2, 3] });
  const s = new MeanFieldSolver(engine, model);
  for (const which of [0, 1] as const) {
    s.orderedStart(which);
    const mu = s.bitMarginals();
    const f = s.form;
    for (let v = 0; v < f.n; v++) {
      const b = f.blockStart[v], K = f.blockStart[v + 1] - b;
      for (let k = 0; k < K; k++) {
        const want = f.oneHot[v] ? (k === (which ? K - 1 : 0) ? 1 : 0) : which;
        assert.equal(mu[b + k], want, `block ${v} bit ${k}`);
      }
    }
    // The objective of a point mass is its log potential (zero entropy).
    const x = Array.from({ length: model.n }, (_, v) => (which ? model.card[v] - 1 : 0));
    close(s.objective(), model.logPotential(x), 1e-12, 'objective at a point mass');
  }
  s.dispose();
  // 24×24 periodic ferromagnet at β = 0.4 (ordered phase of mean field): the ordered starts give the
  // uniform fixed point m = tanh(4βm), F/n = 2βm² + H((1 + m)/2), which random starts (domains) miss.
  const ferro = isingLattice({ shape: [24, 24], J: 0.4, periodic: true });
  const r = runMeanField(engine, ferro, { seed: 1, restarts: 2 });
  let m = 1;
  for (let i = 0; i < 200; i++) m = Math.tanh(1.6 * m);
  const p = (1 + m) / 2;
  const perSite = 0.8 * m * m - p * Math.log(p) - (1 - p) * Math.log(1 - p);
  assert.ok(r.diagnostics.bestStart !== 'random', `best start ${r.diagnostics.bestStart}`);
  close(r.logZ!, 576 * perSite + ferro.logConst, 1e-9, 'uniform mean-field optimum');
  const noOrdered = runMeanField(engine, ferro, { seed: 1, restarts: 2, orderedStarts: false });
  assert.ok(noOrdered.logZ! <= r.logZ! + 1e-9);
});

test('budget: restarts stop when the work budget is spent; restarts that ran repeat a larger budget\'s', () => {
  const model = isingLattice({ shape: [12, 12], J: () => 1, periodic: true });
  const s = new MeanFieldSolver(engine, model);
  const cost = s.sweepCost;
  s.dispose();
  const full = runMeanField(engine, model, { seed: 2, restarts: 6, orderedStarts: false, tol: -1, maxSweeps: 50 });
  assert.equal(full.diagnostics.restarts, 6);
  assert.equal(full.diagnostics.work, 6 * 50 * cost);
  // Room for two and a half restarts: the third runs 25 sweeps, the fourth never starts.
  const cut = runMeanField(engine, model, { seed: 2, restarts: 6, orderedStarts: false, tol: -1, maxSweeps: 50, budget: 125 * cost });
  assert.equal(cut.diagnostics.restarts, 3);
  assert.equal(cut.diagnostics.sweeps, 125);
  assert.equal(cut.diagnostics.budgetExhausted, true);
  assert.equal(cut.partial, false);
  const two = runMeanField(engine, model, { seed: 2, restarts: 2, orderedStarts: false, tol: -1, maxSweeps: 50 });
  assert.ok(cut.logZ! >= two.logZ!, 'restarts 0 and 1 are the same, so the cut run is at least their best');
  // A budget below one sweep still runs one sweep of the first start.
  const tiny = runMeanField(engine, model, { budget: 1 });
  assert.equal(tiny.diagnostics.sweeps, 1);
  assert.ok(Number.isFinite(tiny.logZ!));
  assert.throws(() => runMeanField(engine, model, { budget: 0 }), ModelError);
  assert.throws(() => runMeanField(engine, model, { budget: NaN }), ModelError);
});

test("mean field warns when its best start stopped at maxSweeps unconverged (BP and TRW did; mean field reported converged: false silently), and not when it converged", () => {
  const model = randomModel(mulberry32(41), 10, { density: 0.6, scale: 2 });
  const cut = runMeanField(engine, model, { maxSweeps: 1 });
  assert.equal(cut.diagnostics.converged, false);
  assert.match(cut.warnings![0], /mean field's best start stopped at maxSweeps \(1\) before converging/);
  const full = runMeanField(engine, model);
  assert.equal(full.diagnostics.sweepsBest !== undefined, true);
  assert.deepEqual(full.warnings, []);
});
