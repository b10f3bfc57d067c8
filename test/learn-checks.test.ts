// What learn() and logLikelihood() refuse before any work, and what they return at the edges: cases an
// audit found silently wrong or lost (each test's name says what it was).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { learn } from '../bindings/learn/learn.ts';
import { logLikelihood } from '../bindings/learn/likelihood.ts';
import { readUAI, writeUAI } from '../bindings/io/formats.ts';
import { infer } from '../bindings/infer.ts';
import { BoundMachine, machinePairs, type MachineParams } from '../bindings/learn/machine.ts';
import { mulberry32 } from './helpers.ts';
import { gradientStatistics } from '../bindings/learn/gradient.ts';
import { draw, randomMachine, visibleLogProbs } from './learn-helpers.ts';

const engine = await loadEngine();
const data = draw(visibleLogProbs(randomMachine('boltzmann', 6, 0, 3, 0.8)), 6, 200, 4);

/** Throws within `ms` of CPU time: refused before any epoch (the runs asked for take minutes). */
function refusedAtOnce(fn: () => unknown, re: RegExp, ms = 500): void {
  const t0 = process.cpuUsage();
  assert.throws(fn, re);
  const { user, system } = process.cpuUsage(t0);
  assert.ok((user + system) / 1000 < ms, `refused after ${(user + system) / 1000} ms`);
}

test('learn() refuses misspelt options, non-boolean flags and options its machine or sampler does not have ({ learningrate } and { epoch } ran the defaults, { equivalentRBM: "no" } turned it on)', () => {
  refusedAtOnce(() => learn(engine, data, { learningrate: 0.5 } as object), /unknown option "learningrate" \(did you mean "learningRate"\?\)/);
  refusedAtOnce(() => learn(engine, data, { epoch: 3 } as object), /unknown option "epoch" \(did you mean "epochs"/);
  refusedAtOnce(() => learn(engine, data, { equivalentRBM: 'no' as unknown as boolean }), /equivalentRBM must be true or false, got "no"/);
  refusedAtOnce(() => learn(engine, data, { evaluate: 'false' as unknown as boolean }), /evaluate must be true or false/);
  refusedAtOnce(() => learn(engine, data, { hidden: 3 }), /hidden units apply to rbm and srbm machines, not boltzmann/);
  refusedAtOnce(() => learn(engine, data, { states: 5 }), /states applies to potts machines/);
  refusedAtOnce(() => learn(engine, data, { likelihood: { method: 'exct' as 'exact' } }), /likelihood method must be auto, exact or ais, got "exct"/);
  refusedAtOnce(() => learn(engine, data, { likelihood: { run: 5 } as object }), /unknown likelihood option "run" \(did you mean "runs"\?\)/);
  refusedAtOnce(() => learn(engine, data, { likelihood: { runs: 1 } }), /runs must be/);
  // Another sampler's or machine's options (they ran as if not given, echoed in settings).
  refusedAtOnce(() => learn(engine, data, { leapfrogSteps: 3 }), /leapfrogSteps and stepSize apply to sampler 'dhmc', not 'gibbs'/);
  refusedAtOnce(() => learn(engine, data, { sampler: 'blockgibbs', stepSize: 0.2 }), /apply to sampler 'dhmc', not 'blockgibbs'/);
  refusedAtOnce(() => learn(engine, data, { sampler: 'tree', shiftEpsilon: 0.1 }), /shiftEpsilon applies to samplers 'blockgibbs' and 'dhmc'/);
  refusedAtOnce(() => learn(engine, data, { model: 'rbm', hidden: 2, visibleRate: 0.1 }), /visibleRate applies to machines with visible–visible couplings .*not 'rbm'/);
  refusedAtOnce(() => learn(engine, data, { model: 'rbm', hidden: 2, sampler: 'dhmc', leapfrogSteps: 3 }), /leapfrogSteps apply to the Gaussian layer .*an rbm's samplers are its block Gibbs/);
  refusedAtOnce(() => learn(engine, data, { model: 'rbm', hidden: 2, sampler: 'blockgibbs', shiftEpsilon: 0.1 }), /shiftEpsilon apply to the Gaussian layer/);
  refusedAtOnce(() => learn(engine, data, { evaluate: false, likelihood: { runs: 8 } }), /likelihood options apply when the log-likelihood is evaluated/);
  // A log Z given to learn is not the learned model's (logZ 0 gave −0.44 ± 0, the model's was −4.03).
  refusedAtOnce(() => learn(engine, data, { epochs: 100_000, likelihood: { method: 'ais', logZ: { value: 0, stdErr: 0 } } }), /likelihood\.logZ cannot be given to learn\(\)/);
  assert.throws(() => logLikelihood(engine, learn(engine, data, { epochs: 1 }).params, data, { method: 'exct' as 'exact' }), /likelihood method must be/);
});

test('learn() checks the test data before training (a 2, 7 columns or no rows threw after all the epochs, naming "data row 1")', () => {
  const long = { epochs: 100_000 };
  const bad = (values: number[], rows: number, cols: number) => ({ rows, cols, values: Uint8Array.from(values) });
  refusedAtOnce(() => learn(engine, data, { ...long, test: bad([0, 1, 0, 2, 1, 0], 1, 6) }), /: test data row 1, column 4: 2 is not a state in 0…1/);
  refusedAtOnce(() => learn(engine, data, { ...long, test: bad([0, 1, 0, 1, 1, 0, 1], 1, 7) }), /test data have 7 columns, the training data 6/);
  refusedAtOnce(() => learn(engine, data, { ...long, test: bad([], 0, 6) }), /test data have no rows/);
  // Potts: K from the training and the test data (a test state of 2 with training states 0…1 threw after the run).
  const potts = { rows: 3, cols: 2, values: Uint8Array.from([0, 1, 1, 0, 1, 1]) };
  const r = learn(engine, potts, { model: 'potts', epochs: 1, test: { rows: 1, cols: 2, values: Uint8Array.from([2, 0]) } });
  assert.equal(r.params.states, 3);
  assert.ok(Number.isFinite(r.test!.value));
  // All-zero Potts data: two states ("states must be an integer in [2, 255], got 1", an option never given).
  assert.equal(learn(engine, { rows: 2, cols: 2, values: new Uint8Array(4) }, { model: 'potts', epochs: 1 }).params.states, 2);
});

test('equivalentRBM: a run that diverges in its first epoch returns the initial F with the initial parameters (it returned the diverged F: |F Fᵀ − W| 314 against |W| 0.0004)', () => {
  const r = learn(engine, data, { equivalentRBM: true, learningRate: 1000, schedule: 'constant', maxWeight: 50, epochs: 10, batch: 10, seed: 1 });
  assert.ok(r.diverged && r.epochs.length === 0, 'diverged in epoch 1');
  const nV = 6, F = r.factor!;
  for (let e = 0; e < r.params.w.length; e++) {
    const i = r.params.pairs[2 * e], j = r.params.pairs[2 * e + 1];
    let s = 0;
    for (let k = 0; k < nV; k++) s += F[i * nV + k] * F[j * nV + k];
    assert.ok(Math.abs(s - r.params.w[e]) < 1e-9, `pair ${i}, ${j}: (F Fᵀ) ${s} against W ${r.params.w[e]}`);
  }
});

test('onEpoch\'s getter gives that epoch\'s parameters, a copy at each call (saved getters all gave the last epoch\'s, and the result object itself)', () => {
  const getters: (() => MachineParams)[] = [], now: Float64Array[] = [];
  const r = learn(engine, data, { epochs: 3, evaluate: false, onEpoch: (_e, params) => (getters.push(params), now.push(params().w.slice())) });
  getters.forEach((g, k) => assert.deepEqual(g().w, now[k], `epoch ${k + 1}`));
  assert.notDeepEqual(now[0], now[2]);
  const last = getters[2]();
  assert.notEqual(last, r.params);
  last.w[0] = 99;
  assert.notEqual(r.params.w[0], 99, 'a caller changing a copy leaves the result alone');
});

test('changeRate counts the particles each batch really had (CD with 101 rows in batches of 100 said 0.25 where PCD said 0.5); settings.batch is the batch used', () => {
  // A near-independent model with p = 1/2 per bit: a Gibbs sweep changes each bit with probability 1/2.
  const rows = 101, nV = 10;
  const half = { rows, cols: nV, values: Uint8Array.from({ length: rows * nV }, (_, i) => (i % 2) ^ (Math.floor(i / nV) % 2)) };
  for (const method of ['cd', 'pcd'] as const) {
    const r = learn(engine, half, { method, learningRate: 0, epochs: 3, batch: 100, evaluate: false });
    assert.ok(Math.abs(r.epochs.at(-1)!.changeRate - 0.5) < 0.03, `${method}: ${r.epochs.at(-1)!.changeRate}`);
  }
  assert.equal(learn(engine, half, { batch: 1000, epochs: 1, evaluate: false }).settings.batch, rows);
});

test('changeRate of a Potts machine is unit changes per unit per sweep, with every particle kernel (it divided by the bits: K times too small)', () => {
  // Columns of K = 4 states in equal shares: a uniform model, where a Gibbs sweep changes a unit with
  // probability 3/4; the Gaussian-layer kernels draw each unit from its conditional too.
  const rows = 200, nV = 6, K = 4;
  const data = { rows, cols: nV, values: Uint8Array.from({ length: rows * nV }, (_, i) => (i + Math.floor(i / nV)) % K) };
  for (const sampler of ['gibbs', 'tree', 'blockgibbs', 'dhmc'] as const) {
    const r = learn(engine, data, { model: 'potts', sampler, learningRate: 0, epochs: 2, evaluate: false });
    assert.ok(Math.abs(r.epochs.at(-1)!.changeRate - 0.75) < 0.05, `${sampler}: ${r.epochs.at(-1)!.changeRate}`);
  }
});

test('logLikelihood refuses a baseData whose columns are not the machine\'s visible units (12 columns gave −10.95 ± 0.01, 4 gave −1.70, against −5.30)', () => {
  const p = learn(engine, data, { epochs: 2, evaluate: false }).params;
  for (const cols of [12, 4]) {
    const base = { rows: 2, cols, values: new Uint8Array(2 * cols) };
    assert.throws(() => logLikelihood(engine, p, data, { method: 'ais', baseData: base }), new RegExp(`baseData has ${cols} columns, but the machine has 6 visible units`));
  }
});

test('writeUAI keeps a learned coupling past e^745 as several factors on its scope (760 nats was written "0 0 0 1": probability 0 for three of four training rows)', () => {
  const two = { rows: 4, cols: 2, values: Uint8Array.from([0, 1, 1, 0, 1, 1, 0, 0]) };
  const r = learn(engine, two, { learningRate: 19000, schedule: 'constant', epochs: 1, seed: 1 });
  assert.equal(r.diverged, null);
  assert.ok(Math.max(...Array.from(r.params.w, Math.abs)) > 745, 'the case: a coupling past exp\'s range');
  const back = readUAI(writeUAI(r.model));
  for (let i = 0; i < 4; i++) {
    const x = [two.values[2 * i], two.values[2 * i + 1]];
    assert.ok(Math.abs(back.logPotential(x) - r.model.logPotential(x)) < 1e-9 * Math.max(1, Math.abs(r.model.logPotential(x))), `row ${i}: ${back.logPotential(x)} against ${r.model.logPotential(x)}`);
  }
  const z = (m: typeof back) => infer(engine, m, { method: 'exact' }).logZ!;
  assert.ok(Math.abs(z(back) - z(r.model)) < 1e-9 * Math.abs(z(r.model)));
});

test('gradientStatistics checks its options ({ particles: 0 } gave NaN statistics; particles 2.5, sweeps −1 and a misspelt { particls } ran)', () => {
  const p = randomMachine('rbm', 4, 2, 51, 0.8), d = draw(visibleLogProbs(p), 4, 30, 52);
  assert.throws(() => gradientStatistics(engine, p, d, { particles: 0 }), /particles must be an integer in \[1, \d+\], got 0/);
  assert.throws(() => gradientStatistics(engine, p, d, { particles: 2.5 }), /particles must be an integer/);
  assert.throws(() => gradientStatistics(engine, p, d, { particles: NaN }), /particles must be an integer/);
  assert.throws(() => gradientStatistics(engine, p, d, { sweeps: -1 }), /sweeps must be an integer in \[0, \d+\], got -1/);
  assert.throws(() => gradientStatistics(engine, p, d, { sweeps: 1.5 }), /sweeps must be an integer/);
  assert.throws(() => gradientStatistics(engine, p, d, { particls: 5 } as object), /unknown option "particls" \(did you mean "particles"\?\)/);
  // No sweeps: the particles' uniform start, whatever the sampler.
  for (const sampler of ['gibbs', 'dhmc'] as const) assert.equal(gradientStatistics(engine, p, d, { particles: 10, sweeps: 0, sampler }).model.a.length, 6);
});

test('machine parameters of another size, kind or with NaN are refused (a short a was read past its end: −2.57; a long w cut silently; a NaN bias gave a NaN log-likelihood)', () => {
  const p = randomMachine('rbm', 4, 2, 51, 0.8), d = draw(visibleLogProbs(p), 4, 30, 52);
  assert.throws(() => logLikelihood(engine, { ...p, a: new Float64Array(3) }, d), /params\.a has 3 entries, but an RBM with 4 visible and 2 hidden units has 6 biases/);
  assert.throws(() => logLikelihood(engine, { ...p, w: new Float64Array(100) }, d), /params\.w has 100 entries, but an RBM with 4 visible and 2 hidden units has 8 couplings/);
  assert.throws(() => logLikelihood(engine, { ...p, a: p.a.map((x, i) => (i ? x : NaN)) }, d), /params\.a\[0\] is NaN/);
  assert.throws(() => logLikelihood(engine, { ...p, a: p.a.map((x, i) => (i ? x : Infinity)) }, d), /params\.a\[0\] is Infinity/);
  assert.throws(() => gradientStatistics(engine, { ...p, w: p.w.map((x, i) => (i === 3 ? -Infinity : x)) }, d), /params\.w\[3\] is -Infinity: a coupling must be a finite number/);
  assert.throws(() => logLikelihood(engine, { ...p, pairs: p.pairs.slice().reverse() }, d), /params\.pairs are not the pairs/);
  const m = new BoundMachine(engine, 'boltzmann', 6, 0);
  try {
    assert.throws(() => m.set(p), /the parameters are of a rbm with 4 visible and 2 hidden units, 2 states each, but the machine is a Boltzmann machine with 6 visible units/);
  } finally {
    m.dispose();
  }
  // A bias of −∞ forbids a state: allowed (the row with that unit on has log-likelihood −∞).
  assert.equal(logLikelihood(engine, { ...p, a: p.a.map((x, i) => (i ? x : -Infinity)) }, { rows: 1, cols: 4, values: Uint8Array.from([1, 0, 0, 0]) }).value, -Infinity);
});

test('learn() refuses before the first epoch: a bad baseData (a 7 in binary data, or 5 columns, was refused after the run or counted into another column), particles with CD (echoed in settings, unused), test data with evaluate false (ignored), maxWeight 0 (every run "diverged")', () => {
  const long = { epochs: 100_000 };
  const base = (values: number[], cols: number) => ({ rows: values.length / cols, cols, values: Uint8Array.from(values) });
  refusedAtOnce(() => learn(engine, data, { ...long, likelihood: { method: 'ais', baseData: base([0, 0, 0, 0, 0], 5) } }), /baseData has 5 columns, but the machine has 6 visible units/);
  refusedAtOnce(() => learn(engine, data, { ...long, likelihood: { method: 'ais', baseData: base([0, 1, 2, 7, 0, 0], 6) } }), /baseData data row 1, column 3: 2 is not a state in 0…1/);
  refusedAtOnce(() => learn(engine, data, { ...long, method: 'cd', particles: 7 }), /particles applies to method 'pcd'/);
  refusedAtOnce(() => learn(engine, data, { ...long, evaluate: false, test: data }), /test data are for the log-likelihood evaluation, and evaluate is false/);
  refusedAtOnce(() => learn(engine, data, { ...long, maxWeight: 0 }), /maxWeight must be a finite number > 0, got 0/);
  // logLikelihood itself: the 7 was counted as column 4's state 1 (−4.03 ± 0.003 by AIS).
  const p = learn(engine, data, { epochs: 1, evaluate: false }).params;
  assert.throws(() => logLikelihood(engine, p, data, { method: 'ais', baseData: base([0, 1, 0, 7, 0, 0], 6) }), /baseData data row 1, column 4: 7 is not a state in 0…1/);
  // CD's settings say the chains it ran: one a minibatch row.
  assert.equal(learn(engine, data, { method: 'cd', batch: 50, epochs: 1, evaluate: false }).settings.particles, 50);
});

test('the AIS log-likelihood reports the checks infer\'s AIS runs (few runs, a low weight ESS, widely spread log weights: it reported none), and learn\'s test result shares them', () => {
  const coin = (rows: number, cols: number, seed: number) => {
    const rand = mulberry32(seed);
    return { rows, cols, values: Uint8Array.from({ length: rows * cols }, () => (rand() < 0.5 ? 1 : 0)) };
  };
  const bm = randomMachine('boltzmann', 10, 0, 3, 2), d10 = coin(50, 10, 4);
  assert.deepEqual(logLikelihood(engine, bm, d10, { method: 'exact' }).warnings, []);
  const few = logLikelihood(engine, bm, d10, { method: 'ais', runs: 4, steps: 200, seed: 1 });
  assert.match(few.warnings.join('\n'), /only 4 runs: the standard error rests on 3 degrees of freedom/);
  // 20 runs of 20 temperatures: 0.60 nats above the exact value, 2 SE.
  const low = logLikelihood(engine, bm, d10, { method: 'ais', runs: 20, steps: 20, seed: 1 });
  assert.match(low.warnings.join('\n'), /the weights' ESS is 7\.2 of 20 runs: the estimate rests on a few runs/);
  assert.doesNotMatch(low.warnings.join('\n'), /population annealing/, 'the learner\'s AIS has none to offer');
  const rbm = randomMachine('rbm', 10, 6, 3, 3);
  assert.match(logLikelihood(engine, rbm, d10, { method: 'ais', runs: 100, steps: 10, seed: 1 }).warnings.join('\n'), /the log weights spread by 2\.54 nats \(sd\)/);
  assert.deepEqual(logLikelihood(engine, bm, d10, { method: 'ais', runs: 100, steps: 2000, seed: 1 }).warnings, []);
  // Through learn: the test data's log-likelihood uses the training data's log Z, and its caveats.
  const wide = coin(40, 21, 5), r = learn(engine, wide, { epochs: 1, test: coin(10, 21, 6), likelihood: { runs: 4, steps: 20 } });
  assert.equal(r.train!.method, 'ais');
  assert.match(r.train!.warnings.join('\n'), /only 4 runs/);
  assert.deepEqual(r.test!.warnings, r.train!.warnings);
});

test('what those checks cannot see: a mode no AIS run reached (14 units, couplings +1, biases −6.5: −0.0251 ± 0.0066 by AIS, −0.7146 exact, no warning; the README says so)', () => {
  const nV = 14, pairs = machinePairs('boltzmann', nV, 0);
  const p: MachineParams = { kind: 'boltzmann', nVisible: nV, nHidden: 0, states: 2, pairs, a: new Float64Array(nV).fill(-6.5), w: new Float64Array(pairs.length / 2).fill(1) };
  const d = { rows: 10, cols: nV, values: Uint8Array.from({ length: 10 * nV }, (_, i) => (Math.floor(i / nV) === 0 ? 1 : 0)) };
  const exact = logLikelihood(engine, p, d, { method: 'exact' }), ais = logLikelihood(engine, p, d, { method: 'ais', seed: 1 });
  assert.ok(Math.abs(exact.value + 0.7146) < 1e-4 && Math.abs(ais.value + 0.0251) < 1e-4, `${exact.value}, ${ais.value}`);
  assert.ok((ais.value - exact.value) / ais.stdErr > 50);
  assert.deepEqual(ais.warnings, []);
});

test('an RBM\'s epochs with blockgibbs / dhmc carry no Gaussian-layer fields (dhmc reported acceptance 1, stepSize 0.1 and refreshSeconds 0: no HMC ran, it is block Gibbs there)', () => {
  const p = randomMachine('rbm', 4, 2, 51, 0.8), d = draw(visibleLogProbs(p), 4, 30, 52);
  for (const sampler of ['blockgibbs', 'dhmc'] as const) {
    const e = learn(engine, d, { model: 'rbm', hidden: 2, sampler, epochs: 2, evaluate: false }).epochs.at(-1)!;
    assert.deepEqual(Object.keys(e).sort(), ['changeRate', 'epoch', 'gradientRms', 'learningRate', 'maxAbsParameter'], sampler);
  }
  // A machine with visible–visible couplings keeps them.
  const e = learn(engine, data, { sampler: 'dhmc', epochs: 1, evaluate: false }).epochs[0];
  assert.ok(e.acceptance! > 0 && e.stepSize! > 0 && e.refreshSeconds! >= 0 && e.shiftAlpha! >= 0, JSON.stringify(e));
});

test('learn\'s seed seeds the AIS log-likelihood too (every seed gave seed 1\'s AIS), deterministically; likelihood.seed still overrides it', () => {
  const rand = mulberry32(8), wide = { rows: 40, cols: 21, values: Uint8Array.from({ length: 40 * 21 }, () => (rand() < 0.3 ? 1 : 0)) };
  const opts = { epochs: 1, likelihood: { runs: 8, steps: 20 } };
  const ais = (p: MachineParams, seed: number) => logLikelihood(engine, p, wide, { method: 'ais', runs: 8, steps: 20, baseData: wide, seed }).logZ;
  for (const seed of [2, 3]) {
    const r = learn(engine, wide, { ...opts, seed });
    assert.equal(r.train!.logZ, ais(r.params, seed), `seed ${seed}`);
    assert.notEqual(r.train!.logZ, ais(r.params, 1), `seed ${seed} against 1`);
    assert.equal(learn(engine, wide, { ...opts, seed }).train!.logZ, r.train!.logZ, 'the same seed, the same estimate');
    assert.equal(learn(engine, wide, { ...opts, seed, likelihood: { ...opts.likelihood, seed: 1 } }).train!.logZ, ais(r.params, 1));
  }
});
