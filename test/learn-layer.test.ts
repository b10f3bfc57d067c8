// Learning with particles advanced through Gaussian units on the visible–visible couplings
// (bindings/learn/particles.ts): the factorisation M Mᵀ = W_vv + αI with Martens' shift, model
// statistics of block Gibbs and DHMC particles against exact expectations (within 4 SE; binary and
// Potts machines, the Potts layer over the one-hot bits), and PCD with them against the same
// targets as the Gibbs-particle tests in learn.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { ModelError } from '../bindings/core/errors.ts';
import { learn } from '../bindings/learn/learn.ts';
import { gradientStatistics } from '../bindings/learn/gradient.ts';
import { BoundMachine, type MachineParams } from '../bindings/learn/machine.ts';
import { GaussianLayer, ParticleKernel } from '../bindings/learn/particles.ts';
import { VisibleFactor } from '../bindings/learn/factored.ts';
import { symmetricEigen } from '../bindings/linalg/dense.ts';
import {
  averageLogLik, draw, drawPotts, exactFit, exactModelStats, pottsAverageLogLik, pottsLogProbs, pottsModelStats, randomMachine, randomPotts, visibleLogProbs,
} from './learn-helpers.ts';
import { cholesky } from './relax-helpers.ts';
import { mulberry32 } from './helpers.ts';

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

test('block Gibbs / DHMC particles refuse bad layer options with a ModelError; the equivalent-RBM parametrisation refuses a Potts machine', () => {
  const b = { rows: 2, cols: 2, values: Uint8Array.from([0, 1, 1, 0]) };
  assert.throws(() => learn(engine, b, { sampler: 'dhmc', leapfrogSteps: 0, epochs: 1 }), ModelError);
  assert.throws(() => learn(engine, b, { sampler: 'blockgibbs', shiftEpsilon: 0, epochs: 1 }), ModelError);
  const d = { rows: 2, cols: 2, values: Uint8Array.from([0, 2, 1, 0]) };
  assert.throws(() => learn(engine, d, { model: 'potts', sampler: 'blockgibbs', equivalentRBM: true, epochs: 1 }), (e: unknown) => e instanceof ModelError && /equivalentRBM applies to boltzmann and srbm/.test((e as Error).message));
});

/** W_vv as a dense matrix over the visible bits (Potts: unit i's state k at bit i·K + k; no within-unit entries). */
function visibleCouplings(p: MachineParams): Float64Array {
  const K = p.kind === 'potts' ? p.states : 1, nb = p.nVisible * K, W = new Float64Array(nb * nb);
  for (let e = 0; e < p.pairs.length / 2; e++) {
    const i = p.pairs[2 * e], j = p.pairs[2 * e + 1];
    if (j >= p.nVisible) continue;
    for (let k = 0; k < K; k++) for (let l = 0; l < K; l++) W[(i * K + k) * nb + j * K + l] = W[(j * K + l) * nb + i * K + k] = p.w[e * K * K + k * K + l];
  }
  return W;
}

/** Every a and w statistic within 4 SE of exact (independent particles: SE ≤ sqrt(q(1−q)/P)); each unit's states sum to 1 (one-hot particles). */
function checkPottsStats(st: { a: Float64Array; w: Float64Array }, p: MachineParams, P: number, label: string): void {
  const exact = pottsModelStats(p), K = p.states;
  const check = (est: number, q: number, what: string) => {
    const se = Math.sqrt(Math.max(q * (1 - q), 1e-4) / P);
    assert.ok(Math.abs(est - q) <= 4 * se, `${label} ${what}: ${est} vs exact ${q} (4 SE = ${4 * se})`);
  };
  exact.a.forEach((q, i) => check(st.a[i], q, `a[${i}]`));
  exact.w.forEach((q, k) => check(st.w[k], q, `w[${k}]`));
  for (let v = 0; v < p.nVisible; v++) {
    const sum = st.a.subarray(v * K, (v + 1) * K).reduce((x, y) => x + y, 0);
    assert.ok(Math.abs(sum - 1) < 1e-12, `${label}: unit ${v}'s states sum to ${sum}`);
  }
}

test('Gaussian layer over a Potts machine\'s one-hot bits: α = (1 + ε)·(−λ_min(W_vv)) and M Mᵀ = W_vv + αI entry by entry (5 units, 3 states: 15 bits)', () => {
  const p = randomPotts(5, 3, 91, 1.5), nb = 15;
  const m = new BoundMachine(engine, 'potts', 5, 0, 3);
  try {
    m.set(p);
    const layer = new GaussianLayer(engine, m, 'blockgibbs', { shiftEpsilon: 0.05 });
    layer.refresh();
    assert.equal(layer.nV, nb);
    assert.equal(layer.m, nb);
    const W = visibleCouplings(p), lmin = Math.min(...symmetricEigen(engine, W, nb, false).values);
    assert.ok(lmin < 0);
    assert.ok(Math.abs(layer.info.lambdaMin - lmin) < 1e-8, `Lanczos λ_min ${layer.info.lambdaMin} vs ${lmin}`);
    assert.ok(Math.abs(layer.info.alpha - 1.05 * -lmin) < 1e-8, `α ${layer.info.alpha} vs ${1.05 * -lmin}`);
    const M = m.arena.readF64(layer.M, nb * nb);
    for (let i = 0; i < nb; i++) {
      for (let j = 0; j < nb; j++) {
        let s = 0;
        for (let k = 0; k < nb; k++) s += M[i * nb + k] * M[j * nb + k];
        assert.ok(Math.abs(s - (W[i * nb + j] + (i === j ? layer.info.alpha : 0))) < 1e-10, `(M Mᵀ)[${i}][${j}]`);
      }
    }
  } finally {
    m.dispose();
  }
});

test('block Gibbs and DHMC particles on Potts machines: model statistics within 4 SE of exact expectations (5 units K = 3, 4 units K = 4, a state with bias −∞)', () => {
  const zeroed = randomPotts(4, 4, 93, 1.5);
  zeroed.a[1 * 4 + 2] = -Infinity;
  const machines = [randomPotts(5, 3, 91, 1.5), randomPotts(4, 4, 93, 1.5), zeroed];
  for (const [c, p] of machines.entries()) {
    const d = drawPotts(pottsLogProbs(p), p.nVisible, p.states, 20, 12);
    for (const sampler of ['blockgibbs', 'dhmc'] as const) {
      const P = 4000, st = gradientStatistics(engine, p, d, { particles: P, sweeps: 60, seed: 3, sampler });
      checkPottsStats(st.model, p, P, `Potts ${p.nVisible} × ${p.states}${c === 2 ? ' (bias −∞)' : ''} ${sampler}`);
      if (c === 2) assert.equal(st.model.a[1 * 4 + 2], 0, `${sampler}: the impossible state was visited`);
    }
  }
});

test('Potts particles through a factor with a non-uniform d (M Mᵀ = W_vv + diag(d), setFactor): model statistics within 4 SE of exact; the −½d offsets matter here', () => {
  // A uniform shift adds the same −½α to every state of a unit, which the softmax ignores; a d that
  // varies within a unit does not cancel.
  const p = randomPotts(5, 3, 91, 1.5), nb = 15, W = visibleCouplings(p), rand = mulberry32(94);
  const lmin = Math.min(...symmetricEigen(engine, W, nb, false).values);
  const dv = Float64Array.from({ length: nb }, () => -lmin + 0.1 + 0.8 * rand());
  const M = cholesky(W.map((w, q) => w + (q % (nb + 1) === 0 ? dv[q / (nb + 1)] : 0)), nb);
  for (const sampler of ['blockgibbs', 'dhmc'] as const) {
    const m = new BoundMachine(engine, 'potts', 5, 0, 3);
    try {
      m.set(p);
      // DHMC starts near the step size the PCD runs below settle at (0.72), so that its acceptance says something.
      const kernel = new ParticleKernel(engine, m, sampler, { stepSize: 0.6 }), layer = kernel.layer!;
      layer.setFactor(M, dv);
      const k = engine.kernels, ar = m.arena, P = 4000, sweeps = 60, pb = k.learnParticleBytes(m.header) >>> 0, particles = ar.alloc(P * pb);
      k.learnParticlesInit(m.header, particles, P, 3, 0, 0, 31);
      // DHMC adapts its step size over the first half in chunks of 5 sweeps (as gradientStatistics does).
      let done = 0;
      if (sampler === 'dhmc') for (; done + 5 <= sweeps / 2; done += 5) kernel.advance(particles, P, 5);
      kernel.advance(particles, P, sweeps - done, true, false);
      if (sampler === 'dhmc') assert.ok(layer.info.acceptance > 0.7 && layer.info.acceptance < 0.99, `DHMC acceptance ${layer.info.acceptance}`);
      const sa = ar.allocF64(m.nBits), sw = ar.allocF64(m.nnz), x = ar.alloc(k.learnAccumulateScratchBytes(m.header) >>> 0);
      k.learnAccumulate(m.header, particles + (k.rngStateBytes() >>> 0), pb, 0, P, m.visibleBits, sa, sw, x);
      checkPottsStats({ a: ar.readF64(sa, m.nBits).map((v) => v / P), w: m.perPair(sw).map((v) => v / P) }, p, P, `Potts, non-uniform d, ${sampler}`);
    } finally {
      m.dispose();
    }
  }
});

test('DHMC on Potts machines (and an SRBM): the leapfrog follows the density\'s gradient — one step of 0.01 loses < 10⁻⁵ acceptance, and the loss grows as step³ (× 125 at 0.05)', () => {
  // A wrong gradient still gives a valid chain (the Metropolis test uses the density) and the step-size
  // adaptation hides it, but one leapfrog step's energy error becomes O(step), not O(step³): with the
  // softmax left unnormalised, 3·10⁻³ at 0.01 and × 5 at 0.05 (here about 4·10⁻⁷ and × 125).
  for (const p of [randomPotts(5, 3, 91, 1.5), randomPotts(4, 4, 93, 1.5), randomMachine('srbm', 6, 2, 11, 0.6)]) {
    const loss = [0.01, 0.05].map((stepSize) => {
      const m = new BoundMachine(engine, p.kind, p.nVisible, p.nHidden, p.states);
      try {
        m.set(p);
        const kernel = new ParticleKernel(engine, m, 'dhmc', { stepSize, leapfrogSteps: 1 });
        const k = engine.kernels, P = 400, particles = m.arena.alloc(P * (k.learnParticleBytes(m.header) >>> 0));
        k.learnParticlesInit(m.header, particles, P, 3, 0, 0, 31);
        kernel.advance(particles, P, 10, true, false);
        return 1 - kernel.layer!.info.acceptance;
      } finally {
        m.dispose();
      }
    });
    const label = `${p.kind} ${p.nVisible} × ${p.states}`;
    assert.ok(loss[0] >= 0 && loss[0] < 1e-5, `${label}: 1 − acceptance ${loss[0]} at step 0.01`);
    assert.ok(loss[1] / loss[0] > 30, `${label}: 1 − acceptance grows × ${loss[1] / loss[0]} from step 0.01 to 0.05 (step³: × 125)`);
  }
});

test('PCD with block Gibbs and DHMC particles: Potts (5 units, 3 states) within 0.03 nats of the generating model held-out log-likelihood', () => {
  // The machine, data and settings of the Gibbs-particle Potts test in learn.test.ts.
  const K = 3, n = 5, truth = randomPotts(n, K, 71, 1);
  const lp = pottsLogProbs(truth);
  const train = drawPotts(lp, n, K, 4000, 72), heldOut = drawPotts(lp, n, K, 4000, 73);
  const llTrue = pottsAverageLogLik(lp, heldOut, K);
  for (const sampler of ['blockgibbs', 'dhmc'] as const) {
    const r = learn(engine, train, { model: 'potts', sampler, particles: 200, batch: 100, epochs: 40, learningRate: 0.1, seed: 9, evaluate: false });
    const ll = pottsAverageLogLik(pottsLogProbs(r.params), heldOut, K);
    const last = r.epochs.at(-1)!;
    console.log(`Potts (${sampler}): held-out truth ${llTrue.toFixed(4)} learned ${ll.toFixed(4)} (${r.seconds.toFixed(2)} s; α ${last.shiftAlpha?.toFixed(3)}, acceptance ${last.acceptance?.toFixed(3)})`);
    assert.ok(ll > llTrue - 0.03, `${sampler}: held-out ${ll} vs generating model ${llTrue}`);
    assert.ok(last.shiftAlpha! > 0 && last.lambdaMin! < 0, `α ${last.shiftAlpha}, λ_min ${last.lambdaMin}`);
    if (sampler === 'dhmc') assert.ok(last.acceptance! > 0.7 && last.acceptance! < 0.99, `DHMC acceptance ${last.acceptance}`);
  }
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
