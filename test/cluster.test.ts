// Swendsen–Wang and Wolff against enumeration: marginals within 4 MCSE at fixed seeds on
// ferromagnetic Ising and Potts models with fields (Potts tables in any gauge, i.e. with row and
// column terms that the sampler moves into the fields; exact by enumeration, or elimination for the
// q = 4 lattice); the mean bond energy of the critical 16×16 Ising torus against Kaufman's closed
// form; refusals of what cluster moves cannot do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { runCluster, pottsForm, ClusterSampler } from '../bindings/samplers/cluster.ts';
import { ModelBuilder, type Model } from '../bindings/core/model.ts';
import { isingLattice, latticeBonds } from '../bindings/core/builders.ts';
import { ModelError } from '../bindings/core/errors.ts';
import { infer } from '../bindings/infer.ts';
import { bruteForce, mulberry32 } from './helpers.ts';
import { kaufmanLogZ } from './kaufman.ts';

const engine = await loadEngine();

function assertMatchesExact(model: Model, kind: 'sw' | 'wolff', seed: number, maxSE = 0.01): void {
  const exact = model.n * Math.log2(model.card[0]) <= 16 ? bruteForce(model) : infer(engine, model, { method: 'exact' });
  const r = runCluster(engine, model, kind, { seed, samples: 6000, burnin: 200 });
  assert.equal(r.partial, false);
  let tested = 0;
  r.marginals.forEach((row, v) => {
    row.forEach((p, k) => {
      const se = r.marginalStdErr![v][k];
      assert.ok(se < maxSE, `${kind}: variable ${v} state ${k}: standard error ${se} too large for a meaningful test`);
      if (se > 0) tested++;
      const tol = 4 * se + 1e-12;
      assert.ok(Math.abs(p - exact.marginals[v][k]) <= tol, `${kind}: variable ${v} state ${k}: ${p} vs exact ${exact.marginals[v][k]} (tolerance ${tol})`);
    });
  });
  assert.ok(tested > 0);
}

/** A q-state Potts model on a periodic 3×3 lattice with random fields and couplings J ≥ 0, each table in a random gauge. */
function gaugedPotts(q: number, seed: number): Model {
  const rand = mulberry32(seed);
  const b = new ModelBuilder(new Array(9).fill(q));
  for (let v = 0; v < 9; v++) b.addUnary(v, Array.from({ length: q }, () => rand() - 0.5));
  for (const [i, j] of latticeBonds([3, 3], true)) {
    const J = 0.3 + 0.5 * rand(), c = rand();
    const r = Array.from({ length: q }, () => rand() - 0.5), s = Array.from({ length: q }, () => rand() - 0.5);
    const t: number[] = [];
    for (let k = 0; k < q; k++) for (let l = 0; l < q; l++) t.push(c + r[k] + s[l] + (k === l ? J : 0));
    b.addPairwise(i, j, t);
  }
  return b.build();
}

const fieldIsing = (seed: number) => {
  const rand = mulberry32(seed);
  return isingLattice({ shape: [4, 4], periodic: true, J: () => 0.2 + 0.4 * rand(), h: Array.from({ length: 16 }, () => 0.4 * rand() - 0.2) });
};

test('Swendsen–Wang: ferromagnetic Ising with fields, and Potts q = 3, 4 in any gauge', () => {
  assertMatchesExact(fieldIsing(3), 'sw', 1);
  assertMatchesExact(gaugedPotts(3, 4), 'sw', 2);
  assertMatchesExact(gaugedPotts(4, 5), 'sw', 3);
});

test('Wolff: the same models', () => {
  assertMatchesExact(fieldIsing(3), 'wolff', 1);
  assertMatchesExact(gaugedPotts(3, 4), 'wolff', 2);
  assertMatchesExact(gaugedPotts(4, 5), 'wolff', 3, 0.015);
});

test('Wolff in a field\'s ordered phase, whose sites change state a few times per chain, warns that its standard errors are unreliable (0.0008 ± 0.0005 against 0.0058, silently); in the disordered phase and without a field it does not', async () => {
  const engine = await loadEngine();
  const { exactInference } = await import('../bindings/exact/exact.ts');
  const few = (r: { warnings?: string[] }) => (r.warnings ?? []).some((w) => /^Wolff: sites changed state .* times per chain/.test(w));
  const ordered = isingLattice({ shape: [10, 10], beta: 0.7, h: 0.05 });
  const exact = exactInference(engine, ordered);
  for (const seed of [1, 2]) {
    const r = runCluster(engine, ordered, 'wolff', { samples: 1000, burnin: 200, seed });
    const worst = Math.max(...r.marginals.map((row, v) => Math.abs(row[0] - exact.marginals[v][0]) / r.marginalStdErr![v][0]));
    assert.ok(worst > 4, `the case: some marginal ${worst.toFixed(1)} SE off`);
    assert.ok(few(r), JSON.stringify(r.warnings));
  }
  for (const m of [isingLattice({ shape: [10, 10], beta: 0.3, h: 0.05 }), isingLattice({ shape: [8, 8], beta: 0.6, h: 0.02 }), isingLattice({ shape: [10, 10], beta: 0.44 })]) {
    for (const seed of [1, 2, 3]) assert.ok(!few(runCluster(engine, m, 'wolff', { samples: 1000, seed })), `seed ${seed}`);
  }
});

test('the power check: a model with the fields flipped is detected', () => {
  const m = fieldIsing(3), other = bruteForce(fieldIsing(4));
  const r = runCluster(engine, m, 'sw', { seed: 1, samples: 4000 });
  let worst = 0;
  r.marginals.forEach((row, v) => (worst = Math.max(worst, Math.abs(row[1] - other.marginals[v][1]) / r.marginalStdErr![v][1])));
  assert.ok(worst > 20, `only ${worst} standard errors apart`);
});

test('refusals: mixed-sign couplings (naming the coupling), non-Potts tables, zeros, mixed cardinalities', () => {
  const mixed = isingLattice({ shape: [3, 3], J: (i, j) => (i === 4 && j === 5 ? -0.5 : 0.5) });
  assert.throws(() => pottsForm(mixed), (e: Error) => e instanceof ModelError && /variables 4 and 5 has J = -1/.test(e.message));
  const b = new ModelBuilder([3, 3]);
  b.addPairwise(0, 1, [1, 0, 0, 0, 1, 0.5, 0, 0, 1]);
  assert.throws(() => pottsForm(b.build()), /not of that form/);
  const z = new ModelBuilder([2, 2]);
  z.addPairwise(0, 1, [0, 0, 0, -Infinity]);
  assert.throws(() => pottsForm(z.build()), /finite/);
  const c = new ModelBuilder([2, 3]);
  c.addPairwise(0, 1, [0, 0, 0, 0, 0, 0]);
  assert.throws(() => pottsForm(c.build()), /one cardinality/);
});

test('Wolff clusters per sweep are fixed before sampling; traces are deterministic', () => {
  const m = isingLattice({ shape: [8, 8], periodic: true, beta: 0.44 });
  const s = new ClusterSampler(engine, m, 'wolff');
  s.calibrate(1);
  assert.ok(s.clustersPerSweep >= 1 && s.clustersPerSweep < 64, `${s.clustersPerSweep}`);
  const a = s.magnetisationTrace(s.init(1, 0), 50), b = s.magnetisationTrace(s.init(1, 0), 50);
  assert.deepEqual(a, b);
  for (const x of a) assert.ok(Math.abs(x) <= 1);
  s.dispose();
});

test('CLI: --method sw and wolff run; mixed couplings exit 2 with one line', () => {
  const BIN = fileURLToPath(new URL('../bin/relaxmrf.js', import.meta.url));
  const run = (...args: string[]) => spawnSync(process.execPath, [BIN, 'infer', ...args], { encoding: 'utf8' });
  for (const method of ['sw', 'wolff']) {
    const r = run('ising:6x6,beta=0.4,h=0.1,periodic', '--method', method, '--samples', '500', '--json');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).method, method);
  }
  const bad = run('ising:4x4,J=-1', '--method', 'sw');
  assert.equal(bad.status, 2, bad.stderr);
  assert.equal(bad.stderr.trim().split('\n').length, 1);
  assert.match(bad.stderr, /ferromagnetic/);
});

test('Kaufman at β_c: the mean bond energy of the 16×16 Ising torus from SW, Wolff and heat bath', () => {
  // ⟨σ_iσ_j⟩ per bond = (d log Z / dK) / (2n), by central differences of Kaufman's closed form.
  const L = 16, n = L * L, K = Math.log(1 + Math.SQRT2) / 2, h = 1e-4;
  const exact = (kaufmanLogZ(K + h, L) - kaufmanLogZ(K - h, L)) / (2 * h) / (2 * n);
  const model = isingLattice({ shape: [L, L], periodic: true, beta: K });
  for (const kind of ['sw', 'wolff', 'heatbath'] as const) {
    const s = new ClusterSampler(engine, model, kind);
    s.calibrate(1);
    const st = s.init(7, 0);
    s.step(st, 500);
    const agree = s.agreementTrace(st, kind === 'heatbath' ? 20000 : 6000);
    s.dispose();
    // Mean and its standard error by batch means over 50 batches (each ≫ τ_int of the energy).
    const B = 50, len = Math.floor(agree.length / B);
    const means = Array.from({ length: B }, (_, b) => agree.subarray(b * len, (b + 1) * len).reduce((x, y) => x + y, 0) / len);
    const mean = means.reduce((x, y) => x + y, 0) / B;
    const se = Math.sqrt(means.reduce((x, y) => x + (y - mean) ** 2, 0) / (B - 1) / B);
    const corr = 2 * mean - 1;
    assert.ok(se < 0.01, `${kind}: SE ${se}`);
    assert.ok(Math.abs(corr - exact) <= 4 * 2 * se, `${kind}: ⟨σσ⟩ ${corr} ± ${2 * se} vs Kaufman ${exact}`);
  }
});
