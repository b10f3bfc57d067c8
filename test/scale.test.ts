// The large-model paths: bulk builder methods, the canonical form and streamed --json output, the
// up-front memory refusal and the fast exact refusal. Small models only; speed is measured in bench/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Model, ModelBuilder } from '../bindings/core/model.ts';
import { isingLattice, latticeBondArrays, pottsLattice } from '../bindings/core/builders.ts';
import { bitsToMarginals, bitsToStdErr, canonicalSize, toCanonical } from '../bindings/core/canonical.ts';
import { BoundModel, boundBytes } from '../bindings/core/bound.ts';
import { lanesMemory } from '../bindings/samplers/gibbs-lanes.ts';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { EngineError, ModelError } from '../bindings/core/errors.ts';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { infer } from '../bindings/infer.ts';
import { eliminationPlan, exactInference } from '../bindings/exact/exact.ts';
import { writeJSON } from '../bindings/cli/json-stream.ts';
import { jsonResult } from '../bindings/cli/cli.ts';
import { hiddenGrid, mulberry32 } from './helpers.ts';

const BIN = fileURLToPath(new URL('../bin/relaxmrf.js', import.meta.url));

function sameModel(a: Model, b: Model): void {
  assert.equal(a.n, b.n);
  assert.equal(a.nFactors, b.nFactors);
  assert.deepEqual(Array.from(a.scopeStart), Array.from(b.scopeStart));
  assert.deepEqual(Array.from(a.scopeVars), Array.from(b.scopeVars));
  for (let f = 0; f < a.nFactors; f++) assert.deepEqual(Array.from(a.table(f)), Array.from(b.table(f)), `factor ${f}`);
}

test('addSharedPairs equals addSharedFactor pair by pair (either order, mixed cardinalities, one shared table)', () => {
  const rand = mulberry32(3);
  const card = [2, 3, 2, 3, 2, 3, 2];
  const pairs: [number, number][] = [];
  for (let t = 0; t < 30; t++) {
    const i = Math.floor(rand() * 7), j = Math.floor(rand() * 7);
    if (i !== j && card[i] === 2 && card[j] === 3) pairs.push(rand() < 0.5 ? [i, j] : [j, i]);
  }
  // A 2 × 3 table for (K=2, K=3) pairs in that order; a reversed pair is a 3 × 2 use of another table.
  const t23 = [0.1, -0.2, 0.3, 0.4, -0.5, 0.6], t32 = [1, 2, 3, 4, 5, 6];
  const one = new ModelBuilder(card), bulk = new ModelBuilder(card);
  const id1 = one.shareTable(t23), id2 = one.shareTable(t32);
  bulk.shareTable(t23);
  bulk.shareTable(t32);
  for (const [i, j] of pairs) one.addSharedFactor([i, j], card[i] === 2 ? id1 : id2);
  const fwd = pairs.filter(([i]) => card[i] === 2), back = pairs.filter(([i]) => card[i] === 3);
  bulk.addSharedPairs(Int32Array.from(fwd, (p) => p[0]), Int32Array.from(fwd, (p) => p[1]), id1);
  bulk.addSharedPairs(Int32Array.from(back, (p) => p[0]), Int32Array.from(back, (p) => p[1]), id2);
  const a = one.build(), b = bulk.build();
  // Same factors as a multiset of (scope, table): compare the model's log-potential on random states.
  assert.equal(a.nFactors, b.nFactors);
  for (let t = 0; t < 200; t++) {
    const x = card.map((K) => Math.floor(rand() * K));
    assert.ok(Math.abs(a.logPotential(x) - b.logPotential(x)) < 1e-12);
  }
  // Reversed pairs read the transposed table: entry (x_i, x_j) of the caller's order.
  const [i, j] = back[0];
  const m = new ModelBuilder(card);
  m.addSharedPairs(Int32Array.of(i), Int32Array.of(j), m.shareTable(t32));
  const model = m.build();
  for (let xi = 0; xi < 3; xi++) for (let xj = 0; xj < 2; xj++) {
    const x = new Array(7).fill(0);
    x[i] = xi;
    x[j] = xj;
    assert.equal(model.logPotential(x), t32[xi * 2 + xj]);
  }
});

test('addSharedPairs and the pair fast paths refuse bad scopes with one clear line', () => {
  const b = new ModelBuilder([2, 2, 2]);
  const id = b.shareTable([0, 1, 1, 0]);
  assert.throws(() => b.addSharedPairs(Int32Array.of(0, 1), Int32Array.of(1, 1), id), (e: unknown) => e instanceof ModelError && /pair factor 1 on \(1, 1\).*appears twice/.test(e.message));
  assert.throws(() => b.addSharedPairs(Int32Array.of(0), Int32Array.of(3), id), (e: unknown) => e instanceof ModelError && /variable index 3 is out of range/.test(e.message));
  assert.throws(() => b.addSharedPairs(Int32Array.of(0), Int32Array.of(1, 2), id), ModelError);
  assert.throws(() => b.addSharedFactor([0, 1], 3), (e: unknown) => e instanceof ModelError && /shared table 3 does not fit/.test(e.message));
  assert.throws(() => b.addFactor([2, 2], [0, 0, 0, 0]), (e: unknown) => e instanceof ModelError && /factor on \(2 2\): variable 2 appears twice/.test(e.message));
  assert.throws(() => b.addFactor([0, 1], [0, NaN, 0, 0]), (e: unknown) => e instanceof ModelError && /factor on \(0 1\): entry 1 is NaN/.test(e.message));
});

test('lattice builders: the bulk path gives the factor-by-factor model (Ising with constant and varying J, Potts)', () => {
  for (const periodic of [false, true]) {
    const shape = [4, 5];
    const bonds = latticeBondArrays(shape, periodic);
    const byOne = new ModelBuilder(new Array(20).fill(2));
    const id = byOne.shareTable([0.4, -0.4, -0.4, 0.4]);
    for (let k = 0; k < bonds.i.length; k++) byOne.addSharedFactor([bonds.i[k], bonds.j[k]], id);
    sameModel(isingLattice({ shape, periodic, beta: 0.4 }), byOne.build());
    // J as a function goes through addSharedFactor with one table per bond: same potentials as 0.4 J.
    const varying = isingLattice({ shape, periodic, beta: 0.4, J: (i, j) => 1 + ((i + j) % 3) });
    const scaled = new ModelBuilder(new Array(20).fill(2));
    for (let k = 0; k < bonds.i.length; k++) {
      const w = 0.4 * (1 + ((bonds.i[k] + bonds.j[k]) % 3));
      scaled.addPairwise(bonds.i[k], bonds.j[k], [w, -w, -w, w]);
    }
    const want = scaled.build(), rand = mulberry32(5);
    for (let t = 0; t < 100; t++) {
      const x = Array.from({ length: 20 }, () => (rand() < 0.5 ? 0 : 1));
      assert.ok(Math.abs(varying.logPotential(x) - want.logPotential(x)) < 1e-12);
    }
    const potts = pottsLattice({ shape, periodic, q: 3, beta: 0.7 });
    assert.equal(potts.nFactors, bonds.i.length);
    const x = Array.from({ length: 20 }, (_, v) => v % 3);
    let same = 0;
    for (let k = 0; k < bonds.i.length; k++) if (x[bonds.i[k]] === x[bonds.j[k]]) same++;
    assert.ok(Math.abs(potts.logPotential(x) - 0.7 * same) < 1e-12);
  }
});

test('countPairs counts distinct pairs (repeats and either order)', () => {
  const b = new ModelBuilder([2, 2, 2, 2]);
  const id = b.shareTable([0, 1, 1, 0]);
  b.addSharedPairs(Int32Array.of(0, 1, 2, 3, 0), Int32Array.of(1, 0, 3, 0, 3), id);
  b.addPairwise(1, 2, [0, 0, 0, 1]);
  assert.equal(b.build().countPairs(), 4); // {0,1}, {2,3}, {0,3}, {1,2}
});

test('streamed --json equals JSON.stringify of the same object (and parses), whatever the chunk size', async () => {
  const engine = await loadEngine();
  const model = isingLattice({ shape: [5, 4], beta: 0.3, h: 0.1, periodic: true });
  for (const method of ['gibbs', 'exact'] as const) {
    const r = infer(engine, model, method === 'gibbs' ? { method, samples: 200, burnin: 10, chains: 2, seed: 3 } : { method });
    r.diagnostics.note = 'a "quoted" string';
    r.diagnostics.missing = null;
    const obj = jsonResult(model, r);
    const reference = JSON.stringify({
      ...obj,
      marginals: r.marginals.map((row) => Array.from(row)),
      marginalStdErr: r.marginalStdErr ? r.marginalStdErr.map((row) => Array.from(row)) : null,
    });
    for (const size of [1, 7, 1 << 16]) {
      const chunks: string[] = [];
      writeJSON(obj, (c) => chunks.push(c), size);
      assert.equal(chunks.join(''), reference);
      if (size === 7) assert.ok(chunks.length > 10, 'written in many chunks');
    }
    assert.deepEqual(JSON.parse(reference).marginals.length, 20);
  }
  // Non-finite numbers become null, undefined fields are left out: as JSON.stringify does.
  const odd = { a: [1, NaN, -0, Infinity], b: undefined, c: Float64Array.of(0.1, -Infinity), d: { e: true } };
  const chunks: string[] = [];
  writeJSON(odd, (c) => chunks.push(c));
  assert.equal(chunks.join(''), JSON.stringify({ ...odd, c: Array.from(odd.c) }));
});

test('bitsToMarginals / bitsToStdErr: free bits give [1 − p, p] and [se, se], one-hot blocks their bits', () => {
  const b = new ModelBuilder([2, 3, 2]);
  b.addPairwise(0, 1, [0, 1, 2, 3, 4, 5]);
  b.addUnary(2, [0, -Infinity]); // a zero potential: variable 2 becomes a one-hot block
  const c = toCanonical(b.build());
  assert.deepEqual(Array.from(c.blockStart), [0, 1, 4, 6]);
  const bits = Float64Array.of(0.25, 0.1, 0.2, 0.7, 1, 0);
  assert.deepEqual(bitsToMarginals(c, bits).map((r) => Array.from(r)), [[0.75, 0.25], [0.1, 0.2, 0.7], [1, 0]]);
  assert.deepEqual(bitsToStdErr(c, bits).map((r) => Array.from(r)), [[0.25, 0.25], [0.1, 0.2, 0.7], [1, 0]]);
});

test('a model past the engine memory limit is refused before anything is allocated, naming the memory it needs', async () => {
  const engine = await loadEngine();
  const model = isingLattice({ shape: [64, 64], beta: 0.4, periodic: true });
  const size = canonicalSize(model);
  assert.deepEqual([size.nBits, size.nnz], [4096, 4 * 4096]);
  // The estimate is what binding allocates.
  const before = engine.bytesInUse;
  const bound = new BoundModel(engine, toCanonical(model));
  assert.equal(engine.bytesInUse - before, boundBytes(engine, size));
  bound.dispose();
  assert.equal(engine.bytesInUse, before);
  const saved = engine.memoryLimit;
  try {
    engine.memoryLimit = before + boundBytes(engine, size); // the form fits, the chains' buffers do not
    assert.throws(
      () => infer(engine, model, { method: 'gibbs', samples: 10, burnin: 0, chains: 1 }),
      (e: unknown) => e instanceof EngineError && /^gibbs on 4096 variables needs [\d.]+ KiB of WASM memory, past the engine's limit of [\d.]+ KiB/.test(e.message),
    );
    assert.equal(engine.bytesInUse, before, 'nothing was allocated');
    engine.memoryLimit = before + boundBytes(engine, size) + lanesMemory(size, 1, 'f64', 'sequential');
    assert.equal(infer(engine, model, { method: 'gibbs', samples: 10, burnin: 0, chains: 1 }).marginals.length, 4096);
    // One allocation past the limit (any method) fails with a clear EngineError too.
    engine.memoryLimit = before + 1024;
    assert.throws(() => engine.arena().allocF64(1000), (e: unknown) => e instanceof EngineError && /out of WASM memory allocating 7.8 KiB/.test(e.message));
  } finally {
    engine.memoryLimit = saved;
  }
});

test('CLI: the memory refusal exits 3 with one line', () => {
  const r = spawnSync(process.execPath, [BIN, 'infer', 'ising:256x256,beta=0.4,periodic', '--method', 'gibbs', '--samples', '10'], { encoding: 'utf8', env: { ...process.env, RELAXMRF_WASM_LIMIT_MB: '4' } });
  assert.equal(r.status, 3, r.stderr);
  assert.match(r.stderr, /^relaxmrf: gibbs on 65536 variables needs [\d.]+ MiB of WASM memory, past the engine's limit of 4\.0 MiB\n$/);
});

test('exact refuses a 100×100 grid quickly, naming the clique table it would need', async () => {
  const engine = await loadEngine();
  // Hidden (a diagonal more, renumbered): its layout or its pair graph would refuse it by the grid's own bound (test/exact-lattice-bound.test.ts); here the orderings refuse.
  const model = hiddenGrid(isingLattice({ shape: [100, 100], beta: 0.4 }), 100, 1);
  // CPU time, not wall time: the refusal's cost is what is asserted, and a loaded machine
  // stretches wall time several-fold.
  const t = process.cpuUsage();
  assert.throws(
    () => exactInference(engine, model),
    (e: unknown) => e instanceof EngineError && /^treewidth at least \d+: the largest clique table would have at least 2\^\d+ entries \([\d.]+ TB\), past the limit of 2\^25 entries/.test(e.message),
  );
  const used = process.cpuUsage(t);
  assert.ok((used.user + used.system) / 1000 < 1000, 'refused in well under a second of CPU time');
});

test('exact: a scrambled numbering (natural order hopeless) still finds the greedy ordering, same answer', async () => {
  const engine = await loadEngine();
  const L = 9, n = L * L, rand = mulberry32(17);
  const perm = Array.from({ length: n }, (_, v) => v);
  for (let k = n - 1; k > 0; k--) {
    const r = Math.floor(rand() * (k + 1));
    [perm[k], perm[r]] = [perm[r], perm[k]];
  }
  const bonds = latticeBondArrays([L, L], false);
  const plain = new ModelBuilder(new Array(n).fill(2)), scrambled = new ModelBuilder(new Array(n).fill(2));
  for (let k = 0; k < bonds.i.length; k++) {
    const w = 0.3 + 0.01 * k, t = [w, -w, -w, w];
    plain.addPairwise(bonds.i[k], bonds.j[k], t);
    scrambled.addPairwise(perm[bonds.i[k]], perm[bonds.j[k]], t);
  }
  // A small limit: natural order on the scrambled grid is far past it, min-degree fits.
  const opts = { maxTableEntries: 2 ** 12 };
  const a = exactInference(engine, plain.build(), opts), b = exactInference(engine, scrambled.build(), opts);
  assert.equal(b.method, 'elimination');
  assert.ok(Math.abs(a.logZ - b.logZ) < 1e-10, `${a.logZ} vs ${b.logZ}`);
  for (let v = 0; v < n; v++) assert.ok(Math.abs(a.marginals[v][1] - b.marginals[perm[v]][1]) < 1e-10);
  assert.ok(eliminationPlan(scrambled.build(), { ...opts, orderings: ['natural'] }).maxTableEntries > 2 ** 12 * 1024, 'natural order is far past the limit');
});

test('DHMC / MALA: a chain work area past the engine limit is refused before the relaxation is built', async () => {
  const engine = await loadEngine();
  const model = isingLattice({ shape: [64, 64], beta: 0.4, periodic: true });
  const saved = engine.memoryLimit, before = engine.bytesInUse;
  try {
    engine.memoryLimit = before + 13 * 8 * 4096; // less than the work area plus its vectors
    for (const method of ['dhmc', 'mala'] as const) {
      assert.throws(
        () => infer(engine, model, { method, samples: 5, burnin: 5 }),
        (e: unknown) => e instanceof EngineError && new RegExp(`^${method} on 4096 variables \\(a chain's work area\\) needs [\\d.]+ KiB of WASM memory`).test(e.message),
      );
      assert.equal(engine.bytesInUse, before);
    }
  } finally {
    engine.memoryLimit = saved;
  }
});

test('canonical CSR written in place: rows strictly sorted, symmetric, zero couplings dropped, repeats summed', () => {
  const rand = mulberry32(23);
  for (let t = 0; t < 20; t++) {
    const n = 6 + (t % 5), card = Array.from({ length: n }, (_, v) => (v % 3 === 0 ? 3 : 2));
    const b = new ModelBuilder(card);
    const shared = b.shareTable([0.5, -0.5, -0.5, 0.5]), zero = b.shareTable([0.2, 0.2, 0.2, 0.2]);
    for (let k = 0; k < 3 * n; k++) {
      const i = Math.floor(rand() * n), j = Math.floor(rand() * n);
      if (i === j) continue;
      if (card[i] === 2 && card[j] === 2) b.addSharedFactor([i, j], rand() < 0.3 ? zero : shared); // zero: no coupling
      else b.addPairwise(i, j, Array.from({ length: card[i] * card[j] }, () => rand() - 0.5));
    }
    const m = b.build(), c = toCanonical(m);
    assert.equal(c.rowPtr[c.nBits], c.col.length);
    for (let p = 0; p < c.nBits; p++) {
      for (let k = c.rowPtr[p]; k < c.rowPtr[p + 1]; k++) {
        if (k > c.rowPtr[p]) assert.ok(c.col[k] > c.col[k - 1], `row ${p} sorted, no repeats`);
        assert.notEqual(c.val[k], 0);
        const q = c.col[k];
        let back = -1;
        for (let r = c.rowPtr[q]; r < c.rowPtr[q + 1]; r++) if (c.col[r] === p) back = r;
        assert.ok(back >= 0 && c.val[back] === c.val[k], `W[${q}][${p}] mirrors W[${p}][${q}]`);
      }
    }
    // And the form reproduces the model (random configurations).
    for (let s = 0; s < 50; s++) {
      const x = card.map((K) => Math.floor(rand() * K));
      const bits = new Uint8Array(c.nBits);
      for (let v = 0; v < n; v++) bits[c.oneHot[v] ? c.blockStart[v] + x[v] : c.blockStart[v]] = c.oneHot[v] ? 1 : x[v];
      let e = c.logZOffset;
      for (let p = 0; p < c.nBits; p++) {
        if (!bits[p]) continue;
        e += c.a[p];
        for (let k = c.rowPtr[p]; k < c.rowPtr[p + 1]; k++) if (c.col[k] > p && bits[c.col[k]]) e += c.val[k];
      }
      assert.ok(Math.abs(e - m.logPotential(x)) < 1e-12);
    }
  }
});
