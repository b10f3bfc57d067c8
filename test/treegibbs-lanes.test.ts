// Tree-block Gibbs chains in f64x2 lanes (bindings/samplers/treegibbs.ts TreeGibbsLanes,
// assembly/samplers/treegibbs_lanes.ts treeGibbsLanesStep):
//   * every lane of a batch is TreeGibbsSampler's chain for the same (seed, chain), bit for bit:
//     states, accumulated sums (the conditionals, and the counted states with raoBlackwell false),
//     change rates and the generator, odd batches included, on a model with couplings past exp's
//     range (the softplus fallbacks);
//   * whole infer runs (method 'treegibbs') with lanes and with `lanes: false` give the same result
//     bit for bit (marginals, standard errors, R̂/ESS, change rate) for 1–5 chains, either marginals;
//   * lanes runs within 4 MCSE of enumeration; one-hot models keep the one-chain kernel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { TreeGibbsLanes, TreeGibbsSampler } from '../bindings/samplers/treegibbs.ts';
import { infer } from '../bindings/infer.ts';
import { ModelError } from '../bindings/core/errors.ts';
import type { Model } from '../bindings/core/model.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import type { InferenceResult } from '../bindings/core/result.ts';
import { assertWithinMCSE, extremeBinaryModel, mulberry32, randomModel } from './helpers.ts';

const engine = await loadEngine();
const SEED = 4242;

/** A binary model with a few couplings and fields past exp's range (e^{±800}). */
const extremeModel = (): Model => extremeBinaryModel(mulberry32(11));

test('every lane is the one-chain tree-block sampler bit for bit (states, sums, change rates, generator)', () => {
  for (const model of [randomModel(mulberry32(3), 12, { density: 0.4, scale: 1.5 }), extremeModel(), isingLattice({ shape: [6, 6], beta: 0.6, h: 0.1, periodic: true })]) {
    const runs: [number[], boolean][] = [[[0], true], [[0, 1, 2], true], [[5, 6, 7, 8], true], [[0, 1, 2], false]];
    for (const [chains, rb] of runs) {
      const L = new TreeGibbsLanes(engine, model, chains.length, undefined, rb);
      const one = new TreeGibbsSampler(engine, model, L.partition, rb);
      try {
        const batch = L.init(SEED, chains);
        const acc = L.accumulator(batch);
        const states = chains.map((c) => one.init(SEED, c));
        const accs = chains.map(() => one.accumulator());
        for (const [sweeps, into] of [[3, false], [4, true], [1, true], [2, false]] as const) {
          const rates = L.step(batch, sweeps, into ? acc : 0);
          chains.forEach((_, i) => assert.equal(rates[i], one.step(states[i], sweeps, into ? accs[i] : 0).changeRate, `chain ${chains[i]}: change rate`));
        }
        const sums = L.readAndClear(batch, acc);
        chains.forEach((c, i) => {
          assert.deepEqual(L.configuration(batch, i), one.configuration(states[i]), `chain ${c}: state`);
          assert.deepEqual(sums[i], one.readAndClear(accs[i]), `chain ${c}: sums`);
          const k = engine.kernels;
          const stream = new Uint8Array(k.memory.buffer, states[i].ptr, k.rngStateBytes()).slice();
          assert.deepEqual(L.chainState(batch, i).stream, stream, `chain ${c}: generator`);
        });
      } finally {
        L.dispose();
        one.dispose();
      }
    }
  }
});

/** The result without what differs run to run (time) or says which kernel ran. */
function comparable(r: InferenceResult) {
  const { seconds: _s, diagnostics, ...rest } = r;
  const { siteUpdatesPerSecond: _u, lanes: _l, ...d } = diagnostics;
  return { ...rest, diagnostics: d };
}

test("infer 'treegibbs' with lanes equals lanes: false bit for bit, 1 to 5 chains", () => {
  const model = randomModel(mulberry32(21), 10, { density: 0.4, scale: 1 });
  for (const [chains, raoBlackwell] of [[1, true], [2, true], [3, true], [4, true], [5, true], [3, false]] as const) {
    const opts = { method: 'treegibbs' as const, seed: SEED, chains, samples: 300, burnin: 20, batches: 10, raoBlackwell };
    const on = infer(engine, model, opts);
    const off = infer(engine, model, { ...opts, lanes: false });
    assert.equal(on.diagnostics.lanes, true);
    assert.equal(off.diagnostics.lanes, false);
    assert.deepEqual(comparable(on), comparable(off), `${chains} chains, raoBlackwell ${raoBlackwell}`);
  }
});

test('lanes runs within 4 MCSE of enumeration; one-hot models keep the one-chain kernel', () => {
  const model = randomModel(mulberry32(8), 10, { density: 0.4, scale: 1 });
  const r = infer(engine, model, { method: 'treegibbs', seed: 9, chains: 5, samples: 6000, burnin: 100 });
  assert.equal(r.diagnostics.lanes, true);
  assertWithinMCSE(model, r);
  const potts = randomModel(mulberry32(9), 6, { cards: [2, 3], density: 0.5, scale: 1 });
  const p = infer(engine, potts, { method: 'treegibbs', seed: 9, chains: 3, samples: 4000, burnin: 100 });
  assert.equal(p.diagnostics.lanes, false);
  assertWithinMCSE(potts, p);
  assert.throws(() => infer(engine, model, { method: 'treegibbs', lanes: 'yes' as unknown as boolean }), ModelError);
  // The single-site scan's options are refused, not silently ignored.
  for (const bad of [{ precision: 'f32' }, { scan: 'colored' }, { probabilityTable: 'on' }] as const) {
    assert.throws(() => infer(engine, model, { method: 'treegibbs', ...bad }), (e: unknown) => e instanceof ModelError && /apply to method 'gibbs'/.test(e.message), JSON.stringify(bad));
  }
});
