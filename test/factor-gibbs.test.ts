// Sequential Gibbs on the factor graph (any arity) against exact answers: every marginal within 4
// Monte Carlo standard errors (batch means) of enumeration at fixed seeds, one sweep against the
// exact systematic-scan kernel by chi-square, a power check, and the plumbing (dispatch, workers).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { FactorGibbsSampler, runFactorGibbs, gibbsKernel } from '../bindings/samplers/factor-gibbs.ts';
import { emitChains, range, DiscreteReducer } from '../bindings/samplers/chains.ts';
import { gibbsRun } from '../bindings/samplers/gibbs.ts';
import { factorGibbsResult } from '../bindings/samplers/factor-gibbs.ts';
import { Model, ModelBuilder } from '../bindings/core/model.ts';
import { ModelError } from '../bindings/core/errors.ts';
import { infer } from '../bindings/infer.ts';
import { runParallel } from '../bindings/parallel/parallel.ts';
import { bruteForce, configurations, mulberry32, randomFactorGraph, randomModel } from './helpers.ts';

const engine = await loadEngine();

/** The model with every table entry multiplied by β (−∞ stays −∞): p_β ∝ exp(β Σ_f θ_f). */
function tempered(m: Model, beta: number): Model {
  return new Model({ ...m.toData(), tables: m.tables.map((t) => (t === -Infinity ? t : beta * t)), logConst: beta * m.logConst });
}

/**
 * Whether single-site moves connect the support (every configuration of positive probability
 * reachable from every other through configurations of positive probability): the condition for
 * Gibbs to be irreducible. Breadth-first search over the enumerated configurations.
 */
function supportConnected(m: Model): boolean {
  const stride = new Array<number>(m.n);
  let size = 1;
  for (let v = m.n - 1; v >= 0; v--) {
    stride[v] = size;
    size *= m.card[v];
  }
  const ok = new Uint8Array(size);
  let first = -1, count = 0, i = 0;
  for (const x of configurations(m.card)) {
    if (m.logPotential(x) > -Infinity) {
      ok[i] = 1;
      count++;
      if (first < 0) first = i;
    }
    i++;
  }
  const seen = new Uint8Array(size);
  const queue = [first];
  seen[first] = 1;
  let reached = 1;
  while (queue.length) {
    const c = queue.pop()!;
    for (let v = 0; v < m.n; v++) {
      const xv = Math.floor(c / stride[v]) % m.card[v];
      for (let k = 0; k < m.card[v]; k++) {
        const d = c + (k - xv) * stride[v];
        if (k !== xv && ok[d] && !seen[d]) {
          seen[d] = 1;
          reached++;
          queue.push(d);
        }
      }
    }
  }
  return reached === count;
}

/** Marginals of a factor-graph Gibbs run at inverse temperature β (1: the model), through chains.ts. */
function runAt(model: Model, beta: number, seed: number, samples: number) {
  const s = new FactorGibbsSampler(engine, model);
  try {
    const run = gibbsRun({ seed, samples, chains: 4, burnin: 500 });
    const red = new DiscreteReducer(s.layout, false);
    const tempo = { init: s.init.bind(s), step: (st: ReturnType<typeof s.init>, n: number, acc: number) => s.step(st, n, acc, beta), accumulator: s.accumulator.bind(s), readAndClear: s.readAndClear.bind(s) };
    emitChains(tempo, { ...run, chains: range(run.chains), chunk: 1000 }, (c, e) => red.add(e, c));
    return factorGibbsResult(s.layout, red, run, 1, false);
  } finally {
    s.dispose();
  }
}

/** Largest |estimate − exact| / MCSE over all variables and states (SE 0 counts as exact only when equal). */
function worstError(r: { marginals: Float64Array[]; marginalStdErr: Float64Array[] | null }, exact: Float64Array[], maxSE = 0.012): number {
  let worst = 0;
  r.marginals.forEach((row, v) =>
    row.forEach((p, k) => {
      const se = r.marginalStdErr![v][k];
      assert.ok(se < maxSE, `variable ${v} state ${k}: standard error ${se} too large for a meaningful test`);
      const d = Math.abs(p - exact[v][k]);
      worst = Math.max(worst, d <= 1e-12 ? 0 : d / se);
    }),
  );
  return worst;
}

function assertWithinMCSE(model: Model, seed: number, samples = 20000, beta = 1): void {
  const exact = bruteForce(beta === 1 ? model : tempered(model, beta));
  const r = beta === 1 ? runFactorGibbs(engine, model, { seed, samples, chains: 4, burnin: 500 }) : runAt(model, beta, seed, samples);
  assert.equal(r.partial, false);
  assert.equal(r.diagnostics.kernel, 'factor-graph');
  const w = worstError(r, exact.marginals);
  assert.ok(w <= 4, `seed ${seed}: a marginal is ${w.toFixed(2)} standard errors from enumeration`);
}

test('random factor graphs, arities 1–4, cardinalities 1–5, no zeros: marginals within 4 MCSE of enumeration', () => {
  const rand = mulberry32(31);
  const cards = [[1, 2, 3], [2, 4, 5], [2], [3, 5], [1, 2, 3, 4, 5], [2, 3]];
  for (let t = 0; t < 6; t++) {
    const m = randomFactorGraph(rand, 4 + (t % 3), { cards: cards[t], maxArity: 4, factors: 5, scale: 1 });
    assert.ok(m.maxArity >= 3 || t > 0, 'higher-order factors are present');
    assertWithinMCSE(m, 100 + t);
  }
});

test('random factor graphs with hard zeros (support connected by single-site moves): within 4 MCSE', () => {
  const rand = mulberry32(47);
  let tested = 0, skipped = 0;
  for (let t = 0; tested < 6; t++) {
    const m = randomFactorGraph(rand, 4 + (t % 3), { cards: [[2, 3], [1, 2, 4], [3, 5], [2]][t % 4], maxArity: 4, factors: 5, zeros: 0.25, scale: 1 });
    // Gibbs is irreducible only when single-site moves connect the support: the others cannot be
    // sampled by it (not a tolerance matter), and are counted to show the filter is not vacuous.
    if (!supportConnected(m)) {
      skipped++;
      continue;
    }
    let zeros = 0;
    for (const x of m.tables) if (x === -Infinity) zeros++;
    assert.ok(zeros > 0);
    assertWithinMCSE(m, 200 + t, 40000);
    tested++;
  }
  assert.ok(tested === 6 && skipped < 30, `${skipped} models skipped`);
});

test('pairwise models run through the factor-graph kernel too (binary, multi-valued, hard zeros)', () => {
  const rand = mulberry32(53);
  assertWithinMCSE(randomModel(rand, 7, { density: 0.5, scale: 1 }), 300);
  assertWithinMCSE(randomModel(rand, 6, { cards: [2, 3, 4], density: 0.5 }), 301);
  const b = new ModelBuilder(new Array(8).fill(2));
  for (let v = 0; v < 8; v++) b.addUnary(v, [0, rand() - 0.2]);
  for (let v = 0; v < 8; v++) b.addPairwise(v, (v + 1) % 8, [0, 0, 0, -Infinity]); // hard-core ring
  assertWithinMCSE(b.build(), 302);
});

test('tempered sweeps (β = 0.6) sample exp(β Σ θ), zeros kept; the power check: β ≠ 1 fails against β = 1', () => {
  const rand = mulberry32(61);
  const m = randomFactorGraph(rand, 5, { cards: [2, 3], maxArity: 4, factors: 5, scale: 2 });
  assertWithinMCSE(m, 400, 20000, 0.6);
  // A deliberately wrong conditional (β = 0.6 where the model has β = 1) is far outside 4 MCSE.
  const r = runAt(m, 0.6, 401, 20000);
  const w = worstError(r, bruteForce(m).marginals);
  assert.ok(w > 20, `a wrong conditional is only ${w.toFixed(1)} standard errors off`);
});

/** Upper quantile of χ²_df (Wilson–Hilferty), z the normal quantile. */
function chi2Quantile(df: number, z: number): number {
  const a = 2 / (9 * df);
  return df * (1 - a + z * Math.sqrt(a)) ** 3;
}

test('one sweep from a fixed state matches the exact systematic-scan kernel (chi-square)', () => {
  // x0 → y with probability Π_v p(y_v | y_<v, x0_>v); a ternary factor with zeros, cardinalities 2, 3, 2, 3.
  const b = new ModelBuilder([2, 3, 2, 3]);
  const rand = mulberry32(71);
  b.addUnary(0, [0.3, -0.2]);
  b.addFactor([0, 1, 2], Array.from({ length: 12 }, (_, e) => (e === 5 || e === 8 ? -Infinity : rand() * 2 - 1)));
  b.addFactor([1, 2, 3], Array.from({ length: 18 }, (_, e) => (e === 4 ? -Infinity : rand() * 2 - 1)));
  b.addPairwise(0, 3, [0.5, -0.5, 0, 0.2, -1, 0.7]);
  const m = b.build();
  const x0 = [1, 2, 0, 1];
  assert.ok(m.logPotential(x0) > -Infinity);
  const exact = new Map<string, number>();
  for (const y of configurations(m.card)) {
    let p = 1;
    const z = Int32Array.from(x0);
    // From a state in the support every conditional has a finite state, so tot > 0 while p > 0.
    for (let v = 0; v < m.n && p > 0; v++) {
      const w = Array.from({ length: m.card[v] }, (_, k) => ((z[v] = k), Math.exp(m.logPotential(z))));
      const tot = w.reduce((s, a) => s + a, 0);
      p *= w[y[v]] / tot;
      z[v] = y[v];
    }
    exact.set(y.join(','), p);
  }
  const s = new FactorGibbsSampler(engine, m);
  const N = 40000;
  const counts = new Map<string, number>();
  try {
    const st = s.init(9, 0);
    for (let t = 0; t < N; t++) {
      s.setConfiguration(st, x0);
      s.step(st, 1);
      const key = s.configuration(st).join(',');
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  } finally {
    s.dispose();
  }
  let chi2 = 0, df = -1, lumpObs = 0, lumpExp = 0;
  for (const [key, p] of exact) {
    const o = counts.get(key) ?? 0;
    if (p === 0) assert.equal(o, 0, `configuration ${key} has probability 0 but was drawn ${o} times`);
    else if (N * p < 5) {
      lumpObs += o;
      lumpExp += N * p;
    } else {
      chi2 += (o - N * p) ** 2 / (N * p);
      df++;
    }
  }
  if (lumpExp > 0) {
    chi2 += (lumpObs - lumpExp) ** 2 / lumpExp;
    df++;
  }
  assert.ok(df >= 10, `only ${df} degrees of freedom`);
  assert.ok(chi2 < chi2Quantile(df, 3.72), `chi-square ${chi2.toFixed(1)} on ${df} degrees of freedom (p < 1e-4)`);
});

test('dispatch: method gibbs takes the factor-graph kernel for arity > 2 and the canonical one for pairwise models', () => {
  const rand = mulberry32(81);
  const hi = randomFactorGraph(rand, 5, { cards: [2, 3], maxArity: 4, factors: 4 });
  const lo = randomModel(rand, 5);
  assert.equal(gibbsKernel(hi), hi.isPairwise ? 'canonical' : 'factor-graph');
  assert.ok(!hi.isPairwise);
  const r = infer(engine, hi, { method: 'gibbs', seed: 1, samples: 200 });
  assert.equal(r.diagnostics.kernel, 'factor-graph');
  assert.ok((r.diagnostics.siteUpdatesPerSecond as number) > 0 && (r.diagnostics.changeRate as number) > 0);
  assert.equal(infer(engine, lo, { method: 'gibbs', seed: 1, samples: 200 }).diagnostics.kernel, 'canonical');
});

test('determinism, sampler shape, configurations, cancellation', () => {
  const m = randomFactorGraph(mulberry32(91), 6, { cards: [2, 3, 4], maxArity: 3, factors: 6, zeros: 0.2 });
  const a = runFactorGibbs(engine, m, { seed: 42, samples: 500 });
  const b = runFactorGibbs(engine, m, { seed: 42, samples: 500 });
  const c = runFactorGibbs(engine, m, { seed: 43, samples: 500 });
  assert.deepEqual(a.marginals, b.marginals);
  assert.notDeepEqual(a.marginals, c.marginals);
  const s = new FactorGibbsSampler(engine, m);
  const x0 = s.init(42, 0), x1 = s.init(42, 1), y0 = s.init(42, 0);
  assert.deepEqual(s.configuration(x0), s.configuration(y0));
  const info = s.step(x0, 30);
  s.step(x1, 30);
  s.step(y0, 30);
  assert.equal(info.sweeps, 30);
  assert.ok(info.changeRate > 0 && info.changeRate <= 1);
  assert.deepEqual(s.configuration(x0), s.configuration(y0));
  assert.notDeepEqual(s.configuration(x0), s.configuration(x1));
  // After burn-in from a uniform start the chain is inside the support.
  assert.ok(m.logPotential(s.configuration(x0)) > -Infinity);
  s.setConfiguration(x1, [0, 0, 0, 0, 0, 0]);
  assert.deepEqual(Array.from(s.configuration(x1)), [0, 0, 0, 0, 0, 0]);
  assert.throws(() => s.setConfiguration(x1, [0, 0, 0, 0, 0, 9]), /out of range/);
  assert.throws(() => s.step(x1, 1, 0, 0), /beta must be/);
  s.dispose();
  assert.throws(() => s.step(x0, 1), /use after dispose/);
  const ctl = new AbortController();
  const r = runFactorGibbs(engine, m, { samples: 1000, chains: 4, batches: 10, signal: ctl.signal, onProgress: (p) => p.done >= 1500 && ctl.abort() });
  assert.equal(r.partial, true);
  r.marginals.forEach((row) => assert.ok(Math.abs(row.reduce((x, y) => x + y, 0) - 1) < 1e-12));
});

test('workers 1, 2 and 3 give results bit-identical to the single-thread factor-graph run', async () => {
  const m = randomFactorGraph(mulberry32(97), 7, { cards: [2, 3], maxArity: 4, factors: 6, zeros: 0.1 });
  const opts = { seed: 17, chains: 5, samples: 400, burnin: 50, batches: 8 };
  const ref = infer(engine, m, { method: 'gibbs', ...opts });
  assert.equal(ref.diagnostics.kernel, 'factor-graph');
  for (const workers of [1, 2, 3]) {
    const r = await runParallel(m, { ...opts, workers });
    assert.equal(r.diagnostics.workers, workers);
    assert.equal(r.diagnostics.kernel, 'factor-graph');
    assert.deepEqual(r.marginals, ref.marginals, `marginals, workers = ${workers}`);
    assert.deepEqual(r.marginalStdErr, ref.marginalStdErr, `standard errors, workers = ${workers}`);
    assert.equal(r.diagnostics.changeRate, ref.diagnostics.changeRate);
  }
});

test("the canonical kernel's options (precision 'f32', scan 'colored', probabilityTable 'on') are refused on a model the factor-graph kernel samples, not ignored", () => {
  const m = new ModelBuilder([2, 2, 2]).addFactor([0, 1, 2], [1, 2, 3, 4, 5, 6, 7, 8].map(Math.log)).build();
  for (const o of [{ precision: 'f32' }, { scan: 'colored' }, { probabilityTable: 'on' }] as const) {
    assert.throws(() => runFactorGibbs(engine, m, { ...o, samples: 10 }), (e: unknown) => e instanceof ModelError && /apply to Gibbs on pairwise models .*arity 3/.test((e as Error).message), JSON.stringify(o));
  }
  assert.doesNotThrow(() => runFactorGibbs(engine, m, { precision: 'f64', scan: 'sequential', probabilityTable: 'off', samples: 10 }));
});
