// The relaxation builder (bindings/relax/relaxation.ts): every factor reproduces W + D, the (x, s) joint has
// p(s) as its s-marginal, the relaxed density and gradient are right, logZRelation converts the
// integral of the relaxed density into the model's log Z, the log-concavity flag agrees with the
// Hessian, and bad inputs are refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import {
  buildRelaxation,
  denseW,
  type Relaxation,
  type RelaxationOptions,
  type FactorKind,
} from '../bindings/relax/relaxation.ts';
import { BoundRelaxation, type FactorData } from '../bindings/relax/relaxation-bound.ts';
import { symmetricEigen } from '../bindings/linalg/dense.ts';
import { lanczosExtremes } from '../bindings/linalg/lanczos.ts';
import { encode } from '../bindings/core/canonical.ts';
import { ModelBuilder, type Model } from '../bindings/core/model.ts';
import { isingLattice, pottsLattice, boltzmann } from '../bindings/core/builders.ts';
import { ModelError } from '../bindings/core/errors.ts';
import { bruteForce, configurations, mulberry32, randomModel } from './helpers.ts';

const engine = await loadEngine();
const KINDS: Exclude<FactorKind, 'fft'>[] = ['dense-cholesky', 'dense-eigen', 'sparse-cholesky'];

// ---- independent TypeScript reimplementations --------------------------------------------------

function mulM(f: FactorData, x: ArrayLike<number>): Float64Array {
  const u = new Float64Array(f.n);
  if (f.kind === 'dense') {
    for (let i = 0; i < f.n; i++) for (let k = 0; k < f.m; k++) u[i] += f.values[i * f.m + k] * x[k];
  } else if (f.kind === 'sparse') {
    for (let i = 0; i < f.n; i++) for (let k = f.rowPtr[i]; k < f.rowPtr[i + 1]; k++) u[i] += f.values[k] * x[f.col[k]];
  } else throw new Error('fft factor not used here');
  return u;
}

function mulMT(f: FactorData, v: ArrayLike<number>): Float64Array {
  const g = new Float64Array(f.m);
  if (f.kind === 'dense') {
    for (let i = 0; i < f.n; i++) for (let k = 0; k < f.m; k++) g[k] += f.values[i * f.m + k] * v[i];
  } else if (f.kind === 'sparse') {
    for (let i = 0; i < f.n; i++) for (let k = f.rowPtr[i]; k < f.rowPtr[i + 1]; k++) g[f.col[k]] += f.values[k] * v[i];
  } else throw new Error('fft factor not used here');
  return g;
}

/** M as a dense n × m array. */
function denseM(f: FactorData): Float64Array {
  const M = new Float64Array(f.n * f.m);
  const e = new Float64Array(f.m);
  for (let k = 0; k < f.m; k++) {
    e.fill(0);
    e[k] = 1;
    const col = mulM(f, e);
    for (let i = 0; i < f.n; i++) M[i * f.m + k] = col[i];
  }
  return M;
}

/** ℓ(x) = −½|x|² + Σ softplus / logsumexp of u = Mx + a − ½d, and its gradient, in plain TypeScript. */
function relaxedTS(r: Relaxation, x: ArrayLike<number>): { logp: number; grad: Float64Array; prob: Float64Array } {
  const { form, d } = r;
  const u = mulM(r.factor, x);
  for (let i = 0; i < form.nBits; i++) u[i] += form.a[i] - 0.5 * d[i];
  let lp = 0;
  for (let k = 0; k < x.length; k++) lp -= 0.5 * x[k] * x[k];
  const prob = new Float64Array(form.nBits);
  for (let v = 0; v < form.n; v++) {
    const b = form.blockStart[v], e = form.blockStart[v + 1];
    if (!form.oneHot[v]) {
      lp += Math.max(u[b], 0) + Math.log1p(Math.exp(-Math.abs(u[b])));
      prob[b] = 1 / (1 + Math.exp(-u[b]));
      continue;
    }
    let top = -Infinity;
    for (let k = b; k < e; k++) top = Math.max(top, u[k]);
    let tot = 0;
    for (let k = b; k < e; k++) tot += Math.exp(u[k] - top);
    lp += top + Math.log(tot);
    for (let k = b; k < e; k++) prob[k] = Math.exp(u[k] - top) / tot;
  }
  const grad = mulMT(r.factor, prob);
  for (let k = 0; k < x.length; k++) grad[k] -= x[k];
  return { logp: lp, grad, prob };
}

function logSumExp(xs: number[]): number {
  const top = Math.max(...xs);
  return top + Math.log(xs.reduce((s, x) => s + Math.exp(x - top), 0));
}

function maxAbsDiffMMT(r: Relaxation): number {
  const n = r.form.nBits, m = r.factor.m;
  const M = denseM(r.factor);
  const A = denseW(r.form);
  for (let i = 0; i < n; i++) A[i * n + i] += r.d[i];
  let err = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let k = 0; k < m; k++) s += M[i * m + k] * M[j * m + k];
      err = Math.max(err, Math.abs(s - A[i * n + j]));
    }
  }
  return err;
}

/** Random binary and multi-valued models and grids; `small`: at most 10 variables (enumerable). */
function testModels(small = false): { name: string; model: Model }[] {
  const rand = mulberry32(31);
  const out: { name: string; model: Model }[] = [];
  for (let t = 0; t < 3; t++) out.push({ name: `binary #${t}`, model: randomModel(rand, 6 + 2 * t, { density: 0.5, scale: 1.5 }) });
  for (let t = 0; t < 3; t++) out.push({ name: `multi-valued #${t}`, model: randomModel(rand, 4 + t, { cards: [2, 3, 4], density: 0.6 }) });
  if (small) {
    out.push({ name: '3×3 Ising grid', model: isingLattice({ shape: [3, 3], J: () => rand() - 0.5, h: 0.2 }) });
    out.push({ name: '2×3 Potts grid (q = 3)', model: pottsLattice({ shape: [2, 3], q: 3, J: 0.7 }) });
  } else {
    out.push({ name: '6×6 Ising grid', model: isingLattice({ shape: [6, 6], J: () => rand() - 0.5, h: 0.2 }) });
    out.push({ name: '4×4 Potts grid (q = 3)', model: pottsLattice({ shape: [4, 4], q: 3, J: 0.7 }) });
  }
  // A hard zero in a unary table: a one-hot block of 2 bits with a −∞ bias.
  const b = new ModelBuilder([2, 3, 2]);
  b.addUnary(0, [0.3, -Infinity]).addUnary(1, [0.1, -0.4, 0.2]).addPairwise(0, 1, [0.5, -0.2, 0.1, 0.3, 0.8, -0.6]).addPairwise(1, 2, [1, -1, 0.4, 0.2, -0.3, 0.9]);
  out.push({ name: 'hard zero in a unary table', model: b.build() });
  return out;
}

// ---- tests -------------------------------------------------------------------------------------

test('M Mᵀ reproduces W + D entry by entry for every factor kind and shift', () => {
  for (const { name, model } of testModels()) {
    for (const factor of KINDS) {
      for (const shift of ['martens', 'min-lambda-max'] as const) {
        const r = buildRelaxation(engine, model, { factor, shift });
        assert.equal(r.factorKind, factor);
        assert.equal(r.factor.n, r.form.nBits);
        assert.equal(r.factor.m, r.form.nBits, 'W + D ≻ 0: the factor is square');
        const err = maxAbsDiffMMT(r);
        assert.ok(err <= 1e-10, `${name}, ${factor}, ${shift}: max |M Mᵀ − (W + D)| = ${err}`);
        assert.ok(r.lambdaMinWD > 0, `${name}: λ_min(W + D) = ${r.lambdaMinWD}`);
        if (factor === 'sparse-cholesky') assert.equal(r.fill, (r.factor as { values: Float64Array }).values.length);
        else assert.equal(r.fill, null);
      }
    }
  }
});

test('the dense Cholesky factor is lower triangular; the sparse one is a row permutation of one', () => {
  const model = randomModel(mulberry32(4), 9, { density: 0.4 });
  const dense = buildRelaxation(engine, model, { factor: 'dense-cholesky' });
  const n = dense.form.nBits;
  const L = (dense.factor as { values: Float64Array }).values;
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) assert.equal(L[i * n + j], 0);
  const sparse = buildRelaxation(engine, model, { factor: 'sparse-cholesky' });
  const f = sparse.factor as Extract<FactorData, { kind: 'sparse' }>;
  const pos = new Int32Array(n);
  sparse.ordering!.forEach((bit, k) => (pos[bit] = k));
  for (let i = 0; i < n; i++) {
    for (let k = f.rowPtr[i]; k < f.rowPtr[i + 1]; k++) assert.ok(f.col[k] <= pos[i], 'row i of M = row pos[i] of a lower-triangular L');
    assert.equal(f.col[f.rowPtr[i + 1] - 1], pos[i], 'the diagonal entry ends the row');
    assert.ok(f.values[f.rowPtr[i + 1] - 1] > 0);
  }
});

test("'auto' picks the sparse factor for sparse W and the dense Cholesky otherwise", () => {
  assert.equal(buildRelaxation(engine, isingLattice({ shape: [10, 10], J: 0.3 })).factorKind, 'sparse-cholesky');
  assert.equal(buildRelaxation(engine, randomModel(mulberry32(8), 8, { density: 0.8 })).factorKind, 'dense-cholesky');
});

test('100×100 grid: the sparse factor is far sparser than dense and still reproduces W + D', () => {
  const rand = mulberry32(77);
  const L = 100, n = L * L;
  const model = isingLattice({ shape: [L, L], J: () => rand() - 0.5 });
  const r = buildRelaxation(engine, model, { factor: 'sparse-cholesky' });
  const bound = 40 * n * Math.log(n);
  console.log(
    `100×100 grid: nnz(L) = ${r.fill} (${(r.fill! / n).toFixed(1)} per row; dense lower triangle ${(n * (n + 1)) / 2}; ` +
      `40·n·ln n = ${bound.toFixed(0)}), setup ${r.timings.total.toFixed(3)} s (spectrum ${r.timings.spectrum.toFixed(3)}, ` +
      `ordering ${r.timings.ordering.toFixed(3)}, numeric ${r.timings.factor.toFixed(3)}), λ_min(W) = ${r.lambdaMin.toFixed(6)} (${r.spectrumMethod})`,
  );
  assert.ok(r.fill! < bound, `fill ${r.fill} ≥ ${bound}`);
  assert.ok(r.fill! < (n * (n + 1)) / 2 / 50);
  // M Mᵀ x = (W + D) x for random x (every entry contributes), and the entries on W + D's pattern.
  const f = r.factor;
  const x = Float64Array.from({ length: n }, () => rand() - 0.5);
  const lhs = mulM(f, mulMT(f, x));
  const form = r.form;
  let err = 0;
  for (let i = 0; i < n; i++) {
    let s = r.d[i] * x[i];
    for (let k = form.rowPtr[i]; k < form.rowPtr[i + 1]; k++) s += form.val[k] * x[form.col[k]];
    err = Math.max(err, Math.abs(lhs[i] - s));
  }
  assert.ok(err <= 1e-10, `max |M Mᵀ x − (W + D) x| = ${err}`);
  const sf = f as Extract<FactorData, { kind: 'sparse' }>;
  const rowOf = (i: number) => new Map(Array.from({ length: sf.rowPtr[i + 1] - sf.rowPtr[i] }, (_, t) => [sf.col[sf.rowPtr[i] + t], sf.values[sf.rowPtr[i] + t]]));
  for (let t = 0; t < 300; t++) {
    const i = Math.floor(rand() * n);
    const ri = rowOf(i);
    const others = [i, ...Array.from(form.col.subarray(form.rowPtr[i], form.rowPtr[i + 1])), Math.floor(rand() * n)];
    for (const j of others) {
      let s = 0;
      for (const [c, v] of rowOf(j)) s += v * (ri.get(c) ?? 0);
      let want = i === j ? r.d[i] : 0;
      for (let k = form.rowPtr[i]; k < form.rowPtr[i + 1]; k++) if (form.col[k] === j) want = form.val[k];
      assert.ok(Math.abs(s - want) <= 1e-10, `(M Mᵀ)[${i}][${j}] = ${s}, W + D has ${want}`);
    }
  }
  // Uniform ferromagnet: λ_min(W) is known in closed form (W = 4J·adjacency, open grid).
  const J = 0.4;
  const ferro = buildRelaxation(engine, isingLattice({ shape: [L, L], J }), { factor: 'sparse-cholesky' });
  const exact = -16 * J * Math.cos(Math.PI / (L + 1));
  assert.ok(Math.abs(ferro.lambdaMin - exact) <= 1e-6 * Math.abs(exact), `λ_min ${ferro.lambdaMin} vs ${exact}`);
  assert.ok(Math.abs(ferro.lambdaMaxWD - (-2 * exact + ferro.lambdaMinWD)) <= 1e-5);
});

test('Lanczos extremes agree with the dense eigensolver', () => {
  const rand = mulberry32(12);
  for (const model of [isingLattice({ shape: [15, 15], J: () => rand() - 0.5 }), randomModel(rand, 40, { cards: [2, 3], density: 0.1 })]) {
    const r = buildRelaxation(engine, model);
    const form = r.form, n = form.nBits;
    const ev = symmetricEigen(engine, denseW(form), n, false).values;
    const lz = lanczosExtremes(engine, { n, rowPtr: form.rowPtr, col: form.col, val: form.val });
    assert.ok(Math.abs(lz.min - ev[0]) <= 1e-7 * Math.max(1, Math.abs(ev[0])), `λ_min ${lz.min} vs ${ev[0]}`);
    assert.ok(Math.abs(lz.max - ev[n - 1]) <= 1e-7 * Math.max(1, Math.abs(ev[n - 1])), `λ_max ${lz.max} vs ${ev[n - 1]}`);
    assert.ok(lz.min >= ev[0] - 1e-9 && lz.max <= ev[n - 1] + 1e-9, 'Ritz values lie inside the spectrum');
  }
});

test('the s-marginal of the (x, s) joint is p(s) exactly (x integrated analytically), and the log Z identity', () => {
  // ∫ exp(−½|x|² + sᵀMx + bᵀs) dx = (2π)^{m/2} exp(½|Mᵀs|² + bᵀs): enumerate the valid s.
  const rand = mulberry32(55);
  const models = [
    ...testModels(true).map((t) => t.model),
    randomModel(rand, 10, { density: 0.4, scale: 2 }),
    randomModel(rand, 6, { cards: [2, 3, 4], density: 0.5, scale: 1.5 }),
  ];
  for (const model of models) {
    const exact = bruteForce(model);
    for (const factor of [...KINDS, 'incidence'] as const) {
      const r = buildRelaxation(engine, model, { factor });
      const m = r.factor.m;
      const logs: number[] = [], truth: number[] = [];
      for (const x of configurations(model.card)) {
        const lp = model.logPotential(x);
        if (lp === -Infinity) continue;
        const s = encode(r.form, x);
        const g = mulMT(r.factor, s);
        let q = 0;
        for (let k = 0; k < m; k++) q += 0.5 * g[k] * g[k];
        for (let i = 0; i < r.form.nBits; i++) if (s[i]) q += r.form.a[i] - 0.5 * r.d[i];
        logs.push(q);
        truth.push(lp - exact.logZ);
      }
      const logNorm = logSumExp(logs);
      let err = 0;
      for (let t = 0; t < logs.length; t++) err = Math.max(err, Math.abs(logs[t] - logNorm - truth[t]));
      assert.ok(err <= 1e-9, `${factor}: max |log p_joint(s) − log p(s)| = ${err}`);
      // log Z = log ∫ e^ℓ + c, with log ∫ e^ℓ = (m/2) log 2π + log Σ_s (…).
      const logIntegral = 0.5 * m * Math.log(2 * Math.PI) + logNorm;
      assert.ok(Math.abs(logIntegral + r.logZRelation - exact.logZ) <= 1e-9, `${factor}: log Z identity ${logIntegral + r.logZRelation} vs ${exact.logZ}`);
    }
  }
});

test('factor kernels: u = Mx and g = Mᵀv equal plain loops for awkward shapes (n mod 4 ≠ 0, odd m, zero rows of v)', () => {
  const rand = mulberry32(909);
  for (const [n, m] of [[1, 1], [3, 5], [4, 4], [5, 7], [9, 3], [8, 13], [17, 6], [12, 1], [7, 20]]) {
    const dense: FactorData = { kind: 'dense', n, m, values: Float64Array.from({ length: n * m }, () => rand() - 0.5) };
    // The same matrix in CSR with a few explicit zeros dropped.
    const rowPtr = new Int32Array(n + 1), col: number[] = [], values: number[] = [];
    for (let i = 0; i < n; i++) {
      for (let k = 0; k < m; k++) if ((i + k) % 3 !== 0) (col.push(k), values.push(dense.values[i * m + k]));
      rowPtr[i + 1] = col.length;
    }
    const sparse: FactorData = { kind: 'sparse', n, m, rowPtr, col: Int32Array.from(col), values: Float64Array.from(values) };
    const x = Float64Array.from({ length: m }, () => rand() - 0.5);
    const v = Float64Array.from({ length: n }, (_, i) => (i >= 4 && i < 8 ? 0 : rand()));
    for (const f of [dense, sparse]) {
      const a = engine.arena();
      try {
        const k = engine.kernels;
        const hdr = a.alloc(k.factorBytes());
        const d0 = a.allocF64(f.values);
        const i0 = f.kind === 'sparse' ? a.allocI32(f.rowPtr) : 0, i1 = f.kind === 'sparse' ? a.allocI32(f.col) : 0;
        k.factorInit(hdr, f.kind === 'dense' ? 0 : 1, n, m, 0, d0, i0, i1, 0);
        const xp = a.allocF64(x), up = a.allocF64(n), vp = a.allocF64(v), gp = a.allocF64(m);
        k.factorMul(hdr, xp, up);
        k.factorMulT(hdr, vp, gp);
        const u = a.readF64(up, n), g = a.readF64(gp, m), u0 = mulM(f, x), g0 = mulMT(f, v);
        u.forEach((y, i) => assert.ok(Math.abs(y - u0[i]) <= 1e-13, `${f.kind} ${n}×${m}: u[${i}]`));
        g.forEach((y, i) => assert.ok(Math.abs(y - g0[i]) <= 1e-13, `${f.kind} ${n}×${m}: g[${i}]`));
      } finally {
        a.dispose();
      }
    }
  }
});

test('the incidence factor: M Mᵀ = W + D with d_i = Σ_j |w_ij| (or a user d above it), one column per coupling (+ one per δ_i > 0)', () => {
  for (const { name, model } of testModels()) {
    const r = buildRelaxation(engine, model, { factor: 'incidence' });
    assert.equal(r.factorKind, 'incidence');
    assert.equal(r.shiftKind, 'incidence');
    const n = r.form.nBits;
    const W = denseW(r.form);
    let couplings = 0;
    for (let i = 0; i < n; i++) {
      let abs = 0, deg = 0;
      for (let j = 0; j < n; j++) if (j !== i && W[i * n + j] !== 0) (abs += Math.abs(W[i * n + j])), deg++;
      if (abs > 0) assert.ok(Math.abs(r.d[i] - abs) <= 1e-12 * abs, `${name}: d[${i}] = ${r.d[i]} vs Σ|w| = ${abs}`);
      couplings += deg;
      const f = r.factor as Extract<FactorData, { kind: 'sparse' }>;
      assert.equal(f.rowPtr[i + 1] - f.rowPtr[i], deg, `${name}: row ${i} has one entry per coupling`);
    }
    assert.equal(r.factor.m, couplings / 2);
    const err = maxAbsDiffMMT(r);
    assert.ok(err <= 1e-12, `${name}: max |M Mᵀ − (W + D)| = ${err}`);
    assert.ok(r.lambdaMinWD > -1e-9, `${name}: W + D is positive semidefinite (λ_min = ${r.lambdaMinWD})`);
    assert.equal(r.fill, null);
    assert.ok(Math.abs(r.logZRelation - (r.form.logZOffset - 0.5 * r.factor.m * Math.log(2 * Math.PI))) < 1e-12);
  }
  // A user d ≥ Σ|w|: the excess becomes diagonal columns √δ_i e_i.
  const model = randomModel(mulberry32(77), 6, { density: 0.6 });
  const base = buildRelaxation(engine, model, { factor: 'incidence' });
  const d = base.d.map((v, i) => v + (i % 2 ? 0.5 : 0));
  const r = buildRelaxation(engine, model, { factor: 'incidence', shift: d });
  assert.equal(r.shiftKind, 'user');
  assert.equal(r.factor.m, base.factor.m + 3);
  assert.ok(maxAbsDiffMMT(r) <= 1e-12);
  // Refusals: d below Σ|w|, a named shift rule, a model without couplings.
  assert.throws(() => buildRelaxation(engine, model, { factor: 'incidence', shift: base.d.map((v) => v - 0.1) }), (e: unknown) => e instanceof ModelError && /d_i ≥ Σ_j \|w_ij\|/.test((e as Error).message));
  assert.throws(() => buildRelaxation(engine, model, { factor: 'incidence', shift: 'min-lambda-max' }), /sets its own d/);
  assert.throws(() => buildRelaxation(engine, boltzmann({ a: [0.1, 0.2], edges: [] }), { factor: 'incidence' }), /without couplings/);
});

test('logZRelation by quadrature of the engine’s relaxed density in 1 and 2 dimensions', () => {
  const cases: { name: string; model: Model; opts?: RelaxationOptions }[] = [
    { name: '1 binary variable', model: boltzmann({ a: [0.7], edges: [] }) },
    { name: '1 binary variable, user d = 2.5', model: boltzmann({ a: [-1.2], edges: [] }), opts: { shift: Float64Array.of(2.5) } },
    { name: '2 coupled binary variables', model: boltzmann({ a: [0.4, -0.3], edges: [[0, 1, -1.7]] }) },
    { name: '2 coupled, eigen factor', model: boltzmann({ a: [0.1, 0.5], edges: [[0, 1, 2.2]] }), opts: { factor: 'dense-eigen' } },
    // A binary variable with a zero unary entry: a one-hot block of 2 bits (m = 2), one impossible.
    { name: 'one-hot block of 2 bits with a −∞ state', model: new ModelBuilder([2]).addUnary(0, [0.3, -Infinity]).addConstant(0.25).build() },
    { name: 'one-hot block of 2 bits', model: new ModelBuilder([2]).addUnary(0, [0.3, -Infinity]).build(), opts: { shift: Float64Array.of(1, 3) } },
    // The incidence factor: m ≠ n (m = 1 column for 2 bits; m = 2 columns for 3 bits).
    { name: '2 coupled bits, incidence factor (m = 1 < n = 2)', model: boltzmann({ a: [0.4, -0.3], edges: [[0, 1, -1.7]] }), opts: { factor: 'incidence' } },
    { name: 'chain of 3 bits, incidence factor (m = 2 < n = 3)', model: boltzmann({ a: [0.2, -0.5, 0.3], edges: [[0, 1, 1.1], [1, 2, -0.8]] }), opts: { factor: 'incidence' } },
  ];
  for (const { name, model, opts } of cases) {
    const r = buildRelaxation(engine, model, opts);
    const bound = new BoundRelaxation(engine, r);
    try {
      const m = r.factor.m;
      assert.ok(m === 1 || m === 2, `${name}: m = ${m}`);
      const h = m === 1 ? 0.01 : 0.08, lim = 14;
      const pts: number[] = [];
      for (let t = -lim; t <= lim + 1e-12; t += h) pts.push(t);
      const vals: number[] = [];
      if (m === 1) for (const t of pts) vals.push(bound.logDensity([t]).logp + Math.log(h));
      else for (const t of pts) for (const s of pts) vals.push(bound.logDensity([t, s]).logp + 2 * Math.log(h));
      const logIntegral = logSumExp(vals); // the trapezoid rule (the integrand vanishes at the ends)
      const exact = bruteForce(model).logZ;
      assert.ok(Math.abs(logIntegral + r.logZRelation - exact) <= 1e-8, `${name}: ${logIntegral + r.logZRelation} vs exact ${exact}`);
    } finally {
      bound.dispose();
    }
  }
});

test('log p(x) and its gradient in WASM match TypeScript and central finite differences', () => {
  const rand = mulberry32(91);
  for (const { name, model } of testModels()) {
    for (const factor of KINDS) {
      const r = buildRelaxation(engine, model, { factor });
      const bound = new BoundRelaxation(engine, r);
      try {
        const m = r.factor.m;
        for (let t = 0; t < 3; t++) {
          const x = Float64Array.from({ length: m }, () => 3 * (rand() - 0.5));
          const got = bound.logDensity(x);
          const want = relaxedTS(r, x);
          assert.ok(Math.abs(got.logp - want.logp) <= 1e-11 * Math.max(1, Math.abs(want.logp)), `${name}, ${factor}: logp ${got.logp} vs ${want.logp}`);
          for (let k = 0; k < m; k++) assert.ok(Math.abs(got.grad[k] - want.grad[k]) <= 1e-11 * Math.max(1, Math.abs(want.grad[k])), `${name}: grad[${k}]`);
          for (let i = 0; i < r.form.nBits; i++) assert.ok(Math.abs(got.prob[i] - want.prob[i]) <= 1e-13, `${name}: π[${i}]`);
          const hstep = 1e-5;
          for (let k = 0; k < m; k++) {
            const xp = x.slice(), xm = x.slice();
            xp[k] += hstep;
            xm[k] -= hstep;
            const fd = (bound.logDensity(xp).logp - bound.logDensity(xm).logp) / (2 * hstep);
            const rel = Math.abs(fd - got.grad[k]) / Math.max(1, Math.abs(got.grad[k]));
            assert.ok(rel <= 1e-6, `${name}, ${factor}: ∂/∂x${k} analytic ${got.grad[k]} vs central difference ${fd}`);
          }
        }
      } finally {
        bound.dispose();
      }
    }
  }
});

/** Hessian of the engine's log p(x) by central differences of its gradient (symmetrised). */
function numericHessian(bound: BoundRelaxation, x: Float64Array): Float64Array {
  const m = x.length, h = 1e-5;
  const H = new Float64Array(m * m);
  for (let k = 0; k < m; k++) {
    const xp = x.slice(), xm = x.slice();
    xp[k] += h;
    xm[k] -= h;
    const gp = bound.logDensity(xp).grad, gm = bound.logDensity(xm).grad;
    for (let i = 0; i < m; i++) H[i * m + k] = (gp[i] - gm[i]) / (2 * h);
  }
  for (let i = 0; i < m; i++) for (let j = i + 1; j < m; j++) H[i * m + j] = H[j * m + i] = 0.5 * (H[i * m + j] + H[j * m + i]);
  return H;
}

test('the log-concavity flag agrees with the Hessian of log p(x)', () => {
  const rand = mulberry32(17);
  let concaveSeen = 0, notConcaveSeen = 0;
  const cases: { model: Model; opts: RelaxationOptions }[] = [
    { model: randomModel(rand, 7, { density: 0.5, scale: 0.4 }), opts: {} },
    { model: randomModel(rand, 7, { density: 0.5, scale: 0.6 }), opts: { shift: 'min-lambda-max' } },
    { model: randomModel(rand, 5, { cards: [3, 4], density: 0.5, scale: 0.3 }), opts: {} },
    { model: isingLattice({ shape: [3, 3], J: 0.15, h: 0.3 }), opts: { factor: 'dense-eigen' } },
    { model: randomModel(rand, 7, { density: 0.6, scale: 2 }), opts: {} },
    { model: isingLattice({ shape: [3, 3], J: 0.6 }), opts: { factor: 'sparse-cholesky' } },
  ];
  for (const { model, opts } of cases) {
    const r = buildRelaxation(engine, model, opts);
    const bound = new BoundRelaxation(engine, r);
    try {
      const m = r.factor.m;
      if (r.form.oneHot.every((x) => x === 0)) {
        assert.equal(r.logConcaveCriterion, 'iff');
        assert.ok(Math.abs(r.concavityIndex - r.lambdaMaxWD / 4) <= 1e-12 * r.lambdaMaxWD, 'all-free models: Zhang Prop. 1, λ_max(W + D) ≤ 4');
      }
      if (r.logConcave) {
        concaveSeen++;
        for (let t = 0; t < 8; t++) {
          const x = Float64Array.from({ length: m }, () => 4 * (rand() - 0.5));
          const top = symmetricEigen(engine, numericHessian(bound, x), m, false).values[m - 1];
          assert.ok(top <= 1e-6, `flag says log-concave but λ_max(∇² log p) = ${top}`);
        }
      } else if (r.logConcaveCriterion === 'iff') {
        notConcaveSeen++;
        // At u = Mx + b = 0 every free bit has σ(1 − σ) = ¼: the Hessian is −I + ¼ MᵀM, whose top
        // eigenvalue is λ_max(W + D)/4 − 1 > 0.
        const M = denseM(r.factor);
        const n = r.form.nBits;
        const rhs = Float64Array.from({ length: n }, (_, i) => -(r.form.a[i] - 0.5 * r.d[i]));
        const x = solveDense(M, rhs, n);
        const top = symmetricEigen(engine, numericHessian(bound, x), m, false).values[m - 1];
        assert.ok(Math.abs(top - (r.lambdaMaxWD / 4 - 1)) <= 1e-5 * Math.max(1, r.lambdaMaxWD), `Hessian top ${top} vs λ_max(W+D)/4 − 1 = ${r.lambdaMaxWD / 4 - 1}`);
        assert.ok(top > 0);
      }
    } finally {
      bound.dispose();
    }
  }
  assert.ok(concaveSeen >= 3 && notConcaveSeen >= 2, `cases: ${concaveSeen} log-concave, ${notConcaveSeen} not`);
});

function solveDense(M: Float64Array, b: Float64Array, n: number): Float64Array {
  const A = M.slice(), x = b.slice();
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let i = c + 1; i < n; i++) if (Math.abs(A[i * n + c]) > Math.abs(A[p * n + c])) p = i;
    for (let k = 0; k < n; k++) [A[c * n + k], A[p * n + k]] = [A[p * n + k], A[c * n + k]];
    [x[c], x[p]] = [x[p], x[c]];
    for (let i = c + 1; i < n; i++) {
      const f = A[i * n + c] / A[c * n + c];
      for (let k = c; k < n; k++) A[i * n + k] -= f * A[c * n + k];
      x[i] -= f * x[c];
    }
  }
  for (let i = n - 1; i >= 0; i--) {
    let s = x[i];
    for (let k = i + 1; k < n; k++) s -= A[i * n + k] * x[k];
    x[i] = s / A[i * n + i];
  }
  return x;
}

test("'min-lambda-max' never does worse than the constant shift and can do strictly better", () => {
  const rand = mulberry32(23);
  let improved = 0;
  for (let t = 0; t < 6; t++) {
    const model = randomModel(rand, 8, { cards: t < 4 ? [2] : [2, 3], density: 0.6, scale: 1 + t / 2 });
    const base = buildRelaxation(engine, model);
    const opt = buildRelaxation(engine, model, { shift: 'min-lambda-max' });
    assert.equal(opt.shiftKind, 'min-lambda-max');
    assert.ok(opt.lambdaMaxWD <= base.lambdaMaxWD + 1e-9, `${opt.lambdaMaxWD} > ${base.lambdaMaxWD}`);
    // Both keep λ_min(W + D) at the same margin.
    assert.ok(Math.abs(opt.lambdaMinWD - base.lambdaMinWD) <= 1e-9 * base.lambdaMaxWD, `${opt.lambdaMinWD} vs ${base.lambdaMinWD}`);
    if (opt.lambdaMaxWD < base.lambdaMaxWD * (1 - 1e-3)) improved++;
  }
  assert.ok(improved >= 3, `strict improvement on only ${improved} of 6 models`);
  // The constant shift is already optimal for a bipartite graph whose spectrum is symmetric… and for
  // a single coupled pair (spread √((d₁−d₂)² + 4w²) is smallest at d₁ = d₂).
  const pair = buildRelaxation(engine, boltzmann({ a: [0, 0], edges: [[0, 1, 3]] }), { shift: 'min-lambda-max' });
  assert.ok(Math.abs(pair.lambdaMaxWD - pair.lambdaMinWD - 6) <= 1e-6, `spread ${pair.lambdaMaxWD - pair.lambdaMinWD}`);
});

test('a user d: used as given, validated, and refused when W + D is not positive definite', () => {
  const model = boltzmann({ a: [0.2, -0.1, 0.3], edges: [[0, 1, 2], [1, 2, -1], [0, 2, 0.5]] });
  const n = 3;
  const good = Float64Array.of(3, 4, 2);
  for (const factor of KINDS) {
    const r = buildRelaxation(engine, model, { shift: good, factor });
    assert.equal(r.shiftKind, 'user');
    assert.deepEqual([...r.d], [...good]);
    assert.ok(maxAbsDiffMMT(r) <= 1e-12);
    assert.throws(() => buildRelaxation(engine, model, { shift: Float64Array.of(0.1, 0.1, 0.1), factor }), (e: unknown) => e instanceof ModelError && /not positive definite/.test(e.message));
  }
  assert.throws(() => buildRelaxation(engine, model, { shift: new Float64Array(n + 1).fill(5) }), /d has 4 entries, expected one per bit \(3\)/);
  assert.throws(() => buildRelaxation(engine, model, { shift: Float64Array.of(3, NaN, 3) }), /d\[1\] = NaN is not finite/);
  assert.throws(() => buildRelaxation(engine, model, { shift: Float64Array.of(3, Infinity, 3) }), ModelError);
  assert.throws(() => buildRelaxation(engine, model, { margin: -1 }), /margin/);
  assert.throws(() => buildRelaxation(engine, model, { factor: 'qr' as never }), /unknown relaxation factor/);
  assert.throws(() => buildRelaxation(engine, model, { shift: 'biggest' as never }), /unknown relaxation shift/);
});

test('zero pairwise potentials between variables are refused, naming the pair', () => {
  const b = new ModelBuilder([3, 2, 2]);
  b.addPairwise(0, 1, [0, 0, 0, -Infinity, 0.5, 0]);
  b.addPairwise(1, 2, [0.2, 0, 0, 0.3]);
  assert.throws(
    () => buildRelaxation(engine, b.build()),
    (e: unknown) => e instanceof ModelError && /variable 0 = 1, variable 1 = 1/.test(e.message) && /zero potential/.test(e.message),
  );
});

test('one-hot blocks: p(x) is unchanged by the free within-block entries of D (valid states only)', () => {
  // Any d on a one-hot block changes M but not the s-marginal: checked through the identity of
  // the previous test with two different user shifts.
  const model = randomModel(mulberry32(3), 4, { cards: [3], density: 1 });
  const r1 = buildRelaxation(engine, model);
  const d2 = r1.d.map((x, i) => x + 0.5 + (i % 3));
  const r2 = buildRelaxation(engine, model, { shift: d2 });
  const exact = bruteForce(model).logZ;
  for (const r of [r1, r2]) {
    const logs: number[] = [];
    for (const x of configurations(model.card)) {
      const s = encode(r.form, x);
      const g = mulMT(r.factor, s);
      let q = 0;
      for (const gk of g) q += 0.5 * gk * gk;
      for (let i = 0; i < r.form.nBits; i++) if (s[i]) q += r.form.a[i] - 0.5 * r.d[i];
      logs.push(q);
    }
    assert.ok(Math.abs(logSumExp(logs) + 0.5 * r.factor.m * Math.log(2 * Math.PI) + r.logZRelation - exact) <= 1e-9);
  }
});

test('biases and couplings past ±2^50 are refused by every relaxation (a unary of −1e300 cut the variable from its couplings: DHMC 84 standard errors off, no warning); 2^49 and −Infinity are taken', async () => {
  const { infer, relaxationFor } = await import('../bindings/infer.ts');
  const { ModelError } = await import('../bindings/core/errors.ts');
  const model = (u: number, w = 0.3) => new ModelBuilder([2, 2]).addUnary(0, [u, 0]).addPairwise(0, 1, [0, 0, 0, w]).build();
  for (const u of [-1e300, -1e16, 2 ** 51]) {
    assert.throws(() => buildRelaxation(engine, model(u)), (e: unknown) => e instanceof ModelError && /variable 0 = 1 has log-potential .*past ±2\^50/.test((e as Error).message), String(u));
    for (const method of ['dhmc', 'mala', 'blockgibbs'] as const) assert.throws(() => infer(engine, model(u), { method, samples: 10 }), /past ±2\^50/, `${method} ${u}`);
  }
  assert.throws(() => buildRelaxation(engine, model(0, 1e20)), /the pair \(variable 0 = 1, variable 1 = 1\) has log-potential 100000000000000000000:/);
  assert.doesNotThrow(() => buildRelaxation(engine, model(-(2 ** 49))));
  assert.doesNotThrow(() => buildRelaxation(engine, model(-Infinity)));
  const lattice = isingLattice({ shape: [4, 4], periodic: true, h: 1e20 });
  assert.throws(() => relaxationFor(engine, lattice, { factor: 'fft' }), /past ±2\^50/);
});
