// The refusal of large lattices by their grid's treewidth, before any ordering (bindings/exact/lattice-bound.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { exactInference, exactMAP, exactSample } from '../bindings/exact/exact.ts';
import { isingLattice, pottsLattice, latticeBonds } from '../bindings/core/builders.ts';
import { Model, ModelBuilder } from '../bindings/core/model.ts';
import { EngineError } from '../bindings/core/errors.ts';
import { gridUnderAnyNumbering, latticeTreewidth, LATTICE_BOUND_MIN_SITES } from '../bindings/exact/lattice-bound.ts';
import { factorCouples } from '../bindings/exact/separable.ts';
import { hiddenGrid, mulberry32, renumbered } from './helpers.ts';

const engine = await loadEngine();

function refusal(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof EngineError) return e.message;
    throw e;
  }
  assert.fail('not refused');
}

const cpuMs = (f: () => unknown): number => {
  const c0 = process.cpuUsage();
  f();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
};

test('the grid a lattice holds: treewidth the second-longest side, only when every open bond is a factor', () => {
  assert.deepEqual(latticeTreewidth(isingLattice({ shape: [30, 50], beta: 0.3 })), { treewidth: 30, sides: [50, 30], unaryZeros: false });
  assert.deepEqual(latticeTreewidth(isingLattice({ shape: [8, 40, 20], beta: 0.3, periodic: true })), { treewidth: 20, sides: [40, 20], unaryZeros: false });
  assert.equal(latticeTreewidth(isingLattice({ shape: [100], beta: 0.3 })), null, 'a chain');
  // One bond without a factor is no grid any more.
  const holed = new ModelBuilder(new Array(400).fill(2));
  for (const [i, j] of latticeBonds([20, 20], false)) if (!(i === 210 && j === 211)) holed.addPairwise(i, j, [0.3, -0.3, -0.3, 0.3]);
  assert.equal(latticeTreewidth(holed.build().withLattice({ shape: [20, 20], periodic: false })), null);
  const whole = new ModelBuilder(new Array(400).fill(2));
  for (const [i, j] of latticeBonds([20, 20], false)) whole.addPairwise(i, j, [0.3, -0.3, -0.3, 0.3]);
  whole.addUnary(7, [0, -Infinity]);
  assert.deepEqual(latticeTreewidth(whole.build().withLattice({ shape: [20, 20], periodic: false })), { treewidth: 20, sides: [20, 20], unaryZeros: true });
  // Without a layout nothing is known.
  assert.equal(latticeTreewidth(Model.fromData({ ...isingLattice({ shape: [20, 20] }).toData(), lattice: null })), null);
});

test('a 1000×1000 lattice is refused in ≈ 0.09 s of CPU time by its grid\'s treewidth (the orderings took 2.75 s; asserted < 0.15 s as a guard), with lower bounds valid for every order; the same for samples and MAP', () => {
  const big = isingLattice({ shape: [1000, 1000], beta: 0.4 });
  let message = '';
  refusal(() => exactInference(engine, isingLattice({ shape: [200, 200], beta: 0.4 }))); // the code compiled once
  const ms = cpuMs(() => (message = refusal(() => exactInference(engine, big))));
  console.log(`# 1000×1000 lattice refused in ${ms.toFixed(0)} ms of CPU time`);
  assert.ok(ms < 150, `${ms} ms`);
  assert.match(message, /^exact elimination needs treewidth at least 1000 under any elimination order \(the model holds every bond of its 1000×1000 lattice, a grid of treewidth 1000\): unsliced a largest message of at least 2\^1000 entries \(2\^1003 bytes of WASM memory\), and sliced or not at least 2\^1001 clique configurations streamed; the limit is 2\^34 configurations streamed in all slices/);
  assert.match(message, /enumeration would visit 2\^1000000 configurations, past the limit of 2\^30$/);
  assert.doesNotMatch(message, /Infinity|NaN/);
  for (const f of [() => exactSample(engine, big, { count: 1 }), () => exactMAP(engine, big), () => exactInference(engine, big, { method: 'bucket' })]) assert.match(refusal(f), /^exact elimination needs treewidth at least 1000 under any elimination order/);
  // Potts: the bound in the states' bits; a 3-D lattice by its slab.
  assert.match(refusal(() => exactInference(engine, pottsLattice({ shape: [120, 120], q: 3 }))), /treewidth at least 120 .*a largest message of at least [\d.e+]+ \(2\^190\.2\) entries/);
  assert.match(refusal(() => exactInference(engine, isingLattice({ shape: [40, 40, 40], beta: 0.3 }))), /the model holds every bond of its 40×40×40 lattice, whose 40×40 slab alone has treewidth 40\): unsliced a largest message of at least 2\^40 entries \(8\.80 TB of WASM memory\)/);
});

test('the bound leaves alone what it cannot prove: small lattices (the orderings name their order), thin strips, raised limits, observed variables', () => {
  // Below LATTICE_BOUND_MIN_SITES the orderings refuse, naming the order they found.
  assert.ok(40 * 40 < LATTICE_BOUND_MIN_SITES);
  assert.match(refusal(() => exactInference(engine, isingLattice({ shape: [40, 40], beta: 0.4 }))), /best of the orderings/);
  // A 5000×3 strip (treewidth 3) is solved.
  const strip = exactInference(engine, isingLattice({ shape: [5000, 3], beta: 0.4 }));
  assert.ok(Number.isFinite(strip.logZ));
  // A 100×120 grid of treewidth 100 under maxFlops 2^120 (and the junction tree's limit raised): not proved hopeless
  // by the grid (2^101 configurations ≤ 2^120), so the orderings decide — and refuse, naming theirs.
  const grid = isingLattice({ shape: [100, 120], beta: 0.4 });
  assert.match(refusal(() => exactInference(engine, grid, { method: 'bucket', maxFlops: 2 ** 120 })), /best order/);
  // An observed variable leaves the planners' graph: the grid bound no longer holds as stated.
  const b = new ModelBuilder(new Array(10_000).fill(2));
  for (const [i, j] of latticeBonds([100, 100], false)) b.addPairwise(i, j, [0.4, -0.4, -0.4, 0.4]);
  b.addUnary(5050, [0, -Infinity]);
  const observed = b.build().withLattice({ shape: [100, 100], periodic: false });
  assert.doesNotMatch(refusal(() => exactInference(engine, observed)), /under any elimination order/);
});

test('on workers too: exactInferenceParallel with method bucket refuses a large lattice by its bound, before planning', async () => {
  const { exactInferenceParallel } = await import('../bindings/exact/exact-parallel.ts');
  const grid = isingLattice({ shape: [300, 300], beta: 0.4 });
  const t0 = process.cpuUsage();
  await assert.rejects(exactInferenceParallel(engine, grid, { method: 'bucket', workers: 2 }), (e: unknown) => e instanceof EngineError && /^exact elimination needs treewidth at least 300 under any elimination order/.test(e.message));
  const c = process.cpuUsage(t0);
  assert.ok((c.user + c.system) / 1000 < 150, `${(c.user + c.system) / 1000} ms of CPU time (the search first took seconds)`);
});

test('without a layout (a UAI file), a grid is found from its pair factors, numbered row by row or not, and refused the same way; a row-major grid or 3-D lattice with pairs more, by its numbering; a 3-D lattice by a square on a face', async () => {
  const { readUAI, writeUAI } = await import('../bindings/io/formats.ts');
  const grid = isingLattice({ shape: [120, 250], J: (i, j) => Math.sin(i + 7 * j) / 2, h: 0.1 });
  const file = readUAI(writeUAI(grid), 'grid.uai');
  assert.equal(file.lattice, null);
  let message = '';
  const ms = cpuMs(() => (message = refusal(() => exactInference(engine, file))));
  const square = /^exact elimination needs treewidth at least 120 under any elimination order \(the model's pair factors hold a 120×120 grid \(at a corner of the (120×250|250×120) grid their boundary outlines\), a grid of treewidth 120\)/;
  assert.match(message, square);
  assert.ok(ms < 150, `${ms} ms`);
  const shuffled = renumbered(grid, 3).model;
  const msShuffled = cpuMs(() => (message = refusal(() => exactInference(engine, shuffled))));
  assert.match(message, square);
  assert.ok(msShuffled < 150, `${msShuffled} ms`);
  // A diagonal more in every 10th cell, numbered row by row: no grid under any numbering (variables
  // in five pairs), but every bond of the row-major grid is held.
  const withPairs = (m: Model, pairs: [number, number][]): Model => {
    const b = new ModelBuilder(Array.from(m.card));
    for (let f = 0; f < m.nFactors; f++) b.addFactor(Array.from(m.scope(f)), m.table(f));
    for (const [i, j] of pairs) b.addPairwise(i, j, [0.1, -0.1, -0.1, 0.1]);
    return b.build();
  };
  const every = (step: number, end: number, keep: (v: number) => boolean, far: number): [number, number][] => Array.from({ length: Math.ceil(end / step) }, (_, k): [number, number] => [k * step, k * step + far]).filter(([v]) => keep(v));
  const diagonals = withPairs(grid, every(10, 119 * 250, (v) => v % 250 < 249, 251));
  assert.equal(gridUnderAnyNumbering(diagonals, 128), null);
  assert.match(refusal(() => exactInference(engine, diagonals)), /^exact elimination needs treewidth at least 120 under any elimination order \(the model's pair factors hold every bond of a 120×250 grid over its variables in row-major order, a grid of treewidth 120\)/);
  // 3-D lattices, numbered row by row or not: a square on the face of the corner's two longest
  // edges. A cube's, under a lower maxFlops, is past the limit at side 25.
  const slab = isingLattice({ shape: [10, 40, 40], beta: 0.3 }), onFace = /^exact elimination needs treewidth at least 40 under any elimination order \(the model's pair factors hold a 40×40 grid \(at a corner of a 40×40 face of the 3-D lattice their boundary outlines\), a grid of treewidth 40\)/;
  assert.match(refusal(() => exactInference(engine, readUAI(writeUAI(slab), 'slab.uai'))), onFace);
  assert.match(refusal(() => exactInference(engine, renumbered(slab, 4).model)), onFace);
  const cube = renumbered(isingLattice({ shape: [25, 25, 25], beta: 0.3 }), 5).model;
  const cubeMs = cpuMs(() => (message = refusal(() => exactInference(engine, cube, { maxFlops: 2 ** 20 }))));
  assert.match(message, /^exact elimination needs treewidth at least 25 under any elimination order \(the model's pair factors hold a 25×25 grid \(at a corner of a 25×25 face of the 3-D lattice/);
  assert.ok(cubeMs < 150, `${cubeMs} ms`);
  // With pairs more, numbered row by row: the row-major lattice's bonds, every one checked.
  const slabDiagonals = withPairs(slab, every(7, 9 * 1600, (v) => v % 40 < 39, 1601));
  assert.equal(gridUnderAnyNumbering(slabDiagonals, 128), null);
  assert.match(refusal(() => exactInference(engine, slabDiagonals)), /^exact elimination needs treewidth at least 40 under any elimination order \(the model's pair factors hold every bond of a 10×40×40 lattice over its variables in row-major order, whose 40×40 slab alone has treewidth 40\)/);
  // One diagonal more, renumbered, hides the grid from both: the orderings refuse it, naming theirs.
  assert.match(refusal(() => exactInference(engine, hiddenGrid(grid, 250, 3))), /best order/);
  // A strip numbered row by row (treewidth ≤ 3 there) is solved, not refused.
  assert.ok(Number.isFinite(exactInference(engine, readUAI(writeUAI(isingLattice({ shape: [4000, 3], beta: 0.4 })), 'strip.uai')).logZ));
});

test('a grid under any numbering: a square found only where the coupling pairs hold every bond of it, whatever the numbering, repeats and higher-order factors', () => {
  const bonds = (H: number, W: number): [number, number][] => latticeBonds([H, W], false).map(([i, j]) => [i, j]);
  // A pair given again is a factor more on it (a shared table: addPairwise would sum the two).
  const build = (n: number, pairs: [number, number][], extra?: (b: ModelBuilder) => void, table = (_k: number): number[] => [0.3, -0.3, -0.3, 0.3]): Model => {
    const b = new ModelBuilder(new Array(n).fill(2)), seen = new Set<number>();
    pairs.forEach(([i, j], k) => {
      const key = Math.min(i, j) * n + Math.max(i, j);
      if (seen.has(key)) b.addSharedFactor([i, j], b.shareTable(table(k)));
      else seen.add(key), b.addPairwise(i, j, table(k));
    });
    extra?.(b);
    return b.build();
  };
  // Checked apart from the engine: the square's variables distinct, each bond of it a pair factor that couples.
  const holds = (model: Model, found: { treewidth: number; square: Int32Array }): boolean => {
    const s = found.treewidth, v = found.square, coupled = new Set<string>();
    for (let f = 0; f < model.nFactors; f++) {
      const scope = model.scope(f);
      if (scope.length === 2 && factorCouples(model, f)) coupled.add(`${scope[0]},${scope[1]}`);
    }
    const bond = (a: number, b: number): boolean => coupled.has(`${Math.min(a, b)},${Math.max(a, b)}`);
    if (v.length !== s * s || new Set(v).size !== s * s) return false;
    for (let r = 0; r < s; r++) for (let c = 0; c < s; c++) {
      if (c + 1 < s && !bond(v[r * s + c], v[r * s + c + 1])) return false;
      if (r + 1 < s && !bond(v[r * s + c], v[(r + 1) * s + c])) return false;
    }
    return true;
  };
  for (const [H, W] of [[3, 3], [3, 8], [9, 4], [17, 23], [40, 40]]) {
    for (let seed = 1; seed <= 4; seed++) {
      const model = renumbered(build(H * W, bonds(H, W)), seed).model;
      const got = gridUnderAnyNumbering(model, 128);
      assert.ok(got, `${H}×${W} seed ${seed}`);
      assert.deepEqual([...got.shape].sort((a, b) => a - b), [H, W].sort((a, b) => a - b));
      assert.equal(got.treewidth, Math.min(H, W));
      assert.ok(holds(model, got), `${H}×${W} seed ${seed}: the square's bonds`);
      // A smaller side asked: that square.
      const small = gridUnderAnyNumbering(model, 2);
      assert.equal(small?.treewidth, 2);
      assert.ok(holds(model, small!));
    }
  }
  // Numbered along a snake (rows alternately reversed): steps of 1 and no single row step.
  const H = 30, W = 20, snake = (r: number, c: number): number => r * W + (r % 2 ? W - 1 - c : c);
  const snakePairs = bonds(H, W).map(([i, j]): [number, number] => [snake(Math.floor(i / W), i % W), snake(Math.floor(j / W), j % W)]);
  assert.equal(gridUnderAnyNumbering(build(H * W, snakePairs), 128)?.treewidth, 20);
  // Each pair twice (two factors on it), a factor of three variables over the grid, a unary zero.
  const repeated = build(H * W, [...snakePairs, ...snakePairs.slice(0, 50)], (b) => {
    b.addFactor([3, 40, 555], new Array(8).fill(0.1));
    b.addUnary(7, [0, -Infinity]);
  });
  const found = gridUnderAnyNumbering(repeated, 128);
  assert.deepEqual({ ...found, shape: undefined, square: undefined }, { treewidth: 20, sides: [20, 20], shape: undefined, square: undefined, dims: 2, unaryZeros: true });
  assert.ok(holds(repeated, found!));
  // A zero only in a separable factor of three variables (it forbids x₃ = 1: split into unary factors, it may fix x₃).
  const hiddenZero = build(H * W, snakePairs, (b) => b.addFactor([3, 40, 555], [0, 0, 0, 0, -Infinity, -Infinity, -Infinity, -Infinity]));
  assert.equal(gridUnderAnyNumbering(hiddenZero, 128)?.unaryZeros, true);
  assert.equal(gridUnderAnyNumbering(build(H * W, snakePairs), 128)?.unaryZeros, false);
  // Pairs that couple nothing: diagonals more (left out: the coupling pairs alone are the grid), and
  // a bond of the square that couples nothing (no square; the same bond outside a smaller square: that one).
  const g = bonds(12, 15), separable = [0.1, 0.2, 0.3, 0.4];
  const diagonals = build(180, [...g, ...g.filter(([i, j]) => j === i + 1 && i < 165).map(([i]): [number, number] => [i, i + 16])], undefined, (k) => (k < g.length ? [0.3, -0.3, -0.3, 0.3] : separable));
  const withDiagonals = gridUnderAnyNumbering(renumbered(diagonals, 2).model, 128);
  assert.equal(withDiagonals?.treewidth, 12);
  const zeroBond = g.findIndex(([i, j]) => i === 5 * 15 + 5 && j === 5 * 15 + 6);
  const cut = build(180, g, undefined, (k) => (k === zeroBond ? separable : [0.3, -0.3, -0.3, 0.3]));
  assert.equal(gridUnderAnyNumbering(cut, 128), null, 'a bond of the square couples nothing');
  const corner = gridUnderAnyNumbering(cut, 4);
  assert.ok(corner && corner.treewidth === 4 && holds(cut, corner), 'a square beside the bond that couples nothing');
  // Not grids: ladders and chains, a torus, a missing bond, a diagonal more, two grids side by side.
  assert.equal(gridUnderAnyNumbering(build(2 * 30, bonds(2, 30)), 128), null, 'a ladder (treewidth 2)');
  assert.equal(gridUnderAnyNumbering(build(30, bonds(1, 30)), 128), null, 'a chain');
  assert.equal(gridUnderAnyNumbering(isingLattice({ shape: [10, 10], beta: 0.3, periodic: true }), 128), null, 'a torus');
  assert.equal(gridUnderAnyNumbering(build(180, g.filter((_, k) => k !== 77)), 128), null, 'a bond missing');
  assert.equal(gridUnderAnyNumbering(build(180, [...g, [0, 16]]), 128), null, 'a diagonal more');
  // Between the last column and the last row: no corner lost and every step of the walk still has one way on; the pair count sees it.
  assert.equal(gridUnderAnyNumbering(build(180, [...g, [3 * 15 + 14, 11 * 15 + 3]]), 128), null, 'a pair more between two sides');
  assert.equal(gridUnderAnyNumbering(build(360, [...g, ...g.map(([i, j]): [number, number] => [i + 180, j + 180])]), 128), null, 'two grids');
  // Past the first chunk of factors the engine reads (8192): a 100×120 grid renumbered, whole, with a
  // bond missing, with a pair more, and with its last 9000 pairs given twice.
  const big = bonds(100, 120), shuffle = (pairs: [number, number][], seed: number): Model => renumbered(build(12_000, pairs), seed).model;
  const bigFound = gridUnderAnyNumbering(shuffle(big, 5), 128);
  assert.deepEqual([bigFound?.sides, [...bigFound!.shape].sort((a, b) => a - b)], [[100, 100], [100, 120]]);
  assert.ok(holds(shuffle(big, 5), bigFound!));
  assert.equal(gridUnderAnyNumbering(shuffle(big.filter((_, k) => k !== 20_000), 6), 128), null, 'a big grid less a bond');
  assert.equal(gridUnderAnyNumbering(shuffle([...big, [5 * 120 + 7, 90 * 120 + 50]], 7), 128), null, 'a big grid and a pair more');
  assert.deepEqual(gridUnderAnyNumbering(shuffle([...big, ...big.slice(-9000)], 8), 128)?.sides, [100, 100], 'pairs repeated');
  // Two bonds swapped for two non-bonds (degrees and pair count unchanged): a square is found only
  // where it holds; on a 12×15 grid the staircase walks nearly all of it, so most swaps are seen.
  const rand = mulberry32(91);
  let swapped = 0, seen = 0;
  for (let trial = 0; trial < 200; trial++) {
    const a = Math.floor(rand() * g.length), b = Math.floor(rand() * g.length);
    const [p, q] = g[a], [r, t] = g[b];
    const pairs = new Set(g.map(([i, j]) => `${i},${j}`));
    const key = (i: number, j: number): string => `${Math.min(i, j)},${Math.max(i, j)}`;
    // p–r and q–t instead of p–q and r–t, when both are new pairs and no bonds.
    if (new Set([p, q, r, t]).size < 4 || pairs.has(key(p, r)) || pairs.has(key(q, t))) continue;
    const rewired = renumbered(build(180, g.filter((_, k) => k !== a && k !== b).concat([[Math.min(p, r), Math.max(p, r)], [Math.min(q, t), Math.max(q, t)]])), trial).model;
    const got = gridUnderAnyNumbering(rewired, 128);
    if (got === null) seen++;
    else assert.ok(holds(rewired, got), `swap ${p}–${q}, ${r}–${t}: a square that does not hold`);
    swapped++;
  }
  assert.ok(swapped > 100 && seen > swapped / 2, `${seen} of ${swapped} swaps seen`);
  // One to three swaps on small grids, not renumbered: every square found holds. Among them, on a
  // 4×4 grid, (2, 3) and (14, 15) swapped for (2, 14) and (3, 15): column 0's boundary path ran on
  // past the last row, and the engine wrote its sites past the end of their buffer (the heap then
  // failed later, in some call after).
  const swapsRand = mulberry32(7);
  // `swaps` times p–q and r–t replaced by p–r and q–t, when both are new pairs (degrees and pair count unchanged).
  const withSwaps = (from: [number, number][], swaps: number): [number, number][] => {
    let pairs = from.slice();
    for (let k = 0; k < swaps; k++) {
      const a = Math.floor(swapsRand() * pairs.length), b = Math.floor(swapsRand() * pairs.length);
      const [p, q] = pairs[a], [r, t] = pairs[b];
      const have = new Set(pairs.map(([i, j]) => `${i},${j}`)), key = (i: number, j: number): string => `${Math.min(i, j)},${Math.max(i, j)}`;
      if (new Set([p, q, r, t]).size < 4 || have.has(key(p, r)) || have.has(key(q, t))) continue;
      pairs = pairs.filter((_, j) => j !== a && j !== b).concat([[Math.min(p, r), Math.max(p, r)], [Math.min(q, t), Math.max(q, t)]]);
    }
    return pairs;
  };
  let squares = 0;
  for (const [h, w] of [[4, 4], [5, 5], [4, 6], [6, 6]]) {
    const g0 = bonds(h, w);
    for (let trial = 0; trial < 1000; trial++) {
      const pairs = withSwaps(g0, 1 + Math.floor(swapsRand() * 3));
      const model = build(h * w, pairs), got = gridUnderAnyNumbering(model, 128);
      if (got) assert.ok(holds(model, got), `${h}×${w} pairs ${JSON.stringify(pairs)}`), squares++;
    }
  }
  assert.ok(squares > 100, `${squares} squares`);
  const runsOn = bonds(4, 4).filter(([i, j]) => !(i === 2 && j === 3) && !(i === 14 && j === 15)).concat([[2, 14], [3, 15]]);
  assert.equal(gridUnderAnyNumbering(build(16, runsOn), 128), null);
  assert.equal(gridUnderAnyNumbering(build(400, bonds(20, 20)), 128)?.treewidth, 20, 'the engine whole after');
  // 3-D lattices with bonds swapped, renumbered: a square is found only where it holds.
  let cubeSquares = 0;
  for (const shape of [[4, 4, 4], [3, 5, 6], [5, 5, 5]]) {
    const n3 = shape[0] * shape[1] * shape[2], g3 = latticeBonds(shape, false).map(([i, j]): [number, number] => [i, j]);
    for (let trial = 0; trial < 300; trial++) {
      const pairs = withSwaps(g3, Math.floor(swapsRand() * 3));
      const model = renumbered(build(n3, pairs), trial).model, got = gridUnderAnyNumbering(model, 128);
      if (got) assert.ok(got.dims === 3 && holds(model, got), `${shape} pairs ${JSON.stringify(pairs)}`), cubeSquares++;
    }
  }
  assert.ok(cubeSquares > 100, `${cubeSquares} squares on 3-D lattices`);
  // Every pair twice: counted with repeats no variable is on a surface (the lists for the surface
  // find nothing), and the lists of every variable find the face's square.
  const n6 = 6 * 12 * 14, perm = renumbered(build(n6, []), 9).perm;
  const twice = latticeBonds([6, 12, 14], false).map(([i, j]): [number, number] => [perm[i], perm[j]]);
  const doubled = build(n6, [...twice, ...twice]), onFace = gridUnderAnyNumbering(doubled, 128);
  assert.equal(doubled.nFactors, 2 * twice.length);
  assert.ok(onFace?.dims === 3 && onFace.treewidth === 12 && holds(doubled, onFace), 'every pair repeated');
  // A pair more between two variables of each 12×14 face, next to every corner: those variables are
  // in six pairs, on no surface; the walk that reaches one leaves the surface's lists, and the lists of
  // every variable find the square.
  const at = (x: number, y: number, z: number): number => perm[(x * 12 + y) * 14 + z];
  const faceExtra = [0, 5].flatMap((x) => [[1, 1], [1, 12], [10, 1], [10, 12]].map(([y, z]): [number, number] => [at(x, y, z), at(x, y < 6 ? 5 : 6, z < 6 ? 6 : 7)]));
  const extra = build(n6, [...twice, ...faceExtra]), withExtra = gridUnderAnyNumbering(extra, 128);
  assert.ok(withExtra?.dims === 3 && withExtra.treewidth === 12 && holds(extra, withExtra), 'face variables in six pairs');
});
