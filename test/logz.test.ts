// log Z estimators (bindings/logz.ts): each against exact answers — enumeration on small models,
// libDAI's testfast.fg, and Kaufman's closed form (test/kaufman.ts) for the periodic 2-D Ising model.
// Fixed seeds; tolerances are multiples of the reported standard errors (plus absolute bounds where
// the issue asks for them), never of machine speed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine } from '../bindings/wasm-node.ts';
import { estimateLogZ, runAIS, logMeanExp, logMeanExpBatched, aisSchedule, aisLogZ0, adaptiveSchedule, type EstimateLogZOptions } from '../bindings/logz.ts';
import { toCanonical } from '../bindings/canonical.ts';
import { ModelBuilder } from '../bindings/model.ts';
import { isingLattice } from '../bindings/builders.ts';
import { readFG } from '../bindings/formats.ts';
import { ModelError } from '../bindings/errors.ts';
import { bruteForce, mulberry32, randomModel, dataDir } from './helpers.ts';
import { kaufmanLogZ } from './kaufman.ts';

const engine = await loadEngine();

test('logMeanExp: value, −∞ entries as zero weights, delta-method standard error', () => {
  const l = [Math.log(1), Math.log(2), Math.log(3), -Infinity];
  const r = logMeanExp(l);
  assert.ok(Math.abs(r.value - Math.log(1.5)) < 1e-14);
  // w = (1, 2, 3, 0)/3 (max-shifted): mean 0.5, sd of (1/3, 2/3, 1, 0) = √(5/27)... → se = sd/(√4 · mean)
  const w = [1 / 3, 2 / 3, 1, 0], m = 0.5;
  const sd = Math.sqrt(w.reduce((s, x) => s + (x - m) ** 2, 0) / 3);
  assert.ok(Math.abs(r.stdErr - sd / 2 / m) < 1e-14);
  assert.equal(logMeanExp([-Infinity, -Infinity]).value, -Infinity);
  // Batched: one chain of 4 values in 2 batches.
  const b = logMeanExpBatched([Float64Array.from([0, 0, Math.log(3), Math.log(3)])], 2);
  assert.ok(Math.abs(b.value - Math.log(2)) < 1e-14);
  assert.ok(Math.abs(b.stdErr - Math.sqrt(((1 / 3 - 2 / 3) ** 2 * 2) / 1 / 2) / (2 / 3)) < 1e-14);
});

test('AIS schedules: validation, end points, adaptive spacing follows √Var(E)', () => {
  assert.deepEqual(Array.from(aisSchedule('linear', 4)), [0, 0.25, 0.5, 0.75, 1]);
  const s = aisSchedule('sigmoid', 10);
  assert.equal(s[0], 0);
  assert.equal(s[10], 1);
  for (let t = 1; t <= 10; t++) assert.ok(s[t] > s[t - 1]);
  assert.throws(() => aisSchedule([0, 0.5, 0.5, 1], 0), ModelError);
  assert.throws(() => aisSchedule([0.1, 1], 0), ModelError);
  // Energies whose spread is 9× larger on β ∈ [0.5, 1]: most temperatures go there.
  const pilot = aisSchedule('linear', 200);
  const rand = mulberry32(7);
  const energies = [0, 1, 2, 3].map(() => Float64Array.from(pilot, (b) => (b < 0.5 ? 1 : 9) * (rand() - 0.5)));
  const a = adaptiveSchedule(pilot, energies, 100);
  assert.equal(a[0], 0);
  assert.equal(a[100], 1);
  const upper = a.filter((b) => b > 0.5).length;
  assert.ok(upper > 75 && upper < 95, `${upper} of 100 temperatures above β = 0.5`);
});

test('AIS log Z_0: log 2 per free bit, log(#finite states) per one-hot block; a block with none is a ModelError', () => {
  const b = new ModelBuilder([2, 3, 4]);
  b.addUnary(1, [-Infinity, 0, 1]);
  b.addUnary(2, [0, -Infinity, -Infinity, 2]);
  const f = toCanonical(b.build());
  assert.ok(Math.abs(aisLogZ0(f) - (Math.LN2 + Math.log(2) + Math.log(2))) < 1e-14);
  const z = new ModelBuilder([3]);
  z.addUnary(0, [-Infinity, -Infinity, -Infinity]);
  assert.throws(() => aisLogZ0(toCanonical(z.build())), ModelError);
});

/** Small models with exact answers: binary, mixed cardinalities, zero potentials. */
function smallModels() {
  const unaryZeros = new ModelBuilder([3, 2, 4, 3, 2]);
  const r = mulberry32(11);
  unaryZeros.addUnary(0, [-Infinity, 0.4, -0.2]);
  unaryZeros.addUnary(2, [0.3, -Infinity, 0.1, -Infinity]);
  for (const [i, j] of [[0, 1], [1, 2], [2, 3], [3, 4], [0, 4], [1, 3]]) {
    const K = [3, 2, 4, 3, 2];
    unaryZeros.addPairwise(i, j, Array.from({ length: K[i] * K[j] }, () => 1.5 * (2 * r() - 1)));
  }
  return [
    { name: 'binary n = 8 (seed 1)', model: randomModel(mulberry32(1), 8, { density: 0.5, scale: 1 }), relaxable: true },
    { name: 'binary n = 10 (seed 2)', model: randomModel(mulberry32(2), 10, { density: 0.4, scale: 1 }), relaxable: true },
    { name: 'K ∈ {2, 3}, n = 7 (seed 3)', model: randomModel(mulberry32(3), 7, { cards: [2, 3], density: 0.5, scale: 1 }), relaxable: true },
    { name: 'unary zeros, K ∈ {2, 3, 4}', model: unaryZeros.build(), relaxable: true },
    { name: 'pairwise zeros, K ∈ {2, 3}, n = 7 (seed 4)', model: randomModel(mulberry32(4), 7, { cards: [2, 3], density: 0.5, scale: 1, zeros: 0.1 }), relaxable: false },
  ];
}

for (const estimator of ['ais', 'chib', 'zhang', 'mirror'] as const) {
  test(`${estimator}: within 4 standard errors of enumeration on small models`, () => {
    for (const { name, model, relaxable } of smallModels()) {
      if (!relaxable && (estimator === 'zhang' || estimator === 'mirror')) {
        // A zero potential between two variables has no Gaussian-integral relaxation.
        assert.throws(() => estimateLogZ(engine, model, { estimator, seed: 5 }), ModelError);
        continue;
      }
      const exact = bruteForce(model).logZ;
      const opts: EstimateLogZOptions =
        estimator === 'ais' ? { estimator, seed: 5, runs: 64, steps: 1000 }
        : estimator === 'chib' ? { estimator, seed: 5, chains: 4, samples: 4000 }
        : estimator === 'zhang' ? { estimator, seed: 5, chains: 4, samples: 4000, burnin: 500 }
        // The mirror weights q/p are heavy-tailed (finite variance only by the covariance cap): with
        // few samples the batch standard error misses the rare large weights.
        : { estimator, seed: 5, chains: 4, samples: 10000, burnin: 500 };
      // zhang: the default reference (marginal mode) and eq. 14 as printed (s = 0).
      const variants: EstimateLogZOptions[] = estimator === 'zhang' ? [opts, { ...opts, reference: 'zero' } as EstimateLogZOptions] : [opts];
      for (const v of variants) {
        const r = estimateLogZ(engine, model, v);
        const z = (r.logZ - exact) / r.logZStdErr;
        const label = `${estimator}${'reference' in v ? ` (reference ${r.diagnostics.reference})` : ''} ${name}`;
        console.log(`# ${label}: error ${(r.logZ - exact).toFixed(4)} = ${z.toFixed(2)} SE (SE ${r.logZStdErr.toFixed(4)})`);
        assert.equal(r.logZKind, 'estimate');
        assert.ok(r.logZStdErr > 0 && Number.isFinite(r.logZStdErr), `${label}: SE ${r.logZStdErr}`);
        assert.ok(r.logZStdErr < 0.3, `${label}: SE ${r.logZStdErr} too large to mean anything`);
        assert.ok(Math.abs(z) < 4, `${label}: log Z ${r.logZ} vs exact ${exact} (${z.toFixed(2)} SE)`);
      }
    }
  });
}

test('AIS with 2 sweeps per temperature and the sigmoid or a custom schedule: within 4 SE of enumeration', () => {
  const model = randomModel(mulberry32(2), 10, { density: 0.4, scale: 1 });
  const exact = bruteForce(model).logZ;
  for (const schedule of ['sigmoid', Array.from({ length: 301 }, (_, t) => (t / 300) ** 2)] as const) {
    const r = runAIS(engine, model, { seed: 8, runs: 64, steps: 300, sweepsPerStep: 2, schedule });
    const z = (r.logZ - exact) / r.logZStdErr;
    console.log(`# ais ${typeof schedule === 'string' ? schedule : 'quadratic'} ×2 sweeps: error ${(r.logZ - exact).toFixed(4)} = ${z.toFixed(2)} SE`);
    assert.equal(r.diagnostics.sweepsPerStep, 2);
    assert.ok(Math.abs(z) < 4 && r.logZStdErr < 0.1, `log Z ${r.logZ} vs ${exact}, SE ${r.logZStdErr}`);
  }
});

test('estimateLogZ: unknown estimator and bad options are ModelErrors', () => {
  const model = randomModel(mulberry32(1), 4);
  assert.throws(() => estimateLogZ(engine, model, { estimator: 'bogus' } as unknown as EstimateLogZOptions), ModelError);
  assert.throws(() => estimateLogZ(engine, model, { estimator: 'ais', runs: 0 }), ModelError);
  assert.throws(() => estimateLogZ(engine, model, { estimator: 'ais', schedule: [0, 2, 1] }), ModelError);
  assert.throws(() => estimateLogZ(engine, model, { estimator: 'zhang', reference: 'x' as 'zero' }), ModelError);
});

test('AIS is deterministic at a fixed seed and differs across seeds', () => {
  const model = randomModel(mulberry32(9), 12, { density: 0.3 });
  const a = runAIS(engine, model, { seed: 3, runs: 4, steps: 100, schedule: 'linear' });
  const b = runAIS(engine, model, { seed: 3, runs: 4, steps: 100, schedule: 'linear' });
  const c = runAIS(engine, model, { seed: 4, runs: 4, steps: 100, schedule: 'linear' });
  assert.deepEqual(Array.from(a.logWeights), Array.from(b.logWeights));
  assert.notDeepEqual(Array.from(a.logWeights), Array.from(c.logWeights));
});

test("AIS on libDAI's testfast.fg: within 0.1 nats (and 4 SE) of log Z = 14.3282332811", () => {
  const model = readFG(readFileSync(join(dataDir(), 'libdai', 'testfast.fg'), 'utf8'));
  const r = runAIS(engine, model, { seed: 1, runs: 32, steps: 4000 });
  const err = r.logZ - 14.3282332811;
  console.log(`# testfast: AIS error ${err.toFixed(4)} (SE ${r.logZStdErr.toFixed(4)}, ${r.seconds.toFixed(2)} s)`);
  assert.ok(Math.abs(err) < 0.1 && Math.abs(err) < 4 * r.logZStdErr + 1e-3, `error ${err}, SE ${r.logZStdErr}`);
});

// Periodic 16 × 16 ferromagnet, zero field: within 0.1 nats of Kaufman, with a standard error small
// enough (≤ 0.04) for that to be a real check. Budgets sized from the log-weight spread (critical
// slowing down near β_c ≈ 0.4407 and below it).
for (const [beta, runs, steps] of [[0.3, 16, 8000], [0.4407, 32, 40000], [0.5, 32, 60000]] as const) {
  test(`AIS on the periodic 16×16 Ising model at β = ${beta}: within 0.1 nats of Kaufman (1949)`, () => {
    const model = isingLattice({ shape: [16, 16], periodic: true, beta });
    const r = runAIS(engine, model, { seed: 1, runs, steps });
    const exact = kaufmanLogZ(beta, 16);
    const err = r.logZ - exact;
    console.log(`# Ising L = 16, β = ${beta}: log Z ${r.logZ.toFixed(4)} vs Kaufman ${exact.toFixed(4)}, error ${err.toFixed(4)} (SE ${r.logZStdErr.toFixed(4)}, log-weight sd ${Number(r.diagnostics.logWeightSD).toFixed(3)}, ${r.seconds.toFixed(2)} s)`);
    assert.ok(r.logZStdErr <= 0.04, `SE ${r.logZStdErr}`);
    assert.ok(Math.abs(err) < 0.1, `error ${err}`);
  });
}

test('AIS in pieces (firstRun, the first piece\'s schedule) gives the runs of one call', async () => {
  const engine = await loadEngine();
  const model = isingLattice({ shape: [3, 3], beta: 0.4, h: 0.1 });
  const whole = runAIS(engine, model, { seed: 6, runs: 5, steps: 150 });
  const first = runAIS(engine, model, { seed: 6, runs: 2, steps: 150 });
  const rest = runAIS(engine, model, { seed: 6, runs: 3, firstRun: 2, steps: 150, schedule: first.schedule });
  assert.deepEqual(first.schedule, whole.schedule);
  assert.deepEqual([...first.logWeights, ...rest.logWeights], Array.from(whole.logWeights));
  assert.notDeepEqual(Array.from(rest.logWeights), Array.from(whole.logWeights.subarray(0, 3)));
  assert.throws(() => runAIS(engine, model, { runs: 1, firstRun: -1 }), /firstRun must be/);
});
