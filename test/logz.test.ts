// log Z estimators (bindings/logz.ts): each against exact answers — enumeration on small models,
// libDAI's testfast.fg, and Kaufman's closed form (test/kaufman.ts) for the periodic 2-D Ising model.
// Fixed seeds; tolerances are multiples of the reported standard errors (plus absolute bounds where
// the issue asks for them), never of machine speed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { estimateLogZ, runAIS, logMeanExp, logMeanExpBatched, aisSchedule, aisLogZ0, adaptiveSchedule, type EstimateLogZOptions } from '../bindings/logz/logz.ts';
import { toCanonical } from '../bindings/core/canonical.ts';
import { ModelBuilder } from '../bindings/core/model.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import { readFG, readUAI, readPR } from '../bindings/io/formats.ts';
import { EngineError, ModelError } from '../bindings/core/errors.ts';
import { bruteForce, mulberry32, randomModel, dataDir } from './helpers.ts';
import { kaufmanLogZ } from './kaufman.ts';
import * as logzChecks from '../bindings/logz/logz-checks.ts';

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

test('AIS log Z_0: log 2 per free bit, log(#finite states) per one-hot block; a block with none: the canonical form refuses the model (Z = 0)', () => {
  const b = new ModelBuilder([2, 3, 4]);
  b.addUnary(1, [-Infinity, 0, 1]);
  b.addUnary(2, [0, -Infinity, -Infinity, 2]);
  const f = toCanonical(b.build());
  assert.ok(Math.abs(aisLogZ0(f) - (Math.LN2 + Math.log(2) + Math.log(2))) < 1e-14);
  const z = new ModelBuilder([3]);
  z.addUnary(0, [-Infinity, -Infinity, -Infinity]);
  assert.throws(() => aisLogZ0(toCanonical(z.build())), (e: unknown) => e instanceof EngineError && /factor 0 \(variables 0\) is zero everywhere/.test((e as Error).message));
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
      // zhang: the default reference (marginal mode) and eq. 14 as printed (s = 0). ais: the default
      // (tree-block transitions), single-site Gibbs transitions, collapsed weights, and population
      // annealing (16 populations of 16) with either transition.
      const variants: EstimateLogZOptions[] =
        estimator === 'zhang' ? [opts, { ...opts, reference: 'zero' } as EstimateLogZOptions]
        : estimator === 'ais' ? [opts, { ...opts, transition: 'gibbs' }, { ...opts, collapse: true }, { ...opts, runs: 256, steps: 300, population: 16 }, { ...opts, runs: 256, steps: 300, population: 16, transition: 'gibbs' }, { ...opts, transition: 'relaxed' }] as EstimateLogZOptions[]
        : [opts];
      for (const v of variants) {
        if (!relaxable && 'transition' in v && v.transition === 'relaxed') {
          assert.throws(() => estimateLogZ(engine, model, v), ModelError);
          continue;
        }
        const r = estimateLogZ(engine, model, v);
        const z = (r.logZ - exact) / r.logZStdErr;
        const d = r.diagnostics;
        const label = `${estimator}${'reference' in v ? ` (reference ${d.reference})` : ''}${estimator === 'ais' ? ` (${d.transition}${d.factor ? ` p(x, s), ${d.factor}` : ''}${d.collapsed ? ', collapsed' : ''}${Number(d.population) > 1 ? `, populations of ${d.population}` : ''})` : ''} ${name}`;
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

test('AIS on the relaxed joint p(x, s) (block-Gibbs transitions): sparse and dense factors, two sweeps, within 4 SE of enumeration', () => {
  const rand = mulberry32(12);
  const grid = isingLattice({ shape: [4, 4], J: () => rand() - 0.3, h: Array.from({ length: 16 }, () => 0.4 * rand() - 0.2) });
  const exact = bruteForce(grid).logZ;
  for (const factor of ['sparse-cholesky', 'dense-eigen'] as const) {
    const r = runAIS(engine, grid, { seed: 6, runs: 64, steps: 500, sweepsPerStep: 2, transition: 'relaxed', relaxation: { factor } });
    const z = (r.logZ - exact) / r.logZStdErr;
    console.log(`# relaxed AIS, ${r.diagnostics.factor}, 4×4 grid: error ${(r.logZ - exact).toFixed(4)} = ${z.toFixed(2)} SE (SE ${r.logZStdErr.toFixed(4)})`);
    assert.equal(r.diagnostics.factor, factor);
    assert.ok(r.logZStdErr > 0 && r.logZStdErr < 0.05, `SE ${r.logZStdErr}`);
    assert.ok(Math.abs(z) < 4, `log Z ${r.logZ} vs ${exact} (${z.toFixed(2)} SE)`);
  }
});

test('estimateLogZ: unknown estimator and bad options are ModelErrors', () => {
  const model = randomModel(mulberry32(1), 4);
  assert.throws(() => estimateLogZ(engine, model, { estimator: 'bogus' } as unknown as EstimateLogZOptions), ModelError);
  assert.throws(() => estimateLogZ(engine, model, { estimator: 'ais', runs: 0 }), ModelError);
  assert.throws(() => estimateLogZ(engine, model, { estimator: 'ais', schedule: [0, 2, 1] }), ModelError);
  assert.throws(() => estimateLogZ(engine, model, { estimator: 'ais', transition: 'metropolis' as 'tree' }), ModelError);
  assert.throws(() => estimateLogZ(engine, model, { estimator: 'ais', runs: 30, population: 8 }), ModelError);
  assert.throws(() => estimateLogZ(engine, model, { estimator: 'ais', collapse: true, transition: 'gibbs' }), ModelError);
  assert.throws(() => estimateLogZ(engine, model, { estimator: 'ais', collapse: true, runs: 32, population: 8 }), ModelError);
  assert.throws(() => estimateLogZ(engine, model, { estimator: 'ais', transition: 'relaxed', runs: 32, population: 8 }), ModelError);
  assert.throws(() => estimateLogZ(engine, model, { estimator: 'zhang', reference: 'x' as 'zero' }), ModelError);
});

test('AIS is deterministic at a fixed seed and differs across seeds', () => {
  const model = randomModel(mulberry32(9), 12, { density: 0.3 });
  const a = runAIS(engine, model, { seed: 3, runs: 4, steps: 100, schedule: 'linear' });
  const b = runAIS(engine, model, { seed: 3, runs: 4, steps: 100, schedule: 'linear' });
  const c = runAIS(engine, model, { seed: 4, runs: 4, steps: 100, schedule: 'linear' });
  assert.deepEqual(Array.from(a.logWeights), Array.from(b.logWeights));
  assert.notDeepEqual(Array.from(a.logWeights), Array.from(c.logWeights));
  // Population annealing: one log Ẑ per population, reproducible, and populations differ.
  const p = runAIS(engine, model, { seed: 3, runs: 64, population: 16, steps: 100 });
  const q = runAIS(engine, model, { seed: 3, runs: 64, population: 16, steps: 100 });
  assert.equal(p.logWeights.length, 4);
  assert.deepEqual(Array.from(p.logWeights), Array.from(q.logWeights));
  assert.equal(new Set(p.logWeights).size, 4);
  assert.equal(p.diagnostics.runs, 64);
  assert.equal(p.diagnostics.populations, 4);
  assert.equal(p.diagnostics.partial, false);
  assert.equal(a.diagnostics.partial, false);
  // The relaxed transition reports the same diagnostic keys as the discrete ones.
  const rel = runAIS(engine, model, { seed: 3, runs: 4, steps: 100, transition: 'relaxed' });
  assert.deepEqual(Object.keys(rel.diagnostics).sort(), Object.keys(a.diagnostics).sort());
  assert.throws(() => runAIS(engine, model, { runs: 4, steps: 10, transition: 'tree', relaxation: {} }), /apply to transition 'relaxed'/);
});

test("AIS on libDAI's testfast.fg: within 0.1 nats (and 4 SE) of log Z = 14.3282332811, SE ≤ 0.04", () => {
  const model = readFG(readFileSync(join(dataDir(), 'libdai', 'testfast.fg'), 'utf8'));
  for (const transition of ['tree', 'gibbs'] as const) {
    const r = runAIS(engine, model, { seed: 1, runs: 32, steps: 4000, transition });
    const err = r.logZ - 14.3282332811;
    console.log(`# testfast: AIS (${transition}) error ${err.toFixed(4)} (SE ${r.logZStdErr.toFixed(4)}, ${r.seconds.toFixed(2)} s)`);
    assert.ok(r.logZStdErr <= 0.04, `${transition}: SE ${r.logZStdErr}`);
    assert.ok(Math.abs(err) < 0.1 && Math.abs(err) < 4 * r.logZStdErr + 1e-3, `${transition}: error ${err}, SE ${r.logZStdErr}`);
  }
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

// UAI 2014 Grids_11 and Grids_12: 10×10 periodic binary grids with strong mixed couplings (10–20 in
// the 0/1 form; log Z ≈ 390 and 698 nats), glassy enough that independent AIS runs end in different
// valleys and their weights spread over nats (single-site or tree-block transitions alike:
// bench/results/logz.json). Population annealing with tree-block transitions resamples away the
// trapped runs. Checked against the published log10 Z: within 0.1 nats and within 4 standard errors,
// with a standard error (over 8 or 16 independent populations of 512) of at most 0.04, so that the
// agreement is not luck.
for (const [g, runs] of [['Grids_11', 4096], ['Grids_12', 8192]] as const) {
  test(`AIS (population annealing, tree-block transitions) on UAI ${g}: within 0.1 nats of the published log Z, SE ≤ 0.04`, () => {
    const dir = join(dataDir(), 'uai2014');
    const model = readUAI(readFileSync(join(dir, `${g}.uai`), 'utf8'), `${g}.uai`);
    const exact = readPR(readFileSync(join(dir, `${g}.uai.PR`), 'utf8')) * Math.LN10;
    const r = runAIS(engine, model, { seed: 1, runs, steps: 1000, population: 512, transition: 'tree' });
    const err = r.logZ - exact;
    console.log(`# ${g}: log Z ${r.logZ.toFixed(4)} vs ${exact.toFixed(4)}, error ${err.toFixed(4)} (SE ${r.logZStdErr.toFixed(4)}, ${r.diagnostics.populations} populations, ${r.diagnostics.treeBlocks} tree blocks, ${r.seconds.toFixed(2)} s)`);
    assert.equal(r.diagnostics.population, 512);
    assert.ok(r.logZStdErr <= 0.04, `SE ${r.logZStdErr}`);
    assert.ok(Math.abs(err) <= 0.1, `error ${err}`);
    assert.ok(Math.abs(err) <= 4 * r.logZStdErr, `error ${err} is more than 4 SE (${r.logZStdErr})`);
  });
}

test('mirror: heavy-tailed importance weights warn (Pareto k̂ > 0.7) on 8×8 Ising grids, where log Z came out 3–8 standard errors high with no warning; 4×4 grids stay quiet', () => {
  const { paretoK } = logzChecks;
  // k̂ recovers the tail index of weights with a Pareto tail: w = u^(−ξ) has shape ξ.
  for (const xi of [0.3, 1]) {
    const rand = mulberry32(31);
    const l = Float64Array.from({ length: 4000 }, () => -xi * Math.log(1 - rand()));
    assert.ok(Math.abs(paretoK(l) - xi) < 0.15, `ξ ${xi}: k̂ ${paretoK(l)}`);
  }
  const heavy = /its importance weights are heavy-tailed \(Pareto k̂ [\d.]+ > 0\.7\)/;
  for (const seed of [2, 3]) {
    const r = estimateLogZ(engine, isingLattice({ shape: [8, 8], beta: 0.4, h: 0.1 }), { estimator: 'mirror', seed });
    assert.ok((r.diagnostics.paretoK as number) > 0.7 && r.warnings!.some((w) => heavy.test(w)), `8×8 seed ${seed}: ${r.warnings}`);
  }
  for (const seed of [1, 2, 3]) {
    const r = estimateLogZ(engine, isingLattice({ shape: [4, 4], beta: 0.4, h: 0.1 }), { estimator: 'mirror', seed });
    assert.ok(!r.warnings!.some((w) => heavy.test(w)), `4×4 seed ${seed}: k̂ ${r.diagnostics.paretoK}`);
  }
});

test("infer's shift and factor reach the estimators that build a relaxation (zhang, mirror, AIS relaxed / hmc), as if given to them", async () => {
  const { infer } = await import('../bindings/infer.ts');
  const model = isingLattice({ shape: [3, 3], beta: 0.3, h: 0.1 });
  const chainRun = { seed: 3, chains: 2, samples: 200, burnin: 100 };
  for (const [logz, ais] of [['zhang', undefined], ['mirror', undefined], ['ais', { transition: 'hmc' as const, runs: 4, steps: 20 }]] as const) {
    // AIS counts runs and temperatures: it refuses the chain estimators' counts.
    const run = logz === 'ais' ? { seed: 3 } : chainRun;
    const viaInfer = infer(engine, model, { method: 'mf', logz, ais, ...run, shift: 'min-lambda-max', factor: 'dense-eigen' });
    const direct = estimateLogZ(engine, model, { estimator: logz, ...run, ...(ais ?? {}), relaxation: { shift: 'min-lambda-max', factor: 'dense-eigen' } } as EstimateLogZOptions);
    const plain = estimateLogZ(engine, model, { estimator: logz, ...run, ...(ais ?? {}) } as EstimateLogZOptions);
    assert.equal(viaInfer.logZ, direct.logZ, logz);
    assert.notEqual(direct.logZ, plain.logZ, `${logz}: the shift changes the relaxation, so the estimate`);
  }
});
