import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/index.ts';
import type { Model } from '../bindings/core/model.ts';
import { BPSolver, bpConfig, runBP } from '../bindings/variational/bp.ts';
import { ModelError } from '../bindings/core/errors.ts';
import { readFG, readUAI } from '../bindings/io/formats.ts';
import { bruteForce, mulberry32, randomFactorGraph, randomTreeFactorGraph } from './helpers.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataDir } from './helpers.ts';

function maxMarginalError(a: Float64Array[], b: Float64Array[]): number {
  let e = 0;
  a.forEach((p, v) => p.forEach((x, k) => (e = Math.max(e, Math.abs(x - b[v][k])))));
  return e;
}

test('BP is exact on trees: marginals, factor beliefs and Bethe log Z equal enumeration (arities 1–4, cardinalities 1–5, zeros, every schedule)', async () => {
  const engine = await loadEngine();
  const rand = mulberry32(11);
  for (let t = 0; t < 40; t++) {
    const m = randomTreeFactorGraph(rand, 2 + (t % 7), { cards: [[2], [1, 2, 3], [3, 5], [1, 2, 3, 4, 5]][t % 4], maxArity: 4, scale: 2, zeros: t % 3 === 0 ? 0.3 : 0, forest: t % 5 === 0 });
    const want = bruteForce(m);
    for (const schedule of ['parallel', 'sequential', 'residual'] as const) {
      const r = runBP(engine, m, { schedule, tolerance: 1e-13, damping: t % 2 ? 0.3 : 0 });
      assert.equal(r.diagnostics.converged, true, `model ${t} ${schedule}`);
      assert.ok(Math.abs(r.logZ! - want.logZ) < 1e-9, `model ${t} ${schedule}: log Z ${r.logZ} vs ${want.logZ}`);
      assert.ok(maxMarginalError(r.marginals, want.marginals) < 1e-9, `model ${t} ${schedule}: marginals`);
    }
    // Factor beliefs: each factor's exact marginal (over its scope) by enumeration.
    const s = new BPSolver(engine, m);
    try {
      s.run(bpConfig({ tolerance: 1e-13 }));
      const beliefs = s.factorBeliefs();
      const exactF = factorMarginals(m, want.logZ);
      beliefs.forEach((b, f) => b.forEach((x, e) => assert.ok(Math.abs(x - exactF[f][e]) < 1e-9, `model ${t} factor ${f} entry ${e}: ${x} vs ${exactF[f][e]}`)));
    } finally {
      s.dispose();
    }
  }
});

test('damped BP on trees whose tables are plateaus with 46-nat steps: converged means exact (the residual in log space), default tolerance, every schedule', async () => {
  const engine = await loadEngine();
  // The three-variable chain of the report: on the probability scale the messages' changes fell
  // below 1e-9 after two damped sweeps, at log Z 91.4 against 47.4.
  const chain = readUAI('MARKOV\n3\n2 2 2\n2\n2 0 1\n2 1 2\n\n4\n1 1 1 1e20\n\n4\n1 1e20 1 1\n', 'chain.uai');
  const rand = mulberry32(23);
  const models = [chain];
  for (let t = 0; t < 12; t++) {
    // A random tree of 3–7 variables (cardinalities 2–3), each edge's table of entries 1 or 1e20.
    const n = 3 + (t % 5), card = Array.from({ length: n }, () => 2 + Math.floor(rand() * 2));
    const edges = Array.from({ length: n - 1 }, (_, i) => [Math.floor(rand() * (i + 1)), i + 1]);
    const tables = edges.map(([u, v]) => Array.from({ length: card[u] * card[v] }, () => (rand() < 0.4 ? '1e20' : '1')));
    models.push(readUAI(`MARKOV\n${n}\n${card.join(' ')}\n${n - 1}\n${edges.map((e) => `2 ${e.join(' ')}`).join('\n')}\n${tables.map((x) => `${x.length}\n${x.join(' ')}`).join('\n')}\n`, `tree${t}.uai`));
  }
  models.forEach((m, t) => {
    const want = bruteForce(m);
    for (const schedule of ['parallel', 'sequential', 'residual'] as const)
      for (const damping of [0.1, 0.5, 0.9]) {
        const r = runBP(engine, m, { schedule, damping, maxIterations: 5000 });
        assert.equal(r.diagnostics.converged, true, `model ${t} ${schedule} ${damping}`);
        assert.ok(Math.abs(r.logZ! - want.logZ) < 1e-6, `model ${t} ${schedule} damping ${damping}: log Z ${r.logZ} vs ${want.logZ}`);
        assert.ok(maxMarginalError(r.marginals, want.marginals) < 1e-6, `model ${t} ${schedule} damping ${damping}: marginals`);
      }
  });
});

/** Exact marginal of every factor's scope, in its table's layout, by enumeration. */
function factorMarginals(m: Model, logZ: number): Float64Array[] {
  const out = Array.from({ length: m.nFactors }, (_, f) => new Float64Array(m.tableSize(f)));
  const x = new Int32Array(m.n);
  for (;;) {
    const p = Math.exp(m.logPotential(x) - logZ);
    for (let f = 0; f < m.nFactors; f++) out[f][m.entryIndex(f, x)] += p;
    let v = m.n - 1;
    while (v >= 0 && ++x[v] === m.card[v]) x[v--] = 0;
    if (v < 0) break;
  }
  return out;
}

test('BP on libDAI\'s testfast.fg (4×4 loopy grid): the errors against exact equal libDAI\'s BP row in testfast.out', async () => {
  const engine = await loadEngine();
  const m = readFG(readFileSync(join(dataDir(), 'libdai', 'testfast.fg'), 'utf8'), 'testfast.fg');
  const ex = bruteForce(m);
  const exactF = factorMarginals(m, ex.logZ);
  // libDAI's BP row: MAX VAR ERR 8.924e-03, AVG VAR ERR 3.480e-03, MAX FAC ERR 5.619e-02, AVG FAC ERR 1.096e-02, LOGZ ERROR +7.187e-04 (total variation distances).
  const tv = (a: ArrayLike<number>, b: ArrayLike<number>) => Array.from(a).reduce((s, x, k) => s + Math.abs(x - b[k]) / 2, 0);
  for (const schedule of ['parallel', 'sequential', 'residual'] as const) {
    const s = new BPSolver(engine, m);
    try {
      const r = s.run(bpConfig({ schedule, tolerance: 1e-12 }));
      assert.ok(r.converged && r.iterations < 100, `${schedule}: ${JSON.stringify(r)}`);
      const varErr = s.marginals().map((p, v) => tv(p, ex.marginals[v]));
      const facErr = s.factorBeliefs().map((b, f) => tv(b, exactF[f]));
      const logZErr = s.freeEnergy().logZ - ex.logZ;
      const close = (x: number, want: number) => Math.abs(x - want) <= 0.0005 * Math.abs(want) + 1e-12;
      assert.ok(close(Math.max(...varErr), 8.924e-3), `max var err ${Math.max(...varErr)}`);
      assert.ok(close(varErr.reduce((a, b) => a + b) / m.n, 3.480e-3), 'avg var err');
      assert.ok(close(Math.max(...facErr), 5.619e-2), `max fac err ${Math.max(...facErr)}`);
      assert.ok(close(facErr.reduce((a, b) => a + b) / m.nFactors, 1.096e-2), 'avg fac err');
      assert.ok(close(logZErr, 7.187e-4), `log Z err ${logZErr}`);
    } finally {
      s.dispose();
    }
  }
});

test('BP: hard zeros on loopy models give finite beliefs (no NaN), zero-probability states get marginal 0', async () => {
  const engine = await loadEngine();
  const rand = mulberry32(3);
  for (let t = 0; t < 20; t++) {
    const m = randomFactorGraph(rand, 6, { cards: [2, 3], maxArity: 3, factors: 8, zeros: 0.4, scale: 1 });
    const ex = bruteForce(m);
    const r = runBP(engine, m, { damping: 0.5, maxIterations: 500 });
    assert.ok(Number.isFinite(r.logZ!), `model ${t}: log Z ${r.logZ}`);
    r.marginals.forEach((p, v) => p.forEach((x, k) => {
      assert.ok(Number.isFinite(x), `model ${t}: marginal ${v},${k} = ${x}`);
      // BP's beliefs keep the zeros a factor fixes locally (a zero of every unary state).
      if (ex.marginals[v][k] === 0 && m.unary[v][k] === -Infinity) assert.equal(x, 0);
    }));
  }
});

test('BP options and factor weights are checked (one-line ModelError)', async () => {
  const engine = await loadEngine();
  const m = randomFactorGraph(mulberry32(8), 4, { maxArity: 3, factors: 4 });
  for (const opts of [{ damping: 1 }, { damping: -0.1 }, { schedule: 'random' as never }, { maxIterations: 0 }, { maxIterations: 2 ** 31 }, { tolerance: -1 }, { tolerance: NaN }]) {
    assert.throws(() => runBP(engine, m, opts), (e: Error) => e instanceof ModelError && !e.message.includes('\n'), JSON.stringify(opts));
  }
  const s = new BPSolver(engine, m);
  try {
    assert.throws(() => s.setWeights(new Float64Array(m.nFactors).fill(0)), ModelError);
    assert.throws(() => s.setWeights([1]), ModelError);
  } finally {
    s.dispose();
  }
  assert.throws(() => s.marginals(), /dispose/);
});

test('BP, TRW and bounds warn when the iterations run out before convergence (they reported the last iteration silently), and not when they converge', async () => {
  const engine = await loadEngine();
  const { runTRW } = await import('../bindings/variational/trw.ts');
  const { runBounds } = await import('../bindings/variational/bounds.ts');
  const { isingLattice } = await import('../bindings/core/builders.ts');
  const m = isingLattice({ shape: [6, 6], beta: 0.3, h: 0.1 });
  const cut = runBP(engine, m, { maxIterations: 2 });
  assert.equal(cut.diagnostics.converged, false);
  assert.match(cut.warnings![0], /^BP did not converge in 2 iterations \(largest message change [\d.e+-]+ > 1e-9\): the marginals and the Bethe estimate are those of the last iteration/);
  assert.deepEqual(runBP(engine, m).warnings, []);
  assert.match(runTRW(engine, m, { maxIterations: 2, trwSteps: 0 }).warnings![0], /^TRW did not converge .*the upper bound still holds/);
  assert.deepEqual(runTRW(engine, m, { trwSteps: 1 }).warnings, []);
  assert.match(runBounds(engine, m, { maxIterations: 2, trwSteps: 0 }).warnings!.join(), /TRW did not converge/);
});

test('BP on a zero-field model that its uniform messages trap: a nudged start finds the higher Bethe fixed point, reported beside with a warning (10×10 at β = 1 said log Z 147.4, converged, against an exact 180.9, silently; antiferromagnets too, where the nudged parallel run oscillated); a model that mixes at the symmetric point says nothing', async () => {
  const { loadEngine } = await import('../bindings/core/wasm-node.ts');
  const { infer } = await import('../bindings/infer.ts');
  const { isingLattice } = await import('../bindings/core/builders.ts');
  const engine = await loadEngine();
  const cold = isingLattice({ shape: [10, 10], beta: 1 });
  const exact = infer(engine, cold, { method: 'exact' }).logZ!;
  const r = infer(engine, cold, { method: 'bp' });
  assert.ok(r.logZ! < exact - 30, 'the symmetric fixed point (the case)');
  r.marginals.forEach((p) => assert.ok(Math.abs(p[0] - 0.5) < 1e-12));
  const broken = r.diagnostics.symmetryBrokenLogZ as number;
  assert.ok(Math.abs(broken + Math.LN2 - exact) < 0.05, `${broken} + ln 2 against ${exact}`);
  assert.ok(r.warnings!.some((w) => /^BP converged to the symmetric fixed point .* higher Bethe log Z/.test(w)), JSON.stringify(r.warnings));
  const warm = infer(engine, isingLattice({ shape: [10, 10], beta: 0.3 }), { method: 'bp' });
  assert.equal(warm.diagnostics.symmetryBrokenLogZ, undefined);
  assert.deepEqual(warm.warnings, []);
  // The antiferromagnet (the same Z): parallel updates from the nudge oscillate; the check gave up, silently.
  for (const periodic of [false, true]) {
    const anti = isingLattice({ shape: periodic ? [6, 6] : [10, 10], beta: 1, J: -1, periodic });
    const a = infer(engine, anti, { method: 'bp' }), ex = infer(engine, anti, { method: 'exact' }).logZ!;
    assert.ok(Math.abs((a.diagnostics.symmetryBrokenLogZ as number) + Math.LN2 - ex) < 0.05, `antiferromagnet${periodic ? ', periodic' : ''}: ${a.diagnostics.symmetryBrokenLogZ} + ln 2 against ${ex}`);
    assert.ok(a.warnings!.some((w) => /^BP converged to the symmetric fixed point/.test(w)), JSON.stringify(a.warnings));
  }
});

test('BP\'s uniqueness condition (Mooij & Kappen 2007): tight at the Bethe critical point of degree-4 lattices (Ising atanh(1/3), Potts q = 3 at 2·atanh(1/3)); zeros, higher arity and large cardinalities never pass; where it holds no nudged run is made', async () => {
  const { isingLattice, pottsLattice } = await import('../bindings/core/builders.ts');
  const { uniqueFixedPoint } = await import('../bindings/variational/bp.ts');
  const { ModelBuilder } = await import('../bindings/core/model.ts');
  const bc = Math.atanh(1 / 3);
  assert.equal(uniqueFixedPoint(isingLattice({ shape: [10, 10], beta: bc - 1e-6 })), true);
  assert.equal(uniqueFixedPoint(isingLattice({ shape: [10, 10], beta: bc + 1e-6 })), false);
  assert.equal(uniqueFixedPoint(isingLattice({ shape: [10, 10], beta: -(bc - 1e-6) })), true, 'antiferromagnetic: |J|');
  assert.equal(uniqueFixedPoint(isingLattice({ shape: [1, 50], beta: 5 })), true, 'a chain: each vertex passes on one other bond');
  assert.equal(uniqueFixedPoint(pottsLattice({ shape: [8, 8], q: 3, beta: 2 * bc - 1e-6 })), true);
  assert.equal(uniqueFixedPoint(pottsLattice({ shape: [8, 8], q: 3, beta: 2 * bc + 1e-6 })), false);
  assert.equal(uniqueFixedPoint(pottsLattice({ shape: [3, 3], q: 17, beta: 0.01 })), false, 'cardinality past 16');
  // A 3-colouring of a triangle: zeros make every N 1. (One such edge alone is a tree, and passes.)
  const colouring = new ModelBuilder([3, 3, 3]);
  for (const [i, j] of [[0, 1], [1, 2], [0, 2]]) colouring.addPairwise(i, j, [-Infinity, 0, 0, 0, -Infinity, 0, 0, 0, -Infinity]);
  assert.equal(uniqueFixedPoint(colouring.build()), false, 'zeros');
  const triple = new ModelBuilder([2, 2, 2]);
  triple.addFactor([0, 1, 2], [0, 0, 0, 0, 0, 0, 0, 0]);
  assert.equal(uniqueFixedPoint(triple.build()), false, 'arity 3');
  // Two factors on one pair count separately: 2 × tanh(0.2) bounds the pair's tanh(0.4).
  const doubled = new ModelBuilder([2, 2, 2]);
  for (const [i, j] of [[0, 1], [0, 1], [1, 2]]) doubled.addPairwise(i, j, [0.1, -0.1, -0.1, 0.1]);
  assert.equal(uniqueFixedPoint(doubled.build()), true);
  // Where it holds, symmetryBroken makes no nudged run (the 10⁶-site zero-field lattice at β = 0.3 spent 7 of 10 s there).
  const { infer } = await import('../bindings/infer.ts');
  const { loadEngine: load } = await import('../bindings/core/wasm-node.ts');
  const engine = await load();
  const nudge = BPSolver.prototype.nudge;
  let nudged = 0;
  BPSolver.prototype.nudge = function (this: BPSolver, ...a: Parameters<BPSolver['nudge']>) {
    nudged++;
    return nudge.apply(this, a);
  };
  try {
    infer(engine, isingLattice({ shape: [10, 10], beta: 0.3 }), { method: 'bp' });
    assert.equal(nudged, 0);
    infer(engine, isingLattice({ shape: [10, 10], beta: 0.4 }), { method: 'bp' });
    assert.equal(nudged, 1);
  } finally {
    BPSolver.prototype.nudge = nudge;
  }
});

test('BPSolver memory on a 300×300 lattice as laid out: per pair its constants and 3 f64 of log-odds work, no per-factor pair buffers, and no new-message, heap or factor-belief buffers until a run or a call needs them; those come after memory grew and give the same results', async () => {
  const { isingLattice } = await import('../bindings/core/builders.ts');
  const { boundFactorGraphBytes, factorGraphSize } = await import('../bindings/core/bound-fg.ts');
  const m = isingLattice({ shape: [300, 300], J: 0.3, h: 0.1 });
  const n = m.n, F = m.nFactors, S = m.scopeVars.length;
  let P = 0;
  for (let f = 0; f < F; f++) if (m.arity(f) === 2) P++;
  const engine = await loadEngine();
  const before = engine.bytesInUse;
  const s = new BPSolver(engine, m);
  const built = engine.bytesInUse - before;
  // Per scope entry: two binary messages (fac2var, var2fac) and msgStart, incPos; per pair: 6 pair
  // constants and 3 f64 of log-odds work; per variable: belief, marginals, 3 f64 of log-odds work,
  // entropy, belStart; per factor: weight, entropy, pair index; 4 KiB for the small buffers and rounding.
  // (Before: 1184 MB on 1000×1000, 48 B of pair constants and 96 B of log-odds work per factor,
  // newMsg, the residual heap and the factor beliefs' output allocated up front: ≈ 2× this.)
  const layout = boundFactorGraphBytes(engine, factorGraphSize(m)) + 40 * S + 72 * P + 68 * n + 20 * F + 4096;
  assert.ok(built <= layout, `BPSolver took ${built} bytes, layout ${layout}`);
  // The allocator at most doubles memory when it grows (was 136 MiB, 2.7× the layout).
  assert.ok(engine.memoryBytes < 2 * layout, `WASM memory ${engine.memoryBytes} bytes, layout ${layout}`);
  try {
    const r = s.run(bpConfig({ tolerance: 1e-12 }));
    assert.equal(r.converged, true);
    assert.equal(engine.bytesInUse - before, built, 'the ratio path allocates nothing');
    const marginals = s.marginals();
    // Grow memory before the lazy buffers come: every view of the old buffer is detached.
    const old = engine.kernels.memory.buffer;
    const ballast = engine.arena();
    ballast.alloc(engine.memoryBytes);
    assert.equal(old.byteLength, 0, 'memory grew');
    const beliefs = s.factorBeliefs();
    assert.ok(engine.bytesInUse - before > built + 8 * (2 * n + 4 * P), 'factor beliefs allocated their output');
    // At the fixed point each pair belief's marginals are its variables' marginals; a unary factor's belief is its variable's.
    for (let f = 0; f < F; f++) {
      const sc = m.scope(f), b = beliefs[f];
      if (sc.length === 1) assert.ok(Math.abs(b[1] - marginals[sc[0]][1]) < 1e-12, `factor ${f}`);
      else assert.ok(Math.abs(b[2] + b[3] - marginals[sc[0]][1]) < 1e-9 && Math.abs(b[1] + b[3] - marginals[sc[1]][1]) < 1e-9, `factor ${f}`);
    }
    ballast.dispose();
    // The general loop (newMsg) and the residual schedule (its heap) allocated late, after a
    // reset, against a solver that runs the residual schedule first thing.
    s.run(bpConfig({ schedule: 'sequential', maxIterations: 2 }));
    s.reset();
    const residual = bpConfig({ schedule: 'residual', maxIterations: 3, tolerance: 0 });
    s.run(residual);
    const fresh = new BPSolver(engine, m);
    try {
      fresh.run(residual);
      assert.deepEqual(s.messages(), fresh.messages());
      assert.deepEqual(s.freeEnergy(), fresh.freeEnergy());
    } finally {
      fresh.dispose();
    }
  } finally {
    s.dispose();
  }
});
