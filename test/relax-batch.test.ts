// The relaxed samplers' batches of chains (assembly/relax/factor_batch.ts, relaxed_batch.ts,
// samplers/blockgibbs_batch.ts, hmc_batch.ts): every column of a batched factor product is the single
// matrix–vector product bit for bit, and every chain of a batch is the chain run alone bit for bit — block
// Gibbs and DHMC (warm-up with adaptation, divergent trajectories, one-hot blocks), for the dense, sparse
// Cholesky, incidence and FFT factors, and whole runs (runBlockGibbs, runDHMC) against their chains folded
// one by one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { buildRelaxation, type Relaxation } from '../bindings/relax/relaxation.ts';
import { BoundRelaxation, isLowerTriangular, type RelaxationData } from '../bindings/relax/relaxation-bound.ts';
import { fftFactor } from '../bindings/relax/fft-factor.ts';
import { BlockGibbsSampler, runBlockGibbs } from '../bindings/samplers/blockgibbs.ts';
import { DHMCSampler, runDHMC, continuousChains, continuousPlan, continuousSampler, ContinuousReducer, DHMC_DEFAULTS } from '../bindings/samplers/dhmc.ts';
import { emitChains, DiscreteReducer, range, relaxedBatchWidth, RELAXED_BATCH_WIDTH } from '../bindings/samplers/chains.ts';
import { blockGibbsRun, blockGibbsResult } from '../bindings/samplers/blockgibbs.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import { toCanonical } from '../bindings/core/canonical.ts';
import type { Model } from '../bindings/core/model.ts';
import { mulberry32, randomModel } from './helpers.ts';

const engine = await loadEngine();

/** Bitwise equality of two f64 arrays (NaN payloads and signed zeros included). */
function sameBits(a: ArrayLike<number>, b: ArrayLike<number>, what: string): void {
  assert.equal(a.length, b.length, `${what}: lengths`);
  const x = new BigUint64Array(Float64Array.from(a).buffer), y = new BigUint64Array(Float64Array.from(b).buffer);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) assert.fail(`${what}: entry ${i} differs (${a[i]} vs ${b[i]})`);
}

const rand = mulberry32(2024);
const binary = randomModel(rand, 9, { density: 0.5, scale: 0.8 });
const potts = randomModel(rand, 6, { cards: [2, 3], density: 0.7, scale: 0.8 });
const lattice = isingLattice({ shape: [4, 4], periodic: true, J: 0.3, h: 0.15 });

function relaxations(model: Model): [string, Relaxation][] {
  return (['dense-cholesky', 'sparse-cholesky', 'incidence'] as const).map((factor) => [factor, buildRelaxation(engine, model, { factor })]);
}

test('batched factor products: each column is the single M x and Mᵀ v, bit for bit', () => {
  const k = engine.kernels;
  for (const model of [binary, potts]) {
    for (const [name, rel] of relaxations(model)) {
      const bound = new BoundRelaxation(engine, rel);
      try {
        const a = bound.arena;
        const { n, m } = bound;
        for (const B of [1, 2, 3, 4, 5, 8]) {
          const X = Float64Array.from({ length: m * B }, () => 3 * (rand() - 0.5));
          // V with zero entries, rows zero in some chains and rows zero in every chain (Mᵀ v skips those).
          const V = Float64Array.from({ length: n * B }, (_, q) => (Math.floor(q / B) % 3 === 0 ? 0 : rand() < 0.4 ? 0 : rand() < 0.5 ? 1 : rand() - 0.5));
          const xp = a.allocF64(X), up = a.allocF64(n * B), vp = a.allocF64(V), gp = a.allocF64(m * B);
          const x1 = a.allocF64(m), u1 = a.allocF64(n), v1 = a.allocF64(n), g1 = a.allocF64(m);
          k.factorMulBatch(bound.factor, xp, up, B);
          k.factorMulTBatch(bound.factor, vp, gp, B);
          const U = a.readF64(up, n * B), G = a.readF64(gp, m * B);
          for (let b = 0; b < B; b++) {
            a.f64(x1, m).set(Array.from({ length: m }, (_, i) => X[i * B + b]));
            a.f64(v1, n).set(Array.from({ length: n }, (_, i) => V[i * B + b]));
            k.factorMul(bound.factor, x1, u1);
            k.factorMulT(bound.factor, v1, g1);
            sameBits(Array.from({ length: n }, (_, i) => U[i * B + b]), a.readF64(u1, n), `${name} M x, B = ${B}, chain ${b}`);
            sameBits(Array.from({ length: m }, (_, i) => G[i * B + b]), a.readF64(g1, m), `${name} Mᵀ v, B = ${B}, chain ${b}`);
          }
        }
      } finally {
        bound.dispose();
      }
    }
  }
});

test('dense Cholesky factor: the products that skip its zeros above the diagonal are the full products bit for bit', () => {
  const k = engine.kernels;
  for (const model of [binary, potts, randomModel(mulberry32(5), 14, { density: 0.8, scale: 0.6 })]) {
    const rel = buildRelaxation(engine, model, { factor: 'dense-cholesky' });
    const f = rel.factor as Extract<Relaxation['factor'], { kind: 'dense' }>;
    assert.ok(isLowerTriangular(f.values, f.n, f.m), 'dense Cholesky is lower triangular');
    const bound = new BoundRelaxation(engine, rel);
    try {
      const a = bound.arena, { n, m } = bound;
      // The same matrix without the flag: every product reads all m entries of a row.
      const full = a.alloc(k.factorBytes());
      k.factorInit(full, 0, n, m, 0, a.allocF64(f.values), 0, 0, 0);
      for (const B of [1, 2, 3, 4, 5]) {
        const X = Float64Array.from({ length: m * B }, () => 3 * (rand() - 0.5));
        const V = Float64Array.from({ length: n * B }, () => (rand() < 0.3 ? 0 : rand() - 0.5));
        const xp = a.allocF64(X), vp = a.allocF64(V);
        const u1 = a.allocF64(n * B), u2 = a.allocF64(n * B), g1 = a.allocF64(m * B), g2 = a.allocF64(m * B);
        if (B === 1) {
          k.factorMul(bound.factor, xp, u1), k.factorMul(full, xp, u2), k.factorMulT(bound.factor, vp, g1), k.factorMulT(full, vp, g2);
        } else {
          k.factorMulBatch(bound.factor, xp, u1, B), k.factorMulBatch(full, xp, u2, B), k.factorMulTBatch(bound.factor, vp, g1, B), k.factorMulTBatch(full, vp, g2, B);
        }
        sameBits(a.readF64(u1, n * B), a.readF64(u2, n * B), `M x, n = ${n}, B = ${B}`);
        sameBits(a.readF64(g1, m * B), a.readF64(g2, m * B), `Mᵀ v, n = ${n}, B = ${B}`);
      }
    } finally {
      bound.dispose();
    }
  }
});

function fftRelaxation(): RelaxationData {
  const form = toCanonical(lattice);
  const d = 5; // λ_min(W) = −4.8
  return { form, d: new Float64Array(form.nBits).fill(d), factor: fftFactor(engine, form, [4, 4], d).factor };
}

function allRelaxations(): [string, RelaxationData][] {
  return [
    ...relaxations(binary).map(([f, r]): [string, RelaxationData] => [`binary ${f}`, r]),
    ...relaxations(potts).map(([f, r]): [string, RelaxationData] => [`potts ${f}`, r]),
    ['lattice fft', fftRelaxation()],
  ];
}

test('batched block Gibbs: each chain is the single-chain sampler bit for bit', () => {
  for (const [name, rel] of allRelaxations()) {
    const sampler = new BlockGibbsSampler(engine, rel);
    try {
      const chains = [0, 3, 7];
      const batch = sampler.initBatch(11, chains);
      const single = chains.map((c) => sampler.init(11, c));
      const acc = sampler.accumulator();
      for (const [sweeps, accumulate] of [[5, false], [7, true], [1, true]] as const) {
        const infos = sampler.stepBatch(batch, sweeps, accumulate);
        const sums = accumulate ? sampler.readAndClearBatch(batch) : null;
        single.forEach((s, i) => {
          const info = sampler.step(s, sweeps, accumulate ? acc : 0);
          assert.equal(infos[i].changeRate, info.changeRate, `${name}: change rate of chain ${chains[i]}`);
          sameBits(sampler.position(batch.states[i]), sampler.position(s), `${name}: x of chain ${chains[i]}`);
          assert.deepEqual(sampler.configuration(batch.states[i]), sampler.configuration(s));
          if (sums) sameBits(sums[i], sampler.readAndClear(acc), `${name}: Σπ of chain ${chains[i]}`);
        });
      }
    } finally {
      sampler.dispose();
    }
  }
});

test('batched DHMC: warm-up and sampling of each chain are the single-chain kernel bit for bit', () => {
  const cases = allRelaxations().filter(([n]) => n.includes('incidence') || n.includes('sparse') || n.includes('fft') || n === 'potts dense-cholesky');
  for (const [name, rel] of cases) {
    for (const opts of [{ stepSize: undefined, adaptMass: true }, { stepSize: 0.5, adaptMass: false }]) {
      const n = rel.form.nBits;
      const sampler = new DHMCSampler(engine, rel, {
        leapfrogSteps: 4,
        integrator: 'mclachlan',
        pairCodes: Int32Array.from([0, 1, -1, n - 1]),
        empirical: true,
        traceCodes: Int32Array.from([0, -1, -2]),
        traceCapacity: 64,
      });
      try {
        const chains = [2, 0, 5];
        const batch = chains.map((c) => sampler.init(7, c));
        const single = chains.map((c) => sampler.init(7, c));
        const wu = { targetAccept: 0.8, adaptMass: opts.adaptMass, stepSize: opts.stepSize };
        const wb = sampler.warmupChains(batch, 150, wu);
        single.forEach((s, i) => assert.deepEqual(wb[i], sampler.warmup(s, 150, wu), `${name}: warm-up info of chain ${chains[i]}`));
        if (opts.stepSize !== undefined) {
          // Per-chain step sizes: chain 5's trajectories overflow part-way (its density stops being finite and
          // it leaves the lockstep), chain 0's energy errors pass the divergence threshold, chain 2 moves.
          [0.3, 9, 1e200].forEach((eps, i) => {
            sampler.setStepSize(batch[i], eps);
            sampler.setStepSize(single[i], eps);
          });
        }
        let divergences = 0;
        for (const len of [13, 20]) {
          const infos = sampler.stepChains(batch, len, { accumulate: true, trace: true });
          single.forEach((s, i) => {
            const info = sampler.step(s, len, { accumulate: true, trace: true });
            assert.deepEqual(infos[i], info, `${name}: info of chain ${chains[i]}`);
            divergences += info.divergences;
          });
        }
        single.forEach((s, i) => {
          const t = batch[i];
          const what = `${name} (step size ${opts.stepSize ?? 'adapted'}), chain ${chains[i]}`;
          sameBits(sampler.position(t), sampler.position(s), `${what}: x`);
          sameBits(sampler.conditional(t), sampler.conditional(s), `${what}: π`);
          assert.ok(Object.is(sampler.logDensity(t), sampler.logDensity(s)), `${what}: log p`);
          assert.equal(sampler.stepSize(t), sampler.stepSize(s));
          const a = sampler.readAndClear(t), b = sampler.readAndClear(s);
          sameBits(a.prob, b.prob, `${what}: Σπ`);
          sameBits(a.pairs, b.pairs, `${what}: pair sums`);
          sameBits(a.empirical!, b.empirical!, `${what}: empirical sums`);
          sampler.trace(t).forEach((series, q) => sameBits(series, sampler.trace(s)[q], `${what}: trace ${q}`));
        });
        // The large fixed step makes some trajectories diverge: the lockstep must drop those chains alone.
        if (opts.stepSize !== undefined) assert.ok(divergences >= 40, `${name}: ${divergences} divergent transitions at step sizes 9 and 1e200`);
      } finally {
        sampler.dispose();
      }
    }
  }
});

test('runBlockGibbs and runDHMC with batched chains: the result of their chains run one by one', () => {
  const rel = buildRelaxation(engine, potts, { factor: 'incidence' });
  // Block Gibbs: 11 chains (batches of 4, 4 and 3) against each chain's events from the one-chain driver.
  const bgOpts = { seed: 3, chains: 11, samples: 300, burnin: 50, batches: 10 };
  const r = runBlockGibbs(engine, rel, bgOpts);
  const sampler = new BlockGibbsSampler(engine, rel);
  try {
    const run = blockGibbsRun(bgOpts);
    const red = new DiscreteReducer(rel.form, true);
    const f = rel.factor as { values: Float64Array };
    const chunk = Math.max(1, Math.floor(2e6 / (2 * f.values.length + rel.form.nBits * 8)));
    emitChains(sampler, { ...run, chains: range(run.chains), chunk }, (c, e) => red.add(e, c));
    const ref = blockGibbsResult(rel.form, red, run, 0, 0, false, {});
    sameBits(r.marginals.flatMap((row) => [...row]), ref.marginals.flatMap((row) => [...row]), 'block Gibbs marginals');
    sameBits(r.marginalStdErr!.flatMap((row) => [...row]), ref.marginalStdErr!.flatMap((row) => [...row]), 'block Gibbs standard errors');
    assert.equal(r.diagnostics.changeRate, ref.diagnostics.changeRate);
  } finally {
    sampler.dispose();
  }
  // DHMC: 10 chains (batches of 4, 4 and 2) against the chains run one at a time (a batch of one each).
  const dOpts = { seed: 5, chains: 10, samples: 120, burnin: 100, batches: 6 };
  const d = runDHMC(engine, rel, dOpts);
  const plan = continuousPlan(rel.form, dOpts, { move: 'hmc', method: 'dhmc', defaults: { targetAccept: DHMC_DEFAULTS.targetAccept }, leapfrogSteps: DHMC_DEFAULTS.leapfrogSteps, integrator: DHMC_DEFAULTS.integrator });
  const cs = continuousSampler(engine, rel, plan);
  try {
    const red = new ContinuousReducer(rel.form, plan);
    for (const c of range(dOpts.chains)) continuousChains(cs, plan, [c], (ch, e) => red.add(e, ch));
    const ref = red.result(0, 0, false);
    sameBits(d.marginals.flatMap((row) => [...row]), ref.marginals.flatMap((row) => [...row]), 'DHMC marginals');
    sameBits(d.marginalStdErr!.flatMap((row) => [...row]), ref.marginalStdErr!.flatMap((row) => [...row]), 'DHMC standard errors');
    assert.equal(d.diagnostics.rhatMax, ref.diagnostics.rhatMax);
  } finally {
    cs.dispose();
  }
});

test('batch width: RELAXED_BATCH_WIDTH chains, fewer when a batch would pass 256 MiB, never none', () => {
  assert.equal(relaxedBatchWidth(1024), RELAXED_BATCH_WIDTH);
  assert.equal(relaxedBatchWidth(2 ** 28 / 3), 3);
  assert.equal(relaxedBatchWidth(2 ** 30), 1);
});
