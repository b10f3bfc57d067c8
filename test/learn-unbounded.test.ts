// learn()'s warnings about data whose log-likelihood has no maximum (bindings/learn/unbounded.ts):
// the columns and coupled pairs it names against a count of the data's cells done here, and the
// parameters it names drifting as it says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { learn, type LearnOptions } from '../bindings/learn/learn.ts';
import { machinePairs, type BinaryData } from '../bindings/learn/machine.ts';
import { mulberry32 } from './helpers.ts';

const engine = await loadEngine();
const quick: LearnOptions = { epochs: 1, evaluate: false };

/** rows × cols of states drawn by `draw(r, c, rand)`. */
function data(rows: number, cols: number, seed: number, draw: (r: number, c: number, rand: () => number, row: Uint8Array) => number): BinaryData {
  const rand = mulberry32(seed), values = new Uint8Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    const row = values.subarray(r * cols, (r + 1) * cols);
    for (let c = 0; c < cols; c++) row[c] = draw(r, c, rand, row);
  }
  return { rows, cols, values };
}

/** The pairs of columns (i < j) that miss a pair of states both columns take, and the first missing one: counted cell by cell. */
function holes(d: BinaryData, K: number): string[] {
  const out: string[] = [];
  const has = (c: number, s: number) => { for (let r = 0; r < d.rows; r++) if (d.values[r * d.cols + c] === s) return true; return false; };
  for (let i = 0; i < d.cols; i++) {
    for (let j = i + 1; j < d.cols; j++) {
      let hole: string | null = null;
      for (let k = 0; k < K && !hole; k++) {
        for (let l = 0; l < K && !hole; l++) {
          if (!has(i, k) || !has(j, l)) continue;
          let n = 0;
          for (let r = 0; r < d.rows; r++) if (d.values[r * d.cols + i] === k && d.values[r * d.cols + j] === l) n++;
          if (n === 0) hole = `${i} and ${j} never (${k}, ${l})`;
        }
      }
      if (hole) out.push(hole);
    }
  }
  return out;
}

test('a constant column and a pair never seen in one of its four cells are named; independent coin flips are not', () => {
  // Column 2 always 1; column 4 is 1 whenever column 3 is: (1, 0) never occurs.
  const d = data(200, 6, 1, (_r, c, rand, row) => (c === 2 ? 1 : c === 4 && row[3] === 1 ? 1 : rand() < 0.5 ? 1 : 0));
  const w = learn(engine, d, quick).warnings;
  assert.equal(w.length, 2, w.join('\n'));
  assert.match(w[0], /^the log-likelihood has no maximum: column 2 of 6 is always 1 in the data, so its bias grows without bound/);
  assert.match(w[1], /^the log-likelihood has no maximum: columns 3 and 4 are never \(1, 0\) together in the data/);
  assert.deepEqual(learn(engine, data(400, 6, 2, (_r, _c, rand) => (rand() < 0.5 ? 1 : 0)), quick).warnings, []);
  // Columns 0 and 1 are both 1 only in the last of 130 rows (the engine's bitsets' partial last word), or never.
  for (const last of [1, 0]) {
    // Rows before it cycle through (0, 0), (0, 1), (1, 0).
    const e = data(130, 3, 11, (r, c, rand) => (c === 2 ? (rand() < 0.5 ? 1 : 0) : r === 129 ? last : r % 3 === c + 1 ? 1 : 0));
    assert.deepEqual(holes(e, 2), last ? [] : ['0 and 1 never (1, 1)']);
    assert.equal(learn(engine, e, quick).warnings.length, last ? 0 : 1);
  }
  // Each of the four cells, missing alone.
  for (const [k, l] of [[0, 0], [0, 1], [1, 0], [1, 1]]) {
    const e = data(300, 3, 3, (_r, c, rand, row) => {
      if (c !== 1) return rand() < 0.5 ? 1 : 0;
      const x = rand() < 0.5 ? 1 : 0;
      return row[0] === k && x === l ? 1 - x : x;
    });
    assert.deepEqual(holes(e, 2), [`0 and 1 never (${k}, ${l})`]);
    const got = learn(engine, e, quick).warnings;
    assert.equal(got.length, 1, got.join('\n'));
    assert.match(got[0], new RegExp(`columns 0 and 1 are never \\(${k}, ${l}\\) together`));
  }
});

test('sparse data: the pairs named and counted are those a cell-by-cell count finds', () => {
  for (const seed of [4, 5, 6]) {
    // 130 rows: the engine's column bitsets span three words, the last one partly.
    const d = data(130, 9, seed, (_r, _c, rand) => (rand() < 0.04 ? 1 : 0));
    const expected = holes(d, 2);
    assert.ok(expected.length > 5, `seed ${seed}: ${expected.length} pairs`);
    const pairs = learn(engine, d, quick).warnings.find((x) => /coupled pairs/.test(x)) ?? '';
    assert.match(pairs, new RegExp(`: ${expected.length} coupled pairs of columns are never seen in some pair of states each column takes — ${expected.slice(0, 5).join(', ').replace(/[()]/g, '\\$&')} and ${expected.length - 5} more — `));
  }
});

test('weight decay bounds the couplings: only the columns are named then; an RBM has no visible pairs to name', () => {
  const d = data(200, 6, 7, (_r, c, rand, row) => (c === 2 ? 0 : c === 4 && row[3] === 1 ? 1 : rand() < 0.5 ? 1 : 0));
  const decayed = learn(engine, d, { ...quick, weightDecay: 0.01 }).warnings;
  assert.equal(decayed.length, 1, decayed.join('\n'));
  assert.match(decayed[0], /column 2 of 6 is always 0/);
  const rbm = learn(engine, d, { ...quick, model: 'rbm', hidden: 2 }).warnings;
  assert.deepEqual(rbm, decayed);
  // A semi-restricted machine couples its visible columns: the pair is named there.
  assert.equal(machinePairs('srbm', 6, 2).length > 0, true);
  assert.equal(learn(engine, d, { ...quick, model: 'srbm', hidden: 2 }).warnings.length, 2);
});

test('Potts: a state a column never takes, and pairs of states never seen together, each column taking its state', () => {
  // Column 0 never takes state 2; columns 1 and 2 never show (0, 1).
  const d = data(300, 4, 8, (_r, c, rand, row) => {
    const s = Math.floor(rand() * 3);
    if (c === 0) return s === 2 ? 1 : s;
    if (c === 2 && row[1] === 0 && s === 1) return 2;
    return s;
  });
  const expected = holes(d, 3);
  assert.deepEqual(expected, ['1 and 2 never (0, 1)']);
  const w = learn(engine, d, { ...quick, model: 'potts' }).warnings;
  assert.equal(w.length, 2, w.join('\n'));
  assert.match(w[0], /column 0 of 4 never takes state 2 in the data/);
  assert.match(w[1], /columns 1 and 2 are never \(0, 1\) together/);
  // Five states given for data of three: every column misses two.
  assert.match(learn(engine, d, { ...quick, model: 'potts', states: 5 }).warnings[0], /4 of 4 columns never take some state — 0 \(never 2 or 3 or 4\), 1 \(never 3 or 4\)/);
});

test('the bias named only ever rises as learning goes on; a column that varies moves both ways', () => {
  const d = data(200, 4, 9, (_r, c, rand) => (c === 1 ? 1 : rand() < 0.5 ? 1 : 0));
  assert.equal(learn(engine, d, quick).warnings.length, 1);
  // The same run stopped after more and more epochs: column 1's gradient, 1 less the particles'
  // mean, is never negative, and positive whenever a particle has it at 0.
  const biases = [0, 10, 40, 160].map((epochs) => learn(engine, d, { epochs, evaluate: false, schedule: 'constant', learningRate: 0.1, seed: 3 }).params.a);
  const named = biases.map((a) => a[1]), other = biases.map((a) => a[0]);
  for (let k = 1; k < named.length; k++) assert.ok(named[k] >= named[k - 1], named.join(' '));
  assert.ok(named[3] > named[0] + 0.05, named.join(' '));
  const steps = other.slice(1).map((x, k) => x - other[k]);
  assert.ok(steps.some((s) => s > 0) && steps.some((s) => s < 0), other.join(' '));
});

test('relaxmrf learn: the warnings on stderr and in --json, columns by their header names', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'relaxmrf-unbounded-'));
  const d = data(100, 3, 10, (_r, c, rand) => (c === 0 ? 1 : rand() < 0.5 ? 1 : 0));
  const csv = join(tmp, 'd.csv');
  writeFileSync(csv, ['x,y,z', ...Array.from({ length: d.rows }, (_, r) => Array.from(d.values.subarray(r * 3, r * 3 + 3)).join(','))].join('\n') + '\n');
  const bin = fileURLToPath(new URL('../bin/relaxmrf.js', import.meta.url));
  const r = spawnSync(process.execPath, [bin, 'learn', csv, '--out', join(tmp, 'm.uai'), '--epochs', '1', '--json'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const warnings: string[] = JSON.parse(r.stdout).warnings;
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0], /column 0 \("x"\) of 3 is always 1/);
  assert.equal(r.stderr, `relaxmrf: warning: ${warnings[0]}\n`);
});
