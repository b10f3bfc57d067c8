// The engine's linear algebra (assembly/linalg/ through bindings/linalg/) against the TypeScript
// routines it replaced (test/linalg-reference.ts) and against the defining identities: L Lᵀ = A,
// A V = V Λ with VᵀV = I, Lanczos extremes inside and converged to the dense spectrum, the
// minimum-degree ordering (a permutation, the same as the reference and so the same fill), and the
// sparse factor equal to the dense Cholesky factor of P (W + D) Pᵀ.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { toCanonical, type CanonicalForm } from '../bindings/core/canonical.ts';
import { ising, isingLattice, pottsLattice } from '../bindings/core/builders.ts';
import { denseCholesky, symmetricEigen } from '../bindings/linalg/dense.ts';
import { lanczosExtremes } from '../bindings/linalg/lanczos.ts';
import { SparseCholesky, DISSECTION_MIN_BITS } from '../bindings/linalg/sparse-cholesky.ts';
import { denseW } from '../bindings/relax/relaxation.ts';
import * as ref from './linalg-reference.ts';
import { mulberry32, randomModel } from './helpers.ts';

const engine = await loadEngine();

function randomSymmetric(rand: () => number, n: number): Float64Array {
  const A = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) A[i * n + j] = A[j * n + i] = 2 * rand() - 1;
  return A;
}

/** B Bᵀ + n·c I: symmetric positive definite. */
function randomSPD(rand: () => number, n: number, c = 0.1): Float64Array {
  const B = randomSymmetric(rand, n), A = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
    let s = i === j ? n * c : 0;
    for (let k = 0; k < n; k++) s += B[i * n + k] * B[j * n + k];
    A[i * n + j] = s;
  }
  return A;
}

function maxAbs(a: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]));
  return m;
}
function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

test('dense Cholesky: L lower triangular, L Lᵀ = A to 1e-10, equal to the TypeScript factor; the failing column of a non-definite matrix', () => {
  const rand = mulberry32(101);
  for (const n of [1, 2, 5, 37, 120]) {
    const A = randomSPD(rand, n);
    const r = denseCholesky(engine, A, n);
    assert.ok(r.ok);
    const L = r.L;
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) assert.equal(L[i * n + j], 0);
    const LLt = new Float64Array(n * n);
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
      let s = 0;
      for (let k = 0; k <= Math.min(i, j); k++) s += L[i * n + k] * L[j * n + k];
      LLt[i * n + j] = s;
    }
    assert.ok(maxDiff(LLt, A) <= 1e-10 * maxAbs(A), `n = ${n}: |L Lᵀ − A| = ${maxDiff(LLt, A)}`);
    const t = ref.denseCholesky(A, n);
    assert.ok(t.ok);
    assert.ok(maxDiff(L, t.L) <= 1e-10 * maxAbs(t.L), `n = ${n}: vs TypeScript ${maxDiff(L, t.L)}`);
  }
  // Indefinite: the first non-positive pivot, as in the reference.
  for (const n of [3, 30]) {
    const A = randomSPD(rand, n);
    A[(n - 2) * n + (n - 2)] = -1;
    const r = denseCholesky(engine, A, n), t = ref.denseCholesky(A, n);
    assert.ok(!r.ok && !t.ok);
    assert.equal(r.failedAt, t.failedAt);
    assert.equal(r.failedAt, n - 2);
  }
});

test('symmetric eigensolver: A V = V Λ and VᵀV = I to 1e-10, values ascending and equal to the TypeScript solver', () => {
  const rand = mulberry32(202);
  for (const n of [1, 2, 3, 17, 90]) {
    const A = randomSymmetric(rand, n);
    if (n === 17) for (let i = 0; i < n; i++) A[i * n + ((i + 5) % n)] = A[((i + 5) % n) * n + i] = 0; // some zeros
    const { values, vectors } = symmetricEigen(engine, A, n, true);
    const V = vectors!;
    const scale = Math.max(1, maxAbs(values));
    for (let k = 1; k < n; k++) assert.ok(values[k] >= values[k - 1]);
    for (let k = 0; k < n; k++) {
      for (let i = 0; i < n; i++) {
        let s = 0;
        for (let j = 0; j < n; j++) s += A[i * n + j] * V[j * n + k];
        assert.ok(Math.abs(s - values[k] * V[i * n + k]) <= 1e-10 * scale, `n = ${n}: residual of pair ${k}`);
      }
      for (let l = 0; l <= k; l++) {
        let s = 0;
        for (let i = 0; i < n; i++) s += V[i * n + k] * V[i * n + l];
        assert.ok(Math.abs(s - (k === l ? 1 : 0)) <= 1e-10, `n = ${n}: VᵀV[${k}, ${l}] = ${s}`);
      }
    }
    const t = ref.symmetricEigen(A, n, false).values;
    assert.ok(maxDiff(values, t) <= 1e-10 * scale, `n = ${n}: vs TypeScript ${maxDiff(values, t)}`);
    const only = symmetricEigen(engine, A, n, false);
    assert.equal(only.vectors, null);
    assert.ok(maxDiff(only.values, values) <= 1e-10 * scale);
  }
  // A diagonal matrix (no reduction work): the sorted diagonal.
  const D = new Float64Array(16);
  [3, -1, 2, 0].forEach((v, i) => (D[i * 4 + i] = v));
  assert.deepEqual([...symmetricEigen(engine, D, 4, true).values], [-1, 0, 2, 3]);
});

/** S (W + diag d) S densely (S of the relaxation: ½ on free bits, (I − 11ᵀ/K)/√2 on a block). */
function denseSWS(form: CanonicalForm, d: Float64Array): Float64Array {
  const n = form.nBits;
  const S = new Float64Array(n * n);
  for (let v = 0; v < form.n; v++) {
    const b = form.blockStart[v], e = form.blockStart[v + 1], K = e - b;
    if (!form.oneHot[v]) S[b * n + b] = 0.5;
    else for (let i = b; i < e; i++) for (let j = b; j < e; j++) S[i * n + j] = ((i === j ? 1 : 0) - 1 / K) * Math.SQRT1_2;
  }
  const A = denseW(form);
  for (let i = 0; i < n; i++) A[i * n + i] += d[i];
  const mul = (X: Float64Array, Y: Float64Array) => {
    const Z = new Float64Array(n * n);
    for (let i = 0; i < n; i++) for (let k = 0; k < n; k++) if (X[i * n + k] !== 0) for (let j = 0; j < n; j++) Z[i * n + j] += X[i * n + k] * Y[k * n + j];
    return Z;
  };
  return mul(mul(S, A), S);
}

test('Lanczos extremes: converged to the dense spectrum, inside it, and equal to the TypeScript Lanczos (W, W + D, S(W + D)S)', () => {
  const rand = mulberry32(303);
  const models = [isingLattice({ shape: [12, 12], J: () => rand() - 0.5 }), randomModel(rand, 60, { cards: [2, 3], density: 0.08 }), pottsLattice({ shape: [5, 5], q: 3, J: 0.4 })];
  for (const model of models) {
    const form = toCanonical(model), n = form.nBits;
    const d = Float64Array.from({ length: n }, () => 1 + rand());
    const cases: { diag: Float64Array | null; blocks: boolean }[] = [{ diag: null, blocks: false }, { diag: d, blocks: false }, { diag: d, blocks: true }];
    for (const c of cases) {
      const lz = lanczosExtremes(engine, { n, rowPtr: form.rowPtr, col: form.col, val: form.val, diag: c.diag, blocks: c.blocks ? form : null });
      let dense: Float64Array;
      if (c.blocks) dense = denseSWS(form, d);
      else {
        dense = denseW(form);
        if (c.diag) for (let i = 0; i < n; i++) dense[i * n + i] += c.diag[i];
      }
      const ev = symmetricEigen(engine, dense, n, false).values;
      const scale = Math.max(1, Math.abs(ev[0]), Math.abs(ev[n - 1]));
      assert.ok(Math.abs(lz.min - ev[0]) <= 1e-7 * scale, `λ_min ${lz.min} vs ${ev[0]}`);
      assert.ok(Math.abs(lz.max - ev[n - 1]) <= 1e-7 * scale, `λ_max ${lz.max} vs ${ev[n - 1]}`);
      assert.ok(lz.min >= ev[0] - 1e-9 * scale && lz.max <= ev[n - 1] + 1e-9 * scale, 'Ritz values lie inside the spectrum');
      assert.ok(Math.abs(lz.min - ev[0]) <= lz.minResidual + 1e-9 * scale && Math.abs(lz.max - ev[n - 1]) <= lz.maxResidual + 1e-9 * scale, 'within the residual bounds');
      if (!c.blocks) {
        const t = ref.lanczosExtremes((x, y) => {
          for (let i = 0; i < n; i++) {
            let s = c.diag ? c.diag[i] * x[i] : 0;
            for (let k = form.rowPtr[i]; k < form.rowPtr[i + 1]; k++) s += form.val[k] * x[form.col[k]];
            y[i] = s;
          }
        }, n);
        assert.equal(lz.iterations, t.iterations);
        assert.ok(Math.abs(lz.min - t.min) <= 1e-9 * scale && Math.abs(lz.max - t.max) <= 1e-9 * scale);
      }
    }
  }
});

test('minimum degree: a permutation, the same ordering and pattern of L as the TypeScript version (so the same fill), whatever the graph pool', () => {
  const rand = mulberry32(404);
  const forms = [
    toCanonical(isingLattice({ shape: [20, 20], J: 0.3 })),
    toCanonical(isingLattice({ shape: [6, 7, 5], J: 0.2, periodic: true })),
    toCanonical(randomModel(rand, 150, { cards: [2, 3, 4], density: 0.04 })),
    toCanonical(pottsLattice({ shape: [4, 4], q: 4, J: 0.4 })),
  ];
  for (const form of forms) {
    const n = form.nBits;
    const t = ref.minimumDegree(n, form.rowPtr, form.col);
    for (const pool of [undefined, 16]) {
      const s = new SparseCholesky(engine, n, form.rowPtr, form.col, pool);
      try {
        const seen = new Uint8Array(n);
        for (let k = 0; k < n; k++) {
          seen[s.perm[k]]++;
          assert.equal(s.pos[s.perm[k]], k);
        }
        assert.ok(seen.every((c) => c === 1), 'perm is a permutation');
        assert.deepEqual(s.perm, t.perm);
        assert.deepEqual(s.colPtr, t.colPtr);
        assert.deepEqual(s.rowIdx(), t.rowIdx);
        assert.equal(s.fill, t.colPtr[n] + n);
      } finally {
        s.dispose();
      }
    }
  }
});

test('sparse Cholesky: L equals the dense Cholesky factor of P (W + D) Pᵀ to 1e-10 and the TypeScript factor; the failing bit', () => {
  const rand = mulberry32(505);
  for (const form of [toCanonical(isingLattice({ shape: [9, 11], J: () => rand() - 0.5 })), toCanonical(randomModel(rand, 70, { cards: [2, 3], density: 0.1 }))]) {
    const n = form.nBits;
    const W = denseW(form);
    const ev = symmetricEigen(engine, W, n, false).values;
    const d = Float64Array.from({ length: n }, () => Math.max(0, -ev[0]) + 0.05 + rand());
    const s = new SparseCholesky(engine, n, form.rowPtr, form.col);
    try {
      const r = s.factor(form.val, d);
      assert.ok(r.ok);
      const { perm, pos } = s;
      // Dense L from M = Pᵀ L: row pos[bit] of L is row `bit` of M.
      const Ls = new Float64Array(n * n);
      for (let b = 0; b < n; b++) for (let q = r.rows.rowPtr[b]; q < r.rows.rowPtr[b + 1]; q++) Ls[pos[b] * n + r.rows.col[q]] = r.rows.values[q];
      const PAP = new Float64Array(n * n);
      for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) PAP[i * n + j] = W[perm[i] * n + perm[j]] + (i === j ? d[perm[i]] : 0);
      const dense = denseCholesky(engine, PAP, n);
      assert.ok(dense.ok);
      assert.ok(maxDiff(Ls, dense.L) <= 1e-10 * maxAbs(dense.L), `vs dense ${maxDiff(Ls, dense.L)}`);
      const t = ref.sparseCholesky(form, d, ref.minimumDegree(n, form.rowPtr, form.col));
      assert.ok(t.ok);
      assert.deepEqual(r.rows.rowPtr, t.factor.rowPtr);
      assert.deepEqual(r.rows.col, t.factor.col);
      assert.ok(maxDiff(r.rows.values, t.factor.values) <= 1e-12 * maxAbs(t.factor.values));
      // Not positive definite: the same failing bit as the reference.
      const bad = d.map((v, i) => (i === perm[n >> 1] ? -5 : v));
      const rb = s.factor(form.val, bad);
      const tb = ref.sparseCholesky(form, bad, ref.minimumDegree(n, form.rowPtr, form.col));
      assert.ok(!rb.ok && !tb.ok);
      assert.equal(rb.failedBit, tb.failedBit);
      // The workspace is clean after a failure: the good d factors again, identically.
      const again = s.factor(form.val, d);
      assert.ok(again.ok);
      assert.deepEqual(again.rows.values, r.rows.values);
    } finally {
      s.dispose();
    }
  }
});

test('nested dissection: a permutation whose factor is the dense Cholesky factor of P (W + D) Pᵀ (lattices, random, disconnected, Potts); less fill than minimum degree on a 128² grid; auto uses it from DISSECTION_MIN_BITS', () => {
  const rand = mulberry32(606);
  const forms = [
    toCanonical(isingLattice({ shape: [13, 17], J: () => rand() - 0.5 })),
    toCanonical(isingLattice({ shape: [5, 6, 4], J: 0.2, periodic: true })),
    toCanonical(randomModel(rand, 90, { cards: [2, 3], density: 0.05 })),
    toCanonical(randomModel(rand, 60, { cards: [2], density: 0.01 })), // several components
    toCanonical(pottsLattice({ shape: [5, 5], q: 3, J: 0.4 })),
    toCanonical(isingLattice({ shape: [3], J: 0.3 })), // a leaf part alone
  ];
  for (const form of forms) {
    const n = form.nBits;
    const W = denseW(form);
    const ev = symmetricEigen(engine, W, n, false).values;
    const d = Float64Array.from({ length: n }, () => Math.max(0, -ev[0]) + 0.05 + rand());
    const s = new SparseCholesky(engine, n, form.rowPtr, form.col, undefined, 'dissection');
    try {
      assert.equal(s.ordering, 'dissection');
      const seen = new Uint8Array(n);
      for (let k = 0; k < n; k++) {
        seen[s.perm[k]]++;
        assert.equal(s.pos[s.perm[k]], k);
      }
      assert.ok(seen.every((c) => c === 1), 'perm is a permutation');
      const r = s.factor(form.val, d);
      assert.ok(r.ok);
      const Ls = new Float64Array(n * n);
      for (let b = 0; b < n; b++) for (let q = r.rows.rowPtr[b]; q < r.rows.rowPtr[b + 1]; q++) Ls[s.pos[b] * n + r.rows.col[q]] = r.rows.values[q];
      const PAP = new Float64Array(n * n);
      for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) PAP[i * n + j] = W[s.perm[i] * n + s.perm[j]] + (i === j ? d[s.perm[i]] : 0);
      const dense = denseCholesky(engine, PAP, n);
      assert.ok(dense.ok);
      assert.ok(maxDiff(Ls, dense.L) <= 1e-10 * maxAbs(dense.L), `vs dense ${maxDiff(Ls, dense.L)}`);
    } finally {
      s.dispose();
    }
  }
  // A grid's dissection: fewer entries in L than minimum degree (the lattices' separators are
  // diagonals of about √(2n) bits).
  const grid = toCanonical(isingLattice({ shape: [128, 128], J: 0.3 }));
  const nd = new SparseCholesky(engine, grid.nBits, grid.rowPtr, grid.col, undefined, 'dissection');
  const md = new SparseCholesky(engine, grid.nBits, grid.rowPtr, grid.col, undefined, 'min-degree');
  try {
    assert.ok(nd.fill < md.fill, `fill ${nd.fill} against ${md.fill}`);
  } finally {
    nd.dispose();
    md.dispose();
  }
  const small = new SparseCholesky(engine, grid.nBits, grid.rowPtr, grid.col);
  const big = toCanonical(isingLattice({ shape: [256, 256], J: 0.3 }));
  const large = new SparseCholesky(engine, big.nBits, big.rowPtr, big.col);
  try {
    assert.equal(small.ordering, grid.nBits >= DISSECTION_MIN_BITS ? 'dissection' : 'min-degree');
    assert.equal(large.ordering, 'dissection');
  } finally {
    small.dispose();
    large.dispose();
  }
});

test('auto ordering below DISSECTION_MIN_BITS: minimum degree within its work limit (lattices to 128² and 16³, a sparse random graph, whatever the graph pool), dissection past it (a 24³ lattice: minimum degree took 2.1 s for more fill)', async () => {
  const engine = await loadEngine();
  const order = (form: CanonicalForm, pool?: number) => {
    const s = new SparseCholesky(engine, form.nBits, form.rowPtr, form.col, pool);
    try {
      return { ordering: s.ordering, fill: s.fill };
    } finally {
      s.dispose();
    }
  };
  const fillOf = (form: CanonicalForm, ordering: 'min-degree' | 'dissection') => {
    const s = new SparseCholesky(engine, form.nBits, form.rowPtr, form.col, undefined, ordering);
    const fill = s.fill;
    s.dispose();
    return fill;
  };
  // A sparse random graph of 8000 bits and 12000 edges: minimum degree's fill is a seventh of dissection's.
  const rand = mulberry32(7), n = 8000, couplings: [number, number, number][] = [], seen = new Set<number>();
  while (couplings.length < 12000) {
    const i = Math.floor(rand() * n), j = Math.floor(rand() * n);
    if (i === j || seen.has(Math.min(i, j) * n + Math.max(i, j))) continue;
    seen.add(Math.min(i, j) * n + Math.max(i, j));
    couplings.push([i, j, 0.1]);
  }
  const random = toCanonical(ising({ n, couplings }));
  const r = order(random);
  assert.equal(r.ordering, 'min-degree');
  assert.ok(7 * r.fill < 2 * fillOf(random, 'dissection'), `fill ${r.fill} against dissection's ${fillOf(random, 'dissection')}`);
  for (const shape of [[128, 128], [16, 16, 16]]) {
    const form = toCanonical(isingLattice({ shape, J: 0.3 }));
    assert.deepEqual(order(form), { ordering: 'min-degree', fill: fillOf(form, 'min-degree') }, shape.join('×'));
  }
  const cube = toCanonical(isingLattice({ shape: [24, 24, 24], J: 0.3 }));
  for (const pool of [undefined, 64]) assert.deepEqual(order(cube, pool), { ordering: 'dissection', fill: fillOf(cube, 'dissection') }, `pool ${pool}`);
  // The limit counts work across the pool's resumes: a small pool decides as the default one.
  const cube16 = toCanonical(isingLattice({ shape: [16, 16, 16], J: 0.3 }));
  assert.equal(order(cube16, 64).ordering, 'min-degree');
});
