// Learning with particles advanced through Gaussian units on the visible–visible couplings
// (bindings/learn/particles.ts): the factorisation M Mᵀ = W_vv + αI with Martens' shift, model
// statistics of block Gibbs and DHMC particles against exact expectations (within 4 SE), and PCD
// with them against the same targets as the Gibbs-particle tests in learn.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { ModelError } from '../bindings/core/errors.ts';
import { learn } from '../bindings/learn/learn.ts';
import { gradientStatistics } from '../bindings/learn/gradient.ts';
import { BoundMachine } from '../bindings/learn/machine.ts';
import { GaussianLayer } from '../bindings/learn/particles.ts';
import { VisibleFactor } from '../bindings/learn/factored.ts';
import { symmetricEigen } from '../bindings/linalg/dense.ts';
import { averageLogLik, draw, exactFit, exactModelStats, randomMachine, visibleLogProbs } from './learn-helpers.ts';

const engine = await loadEngine();

test('Gaussian layer: α = (1 + ε)·(−λ_min(W_vv)) and M Mᵀ = W_vv + αI entry by entry (SRBM, 9 visible units)', () => {
  const p = randomMachine('srbm', 9, 3, 5, 0.8);
  const m = new BoundMachine(engine, 'srbm', 9, 3);
  try {
    m.set(p);
    const layer = new GaussianLayer(engine, m, 'blockgibbs', { shiftEpsilon: 0.05 });
    layer.refresh();
    const nV = 9, W = new Float64Array(nV * nV);
    for (let e = 0; e < p.w.length; e++) {
      const i = p.pairs[2 * e], j = p.pairs[2 * e + 1];
      if (j < nV) W[i * nV + j] = W[j * nV + i] = p.w[e];
    }
    const lmin = Math.min(...symmetricEigen(engine, W, nV, false).values);
    assert.ok(lmin < 0);
    assert.ok(Math.abs(layer.info.lambdaMin - lmin) < 1e-8, `Lanczos λ_min ${layer.info.lambdaMin} vs ${lmin}`);
    assert.ok(Math.abs(layer.info.alpha - 1.05 * -lmin) < 1e-8, `α ${layer.info.alpha} vs ${1.05 * -lmin}`);
    const M = m.arena.readF64(layer.M, nV * nV);
    for (let i = 0; i < nV; i++) {
      for (let j = 0; j < nV; j++) {
        let s = 0;
        for (let k = 0; k < nV; k++) s += M[i * nV + k] * M[j * nV + k];
        assert.ok(Math.abs(s - (W[i * nV + j] + (i === j ? layer.info.alpha : 0))) < 1e-10, `(M Mᵀ)[${i}][${j}]`);
      }
    }
  } finally {
    m.dispose();
  }
});

test('block Gibbs and DHMC particles: model statistics within 4 SE of exact expectations (BM, RBM, SRBM)', () => {
  const cases = [
    ['boltzmann', 6, 0, 'blockgibbs'], ['srbm', 4, 2, 'blockgibbs'], ['rbm', 5, 3, 'blockgibbs'], ['boltzmann', 6, 0, 'dhmc'], ['srbm', 4, 3, 'dhmc'],
  ] as const;
  for (const [kind, nV, nH, sampler] of cases) {
    const p = randomMachine(kind, nV, nH, 11, 0.6);
    const d = draw(visibleLogProbs(p), nV, 20, 12);
    const P = 4000;
    const st = gradientStatistics(engine, p, d, { particles: P, sweeps: 60, seed: 3, sampler });
    const exact = exactModelStats(p);
    // Independent particles: SE ≤ sqrt(q(1−q)/P) for a [0,1] statistic with mean q.
    const check = (est: number, q: number, what: string) => {
      const se = Math.sqrt(Math.max(q * (1 - q), 1e-4) / P);
      assert.ok(Math.abs(est - q) <= 4 * se, `${kind} ${sampler} ${what}: ${est} vs exact ${q} (4 SE = ${4 * se})`);
    };
    exact.a.forEach((q, i) => check(st.model.a[i], q, `a[${i}]`));
    exact.w.forEach((q, k) => check(st.model.w[k], q, `w[${k}]`));
  }
});

test('PCD with block Gibbs particles: fully visible BM within 0.01 nats of the exact ML fit held-out log-likelihood', () => {
  const lp = visibleLogProbs(randomMachine('boltzmann', 10, 0, 21, 0.4));
  const train = draw(lp, 10, 3000, 22), heldOut = draw(lp, 10, 3000, 23);
  const llML = averageLogLik(visibleLogProbs(exactFit(train)), heldOut);
  const r = learn(engine, train, { model: 'boltzmann', sampler: 'blockgibbs', particles: 200, batch: 100, epochs: 60, learningRate: 0.1, seed: 5, evaluate: false });
  const ll = averageLogLik(visibleLogProbs(r.params), heldOut);
  console.log(`BM (block Gibbs): held-out ML ${llML.toFixed(4)} learned ${ll.toFixed(4)} (${r.seconds.toFixed(2)} s; last α ${r.epochs.at(-1)!.shiftAlpha})`);
  assert.ok(Math.abs(ll - llML) < 0.01, `held-out ${ll} vs ML fit ${llML}`);
  assert.ok(r.epochs.every((e) => e.shiftAlpha! >= 0 && e.refreshSeconds! >= 0));
});

test('PCD with block Gibbs and DHMC particles: SRBM within 0.03 nats of the generating model held-out log-likelihood', () => {
  const truth = randomMachine('srbm', 7, 2, 61, 0.6);
  const lp = visibleLogProbs(truth);
  const train = draw(lp, 7, 4000, 62), heldOut = draw(lp, 7, 4000, 63);
  const llTrue = averageLogLik(lp, heldOut);
  for (const sampler of ['blockgibbs', 'dhmc'] as const) {
    const r = learn(engine, train, { model: 'srbm', hidden: 2, sampler, visibleRate: 0.5, particles: 200, batch: 100, epochs: 60, learningRate: 0.1, seed: 8, evaluate: false });
    const ll = averageLogLik(visibleLogProbs(r.params), heldOut);
    const last = r.epochs.at(-1)!;
    console.log(`SRBM (${sampler}): held-out truth ${llTrue.toFixed(4)} learned ${ll.toFixed(4)} (${r.seconds.toFixed(2)} s; α ${last.shiftAlpha?.toFixed(3)}, acceptance ${last.acceptance?.toFixed(3)})`);
    assert.ok(ll > llTrue - 0.03, `${sampler}: held-out ${ll} vs generating model ${llTrue}`);
    if (sampler === 'dhmc') assert.ok(last.acceptance! > 0.7 && last.acceptance! < 0.99, `DHMC acceptance ${last.acceptance}`);
  }
});

test('block Gibbs / DHMC particles refuse bad layer options with a ModelError', () => {
  const b = { rows: 2, cols: 2, values: Uint8Array.from([0, 1, 1, 0]) };
  assert.throws(() => learn(engine, b, { sampler: 'dhmc', leapfrogSteps: 0, epochs: 1 }), ModelError);
  assert.throws(() => learn(engine, b, { sampler: 'blockgibbs', shiftEpsilon: 0, epochs: 1 }), ModelError);
});

test('equivalent-RBM parametrisation (W_vv = F Fᵀ): the marginal form matches F; PCD with block Gibbs particles on F within 0.02 nats of the BM ML fit', () => {
  const lp = visibleLogProbs(randomMachine('boltzmann', 10, 0, 21, 0.4));
  const train = draw(lp, 10, 3000, 22), heldOut = draw(lp, 10, 3000, 23);
  const llML = averageLogLik(visibleLogProbs(exactFit(train)), heldOut);
  for (const sampler of ['blockgibbs'] as const) {
    // F Fᵀ reaches negative couplings only through a large diagonal: slower than learning W itself
    // (60 epochs at η = 0.1 end 0.05 nats short, 150 at η = 0.3 0.01 short).
    const r = learn(engine, train, { model: 'boltzmann', equivalentRBM: true, sampler, particles: 200, batch: 100, epochs: 100, learningRate: 0.3, seed: 5, evaluate: false });
    const F = r.factor!, nV = 10;
    for (let e = 0; e < r.params.w.length; e++) {
      const i = r.params.pairs[2 * e], j = r.params.pairs[2 * e + 1];
      let s = 0;
      for (let c = 0; c < nV; c++) s += F[i * nV + c] * F[j * nV + c];
      assert.ok(Math.abs(r.params.w[e] - s) < 1e-12, `W[${i}][${j}] ${r.params.w[e]} vs (F Fᵀ) ${s}`);
    }
    const ll = averageLogLik(visibleLogProbs(r.params), heldOut);
    console.log(`BM as equivalent RBM (${sampler}): held-out ML ${llML.toFixed(4)} learned ${ll.toFixed(4)} (${r.seconds.toFixed(2)} s)`);
    assert.ok(Math.abs(ll - llML) < 0.02, `${sampler}: held-out ${ll} vs ML fit ${llML}`);
  }
  assert.throws(() => learn(engine, train, { model: 'rbm', hidden: 2, equivalentRBM: true, epochs: 1 }), ModelError);
});

test('equivalent-RBM gradient kernel: G = S F with S the data second moments (diagonal: the means), entry by entry', () => {
  const nV = 5, p = randomMachine('boltzmann', nV, 0, 31, 0.5), d = draw(visibleLogProbs(p), nV, 40, 32);
  const m = new BoundMachine(engine, 'boltzmann', nV, 0);
  try {
    m.set(p);
    const normals = Float64Array.from({ length: nV * nV }, (_, i) => 100 * Math.sin(1 + 7 * i)); // F = 0.01·normals
    const f = new VisibleFactor(engine, m, normals), k = engine.kernels, ar = m.arena;
    const dp = m.loadData(d), posA = ar.allocF64(nV), posW = ar.allocF64(m.nnz), zeroA = ar.allocF64(nV), zeroW = ar.allocF64(m.nnz);
    const x = ar.alloc(k.learnAccumulateScratchBytes(m.header) >>> 0);
    k.learnAccumulate(m.header, dp, nV, 0, d.rows, nV, posA, posW, x);
    f.gradient(posA, posW, zeroA, zeroW, 1 / d.rows, 1);
    const G = f.readGradient(), F = f.read();
    for (let i = 0; i < nV; i++) {
      for (let c = 0; c < nV; c++) {
        let g = 0;
        for (let r = 0; r < d.rows; r++) {
          if (!d.values[r * nV + i]) continue;
          for (let j = 0; j < nV; j++) g += (d.values[r * nV + j] * F[j * nV + c]) / d.rows;
        }
        assert.ok(Math.abs(G[i * nV + c] - g) < 1e-12, `G[${i}][${c}] ${G[i * nV + c]} vs ${g}`);
      }
    }
  } finally {
    m.dispose();
  }
});
