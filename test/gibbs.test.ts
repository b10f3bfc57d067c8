// Gibbs against exact answers: every marginal within 4 Monte Carlo standard errors (batch means)
// at fixed seeds. The runs are deterministic; the tolerance comes from the sampler's own error,
// and each test also checks the error is small enough for the comparison to have power.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { runGibbs, GibbsSampler } from '../bindings/samplers/gibbs.ts';
import { ModelBuilder, type Model } from '../bindings/core/model.ts';
import { isingLattice, pottsLattice } from '../bindings/core/builders.ts';
import { ModelError } from '../bindings/core/errors.ts';
import { assertWithinMCSE as assertWithinMCSEOf, bruteForce, mulberry32, randomModel } from './helpers.ts';

const engine = await loadEngine();

function assertWithinMCSE(model: Model, seed: number, samples = 20000, maxSE = 0.01): void {
  assertWithinMCSEOf(model, runGibbs(engine, model, { seed, samples, chains: 4, burnin: 500 }), maxSE);
}

test('binary models (free-bit fast path): marginals within 4 MCSE of enumeration', () => {
  const rand = mulberry32(101);
  for (let t = 0; t < 6; t++) assertWithinMCSE(randomModel(rand, 6 + t, { density: 0.4, scale: 1 }), 10 + t);
});

test('multi-valued models (one-hot softmax blocks): marginals within 4 MCSE of enumeration', () => {
  const rand = mulberry32(202);
  for (let t = 0; t < 5; t++) assertWithinMCSE(randomModel(rand, 5 + t, { cards: [2, 3, 4], density: 0.5 }), 20 + t);
});

test('hard zeros: the hard-core model (no two neighbours both on) mixes and matches exact', () => {
  // Zeros make the binary variables one-hot blocks of size 2; random starts may be invalid.
  const b = new ModelBuilder(new Array(10).fill(2));
  const rand = mulberry32(7);
  for (let v = 0; v < 10; v++) b.addUnary(v, [0, rand() - 0.2]);
  for (let v = 0; v < 10; v++) b.addPairwise(v, (v + 1) % 10, [0, 0, 0, -Infinity]);
  b.addPairwise(0, 5, [0, 0, 0, -Infinity]);
  assertWithinMCSE(b.build(), 3);
});

test('a 4×4 Ising grid and a 3×3 Potts lattice', () => {
  const rand = mulberry32(5);
  assertWithinMCSE(isingLattice({ shape: [4, 4], J: () => rand() - 0.5, h: Array.from({ length: 16 }, () => 0.5 * rand() - 0.25) }), 4);
  assertWithinMCSE(pottsLattice({ shape: [3, 3], q: 3, J: 0.6, periodic: true }), 5);
});

test('the power check: a wrong model is detected', () => {
  // Sample one model and compare to another's exact marginals: must fail by far more than 4 MCSE.
  const rand = mulberry32(9);
  const m = randomModel(rand, 8, { density: 0.5 });
  const other = randomModel(rand, 8, { density: 0.5 });
  const r = runGibbs(engine, m, { seed: 1, samples: 20000 });
  const ex = bruteForce(other);
  let worst = 0;
  r.marginals.forEach((row, v) => (worst = Math.max(worst, Math.abs(row[1] - ex.marginals[v][1]) / r.marginalStdErr![v][1])));
  assert.ok(worst > 20, `only ${worst} standard errors apart`);
});

test('determinism: the same seed gives identical results; other seeds and chains differ', () => {
  const m = randomModel(mulberry32(1), 9, { cards: [2, 3] });
  const a = runGibbs(engine, m, { seed: 42, samples: 500 });
  const b = runGibbs(engine, m, { seed: 42, samples: 500 });
  const c = runGibbs(engine, m, { seed: 43, samples: 500 });
  assert.deepEqual(a.marginals, b.marginals);
  assert.notDeepEqual(a.marginals, c.marginals);
  const s = new GibbsSampler(engine, m);
  const x0 = s.init(42, 0), x1 = s.init(42, 1), y0 = s.init(42, 0);
  s.step(x0, 10);
  s.step(x1, 10);
  s.step(y0, 10);
  assert.deepEqual(s.configuration(x0), s.configuration(y0));
  assert.notDeepEqual(s.configuration(x0), s.configuration(x1));
  s.dispose();
});

test('sampler shape: init → state, step(state) → info; configurations stay valid', () => {
  const m = randomModel(mulberry32(2), 6, { cards: [2, 3, 4] });
  const s = new GibbsSampler(engine, m);
  const st = s.init(7, 0);
  const info = s.step(st, 50);
  assert.equal(info.sweeps, 50);
  assert.ok(info.changeRate > 0 && info.changeRate <= 1);
  const x = s.configuration(st);
  x.forEach((k, v) => assert.ok(k >= 0 && k < m.card[v]));
  s.dispose();
  assert.throws(() => s.step(st, 1), /use after dispose/);
});

test('a seed in the high word changes the stream (64-bit keys)', () => {
  const m = randomModel(mulberry32(3), 8);
  const a = runGibbs(engine, m, { seed: 5, samples: 200 });
  const b = runGibbs(engine, m, { seed: 5 + 2 ** 32, samples: 200 });
  assert.notDeepEqual(a.marginals, b.marginals);
});

test('cancellation returns what was computed, marked partial', () => {
  const m = randomModel(mulberry32(4), 8);
  const ctl = new AbortController();
  const r = runGibbs(engine, m, {
    samples: 1000, chains: 4, batches: 10,
    signal: ctl.signal,
    onProgress: (p) => p.done >= 1500 && ctl.abort(),
  });
  assert.equal(r.partial, true);
  r.marginals.forEach((row) => assert.ok(Math.abs(row[0] + row[1] - 1) < 1e-12));
});

test('bad options are refused with clear errors', () => {
  const m = randomModel(mulberry32(4), 3);
  assert.throws(() => runGibbs(engine, m, { chains: 0 }), (e: unknown) => e instanceof ModelError && /chains must be an integer in \[1, 1048576\]/.test((e as Error).message));
  assert.throws(() => runGibbs(engine, m, { samples: 2.5 }), /samples must be an integer/);
  assert.throws(() => runGibbs(engine, m, { seed: -1 }), /seed must be an integer/);
});

test('a chain started outside the support moves only over the states its own factors and evidence allow: an observed variable stays a point mass (f64 and f32 lanes, the factor-graph kernel, parallel tempering); Gibbs chains start inside it', async () => {
  const { infer } = await import('../bindings/infer.ts');
  const { applyEvidence } = await import('../bindings/io/formats.ts');
  // 20 binary variables tied equal by hard pair tables, x0 observed as 1: a random start breaks the
  // ties, sites with both states forbidden by their neighbours moved uniformly, the observed one
  // included (x0 reported as [0.001, 0.999]).
  const chain = (extra: boolean): Model => {
    const b = new ModelBuilder(Array(20).fill(2));
    for (let v = 0; v + 1 < 20; v++) b.addPairwise(v, v + 1, [0, -Infinity, -Infinity, 0]);
    if (extra) b.addFactor([3, 4, 5], [0, 0, 0, 0, 0, 0, 0, 0.5]); // arity 3: the factor-graph kernel
    return applyEvidence(b.build(), new Map([[0, 1]])).model;
  };
  const runs: [string, Model, Parameters<typeof infer>[2]][] = [
    ['gibbs f64', chain(false), { method: 'gibbs', precision: 'f64' }],
    ['gibbs f32', chain(false), { method: 'gibbs', precision: 'f32' }],
    ['gibbs factor graph', chain(true), { method: 'gibbs' }],
    ['pt', chain(false), { method: 'pt' }],
  ];
  for (const [name, model, opts] of runs) {
    for (const seed of [1, 2, 3]) {
      const r = infer(engine, model, { ...opts, seed, samples: 300, burnin: 5, chains: 4 });
      assert.deepEqual(Array.from(r.marginals[0]), [0, 1], `${name}, seed ${seed}: the observed variable`);
      // Gibbs chains start from a configuration of positive probability (here the only one, all
      // ones): every variable is 1 throughout (they spent sampling time outside the support, 0.003–0.009 off).
      if (name !== 'pt') r.marginals.slice(0, 20).forEach((p, v) => assert.deepEqual(Array.from(p), [0, 1], `${name}, seed ${seed}: variable ${v}`));
    }
  }
});

test('Gibbs chains started outside the support are each moved into it from their own start, so chains that cannot move show up in R̂ (a 3-state equality chain: one shared start gave marginals (1, 0, 0), standard error 0 and no warning)', async () => {
  const { infer } = await import('../bindings/infer.ts');
  // Ten 3-state variables tied equal by hard pair tables: single-site moves never leave a configuration
  // of positive probability, so each chain stays where it starts (exact marginals: 1/3 each).
  const equalities = (extra: boolean): Model => {
    const b = new ModelBuilder(Array(10).fill(3));
    const eq = Array.from({ length: 9 }, (_, e) => (Math.floor(e / 3) === e % 3 ? 0 : -Infinity));
    for (let v = 0; v + 1 < 10; v++) b.addFactor([v, v + 1], eq);
    if (extra) b.addFactor([3, 4, 5], new Array(27).fill(0)); // arity 3: the factor-graph kernel
    return b.build();
  };
  const runs: [string, Model, Parameters<typeof infer>[2]][] = [
    ['gibbs f64', equalities(false), { method: 'gibbs', precision: 'f64' }],
    ['gibbs f32', equalities(false), { method: 'gibbs', precision: 'f32' }],
    ['gibbs factor graph', equalities(true), { method: 'gibbs' }],
  ];
  for (const [name, model, opts] of runs) {
    for (const seed of [1, 2, 3]) {
      const r = infer(engine, model, { ...opts, seed, samples: 200, burnin: 5, chains: 8 });
      assert.ok(r.warnings!.some((w) => w.startsWith('R̂')), `${name}, seed ${seed}: ${JSON.stringify(Array.from(r.marginals[0]))} ± ${JSON.stringify(Array.from(r.marginalStdErr![0]))}, warnings ${JSON.stringify(r.warnings)}`);
    }
  }
  // Four chains land in one configuration for 1 seed in 27: then no chain moves, R̂ sees nothing,
  // and the run says so (seeds 14, 15, 16 and 55 of the first 60 gave (1, 0, 0) and the like silently).
  const model = equalities(false);
  for (let seed = 1; seed <= 60; seed++) {
    const r = infer(engine, model, { method: 'gibbs', seed, samples: 100, burnin: 5 });
    assert.ok(r.warnings!.length > 0, `seed ${seed}: ${JSON.stringify(Array.from(r.marginals[0]))} with no warning`);
    if (r.diagnostics.changeRate === 0) assert.ok(r.warnings!.some((w) => w.startsWith('no variable changed state in any chain')), `seed ${seed}`);
  }
  // The one-chain kernel's starts: inside the support, and not all the same.
  const sampler = new GibbsSampler(engine, model);
  const starts = new Set<string>();
  for (let c = 0; c < 8; c++) {
    const s = sampler.init(1, c);
    const x = sampler.configuration(s);
    assert.ok(model.logPotential(x) > -Infinity, `chain ${c}`);
    starts.add(Array.from(x).join(''));
  }
  sampler.dispose();
  assert.ok(starts.size > 1, 'eight chains, one start');
});

test("the samplers' step counts and chain ids are checked: past 2^31 − 1 sweeps (which wrapped in the engine: step(2^31) ran none and reported 2^31) and chain ids outside [0, 2^32) (3 and 3 + 2^32 were one chain)", async () => {
  const { BlockGibbsSampler } = await import('../bindings/samplers/blockgibbs.ts');
  const { TreeGibbsSampler } = await import('../bindings/samplers/treegibbs.ts');
  const { DHMCSampler } = await import('../bindings/samplers/dhmc.ts');
  const { buildRelaxation } = await import('../bindings/relax/relaxation.ts');
  const m = randomModel(mulberry32(8), 6, { density: 0.5 });
  const samplers: [string, { init(seed: number, chain: number): unknown; step(s: never, n: number): unknown; dispose(): void }][] = [
    ['gibbs', new GibbsSampler(engine, m)],
    ['treegibbs', new TreeGibbsSampler(engine, m)],
    ['blockgibbs', new BlockGibbsSampler(engine, m)],
    ['dhmc', new DHMCSampler(engine, buildRelaxation(engine, m))],
  ];
  for (const [name, s] of samplers) {
    const st = s.init(1, 0) as never;
    for (const n of [2 ** 31, 2 ** 32 + 1, 1.5, NaN, -5]) assert.throws(() => s.step(st, n), ModelError, `${name}: step(${n})`);
    for (const c of [2 ** 32, 3 + 2 ** 32, -1, 1.5]) assert.throws(() => s.init(1, c), /chain must be an integer in \[0, 2\^32\)/, `${name}: chain ${c}`);
    s.init(1, 2 ** 32 - 1);
    s.dispose();
  }
});

test("samplers refuse chain states, accumulators and lane batches they did not issue (another sampler's state stepped here overwrote that sampler's chains)", async () => {
  const { BlockGibbsSampler } = await import('../bindings/samplers/blockgibbs.ts');
  const { TreeGibbsSampler } = await import('../bindings/samplers/treegibbs.ts');
  const { FactorGibbsSampler } = await import('../bindings/samplers/factor-gibbs.ts');
  const { ClusterSampler } = await import('../bindings/samplers/cluster.ts');
  const { GibbsLanes } = await import('../bindings/samplers/gibbs-lanes.ts');
  const m = randomModel(mulberry32(9), 6, { density: 0.5 });
  const ferro = isingLattice({ shape: [3, 3] });
  const make: [string, () => { init(seed: number, chain: number): object; step(s: never, n: number, acc?: number): unknown; accumulator(): number; configuration(s: never): Int32Array; dispose(): void }][] = [
    ['gibbs', () => new GibbsSampler(engine, m)],
    ['treegibbs', () => new TreeGibbsSampler(engine, m)],
    ['factor-graph gibbs', () => new FactorGibbsSampler(engine, m)],
    ['blockgibbs', () => new BlockGibbsSampler(engine, m)],
    ['sw', () => new ClusterSampler(engine, ferro, 'sw')],
  ];
  for (const [name, mk] of make) {
    const a = mk(), b = mk();
    const sa = a.init(1, 0) as never, sb = b.init(1, 0) as never;
    const before = Array.from(b.configuration(sb));
    assert.throws(() => b.step(sa, 5), /this chain state was not made by this sampler's init/, `${name}: another sampler's state`);
    assert.throws(() => b.step({ ...(sb as object) } as never, 5), /not made by this sampler's init/, `${name}: a copy`);
    assert.throws(() => b.configuration(sa), /not made by this sampler's init/, `${name}: configuration`);
    assert.throws(() => b.step(sb, 1, 8), /accumulator 8 was not made by this sampler's accumulator\(\)/, `${name}: a stray accumulator`);
    assert.throws(() => b.step(sb, 1, a.accumulator()), /was not made by this sampler's accumulator/, `${name}: another sampler's accumulator`);
    assert.deepEqual(Array.from(b.configuration(sb)), before, `${name}: untouched`);
    b.step(sb, 1, b.accumulator());
    a.dispose();
    b.dispose();
  }
  const lanes = new GibbsLanes(engine, m, 4, 1);
  const first = lanes.init(1, [0, 1]);
  lanes.step(first, 1);
  const second = lanes.init(1, [2, 3]);
  assert.throws(() => lanes.step(first, 1), /this batch is not this sampler's latest init/);
  assert.throws(() => lanes.step(second, 1, 8), /accumulator 8 was not made/);
  lanes.step(second, 1, lanes.accumulator(second));
  lanes.dispose();
});
