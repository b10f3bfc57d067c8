// Diagnostics on synthetic chains with known answers: AR(1) chains x_t = φ x_{t−1} + √(1−φ²) ε_t have
// integrated autocorrelation time τ = (1+φ)/(1−φ), so ESS = M·N/τ; MCSE z-scores of many replicate
// runs must have unit spread (the calibration test BlackJAX uses for its samplers); R̂ must flag
// chains that disagree in location (bulk) or in scale (tail).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { autocovariance, bulkTailDiagnostics, ess, essBulk, essTail, splitRhat, rankNormalizedRhat, mcse, summarizeTraces, inverseNormalCdf, rankNormalize, splitChains } from '../bindings/samplers/diagnostics.ts';
import { mulberry32 } from './helpers.ts';

/** Standard normals from the test generator (Box–Muller). */
function normals(rand: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}

function ar1(rand: () => number, n: number, phi: number, mean = 0, scale = 1): Float64Array {
  const z = normals(rand);
  const x = new Float64Array(n);
  let v = z(); // stationary start
  const s = Math.sqrt(1 - phi * phi);
  for (let t = 0; t < n; t++) {
    v = phi * v + s * z();
    x[t] = mean + scale * v;
  }
  return x;
}

test('autocovariance by FFT equals the direct sum', () => {
  const rand = mulberry32(1);
  for (const n of [1, 2, 7, 64, 257]) {
    const x = Float64Array.from({ length: n }, () => rand() * 3 - 1);
    const a = autocovariance(x);
    const mean = x.reduce((s, v) => s + v, 0) / n;
    for (let t = 0; t < n; t++) {
      let s = 0;
      for (let i = 0; i + t < n; i++) s += (x[i] - mean) * (x[i + t] - mean);
      assert.ok(Math.abs(a[t] - s / n) < 1e-12, `n = ${n}, lag ${t}: ${a[t]} vs ${s / n}`);
    }
  }
});

test('ESS of AR(1) chains matches M·N(1−φ)/(1+φ) within 15 % (positive, zero and negative correlation)', () => {
  const rand = mulberry32(2);
  const M = 4, N = 50000;
  for (const phi of [0.9, 0.5, 0, -0.3]) {
    const chains = Array.from({ length: M }, () => ar1(rand, N, phi));
    const expected = (M * N * (1 - phi)) / (1 + phi);
    const e = ess(chains);
    assert.ok(Math.abs(e / expected - 1) < 0.15, `φ = ${phi}: ESS ${e}, expected ${expected}`);
    // Bulk-ESS agrees for a Gaussian process (rank-normalising changes little).
    const b = essBulk(chains);
    assert.ok(Math.abs(b / expected - 1) < 0.2, `φ = ${phi}: bulk ESS ${b}, expected ${expected}`);
  }
});

test('MCSE is calibrated: z = mean/MCSE over 300 replicate AR(1) runs has unit spread', () => {
  const rand = mulberry32(3);
  const zs: number[] = [];
  for (let rep = 0; rep < 300; rep++) {
    const chains = Array.from({ length: 4 }, () => ar1(rand, 1000, 0.8));
    const m = chains.reduce((s, c) => s + c.reduce((a, b) => a + b, 0), 0) / 4000;
    zs.push(m / mcse(chains));
  }
  const sd = Math.sqrt(zs.reduce((s, z) => s + z * z, 0) / zs.length);
  const tail = zs.filter((z) => Math.abs(z) > 1.96).length / zs.length;
  assert.ok(sd > 0.85 && sd < 1.15, `sd of z = ${sd}`);
  assert.ok(tail < 0.1, `fraction |z| > 1.96: ${tail}`);
});

test('R̂: ≈ 1 for agreeing chains; large for a shifted chain (bulk), a wider chain (tail), a drifting chain (split)', () => {
  const rand = mulberry32(4);
  const good = Array.from({ length: 4 }, () => ar1(rand, 2000, 0.5));
  assert.ok(splitRhat(good) < 1.01 && rankNormalizedRhat(good) < 1.01, `${splitRhat(good)}, ${rankNormalizedRhat(good)}`);
  const shifted = [...good.slice(0, 3), ar1(rand, 2000, 0.5, 1.0)];
  assert.ok(splitRhat(shifted) > 1.1 && rankNormalizedRhat(shifted) > 1.1);
  // Same location, one chain 3× wider: the classic R̂ barely moves, the folded (tail) R̂ sees it.
  const wide = [...good.slice(0, 3), ar1(rand, 2000, 0.5, 0, 3)];
  assert.ok(splitRhat(wide) < 1.05, `classic ${splitRhat(wide)}`);
  assert.ok(rankNormalizedRhat(wide) > 1.1, `rank-normalised ${rankNormalizedRhat(wide)}`);
  // Every chain drifting the same way from −2 to +2: the chains agree with each other, so only
  // splitting them reveals the non-stationarity.
  const drift = good.map((c) => c.map((v, t) => v + (4 * t) / c.length - 2));
  assert.ok(splitRhat(drift) > 1.1, `split ${splitRhat(drift)}`);
});

test('constant and tiny series: NaN, skipped by the summary; summary fields', () => {
  const rand = mulberry32(5);
  const constant = [new Float64Array(100).fill(0.3), new Float64Array(100).fill(0.3)];
  assert.ok(Number.isNaN(ess(constant)));
  assert.ok(Number.isNaN(splitRhat(constant)));
  assert.ok(Number.isNaN(rankNormalizedRhat(constant)));
  assert.equal(mcse(constant), 0);
  assert.ok(Number.isNaN(ess([Float64Array.of(1, 2, 3)])));
  const iid = Array.from({ length: 4 }, () => ar1(rand, 1000, 0));
  const slow = Array.from({ length: 4 }, () => ar1(rand, 1000, 0.95));
  const s = summarizeTraces([constant.map((c) => c.subarray(0, 100)).concat(constant), iid, slow]);
  assert.ok(Number.isNaN(s.ess[0]));
  assert.equal(s.essMin, s.ess[2]);
  assert.ok(s.essMin! < 300 && s.ess[1] > 3000);
  assert.equal(s.essMedian, 0.5 * (s.ess[1] + s.ess[2]));
  assert.ok(s.rhatMax! < 1.1);
  // Chains of unequal length are truncated to the shortest.
  assert.ok(Number.isFinite(ess([iid[0], iid[1].subarray(0, 500)])));
});

test('rank normalisation and the normal quantile', () => {
  assert.ok(Math.abs(inverseNormalCdf(0.975) - 1.959963984540054) < 1e-8);
  assert.equal(inverseNormalCdf(0.5), 0);
  assert.ok(Math.abs(inverseNormalCdf(1e-10) + 6.361340902404056) < 1e-7);
  assert.ok(Math.abs(inverseNormalCdf(0.01) + 2.326347874040841) < 1e-8);
  assert.ok(Math.abs(inverseNormalCdf(0.99) - 2.326347874040841) < 1e-8);
  // Ties share their average rank; ranks pool over chains; scores are symmetric.
  const z = rankNormalize([Float64Array.of(1, 5, 5), Float64Array.of(2, 9, 0)]);
  assert.equal(z[0][1], z[0][2]);
  assert.ok(z[1][2] < z[0][0] && z[0][0] < z[1][0] && z[1][0] < z[0][1] && z[0][1] < z[1][1]);
  assert.ok(Math.abs(z[1][2] + z[1][1]) < 1e-12);
  const sp = splitChains([Float64Array.of(1, 2, 3, 4, 5)]);
  assert.deepEqual(sp.map((c) => Array.from(c)), [[1, 2], [4, 5]]);
});

test('bulkTailDiagnostics (what every traced quantity of a run gets) equals essBulk, essTail and rankNormalizedRhat bit for bit', () => {
  const rand = mulberry32(21);
  const same = (a: number, b: number) => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));
  const cases: Float64Array[][] = [
    [0, 1, 2, 3].map(() => ar1(rand, 20, 0.5)), // 20 batch means per chain, as the batch-means samplers give
    [0, 1, 2].map((c) => ar1(rand, 101, 0.9, c)), // odd length (the middle draw dropped), chains that disagree
    [0, 1].map(() => Float64Array.from({ length: 40 }, () => Math.round(rand() * 3) / 3)), // ties
    [ar1(rand, 30, 0.2), ar1(rand, 25, 0.2)], // unequal lengths: truncated to the shorter
    [0, 1].map(() => new Float64Array(10).fill(0.25)), // constant
    [ar1(rand, 3, 0), ar1(rand, 3, 0)], // too short for ESS, long enough for R̂
    [ar1(rand, 1, 0)], // too short for anything
    [],
  ];
  for (const [k, chains] of cases.entries()) {
    const d = bulkTailDiagnostics(chains);
    assert.ok(same(d.essBulk, essBulk(chains)), `case ${k}: bulk ESS ${d.essBulk} vs ${essBulk(chains)}`);
    assert.ok(same(d.essTail, essTail(chains)), `case ${k}: tail ESS ${d.essTail} vs ${essTail(chains)}`);
    assert.ok(same(d.rhat, rankNormalizedRhat(chains)), `case ${k}: R̂ ${d.rhat} vs ${rankNormalizedRhat(chains)}`);
  }
  assert.ok(Number.isFinite(bulkTailDiagnostics(cases[0]).essBulk) && Number.isFinite(bulkTailDiagnostics(cases[1]).rhat));
});
