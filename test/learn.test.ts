// Learning Boltzmann machines: the gradient statistics against exact expectations, PCD on data
// drawn exactly from small known models against the exact maximum-likelihood fit (fully visible) and
// the generating model (RBM), and the log-likelihood evaluation (exact enumeration, AIS) against
// enumeration here. Fixed seeds; statistical tolerances from the Monte Carlo standard error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { learn } from '../bindings/learn/learn.ts';
import { gradientStatistics } from '../bindings/learn/gradient.ts';
import { logLikelihood, type BinaryData } from '../bindings/learn/likelihood.ts';
import { machinePairs, machineModel, type MachineKind, type MachineParams } from '../bindings/learn/machine.ts';
import { mulberry32 } from './helpers.ts';
import { averageLogLik, draw, drawPotts, exactFit, exactModelStats, pottsAverageLogLik, pottsLogProbs, pottsModelStats, randomMachine, randomPotts, visibleLogProbs } from './learn-helpers.ts';

const engine = await loadEngine();


test('gradient statistics: data phase exact, model phase within 4 SE of exact expectations (BM, RBM, SRBM; Gibbs and tree-block Gibbs)', () => {
  for (const [kind, nV, nH, sampler] of [['boltzmann', 6, 0, 'gibbs'], ['rbm', 5, 3, 'gibbs'], ['srbm', 4, 2, 'gibbs'], ['boltzmann', 6, 0, 'tree'], ['srbm', 4, 3, 'tree']] as const) {
    const p = randomMachine(kind, nV, nH, 11, 0.6);
    const d = draw(visibleLogProbs(p), nV, 50, 12);
    const P = 4000;
    const st = gradientStatistics(engine, p, d, { particles: P, sweeps: 50, seed: 3, sampler });
    // Exact: data statistics with hidden means; model statistics by enumerating the joint.
    const n = nV + nH, E = p.w.length;
    const sig = (u: number) => 1 / (1 + Math.exp(-u));
    const dA = new Float64Array(n), dW = new Float64Array(E);
    for (let r = 0; r < d.rows; r++) {
      const x = new Float64Array(n);
      for (let i = 0; i < nV; i++) x[i] = d.values[r * nV + i];
      for (let h = nV; h < n; h++) {
        let u = p.a[h];
        for (let e = 0; e < E; e++) if (p.pairs[2 * e + 1] === h) u += p.w[e] * x[p.pairs[2 * e]];
        x[h] = sig(u);
      }
      for (let i = 0; i < n; i++) dA[i] += x[i] / d.rows;
      for (let e = 0; e < E; e++) dW[e] += (x[p.pairs[2 * e]] * x[p.pairs[2 * e + 1]]) / d.rows;
    }
    for (let i = 0; i < n; i++) assert.ok(Math.abs(st.data.a[i] - dA[i]) < 1e-12, `${kind} data a[${i}]`);
    for (let e = 0; e < E; e++) assert.ok(Math.abs(st.data.w[e] - dW[e]) < 1e-12, `${kind} data w[${e}]`);
    // Model phase: x_p for visible bits (indicator) and hidden conditional means; compare the
    // visible ones and the pair statistics with exact joint expectations.
    const { a: mA, w: mW } = exactModelStats(p);
    // Independent particles: SE ≤ sqrt(q(1−q)/P) for a [0,1] statistic with mean q.
    const check = (est: number, exact: number, what: string) => {
      const se = Math.sqrt(Math.max(exact * (1 - exact), 1e-4) / P);
      assert.ok(Math.abs(est - exact) <= 4 * se, `${kind} model ${what}: ${est} vs exact ${exact} (4 SE = ${4 * se})`);
    };
    for (let i = 0; i < n; i++) check(st.model.a[i], mA[i], `a[${i}]`);
    for (let k = 0; k < E; k++) check(st.model.w[k], mW[k], `w[${k}]`);
  }
});

/** Data from a 10-unit fully visible BM and the exact ML fit's held-out log-likelihood. */
const bm = (() => {
  const lp = visibleLogProbs(randomMachine('boltzmann', 10, 0, 21, 0.4));
  const train = draw(lp, 10, 3000, 22), heldOut = draw(lp, 10, 3000, 23);
  return { train, heldOut, llML: averageLogLik(visibleLogProbs(exactFit(train)), heldOut) };
})();

test('fully visible BM: PCD reaches the exact ML fit held-out log-likelihood within 0.01 nats', () => {
  const { train, heldOut, llML } = bm;
  const t0 = performance.now();
  const r = learn(engine, train, { model: 'boltzmann', method: 'pcd', particles: 200, batch: 100, epochs: 60, learningRate: 0.1, seed: 5, test: heldOut });
  const llLearned = averageLogLik(visibleLogProbs(r.params), heldOut);
  console.log(`BM: held-out ML ${llML.toFixed(4)} learned ${llLearned.toFixed(4)} (${((performance.now() - t0) / 1000).toFixed(2)} s)`);
  assert.ok(Math.abs(llLearned - llML) < 0.01, `held-out ${llLearned} vs ML fit ${llML}`);
  // The reported (exact, 10 visible units) test log-likelihood is the same number.
  assert.equal(r.test!.method, 'exact');
  assert.ok(Math.abs(r.test!.value - llLearned) < 1e-9);
  assert.ok(Math.abs(r.train!.value - averageLogLik(visibleLogProbs(r.params), train)) < 1e-9);
  assert.equal(r.epochs.length, 60);
});

test('fully visible BM: CD-1 learns (held-out log-likelihood near the ML fit)', () => {
  const { train, heldOut, llML } = bm;
  const r = learn(engine, train, { method: 'cd', cdSteps: 1, batch: 50, epochs: 40, learningRate: 0.1, seed: 6, evaluate: false });
  const ll = averageLogLik(visibleLogProbs(r.params), heldOut);
  console.log(`BM CD-1: held-out ML ${llML.toFixed(4)} learned ${ll.toFixed(4)}`);
  assert.ok(Math.abs(ll - llML) < 0.02, `held-out ${ll} vs ML fit ${llML}`);
});

test('RBM: PCD reaches the generating model held-out log-likelihood within 0.03 nats; AIS within 4 SE of exact', () => {
  const truth = randomMachine('rbm', 8, 3, 41, 0.8);
  const lp = visibleLogProbs(truth);
  const train = draw(lp, 8, 4000, 42), heldOut = draw(lp, 8, 4000, 43);
  const llTrue = averageLogLik(lp, heldOut);
  const t0 = performance.now();
  const r = learn(engine, train, { model: 'rbm', hidden: 3, particles: 200, batch: 100, epochs: 60, learningRate: 0.1, seed: 7, evaluate: false });
  const ll = averageLogLik(visibleLogProbs(r.params), heldOut);
  console.log(`RBM: held-out truth ${llTrue.toFixed(4)} learned ${ll.toFixed(4)} (${((performance.now() - t0) / 1000).toFixed(2)} s)`);
  assert.ok(ll > llTrue - 0.03, `held-out ${ll} vs generating model ${llTrue}`);
  const exact = logLikelihood(engine, r.params, heldOut, { method: 'exact' });
  assert.ok(Math.abs(exact.value - ll) < 1e-9);
  const ais = logLikelihood(engine, r.params, heldOut, { method: 'ais', runs: 100, steps: 1000, baseData: train, seed: 9 });
  console.log(`AIS ${ais.value.toFixed(4)} ± ${ais.stdErr.toExponential(2)} exact ${exact.value.toFixed(4)}`);
  assert.ok(ais.stdErr > 0 && ais.stdErr < 0.05);
  assert.ok(Math.abs(ais.value - exact.value) <= 4 * ais.stdErr, `AIS ${ais.value} ± ${ais.stdErr} vs exact ${exact.value}`);
  // The UAI model: visible units first, then hidden, its log-potential the machine's energy.
  const model = machineModel(r.params);
  assert.equal(model.n, 11);
});

test('AIS from the base rate: fully visible BM and SRBM log-likelihood within 4 SE of enumeration', () => {
  for (const [kind, nV, nH] of [['boltzmann', 9, 0], ['srbm', 7, 3]] as const) {
    const p = randomMachine(kind, nV, nH, 51, 0.7);
    const lp = visibleLogProbs(p);
    const d = draw(lp, nV, 500, 52);
    const exact = averageLogLik(lp, d);
    const viaEnum = logLikelihood(engine, p, d, { method: 'exact' });
    assert.ok(Math.abs(viaEnum.value - exact) < 1e-9, `${kind}: kernel enumeration ${viaEnum.value} vs ${exact}`);
    const ais = logLikelihood(engine, p, d, { method: 'ais', runs: 64, steps: 300, seed: 2 });
    assert.ok(ais.stdErr > 0 && ais.stdErr < 0.05, `${kind}: AIS standard error ${ais.stdErr}`);
    assert.ok(Math.abs(ais.value - exact) <= 4 * ais.stdErr, `${kind}: AIS ${ais.value} ± ${ais.stdErr} vs exact ${exact}`);
  }
});

test('SRBM with tree-block Gibbs particles: PCD reaches the generating model held-out log-likelihood within 0.03 nats', () => {
  const truth = randomMachine('srbm', 7, 2, 61, 0.6);
  const lp = visibleLogProbs(truth);
  const train = draw(lp, 7, 4000, 62), heldOut = draw(lp, 7, 4000, 63);
  const llTrue = averageLogLik(lp, heldOut);
  const r = learn(engine, train, { model: 'srbm', hidden: 2, sampler: 'tree', visibleRate: 0.5, particles: 200, batch: 100, epochs: 60, learningRate: 0.1, seed: 8, evaluate: false });
  const ll = averageLogLik(visibleLogProbs(r.params), heldOut);
  console.log(`SRBM (tree): held-out truth ${llTrue.toFixed(4)} learned ${ll.toFixed(4)}`);
  assert.ok(ll > llTrue - 0.03, `held-out ${ll} vs generating model ${llTrue}`);
});

test('Potts (5 units, 3 states): statistics, exact and AIS log-likelihood, and PCD within 0.03 nats of the generating model', () => {
  const K = 3, n = 5, truth = randomPotts(n, K, 71, 1);
  const lp = pottsLogProbs(truth);
  const train = drawPotts(lp, n, K, 4000, 72), heldOut = drawPotts(lp, n, K, 4000, 73);
  const avg = (logp: Float64Array, d: BinaryData) => pottsAverageLogLik(logp, d, K);
  // Model statistics within 4 SE of the exact indicator expectations.
  const P = 4000, st = gradientStatistics(engine, truth, heldOut, { particles: P, sweeps: 30, seed: 4 });
  const { a: mA, w: mW } = pottsModelStats(truth);
  const within = (est: number, exact: number, what: string) =>
    assert.ok(Math.abs(est - exact) <= 4 * Math.sqrt(Math.max(exact * (1 - exact), 1e-4) / P), `Potts model ${what}: ${est} vs exact ${exact}`);
  mA.forEach((v, i) => within(st.model.a[i], v, `a[${i}]`));
  mW.forEach((v, i) => within(st.model.w[i], v, `w[${i}]`));
  // Exact and AIS log-likelihood of the generating model.
  const exact = logLikelihood(engine, truth, heldOut, { method: 'exact' });
  assert.ok(Math.abs(exact.value - avg(lp, heldOut)) < 1e-9, `exact ${exact.value} vs ${avg(lp, heldOut)}`);
  const ais = logLikelihood(engine, truth, heldOut, { method: 'ais', runs: 64, steps: 300, seed: 5, baseData: train });
  assert.ok(ais.stdErr > 0 && ais.stdErr < 0.05 && Math.abs(ais.value - exact.value) <= 4 * ais.stdErr, `AIS ${ais.value} ± ${ais.stdErr} vs exact ${exact.value}`);
  // Learning.
  const r = learn(engine, train, { model: 'potts', particles: 200, batch: 100, epochs: 40, learningRate: 0.1, seed: 9, evaluate: false });
  assert.equal(r.params.states, K);
  const ll = avg(pottsLogProbs(r.params), heldOut);
  console.log(`Potts: held-out truth ${avg(lp, heldOut).toFixed(4)} learned ${ll.toFixed(4)}`);
  assert.ok(ll > avg(lp, heldOut) - 0.03, `held-out ${ll} vs generating model ${avg(lp, heldOut)}`);
  assert.equal(machineModel(r.params).card[0], K);
});

test('data statistics are the derivatives of the data term of the exact log-likelihood, by finite differences (RBM, Potts)', () => {
  const rbmP = randomMachine('rbm', 5, 2, 81, 0.7);
  const K = 3, pairs = machinePairs('potts', 3, 0), rand = mulberry32(82);
  const pottsP: MachineParams = {
    kind: 'potts', nVisible: 3, nHidden: 0, states: K, pairs,
    a: Float64Array.from({ length: 3 * K }, () => rand() - 0.5), w: Float64Array.from({ length: 3 * K * K }, () => rand() - 0.5),
  };
  for (const p of [rbmP, pottsP]) {
    const d = p.kind === 'potts' ? drawPotts(pottsLogProbs(p), 3, K, 40, 83) : draw(visibleLogProbs(p), 5, 40, 83);
    const st = gradientStatistics(engine, p, d, { particles: 1, sweeps: 1 });
    // LL = mean log f(v) − log Z: its finite-difference derivative plus that of log Z is the data
    // term's, which the data statistics (hidden units at their conditional means) must equal.
    const ll = (q: MachineParams) => logLikelihood(engine, q, d, { method: 'exact' });
    const h = 1e-5;
    for (const [field, n] of [['a', p.a.length], ['w', p.w.length]] as const) {
      for (let i = 0; i < n; i++) {
        const up = { ...p, [field]: p[field].slice() }, dn = { ...p, [field]: p[field].slice() };
        up[field][i] += h;
        dn[field][i] -= h;
        const fd = (ll(up).value - ll(dn).value) / (2 * h);
        const dlogZ = (ll(dn).logZ - ll(up).logZ) / (2 * h); // −∂ log Z
        assert.ok(Math.abs(fd - (st.data[field][i] + dlogZ)) < 1e-6, `${p.kind} ${field}[${i}]: ${fd} vs ${st.data[field][i] + dlogZ}`);
      }
    }
  }
});
