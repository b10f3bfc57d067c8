// Mean field on factor graphs of any arity against enumeration: the reported bound is the
// mean-field objective of the returned marginals (brute force), never above the exact log Z, every
// sweep raises it; on pairwise models the kernel follows the canonical-form kernel from the same
// start; zero-probability models are refused; MFRP refuses higher-order factors by name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { runMeanField, MeanFieldSolver } from '../bindings/variational/meanfield.ts';
import { FactorGraphMeanField } from '../bindings/variational/meanfield-fg.ts';
import { runMFRP } from '../bindings/variational/mfrp.ts';
import { toCanonical } from '../bindings/core/canonical.ts';
import { applyEvidence } from '../bindings/io/formats.ts';
import { ModelBuilder } from '../bindings/core/model.ts';
import { BoundFactorGraph } from '../bindings/core/bound-fg.ts';
import { feasibleConfiguration } from '../bindings/core/feasible.ts';
import { EngineError, ModelError } from '../bindings/core/errors.ts';
import { bruteForce, mfObjectiveBrute, mulberry32, randomFactorGraph, randomModel } from './helpers.ts';

const engine = await loadEngine();

function close(a: number | null, b: number, tol: number, what: string): void {
  if (a === b) return; // equal infinities too
  assert.ok(a !== null && Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);
}

/** A random point of each variable's simplex. */
function randomMarginals(rand: () => number, card: ArrayLike<number>): Float64Array[] {
  return Array.from(card, (K) => {
    const p = Float64Array.from({ length: K }, () => -Math.log(1 - rand()));
    const s = p.reduce((a, b) => a + b, 0);
    return p.map((x) => x / s);
  });
}

test('random factor graphs (arities 1–4, cardinalities 1–5, zeros): bound = objective of its marginals ≤ exact log Z', () => {
  const rand = mulberry32(21);
  const cards = [[2], [1, 2, 3], [3, 5], [2, 4], [1, 5]];
  let higher = 0;
  for (let t = 0; t < 30; t++) {
    const m = randomFactorGraph(rand, 3 + (t % 5), { cards: cards[t % 5], maxArity: 4, factors: 3 + (t % 6), zeros: t % 3 === 0 ? 0.3 : 0, scale: 2 });
    if (m.isPairwise) continue;
    higher++;
    const r = runMeanField(engine, m, { seed: t, restarts: 4 });
    assert.equal(r.diagnostics.kernel, 'factor-graph');
    assert.equal(r.logZKind, 'lower-bound');
    const exact = bruteForce(m).logZ;
    close(r.logZ, mfObjectiveBrute(m, r.marginals), 1e-9, `model ${t}: bound vs its objective`);
    assert.ok(r.logZ! <= exact + 1e-9, `model ${t}: bound ${r.logZ} above log Z ${exact}`);
    r.marginals.forEach((p, v) => close(p.reduce((a, b) => a + b, 0), 1, 1e-12, `model ${t} variable ${v} sums to 1`));
  }
  assert.ok(higher >= 15, `${higher} higher-order models tested`);
});

test('the objective at any marginals equals brute force; every sweep raises it (zeros: never above −∞ wrongly)', () => {
  const rand = mulberry32(22);
  for (let t = 0; t < 10; t++) {
    const m = randomFactorGraph(rand, 5, { cards: [2, 3], maxArity: 4, factors: 5, zeros: t % 2 ? 0.25 : 0 });
    const s = new FactorGraphMeanField(engine, m);
    try {
      const q = randomMarginals(rand, m.card);
      s.setMarginals(q);
      const want = mfObjectiveBrute(m, q);
      const got = s.objective();
      if (want === -Infinity) assert.equal(got, -Infinity, `model ${t}`);
      else close(got, want, 1e-10, `model ${t}: objective`);
      let last = got;
      for (let sweep = 0; sweep < 8; sweep++) {
        const info = s.ascend(1, -1);
        const now = mfObjectiveBrute(m, s.marginals());
        if (now !== -Infinity) close(info.logZ, now, 1e-10, `model ${t} sweep ${sweep}`);
        assert.ok(info.logZ >= last - 1e-10 || last === -Infinity, `model ${t} sweep ${sweep}: ${info.logZ} after ${last}`);
        last = info.logZ;
      }
    } finally {
      s.dispose();
    }
  }
});

test('pairwise models: from the same start the factor-graph kernel follows the canonical-form kernel', () => {
  const rand = mulberry32(23);
  for (let t = 0; t < 8; t++) {
    const m = randomModel(rand, 7, { cards: [[2], [2, 3], [3]][t % 3], density: 0.5, scale: 1.5, zeros: t % 2 ? 0.15 : 0 });
    const q = randomMarginals(rand, m.card);
    const pw = new MeanFieldSolver(engine, m), fg = new FactorGraphMeanField(engine, m);
    try {
      const form = toCanonical(m);
      const bits = new Float64Array(form.nBits);
      for (let v = 0; v < m.n; v++) {
        const b = form.blockStart[v];
        if (form.oneHot[v]) bits.set(q[v], b);
        else if (m.card[v] === 2) bits[b] = q[v][1];
      }
      pw.setBitMarginals(bits);
      fg.setMarginals(q);
      close(fg.objective(), pw.objective(), 1e-10, `model ${t}: objective at the start`);
      const a = pw.ascend(200, 1e-13), b = fg.ascend(200, 1e-13);
      close(b.logZ, a.logZ, 1e-9, `model ${t}: bound after ascent`);
      assert.equal(b.sweeps, a.sweeps, `model ${t}: sweeps`);
      // A model with Z = 0 (every configuration hits a zero): no start avoids them, the run refuses.
      if (Number.isNaN(bruteForce(m).logZ)) assert.throws(() => runMeanField(engine, m), EngineError);
      fg.marginals().forEach((p, v) => {
        const b2 = form.blockStart[v];
        const want = form.oneHot[v] ? Array.from(pw.bitMarginals().subarray(b2, b2 + m.card[v])) : m.card[v] === 2 ? [1 - pw.bitMarginals()[b2], pw.bitMarginals()[b2]] : [1];
        p.forEach((x, k) => assert.ok(Math.abs(x - want[k]) < 1e-8, `model ${t} variable ${v} state ${k}: ${x} vs ${want[k]}`));
      });
    } finally {
      pw.dispose();
      fg.dispose();
    }
  }
});

test('options, budget and determinism as the pairwise kernel: same seed same answer; the budget stops restarts', () => {
  const m = randomFactorGraph(mulberry32(24), 9, { cards: [2, 3], maxArity: 3, factors: 12 });
  assert.ok(!m.isPairwise);
  const a = runMeanField(engine, m, { seed: 5, restarts: 6 }), b = runMeanField(engine, m, { seed: 5, restarts: 6 });
  assert.equal(a.logZ, b.logZ);
  assert.deepEqual(a.marginals, b.marginals);
  assert.equal(a.diagnostics.restarts, 6);
  assert.equal(a.diagnostics.orderedStarts, 2);
  const s = new FactorGraphMeanField(engine, m);
  const cost = s.sweepCost;
  s.dispose();
  const small = runMeanField(engine, m, { seed: 5, restarts: 6, budget: 3 * cost });
  assert.ok((small.diagnostics.work as number) <= 3 * cost + cost * 200, 'work stays near the budget');
  assert.ok((small.diagnostics.restarts as number) + (small.diagnostics.orderedStarts as number) < 8);
  assert.equal(small.diagnostics.budgetExhausted, true);
  assert.throws(() => runMeanField(engine, m, { restarts: 0 }), ModelError);
});

test('zero probability: an all-zero factor of arity 3 and impossible evidence are refused (EngineError), never NaN', () => {
  const allZero = new ModelBuilder([2, 2, 2]).addUnary(0, [0, 1]).addFactor([2, 0, 1], new Array(8).fill(-Infinity)).build();
  assert.throws(() => runMeanField(engine, allZero), (e: unknown) => e instanceof EngineError && /factor 1 \(variables 0 1 2\) is zero everywhere/.test(e.message));
  const b = new ModelBuilder([2, 2, 3]);
  b.addFactor([0, 1, 2], [0, -Infinity, 0, 0, 0, 0, 0, -Infinity, 0, 0, 0, 0]);
  const m = b.build();
  // (x1, x2) = (0, 1) is impossible whatever x0.
  assert.throws(() => runMeanField(engine, applyEvidence(m, new Map([[1, 0], [2, 1]])).model), (e: unknown) => e instanceof EngineError && /no configuration has positive probability/.test(e.message));
  const ok = runMeanField(engine, applyEvidence(m, new Map([[1, 0], [2, 2]])).model);
  assert.ok(Number.isFinite(ok.logZ));
  assert.deepEqual([...ok.marginals[2]], [0, 0, 1]);
});

test('MFRP refuses a higher-order model with a ModelError naming the factor and the methods that take it', () => {
  const m = new ModelBuilder([2, 2, 2, 2]).addPairwise(0, 1, [0, 1, 1, 0]).addFactor([3, 1, 2], [0, 1, 0, 1, 0, 1, 0, 1]).build();
  assert.throws(() => runMFRP(engine, m), (e: unknown) => e instanceof ModelError && /factor 1 has arity 3 \(variables 1 2 3\)/.test(e.message) && /mf/.test(e.message) && /gibbs/.test(e.message));
});

test('feasible configuration: depth-first search finds one iff Z > 0; the local search finds one where the search gives up', () => {
  const rand = mulberry32(25);
  let none = 0, found = 0;
  for (let t = 0; t < 30; t++) {
    // The all-zero state is always allowed: random evidence on three variables may exclude every state.
    const m0 = randomFactorGraph(rand, 6, { cards: [2, 3], maxArity: 4, factors: 6, zeros: 0.3 });
    const m = applyEvidence(m0, new Map([1, 3, 5].slice(0, 1 + (t % 3)).map((v) => [v, Math.floor(rand() * m0.card[v])]))).model;
    const g = BoundFactorGraph.fromModel(engine, m, 'test');
    try {
      const z = bruteForce(m).logZ;
      const dfs = feasibleConfiguration(g);
      if (Number.isNaN(z)) {
        assert.equal(dfs.status, 'none', `model ${t}: Z = 0`);
        none++;
      } else {
        assert.equal(dfs.status, 'found', `model ${t}: Z > 0`);
        assert.ok(m.logPotential(dfs.x!) > -Infinity);
        // A budget of one assignment: the local search takes over.
        const walk = feasibleConfiguration(g, 1, t + 1, 1e5);
        assert.equal(walk.status, 'found', `model ${t}: local search`);
        assert.ok(m.logPotential(walk.x!) > -Infinity);
        found++;
      }
    } finally {
      g.dispose();
    }
  }
  assert.ok(none >= 3 && found >= 10, `${none} models with Z = 0, ${found} with Z > 0`);
});
