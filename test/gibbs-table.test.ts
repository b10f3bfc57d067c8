// Probability tables (bindings/samplers/gibbs-table.ts, assembly/samplers/gibbs_table.ts): chains
// that read each site's conditional from the table are the chains that sum the field, bit for bit —
// states, generator states, accumulated probabilities and change counts — in the single-chain
// kernel and in lanes of 2 and 4 chains, through runGibbs (1–5 chains) and on workers; and 'auto'
// falls back to the direct kernel where a table does not apply or does not pay.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { GibbsSampler, runGibbs, GIBBS_STREAM } from '../bindings/samplers/gibbs.ts';
import { GibbsLanes } from '../bindings/samplers/gibbs-lanes.ts';
import { runParallel } from '../bindings/parallel/parallel.ts';
import { infer } from '../bindings/infer.ts';
import { ModelError } from '../bindings/core/errors.ts';
import { ModelBuilder, type Model } from '../bindings/core/model.ts';
import { isingLattice, pottsLattice } from '../bindings/core/builders.ts';
import { mulberry32 } from './helpers.ts';

const engine = await loadEngine();

/** A periodic w × h lattice with random couplings and fields (`scale`: their spread). */
function randomTorus(w: number, h: number, seed: number, scale = 1): Model {
  const rnd = mulberry32(seed);
  const b = new ModelBuilder(new Array(w * h).fill(2));
  for (let v = 0; v < w * h; v++) b.addUnary(v, [0, scale * (rnd() - 0.5)]);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const v = y * w + x;
      b.addPairwise(v, y * w + ((x + 1) % w), [0, 0, 0, scale * (2 * rnd() - 1)]);
      b.addPairwise(v, ((y + 1) % h) * w + x, [0, 0, 0, scale * (2 * rnd() - 1)]);
    }
  }
  return b.build();
}

/**
 * A random sparse graph on n sites, degrees up to `maxDegree` (sites past 8 have no table), and an
 * isolated site n (degree 0); random couplings and fields.
 */
function randomSparse(n: number, maxDegree: number, seed: number): Model {
  const rnd = mulberry32(seed);
  const b = new ModelBuilder(new Array(n + 1).fill(2));
  for (let v = 0; v <= n; v++) b.addUnary(v, [0, rnd() - 0.5]);
  const degree = new Int32Array(n), seen = new Set<number>();
  for (let e = 0; e < 3 * n; e++) {
    const i = Math.floor(rnd() * n), j = Math.floor(rnd() * n);
    if (i === j || seen.has(Math.min(i, j) * n + Math.max(i, j)) || degree[i] >= maxDegree || degree[j] >= maxDegree) continue;
    seen.add(Math.min(i, j) * n + Math.max(i, j));
    degree[i]++, degree[j]++;
    b.addPairwise(i, j, [0, 0, 0, 2 * rnd() - 1]);
  }
  return b.build();
}

/** Couplings past exp's range (|u| > 745), zero and negative-zero fields and couplings. (Hard zeros make one-hot blocks.) */
function extremes(): Model {
  const b = new ModelBuilder(new Array(10).fill(2));
  const fields = [0, -0, 800, -800, 0.5, -0, 0, 760, -1e-320, 3];
  for (let v = 0; v < 10; v++) b.addUnary(v, [0, fields[v]]);
  for (let v = 0; v < 10; v++) b.addPairwise(v, (v + 1) % 10, [0, 0, 0, v % 3 === 0 ? 900 : v % 3 === 1 ? -1200 : 0.25]);
  b.addPairwise(2, 7, [0, 0, 0, -0]);
  return b.build();
}

const models: [string, Model][] = [
  ['random-coupling torus', randomTorus(6, 5, 1)],
  ['uniform torus (one shared table)', isingLattice({ shape: [6, 6], beta: 0.45, h: 0.1, periodic: true })],
  ['random sparse graph, degrees 0, 2–8', randomSparse(40, 8, 2)],
  ['random sparse graph, degrees 0, 2–9 (four sites without a table)', randomSparse(40, 12, 8)],
  ['couplings past exp range, ±0 fields', extremes()],
];

/** The table kernel's chains against the direct kernel's: single chain and lanes of `chains.length`. */
function assertSameChains(model: Model, seed: number, chains: number[], calls: number[]): void {
  const direct = new GibbsSampler(engine, model, 'off');
  const table = new GibbsSampler(engine, model, 'on');
  const lanes = new GibbsLanes(engine, model, chains.length, GIBBS_STREAM, 'f64', 'sequential', 'on');
  try {
    assert.equal(direct.table, null);
    assert.ok(table.table !== null && lanes.usesTable(), 'the table is built and used');
    const nBits = direct.form.nBits;
    const batch = lanes.init(seed, chains);
    const acc = lanes.accumulator(batch);
    const ref = chains.map((c) => direct.init(seed, c)), one = chains.map((c) => table.init(seed, c));
    const refAcc = chains.map(() => direct.accumulator()), oneAcc = chains.map(() => table.accumulator());
    const mem = (ptr: number, bytes: number) => new Uint8Array(engine.kernels.memory.buffer, ptr, bytes).slice();
    const rng = engine.kernels.rngStateBytes();
    for (const [k, sweeps] of calls.entries()) {
      const a = k % 2 ? acc : 0;
      const rates = lanes.step(batch, sweeps, a);
      chains.forEach((c, i) => {
        const r = direct.step(ref[i], sweeps, a ? refAcc[i] : 0).changeRate;
        assert.equal(table.step(one[i], sweeps, a ? oneAcc[i] : 0).changeRate, r, `call ${k}: chain ${c} change rate (single chain)`);
        assert.equal(rates[i], r, `call ${k}: chain ${c} change rate (lanes)`);
        const want = mem(ref[i].ptr, rng + nBits);
        assert.deepEqual(mem(one[i].ptr, rng + nBits), want, `call ${k}: chain ${c} state and generator (single chain)`);
        const s = lanes.chainState(batch, i);
        assert.deepEqual(s.stream, want.subarray(0, rng), `call ${k}: chain ${c} generator (lanes)`);
        assert.deepEqual(s.bits, want.subarray(rng), `call ${k}: chain ${c} state (lanes)`);
      });
    }
    const sums = lanes.readAndClear(batch, acc);
    chains.forEach((c, i) => {
      const want = direct.readAndClear(refAcc[i]);
      assert.deepEqual(table.readAndClear(oneAcc[i]), want, `chain ${c} accumulated probabilities (single chain)`);
      assert.deepEqual(sums[i], want, `chain ${c} accumulated probabilities (lanes)`);
      assert.ok(want.some((p) => p > 0));
    });
  } finally {
    direct.dispose();
    table.dispose();
    lanes.dispose();
  }
}

test('table kernels draw the direct kernels\' chains bit for bit (single chain, lanes of 2 and 4)', () => {
  for (const [name, model] of models) {
    for (const chains of [[0, 1], [3, 8], [0, 1, 2, 3], [5, 2, 9, 4]]) {
      assert.doesNotThrow(() => assertSameChains(model, 11, chains, [3, 5, 1, 4]), name);
    }
  }
});

test('runGibbs with 1–5 chains: the table run equals the direct run bit for bit', () => {
  for (const [name, model] of models) {
    for (let chains = 1; chains <= 5; chains++) {
      const opts = { seed: 20 + chains, chains, samples: 30, burnin: 5, batches: 3 };
      const off = runGibbs(engine, model, { ...opts, probabilityTable: 'off' });
      const on = runGibbs(engine, model, { ...opts, probabilityTable: 'on' });
      assert.equal(off.diagnostics.probabilityTable, false);
      assert.equal(on.diagnostics.probabilityTable, true);
      assert.deepEqual(on.marginals, off.marginals, `${name}, ${chains} chains`);
      assert.deepEqual(on.marginalStdErr, off.marginalStdErr, `${name}, ${chains} chains`);
      assert.equal(on.diagnostics.changeRate, off.diagnostics.changeRate);
    }
  }
});

test('infer and workers: 1 and 2 workers with the table equal the direct single-thread run', async () => {
  const model = randomTorus(8, 6, 3);
  const opts = { seed: 5, chains: 4, samples: 200, burnin: 20, batches: 4 };
  const ref = infer(engine, model, { method: 'gibbs', ...opts, probabilityTable: 'off' });
  for (const workers of [1, 2]) {
    const r = await runParallel(model, { ...opts, workers, probabilityTable: 'on' });
    assert.equal(r.diagnostics.probabilityTable, true);
    assert.deepEqual(r.marginals, ref.marginals, `workers = ${workers}`);
    assert.deepEqual(r.marginalStdErr, ref.marginalStdErr, `workers = ${workers}`);
    assert.equal(r.diagnostics.changeRate, ref.diagnostics.changeRate);
  }
});

test("'auto' falls back to the direct kernel: one-hot blocks, degree > 8, memory budget, short runs, f32 and colored scans", () => {
  const long = { samples: 100, burnin: 0, chains: 2 };
  // Applies: a free-bit model run long enough.
  assert.equal(runGibbs(engine, randomTorus(6, 6, 4), long).diagnostics.probabilityTable, true);
  // One-hot blocks (Potts).
  const potts = pottsLattice({ shape: [3, 3], q: 3, beta: 0.5 });
  assert.equal(runGibbs(engine, potts, long).diagnostics.probabilityTable, false);
  assert.throws(() => runGibbs(engine, potts, { ...long, probabilityTable: 'on' }), (e: unknown) => e instanceof ModelError && /one-hot/.test((e as Error).message));
  // Every site with 9 neighbours (a complete graph on 10 sites).
  const complete = new ModelBuilder(new Array(10).fill(2));
  for (let v = 0; v < 10; v++) for (let w = v + 1; w < 10; w++) complete.addPairwise(v, w, [0, 0, 0, 0.01 * (v - w)]);
  assert.equal(runGibbs(engine, complete.build(), long).diagnostics.probabilityTable, false);
  assert.throws(() => runGibbs(engine, complete.build(), { ...long, probabilityTable: 'on' }), /every site has more than 8 neighbours/);
  // A star: its centre (12 neighbours) has no table, its leaves do (the most sites: 'auto' takes it).
  const star = new ModelBuilder(new Array(13).fill(2));
  for (let v = 1; v < 13; v++) star.addPairwise(0, v, [0, 0, 0, 0.1 * v]);
  assert.equal(runGibbs(engine, star.build(), long).diagnostics.probabilityTable, true);
  // Runs too short to repay the table: 30 random-coupling sites (30 × 16 entries) and 40 sweeps
  // (30 × 40 updates: fewer than 8 per entry); any model with 20 sweeps (fewer than 32 a site).
  assert.equal(runGibbs(engine, randomTorus(6, 5, 5), { samples: 40, burnin: 0, chains: 1 }).diagnostics.probabilityTable, false);
  assert.equal(runGibbs(engine, isingLattice({ shape: [6, 5], beta: 0.3, periodic: true }), { samples: 20, burnin: 0, chains: 1 }).diagnostics.probabilityTable, false);
  // …while a uniform lattice shares one table of 16 entries and takes it.
  assert.equal(runGibbs(engine, isingLattice({ shape: [6, 5], beta: 0.3, periodic: true }), { samples: 40, burnin: 0, chains: 1 }).diagnostics.probabilityTable, true);
  // The memory budget (2 MiB): a 23 × 23 torus with eight neighbours a site and random couplings
  // needs 529 tables of 256 entries (2.07 MiB); with uniform couplings one table.
  const king = (uniform: boolean) => {
    const rnd = mulberry32(6), L = 23;
    const b = new ModelBuilder(new Array(L * L).fill(2));
    for (let y = 0; y < L; y++) {
      for (let x = 0; x < L; x++) {
        for (const [dx, dy] of [[1, 0], [0, 1], [1, 1], [1, -1]]) b.addPairwise(y * L + x, ((y + dy + L) % L) * L + ((x + dx) % L), [0, 0, 0, uniform ? 0.2 : rnd() - 0.5]);
      }
    }
    return b.build();
  };
  for (const uniform of [false, true]) {
    const s = new GibbsLanes(engine, king(uniform), 4, GIBBS_STREAM);
    assert.equal(s.table?.entries ?? null, uniform ? 256 : null, uniform ? 'uniform couplings: one shared table' : 'past the 2 MiB budget');
    s.dispose();
  }
  // f32 lanes and the colored scan keep their own kernels.
  const model = randomTorus(4, 4, 7);
  for (const o of [{ precision: 'f32' as const }, { scan: 'colored' as const }]) {
    assert.equal(runGibbs(engine, model, { ...long, ...o }).diagnostics.probabilityTable, false);
    assert.throws(() => runGibbs(engine, model, { ...long, ...o, probabilityTable: 'on' }), /needs precision 'f64' and scan 'sequential'/);
  }
  assert.throws(() => runGibbs(engine, model, { probabilityTable: 'yes' as 'on' }), /probabilityTable must be one of auto, on, off/);
});
