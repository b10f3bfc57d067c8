// AIS runs and population-annealing particles in SIMD lanes (assembly/logz/ais_lanes.ts,
// assembly/samplers/treegibbs_lanes.ts): in f64 every run's log weight and every population's
// estimate is the one-chain kernels' (ais.ts, popanneal.ts) bit for bit — tree-block and single-site
// transitions, odd batch sizes (a padding lane), several sweeps, adaptive schedules (the pilot runs'
// energy traces), firstRun, couplings past exp's range (the kernels' softplus fallbacks) — and the
// estimates are within 4 SE of enumeration. logPair is Math.log bit for bit. The opt-in f32 lanes
// (other chains, same targets) are within 4 SE of enumeration too; logF32x4 within 2.5e-7 relative.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { runAIS, type AISOptions } from '../bindings/logz/logz.ts';
import { ModelBuilder, type Model } from '../bindings/core/model.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import { bruteForce, glassyGrid, mulberry32, randomModel } from './helpers.ts';

const engine = await loadEngine();

function assertSameRuns(model: Model, opts: AISOptions): void {
  const one = runAIS(engine, model, { ...opts, lanes: false });
  const lanes = runAIS(engine, model, { ...opts, lanes: true });
  assert.equal(one.diagnostics.lanes, false);
  assert.equal(lanes.diagnostics.lanes, true);
  assert.deepEqual(Array.from(lanes.schedule), Array.from(one.schedule));
  assert.equal(lanes.logWeights.length, one.logWeights.length);
  for (let i = 0; i < one.logWeights.length; i++) assert.ok(Object.is(lanes.logWeights[i], one.logWeights[i]), `${JSON.stringify(opts)}: weight ${i}: ${lanes.logWeights[i]} vs ${one.logWeights[i]}`);
  assert.ok(Object.is(lanes.logZ, one.logZ));
  assert.equal(lanes.diagnostics.resamplingsPerPopulation, one.diagnostics.resamplingsPerPopulation);
  assert.equal(lanes.diagnostics.siteUpdates, one.diagnostics.siteUpdates);
}

test('logPair is Math.log bit for bit, main path, near 1, subnormals and special values', () => {
  const k = engine.kernels;
  const arena = engine.arena();
  try {
    const rand = mulberry32(7);
    const xs: number[] = [0, -0, 1, -1, Infinity, -Infinity, NaN, 5e-324, 2.2250738585072014e-308, Number.MAX_VALUE, 0.9375, 1.0644531249999998, 1.064453125, 0.9999999999999999, 1.0000000000000002];
    const bits = new Float64Array(1);
    const u = new Uint32Array(bits.buffer);
    while (xs.length < 20000) {
      const r = rand();
      if (r < 0.4) {
        u[0] = (rand() * 2 ** 32) >>> 0;
        u[1] = (rand() * 2 ** 31) >>> 0; // positive, any exponent
        xs.push(bits[0]);
      } else if (r < 0.7) xs.push(1 + (rand() - 0.5) * 0.3); // near 1 and the table's edges
      else xs.push(Math.exp((rand() - 0.5) * 80));
    }
    const src = arena.allocF64(xs), a = arena.allocF64(xs.length), b = arena.allocF64(xs.length);
    k.vlogPair(src, a, xs.length);
    k.vlogScalar(src, b, xs.length);
    const va = arena.readF64(a, xs.length), vb = arena.readF64(b, xs.length);
    for (let i = 0; i < xs.length; i++) assert.ok(Object.is(va[i], vb[i]), `log(${xs[i]}): ${va[i]} vs ${vb[i]}`);
  } finally {
    arena.dispose();
  }
});

test('AIS runs in lanes are the one-chain runs bit for bit (tree and Gibbs, odd counts, sweeps, firstRun, adaptive schedule)', () => {
  const grid = glassyGrid(1, 3);
  for (const transition of ['tree', 'gibbs'] as const) {
    assertSameRuns(grid, { seed: 5, runs: 13, steps: 150, transition, schedule: 'linear' });
    assertSameRuns(grid, { seed: 6, runs: 6, steps: 80, transition, sweepsPerStep: 2, firstRun: 3 });
  }
  // More runs than one batch of lanes.
  assertSameRuns(randomModel(mulberry32(2), 9, { density: 0.5, scale: 1.5 }), { seed: 2, runs: 70, steps: 70, schedule: 'sigmoid' });
});

test('population annealing in lanes is the one-chain kernel bit for bit (tree and Gibbs, odd populations)', () => {
  const grid = glassyGrid(3, 4);
  for (const transition of ['tree', 'gibbs'] as const) {
    assertSameRuns(grid, { seed: 1, runs: 48, population: 16, steps: 200, transition });
    assertSameRuns(grid, { seed: 2, runs: 14, population: 7, steps: 130, transition, sweepsPerStep: 2, schedule: 'linear' });
  }
  // A population wider than the tree kernel's tile (64 chains on this model): two tiles, the second part-filled.
  assertSameRuns(grid, { seed: 4, runs: 150, population: 150, steps: 60, schedule: 'linear' });
});

test('couplings past exp range (the tree kernel\'s softplus fallbacks) give the same runs', () => {
  const b = new ModelBuilder([2, 2, 2, 2, 2]);
  b.addUnary(0, [0, 400]);
  b.addPairwise(0, 1, [0, 0, 0, -800]);
  b.addPairwise(1, 2, [0, 0, 0, 760]);
  b.addPairwise(2, 3, [0, 0, 0, 1.5]);
  b.addPairwise(3, 4, [0, 0, 0, -720]);
  b.addPairwise(4, 0, [0, 0, 0, 0.3]);
  const m = b.build();
  assertSameRuns(m, { seed: 3, runs: 9, steps: 300, schedule: 'linear' });
  assertSameRuns(m, { seed: 3, runs: 10, population: 5, steps: 300, schedule: 'linear' });
});

test('lanes AIS and population annealing are within 4 SE of enumeration; one-hot models keep the one-chain kernels', () => {
  const grid = glassyGrid(4, 2, 3, 5);
  const exact = bruteForce(grid).logZ;
  for (const [opts, what] of [
    [{ runs: 256, steps: 300 }, 'AIS, tree'],
    [{ runs: 256, steps: 300, transition: 'gibbs' }, 'AIS, Gibbs'],
    [{ runs: 512, population: 64, steps: 200 }, 'population annealing, tree'],
    [{ runs: 512, population: 64, steps: 200, transition: 'gibbs' }, 'population annealing, Gibbs'],
  ] as [AISOptions, string][]) {
    const r = runAIS(engine, grid, { seed: 9, ...opts });
    assert.equal(r.diagnostics.lanes, true);
    const err = r.logZ - exact;
    assert.ok(r.logZStdErr > 0 && r.logZStdErr < 0.1, `${what}: SE ${r.logZStdErr}`);
    assert.ok(Math.abs(err) <= 4 * r.logZStdErr, `${what}: error ${err} vs SE ${r.logZStdErr}`);
  }
  const potts = randomModel(mulberry32(5), 6, { cards: [2, 3], density: 0.5, scale: 1 });
  const r = runAIS(engine, potts, { seed: 1, runs: 64, steps: 100 });
  assert.equal(r.diagnostics.lanes, false);
  assert.ok(Math.abs(r.logZ - bruteForce(potts).logZ) <= 4 * r.logZStdErr);
  assert.equal(runAIS(engine, isingLattice({ shape: [4, 4], J: 0.4 }), { runs: 8, steps: 50 }).diagnostics.lanes, true);
});

test('f32 lanes: AIS and population annealing within 4 SE of enumeration; logF32x4 close to Math.log', () => {
  const k = engine.kernels;
  const arena = engine.arena();
  try {
    const rand = mulberry32(11);
    const xs = Array.from({ length: 4096 }, (_, i) => (i % 2 ? 1 + (rand() - 0.5) * 0.5 : Math.exp((rand() - 0.5) * 160)));
    const src = arena.alloc(4 * xs.length), dst = arena.alloc(4 * xs.length);
    new Float32Array(k.memory.buffer, src, xs.length).set(xs);
    k.vlogF32(src, dst, xs.length);
    const x32 = new Float32Array(k.memory.buffer, src, xs.length), y = new Float32Array(k.memory.buffer, dst, xs.length);
    for (let i = 0; i < xs.length; i++) {
      const want = Math.log(x32[i]);
      assert.ok(Math.abs(y[i] - want) <= 2.5e-7 * Math.max(1, Math.abs(want)), `logF32(${x32[i]}) = ${y[i]}, want ${want}`);
    }
  } finally {
    arena.dispose();
  }
  const grid = glassyGrid(4, 2, 3, 5);
  const exact = bruteForce(grid).logZ;
  for (const [opts, what] of [
    [{ runs: 256, steps: 300 }, 'AIS, tree'],
    [{ runs: 256, steps: 300, transition: 'gibbs' }, 'AIS, Gibbs'],
    [{ runs: 510, population: 85, steps: 200 }, 'population annealing, tree'],
    [{ runs: 512, population: 64, steps: 200, transition: 'gibbs' }, 'population annealing, Gibbs'],
  ] as [AISOptions, string][]) {
    const r = runAIS(engine, grid, { seed: 4, ...opts, precision: 'f32' });
    assert.equal(r.diagnostics.precision, 'f32');
    const err = r.logZ - exact;
    assert.ok(r.logZStdErr > 0 && r.logZStdErr < 0.1, `${what}: SE ${r.logZStdErr}`);
    assert.ok(Math.abs(err) <= 4 * r.logZStdErr, `${what} (f32): error ${err} vs SE ${r.logZStdErr}`);
  }
  assert.throws(() => runAIS(engine, grid, { runs: 4, steps: 10, precision: 'f32', lanes: false }), /f32/);
});
