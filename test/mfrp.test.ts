// MFRP (Hsu, Achim & Ermon 2016) against enumeration over the constrained set {x : Ax = b}:
// Proposition 1's singleton and pairwise marginals, the projected objective at the returned
// marginals for every m, the kernel's per-sweep bookkeeping, GF(2) reduction (solution sets), and
// Theorem 1's factors for the rescaled median.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { MFRPSolver, runMFRP, runMFRPDetailed, logMedian, MFRP_DEFAULTS, MFRP_MIN_BUDGET, type Projection } from '../bindings/variational/mfrp.ts';
import { runMeanField } from '../bindings/variational/meanfield.ts';
import { ModelBuilder, type Model } from '../bindings/core/model.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import { ModelError } from '../bindings/core/errors.ts';
import { bruteForce, mulberry32, randomModel } from './helpers.ts';
import { applyEvidence } from '../bindings/io/formats.ts';

const engine = await loadEngine();

function close(a: number, b: number, tol: number, what: string): void {
  assert.ok(a === b || Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);
}

/** Configurations x ∈ {0,1}^n as the reduced projection generates them from the free bits. */
function expand(n: number, P: Projection, free: Int32Array, mask: number): Int32Array {
  const x = new Int32Array(n);
  free.forEach((f, t) => (x[f] = (mask >> t) & 1));
  P.pivots.forEach((p, l) => {
    let v = P.rhs[l];
    for (const f of P.support[l]) v ^= x[f];
    x[p] = v;
  });
  return x;
}

/**
 * Enumeration under q = Π_free Bernoulli(μ_f) · 1{constraints}: E_q[log p̃] + Σ H(μ_f), every
 * E_q[x_i] and E_q[x_i x_j].
 */
function bruteProjected(model: Model, P: Projection, free: Int32Array, mu: ArrayLike<number>) {
  const n = model.n;
  let e = 0;
  const single = new Float64Array(n);
  const pair = new Float64Array(n * n);
  for (let mask = 0; mask < 2 ** free.length; mask++) {
    const x = expand(n, P, free, mask);
    let q = 1;
    for (const f of free) q *= x[f] ? mu[f] : 1 - mu[f];
    if (q === 0) continue;
    e += q * model.logPotential(x);
    for (let i = 0; i < n; i++) {
      if (!x[i]) continue;
      single[i] += q;
      for (let j = 0; j < n; j++) if (x[j]) pair[i * n + j] += q;
    }
  }
  let h = 0;
  for (const f of free) {
    const p = mu[f];
    if (p > 0) h -= p * Math.log(p);
    if (p < 1) h -= (1 - p) * Math.log(1 - p);
  }
  return { objective: e + h, single, pair };
}

/** log Z(A, b) = log Σ_{x: Ax = b} p̃(x), by enumeration of the free bits. */
function bruteLogZProjected(model: Model, P: Projection, free: Int32Array): number {
  const logs: number[] = [];
  for (let mask = 0; mask < 2 ** free.length; mask++) logs.push(model.logPotential(expand(model.n, P, free, mask)));
  const top = Math.max(...logs);
  return top + Math.log(logs.reduce((s, l) => s + Math.exp(l - top), 0));
}

/** Did this projection put two adjacent variables among the pivots (the pivot–pivot case)? */
function hasPivotPair(model: Model, P: Projection): boolean {
  const piv = new Set(P.pivots);
  return model.edges.some((e) => piv.has(e.i) && piv.has(e.j));
}

test('Proposition 1: singleton and pairwise marginals and the objective equal enumeration over {x : Ax = b}', () => {
  const rand = mulberry32(41);
  let pivotPairs = 0, cases = 0;
  for (let t = 0; t < 6; t++) {
    const n = 6 + t;
    const model = randomModel(rand, n, { density: t < 3 ? 0.9 : 0.4, scale: 1.5 });
    const s = new MFRPSolver(engine, model, n);
    for (let m = 0; m <= n; m++) {
      for (let trial = 0; trial < 3; trial++) {
        const code = s.drawProjection(t, m, trial);
        const P = s.projection();
        assert.equal(P.consistent, code >= 0);
        if (!P.consistent) continue;
        const free = s.freeVariables();
        assert.equal(free.length, n - P.rank);
        // Free marginals including the edge values 0, ½ (m_f = 0: the zero-count path) and 1.
        const mu = Float64Array.from({ length: n }, () => [0, 0.5, 1][Math.floor(rand() * 12)] ?? rand());
        s.setFreeMarginals(mu);
        const ev = s.evaluate();
        const bf = bruteProjected(model, P, free, mu);
        close(ev.logGamma, bf.objective, 1e-12, `n ${n} m ${m}: objective`);
        for (let i = 0; i < n; i++) {
          close(ev.marginals[i], bf.single[i], 1e-13, `n ${n} m ${m}: μ_${i}`);
          for (let j = 0; j < n; j++) close(s.pairMarginal(i, j), bf.pair[i * n + j], 1e-13, `n ${n} m ${m}: μ_${i}${j}`);
        }
        cases++;
        if (hasPivotPair(model, P)) pivotPairs++;
      }
    }
    s.dispose();
  }
  assert.ok(pivotPairs >= 10, `the pivot–pivot case was exercised only ${pivotPairs} times of ${cases}`);
});

test('coordinate ascent: every sweep raises the projected bound by exactly what the kernel reports', () => {
  const rand = mulberry32(42);
  for (let t = 0; t < 4; t++) {
    const n = 10;
    const model = randomModel(rand, n, { density: t % 2 ? 0.9 : 0.35, scale: 2 });
    const s = new MFRPSolver(engine, model, n);
    for (const m of [0, 1, 3, 6, 9]) {
      if (s.drawProjection(50 + t, m, 0) < 0) continue;
      // A start with some μ = ½ exactly (m_f = 0) exercises the zero-count products in the slopes.
      const mu = Float64Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 0.5 : rand()));
      s.setFreeMarginals(mu);
      let prev = s.evaluate().logGamma;
      for (let sweep = 0; sweep < 5; sweep++) {
        const a = s.ascend(1, -1);
        assert.ok(a.logGamma >= prev - 1e-12, 'the bound never decreases');
        close(a.logGamma - prev, a.lastIncrease, 1e-9, `model ${t} m ${m} sweep ${sweep}: increase`);
        prev = a.logGamma;
      }
    }
    s.dispose();
  }
});

test('converged ascent, every m: objective = enumeration at the returned marginals, ≤ log Z(A,b), stationary', () => {
  const rand = mulberry32(43);
  const grid = isingLattice({ shape: [4, 4], J: () => 4 * rand() - 2, h: Array.from({ length: 16 }, () => rand() - 0.5) });
  const models = [grid, randomModel(rand, 10, { density: 0.5, scale: 2 })];
  for (const model of models) {
    const n = model.n;
    const s = new MFRPSolver(engine, model, n);
    for (let m = 0; m <= n; m++) {
      if (s.drawProjection(7, m, 0) < 0) continue;
      const P = s.projection();
      const free = s.freeVariables();
      s.randomStart();
      const a = s.ascend(2000, 1e-14);
      assert.ok(a.converged, `n ${n} m ${m}: not converged`);
      const bf = bruteProjected(model, P, free, a.marginals);
      close(a.logGamma, bf.objective, 1e-11, `n ${n} m ${m}: objective`);
      for (let i = 0; i < n; i++) close(a.marginals[i], bf.single[i], 1e-12, `n ${n} m ${m}: μ_${i}`);
      assert.ok(a.logGamma <= bruteLogZProjected(model, P, free) + 1e-10, `n ${n} m ${m}: above log Z(A,b)`);
      // Stationary: F(μ_f ± δ) ≤ F(μ) for every free coordinate.
      for (const f of free.slice(0, 4)) {
        for (const d of [-1e-4, 1e-4]) {
          const mu = a.marginals.slice();
          mu[f] = Math.min(1, Math.max(0, mu[f] + d));
          s.setFreeMarginals(mu);
          assert.ok(s.evaluate().logGamma <= a.logGamma + 1e-12, `n ${n} m ${m}: coordinate ${f} not a maximum`);
        }
      }
    }
    s.dispose();
  }
});

test('GF(2) reduction: the reduced system has exactly the solutions of Ax = b (enumerated), rank by a naive reference', () => {
  const rand = mulberry32(44);
  const n = 10;
  const model = randomModel(rand, n, { density: 0.3 });
  const s = new MFRPSolver(engine, model, 14);
  for (let t = 0; t < 120; t++) {
    const m = Math.floor(rand() * 15);
    const A: number[][] = Array.from({ length: m }, () => Array.from({ length: n }, (): number => (rand() < 0.5 ? 1 : 0)));
    const b: number[] = Array.from({ length: m }, (): number => (rand() < 0.5 ? 1 : 0));
    // Dependent rows: copies and sums of earlier ones.
    for (let l = 1; l < m; l++) if (rand() < 0.25) A[l] = A[Math.floor(rand() * l)].map((v, c) => v ^ A[0][c]);
    const code = s.setProjection(A, b);
    const P = s.projection();
    // Naive rank over GF(2) of A and of [A | b].
    const rankOf = (rows: number[][]): number => {
      const M = rows.map((r) => r.slice());
      let r = 0;
      for (let c = 0; c < (M[0]?.length ?? 0) && r < M.length; c++) {
        const p = M.findIndex((row, i) => i >= r && row[c] === 1);
        if (p < 0) continue;
        [M[r], M[p]] = [M[p], M[r]];
        for (let i = 0; i < M.length; i++) if (i !== r && M[i][c]) M[i] = M[i].map((v, k) => v ^ M[r][k]);
        r++;
      }
      return r;
    };
    const rA = rankOf(A), rAb = rankOf(A.map((row, l) => [...row, b[l]]));
    assert.equal(P.rank, rA, 'rank');
    assert.equal(P.consistent, rA === rAb, 'consistency');
    assert.equal(code, P.consistent ? rA : -rA - 1);
    const truth = new Set<number>();
    for (let x = 0; x < 2 ** n; x++) {
      if (A.every((row, l) => row.reduce((acc, v, c) => acc ^ (v & (x >> c) & 1), 0) === b[l])) truth.add(x);
    }
    if (!P.consistent) {
      assert.equal(truth.size, 0);
      continue;
    }
    const free = s.freeVariables();
    const got = new Set<number>();
    for (let mask = 0; mask < 2 ** free.length; mask++) got.add(expand(n, P, free, mask).reduce((acc, v, i) => acc | (v << i), 0));
    assert.equal(got.size, 2 ** (n - rA));
    assert.deepEqual([...got].sort((p, q) => p - q), [...truth].sort((p, q) => p - q));
  }
  s.dispose();
});

test("Theorem 1's factors: 2^m · median ≤ 4Z for every m, and the best m within 32(n+1) of Z", () => {
  const rand = mulberry32(45);
  const models: Model[] = [
    isingLattice({ shape: [3, 4], J: () => 6 * rand() - 3, h: Array.from({ length: 12 }, () => 2 * rand() - 1) }),
    isingLattice({ shape: [4, 4], J: () => 20 * rand() - 10, h: Array.from({ length: 16 }, () => 2 * rand() - 1) }),
    randomModel(rand, 10, { density: 0.5, scale: 3 }),
    randomModel(rand, 12, { density: 0.3, scale: 1 }),
  ];
  for (const [idx, model] of models.entries()) {
    const n = model.n;
    const exact = bruteForce(model).logZ;
    const { result, perM } = runMFRPDetailed(engine, model, { seed: 11 + idx, restarts: 5, trials: 5, maxConstraints: n });
    assert.equal(result.method, 'mfrp');
    assert.equal(result.logZKind, 'estimate', 'not a bound: it can exceed log Z');
    assert.equal(perM.length, n + 1);
    for (const p of perM) {
      assert.ok(p.bound <= exact + Math.log(4) + 1e-9, `model ${idx} m ${p.m}: ${p.bound} > log 4Z = ${exact + Math.log(4)}`);
    }
    assert.ok(result.logZ! >= exact - Math.log(32 * (n + 1)), `model ${idx}: ${result.logZ} below log Z − log 32(n+1)`);
    assert.equal(result.logZ, Math.max(...perM.map((p) => p.bound)));
    assert.equal(result.diagnostics.bestM, perM.find((p) => p.bound === result.logZ)!.m);
    // m = 0 is mean field in another parametrisation: each trial's bound is ≤ log Z.
    for (const t of perM[0].trials) assert.ok(t.logGamma <= exact + 1e-10);
    result.marginals.forEach((row) => close(row[0] + row[1], 1, 1e-12, 'normalised'));
  }
});

test('MFRP beats MF on a strongly coupled grid (the point of the paper), and stays within the factor', () => {
  const rand = mulberry32(46);
  const model = isingLattice({ shape: [4, 4], J: () => 20 * rand() - 10, h: Array.from({ length: 16 }, () => 2 * rand() - 1) });
  const exact = bruteForce(model).logZ;
  const mf = runMeanField(engine, model, { seed: 1, restarts: 10 });
  const rp = runMFRP(engine, model, { seed: 1, restarts: 10, trials: 5, maxConstraints: 16 });
  assert.ok(mf.logZ! <= exact);
  assert.ok(rp.logZ! >= mf.logZ!, `MFRP ${rp.logZ} < MF ${mf.logZ}`);
  assert.ok(rp.logZ! <= exact + Math.log(4));
});

test('log-space median: odd, even (mean of the middle two), −∞ entries', () => {
  assert.equal(logMedian([3, 1, 2]), 2);
  close(logMedian([0, Math.log(3)]), Math.log(2), 1e-15, 'even');
  close(logMedian([1000, 1000 + Math.log(3), -5, 2000]), 1000 + Math.log(2), 1e-15, 'no overflow');
  assert.equal(logMedian([-Infinity, -Infinity, 1]), -Infinity);
  close(logMedian([-Infinity, 0]), -Math.LN2, 1e-15, 'one empty of two');
  assert.equal(logMedian([-Infinity, -Infinity]), -Infinity);
});

test('refusals: multi-valued variables and zero potentials, with the reason', () => {
  const potts = randomModel(mulberry32(47), 5, { cards: [2, 3] });
  assert.throws(() => runMFRP(engine, potts), (e: unknown) => e instanceof ModelError && /binary models only/.test((e as Error).message));
  const b = new ModelBuilder([2, 2, 2]);
  b.addPairwise(0, 1, [0, 0, 0, -Infinity]);
  assert.throws(() => runMFRP(engine, b.build()), (e: unknown) => e instanceof ModelError && /strictly positive .*a factor on variable 0 has a zero/.test((e as Error).message));
  // Evidence (a unary clamp) is named as such, not as some factor's zero.
  const observed = applyEvidence(randomModel(mulberry32(49), 4), new Map([[2, 1]])).model;
  assert.throws(() => runMFRP(engine, observed), (e: unknown) => e instanceof ModelError && /no evidence: variable 2 is observed/.test((e as Error).message));
  const m = randomModel(mulberry32(48), 6);
  assert.throws(() => runMFRP(engine, m, { trials: 0 }), ModelError);
  assert.throws(() => runMFRP(engine, m, { maxConstraints: -1 }), ModelError);
  assert.throws(() => runMFRP(engine, m, { minConstraints: 3, maxConstraints: 2 }), ModelError);
});

test('determinism and options: same seed, same answer; m is clamped to n; defaults', () => {
  const m = randomModel(mulberry32(49), 7, { density: 0.5 });
  const a = runMFRP(engine, m, { seed: 3, restarts: 3, trials: 3 });
  const b = runMFRP(engine, m, { seed: 3, restarts: 3, trials: 3 });
  const c = runMFRP(engine, m, { seed: 4, restarts: 3, trials: 3 });
  assert.equal(a.logZ, b.logZ);
  assert.deepEqual(a.marginals, b.marginals);
  assert.notEqual(a.diagnostics.perMBounds, c.diagnostics.perMBounds);
  assert.equal(a.diagnostics.maxConstraints, 7);
  assert.equal(MFRP_DEFAULTS.maxConstraints, 20);
  assert.equal(MFRP_DEFAULTS.trials, 5);
  const only = runMFRPDetailed(engine, m, { seed: 3, restarts: 3, trials: 3, minConstraints: 2, maxConstraints: 4 });
  assert.deepEqual(only.perM.map((p) => p.m), [2, 3, 4]);
});

test('MFRP is never below mean field: its m = 0 candidate is mean field with the same seed and restarts', () => {
  const rand = mulberry32(52);
  const models: Model[] = [];
  // Hsu's mixed grids, where a median of projected m = 0 trials used to fall below mean field.
  for (const side of [4, 6, 8]) models.push(isingLattice({ shape: [side, side], J: () => 20 * rand() - 10, h: Array.from({ length: side * side }, () => 2 * rand() - 1) }));
  for (let t = 0; t < 3; t++) models.push(randomModel(rand, 8 + t, { density: 0.5, scale: 2 }));
  models.push(isingLattice({ shape: [10, 10], J: 0.4, periodic: true }));
  for (const [idx, model] of models.entries()) {
    for (const seed of [1, 2, 3]) {
      for (const restarts of [1, 4]) {
        const mf = runMeanField(engine, model, { seed, restarts });
        const { result, perM } = runMFRPDetailed(engine, model, { seed, restarts, trials: 3, maxConstraints: 6 });
        assert.equal(perM[0].m, 0);
        assert.equal(perM[0].bound, mf.logZ, `model ${idx} seed ${seed}: m = 0 is mean field`);
        assert.equal(result.diagnostics.mfBound, mf.logZ);
        assert.ok(result.logZ! >= mf.logZ!, `model ${idx} seed ${seed} J ${restarts}: MFRP ${result.logZ} < MF ${mf.logZ}`);
        if (result.diagnostics.bestM === 0) assert.deepEqual(result.marginals, mf.marginals);
      }
    }
  }
});

test('MFRP budget: by default the m range stops when budgetFactor × mean field\'s work is spent; explicit maxConstraints runs every m', () => {
  const model = isingLattice({ shape: [32, 32], J: 0.4, periodic: true });
  const { result, perM } = runMFRPDetailed(engine, model, { seed: 1 });
  const d = result.diagnostics;
  const mfWork = d.mfWork as number, work = d.work as number;
  const budget = Math.max(MFRP_MIN_BUDGET, MFRP_DEFAULTS.budgetFactor * mfWork);
  assert.equal(d.budgetExhausted, true);
  assert.ok((d.maxConstraints as number) < MFRP_DEFAULTS.maxConstraints, `ran m up to ${d.maxConstraints}`);
  assert.deepEqual(perM.map((p) => p.m), Array.from({ length: (d.maxConstraints as number) + 1 }, (_, m) => m));
  // Stopping is decided on estimates before each m, so the last m may overshoot: by at most that m's share.
  assert.ok(work - mfWork <= budget * (1 + 1 / perM.length), `projected work ${work - mfWork} against the budget ${budget}`);
  assert.ok((d.restarts as number) >= 1 && (d.restarts as number) <= MFRP_DEFAULTS.restarts);
  assert.ok(result.logZ! >= (d.mfBound as number));
  const all = runMFRPDetailed(engine, randomModel(mulberry32(53), 9, { density: 0.5 }), { seed: 1, restarts: 2, trials: 2, maxConstraints: 9, budgetFactor: 1e-9 });
  assert.deepEqual(all.perM.map((p) => p.m), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.throws(() => runMFRP(engine, model, { budgetFactor: 0 }), ModelError);
});

test("experiment variants: leftmost pivots give the same solution set with each row's first column as pivot; the per-sweep update's bound is the objective at its marginals, ≤ log Z(A,b)", () => {
  const rand = mulberry32(54);
  const model = isingLattice({ shape: [3, 4], J: () => 20 * rand() - 10, h: Array.from({ length: 12 }, () => 2 * rand() - 1) });
  const n = model.n;
  const plain = new MFRPSolver(engine, model, n);
  const lit = new MFRPSolver(engine, model, n);
  lit.setVariant({ pivots: 'leftmost', constrainedUpdate: 'per-sweep' });
  let differ = 0, stale = 0;
  for (let m = 1; m <= n; m++) {
    const code = plain.drawProjection(5, m, 0);
    assert.equal(lit.drawProjection(5, m, 0), code, 'same A, b and rank');
    if (code < 0) continue;
    const P = plain.projection(), L = lit.projection();
    const solutions = (s: MFRPSolver, Q: Projection) => {
      const free = s.freeVariables();
      const out: number[] = [];
      for (let mask = 0; mask < 2 ** free.length; mask++) out.push(expand(n, Q, free, mask).reduce((acc, v, i) => acc | (v << i), 0));
      return out.sort((a, b) => a - b);
    };
    assert.deepEqual(solutions(lit, L), solutions(plain, P));
    // Reduced rows are [I | A′] up to the column order: every pivot precedes every other column of its row.
    L.pivots.forEach((p, l) => assert.ok(L.support[l].every((c) => c > p), `m ${m} row ${l}: pivot ${p} is not the first column`));
    if (P.pivots.some((p, l) => p !== L.pivots[l])) differ++;
    lit.randomStart();
    const a = lit.ascend(300, 1e-12);
    const free = lit.freeVariables();
    close(a.logGamma, bruteProjected(model, L, free, a.marginals).objective, 1e-11, `m ${m}: objective`);
    assert.ok(a.logGamma <= bruteLogZProjected(model, L, free) + 1e-10, `m ${m}: above log Z(A,b)`);
    // The per-sweep rule differs from exact coordinate ascent once a sweep has a constrained neighbour.
    lit.setVariant({ pivots: 'leftmost' });
    lit.drawProjection(5, m, 0);
    lit.setFreeMarginals(a.marginals.map((x) => 0.5 + 0.9 * (x - 0.5)));
    const exact1 = lit.ascend(1, -1).marginals;
    lit.setVariant({ pivots: 'leftmost', constrainedUpdate: 'per-sweep' });
    lit.drawProjection(5, m, 0);
    lit.setFreeMarginals(a.marginals.map((x) => 0.5 + 0.9 * (x - 0.5)));
    const sweep1 = lit.ascend(1, -1).marginals;
    if (exact1.some((x, i) => Math.abs(x - sweep1[i]) > 1e-9)) stale++;
  }
  assert.ok(differ > 0, 'the pivot rules never chose different pivots');
  assert.ok(stale > 0, 'the per-sweep update never differed from the per-coordinate one');
  plain.dispose();
  lit.dispose();
  // MFRP ≥ MF holds for the variants too (m = 0 is mean field).
  const mf = runMeanField(engine, model, { seed: 2, restarts: 3 });
  const r = runMFRPDetailed(engine, model, { seed: 2, restarts: 3, trials: 3, maxConstraints: 6 }, { pivots: 'leftmost', constrainedUpdate: 'per-sweep' });
  assert.equal(r.perM[0].bound, mf.logZ);
  assert.ok(r.result.logZ! >= mf.logZ!);
});
