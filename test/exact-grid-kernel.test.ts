// Bucket elimination on binary grids (bindings/exact/bucket-elimination.ts), where the block kernel
// reads a child's message that lacks the newest separator variable as runs of two consecutive
// entries (kind 2 in assembly/exact/exact_block.ts) and the downward pass streams a single child's
// δ directly (bucketDelta): log Z and every marginal against enumeration, with and without zeros.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { exactInference } from '../bindings/exact/exact.ts';
import { blockRuns } from '../bindings/exact/bucket-elimination.ts';
import { ModelBuilder } from '../bindings/core/model.ts';
import { mulberry32 } from './helpers.ts';

const engine = await loadEngine();

test('blockRuns: a table holding the block digits but the last ones contiguously is kind 2 (consecutive runs)', () => {
  assert.deepEqual({ ...blockRuns([2, 2, 2], [2, 1, 0], 8), segs: [...blockRuns([2, 2, 2], [2, 1, 0], 8).segs] }, { kind: 2, R: 2, segs: [0, 1, 2, 3], distinct: true });
  // A gap in the strides keeps the offsets (kind 1).
  assert.equal(blockRuns([2, 2, 2], [4, 1, 0], 8).kind, 1);
  assert.equal(blockRuns([2, 2, 2], [4, 2, 1], 8).kind, 0);
});

test('binary grids 4×5: bucket elimination = enumeration to 1e-12 (random fields and couplings, some zero potentials)', () => {
  const rand = mulberry32(2207);
  const rows = 4, cols = 5, n = rows * cols;
  for (let t = 0; t < 4; t++) {
    const b = new ModelBuilder(new Array(n).fill(2));
    for (let v = 0; v < n; v++) b.addFactor([v], [0, 2 * rand() - 1]);
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const v = r * cols + c;
        for (const u of [c + 1 < cols ? v + 1 : -1, r + 1 < rows ? v + cols : -1]) {
          if (u < 0) continue;
          const J = 1.5 * (2 * rand() - 1);
          const table = [J, -J, -J, J];
          if (t % 2 === 1 && rand() < 0.15) table[Math.floor(4 * rand())] = -Infinity;
          b.addFactor([v, u], table);
        }
      }
    }
    const m = b.build();
    const want = exactInference(engine, m, { method: 'enumeration' });
    const got = exactInference(engine, m, { method: 'bucket' });
    assert.equal(got.algorithm, 'bucket');
    assert.ok(Math.abs(got.logZ - want.logZ) < 1e-12 * Math.max(1, Math.abs(want.logZ)), `grid ${t}: log Z ${got.logZ} vs ${want.logZ}`);
    for (let v = 0; v < n; v++) for (let k = 0; k < 2; k++) assert.ok(Math.abs(got.marginals[v][k] - want.marginals[v][k]) < 1e-12, `grid ${t}: p(x${v} = ${k})`);
  }
});
