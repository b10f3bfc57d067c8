// The parallel schedule's binary-pair paths (assembly/variational/bp_odds.ts: log-odds, and ratios
// for undamped BP) against the general log-space loop of bp.ts, iteration by iteration: adding a
// constant factor of arity 3 changes no message of the other factors (its own messages are uniform)
// but sends the model down the general loop, so the two runs must agree after every number of sweeps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { BPSolver, bpConfig } from '../bindings/variational/bp.ts';
import { ModelBuilder, type Model } from '../bindings/core/model.ts';
import { readFG } from '../bindings/io/formats.ts';
import { dataDir, mulberry32 } from './helpers.ts';

const engine = await loadEngine();

/** A binary pairwise model: fields ~ field·U[−1,1], couplings on a random graph ~ coupling·U[−1,1]; `extra` adds the constant ternary factor. */
function binaryModel(seed: number, n: number, field: number, coupling: number, extra: boolean): Model {
  const rand = mulberry32(seed);
  const b = new ModelBuilder(new Array(n).fill(2));
  for (let v = 0; v < n; v++) b.addUnary(v, [0, field * (2 * rand() - 1)]);
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) if (rand() < 0.4) b.addPairwise(i, j, Array.from({ length: 4 }, () => coupling * (2 * rand() - 1)));
  if (extra) b.addFactor([0, 1, 2], new Array(8).fill(0));
  return b.build();
}

function marginalsAfter(model: Model, sweeps: number, damping: number, weights?: (m: Model) => Float64Array): Float64Array[] {
  const s = new BPSolver(engine, model);
  try {
    if (weights) s.setWeights(weights(model));
    s.run(bpConfig({ schedule: 'parallel', tolerance: 0, maxIterations: sweeps, damping }));
    return s.marginals();
  } finally {
    s.dispose();
  }
}

function maxDiff(a: Float64Array[], b: Float64Array[]): number {
  let d = 0;
  a.forEach((row, v) => row.forEach((x, k) => (d = Math.max(d, Math.abs(x - b[v][k])))));
  return d;
}

// TRW-like weights: pairs in (0.2, 1], the ternary constant factor and unaries 1.
const someWeights = (m: Model) => {
  const rand = mulberry32(99);
  return Float64Array.from({ length: m.nFactors }, (_, f) => (m.arity(f) === 2 ? 0.2 + 0.8 * rand() : 1));
};

test('parallel BP on binary pairs: ratio path (undamped), log-odds path (damped, TRW weights) and the general loop agree after every sweep', () => {
  for (const [seed, field, coupling] of [[1, 1, 1], [2, 0.5, 3], [3, 2, 0.5]] as const) {
    for (const [label, damping, weights] of [['undamped', 0, undefined], ['damping 0.5', 0.5, undefined], ['TRW weights', 0, someWeights], ['TRW weights, damping 0.3', 0.3, someWeights]] as const) {
      for (const sweeps of [1, 2, 5, 30]) {
        const fast = marginalsAfter(binaryModel(seed, 12, field, coupling, false), sweeps, damping, weights);
        const general = marginalsAfter(binaryModel(seed, 12, field, coupling, true), sweeps, damping, weights);
        const d = maxDiff(fast, general);
        assert.ok(d < 1e-12, `seed ${seed}, ${label}, ${sweeps} sweeps: marginals differ by ${d}`);
      }
    }
  }
});

/** Largest |log-odds| of a belief after `sweeps` parallel sweeps, from the factor messages (binary: two entries per scope entry). */
function maxBeliefLogOdds(model: Model, sweeps: number): number {
  const s = new BPSolver(engine, model);
  try {
    if (sweeps > 0) s.run(bpConfig({ schedule: 'parallel', tolerance: 0, maxIterations: sweeps }));
    const msg = s.messages(), L = new Float64Array(model.n);
    for (let p = 0; p < model.scopeVars.length; p++) L[model.scopeVars[p]] += msg[2 * p + 1] - msg[2 * p];
    return Math.max(...Array.from(L, Math.abs));
  } finally {
    s.dispose();
  }
}

test('ratio path: beliefs beyond the double range fall back to log-odds (at the start and mid-run); messages beyond ±700 keep log-odds; all agree with the general loop', () => {
  const cases = [
    // Fields up to ±2000: e^U out of range from the start.
    { field: 2000, coupling: 1, outOfRange: 0 },
    // Fields up to ±700 and couplings ±100: in range at the start, out of range after the first sweep.
    { field: 700, coupling: 100, outOfRange: 1 },
    // Couplings ±800: no pair constants (|a| > 600) or no ratio range: log-odds or the general loop throughout.
    { field: 1, coupling: 800, outOfRange: -1 },
  ];
  for (const { field, coupling, outOfRange } of cases) {
    const model = binaryModel(5, 10, field, coupling, false);
    if (outOfRange >= 0) {
      if (outOfRange > 0) assert.ok(maxBeliefLogOdds(model, outOfRange - 1) < 709, 'in range at first');
      assert.ok(maxBeliefLogOdds(model, outOfRange) > 710, `the case leaves the double range after ${outOfRange} sweeps`);
    }
    for (const sweeps of [1, 3, 20]) {
      const fast = marginalsAfter(model, sweeps, 0);
      const general = marginalsAfter(binaryModel(5, 10, field, coupling, true), sweeps, 0);
      for (const row of fast) for (const x of row) assert.ok(Number.isFinite(x), `non-finite marginal ${x}`);
      const d = maxDiff(fast, general);
      assert.ok(d < 1e-9, `field ${field}, coupling ${coupling}, ${sweeps} sweeps: marginals differ by ${d}`);
    }
  }
});

test("libDAI's testfast.fg: the parallel paths reach the general loop's fixed point", () => {
  const m = readFG(readFileSync(join(dataDir(), 'libdai', 'testfast.fg'), 'utf8'), 'testfast.fg');
  assert.ok(m.isPairwise && Array.from(m.card).every((k) => k === 2), 'testfast.fg is binary pairwise');
  const b = new ModelBuilder(m.card);
  for (let f = 0; f < m.nFactors; f++) b.addFactor(Array.from(m.scope(f)), Array.from(m.table(f)));
  b.addFactor([0, 1, 2], new Array(8).fill(0));
  const general = b.build();
  for (const damping of [0, 0.5]) {
    const d = maxDiff(marginalsAfter(m, 200, damping), marginalsAfter(general, 200, damping));
    assert.ok(d < 1e-12, `damping ${damping}: marginals differ by ${d}`);
  }
});
