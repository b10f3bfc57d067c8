// Bucket elimination on binary grids (bindings/exact/bucket-elimination.ts), where the block kernel
// reads a child's message that lacks the newest separator variable as runs of two consecutive
// entries (kind 2 in assembly/exact/exact_block.ts) and the downward pass streams a single child's
// δ directly (bucketDelta): log Z and every marginal against enumeration, with and without zeros;
// MAP (max-product through the same runs) against the enumerated maximum.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { exactInference, exactMAP } from '../bindings/exact/exact.ts';
import { blockRuns } from '../bindings/exact/bucket-elimination.ts';
import { ModelBuilder, type Model } from '../bindings/core/model.ts';
import { mulberry32 } from './helpers.ts';

const engine = await loadEngine();

test('blockRuns: a table holding the block digits but the last ones contiguously is kind 2 (consecutive runs)', () => {
  assert.deepEqual({ ...blockRuns([2, 2, 2], [2, 1, 0], 8), segs: [...blockRuns([2, 2, 2], [2, 1, 0], 8).segs] }, { kind: 2, R: 2, segs: [0, 1, 2, 3], distinct: true });
  // A gap in the strides keeps the offsets (kind 1).
  assert.equal(blockRuns([2, 2, 2], [4, 1, 0], 8).kind, 1);
  assert.equal(blockRuns([2, 2, 2], [4, 2, 1], 8).kind, 0);
});

/** A rows × cols binary grid with random fields and ±J couplings; with zeros, some pair entries forbidden. */
function grid(rand: () => number, rows: number, cols: number, zeros: boolean, scale = 1.5): Model {
  const n = rows * cols;
  const b = new ModelBuilder(new Array(n).fill(2));
  for (let v = 0; v < n; v++) b.addFactor([v], [0, 2 * rand() - 1]);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const v = r * cols + c;
      for (const u of [c + 1 < cols ? v + 1 : -1, r + 1 < rows ? v + cols : -1]) {
        if (u < 0) continue;
        const J = scale * (2 * rand() - 1);
        const table = [J, -J, -J, J];
        if (zeros && rand() < 0.15) table[Math.floor(4 * rand())] = -Infinity;
        b.addFactor([v, u], table);
      }
    }
  }
  return b.build();
}

test('binary grids 4×5: MAP by max-product bucket elimination = the enumerated maximum', () => {
  const rand = mulberry32(2208);
  for (let t = 0; t < 2; t++) {
    const m = grid(rand, 4, 5, t === 1);
    let best = -Infinity;
    const x = new Int32Array(m.n);
    for (let code = 0; code < 2 ** m.n; code++) {
      for (let v = 0; v < m.n; v++) x[v] = (code >> v) & 1;
      best = Math.max(best, m.logPotential(x));
    }
    const r = exactMAP(engine, m);
    assert.ok(Math.abs(r.logPotential - best) <= 1e-12 * Math.max(1, Math.abs(best)), `grid ${t}: MAP ${r.logPotential} vs ${best}`);
    assert.ok(Math.abs(m.logPotential(r.configuration) - best) <= 1e-12 * Math.max(1, Math.abs(best)), `grid ${t}: the configuration's own log-potential`);
  }
});

test('binary grids 4×5: bucket elimination = enumeration to 1e-12 (random fields and couplings, some zero potentials)', () => {
  const rand = mulberry32(2207);
  const n = 20;
  for (let t = 0; t < 4; t++) {
    const m = grid(rand, 4, 5, t % 2 === 1);
    const want = exactInference(engine, m, { method: 'enumeration' });
    const got = exactInference(engine, m, { method: 'bucket' });
    assert.equal(got.algorithm, 'bucket');
    assert.ok(Math.abs(got.logZ - want.logZ) < 1e-12 * Math.max(1, Math.abs(want.logZ)), `grid ${t}: log Z ${got.logZ} vs ${want.logZ}`);
    for (let v = 0; v < n; v++) for (let k = 0; k < 2; k++) assert.ok(Math.abs(got.marginals[v][k] - want.marginals[v][k]) < 1e-12, `grid ${t}: p(x${v} = ${k})`);
  }
});

test('binary grids 4×5 with couplings of ±1000 nats (log-space streams through the same runs): bucket elimination = enumeration', () => {
  const rand = mulberry32(2209);
  for (let t = 0; t < 3; t++) {
    const m = grid(rand, 4, 5, t === 2, 1000);
    const want = exactInference(engine, m, { method: 'enumeration' });
    const got = exactInference(engine, m, { method: 'bucket' });
    assert.ok(Math.abs(got.logZ - want.logZ) <= 1e-12 * Math.abs(want.logZ), `grid ${t}: log Z ${got.logZ} vs ${want.logZ}`);
    for (let v = 0; v < m.n; v++) for (let k = 0; k < 2; k++) assert.ok(Math.abs(got.marginals[v][k] - want.marginals[v][k]) < 1e-12, `grid ${t}: p(x${v} = ${k}) ${got.marginals[v][k]} vs ${want.marginals[v][k]}`);
  }
});
