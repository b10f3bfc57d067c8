// Error bars that never lie, part 1: the estimators on synthetic chains with known means. The
// chain-aware batch-means standard error must cover AR(1) chains (within-chain correlation) and
// chains stuck in different modes (between-chain spread, which pooled batch means miss); the R̂
// flag must stay quiet on converged chains and fire on chains that disagree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatchMeans } from '../bindings/samplers/estimators.ts';
import { seriesDiagnostics } from '../bindings/samplers/convergence.ts';
import { logMeanExpChains } from '../bindings/logz/logz-checks.ts';
import { mulberry32 } from './helpers.ts';

function normals(rand: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}

/** A stationary AR(1) chain with unit marginal variance around `mean`. */
function ar1(z: () => number, n: number, phi: number, mean = 0): Float64Array {
  const x = new Float64Array(n);
  let v = z();
  const s = Math.sqrt(1 - phi * phi);
  for (let t = 0; t < n; t++) {
    v = phi * v + s * z();
    x[t] = mean + v;
  }
  return x;
}

/** Feeds chains to BatchMeans (one coordinate) as `batches` batches each; the chain-aware SE and the old pooled one. */
function batchSE(chains: Float64Array[], batches: number): { mean: number; se: number; pooledSE: number } {
  const bm = new BatchMeans(1);
  const all: number[] = [];
  chains.forEach((c, k) => {
    for (let b = 0; b < batches; b++) {
      const lo = Math.floor((b * c.length) / batches), hi = Math.floor(((b + 1) * c.length) / batches);
      let s = 0;
      for (let t = lo; t < hi; t++) s += c[t];
      bm.addBatch([s], hi - lo, k);
      all.push(s / (hi - lo));
    }
  });
  const m = all.reduce((a, b) => a + b, 0) / all.length;
  const v = all.reduce((a, b) => a + (b - m) ** 2, 0) / (all.length - 1);
  return { mean: bm.mean()[0], se: bm.stdErr()[0], pooledSE: Math.sqrt(v / all.length) };
}

test('BatchMeans: chain-aware SE covers AR(1) chains (|error| ≤ 4 SE in ≥ 98 % of 400 runs, z spread near 1)', () => {
  const z = normals(mulberry32(11));
  for (const [phi, n] of [[0.9, 2000], [0.98, 2000]] as const) {
    const zs: number[] = [];
    for (let rep = 0; rep < 400; rep++) {
      const r = batchSE(Array.from({ length: 4 }, () => ar1(z, n, phi)), 20);
      zs.push(r.mean / r.se);
    }
    const covered = zs.filter((x) => Math.abs(x) <= 4).length / zs.length;
    const sd = Math.sqrt(zs.reduce((a, b) => a + b * b, 0) / zs.length);
    assert.ok(covered >= 0.98, `φ = ${phi}: ${(100 * covered).toFixed(1)} % within 4 SE`);
    // Not hiding behind huge bars either: z has roughly unit spread (≤ 1 with the conservative max).
    assert.ok(sd > 0.6 && sd < 1.3, `φ = ${phi}: sd(z) = ${sd.toFixed(3)}`);
  }
});

test('BatchMeans: chains stuck in different modes get a wide bar (pooled batch means do not)', () => {
  const rand = mulberry32(12);
  const z = normals(rand);
  let covered = 0, pooledCovered = 0, flaggedOrCovered = 0, ratio = 0;
  const reps = 300;
  for (let rep = 0; rep < reps; rep++) {
    // Eight chains, each stuck in the mode at −1 or +1 (true mean 0), noise 0.3 within.
    const scaled = Array.from({ length: 8 }, () => {
      const mode = rand() < 0.5 ? -1 : 1;
      return ar1(z, 1000, 0.5).map((x) => mode + 0.3 * x);
    });
    const r = batchSE(scaled, 20);
    if (Math.abs(r.mean) <= 4 * r.se) covered++;
    if (Math.abs(r.mean) <= 4 * r.pooledSE) pooledCovered++;
    ratio += r.se / r.pooledSE / reps;
    const bm = new BatchMeans(1, [0]);
    scaled.forEach((c, k) => {
      for (let b = 0; b < 20; b++) bm.addBatch([c.slice(b * 50, (b + 1) * 50).reduce((a, x) => a + x, 0)], 50, k);
    });
    const d = seriesDiagnostics(bm.series(), [0], 1, 'batch means');
    if (Math.abs(r.mean) <= 4 * r.se || d.rhatFlagged > 0) flaggedOrCovered++;
  }
  // Between-chain spread: t with 7 degrees of freedom (P(|t| > 4) = 0.5 %) and the 2/256 runs with
  // every chain in one mode, which nothing inside the run can see.
  assert.ok(covered / reps >= 0.97, `chain-aware SE covers ${covered} of ${reps}`);
  assert.ok(pooledCovered / reps < 0.8, `pooled batch means would cover ${pooledCovered} of ${reps}`);
  // √(number of batches per chain) wider than pooled batch means: the chain, not the batch, is the unit.
  assert.ok(ratio > 3, `mean SE ratio to pooled batch means ${ratio}`);
  assert.ok(flaggedOrCovered / reps >= 0.97, `covered or flagged: ${flaggedOrCovered} of ${reps}`);
});

test('BatchMeans: one chain, partial chains, and the means are the pooled batch means', () => {
  const bm = new BatchMeans(2, [1]);
  bm.addBatch([1, 2], 1, 0);
  assert.ok(bm.stdErr().every(Number.isNaN), 'one batch: no error estimate');
  bm.addBatch([3, 2], 1, 0);
  assert.deepEqual(Array.from(bm.mean()), [2, 2]);
  assert.equal(bm.stdErr()[1], 0, 'a constant coordinate has error 0');
  // Reading the errors mid-chain does not split the chain.
  bm.addBatch([5, 2], 1, 0);
  bm.addBatch([7, 4], 1, 1);
  bm.addBatch([9, 4], 1, 1);
  assert.equal(bm.chains, 2);
  assert.deepEqual(bm.series(), [[Float64Array.of(2, 2, 2), Float64Array.of(4, 4)]]);
  // Chain 1's mean 8 against chain 0's 3 (equal weights B_m² ȳ_m): V_b = 2 · (9·9 + 4·6.25 … ) — check against the formula.
  const N = 5, mu = 25 / 5;
  const vb = (2 / 1) * (9 * (3 - mu) ** 2 + 4 * (8 - mu) ** 2) / (N * N);
  const within = (1 + 1 + 4 + 1 + 1) / 3; // ((1−3)²+(3−3)²+(5−3)² + (7−8)²+(9−8)²) / (N − M)
  const rho = Math.min(0.9, Math.max(0, ((1 - 3) * (3 - 3) + (3 - 3) * (5 - 3) + (7 - 8) * (9 - 8)) / 10));
  const vw = (within * (1 + rho)) / (1 - rho) / N;
  assert.ok(Math.abs(bm.stdErr()[0] - Math.sqrt(Math.max(vb, vw))) < 1e-12, `${bm.stdErr()[0]} vs ${Math.sqrt(Math.max(vb, vw))}`);
});

test('R̂ flag: quiet on converged chains (batch means and draws), loud on a shifted chain', () => {
  const rand = mulberry32(13);
  const z = normals(rand);
  const Q = 100;
  const owner = Array.from({ length: Q }, (_, q) => q);
  let falseBatch = 0, falseDraws = 0, caught = 0;
  for (let rep = 0; rep < 40; rep++) {
    // Independent batch means: 4 chains × 20 batches per quantity.
    const iid = Array.from({ length: Q }, () => Array.from({ length: 4 }, () => ar1(z, 20, 0)));
    if (seriesDiagnostics(iid, owner, Q, 'batch means').rhatFlagged > 0) falseBatch++;
    // Autocorrelated draws (τ = 19), 4 chains × 1000, 20 quantities.
    const draws = Array.from({ length: 20 }, () => Array.from({ length: 4 }, () => ar1(z, 1000, 0.9)));
    if (seriesDiagnostics(draws, owner.slice(0, 20), 20, 'draws').rhatFlagged > 0) falseDraws++;
    // One quantity whose chain 0 sits 3 sd away: batch means of a chain in another mode.
    const shifted = iid.map((chains, q) => (q === 0 ? chains.map((c, k) => (k === 0 ? c.map((x) => x + 3) : c)) : chains));
    if (seriesDiagnostics(shifted, owner, Q, 'batch means').rhatFlagged > 0) caught++;
  }
  assert.ok(falseBatch <= 2, `batch means: ${falseBatch} of 40 converged runs flagged`);
  assert.ok(falseDraws <= 2, `draws: ${falseDraws} of 40 converged runs flagged`);
  assert.ok(caught >= 38, `a chain shifted by 3 sd flagged in ${caught} of 40 runs`);
});

test('log Z weights: chains that disagree widen the error bar and warn', () => {
  const z = normals(mulberry32(14));
  // Agreeing chains: log-weights N(0, 0.5²) in 4 chains; no warning.
  const agree = Array.from({ length: 4 }, () => ar1(z, 2000, 0.5).map((x) => 0.5 * x));
  const a = logMeanExpChains(agree, 10);
  assert.deepEqual(a.warnings, []);
  assert.ok(a.stdErr > 0 && a.stdErr < 0.05, `agreeing chains: SE ${a.stdErr}`);
  // One chain's weights e^{+5} above the others (it alone sits where the estimator looks).
  const split = agree.map((c, k) => (k === 0 ? c.map((x) => x + 5) : c));
  const b = logMeanExpChains(split, 10);
  assert.ok(b.warnings.some((w) => w.includes('chains disagree')), b.warnings.join(' | '));
  assert.ok(b.stdErr > 0.5, `disagreeing chains: SE ${b.stdErr}`);
  assert.ok(logMeanExpChains([agree[0]], 10).warnings.some((w) => w.startsWith('one chain')));
});

test('a run too short for R̂ and ESS says so (samples: 1 reported them null with no warning)', async () => {
  const { loadEngine } = await import('../bindings/core/wasm-node.ts');
  const { infer } = await import('../bindings/infer.ts');
  const { isingLattice } = await import('../bindings/core/builders.ts');
  const engine = await loadEngine();
  const model = isingLattice({ shape: [3, 3], beta: 0.3, h: 0.1 });
  for (const method of ['gibbs', 'treegibbs', 'dhmc'] as const) {
    const short = infer(engine, model, { method, samples: 1, burnin: 10 });
    assert.equal(short.diagnostics.rhatMax, null, method);
    assert.ok(short.warnings!.some((w) => /^only 1 (batch means|draws) per chain: too few for R̂ and ESS/.test(w)), `${method}: ${JSON.stringify(short.warnings)}`);
    const long = infer(engine, model, { method, samples: 400, burnin: 100 });
    assert.ok(!long.warnings!.some((w) => /too few for R̂/.test(w)), method);
  }
});
