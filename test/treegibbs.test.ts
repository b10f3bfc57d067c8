// Tree-block Gibbs (bindings/treeblocks.ts, bindings/treegibbs.ts, assembly/treegibbs.ts):
//   * the partition: every block induces a forest, the blocks cover every variable once, parents
//     come before their children; on 10×10 grids (open and periodic) it has two blocks;
//   * the transition leaves p invariant: marginals within 4 MCSE of enumeration at fixed seeds
//     (binary models take the free-bit fast path, multi-valued ones and hard zeros the general one),
//     also for tempered models (every log potential × β, zeros kept); and the exact one-step kernel:
//     from a fixed state, the empirical distribution after one sweep against the kernel computed by
//     enumeration (chi-square), with a power check against a different kernel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { TreeGibbsSampler } from '../bindings/samplers/treegibbs.ts';
import { treePartition, partitionFromBlocks, interactionGraph, validatePartition, type TreePartition } from '../bindings/samplers/treeblocks.ts';
import { runAIS } from '../bindings/logz/logz.ts';
import { toCanonical } from '../bindings/core/canonical.ts';
import { BatchMeans } from '../bindings/samplers/estimators.ts';
import { driveChains, bitMarginals, range } from '../bindings/samplers/chains.ts';
import { Model, ModelBuilder } from '../bindings/core/model.ts';
import { isingLattice, pottsLattice } from '../bindings/core/builders.ts';
import { readUAI } from '../bindings/io/formats.ts';
import { ModelError } from '../bindings/core/errors.ts';
import { bruteForce, mulberry32, randomModel, dataDir } from './helpers.ts';

const engine = await loadEngine();

/** Every log potential × β (β > 0: zeros stay zeros). */
function tempered(m: Model, beta: number): Model {
  return new Model({ ...m.toData(), tables: m.tables.map((x) => x * beta), logConst: m.logConst * beta });
}

/** Throws unless p is a valid tree partition of the model's interaction graph. */
function checkPartition(model: Model, p: TreePartition): void {
  const adj = interactionGraph(toCanonical(model));
  const n = model.n;
  const seen = new Int32Array(n).fill(-1);
  p.blocks.forEach((list, b) => {
    assert.ok(list.length > 0, `block ${b} is empty`);
    const pos = new Map<number, number>();
    list.forEach((v, i) => {
      assert.equal(seen[v], -1, `variable ${v} in two blocks`);
      seen[v] = b;
      pos.set(v, i);
      assert.equal(p.block[v], b);
    });
    // Induced edges of the block; a forest has exactly |V| − (number of trees) of them.
    let edges = 0, roots = 0;
    for (const v of list) {
      for (const w of adj[v]) if (w > v && p.block[w] === b) edges++;
      const par = p.parent[v];
      if (par < 0) roots++;
      else {
        assert.equal(p.block[par], b, `parent of ${v} outside its block`);
        assert.ok(adj[v].includes(par), `parent of ${v} is not a neighbour`);
        assert.ok(pos.get(par)! < pos.get(v)!, `parent of ${v} comes after it`);
      }
    }
    assert.equal(roots, p.trees[b]);
    assert.equal(edges, list.length - roots, `block ${b}: ${edges} induced edges on ${list.length} variables in ${roots} trees — not a forest`);
  });
  for (let v = 0; v < n; v++) assert.notEqual(seen[v], -1, `variable ${v} in no block`);
}

test('tree partitions: induced forests covering every variable once, on random models, lattices and UAI grids', () => {
  const rand = mulberry32(31);
  const models: [string, Model][] = [];
  for (let t = 0; t < 6; t++) models.push([`random n = ${10 + 5 * t}, density ${0.1 + 0.1 * t}`, randomModel(rand, 10 + 5 * t, { cards: [2, 3], density: 0.1 + 0.1 * t })]);
  models.push(['open 10×10 Ising', isingLattice({ shape: [10, 10], beta: 0.4 })]);
  models.push(['periodic 10×10 Ising', isingLattice({ shape: [10, 10], periodic: true, beta: 0.4 })]);
  models.push(['periodic 32×32 Ising', isingLattice({ shape: [32, 32], periodic: true, beta: 0.4 })]);
  models.push(['periodic 6×6×6 Ising', isingLattice({ shape: [6, 6, 6], periodic: true, beta: 0.2 })]);
  models.push(['periodic 5×5 Potts q = 3', pottsLattice({ shape: [5, 5], q: 3, J: 0.6, periodic: true })]);
  for (const g of ['Grids_11', 'Grids_12']) models.push([g, readUAI(readFileSync(join(dataDir(), 'uai2014', `${g}.uai`), 'utf8'), `${g}.uai`)]);
  for (const [name, model] of models) {
    const p = treePartition(toCanonical(model));
    checkPartition(model, p);
    console.log(`# ${name}: ${p.blocks.length} blocks (sizes ${p.blocks.map((b) => b.length).join(', ')}; trees ${p.trees.join(', ')}; order ${p.order})`);
    // Grids, open or periodic, need only two blocks (a 4-regular torus has no induced forest over more than ~2/3 of it).
    if (/10×10|32×32|Grids/.test(name)) assert.equal(p.blocks.length, 2, name);
  }
});

test('partitionFromBlocks: accepts induced forests, rejects a block with a cycle; the checker itself catches a cycle', () => {
  const model = isingLattice({ shape: [4, 4], beta: 0.3 });
  const form = toCanonical(model);
  // Two combs on the open 4×4 grid: rows 0 and 2 (but their last site) plus column 0; the rest.
  const comb = Array.from({ length: 16 }, (_, i) => {
    const r = Math.floor(i / 4), c = i % 4;
    return (r % 2 === 0 ? c <= 2 : c === 0) ? 0 : 1;
  });
  const p = partitionFromBlocks(form, comb, 'combs');
  checkPartition(model, p);
  assert.deepEqual(p.trees, [1, 1]);
  // Rows 0 and 1 together hold a 4-cycle.
  assert.throws(() => partitionFromBlocks(form, Array.from({ length: 16 }, (_, i) => (i < 8 ? 0 : 1))), ModelError);
  assert.throws(() => partitionFromBlocks(form, new Array(15).fill(0)), ModelError);
  // A forged partition whose block 0 is all 16 sites (a grid: cycles) fails checkPartition.
  const forged: TreePartition = { ...p, blocks: [Int32Array.from(range(16))], block: new Int32Array(16), trees: [1] };
  assert.throws(() => checkPartition(model, forged));
  // The samplers check a partition they are given the same way (the kernel indexes by it).
  assert.throws(() => new TreeGibbsSampler(engine, model, forged), ModelError);
  // Valid parent links 1→0, 4→0, 5→1, but sites 4 and 5 are neighbours too: a 4-cycle in block 0.
  const rest = range(16).filter((v) => ![0, 1, 4, 5].includes(v));
  const cyclic: TreePartition = {
    n: 16,
    blocks: [Int32Array.from([0, 1, 4, 5]), ...rest.map((v) => Int32Array.from([v]))],
    parent: Int32Array.from(range(16), (v) => ({ 1: 0, 4: 0, 5: 1 })[v] ?? -1),
    block: Int32Array.from(range(16), (v) => ([0, 1, 4, 5].includes(v) ? 0 : 1 + rest.indexOf(v))),
    trees: [1, ...rest.map(() => 1)],
    order: 'forged',
  };
  assert.throws(() => new TreeGibbsSampler(engine, model, cyclic), /block 0 is not an induced forest/);
  assert.throws(() => validatePartition(form, forged), ModelError);
  validatePartition(form, p);
  const swap = (list: Int32Array) => Int32Array.from([list[1], list[0], ...list.subarray(2)]);
  const childFirst: TreePartition = { ...p, blocks: [swap(p.blocks[0]), p.blocks[1]] };
  assert.throws(() => validatePartition(form, childFirst), /parent/);
  const twice: TreePartition = { ...p, blocks: [Int32Array.from([...p.blocks[0], p.blocks[1][0]]), p.blocks[1]] };
  assert.throws(() => validatePartition(form, twice), ModelError);
  assert.throws(() => partitionFromBlocks(form, comb.map((b, i) => (i === 5 ? 2 ** 31 - 2 : b))), /bad block number/);
  assert.throws(() => runAIS(engine, model, { runs: 2, steps: 10, transition: 'gibbs', partition: p }), /applies to transition 'tree'/);
});

/** Tree-block Gibbs marginals (empirical, batch means over 4 chains) against enumeration. */
function treeMarginals(model: Model, seed: number, samples: number) {
  const sampler = new TreeGibbsSampler(engine, model);
  try {
    const stats = new BatchMeans(sampler.form.nBits);
    const finished = driveChains(sampler, { seed, chains: range(4), samples, burnin: 200, batches: 20, chunk: 5000 }, { onBatch: (_c, sums, len) => stats.addBatch(sums, len) });
    assert.ok(finished);
    return { ...bitMarginals(sampler.form, stats), blocks: sampler.partition.blocks.length };
  } finally {
    sampler.dispose();
  }
}

function assertWithinMCSE(name: string, model: Model, seed: number, samples = 20000, maxSE = 0.01): void {
  const exact = bruteForce(model);
  assert.ok(Number.isFinite(exact.logZ), `${name}: Z = 0`);
  const r = treeMarginals(model, seed, samples);
  const N = 4 * samples;
  let worst = 0;
  r.marginals.forEach((row, v) => {
    row.forEach((p, k) => {
      const q = exact.marginals[v][k];
      // Batch means see no spread in a state the chains never visited; the standard error of N
      // independent draws is a floor for any chain's (a variable fixed by zeros has both 0).
      const se = Math.max(r.marginalStdErr[v][k], Math.sqrt((q * (1 - q)) / N));
      assert.ok(se < maxSE, `${name}: variable ${v} state ${k}: standard error ${se} too large for a meaningful test`);
      const tol = 4 * se + 1e-12;
      worst = Math.max(worst, Math.abs(p - exact.marginals[v][k]) / (se || 1));
      assert.ok(Math.abs(p - exact.marginals[v][k]) <= tol, `${name}: variable ${v} state ${k}: ${p} vs exact ${exact.marginals[v][k]} (tolerance ${tol})`);
    });
  });
  console.log(`# ${name}: ${r.blocks} tree blocks, worst error ${worst.toFixed(2)} SE`);
}

test('tree-block Gibbs leaves p invariant: binary models (free-bit path), marginals within 4 MCSE of enumeration', () => {
  const rand = mulberry32(41);
  for (let t = 0; t < 5; t++) assertWithinMCSE(`binary n = ${7 + t}`, randomModel(rand, 7 + t, { density: 0.5, scale: 1.5 }), 10 + t);
  const r2 = mulberry32(5);
  assertWithinMCSE('4×4 Ising grid, random couplings', isingLattice({ shape: [4, 4], J: () => r2() - 0.5, h: Array.from({ length: 16 }, () => 0.5 * r2() - 0.25) }), 4);
});

test('tree-block Gibbs leaves p invariant: multi-valued models and hard zeros (general path), marginals within 4 MCSE', () => {
  const rand = mulberry32(42);
  for (let t = 0; t < 4; t++) assertWithinMCSE(`K ∈ {2, 3, 4}, n = ${6 + t}`, randomModel(rand, 6 + t, { cards: [2, 3, 4], density: 0.5, scale: 1.5 }), 20 + t);
  for (let t = 0, done = 0; done < 3; t++) {
    // Random zeros can leave no configuration at all; such draws are skipped (deterministically).
    const m = randomModel(rand, 7 + done, { cards: [2, 3], density: 0.5, scale: 1, zeros: 0.15 });
    if (!Number.isFinite(bruteForce(m).logZ)) continue;
    assertWithinMCSE(`K ∈ {2, 3}, zeros, n = ${7 + done}`, m, 30 + t);
    done++;
  }
  // The hard-core model on a 10-cycle with a chord: no two neighbours both on.
  const b = new ModelBuilder(new Array(10).fill(2));
  const r = mulberry32(7);
  for (let v = 0; v < 10; v++) b.addUnary(v, [0, r() - 0.2]);
  for (let v = 0; v < 10; v++) b.addPairwise(v, (v + 1) % 10, [0, 0, 0, -Infinity]);
  b.addPairwise(0, 5, [0, 0, 0, -Infinity]);
  assertWithinMCSE('hard-core model', b.build(), 3);
  assertWithinMCSE('3×3 periodic Potts q = 3', pottsLattice({ shape: [3, 3], q: 3, J: 0.6, periodic: true }), 5);
});

test('tree-block Gibbs at inverse temperature β (every log potential × β, zeros kept): marginals within 4 MCSE', () => {
  const rand = mulberry32(43);
  for (const beta of [0.3, 2.5]) {
    assertWithinMCSE(`binary n = 10, β = ${beta}`, tempered(randomModel(rand, 10, { density: 0.5, scale: 1 }), beta), 50);
    assertWithinMCSE(`K ∈ {2, 3}, zeros, n = 8, β = ${beta}`, tempered(randomModel(rand, 8, { cards: [2, 3], density: 0.5, scale: 1, zeros: 0.1 }), beta), 51);
  }
});

test('the marginal check has power: sampling one model against another model’s exact marginals fails', () => {
  const rand = mulberry32(9);
  const m = randomModel(rand, 8, { density: 0.5 });
  const other = randomModel(rand, 8, { density: 0.5 });
  const r = treeMarginals(m, 1, 20000);
  const ex = bruteForce(other);
  let worst = 0;
  r.marginals.forEach((row, v) => (worst = Math.max(worst, Math.abs(row[1] - ex.marginals[v][1]) / r.marginalStdErr[v][1])));
  assert.ok(worst > 20, `only ${worst} standard errors apart`);
});

// The exact one-step kernel. For the partition's blocks B_1, …, B_m (in sweep order), one sweep
// from x draws x' with probability Π_b p(x'_{B_b} | x'_{B_<b}, x_{B_>b}); by enumeration over x'.
function sweepKernel(model: Model, p: TreePartition, x0: Int32Array): Map<string, number> {
  const n = model.n;
  const out = new Map<string, number>();
  const configs: Int32Array[] = [];
  const x = new Int32Array(n);
  for (;;) {
    configs.push(x.slice());
    let v = n - 1;
    while (v >= 0 && ++x[v] === model.card[v]) x[v--] = 0;
    if (v < 0) break;
  }
  for (const target of configs) {
    let prob = 1;
    const cur = x0.slice();
    for (const list of p.blocks) {
      // p(x'_B | rest): over every assignment of the block's variables with the rest at cur.
      const lp = (assign: Int32Array) => model.logPotential(assign);
      const inBlock = new Set(list);
      let total = 0, hit = 0;
      for (const c of configs) {
        let same = true;
        for (let v = 0; v < n && same; v++) if (!inBlock.has(v) && c[v] !== cur[v]) same = false;
        if (!same) continue;
        const w = Math.exp(lp(c));
        total += w;
        let match = true;
        for (const v of list) if (c[v] !== target[v]) match = false;
        if (match) hit += w;
      }
      prob *= hit / total;
      for (const v of list) cur[v] = target[v];
    }
    if (prob > 0) out.set(target.join(','), prob);
  }
  return out;
}

/** Chi-square statistic of counts against probabilities (cells with expected count < 5 pooled). */
function chiSquare(counts: Map<string, number>, probs: Map<string, number>, N: number): { stat: number; df: number; outside: number } {
  let stat = 0, df = -1, poolE = 0, poolO = 0, outside = 0;
  for (const [k, p] of probs) {
    const e = N * p, o = counts.get(k) ?? 0;
    if (e < 5) {
      poolE += e;
      poolO += o;
      continue;
    }
    stat += (o - e) ** 2 / e;
    df++;
  }
  for (const [k, o] of counts) if (!probs.has(k)) outside += o;
  if (poolE > 0) {
    stat += (poolO - poolE) ** 2 / poolE;
    df++;
  }
  return { stat, df, outside };
}

/** Upper 10⁻⁴ quantile of χ²_df (Wilson–Hilferty). */
function chiSquareQuantile(df: number): number {
  const z = 3.719; // standard normal upper 10⁻⁴ point
  return df * (1 - 2 / (9 * df) + z * Math.sqrt(2 / (9 * df))) ** 3;
}

test('one tree-block sweep from a fixed state draws from the exact kernel (chi-square), binary and multi-valued with zeros', () => {
  const rand = mulberry32(77);
  const models: [string, Model][] = [
    ['binary n = 7', randomModel(rand, 7, { density: 0.6, scale: 1.5 })],
    ['K ∈ {2, 3}, zeros, n = 6', randomModel(rand, 6, { cards: [2, 3], density: 0.6, scale: 1.5, zeros: 0.15 })],
  ];
  for (const [name, model] of models) {
    const sampler = new TreeGibbsSampler(engine, model);
    try {
      const p = sampler.partition;
      assert.ok(p.blocks.length >= 2, `${name}: a single block would make the test one of exact sampling only`);
      // A starting state of positive probability: the exact mode.
      let x0 = new Int32Array(model.n), best = -Infinity;
      const x = new Int32Array(model.n);
      for (;;) {
        const lp = model.logPotential(x);
        if (lp > best) {
          best = lp;
          x0 = x.slice();
        }
        let v = model.n - 1;
        while (v >= 0 && ++x[v] === model.card[v]) x[v--] = 0;
        if (v < 0) break;
      }
      const kernel = sweepKernel(model, p, x0);
      const N = 20000;
      const counts = new Map<string, number>();
      const state = sampler.init(3, 0);
      for (let t = 0; t < N; t++) {
        sampler.setConfiguration(state, x0);
        sampler.step(state, 1);
        const key = sampler.configuration(state).join(',');
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      const c = chiSquare(counts, kernel, N);
      const limit = chiSquareQuantile(c.df);
      console.log(`# ${name}: ${p.blocks.length} blocks, χ² = ${c.stat.toFixed(1)} on ${c.df} df (limit ${limit.toFixed(1)})`);
      assert.equal(c.outside, 0, `${name}: ${c.outside} draws where the kernel is 0`);
      assert.ok(c.df >= 5, `${name}: too few cells (${c.df} df) for the test to mean anything`);
      assert.ok(c.stat < limit, `${name}: χ² ${c.stat} ≥ ${limit} on ${c.df} df`);
      // Power: the same draws against the kernel of the blocks swept in the other order.
      const reversed: TreePartition = { ...p, blocks: p.blocks.slice().reverse(), trees: p.trees.slice().reverse() };
      const wrong = chiSquare(counts, sweepKernel(model, reversed, x0), N);
      assert.ok(wrong.stat > 4 * chiSquareQuantile(wrong.df) || wrong.outside > 0, `${name}: reversed order gives χ² ${wrong.stat} on ${wrong.df} df — the check has no power`);
    } finally {
      sampler.dispose();
    }
  }
});

test('TreeGibbsSampler: deterministic at a fixed seed, use after dispose throws', () => {
  const m = randomModel(mulberry32(1), 9, { cards: [2, 3] });
  const s = new TreeGibbsSampler(engine, m);
  const a = s.init(42, 0), b = s.init(42, 0), c = s.init(42, 1);
  s.step(a, 10);
  s.step(b, 10);
  s.step(c, 10);
  assert.deepEqual(s.configuration(a), s.configuration(b));
  assert.notDeepEqual(s.configuration(a), s.configuration(c));
  assert.throws(() => s.step(a, 0), /sweeps must be an integer in \[1, 2147483647\]/);
  const info = s.step(a, 5);
  assert.ok(info.changeRate > 0 && info.changeRate <= 1);
  s.dispose();
  assert.throws(() => s.step(a, 1));
});

test('states never sampled that no factor rules out: a warning that 0 ± 0 bounds nothing (ObjectDetection_13: states of probability ≈ 10⁻⁴ read 0 ± 0, silently); states ruled out (also through evidence and a hard equality) and visited ones say nothing', async () => {
  const { ModelBuilder } = await import('../bindings/core/model.ts');
  const { infer } = await import('../bindings/infer.ts');
  const b = new ModelBuilder([2, 3, 2]);
  b.addUnary(0, [0, -14]); // p(x0 = 1) ≈ 8·10⁻⁷: never drawn in 8000 draws
  b.addUnary(1, [0, 0, -Infinity]); // x1 = 2 forbidden
  b.addPairwise(0, 1, [0.2, 0, 0.1, 0, 0.3, 0]);
  b.addPairwise(1, 2, [0.1, 0.2, 0, 0.3, 0.1, 0]);
  const m = b.build();
  const r = infer(engine, m, { method: 'treegibbs', seed: 3 });
  assert.equal(r.marginals[0][1], 0);
  assert.ok((r.warnings ?? []).some((w) => /^1 state of 1 variable that no factor rules out was never sampled: its marginal reads 0 with a standard error of 0, which bounds nothing .* 8000 draws/.test(w)), String(r.warnings));
  const g = infer(engine, m, { method: 'gibbs', seed: 3 });
  assert.ok(!(g.warnings ?? []).some((w) => /never sampled/.test(w)));
  const mild = new ModelBuilder([2, 3, 2]);
  mild.addUnary(1, [0, 0, -Infinity]);
  mild.addPairwise(0, 1, [0.2, 0, 0.1, 0, 0.3, 0]);
  const none = infer(engine, mild.build(), { method: 'treegibbs', seed: 3 });
  assert.ok(!(none.warnings ?? []).some((w) => /never sampled/.test(w)), String(none.warnings));
  // Ruled out through a hard equality with an observed variable: probability 0, no warning.
  const tied = new ModelBuilder([2, 2]);
  tied.addUnary(0, [0, -Infinity]);
  tied.addPairwise(0, 1, [0, -Infinity, -Infinity, 0]);
  const t = infer(engine, tied.build(), { method: 'treegibbs', seed: 3 });
  assert.equal(t.marginals[1][1], 0);
  assert.ok(!(t.warnings ?? []).some((w) => /never sampled/.test(w)), String(t.warnings));
});
