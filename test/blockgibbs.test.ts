// Block Gibbs on p(x, s) against exact answers: every Rao–Blackwellised marginal within 4 Monte Carlo
// standard errors (batch means) at fixed seeds, with a check that the errors are small enough for the
// comparison to have power, for every factor kind and shift.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { runBlockGibbs, BlockGibbsSampler, type BlockGibbsOptions } from '../bindings/samplers/blockgibbs.ts';
import { buildRelaxation } from '../bindings/relax/relaxation.ts';
import { ModelBuilder, type Model } from '../bindings/core/model.ts';
import { isingLattice, pottsLattice } from '../bindings/core/builders.ts';
import { ModelError } from '../bindings/core/errors.ts';
import { toCanonical } from '../bindings/core/canonical.ts';
import { fftFactor } from '../bindings/relax/fft-factor.ts';
import { BatchMeans } from '../bindings/samplers/estimators.ts';
import { bruteForce, mulberry32, randomModel } from './helpers.ts';

const engine = await loadEngine();

function assertWithinMCSE(model: Model, opts: BlockGibbsOptions, maxSE = 0.01): number {
  const exact = bruteForce(model);
  const r = runBlockGibbs(engine, model, { samples: 20000, chains: 4, burnin: 500, ...opts });
  assert.equal(r.method, 'blockgibbs');
  assert.equal(r.partial, false);
  let worst = 0;
  r.marginals.forEach((row, v) => {
    let sum = 0;
    row.forEach((p, k) => {
      sum += p;
      const se = r.marginalStdErr![v][k];
      assert.ok(se < maxSE, `variable ${v} state ${k}: standard error ${se} too large for a meaningful test`);
      const tol = 4 * se + 1e-12;
      const dev = Math.abs(p - exact.marginals[v][k]);
      worst = Math.max(worst, dev / (se + 1e-300));
      assert.ok(dev <= tol, `variable ${v} state ${k}: ${p} vs exact ${exact.marginals[v][k]} (tolerance ${tol}, options ${JSON.stringify(opts)})`);
    });
    assert.ok(Math.abs(sum - 1) <= 1e-9, `variable ${v}: marginals sum to ${sum}`);
  });
  return worst;
}

test('binary models: marginals within 4 MCSE of enumeration', () => {
  const rand = mulberry32(301);
  for (let t = 0; t < 5; t++) assertWithinMCSE(randomModel(rand, 6 + t, { density: 0.4, scale: 1 }), { seed: 40 + t });
  assertWithinMCSE(randomModel(rand, 12, { density: 0.3, scale: 0.8 }), { seed: 49 });
});

test('multi-valued models (softmax blocks): marginals within 4 MCSE of enumeration', () => {
  const rand = mulberry32(302);
  for (let t = 0; t < 4; t++) assertWithinMCSE(randomModel(rand, 5 + t, { cards: [2, 3, 4], density: 0.5 }), { seed: 50 + t });
});

test('every factor kind and shift samples the same model correctly', () => {
  const rand = mulberry32(303);
  const binary = randomModel(rand, 9, { density: 0.4 });
  const multi = randomModel(rand, 6, { cards: [2, 3], density: 0.5 });
  for (const factor of ['dense-cholesky', 'dense-eigen', 'sparse-cholesky'] as const) {
    for (const shift of ['martens', 'min-lambda-max'] as const) {
      assertWithinMCSE(binary, { seed: 7, factor, shift, samples: 10000 }, 0.015);
      assertWithinMCSE(multi, { seed: 8, factor, shift, samples: 10000 }, 0.015);
    }
  }
});

test('the incidence factor (m = couplings ≠ n): block Gibbs marginals within 4 MCSE, binary and one-hot blocks', () => {
  const rand = mulberry32(304);
  const binary = randomModel(rand, 9, { density: 0.4 });
  const multi = randomModel(rand, 6, { cards: [2, 3], density: 0.5 });
  assertWithinMCSE(binary, { seed: 17, factor: 'incidence', samples: 10000 }, 0.015);
  assertWithinMCSE(multi, { seed: 18, factor: 'incidence', samples: 10000 }, 0.015);
  assertWithinMCSE(pottsLattice({ shape: [3, 3], q: 3, J: 0.5 }), { seed: 19, factor: 'incidence', samples: 10000 }, 0.015);
});

test('grids: a 3×4 Ising lattice and a 3×3 Potts lattice (sparse factor), a hard zero in a unary table', () => {
  const rand = mulberry32(304);
  assertWithinMCSE(isingLattice({ shape: [3, 4], J: () => rand() - 0.5, h: Array.from({ length: 12 }, () => 0.5 * rand() - 0.25) }), { seed: 4, factor: 'sparse-cholesky' });
  assertWithinMCSE(pottsLattice({ shape: [3, 3], q: 3, J: 0.5, periodic: true }), { seed: 5, factor: 'sparse-cholesky' });
  // Variable 0 can never take state 1: its marginal must be exactly (1, 0).
  const b = new ModelBuilder([2, 3, 2, 2]);
  b.addUnary(0, [0.2, -Infinity]).addUnary(1, [0.3, -0.5, 0.1]);
  b.addPairwise(0, 1, [0.4, -0.3, 0.6, 0.1, 0.2, -0.2]).addPairwise(1, 2, [0.5, -0.5, 0, 0.3, -0.4, 0.2]).addPairwise(2, 3, [0.7, -0.7, -0.7, 0.7]);
  const m = b.build();
  assertWithinMCSE(m, { seed: 6 });
  const r = runBlockGibbs(engine, m, { seed: 6, samples: 200 });
  assert.equal(r.marginals[0][1], 0);
});

test('the power check: a wrong model is detected', () => {
  // The estimates of one model compared with another's exact marginals must be off by far more
  // than 4 MCSE somewhere, and the correct comparison must be comfortably inside.
  const rand = mulberry32(305);
  const m = randomModel(rand, 8, { density: 0.5 });
  const other = randomModel(rand, 8, { density: 0.5 });
  const r = runBlockGibbs(engine, m, { seed: 11, samples: 20000 });
  const wrong = bruteForce(other), right = bruteForce(m);
  let worstWrong = 0, worstRight = 0;
  r.marginals.forEach((row, v) =>
    row.forEach((p, k) => {
      const se = r.marginalStdErr![v][k];
      worstWrong = Math.max(worstWrong, Math.abs(p - wrong.marginals[v][k]) / se);
      worstRight = Math.max(worstRight, Math.abs(p - right.marginals[v][k]) / se);
    }),
  );
  assert.ok(worstWrong > 20, `a wrong model is only ${worstWrong} standard errors off`);
  assert.ok(worstRight < 4, `the right model is ${worstRight} standard errors off`);
  // A subtly wrong relaxation (the shift's −½d left out of the bias) would also be caught: the
  // joint's s-marginal would then weight each bit by e^{d/2}.
  const exactTilted = (() => {
    const b = new ModelBuilder(m.card);
    for (let v = 0; v < m.n; v++) b.addUnary(v, m.unary[v]);
    for (const e of m.edges) b.addPairwise(e.i, e.j, e.table);
    const d = buildRelaxation(engine, m).d;
    for (let v = 0; v < m.n; v++) b.addUnary(v, [0, 0.5 * d[v]]);
    return bruteForce(b.build());
  })();
  let worstTilted = 0;
  r.marginals.forEach((row, v) => (worstTilted = Math.max(worstTilted, Math.abs(row[1] - exactTilted.marginals[v][1]) / r.marginalStdErr![v][1])));
  assert.ok(worstTilted > 20, `a tilt by e^{d/2} is only ${worstTilted} standard errors off`);
});

test('sampler shape: deterministic per (seed, chain), valid states, x of the right dimension', () => {
  const model = randomModel(mulberry32(306), 7, { cards: [2, 3], density: 0.5 });
  const sampler = new BlockGibbsSampler(engine, model);
  try {
    const a = sampler.init(5, 0), b = sampler.init(5, 0), c = sampler.init(5, 1);
    assert.deepEqual(sampler.position(a), sampler.position(b));
    assert.notDeepEqual(sampler.position(a), sampler.position(c));
    const accA = sampler.accumulator(), accB = sampler.accumulator();
    const ia = sampler.step(a, 50, accA);
    sampler.step(b, 20, accB);
    sampler.step(b, 30, accB);
    assert.deepEqual(sampler.position(a), sampler.position(b), 'split calls draw the same chain');
    assert.deepEqual(sampler.readAndClear(accA), sampler.readAndClear(accB));
    assert.deepEqual(sampler.configuration(a), sampler.configuration(b));
    assert.equal(ia.sweeps, 50);
    assert.ok(ia.changeRate > 0 && ia.changeRate <= 1);
    assert.equal(sampler.position(a).length, sampler.m);
    const cfg = sampler.configuration(c);
    cfg.forEach((k, v) => assert.ok(k >= 0 && k < model.card[v]));
    // The accumulator holds one π(x) per sweep: per one-hot block it sums to the sweep count.
    sampler.step(c, 10, accA);
    const acc = sampler.readAndClear(accA);
    const f = sampler.form;
    for (let v = 0; v < f.n; v++) {
      if (!f.oneHot[v]) continue;
      let s = 0;
      for (let k = f.blockStart[v]; k < f.blockStart[v + 1]; k++) s += acc[k];
      assert.ok(Math.abs(s - 10) <= 1e-9);
    }
  } finally {
    sampler.dispose();
  }
  assert.throws(() => sampler.init(1, 0), /use after dispose/);
});

test('options and refusals', () => {
  const model = randomModel(mulberry32(307), 5, { density: 0.5 });
  assert.throws(() => runBlockGibbs(engine, model, { chains: 0 }), ModelError);
  assert.throws(() => runBlockGibbs(engine, model, { samples: 1.5 }), ModelError);
  assert.throws(() => runBlockGibbs(engine, model, { seed: -1 }), ModelError);
  assert.throws(() => runBlockGibbs(engine, model, { shift: new Float64Array(2) }), /d has 2 entries/);
  const zeros = new ModelBuilder([2, 2]).addPairwise(0, 1, [0, 0, 0, -Infinity]).build();
  assert.throws(() => runBlockGibbs(engine, zeros), (e: unknown) => e instanceof ModelError && /zero potential/.test(e.message));
  // Cancellation before the first batch, and partial results after it.
  const ac = new AbortController();
  ac.abort();
  assert.throws(() => runBlockGibbs(engine, model, { signal: ac.signal }), /cancelled/);
  const ac2 = new AbortController();
  let calls = 0;
  const r = runBlockGibbs(engine, model, {
    samples: 1000,
    batches: 10,
    burnin: 0,
    chains: 2,
    signal: ac2.signal,
    onProgress: (p) => {
      assert.equal(p.phase, 'blockgibbs');
      if (++calls === 5) ac2.abort();
    },
  });
  assert.equal(r.partial, true);
  assert.equal(r.diagnostics.factor, 'dense-cholesky');
});

test('the sampler runs on any factor storage: the FFT factor of a periodic lattice', () => {
  const model = isingLattice({ shape: [4, 4], periodic: true, J: 0.3, h: 0.15 });
  const form = toCanonical(model);
  const d = -buildRelaxation(engine, model).lambdaMin + 1e-3;
  const { factor } = fftFactor(engine, form, [4, 4], d);
  const sampler = new BlockGibbsSampler(engine, { form, d: new Float64Array(form.nBits).fill(d), factor });
  const exact = bruteForce(model);
  try {
    const stats = new BatchMeans(form.nBits);
    const acc = sampler.accumulator();
    for (let c = 0; c < 4; c++) {
      const st = sampler.init(21, c);
      sampler.step(st, 500);
      for (let b = 0; b < 20; b++) {
        sampler.step(st, 1000, acc);
        stats.addBatch(sampler.readAndClear(acc), 1000);
      }
    }
    const mean = stats.mean(), se = stats.stdErr();
    for (let i = 0; i < form.nBits; i++) {
      assert.ok(se[i] < 0.01, `bit ${i}: standard error ${se[i]}`);
      assert.ok(Math.abs(mean[i] - exact.marginals[i][1]) <= 4 * se[i], `bit ${i}: ${mean[i]} vs exact ${exact.marginals[i][1]} (se ${se[i]})`);
    }
  } finally {
    sampler.dispose();
  }
});
