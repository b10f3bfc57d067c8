import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Model, ModelBuilder } from '../bindings/core/model.ts';
import { ising, denseIsing, isingLattice, latticeBonds, pottsLattice, boltzmann, rbm } from '../bindings/core/builders.ts';
import { toCanonical, encode, canonicalLogPotential } from '../bindings/core/canonical.ts';
import { ModelError } from '../bindings/core/errors.ts';
import { bruteForce, configurations, mulberry32, randomModel } from './helpers.ts';

function assertCanonicalMatches(m: Model): void {
  const c = toCanonical(m);
  for (const x of configurations(m.card)) {
    const want = m.logPotential(x), got = canonicalLogPotential(c, encode(c, x));
    if (want === -Infinity) assert.equal(got, -Infinity, `config ${x}`);
    else assert.ok(Math.abs(got - want) <= 1e-12 * Math.max(1, Math.abs(want)), `config ${x}: ${got} vs ${want}`);
  }
}

test('canonical form reproduces the log-potential of every configuration (random models, any cardinality, zeros)', () => {
  const rand = mulberry32(11);
  for (let t = 0; t < 40; t++) {
    const cards = [[2], [2, 3], [3, 4], [1, 2, 5]][t % 4];
    assertCanonicalMatches(randomModel(rand, 3 + (t % 5), { cards, zeros: t % 3 === 0 ? 0.2 : 0, scale: 2 }));
  }
});

test('canonical form: binary variables with finite tables are single bits; zeros force one-hot blocks', () => {
  const b = new ModelBuilder([2, 2, 3]);
  b.addPairwise(0, 1, [0.1, 0.2, 0.3, 0.4]);
  b.addPairwise(1, 2, [0, -Infinity, 1, 2, 3, 4]);
  const c = toCanonical(b.build());
  assert.deepEqual(Array.from(c.oneHot), [0, 1, 1]);
  assert.deepEqual(Array.from(c.blockStart), [0, 1, 3, 6]);
  // Symmetric CSR with no within-block entries.
  for (let p = 0; p < c.nBits; p++) {
    for (let k = c.rowPtr[p]; k < c.rowPtr[p + 1]; k++) {
      const q = c.col[k];
      assert.notEqual(p, q);
      const back = Array.from(c.col.subarray(c.rowPtr[q], c.rowPtr[q + 1])).indexOf(p);
      assert.ok(back >= 0, `W[${q}][${p}] missing`);
      assert.equal(c.val[c.rowPtr[q] + back], c.val[k]);
    }
  }
});

test('Ising ±1 converter: W = 4βJ, a = 2βh − 2βJ·1, and log Z carries the constant (enumeration)', () => {
  const rand = mulberry32(3);
  const n = 6, beta = 0.7;
  const h = Array.from({ length: n }, () => rand() - 0.5);
  const couplings: [number, number, number][] = [[0, 1, 0.5], [1, 2, -1.2], [2, 3, 0.3], [0, 5, 0.9], [3, 4, -0.4], [4, 5, 1.1]];
  const m = ising({ n, couplings, h, beta });
  // Model follows log p(σ) = β(hᵀσ + Σ J σσ) for every σ.
  for (const x of configurations(m.card)) {
    const sigma = Array.from(x, (k) => 2 * k - 1);
    let want = 0;
    for (let i = 0; i < n; i++) want += beta * h[i] * sigma[i];
    for (const [i, j, J] of couplings) want += beta * J * sigma[i] * sigma[j];
    assert.ok(Math.abs(m.logPotential(x) - want) < 1e-12);
  }
  const c = toCanonical(m);
  const rowSum = new Float64Array(n);
  for (const [i, j, J] of couplings) {
    rowSum[i] += J;
    rowSum[j] += J;
    const k = Array.from(c.col.subarray(c.rowPtr[i], c.rowPtr[i + 1])).indexOf(j);
    assert.ok(Math.abs(c.val[c.rowPtr[i] + k] - 4 * beta * J) < 1e-12);
  }
  for (let i = 0; i < n; i++) assert.ok(Math.abs(c.a[i] - (2 * beta * h[i] - 2 * beta * rowSum[i])) < 1e-12);
  const expectedOffset = beta * (-h.reduce((s, x) => s + x, 0) + couplings.reduce((s, [, , J]) => s + J, 0));
  assert.ok(Math.abs(c.logZOffset - expectedOffset) < 1e-12);
  // log Z of the σ model = log Z of the s model + offset, by enumerating both.
  let zs = 0;
  for (const x of configurations(m.card)) zs += Math.exp(canonicalLogPotential({ ...c, logZOffset: 0 }, encode(c, x)));
  assert.ok(Math.abs(Math.log(zs) + c.logZOffset - bruteForce(m).logZ) < 1e-12);
});

test('lattice bonds: counts in 1-D, 2-D and 3-D, open and periodic', () => {
  assert.equal(latticeBonds([7], false).length, 6);
  assert.equal(latticeBonds([7], true).length, 7);
  assert.equal(latticeBonds([4, 5], false).length, 4 * 4 + 3 * 5);
  assert.equal(latticeBonds([4, 5], true).length, 2 * 20);
  assert.equal(latticeBonds([3, 3, 3], true).length, 3 * 27);
  assert.equal(latticeBonds([2, 3, 4], false).length, 1 * 12 + 2 * 8 + 3 * 6);
  // Periodic side 1 has no bond (it would be a self-loop).
  assert.equal(latticeBonds([1, 4], true).length, 4);
  for (const [i, j] of latticeBonds([3, 4], true)) assert.notEqual(i, j);
});

test('periodic side 2 doubles the bond (two real bonds on a 2-cycle)', () => {
  const m = isingLattice({ shape: [2], periodic: true, J: 0.5 });
  assert.equal(m.edges.length, 1);
  assert.deepEqual(Array.from(m.edges[0].table), [1, -1, -1, 1]);
});

test('dense Ising and Boltzmann builders agree with their energy functions', () => {
  const J = [[0, 0.3, -0.2], [0.3, 0, 0.7], [-0.2, 0.7, 0]];
  const m = denseIsing({ J, h: [0.1, -0.2, 0.3], beta: 2 });
  for (const x of configurations(m.card)) {
    const s = Array.from(x, (k) => 2 * k - 1);
    let e = 2 * (0.1 * s[0] - 0.2 * s[1] + 0.3 * s[2]);
    for (let i = 0; i < 3; i++) for (let j = i + 1; j < 3; j++) e += 2 * J[i][j] * s[i] * s[j];
    assert.ok(Math.abs(m.logPotential(x) - e) < 1e-12);
  }
  // Boltzmann: ½ sᵀWs with a diagonal folded into a.
  const W = [[0.4, 1, 0], [1, 0, -2], [0, -2, 0]];
  const bm = boltzmann({ a: [0.5, 0, -1], W });
  for (const x of configurations(bm.card)) {
    let e = 0.5 * x[0] - x[2];
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) e += 0.5 * W[i][j] * x[i] * x[j];
    assert.ok(Math.abs(bm.logPotential(x) - e) < 1e-12);
  }
  assertCanonicalMatches(bm);
});

test('RBM and Potts builders', () => {
  const r = rbm({ visibleBias: [0.1, -0.3], hiddenBias: [0.2, 0.4, -0.1], weights: [1, 0, -1, 0.5, 0.25, 2] });
  assert.equal(r.n, 5);
  assert.equal(r.edges.length, 5);
  for (const x of configurations(r.card)) {
    const v = [x[0], x[1]], h = [x[2], x[3], x[4]];
    const Wm = [[1, 0, -1], [0.5, 0.25, 2]];
    let e = 0.1 * v[0] - 0.3 * v[1] + 0.2 * h[0] + 0.4 * h[1] - 0.1 * h[2];
    for (let i = 0; i < 2; i++) for (let k = 0; k < 3; k++) e += v[i] * Wm[i][k] * h[k];
    assert.ok(Math.abs(r.logPotential(x) - e) < 1e-12);
  }
  const p = pottsLattice({ shape: [2, 2], q: 3, J: 1.5, beta: 0.5 });
  assert.equal(p.edges.length, 4);
  assert.equal(p.logPotential([1, 1, 1, 1]), 4 * 0.75);
  // Sites 0 1 / 2 3: only the bond (0, 2) agrees.
  assert.equal(p.logPotential([0, 1, 0, 2]), 0.75);
  assertCanonicalMatches(p);
});

test('validation: clear errors for bad input', () => {
  const bad: [() => unknown, RegExp][] = [
    [() => new ModelBuilder([]), /empty model/],
    [() => new ModelBuilder([2, 0]), /variable 1: cardinality 0/],
    [() => new ModelBuilder([2, 1.5]), /not a positive integer/],
    [() => new ModelBuilder([1 << 17]), /past the limit/],
    [() => new ModelBuilder([2, 2]).addUnary(2, [0, 0]), /index 2 is out of range/],
    [() => new ModelBuilder([2, 2]).addUnary(0, [0, NaN]), /entry 1 is NaN/],
    [() => new ModelBuilder([2, 2]).addUnary(0, [0, Infinity]), /entry 1 is Infinity/],
    [() => new ModelBuilder([2, 2]).addUnary(0, [0]), /has 1 entries, expected 2/],
    [() => new ModelBuilder([2, 2]).addPairwise(1, 1, [0, 0, 0, 0]), /self-loop/],
    [() => new ModelBuilder([2, 3]).addPairwise(0, 1, [0, 0, 0, 0]), /has 4 entries, expected 6/],
    [() => new ModelBuilder([2]).addConstant(NaN), /constant factor NaN/],
    [() => ising({ n: 3, couplings: [[0, 1, NaN]] }), /coupling \(0, 1\) is NaN/],
    [() => ising({ n: 3, couplings: [[0, 3, 1]] }), /index 3 is out of range/],
    [() => ising({ n: 3, couplings: [], h: [1, 2] }), /field h has 2 entries for 3/],
    [() => denseIsing({ J: [[0, 1], [0.5, 0]] }), /not symmetric: J\[0\]\[1\] = 1 but J\[1\]\[0\] = 0.5/],
    [() => denseIsing({ J: [[1, 0], [0, 0]] }), /self-coupling/],
    [() => denseIsing({ J: [[0, 1, 2], [1, 0]] }), /not square/],
    [() => boltzmann({ a: [0, 0], edges: [[0, 0, 1]] }), /self-loop/],
    [() => boltzmann({ a: [0, 0] }), /exactly one of W/],
    [() => boltzmann({ a: [0, 0], W: [[0, Infinity], [Infinity, 0]] }), /W\[0\]\[1\] is Infinity/],
    [() => rbm({ visibleBias: [0], hiddenBias: [0, 0], weights: [1] }), /expected 1 × 2 = 2/],
    [() => isingLattice({ shape: [2, 2, 2, 2] }), /1 to 3 dimensions/],
    [() => isingLattice({ shape: [0, 3] }), /not a positive integer/],
    [() => pottsLattice({ shape: [3], q: 1 }), /q = 1/],
  ];
  for (const [fn, re] of bad) assert.throws(fn, (e: unknown) => e instanceof ModelError && re.test((e as Error).message), String(fn));
});

test('factors on the same pair add up whatever the order they are given in', () => {
  const b = new ModelBuilder([2, 3]);
  b.addPairwise(0, 1, [1, 2, 3, 4, 5, 6]);
  b.addPairwise(1, 0, [10, 40, 20, 50, 30, 60]); // (x1, x0) order: entry [k1 * 2 + k0]
  const m = b.build();
  assert.deepEqual(Array.from(m.edges[0].table), [11, 22, 33, 44, 55, 66]);
});

test('pairTables: pairs sorted by (i, j), a pair\'s factors summed in factor order (bit for bit), shared tables read once per factor; edges the same', () => {
  const rand = mulberry32(77);
  // Factors (scopes given unsorted across factors, with repeats spread out and a shared table).
  const scopes = [[1, 3], [0, 1], [1, 3], [2], [1, 3], [0, 1], [0, 3], [1, 3]];
  const card = Int32Array.from([2, 3, 2, 4]);
  const scopeStart = new Int32Array(scopes.length + 1), scopeVars: number[] = [], tableStart = new Int32Array(scopes.length), tables: number[] = [];
  scopes.forEach((s, f) => {
    scopeVars.push(...s);
    scopeStart[f + 1] = scopeVars.length;
    const size = s.reduce((p, v) => p * card[v], 1);
    if (f === 7) tableStart[f] = tableStart[2]; // shares factor 2's table
    else {
      tableStart[f] = tables.length;
      for (let k = 0; k < size; k++) tables.push(rand() * 10 - 5 + 0.1);
    }
  });
  const m = Model.fromData({ card, scopeStart, scopeVars: Int32Array.from(scopeVars), tableStart, tables: Float64Array.from(tables), logConst: 0, lattice: null });
  // Reference: each distinct pair's sum, accumulated factor after factor.
  const sums = new Map<string, number[]>();
  scopes.forEach((s, f) => {
    if (s.length !== 2) return;
    const size = card[s[0]] * card[s[1]], t = Array.from(m.tables.subarray(tableStart[f], tableStart[f] + size));
    const key = s.join(',');
    const acc = sums.get(key);
    if (acc) for (let k = 0; k < size; k++) acc[k] += t[k];
    else sums.set(key, t);
  });
  const keys = [...sums.keys()].sort((a, b) => a.split(',').map(Number)[0] - b.split(',').map(Number)[0] || a.split(',').map(Number)[1] - b.split(',').map(Number)[1]);
  const p = m.pairTables();
  assert.deepEqual(Array.from(p.i), keys.map((k) => Number(k.split(',')[0])));
  assert.deepEqual(Array.from(p.j), keys.map((k) => Number(k.split(',')[1])));
  keys.forEach((key, k) => {
    assert.deepEqual(Array.from(p.tables.subarray(p.start[k], p.start[k + 1])), sums.get(key), key);
    assert.deepEqual(Array.from(m.edges[k].table), sums.get(key));
  });
  // Four factors on (1, 3): the sum's order matters in floating point, and this one differs from another order.
  const t = [0, 2, 4, 7].map((f) => m.tables[tableStart[f]]);
  assert.notEqual(((t[0] + t[1]) + t[2]) + t[3], ((t[3] + t[2]) + t[1]) + t[0]);
});

test('the builder sums repeated small scopes on any variable: a hub with 300 pairs (given in both orders), its unary twice, and a ring', () => {
  const n = 301, b = new ModelBuilder(new Array(n).fill(2));
  const t = (a: number, c: number) => [a, c, -c, -a];
  for (let pass = 0; pass < 2; pass++) {
    for (let v = 1; v < n; v++) {
      if (pass === 0) b.addPairwise(0, v, t(v, 1));
      else b.addPairwise(v, 0, [v, -v, 1, -1]); // (x_v, x_0): the transpose of t(v, 1)
      b.addPairwise(v, v % (n - 1) + 1, t(pass + 1, v)); // a ring over 1 … 300
    }
    b.addUnary(0, [pass, -pass]);
  }
  const m = b.build();
  assert.equal(m.nFactors, 1 + 2 * (n - 1));
  const p = m.pairTables();
  for (let k = 0; k < p.i.length; k++) {
    const i = p.i[k], j = p.j[k], table = Array.from(p.tables.subarray(p.start[k], p.start[k + 1]));
    // t(j, 1) = [j, 1, −1, −j], plus [j, −j, 1, −1] given as (x_j, x_0), i.e. [j, 1, −j, −1].
    if (i === 0) assert.deepEqual(table, [2 * j, 2, -1 - j, -1 - j], `hub pair (0, ${j})`);
    else {
      // The ring's pair (v, v + 1) (or (1, 300)) was added as (v, w) with t(1, v) and t(2, v) — in (i, j) order, or transposed for (300, 1).
      const v = j === i + 1 ? i : j;
      assert.deepEqual(table, j === i + 1 ? [3, 2 * v, -2 * v, -3] : [3, -2 * v, 2 * v, -3], `ring pair (${i}, ${j})`);
    }
  }
  assert.deepEqual(Array.from(m.unary[0]), [1, -1]);
});

test('a model of probability zero — a variable whose unary factors and evidence allow no state, a factor zero everywhere, a zero constant, zeros of pair tables contradicting each other or the evidence — is refused by every method, saying why', async () => {
  const { loadEngine } = await import('../bindings/core/wasm-node.ts');
  const { infer, METHODS, METHOD_OPTION_KEYS } = await import('../bindings/infer.ts');
  const { EngineError } = await import('../bindings/core/errors.ts');
  const engine = await loadEngine();
  // Variable 1: its unary factor forbids state 1 and evidence (a factor of its own) forbids state 0.
  // Gibbs reported it as 1/2, 1/2 and Swendsen–Wang as a mixing run.
  const { applyEvidence } = await import('../bindings/io/formats.ts');
  const b = new ModelBuilder([2, 2, 2]);
  b.addPairwise(0, 1, [0, 0.5, 0.5, 0]).addPairwise(1, 2, [0.3, 0, 0, 0.3]);
  b.addUnary(1, [0, -Infinity]);
  const noState = applyEvidence(b.build(), new Map([[1, 1]])).model;
  assert.equal(noState.firstAllZeroFactor(), -1, 'no single factor is zero everywhere');
  // A pairwise table of zeros (Gibbs and parallel tempering ran on it), and a zero constant factor
  // (every method but --map and --samples answered, exact inference with log Z = −∞ and exit 0).
  const dead = new ModelBuilder([2, 2]).addPairwise(0, 1, [-Infinity, -Infinity, -Infinity, -Infinity]).addUnary(0, [0, 1]).build();
  const zeroConstant = new ModelBuilder([2, 2]).addPairwise(0, 1, [0, 1, 1, 0]).addConstant(-Infinity).build();
  // Zeros no single factor shows: a pair table forbidding the observed pair (Gibbs, tree Gibbs and
  // parallel tempering reported marginals, exit 0), and a triangle of "not equal" on binary variables.
  const observed = applyEvidence(new ModelBuilder([2, 2]).addPairwise(0, 1, [0, 0, -Infinity, 0]).build(), new Map([[0, 1], [1, 0]])).model;
  const ne = [-Infinity, 0, 0, -Infinity];
  const triangle = new ModelBuilder([2, 2, 2]).addPairwise(0, 1, ne).addPairwise(1, 2, ne).addPairwise(0, 2, ne).build();
  // (Exact inference finds Z = 0 by elimination and says so.)
  const contradiction = /no configuration has positive probability \(an exhaustive search found none|every configuration has zero potential/;
  for (const [name, model, why] of [['no state', noState, /variable 1: its unary factors \(or evidence\) give every state zero potential/], ['dead factor', dead, /factor 0 \(variables 0 1\) is zero everywhere/], ['zero constant', zeroConstant, /constant factor .* is zero/], ['observed pair forbidden', observed, contradiction], ['odd cycle of not-equal', triangle, contradiction]] as const) {
    for (const method of METHODS) {
      assert.throws(
        () => infer(engine, model, { method, ...(METHOD_OPTION_KEYS[method].includes('chains') ? { samples: 50, burnin: 10, chains: 2 } : {}) }),
        (e: unknown) => e instanceof EngineError && why.test((e as Error).message),
        `${name}: ${method}`,
      );
    }
  }
  // On workers too (their own dispatch), a factor of arity 3 with a zero constant.
  const { inferAsync } = await import('../bindings/parallel/parallel.ts');
  const higher = new ModelBuilder([2, 2, 2]).addFactor([0, 1, 2], [1, 2, 3, 4, 5, 6, 7, 8]).addConstant(-Infinity).build();
  await assert.rejects(inferAsync(engine, higher, { method: 'gibbs', workers: 2, samples: 50, burnin: 10, chains: 2 }), (e: unknown) => e instanceof EngineError && /constant factor .* is zero/.test((e as Error).message));
  await assert.rejects(inferAsync(engine, triangle, { method: 'gibbs', workers: 2, samples: 50, burnin: 10, chains: 2 }), (e: unknown) => e instanceof EngineError && contradiction.test((e as Error).message));
  // The run* functions and runParallel refuse as infer does (they reported marginals, BP and TRW a log Z).
  const { runGibbs } = await import('../bindings/samplers/gibbs.ts');
  const { runFactorGibbs } = await import('../bindings/samplers/factor-gibbs.ts');
  const { runTreeGibbs } = await import('../bindings/samplers/treegibbs.ts');
  const { runTempering } = await import('../bindings/samplers/tempering.ts');
  const { runCluster } = await import('../bindings/samplers/cluster.ts');
  const { runBP } = await import('../bindings/variational/bp.ts');
  const { runTRW } = await import('../bindings/variational/trw.ts');
  const { runParallel } = await import('../bindings/parallel/parallel.ts');
  const few = { samples: 50, burnin: 10, chains: 2 };
  const direct: [string, () => unknown][] = [
    ['runGibbs', () => runGibbs(engine, triangle, few)],
    ['runFactorGibbs', () => runFactorGibbs(engine, triangle, few)],
    ['runTreeGibbs', () => runTreeGibbs(engine, triangle, few)],
    ['runTempering', () => runTempering(engine, triangle, few)],
    ['runCluster', () => runCluster(engine, observed, 'sw', few)],
    ['runBP', () => runBP(engine, triangle)],
    ['runTRW', () => runTRW(engine, triangle)],
  ];
  for (const [name, run] of direct) assert.throws(run, (e: unknown) => e instanceof EngineError && contradiction.test((e as Error).message), name);
  await assert.rejects(runParallel(triangle, { method: 'gibbs', workers: 2, ...few }), (e: unknown) => e instanceof EngineError && contradiction.test((e as Error).message), 'runParallel');
  await assert.rejects(runParallel(zeroConstant, { method: 'gibbs', workers: 2, ...few }), (e: unknown) => e instanceof EngineError && /constant factor .* is zero/.test((e as Error).message), 'runParallel, Model.zeroReason on this thread');
  const { exactInference } = await import('../bindings/exact/exact.ts');
  const r = exactInference(engine, zeroConstant);
  assert.equal(r.logZ, -Infinity, 'exact inference: log Z = −∞, marginals that throw when read');
  assert.throws(() => r.marginals[0], /constant factor/);
});

test('a shared table on scopes of one permutation but other shapes: the same model as separate factors (a second shape reused the first one\'s permuted copy: p(x2) 0.282 against 0.128)', () => {
  const card = [2, 2, 3, 2, 3, 2], t = Array.from({ length: 12 }, (_, e) => Math.log(e + 1));
  const shared = new ModelBuilder(card), id = shared.shareTable(t);
  shared.addSharedFactor([5, 4, 3], id).addSharedFactor([2, 1, 0], id);
  const separate = new ModelBuilder(card).addFactor([5, 4, 3], t).addFactor([2, 1, 0], t);
  const a = shared.build(), b = separate.build();
  for (const x of configurations(Int32Array.from(card))) assert.ok(Math.abs(a.logPotential(x) - b.logPotential(x)) < 1e-12, `x = ${Array.from(x)}`);
  const p = bruteForce(a).marginals[2];
  assert.ok(Math.abs(p[0] - bruteForce(b).marginals[2][0]) < 1e-12 && Math.abs(p[0] - 0.128) < 0.001, `p(x2) ${Array.from(p)}`);
});

test('a model knows when none of its table entries is −∞ (from the build\'s range pass), and zeroReason still finds every zero', async () => {
  const { knownWithoutZeroEntries } = await import('../bindings/core/model-range.ts');
  const build = (unary: number[], pair: number[]): Model => {
    const b = new ModelBuilder([2, 3]);
    b.addUnary(0, unary);
    b.addPairwise(0, 1, pair);
    return b.build();
  };
  const positive = build([0, 1], [0, 1, 2, 3, 4, 5]);
  assert.equal(knownWithoutZeroEntries(positive), true);
  assert.equal(knownWithoutZeroEntries(positive.withLattice({ shape: [2], periodic: false })), true);
  assert.equal(knownWithoutZeroEntries(Model.fromData(positive.toData())), true);
  assert.equal(positive.zeroReason(), null);
  // A zero first in its table, and one after finite entries: both seen.
  for (const [unary, pair] of [[[-Infinity, 0], [0, 1, 2, 3, 4, 5]], [[0, -Infinity], [0, 1, 2, 3, 4, 5]], [[0, 1], [0, 1, 2, 3, 4, -Infinity]]]) {
    const m = build(unary, pair);
    assert.equal(knownWithoutZeroEntries(m), false, JSON.stringify([unary, pair]));
    assert.equal(knownWithoutZeroEntries(Model.fromData(m.toData())), false);
  }
  // Zeros that leave no state: still reported (with the unary factors of evidence added, which are not marked).
  assert.match(build([-Infinity, -Infinity], [0, 1, 2, 3, 4, 5]).zeroReason() ?? '', /is zero everywhere/);
  const observed = positive.withUnaryFactors([{ v: 1, logTable: [-Infinity, -Infinity, -Infinity] }]);
  assert.equal(knownWithoutZeroEntries(observed), false);
  assert.match(observed.zeroReason() ?? '', /is zero everywhere/);
});
