// Separable factors (sums of one term per variable: zero couplings, constants, product supports)
// split into unary factors before exact inference plans (bindings/exact/separable.ts): the same
// distribution, a thinner interaction graph. Against brute force on the original model, and on
// grids whose zero couplings leave chains.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { Model, ModelBuilder, pairsKnownToCouple } from '../bindings/core/model.ts';
import { isingLattice, pottsLattice } from '../bindings/core/builders.ts';
import { EngineError } from '../bindings/core/errors.ts';
import { eliminationPlan, exactInference, exactMAP, exactSample, slicedBucketPlan } from '../bindings/exact/exact.ts';
import { exactInferenceParallel, exactMAPParallel, exactSampleParallel } from '../bindings/exact/exact-parallel.ts';
import { couplesByEntries, exactModel, factorCouples, SEPARABLE_ABS_TOL, unaryDecomposition } from '../bindings/exact/separable.ts';
import { pairCoupling } from '../bindings/exact/lattice-bound.ts';
import { bruteForce, configurations, mulberry32, renumbered } from './helpers.ts';

const engine = await loadEngine();

/** A table c + Σ_v u_v(x_v) over `cards` (the last variable fastest), u_v(a) = −∞ where `holes` says. */
function separableTable(rand: () => number, cards: number[], holes = 0): number[] {
  const u = cards.map((K) => Array.from({ length: K }, (_, a) => (a > 0 && rand() < holes ? -Infinity : 3 * (2 * rand() - 1))));
  const c = 2 * rand() - 1;
  return Array.from(configurations(cards), (x) => c + Array.from(x).reduce((s, a, p) => s + u[p][a], 0));
}

/** A model with one factor over `cards`' variables holding `table`. */
const single = (cards: number[], table: number[]): Model => new ModelBuilder(cards).addFactor(cards.map((_, v) => v), table).build();

test('unaryDecomposition: separable tables of arity 2–4 (product supports too) split, and reproduce every entry', () => {
  const rand = mulberry32(11);
  for (let t = 0; t < 300; t++) {
    const k = 2 + Math.floor(rand() * 3);
    const cards = Array.from({ length: k }, () => 1 + Math.floor(rand() * 4));
    const table = separableTable(rand, cards, t % 2 ? 0.3 : 0);
    if (table.every((x) => x === -Infinity)) continue;
    const m = single(cards, table);
    const d = unaryDecomposition(m, 0);
    assert.ok(d, `table ${t} (${cards.join('×')}) not split`);
    let e = 0;
    for (const x of configurations(cards)) {
      const pred: number = d.c + Array.from(x).reduce((s, a, p) => s + d.u[p][a], 0);
      if (table[e] === -Infinity) assert.equal(pred, -Infinity);
      else assert.ok(Math.abs(pred - table[e]) <= 1e-12 * (1 + Math.abs(table[e])), `entry ${e}: ${pred} against ${table[e]}`);
      e++;
    }
  }
});

test('the coupling test of the grid bound (pairCoupling: the 2 × 2 shortcut, and a table equal to the last one tested taking its decision) decides as factorCouples, shapes 3 × 4 and 4 × 3 of the entries of one table included', () => {
  const rand = mulberry32(5150);
  // A pool of tables: separable (u_a + v_b) or not, for 2 × 2, 3 × 3, 3 × 4 and 4 × 3; the 3 × 4 and
  // 4 × 3 ones share their 12 entries (separable as one shape, coupling as the other).
  const table = (K1: number, K2: number, couples: boolean): number[] => {
    const u = Array.from({ length: K1 }, () => rand() - 0.5), v = Array.from({ length: K2 }, () => rand() - 0.5);
    return Array.from({ length: K1 * K2 }, (_, e) => u[Math.floor(e / K2)] + v[e % K2] + (couples && e === K1 * K2 - 1 ? 0.3 : 0));
  };
  const twelve = table(3, 4, false);
  const pool: [number, number, number[]][] = [[2, 2, table(2, 2, true)], [2, 2, table(2, 2, false)], [3, 3, table(3, 3, true)], [3, 3, table(3, 3, false)], [3, 4, twelve], [4, 3, twelve], [3, 4, table(3, 4, true)]];
  const picks = Array.from({ length: 400 }, () => pool[Math.floor(rand() * pool.length) % pool.length]);
  // Factor k on variables 2k < 2k + 1 (a stored scope keeps that order, so its table as given).
  const b = new ModelBuilder(picks.flatMap(([K1, K2]) => [K1, K2]));
  picks.forEach(([, , t], k) => b.addPairwise(2 * k, 2 * k + 1, t));
  const model = b.build(), couples = pairCoupling(model);
  let coupling = 0;
  for (let f = 0; f < model.nFactors; f++) {
    assert.equal(couples(f), factorCouples(model, f), `factor ${f}: ${picks[f][0]} × ${picks[f][1]}`);
    coupling += Number(factorCouples(model, f));
  }
  assert.ok(factorCouples(model, picks.findIndex(([K1]) => K1 === 4)) !== factorCouples(model, picks.findIndex(([K1, , t]) => K1 === 3 && t === twelve)), 'the 12 entries couple as one shape and not the other');
  assert.ok(coupling > 100 && coupling < 300, `${coupling} coupling`);
});

test('the two-variable shortcuts (2 × 2, and K1 × K2) decide as the entry-by-entry test on tables at the tolerance and at the rounding limit', () => {
  const rand = mulberry32(2202);
  // Separable tables a + u0[x0] + u1[x1], one entry moved by δ around the tolerance (2^−37 is half of it), at
  // magnitudes from 1 to past the rounding limit (|entries| summed ≤ 2^13 for a two-variable table), and some with a zero.
  const deltas = [0, 2 ** -40, 2 ** -38, 2 ** -37 * (1 - 2 ** -20), 2 ** -37, 2 ** -37 * (1 + 2 ** -20), 2 ** -36, 1e-3];
  const scales = [1, 100, 1500, 2000, 2100, 2800, 4096, 1e5];
  const shapes: [number, number][] = [[2, 2], [2, 3], [3, 2], [3, 3], [4, 3], [1, 3]];
  for (const [K1, K2] of shapes) {
    const tables: number[][] = [];
    for (const delta of deltas) {
      for (const scale of scales) {
        for (let r = 0; r < 12; r++) {
          const a = scale * (2 * rand() - 1);
          const u0 = Array.from({ length: K1 }, (_, i) => (i === 0 ? 0 : scale * (2 * rand() - 1)));
          const u1 = Array.from({ length: K2 }, (_, i) => (i === 0 ? 0 : scale * (2 * rand() - 1)));
          const t = Array.from({ length: K1 * K2 }, (_, e) => a + u0[Math.floor(e / K2)] + u1[e % K2]);
          // The moved entry: the last (its prediction uses both rows), or any other.
          t[r % 2 ? t.length - 1 : Math.floor(rand() * t.length)] += rand() < 0.5 ? delta : -delta;
          if (r === 0) t[Math.floor(rand() * t.length)] = -Infinity;
          tables.push(t);
        }
      }
    }
    // Each table a factor of its own (one model; the builder keeps every pair factor apart).
    const m = new ModelBuilder(Array.from({ length: 2 * tables.length }, (_, v) => (v % 2 ? K2 : K1)));
    tables.forEach((t, i) => m.addPairwise(2 * i, 2 * i + 1, t));
    const model = m.build();
    assert.equal(model.nFactors, tables.length);
    let couple = 0;
    for (let f = 0; f < model.nFactors; f++) {
      assert.equal(factorCouples(model, f), couplesByEntries(model, f), `${K1}×${K2} table ${Array.from(model.table(f))}`);
      if (factorCouples(model, f)) couple++;
    }
    // Both decisions taken often (at the tolerance and at the rounding limit both ways); with one state
    // on a side every table is a sum of unary terms, so only the rounding limit makes one couple.
    const few = K1 > 1 && K2 > 1 ? tables.length / 4 : tables.length / 16;
    assert.ok(couple > few && couple < (3 * tables.length) / 4, `${K1}×${K2}: ${couple} of ${tables.length} couple`);
  }
});

test('unaryDecomposition: an interaction of any size, a support that is not a product, or zeros only are not split', () => {
  const rand = mulberry32(12);
  for (let t = 0; t < 200; t++) {
    const k = 2 + Math.floor(rand() * 3);
    const cards = Array.from({ length: k }, () => 2 + Math.floor(rand() * 3));
    const table = separableTable(rand, cards);
    // One entry moved by 1e-9 of its size (far past the tolerance), or by 2^-30 when t is odd.
    const e = Math.floor(rand() * table.length);
    table[e] += (t % 2 ? 2 ** -30 : 1e-9) * (1 + Math.abs(table[e]));
    assert.equal(unaryDecomposition(single(cards, table), 0), null, `table ${t}`);
  }
  // Equality constraints and a support of three corners: not products.
  assert.equal(unaryDecomposition(single([2, 2], [0, -Infinity, -Infinity, 0]), 0), null);
  assert.equal(unaryDecomposition(single([2, 2], [0, 0, 0, -Infinity]), 0), null);
  assert.equal(unaryDecomposition(single([2, 3], [0, -Infinity, 1, -Infinity, 0, 1]), 0), null);
  // A product support [0, 1] × [0, 2] of a 2 × 3 table, additive on it: split.
  assert.ok(unaryDecomposition(single([2, 3], [0.5, -Infinity, 1.5, 1, -Infinity, 2]), 0));
  // Zeros only: Z = 0, reported by zeroReason, not split.
  assert.equal(unaryDecomposition(new Model({ ...single([2, 2], [0, 0, 0, 0]).toData(), tables: Float64Array.of(-Infinity, -Infinity, -Infinity, -Infinity) }), 0), null);
});

test('unaryDecomposition: tables read from decimals split within the absolute tolerance; big entries and overflowing sums do not', () => {
  // p(a, b) = q(a) r(b) written as decimals: log(0.3 · 0.2) is not log 0.3 + log 0.2 to the last bit.
  const q = [0.3, 0.7], r = [0.2, 0.45, 0.35];
  const table = q.flatMap((a) => r.map((b) => Math.log(Number((a * b).toPrecision(15)))));
  assert.ok(unaryDecomposition(single([2, 3], table), 0));
  assert.ok(SEPARABLE_ABS_TOL <= 2 ** -33 && SEPARABLE_ABS_TOL >= 2 ** -45);
  // Off by more than the tolerance: kept.
  table[4] += 1e-10;
  assert.equal(unaryDecomposition(single([2, 3], table), 0), null);
  // A 0.02-nat coupling beside big-M penalties of 10^12 (a tolerance relative to the entries took it for none).
  const bigM = new ModelBuilder([2, 2]).addPairwise(0, 1, [-1e12, -1e12, 0, 0.02]).build();
  assert.equal(unaryDecomposition(bigM, 0), null);
  const big = exactInference(engine, bigM), bf = bruteForce(bigM);
  assert.ok(Math.abs(big.logZ - bf.logZ) <= 1e-12 && Math.abs(big.marginals![1][1] - bf.marginals[1][1]) <= 1e-12, `${big.logZ} against ${bf.logZ}`);
  // Separable with entries past what the check can certify in doubles (10^12): kept, not split.
  assert.equal(unaryDecomposition(single([2, 2], [0, 1e12, 1, 1e12 + 1]), 0), null);
  // A prediction that overflows to +∞ is no match.
  const over = new ModelBuilder([2, 2]).addPairwise(0, 1, [1e308, 1.7e308, 1.7e308, 0]).addUnary(0, [-1e308, -1e308]).build();
  assert.equal(unaryDecomposition(over, 0), null);
  const o = exactInference(engine, over, { method: 'bucket' }), obf = bruteForce(over);
  assert.ok(Math.abs(o.logZ - obf.logZ) <= 1e-12 * Math.abs(obf.logZ), `${o.logZ} against ${obf.logZ}`);
});

/** A random factor graph whose factors are separable with probability ½ (distinct scopes, so the builder merges none). */
function mixedModel(rand: () => number, n: number, cards: number[]): Model {
  const card = Array.from({ length: n }, () => cards[Math.floor(rand() * cards.length)]);
  const b = new ModelBuilder(card);
  const scopes = new Set<string>();
  for (let t = 0; t < 2 * n; t++) {
    const k = 2 + Math.floor(rand() * 2);
    const scope = [...new Set(Array.from({ length: k }, () => Math.floor(rand() * n)))].sort((x, y) => x - y);
    if (scope.length < 2 || scopes.has(scope.join())) continue;
    scopes.add(scope.join());
    const sc = scope.map((v) => card[v]);
    const table = rand() < 0.5 ? separableTable(rand, sc, 0.15) : Array.from({ length: sc.reduce((s, K) => s * K, 1) }, () => (rand() < 0.1 ? -Infinity : 2 * rand() - 1));
    b.addFactor(scope, table);
  }
  for (let v = 0; v < n; v++) b.addUnary(v, Array.from({ length: card[v] }, () => 2 * rand() - 1));
  return b.build();
}

test('exact inference on models with separable factors equals brute force on the original model (log Z, marginals, MAP, samples run)', () => {
  const rand = mulberry32(13);
  let split = 0;
  for (let t = 0; t < 40; t++) {
    const m = mixedModel(rand, 6 + Math.floor(rand() * 4), [2, 3]);
    const bf = bruteForce(m);
    if (!(bf.logZ > -Infinity)) continue;
    const reduced = exactModel(m);
    if (reduced !== m) split++;
    assert.ok(reduced.nFactors <= m.nFactors + m.n * m.maxArity);
    for (const method of ['auto', 'bucket', 'enumeration'] as const) {
      const r = exactInference(engine, m, { method });
      assert.ok(Math.abs(r.logZ - bf.logZ) <= 1e-10 * (1 + Math.abs(bf.logZ)), `model ${t} ${method}: ${r.logZ} against ${bf.logZ}`);
      r.marginals!.forEach((row, v) => row.forEach((p, k) => assert.ok(Math.abs(p - bf.marginals[v][k]) <= 1e-10, `model ${t} ${method}: p(x${v} = ${k})`)));
    }
    // MAP: the original model's largest log-potential.
    let best = -Infinity;
    for (const x of configurations(m.card)) best = Math.max(best, m.logPotential(x));
    const map = exactMAP(engine, m);
    assert.ok(Math.abs(m.logPotential(map.configuration) - best) <= 1e-10 * (1 + Math.abs(best)));
    for (const x of exactSample(engine, m, { count: 20, seed: t }).samples) assert.ok(m.logPotential(x) > -Infinity, 'a sample of zero probability');
  }
  assert.ok(split >= 20, `only ${split} of the models had a factor split`);
});

test('a model with no separable factor is planned as it is (exactModel returns it); a split model maps to itself', () => {
  const m = isingLattice({ shape: [5, 5], J: 0.4, h: 0.1 });
  assert.equal(exactModel(m), m);
  const z = isingLattice({ shape: [5, 5], J: (i, j) => (j === i + 1 ? 0 : 0.4), h: 0.1 });
  const s = exactModel(z);
  assert.notEqual(s, z);
  assert.equal(exactModel(s), s);
  assert.equal(exactModel(z), s, 'cached');
  assert.equal(s.lattice, z.lattice);
  // The 20 zero bonds become nothing (their unary terms are all zero), the 20 others stay.
  assert.equal(s.countPairs(), 20);
  assert.equal(slicedBucketPlan(z).model, s);
});

/** The grid's vertical bonds and fields alone, built by hand: what a grid whose horizontal couplings are zero is. */
function verticalOnly(H: number, W: number, J: number, h: number): Model {
  const b = new ModelBuilder(new Array(H * W).fill(2));
  for (let v = 0; v < H * W; v++) b.addUnary(v, [-h, h]);
  for (let r = 0; r + 1 < H; r++) for (let c = 0; c < W; c++) b.addPairwise(r * W + c, (r + 1) * W + c, [J, -J, -J, J]);
  return b.build();
}

test('a 100×120 grid whose horizontal couplings are all zero is 120 chains: solved, at the chains\' log Z (it was refused as a grid)', () => {
  const z = isingLattice({ shape: [100, 120], J: (i, j) => (j === i + 1 ? 0 : 0.3), h: 0.1 });
  const r = exactInference(engine, z);
  assert.equal(r.treewidth, 1);
  const ref = exactInference(engine, verticalOnly(100, 120, 0.3, 0.1));
  assert.ok(Math.abs(r.logZ - ref.logZ) <= 1e-9 * Math.abs(ref.logZ), `${r.logZ} against ${ref.logZ}`);
  assert.equal(eliminationPlan(z).treewidth, 1);
  // Past the lattice bound's 10^4 sites: one zero bond short of the whole grid, so not refused by it.
  const big = isingLattice({ shape: [200, 200], J: (i, j) => (j === i + 1 ? 0 : 0.3), h: 0.1 });
  assert.equal(exactInference(engine, big).treewidth, 1);
  // The same grid with its couplings: refused by the grid bound, as before.
  assert.throws(() => exactInference(engine, isingLattice({ shape: [200, 200], J: 0.3, h: 0.1 })), (e: unknown) => e instanceof EngineError && /treewidth at least 200/.test(e.message));
});

test('sliced plans of a split model: workers 1 and 2 the same bits, samples and MAP the same as on this thread', async () => {
  // A 10×10 grid, every third horizontal coupling zero, sliced by a small message limit.
  const z = isingLattice({ shape: [10, 10], J: (i, j) => (j === i + 1 && i % 3 === 0 ? 0 : 0.5 * Math.sin(i + 2 * j)), h: 0.2 });
  assert.notEqual(exactModel(z), z);
  const opts = { method: 'bucket' as const, maxMessageEntries: 2 ** 4, speedSlicing: false };
  const one = exactInference(engine, z, opts);
  assert.ok(one.slices! > 1, 'sliced');
  const w2 = await exactInferenceParallel(engine, z, { ...opts, workers: 2 });
  assert.equal(w2.logZ, one.logZ);
  assert.deepEqual(w2.marginals, one.marginals);
  const ref = exactInference(engine, z, { method: 'bucket' });
  assert.ok(Math.abs(one.logZ - ref.logZ) <= 1e-12 * Math.abs(ref.logZ));
  const s1 = exactSample(engine, z, { ...opts, count: 30, seed: 5 });
  const s2 = await exactSampleParallel(engine, z, { ...opts, count: 30, seed: 5, workers: 2 });
  assert.deepEqual(s2.samples, s1.samples);
  const m1 = exactMAP(engine, z, opts), m2 = await exactMAPParallel(engine, z, { ...opts, workers: 2 });
  assert.deepEqual(m2.configuration, m1.configuration);
  assert.ok(Math.abs(m1.logPotential - z.logPotential(m1.configuration)) <= 1e-10 * (1 + Math.abs(m1.logPotential)));
});

test('the lattice builders mark a model whose bonds all couple, and only then; the grid bound reads the tables of any other', () => {
  assert.ok(pairsKnownToCouple(isingLattice({ shape: [4, 5], J: 0.3 })));
  assert.ok(pairsKnownToCouple(isingLattice({ shape: [4, 5], J: (i, j) => 0.1 + i - j })));
  assert.ok(pairsKnownToCouple(pottsLattice({ shape: [4, 5], q: 3, J: 0.5 })));
  assert.ok(!pairsKnownToCouple(isingLattice({ shape: [4, 5], J: 0 })));
  assert.ok(!pairsKnownToCouple(isingLattice({ shape: [4, 5], J: (i, j) => (i === 3 && j === 4 ? 0 : 0.3) })));
  assert.ok(!pairsKnownToCouple(pottsLattice({ shape: [4, 5], q: 3, J: 0 })));
  // A periodic side of 2 puts both wraps of a bond in one table: +J and −J cancel.
  const wrap = isingLattice({ shape: [2, 5], periodic: true, J: (i, j, axis) => (axis === 0 ? (i < j ? 1 : -1) : 0.3) });
  assert.ok(!pairsKnownToCouple(wrap));
  // A 120×120 grid made by hand with the lattice layout: refused by the grid bound; with one bond's
  // coupling zero (a table that couples nothing) left to the orderings, which refuse it too.
  const hand = (zero: boolean): Model => {
    const b = new ModelBuilder(new Array(120 * 120).fill(2));
    for (let r = 0; r < 120; r++) for (let c = 0; c < 120; c++) {
      const v = r * 120 + c, w = (v % 7) / 10 + 0.05;
      if (c + 1 < 120) b.addPairwise(v, v + 1, zero && v === 0 ? [0.2, 0.2, -0.1, -0.1] : [w, -w, -w, w]);
      if (r + 1 < 120) b.addPairwise(v, v + 120, [w, -w, -w, w]);
    }
    return b.build().withLattice({ shape: [120, 120], periodic: false });
  };
  const full = hand(false), cut = hand(true);
  assert.ok(!pairsKnownToCouple(full));
  assert.throws(() => exactInference(engine, full), (e: unknown) => e instanceof EngineError && /treewidth at least 120 under any elimination order/.test(e.message));
  assert.throws(() => exactInference(engine, cut), (e: unknown) => e instanceof EngineError && /best order/.test(e.message) && !/under any elimination order/.test(e.message));
  // Renumbered, with an extra pair that couples nothing: the coupling pairs are still exactly the grid.
  const extra = new ModelBuilder(Array.from(full.card));
  for (let f = 0; f < full.nFactors; f++) extra.addFactor(Array.from(full.scope(f)), full.table(f));
  extra.addPairwise(0, 121, [0.3, -0.2, 0.3, -0.2]);
  assert.throws(() => exactInference(engine, renumbered(extra.build(), 3).model), (e: unknown) => e instanceof EngineError && /hold a 120×120 grid \(at a corner of the 120×120 grid their boundary outlines\)/.test(e.message));
});

test('a grid whose extra pair factors fix every other variable once split is solved, not refused by the grid bound', () => {
  // A 100×100 grid (by hand, with the lattice layout) plus, on the even columns but the last, a pair
  // factor [0, 0; −∞, −∞] on (v, v + 2): separable, its row of zeros fixes v at 0 in the split model.
  const b = new ModelBuilder(new Array(100 * 100).fill(2));
  for (let r = 0; r < 100; r++) for (let c = 0; c < 100; c++) {
    const v = r * 100 + c, w = 0.1 + (v % 5) / 10;
    if (c + 1 < 100) b.addPairwise(v, v + 1, [w, -w, -w, w]);
    if (r + 1 < 100) b.addPairwise(v, v + 100, [w, -w, -w, w]);
  }
  const grid = b.build();
  const extra = new ModelBuilder(Array.from(grid.card));
  for (let f = 0; f < grid.nFactors; f++) extra.addFactor(Array.from(grid.scope(f)), grid.table(f));
  for (let r = 0; r < 100; r++) for (let c = 0; c + 2 < 100; c += 2) extra.addFactor([r * 100 + c, r * 100 + c + 2], [0, 0, -Infinity, -Infinity]);
  const m = extra.build().withLattice({ shape: [100, 100], periodic: false });
  const r = exactInference(engine, m);
  assert.ok(r.treewidth <= 3, `treewidth ${r.treewidth}`);
  for (let v = 0; v < 98; v += 2) assert.equal(r.marginals![v][0], 1);
  assert.ok(exactMAP(engine, m).configuration.every((x, v) => v % 100 % 2 === 1 || v % 100 === 98 || x === 0));
});
