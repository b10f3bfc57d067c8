// AIS and population annealing on the factor graph (any arity, Gibbs transitions) against
// enumeration: log Z within 4 standard errors at fixed seeds, on random factor graphs with hard
// zeros (where a share of the uniform starts is forbidden: dead runs, dead particles).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { runAIS, estimateLogZ } from '../bindings/logz/logz.ts';
import { factorGraphLogZ0 } from '../bindings/logz/ais-fg.ts';
import { ModelBuilder, type Model } from '../bindings/core/model.ts';
import { EngineError, ModelError } from '../bindings/core/errors.ts';
import { bruteForce, configurations, mulberry32, randomFactorGraph } from './helpers.ts';

const engine = await loadEngine();

/** Share of f_0's configurations (uniform over what the unary factors allow) that the model forbids. */
function deadShare(m: Model): number {
  let allowed = 0, dead = 0;
  for (const x of configurations(m.card)) {
    let unaryOk = true;
    for (let f = 0; f < m.nFactors; f++) if (m.arity(f) === 1 && m.tables[m.tableStart[f] + x[m.scope(f)[0]]] === -Infinity) unaryOk = false;
    if (!unaryOk) continue;
    allowed++;
    if (m.logPotential(x) === -Infinity) dead++;
  }
  return dead / allowed;
}

function models(): Model[] {
  const rand = mulberry32(13);
  const out: Model[] = [];
  for (let t = 0; out.length < 4; t++) {
    const m = randomFactorGraph(rand, 5 + (t % 2), { cards: [[2, 3], [1, 2, 4], [3, 5], [2]][t % 4], maxArity: 4, factors: 5, zeros: 0.12, scale: 1 });
    if (m.isPairwise) continue;
    out.push(m);
  }
  return out;
}

test('AIS with Gibbs transitions on random factor graphs with zeros: log Z within 4 SE of enumeration', () => {
  let sawDead = false;
  models().forEach((m, i) => {
    const exact = bruteForce(m).logZ;
    const r = runAIS(engine, m, { seed: 10 + i, runs: 1024, steps: 400 });
    assert.equal(r.diagnostics.transition, 'gibbs');
    assert.equal(r.diagnostics.kernel, 'factor-graph');
    assert.equal(r.diagnostics.logZ0, factorGraphLogZ0(m));
    if ((r.diagnostics.deadRuns as number) > 0) sawDead = true;
    assert.ok(r.logZStdErr < 0.05, `model ${i}: standard error ${r.logZStdErr} too large for a meaningful test`);
    assert.ok(Math.abs(r.logZ - exact) <= 4 * r.logZStdErr, `model ${i}: ${r.logZ} ± ${r.logZStdErr} vs exact ${exact}`);
  });
  assert.ok(sawDead, 'some runs started outside the support');
});

test('population annealing on random factor graphs with zeros: log Z within 4 SE, no NaN from dead particles', () => {
  models().forEach((m, i) => {
    const share = deadShare(m);
    const exact = bruteForce(m).logZ;
    const r = runAIS(engine, m, { seed: 20 + i, runs: 1024, population: 64, steps: 300 });
    assert.equal(r.diagnostics.populations, 16);
    assert.ok(Number.isFinite(r.logZ) && Number.isFinite(r.logZStdErr), `model ${i} (dead share ${share.toFixed(2)}): ${r.logZ} ± ${r.logZStdErr}`);
    assert.ok(r.logZStdErr < 0.05, `model ${i}: standard error ${r.logZStdErr} too large for a meaningful test`);
    assert.ok(Math.abs(r.logZ - exact) <= 4 * r.logZStdErr, `model ${i}: ${r.logZ} ± ${r.logZStdErr} vs exact ${exact}`);
  });
  assert.ok(models().some((m) => deadShare(m) > 0.2), 'a share of the particles starts dead');
});

test('the base: unary zeros (evidence) restrict f_0; log Z_0 counts the allowed states', () => {
  const b = new ModelBuilder([3, 2, 4, 2]);
  b.addUnary(0, [-Infinity, 0, -Infinity]); // observed: state 1
  b.addUnary(2, [0.2, -Infinity, 0.1, 0.5]);
  b.addFactor([0, 1, 2], Array.from({ length: 24 }, (_, e) => (e % 7 === 3 ? -Infinity : Math.sin(e))));
  b.addFactor([1, 2, 3], Array.from({ length: 16 }, (_, e) => Math.cos(e)));
  const m = b.build();
  assert.ok(Math.abs(factorGraphLogZ0(m) - Math.log(1 * 2 * 3 * 2)) < 1e-12);
  const exact = bruteForce(m).logZ;
  for (const population of [1, 16]) {
    const r = runAIS(engine, m, { seed: 3, runs: 256, population, steps: 200 });
    assert.ok(r.logZStdErr < 0.05 && Math.abs(r.logZ - exact) <= 4 * r.logZStdErr, `population ${population}: ${r.logZ} ± ${r.logZStdErr} vs ${exact}`);
  }
  const none = new ModelBuilder([2, 2, 2]);
  none.addUnary(1, [-Infinity, -Infinity]);
  none.addFactor([0, 1, 2], [0, 0, 0, 0, 0, 0, 0, 0]);
  assert.throws(() => runAIS(engine, none.build(), {}), (e: unknown) => e instanceof ModelError && /variable 1 has no state/.test((e as Error).message));
});

test('every run dead: a clear error, never NaN; tree and relaxed transitions refuse higher-order models', () => {
  // Three 4-ary factors that each allow only 0000: 1 start in 4096 is alive.
  const b = new ModelBuilder(new Array(12).fill(2));
  for (let q = 0; q < 3; q++) b.addFactor([4 * q, 4 * q + 1, 4 * q + 2, 4 * q + 3], Array.from({ length: 16 }, (_, e) => (e === 0 ? 0 : -Infinity)));
  const sat = b.build();
  assert.throws(() => runAIS(engine, sat, { runs: 8, steps: 20 }), (e: unknown) => e instanceof EngineError && /every AIS run/.test((e as Error).message));
  assert.throws(() => runAIS(engine, sat, { runs: 8, population: 8, steps: 20 }), (e: unknown) => e instanceof EngineError && /every AIS run/.test((e as Error).message));
  for (const transition of ['tree', 'relaxed'] as const) {
    assert.throws(
      () => estimateLogZ(engine, sat, { estimator: 'ais', transition }),
      (e: unknown) => e instanceof ModelError && new RegExp(`factor 0 has arity 4 .*AIS with transition '${transition}'.*transition 'gibbs'`).test((e as Error).message),
    );
  }
  assert.throws(() => runAIS(engine, sat, { collapse: true }), /collapsed AIS weights need the tree transition/);
});

test('AIS runs done in pieces (firstRun) are the runs of one call', () => {
  const m = models()[0];
  const all = runAIS(engine, m, { seed: 5, runs: 32, steps: 100, schedule: 'linear' });
  const a = runAIS(engine, m, { seed: 5, runs: 16, steps: 100, schedule: 'linear' });
  const b = runAIS(engine, m, { seed: 5, runs: 16, steps: 100, schedule: 'linear', firstRun: 16 });
  assert.deepEqual(Array.from(all.logWeights), [...a.logWeights, ...b.logWeights]);
});
