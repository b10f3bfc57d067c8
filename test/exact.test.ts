// Exact inference: enumeration and elimination against brute force, against each other, and against
// published answers (libDAI's testfast.fg, the UAI 2014 pairwise instances).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { exactInference, eliminationPlan, eliminationMemory, exactTuning, ORDERINGS, type ExactResult } from '../bindings/exact/exact.ts';
import { Model, ModelBuilder } from '../bindings/core/model.ts';
import { EngineError } from '../bindings/core/errors.ts';
import { readUAI, readFGWithLabels, readPR, readMAR } from '../bindings/io/formats.ts';
import { atPublishedDigits, bruteForce, mulberry32, randomModel, dataDir } from './helpers.ts';

const engine = await loadEngine();

function maxMarginalError(a: ArrayLike<ArrayLike<number>>, b: ArrayLike<ArrayLike<number>>): number {
  let e = 0;
  for (let v = 0; v < a.length; v++) for (let k = 0; k < a[v].length; k++) e = Math.max(e, Math.abs(a[v][k] - b[v][k]));
  return e;
}

function grid(L: number, J: number, h = 0): Model {
  const b = new ModelBuilder(new Array(L * L).fill(2));
  for (let r = 0; r < L; r++) {
    for (let c = 0; c < L; c++) {
      const v = r * L + c;
      b.addUnary(v, [0, h * (((r * 7 + c * 3) % 5) - 2)]);
      if (c + 1 < L) b.addPairwise(v, v + 1, [J, -J, -J, J]);
      if (r + 1 < L) b.addPairwise(v, v + L, [J, -J, -J, J]);
    }
  }
  return b.build();
}

test('random small models: enumeration = elimination (every ordering) = brute force, to 1e-10', () => {
  const rand = mulberry32(2024);
  for (let t = 0; t < 150; t++) {
    const n = 1 + Math.floor(rand() * 9);
    // Densities from empty (isolated variables) through sparse forests to dense graphs.
    const density = [0, 0.15, 0.3, 0.6, 1][t % 5];
    const model = randomModel(rand, n, { cards: [2, 3, 4], density, zeros: t % 3 === 0 ? 0.25 : 0, scale: 2 });
    const truth = bruteForce(model);
    const runs: [string, ExactResult][] = [['enumeration', exactInference(engine, model, { method: 'enumeration' })]];
    for (const o of ORDERINGS) runs.push([`elimination/${o}`, exactInference(engine, model, { method: 'elimination', orderings: [o] })]);
    for (const [name, r] of runs) {
      if (!Number.isFinite(truth.logZ)) {
        // Brute force gives NaN/−∞ when every configuration has zero potential.
        assert.ok(Array.from(truth.marginals[0]).every((p) => !Number.isFinite(p) || p === 0));
        assert.equal(r.logZ, -Infinity, `model ${t} ${name}`);
        continue;
      }
      const err = Math.max(Math.abs(r.logZ - truth.logZ), maxMarginalError(r.marginals, truth.marginals));
      assert.ok(err <= 1e-10, `model ${t} (${n} variables, density ${density}) ${name}: error ${err}`);
    }
  }
});

test('cardinality-1 variables, isolated variables and a disconnected forest', () => {
  const b = new ModelBuilder([2, 1, 3, 2, 4, 1, 2]);
  b.addUnary(0, [0.3, -0.2]).addUnary(2, [0, 1, -1]).addUnary(6, [2, 0]);
  b.addPairwise(0, 1, [0.5, -0.5]); // pairwise with a single-state variable acts as a unary
  b.addPairwise(2, 3, [0, 1, 2, 3, 4, 5]);
  b.addPairwise(3, 4, [1, 0, -1, 0, 0, 1, -Infinity, 2]);
  b.addConstant(-1.25);
  const model = b.build();
  const truth = bruteForce(model);
  for (const method of ['enumeration', 'elimination'] as const) {
    const r = exactInference(engine, model, { method });
    assert.ok(Math.abs(r.logZ - truth.logZ) < 1e-12, `${method} log Z`);
    assert.ok(maxMarginalError(r.marginals, truth.marginals) < 1e-12, `${method} marginals`);
    assert.deepEqual(Array.from(r.marginals[5]), [1]);
  }
});

test('a model with zero total potential: log Z = −Infinity, and reading marginals throws', () => {
  const b = new ModelBuilder([2, 2, 3]);
  b.addPairwise(0, 1, [0, -Infinity, -Infinity, 0]);
  b.addPairwise(1, 2, [-Infinity, -Infinity, -Infinity, 0, 0, 0]);
  b.addUnary(0, [-Infinity, 0]);
  b.addUnary(2, [0, 0, 1]);
  const model = b.build();
  // x1 = 1 is forced by (1, 2); then x0 = 1 by (0, 1) — allowed by the unary: one more factor kills it.
  const dead = new ModelBuilder([2, 2, 3]);
  dead.addPairwise(0, 1, [0, -Infinity, -Infinity, 0]);
  dead.addPairwise(1, 2, [-Infinity, -Infinity, -Infinity, 0, 0, 0]);
  dead.addUnary(0, [0, -Infinity]);
  assert.ok(Number.isFinite(bruteForce(model).logZ));
  for (const method of ['enumeration', 'elimination'] as const) {
    const r = exactInference(engine, dead.build(), { method });
    assert.equal(r.logZ, -Infinity, method);
    assert.throws(() => r.marginals, (e: unknown) => e instanceof EngineError && /zero potential/.test(e.message), method);
    const ok = exactInference(engine, model, { method });
    assert.ok(Math.abs(ok.logZ - bruteForce(model).logZ) < 1e-12);
  }
});

test('potentials spanning more than the floating-point range: elimination refuses, naming the methods that work; auto falls back to bucket elimination', () => {
  // x0's factor wants x1 = 0 by ≈ 1000 nats, x1's own unary wants x1 = 1 by 1000 nats: in natural
  // order the message from x0 times x1's table underflows everywhere. (The factor couples x0 and x1
  // by 1 nat: one that did not, [0, −1000, 0, −1000], is split into a unary of x1 before planning.)
  const b = new ModelBuilder([2, 2, 2]);
  b.addPairwise(0, 1, [0, -1000, 0, -999]);
  b.addUnary(1, [-1000, 0]);
  b.addPairwise(1, 2, [0, 0.5, 0.5, 0]);
  const model = b.build();
  const truth = bruteForce(model);
  assert.throws(
    () => exactInference(engine, model, { method: 'elimination', orderings: ['natural'] }),
    (e: unknown) => e instanceof EngineError && /floating-point range.*method 'auto' \(the default\) or 'bucket'/.test(e.message),
  );
  // auto falls back to bucket elimination (log space throughout).
  const r = exactInference(engine, model, { orderings: ['natural'] });
  assert.equal(r.algorithm, 'bucket');
  assert.ok(Math.abs(r.logZ - truth.logZ) < 1e-9);
  assert.ok(maxMarginalError(r.marginals, truth.marginals) < 1e-12);
});

test('enumeration stays exact over 2^22 terms (blocked, compensated sums)', () => {
  const rand = mulberry32(77);
  const model = randomModel(rand, 22, { cards: [2], density: 0.15, scale: 1.5, zeros: 0.02 });
  const en = exactInference(engine, model, { method: 'enumeration' });
  const el = exactInference(engine, model, { method: 'elimination' });
  assert.equal(en.method, 'enumeration');
  assert.ok(Math.abs(en.logZ - el.logZ) < 1e-10, `${en.logZ} vs ${el.logZ}`);
  assert.ok(maxMarginalError(en.marginals, el.marginals) < 1e-12);
});

test('forced Hugin downward steps and forced checkpoint recomputation agree with brute force', () => {
  const saved = { ...exactTuning };
  try {
    const rand = mulberry32(99);
    for (const setting of ['hugin', 'checkpoint', 'both'] as const) {
      Object.assign(exactTuning, saved);
      if (setting !== 'checkpoint') Object.assign(exactTuning, { huginMinChildren: 1, huginMinCost: 0 });
      if (setting !== 'hugin') Object.assign(exactTuning, { storeAllBytes: 0, smallBytes: 0 });
      for (let t = 0; t < 60; t++) {
        const n = 2 + Math.floor(rand() * 8);
        const model = randomModel(rand, n, { cards: [2, 3], density: [0.2, 0.4, 0.8][t % 3], zeros: t % 2 ? 0.2 : 0, scale: 2 });
        const truth = bruteForce(model);
        if (!Number.isFinite(truth.logZ)) continue;
        const mem = eliminationMemory(model);
        if (setting !== 'hugin') assert.ok(mem.stored <= n);
        for (const o of ['minfill', 'natural', 'rcm'] as const) {
          const r = exactInference(engine, model, { method: 'elimination', orderings: [o] });
          const err = Math.max(Math.abs(r.logZ - truth.logZ), maxMarginalError(r.marginals, truth.marginals));
          assert.ok(err <= 1e-10, `${setting}, model ${t}, ${o}: error ${err}`);
        }
      }
    }
    // The paths were really taken: a star's centre eliminated last has many children; a long chain recomputes.
    Object.assign(exactTuning, saved, { huginMinChildren: 1, huginMinCost: 0, storeAllBytes: 0, smallBytes: 0 });
    const b = new ModelBuilder(new Array(40).fill(2));
    for (let v = 0; v + 1 < 40; v++) b.addPairwise(v, v + 1, [0.5, -0.5, -0.2, 0.1]);
    for (let v = 1; v < 40; v += 7) b.addPairwise(0, v, [0.1, 0, 0, 0.3]);
    const mem = eliminationMemory(b.build(), { orderings: ['natural'] });
    assert.ok(mem.huginNodes > 0 && mem.recomputed > 0, JSON.stringify(mem));
  } finally {
    Object.assign(exactTuning, saved);
  }
});

test('junction-tree programs cut after every few ops (the smallest buffer) give the same bits as one call per pass, zeros and range failures included', () => {
  const saved = { ...exactTuning };
  const bits = (r: ExactResult | Error): string => {
    if (r instanceof Error) return `error: ${r.message}`;
    let m: string;
    try {
      m = r.marginals.map((p) => Array.from(p, (x) => x.toString(16)).join(',')).join(';');
    } catch (e) {
      m = `marginals: ${(e as Error).message}`;
    }
    return `${Object.is(r.logZ, -0) ? '-0' : r.logZ.toString(16)} ${m}`;
  };
  const run = (model: Model, words: number, order: 'minfill' | 'natural'): string => {
    exactTuning.programWords = words;
    try {
      return bits(exactInference(engine, model, { method: 'elimination', orderings: [order] }));
    } catch (e) {
      return bits(e as Error);
    }
  };
  try {
    const rand = mulberry32(4242);
    const models: Model[] = [];
    for (let t = 0; t < 24; t++) models.push(randomModel(rand, 4 + (t % 9), { cards: [1, 2, 3, 4], density: 0.3 + 0.1 * (t % 4), zeros: t % 3 === 0 ? 0.25 : 0, scale: t % 5 === 0 ? 500 : 1.5 }));
    const chain = new ModelBuilder(new Array(300).fill(2));
    for (let v = 0; v + 1 < 300; v++) chain.addPairwise(v, v + 1, [3, -3, -3, 3]);
    models.push(chain.build());
    // Z = 0 decided late in the upward pass, and an underflow (the range test's model).
    const dead = new ModelBuilder(new Array(60).fill(2));
    for (let v = 0; v + 1 < 60; v++) dead.addPairwise(v, v + 1, [0, -Infinity, -Infinity, 0]);
    dead.addUnary(0, [-Infinity, 0]);
    dead.addUnary(59, [0, -Infinity]);
    models.push(dead.build());
    const under = new ModelBuilder([2, 2, 2]);
    under.addPairwise(0, 1, [0, -1000, 0, -1000]);
    under.addUnary(1, [-1000, 0]);
    under.addPairwise(1, 2, [0, 0.5, 0.5, 0]);
    models.push(under.build());
    const outcomes = new Set<string>();
    for (const tuning of [{}, { huginMinChildren: 1, huginMinCost: 0, storeAllBytes: 0, smallBytes: 0 }]) {
      Object.assign(exactTuning, saved, tuning);
      for (const model of models) {
        for (const order of ['minfill', 'natural'] as const) {
          const whole = run(model, 2 ** 20, order);
          assert.equal(run(model, 0, order), whole, `${model.n} variables, ${order}, ${JSON.stringify(tuning)}`);
          outcomes.add(whole.startsWith('error') ? 'error' : whole.startsWith('-Infinity') ? 'zero' : 'finite');
        }
      }
    }
    assert.deepEqual([...outcomes].sort(), ['error', 'finite', 'zero']);
  } finally {
    Object.assign(exactTuning, saved);
  }
});

test('messages left unnormalised inside 2^±(256/k): long chains, a 400-leaf star and a hub of long chains = bucket elimination (log space)', () => {
  // Weak potentials: each λ step of a card-8 chain grows the message about 8-fold, so the chain crosses
  // 2^256 many times; the star's centre multiplies 400 messages of about 6 each (2^1000 in all: they
  // must be normalised there); the hub multiplies five arms' messages of about 4^300 each.
  const rand = mulberry32(2027);
  const q = (s: number): number => s * (2 * rand() - 1);
  const shapes: [string, Model][] = [];
  {
    const b = new ModelBuilder(new Array(1500).fill(8));
    for (let v = 0; v < 1500; v++) b.addUnary(v, Array.from({ length: 8 }, () => q(0.3)));
    for (let v = 0; v + 1 < 1500; v++) b.addPairwise(v, v + 1, Array.from({ length: 64 }, () => q(0.3)));
    shapes.push(['chain of 1500, card 8', b.build()]);
  }
  {
    const b = new ModelBuilder(new Array(401).fill(6));
    for (let v = 1; v <= 400; v++) b.addPairwise(0, v, Array.from({ length: 36 }, () => q(0.3)));
    shapes.push(['star with 400 leaves, card 6', b.build()]);
  }
  {
    const b = new ModelBuilder(new Array(1 + 5 * 300).fill(4));
    for (let arm = 0; arm < 5; arm++) {
      for (let t = 0; t < 300; t++) {
        const v = 1 + arm * 300 + t;
        b.addPairwise(t === 0 ? 0 : v - 1, v, Array.from({ length: 16 }, () => q(0.3)));
      }
    }
    shapes.push(['hub of five 300-long chains, card 4', b.build()]);
  }
  for (const [name, model] of shapes) {
    const jt = exactInference(engine, model, { method: 'elimination' });
    const be = exactInference(engine, model, { method: 'bucket' });
    assert.equal(jt.algorithm, 'junction-tree');
    assert.ok(Math.abs(jt.logZ - be.logZ) <= 1e-12 * Math.abs(be.logZ), `${name}: ${jt.logZ} vs ${be.logZ}`);
    assert.ok(maxMarginalError(jt.marginals, be.marginals) < 1e-10, name);
  }
});

test('a node with 80 children over a 12-variable clique: Hugin (the default there) = leave-one-out products', () => {
  // Variables 0…79 hang on (80, 81); 80…91 form a clique. Any good ordering eliminates the leaves first,
  // so one core variable has 80 children and a 2^12-entry clique.
  const rand = mulberry32(5);
  const q = (): number => 2 * rand() - 1;
  const b = new ModelBuilder(new Array(92).fill(2));
  for (let v = 0; v < 80; v++) {
    b.addUnary(v, [q(), q()]);
    b.addPairwise(v, 80, [q(), q(), q(), q()]);
    b.addPairwise(v, 81, [q(), q(), q(), -Infinity]);
  }
  for (let i = 80; i < 92; i++) for (let j = i + 1; j < 92; j++) b.addPairwise(i, j, [q(), q(), q(), q()]);
  const model = b.build();
  assert.ok(eliminationMemory(model).huginNodes >= 1);
  const hugin = exactInference(engine, model, { method: 'elimination' });
  const saved = { ...exactTuning };
  let plain: ExactResult;
  try {
    exactTuning.huginMinChildren = Infinity;
    assert.equal(eliminationMemory(model).huginNodes, 0);
    plain = exactInference(engine, model, { method: 'elimination' });
  } finally {
    Object.assign(exactTuning, saved);
  }
  assert.ok(Math.abs(hugin.logZ - plain.logZ) < 1e-10, `${hugin.logZ} vs ${plain.logZ}`);
  assert.ok(maxMarginalError(hugin.marginals, plain.marginals) < 1e-10);
});

test('eliminationPlan: a permutation; on a 20×20 grid the frontier stays at 21 variables', () => {
  const model = grid(20, 0.4);
  const plan = eliminationPlan(model);
  assert.deepEqual([...plan.ordering].sort((a, b) => a - b), [...Array(400).keys()]);
  assert.ok(plan.treewidth <= 20, `treewidth ${plan.treewidth}`);
  assert.ok(plan.maxTableEntries <= 2 ** 21);
  for (const o of ORDERINGS) assert.ok(plan.totalTableEntries <= eliminationPlan(model, { orderings: [o] }).totalTableEntries);
  // Row order is the natural order here.
  const natural = eliminationPlan(model, { orderings: ['natural'] });
  assert.equal(natural.treewidth, 20);
  assert.equal(natural.name, 'natural');
});

test('RCM (in the engine) on shuffled labels: a path gets bandwidth 1, a side×side grid bandwidth side, each component contiguous', () => {
  const rand = mulberry32(5);
  const shuffled = (n: number): number[] => {
    const p = Array.from({ length: n }, (_, v) => v);
    for (let v = n - 1; v > 0; v--) {
      const w = Math.floor(rand() * (v + 1));
      [p[v], p[w]] = [p[w], p[v]];
    }
    return p;
  };
  const rcm = (n: number, edges: [number, number][]): { order: Int32Array; pos: Int32Array; bandwidth: number } => {
    const b = new ModelBuilder(new Array(n).fill(2));
    for (const [u, v] of edges) b.addPairwise(u, v, [0.1, 0, 0, 0.1]);
    const order = eliminationPlan(b.build(), { orderings: ['rcm'] }).ordering;
    assert.deepEqual([...order].sort((x, y) => x - y), [...Array(n).keys()]);
    const pos = new Int32Array(n);
    order.forEach((v, t) => (pos[v] = t));
    return { order, pos, bandwidth: Math.max(...edges.map(([u, v]) => Math.abs(pos[u] - pos[v]))) };
  };
  for (const n of [2, 17, 300]) {
    const p = shuffled(n);
    assert.equal(rcm(n, Array.from({ length: n - 1 }, (_, k) => [p[k], p[k + 1]] as [number, number])).bandwidth, 1, `path of ${n}`);
  }
  for (const side of [5, 12, 20]) {
    const p = shuffled(side * side), edges: [number, number][] = [];
    for (let r = 0; r < side; r++) {
      for (let c = 0; c < side; c++) {
        if (c + 1 < side) edges.push([p[r * side + c], p[r * side + c + 1]]);
        if (r + 1 < side) edges.push([p[r * side + c], p[(r + 1) * side + c]]);
      }
    }
    assert.equal(rcm(side * side, edges).bandwidth, side, `grid ${side}×${side}`);
  }
  // Three paths and two isolated variables, labels interleaved: each path's positions are consecutive.
  const p = shuffled(32), paths = [p.slice(0, 10), p.slice(10, 20), p.slice(20, 30)];
  const { pos, bandwidth } = rcm(32, paths.flatMap((q) => q.slice(1).map((v, k) => [q[k], v] as [number, number])));
  assert.equal(bandwidth, 1);
  for (const q of paths) assert.equal(Math.max(...q.map((v) => pos[v])) - Math.min(...q.map((v) => pos[v])), q.length - 1);
});

test('refusal past the table-size limit names the clique size it would need', () => {
  assert.throws(
    () => exactInference(engine, grid(30, 0.3), { method: 'elimination' }),
    (e: unknown) =>
      e instanceof EngineError &&
      /^treewidth 30: the largest clique table would have 2\^31 entries \(17 GB\), past the limit of 2\^25 entries/.test(e.message),
  );
  assert.throws(
    () => exactInference(engine, grid(12, 0.3), { method: 'elimination', maxTableEntries: 2 ** 10 }),
    (e: unknown) => e instanceof EngineError && /^treewidth 12: the largest clique table would have 2\^13 entries \(66 kB\), past the limit of 2\^10 entries/.test(e.message),
  );
  // auto: bucket elimination streams the cliques (messages only are stored).
  const small = grid(4, 0.3, 0.2);
  const r = exactInference(engine, small, { maxTableEntries: 4 });
  assert.equal(r.algorithm, 'bucket');
  assert.ok(Math.abs(r.logZ - bruteForce(small).logZ) < 1e-10);
  assert.throws(() => exactInference(engine, grid(6, 0.3), { method: 'enumeration' }), /past the limit of 2\^30/);
});

test("libDAI testfast.fg: log Z = 14.3282332811 and the EXACT block's marginals", () => {
  const dir = join(dataDir(), 'libdai');
  const { model, labels } = readFGWithLabels(readFileSync(join(dir, 'testfast.fg'), 'utf8'), 'testfast.fg');
  const out = readFileSync(join(dir, 'testfast.out'), 'utf8').split('\n');
  const start = out.findIndex((l) => l.startsWith('EXACT'));
  const printed = new Map<number, string[]>();
  for (let i = start + 1; i < out.length && out[i].startsWith('# ({x'); i++) {
    const m = /^# \(\{x(\d+)\}, \((.*)\)\)$/.exec(out[i].trim())!;
    printed.set(Number(m[1]), m[2].split(',').map((s) => s.trim()));
  }
  assert.equal(printed.size, model.n);
  for (const method of ['enumeration', 'elimination'] as const) {
    const r = exactInference(engine, model, { method });
    assert.ok(Math.abs(r.logZ - 14.3282332811) < 1e-9, `${method}: log Z ${r.logZ}`);
    labels.forEach((label, v) => {
      printed.get(label)!.forEach((s, k) => {
        // Four significant digits: within half a unit of the last printed digit.
        const value = Number(s);
        const unit = 10 ** (Math.floor(Math.log10(value)) - 3);
        assert.ok(Math.abs(r.marginals[v][k] - value) <= 0.5 * unit + 1e-12, `${method} x${label}[${k}] = ${r.marginals[v][k]}, printed ${s}`);
      });
    });
  }
});

/** The UAI 2014 pairwise instances (Promedus_24 has arity-3 factors). */
const UAI = ['CSP_11', 'DBN_11', 'Grids_11', 'Grids_12', 'Grids_15', 'ObjectDetection_11', 'Segmentation_11'];

function checkAgainstPublished(name: string, r: ExactResult): string {
  const dir = join(dataDir(), 'uai2014');
  assert.equal(readFileSync(join(dir, `${name}.uai.evid`), 'utf8').trim().split(/\s+/)[0], '0', `${name}: evidence expected empty`);
  const prText = readFileSync(join(dir, `${name}.uai.PR`), 'utf8');
  const published = readPR(prText, `${name}.uai.PR`);
  // Compare at the printed precision: |computed − printed| ≤ half a unit of the last printed digit.
  const digits = prText.split(/\s+/).filter(Boolean)[1];
  const decimals = digits.includes('.') ? digits.split('.')[1].replace(/e.*$/i, '').length : 0;
  const log10Z = r.logZ / Math.LN10;
  const zErr = Math.abs(log10Z - published);
  assert.ok(zErr <= 0.5 * 10 ** -decimals + 1e-9, `${name}: log10 Z ${log10Z} vs published ${digits}`);
  const mar = readMAR(readFileSync(join(dir, `${name}.uai.MAR`), 'utf8'), `${name}.uai.MAR`);
  assert.equal(mar.length, r.marginals.length);
  const mErr = maxMarginalError(mar, r.marginals);
  // Every entry to the MAR file's printed digits (6 significant), small probabilities included.
  mar.forEach((row, v) => row.forEach((p, k) => assert.ok(atPublishedDigits(r.marginals[v][k], p), `${name}: variable ${v} state ${k}: ${r.marginals[v][k]} vs published ${p}`)));
  return `${name}: log10 Z ${log10Z.toFixed(7)} (published ${digits}), max marginal error ${mErr.toExponential(2)}, ${r.ordering} ordering, treewidth ${r.treewidth}, ${r.seconds.toFixed(2)} s`;
}

for (const name of UAI) {
  test(`UAI 2014 ${name}: log10 Z and every marginal as published, by auto's choice and by the other kernel`, () => {
    const model = readUAI(readFileSync(join(dataDir(), 'uai2014', `${name}.uai`), 'utf8'), `${name}.uai`);
    const r = exactInference(engine, model);
    assert.equal(r.method, 'elimination');
    // auto's cost model: bucket elimination where its streams beat the clique tables clearly (16
    // states: small messages) and where the junction tree's schedule passes 256 MiB (DBN_11, CSP_11:
    // its tables out of the caches), the junction tree on the other binary and few-state files.
    assert.equal(r.algorithm, ['ObjectDetection_11', 'DBN_11', 'CSP_11'].includes(name) ? 'bucket' : 'junction-tree');
    console.log(`# ${checkAgainstPublished(name, r)} (auto: ${r.algorithm})`);
    const other = exactInference(engine, model, { method: r.algorithm === 'bucket' ? 'elimination' : 'bucket' });
    assert.notEqual(other.algorithm, r.algorithm);
    console.log(`# ${checkAgainstPublished(name, other)} (${other.algorithm})`);
  });
}

test('UAI 2014 Grids_15 (20×20, 400 variables): as published, in at most 1 GB of WASM memory of a fresh engine', async () => {
  const fresh = await loadEngine();
  const model = readUAI(readFileSync(join(dataDir(), 'uai2014', 'Grids_15.uai'), 'utf8'), 'Grids_15.uai');
  const r = exactInference(fresh, model);
  assert.equal(r.method, 'elimination');
  const line = checkAgainstPublished('Grids_15', r);
  assert.ok(fresh.memoryBytes <= 2 ** 30, `WASM memory ${fresh.memoryBytes} bytes`);
  console.log(`# ${line}, WASM memory ${(fresh.memoryBytes / 2 ** 20).toFixed(0)} MiB`);
});

test('UAI 2014 ObjectDetection_13 (60 variables of 16 states, uai2014-more): bucket elimination past the clique-table limit, to the published PR and MAR digits, in at most 1 GB of WASM memory', async () => {
  const fresh = await loadEngine();
  const path = join(dataDir(), 'uai2014-more', 'ObjectDetection_13.uai');
  const model = readUAI(readFileSync(path, 'utf8'), 'ObjectDetection_13.uai');
  assert.equal(readFileSync(`${path}.evid`, 'utf8').trim().split(/\s+/)[0], '0', 'evidence expected empty');
  // The junction tree would need a clique table of 2^28 entries; auto streams the cliques instead.
  assert.throws(() => exactInference(fresh, model, { method: 'elimination' }), /the largest clique table would have 2\^28 entries/);
  const r = exactInference(fresh, model);
  assert.equal(r.algorithm, 'bucket');
  const published = readPR(readFileSync(`${path}.PR`, 'utf8'), 'ObjectDetection_13.uai.PR');
  assert.ok(Math.abs(r.logZ / Math.LN10 - published) <= 0.5e-4 + 1e-9, `log10 Z ${r.logZ / Math.LN10} vs published ${published}`);
  // The MAR file prints 6 significant digits: within half a unit of the last one.
  const mar = readMAR(readFileSync(`${path}.MAR`, 'utf8'), 'ObjectDetection_13.uai.MAR');
  assert.equal(mar.length, model.n);
  mar.forEach((row, v) => row.forEach((p, k) => {
    const unit = p === 0 ? 1e-6 : 10 ** (Math.floor(Math.log10(p)) - 5);
    assert.ok(Math.abs(r.marginals[v][k] - p) <= 0.5 * unit + 1e-12, `variable ${v} state ${k}: ${r.marginals[v][k]} vs published ${p}`);
  }));
  assert.ok(fresh.memoryBytes <= 2 ** 30, `WASM memory ${fresh.memoryBytes} bytes`);
  console.log(`# ObjectDetection_13: log10 Z ${(r.logZ / Math.LN10).toFixed(6)} (published ${published}), treewidth ${r.treewidth}, largest message 2^${Math.log2(r.largestMessage).toFixed(1)}, ${r.ordering}, ${r.seconds.toFixed(2)} s, WASM memory ${(fresh.memoryBytes / 2 ** 20).toFixed(0)} MiB`);
});

test("the junction tree's linear tables refuse a range they would lose, and auto takes bucket elimination: tables with one entry of e^750 or e^400 gave log Z 752.2 against 800 and a uniform marginal against (6e-22, 6e-22, 1), silently", async () => {
  const engine = await loadEngine();
  const { RangeExceeded } = await import('../bindings/exact/outcome.ts');
  const b = new ModelBuilder([3, 2, 3, 3]);
  b.addFactor([1, 2], [0, 0, 0, 750, 0, 0]);
  b.addFactor([3, 2], [0, 0, 0, 0, 0, 400, 0, 0, 0]);
  b.addFactor([1, 3], [0, 0, 400, 0, 0, 0]);
  b.addFactor([0, 2], [0, 0, 0, 0, 0, 0, 0, 400, 0]);
  const model = b.build();
  const truth = bruteForce(model);
  const auto = exactInference(engine, model);
  assert.equal(auto.algorithm, 'bucket');
  assert.ok(Math.abs(auto.logZ - truth.logZ) < 1e-9 * truth.logZ, `${auto.logZ} vs ${truth.logZ}`);
  auto.marginals.forEach((p, v) => p.forEach((x, k) => assert.ok(Math.abs(x - truth.marginals[v][k]) < 1e-9, `p(x${v} = ${k}) ${x} vs ${truth.marginals[v][k]}`)));
  assert.throws(() => exactInference(engine, model, { method: 'elimination' }), (e: unknown) => e instanceof RangeExceeded && /the table of \(1, 2\) spans 750 nats within a row, past 700.*'bucket' runs bucket elimination/.test((e as Error).message));
  // The same through a UAI file's linear entries (1e-100 … 1e300): log10 Z 920 (it said 650).
  const text = 'MARKOV\n4\n2 2 2 2\n5\n2 0 1\n2 1 2\n2 2 3\n2 0 3\n1 3\n\n4\n1e300 1e-100 1 1\n\n4\n1e300 1 1 1e-100\n\n4\n1e-100 1 1 1e300\n\n4\n1 1 1 1e300\n\n2\n1 1\n';
  const m2 = readUAI(text), t2 = bruteForce(m2), r2 = exactInference(engine, m2);
  assert.ok(Math.abs(r2.logZ - t2.logZ) < 1e-9 * t2.logZ, `${r2.logZ / Math.LN10} vs ${t2.logZ / Math.LN10} (log10)`);
});

test('the junction tree on random pairwise models with entries up to ±340 nats: the published answer (by brute force) or a range refusal that auto turns into bucket elimination (3 in 1500 such models had log Z off by up to 150 nats when several tables multiplied in one factor table)', async () => {
  const engine = await loadEngine();
  const { RangeExceeded } = await import('../bindings/exact/outcome.ts');
  const rand = mulberry32(700);
  let refused = 0, ran = 0;
  for (let t = 0; t < 300; t++) {
    const model = randomModel(rand, 3 + Math.floor(rand() * 6), { cards: [1, 2, 3, 4, 5], density: 0.3 + 0.6 * rand(), scale: 340 * rand() });
    const truth = bruteForce(model);
    const close = (r: ExactResult) => Math.abs(r.logZ - truth.logZ) <= 1e-9 * Math.max(1, Math.abs(truth.logZ)) && r.marginals.every((p, v) => p.every((x, k) => Math.abs(x - truth.marginals[v][k]) < 1e-8));
    assert.ok(close(exactInference(engine, model)), `model ${t}: auto`);
    try {
      assert.ok(close(exactInference(engine, model, { method: 'elimination' })), `model ${t}: the junction tree`);
      ran++;
    } catch (e) {
      if (!(e instanceof RangeExceeded)) throw e;
      refused++;
    }
  }
  assert.ok(ran > 50 && refused > 20, `${ran} ran, ${refused} refused: both paths exercised`);
  // One of the three (rounded to whole nats): variable 4's factor table multiplies three tables whose
  // rows span up to 660 nats each; the junction tree said log Z 907.0 against 1062.0, silently.
  const b = new ModelBuilder([5, 1, 1, 7, 3, 7, 1]);
  b.addFactor([0, 4], [-330, 51, -77, 235, 337, 68, 292, -20, -282, -52, -191, 317, 141, -153, -326]).addFactor([1, 4], [-326, -52, 46]).addFactor([4, 2], [325, -99, 30]);
  for (const [v, t] of [[0, [320, -121, -141, -253, 154]], [1, [-329]], [2, [127]], [3, [45, 82, 227, 17, 179, 222, 18]], [4, [-149, 202, -3]], [5, [-319, -120, 130, -193, 74, 296, 217]], [6, [319]]] as const) b.addUnary(v, t);
  const model = b.build(), truth = bruteForce(model);
  assert.ok(Math.abs(exactInference(engine, model).logZ - truth.logZ) < 1e-9 * truth.logZ);
  assert.throws(() => exactInference(engine, model, { method: 'elimination', orderings: ['rcm'] }), (e: unknown) => e instanceof RangeExceeded && /factor table spans up to \d+ nats, past 700/.test((e as Error).message));
});

test("the junction tree's messages keep their range: a chain of equalities whose unaries of ±300 nats push a message past e^−708 said log Z 0 against ln 2; it now refuses (auto runs bucket elimination), and random chains and trees of the same kind are right or refused", async () => {
  const engine = await loadEngine();
  const { RangeExceeded } = await import('../bindings/exact/outcome.ts');
  const n = 12, b = new ModelBuilder(Array(n).fill(2));
  for (let i = 0; i + 1 < n; i++) b.addFactor([i, i + 1], [0, -Infinity, -Infinity, 0]);
  [-300, -300, -300, 300, 300, 300, 300, 300, 300, -300, -300, -300].forEach((u, i) => b.addUnary(i, [0, u]));
  const model = b.build(), truth = bruteForce(model);
  const auto = exactInference(engine, model);
  assert.equal(auto.algorithm, 'bucket');
  assert.ok(Math.abs(auto.logZ - truth.logZ) < 1e-12 && Math.abs(auto.marginals[5][1] - 0.5) < 1e-12, `${auto.logZ} vs ${truth.logZ}`);
  assert.throws(() => exactInference(engine, model, { method: 'elimination' }), (e: unknown) => e instanceof RangeExceeded && /upward message: a product reaches e\^-900, below e\^-744/.test((e as Error).message));
  // Chains and trees of permutation tables (some soft) with unaries that change sign at a random
  // cut: entries down to e^−450 per variable, where messages span thousands of nats. Of the first
  // 300, one (the 8th) had log Z −822.58 against −652.61 before the messages' ranges were checked.
  let seed = 12345;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  let ran = 0, refused = 0;
  for (let t = 0; t < 300; t++) {
    const n = 3 + Math.floor(rand() * 9), K = 2 + Math.floor(rand() * 2);
    const mb = new ModelBuilder(Array(n).fill(K));
    const S = 50 + rand() * 400, zeros = rand() < 0.5, kind = rand();
    const edges: [number, number][] = [];
    for (let i = 1; i < n; i++) edges.push([kind < 0.5 ? i - 1 : Math.floor(rand() * i), i]);
    if (kind > 0.8) edges.push([0, n - 1]);
    for (const [i, j] of edges) {
      const perm = Array.from({ length: K }, (_, a) => a).sort(() => rand() - 0.5), soft = rand() < 0.3, tab: number[] = [];
      for (let a = 0; a < K; a++) for (let c = 0; c < K; c++) tab.push(zeros ? (perm[a] === c || (soft && rand() < 0.2) ? -S * 0.1 * rand() : -Infinity) : rand() < 0.5 ? 0 : -S * rand());
      mb.addFactor([i, j], tab);
    }
    const cut = Math.floor(rand() * n), sign = rand() < 0.5 ? 1 : -1;
    for (let i = 0; i < n; i++) mb.addUnary(i, Array.from({ length: K }, (_, k) => (k === 0 ? 0 : (i < cut ? -sign : sign) * S * (0.5 + rand()))));
    const m = mb.build(), exact = bruteForce(m);
    if (!(exact.logZ > -Infinity)) continue;
    try {
      const r = exactInference(engine, m, { method: 'elimination' });
      ran++;
      assert.ok(Math.abs(r.logZ - exact.logZ) <= 1e-9 * Math.max(1, Math.abs(exact.logZ)), `model ${t}: log Z ${r.logZ} vs ${exact.logZ}`);
      r.marginals.forEach((p, v) => p.forEach((x, k) => assert.ok(Math.abs(x - exact.marginals[v][k]) < 1e-8, `model ${t}: p(x${v} = ${k}) ${x} vs ${exact.marginals[v][k]}`)));
    } catch (e) {
      if (!(e instanceof RangeExceeded)) throw e;
      refused++;
    }
  }
  assert.ok(ran > 50 && refused > 20, `${ran} ran, ${refused} refused: both paths exercised`);
});
