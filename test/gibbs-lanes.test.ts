// Gibbs chains in SIMD lanes (bindings/samplers/gibbs-lanes.ts): in f64 every chain of a batch is
// the single-chain kernel's chain for the same (seed, chain), bit for bit — states, generator
// states, accumulated probabilities and change rates, over several calls — for binary, one-hot and
// hard-zero models and odd batch sizes; f32 lanes and colored scans against enumeration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { GibbsSampler, gibbsChains, gibbsRun, gibbsSampler, runGibbs } from '../bindings/samplers/gibbs.ts';
import { GibbsLanes, coloredOrder } from '../bindings/samplers/gibbs-lanes.ts';
import { DiscreteReducer, emitChains, type DiscreteEvent } from '../bindings/samplers/chains.ts';
import { bitsToMarginals, bitsToStdErr, toCanonical } from '../bindings/core/canonical.ts';
import { ModelError } from '../bindings/core/errors.ts';
import { ModelBuilder, type Model } from '../bindings/core/model.ts';
import { isingLattice, pottsLattice } from '../bindings/core/builders.ts';
import { assertWithinMCSE, mulberry32, randomModel } from './helpers.ts';

const engine = await loadEngine();
const GIBBS_STREAM = 1;

function hardCore(n: number): Model {
  const b = new ModelBuilder(new Array(n).fill(2));
  const rand = mulberry32(3);
  for (let v = 0; v < n; v++) b.addUnary(v, [0, rand() - 0.2]);
  for (let v = 0; v < n; v++) b.addPairwise(v, (v + 1) % n, [0, 0, 0, -Infinity]);
  b.addPairwise(0, Math.floor(n / 2), [0, 0, 0, -Infinity]);
  return b.build();
}

function assertSameChains(model: Model, seed: number, chains: number[], calls: number[]): void {
  // The direct kernels (field sums); test/gibbs-table.test.ts checks the table kernels against them.
  const one = new GibbsSampler(engine, model, 'off');
  const lanes = new GibbsLanes(engine, model, chains.length, GIBBS_STREAM, 'f64', 'sequential', 'off');
  try {
    const nBits = one.form.nBits;
    const batch = lanes.init(seed, chains);
    const acc = lanes.accumulator(batch);
    const states = chains.map((c) => one.init(seed, c));
    const accs = chains.map(() => one.accumulator());
    const stream = (ptr: number) => new Uint8Array(engine.kernels.memory.buffer, ptr, engine.kernels.rngStateBytes()).slice();
    const bits = (ptr: number) => new Uint8Array(engine.kernels.memory.buffer, ptr + engine.kernels.rngStateBytes(), nBits).slice();
    const compare = (what: string) =>
      chains.forEach((c, i) => {
        const s = lanes.chainState(batch, i);
        assert.deepEqual(s.bits, bits(states[i].ptr), `${what}: chain ${c} state`);
        assert.deepEqual(s.stream, stream(states[i].ptr), `${what}: chain ${c} generator`);
      });
    compare('after init');
    for (const [k, sweeps] of calls.entries()) {
      const rates = lanes.step(batch, sweeps, k % 2 ? acc : 0);
      chains.forEach((c, i) => assert.equal(rates[i], one.step(states[i], sweeps, k % 2 ? accs[i] : 0).changeRate, `call ${k}: chain ${c} change rate`));
      compare(`call ${k}`);
    }
    const sums = lanes.readAndClear(batch, acc);
    chains.forEach((c, i) => assert.deepEqual(sums[i], one.readAndClear(accs[i]), `chain ${c} accumulated probabilities`));
    assert.ok(sums.some((x) => x.some((p) => p > 0)));
  } finally {
    one.dispose();
    lanes.dispose();
  }
}

test('binary models (free bits): each lane is the single-chain chain, bit for bit', () => {
  const rand = mulberry32(11);
  assertSameChains(randomModel(rand, 9, { density: 0.5, scale: 1.5 }), 4, [0, 1, 2, 3], [3, 7, 1, 5]);
  assertSameChains(isingLattice({ shape: [6, 7], beta: 0.45, h: 0.1, periodic: true }), 5, [0, 1, 2], [4, 9, 2]);
  assertSameChains(randomModel(rand, 12, { density: 0.3, scale: 40 }), 6, [2, 7, 9, 11, 13], [5, 5]); // large fields: exp's out-of-range path
  // Batches of 2 and 4 chains take the free-bit kernel (gibbs_lanes_free.ts): bit i−1 a neighbour
  // in most rows (lattices, open and periodic), in none (a graph without consecutive edges), hard
  // zeros (W = −∞), exp's out-of-range path, odd chain ids.
  assertSameChains(isingLattice({ shape: [5, 6], beta: 0.5, h: -0.2, periodic: true }), 7, [3, 8], [4, 1, 6]);
  assertSameChains(isingLattice({ shape: [7, 4], beta: 0.6, periodic: false }), 8, [1, 2, 5, 6], [2, 5, 3]);
  assertSameChains(randomModel(rand, 12, { density: 0.3, scale: 40 }), 9, [5], [5, 4]);
  assertSameChains(hardCore(13), 11, [0, 1], [6, 3, 1]);
  assertSameChains(hardCore(13), 12, [2, 4, 6, 9], [4, 4]);
  const stride = new ModelBuilder(new Array(10).fill(2));
  for (let v = 0; v < 10; v++) stride.addUnary(v, [0, 0.3 - 0.07 * v]);
  for (let v = 0; v + 3 < 10; v++) stride.addPairwise(v, v + 3, [0, 0, 0, 1.1 - 0.3 * v]);
  assertSameChains(stride.build(), 13, [0, 1, 2, 3], [3, 8]);
});

test('one-hot blocks (Potts, mixed cards) and hard zeros: each lane is the single-chain chain', () => {
  const rand = mulberry32(12);
  assertSameChains(pottsLattice({ shape: [4, 5], q: 3, beta: 0.7, periodic: true }), 7, [0, 1, 2, 3, 4], [3, 6, 2]);
  assertSameChains(randomModel(rand, 8, { cards: [2, 3, 5], density: 0.5 }), 8, [1], [4, 3]);
  assertSameChains(randomModel(rand, 8, { cards: [2, 4], density: 0.6, zeros: 0.3 }), 9, [0, 1, 2, 3, 4, 5, 6], [5, 4]);
  assertSameChains(hardCore(11), 10, [0, 1, 2], [6, 6, 1]);
  // Batches of exactly four chains take oneHot4Chains (two vectors in one pass).
  assertSameChains(pottsLattice({ shape: [5, 4], q: 4, beta: 0.8, periodic: false }), 14, [3, 0, 6, 2], [4, 5, 1]);
  assertSameChains(randomModel(rand, 9, { cards: [3, 2, 5], density: 0.5, zeros: 0.3 }), 15, [0, 1, 2, 3], [5, 2]);
  // Batches of one or two chains (a vector of two lanes) take oneHotPair.
  assertSameChains(pottsLattice({ shape: [4, 4], q: 3, beta: 0.9, periodic: true }), 16, [5, 2], [3, 4, 2]);
  assertSameChains(randomModel(rand, 9, { cards: [4, 2, 3], density: 0.5, zeros: 0.3 }), 17, [1, 0], [4, 3]);
});

// Colored scans and f32 lanes are different chains with the same target: every marginal within
// 4 MCSE of enumeration, like every sampler.
const variants = [
  { precision: 'f32', scan: 'sequential' },
  { precision: 'f64', scan: 'colored' },
  { precision: 'f32', scan: 'colored' },
] as const;

test('f32 lanes and colored scans: marginals within 4 MCSE of enumeration (binary, one-hot, zeros, odd cycles)', () => {
  const rand = mulberry32(303);
  const models = [
    randomModel(rand, 9, { density: 0.5, scale: 1 }), // dense: odd cycles, greedy coloring
    randomModel(rand, 7, { cards: [2, 3, 4], density: 0.5 }),
    isingLattice({ shape: [4, 4], beta: 0.4, h: 0.15, periodic: true }), // bipartite: checkerboard
    pottsLattice({ shape: [3, 3], q: 3, beta: 0.6 }),
    hardCore(9),
  ];
  for (const [i, model] of models.entries()) {
    for (const v of variants) {
      assertWithinMCSE(model, runGibbs(engine, model, { seed: 60 + i, samples: 20000, chains: 5, burnin: 500, ...v }));
    }
  }
});

test('coloredOrder: a proper coloring, two colors on bipartite lattices, every block once', () => {
  const rand = mulberry32(4);
  for (const model of [isingLattice({ shape: [6, 8], periodic: true }), isingLattice({ shape: [5, 5], periodic: true }), randomModel(rand, 12, { cards: [2, 3], density: 0.4 })]) {
    const form = toCanonical(model);
    const { order, colors, color } = coloredOrder(form);
    assert.deepEqual([...order].sort((a, b) => a - b), Array.from({ length: form.n }, (_, v) => v));
    for (let k = 1; k < order.length; k++) assert.ok(color[order[k]] > color[order[k - 1]] || (color[order[k]] === color[order[k - 1]] && order[k] > order[k - 1]));
    assert.equal(Math.max(...color) + 1, colors);
    for (const { i, j } of model.edges) assert.notEqual(color[i], color[j], `edge ${i}–${j}`);
    if (model.n === 48) assert.equal(colors, 2);
    if (model.n === 25) assert.ok(colors >= 3); // an odd periodic lattice is not bipartite
  }
});

test('runGibbs: the run equals its chains run one by one in the single-chain kernel, whatever the batch width; options are validated', () => {
  const model = pottsLattice({ shape: [3, 3], q: 3, beta: 0.5 });
  const opts = { seed: 3, chains: 5, samples: 60, burnin: 7, batches: 3 };
  const form = toCanonical(model);
  const r = runGibbs(engine, model, opts);
  // The chains one after another in the single-chain kernel (the driver runGibbs used before lanes).
  const one = new GibbsSampler(engine, model);
  const ref = new DiscreteReducer(form, false);
  emitChains(one, { ...opts, chains: [0, 1, 2, 3, 4], chunk: Math.floor(2e6 / model.n) }, (c, e) => ref.add(e, c));
  one.dispose();
  assert.deepEqual(r.marginals, bitsToMarginals(form, ref.stats.mean()));
  assert.deepEqual(r.marginalStdErr, bitsToStdErr(form, ref.stats.stdErr()));
  assert.equal(r.diagnostics.changeRate, ref.changeRate);
  // Batches of two chains (as runGibbs uses when holding a batch's sums would take too much memory).
  const run = gibbsRun(opts);
  const narrow = gibbsSampler(engine, model, run, 2);
  const lists: DiscreteEvent[][] = Array.from({ length: 5 }, () => []);
  assert.ok(gibbsChains(narrow, run, [0, 1, 2, 3, 4], (c, e) => lists[c].push(e)));
  narrow.dispose();
  const red = new DiscreteReducer(form, false);
  lists.forEach((list, c) => { for (const e of list) red.add(e, c); });
  assert.deepEqual(red.stats.mean(), ref.stats.mean());
  assert.equal(red.changeRate, ref.changeRate);
  // f64 batches hold at most four chains (runGibbs ran 4 + 1 above); f32 batches are not capped.
  const wide = gibbsSampler(engine, model, run, 8);
  assert.equal(wide.width, 4);
  wide.dispose();
  const wide32 = gibbsSampler(engine, model, { ...run, precision: 'f32' }, 8);
  assert.equal(wide32.width, 8);
  wide32.dispose();
  assert.equal(r.diagnostics.precision, 'f64');
  assert.equal(r.diagnostics.scan, 'sequential');
  assert.throws(() => runGibbs(engine, model, { precision: 'f16' as 'f32' }), (e: unknown) => e instanceof ModelError && /precision must be one of f64, f32/.test((e as Error).message));
  assert.throws(() => runGibbs(engine, model, { scan: 'random' as 'colored' }), /scan must be one of sequential, colored/);
});
