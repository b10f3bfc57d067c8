// Error bars that never lie, part 3: runs whose chains agree on something wrong. When every chain
// sits in one mirror-image mode of a symmetric model, when one DHMC chain is all there is, when a
// run is too short for an ESS, when AIS has a handful of runs or log weights spread too far, the
// standard error cannot cover the error, and the result must say so. Each case is one an audit
// found reported with no warning (estimate ± SE against the exact value in each test's name).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { infer } from '../bindings/infer.ts';
import { Model, ModelBuilder } from '../bindings/core/model.ts';
import { isingLattice, pottsLattice } from '../bindings/core/builders.ts';
import { mirrorImages, stateSymmetry, symmetryWarning } from '../bindings/core/symmetry.ts';
import { estimateLogZ, runAIS } from '../bindings/logz/logz.ts';
import { exactInference } from '../bindings/exact/exact.ts';
import { mulberry32 } from '../bindings/core/seed.ts';
import { loadModelFile } from '../bindings/io/files.ts';
import { join } from 'node:path';
import { dataDir, randomModel } from './helpers.ts';

const mirror = (ws: string[] | undefined) => (ws ?? []).some((w) => /mirror-image modes/.test(w));

test('state symmetry: zero-field Ising and Potts models and colourings are symmetric; a field, one asymmetric table or mixed cardinalities are not', () => {
  assert.equal(stateSymmetry(isingLattice({ shape: [4, 4], beta: 0.8 })), 2);
  assert.equal(stateSymmetry(isingLattice({ shape: [4, 4], beta: 0.8, h: 0.01 })), 0);
  assert.equal(stateSymmetry(pottsLattice({ shape: [3, 3], q: 3, beta: 1 })), 3);
  const colouring = new ModelBuilder([3, 3, 3]);
  for (const [i, j] of [[0, 1], [1, 2]]) colouring.addPairwise(i, j, [-Infinity, 0, 0, 0, -Infinity, 0, 0, 0, -Infinity]);
  assert.equal(stateSymmetry(colouring.build()), 3);
  // Symmetric under the cyclic shift but not under swapping states 0 and 1: not every permutation.
  const cyclic = new ModelBuilder([3, 3]);
  cyclic.addPairwise(0, 1, [0, 1, 0, 0, 0, 1, 1, 0, 0]);
  assert.equal(stateSymmetry(cyclic.build()), 0);
  const mixed = new ModelBuilder([2, 3]);
  mixed.addPairwise(0, 1, [0, 0, 0, 0, 0, 0]);
  assert.equal(stateSymmetry(mixed.build()), 0);
  // A three-variable factor unchanged by flipping all three.
  const triple = new ModelBuilder([2, 2, 2]);
  triple.addFactor([0, 1, 2], [1, 0.5, 0.2, 0.3, 0.3, 0.2, 0.5, 1]);
  assert.equal(stateSymmetry(triple.build()), 2);
  // A table past the per-arity index tables (2^17 entries): read by the entry-by-entry path.
  const wide = (broken: boolean) => {
    const b = new ModelBuilder(new Array(17).fill(2));
    const popcount = (x: number) => { let c = 0; for (; x; x &= x - 1) c++; return c; };
    const t = Array.from({ length: 1 << 17 }, (_, i) => Math.min(popcount(i), 17 - popcount(i)) / 3);
    if (broken) t[12345] += 1e-9;
    b.addFactor(Array.from({ length: 17 }, (_, v) => v), t);
    return b.build();
  };
  assert.equal(stateSymmetry(wide(false)), 2);
  assert.equal(stateSymmetry(wide(true)), 0);
  // One bond of a lattice changed, behind 2·30·29 shared ones.
  const lattice = isingLattice({ shape: [30, 30], beta: 0.5 });
  const data = lattice.toData(), tables = Float64Array.from(data.tables);
  const last = data.tableStart.length - 1, start = data.tableStart.slice();
  start[last] = tables.length;
  const changed = new Float64Array(tables.length + 4);
  changed.set(tables);
  changed.set([0.5, -0.5, -0.5, 0.51], tables.length);
  assert.equal(lattice.arity(last), 2);
  assert.equal(stateSymmetry(lattice), 2);
  assert.equal(stateSymmetry(Model.fromData({ ...data, tableStart: start, tables: changed })), 0);
});

test('chains that all settle in one mode of a zero-field ferromagnet are warned about (gibbs 0.998 ± 0.00006 against 0.5, and treegibbs 1 ± 0, silently); chains that mix are not', async () => {
  const engine = await loadEngine();
  const model = isingLattice({ shape: [6, 6], beta: 0.8 });
  const stuck = infer(engine, model, { method: 'gibbs', samples: 1000, seed: 51 });
  assert.ok(Math.abs(stuck.marginals[21][1] - 0.5) > 0.4, 'all four chains in one mode (the case)');
  assert.ok(mirror(stuck.warnings), JSON.stringify(stuck.warnings));
  // Tree-block Gibbs counting the states (raoBlackwell: false) reads 1 ± 0; its default conditionals 1 − ε ± a little less: both warned.
  for (const raoBlackwell of [false, true]) {
    const frozen = infer(engine, isingLattice({ shape: [4, 4], beta: 1 }), { method: 'treegibbs', samples: 200, seed: 28, raoBlackwell });
    assert.ok((raoBlackwell || frozen.marginalStdErr!.some((s) => s[1] === 0)) && mirror(frozen.warnings), JSON.stringify(frozen.warnings));
  }
  // Symmetric, mixing: never warned (10 seeds), nor a model with a field.
  const easy = isingLattice({ shape: [5, 5], beta: 0.3 });
  for (let seed = 1; seed <= 10; seed++) assert.ok(!mirror(infer(engine, easy, { method: 'gibbs', samples: 400, seed }).warnings), `seed ${seed}`);
  assert.equal(symmetryWarning(isingLattice({ shape: [6, 6], beta: 0.8, h: 1e-3 }), stuck), null);
});

test('the symmetry warning reaches every path: runParallel on workers and inferAsync', async () => {
  const { runParallel, inferAsync } = await import('../bindings/parallel/parallel.ts');
  const engine = await loadEngine();
  const model = isingLattice({ shape: [6, 6], beta: 0.8 });
  const opts = { method: 'gibbs' as const, samples: 1000, seed: 51 };
  assert.ok(mirror((await runParallel(model, { ...opts, workers: 2 })).warnings));
  const a = await inferAsync(engine, model, { ...opts, workers: 2 });
  assert.equal(a.warnings!.filter((w) => /mirror-image/.test(w)).length, 1, 'once');
});

test('one DHMC or MALA chain is warned about as the batch-means samplers\' are (dhmc 0.0007 ± 0.0003 against 0.5, silently)', async () => {
  const engine = await loadEngine();
  const model = isingLattice({ shape: [4, 4], beta: 0.3, h: 0.1 });
  for (const method of ['dhmc', 'mala'] as const) {
    const one = infer(engine, model, { method, chains: 1, samples: 200, burnin: 100, seed: 4 });
    assert.ok(one.warnings!.some((w) => /^one chain:/.test(w)), `${method}: ${JSON.stringify(one.warnings)}`);
    assert.ok(!infer(engine, model, { method, chains: 2, samples: 200, burnin: 100, seed: 4 }).warnings!.some((w) => /^one chain:/.test(w)), method);
  }
});

test('a run whose chains vary but are too short for an ESS says so (5 samples: 0.74 ± 0.02 against 0.54, silently)', async () => {
  const engine = await loadEngine();
  const model = isingLattice({ shape: [4, 4], beta: 0.3, h: 0.1 });
  const short = infer(engine, model, { method: 'gibbs', samples: 5, seed: 31 });
  assert.equal(short.diagnostics.essMin, null);
  assert.ok(short.warnings!.some((w) => /^no ESS could be estimated from 5 batch means per chain/.test(w)), JSON.stringify(short.warnings));
  assert.ok(!infer(engine, model, { method: 'gibbs', samples: 400, seed: 31 }).warnings!.some((w) => /no ESS could be/.test(w)));
});

test('AIS: a few runs or populations, or log weights spread past what the runs can sample, are warned about (2 runs: 22.46 ± 0.008 against 21.74; 8 runs of 50 temperatures: 109.20 ± 0.20 against 112.87, silently)', async () => {
  const engine = await loadEngine();
  const critical = isingLattice({ shape: [5, 5], beta: 0.44, h: 0.05 });
  const two = runAIS(engine, critical, { runs: 2, steps: 100, seed: 161 });
  assert.ok(two.warnings!.some((w) => /^only 2 runs: the standard error rests on 1 degree of freedom/.test(w)), JSON.stringify(two.warnings));
  const pops = runAIS(engine, critical, { runs: 64, population: 32, steps: 100, seed: 169 });
  assert.ok(pops.warnings!.some((w) => /^only 2 populations/.test(w)), JSON.stringify(pops.warnings));
  const cold = isingLattice({ shape: [8, 8], beta: 1 });
  const short = runAIS(engine, cold, { runs: 8, steps: 50, seed: 1 });
  assert.ok(short.warnings!.some((w) => /log weights spread by 2\.\d\d nats/.test(w)), JSON.stringify(short.warnings));
  // The defaults on an easy model: none of these.
  const easy = runAIS(engine, isingLattice({ shape: [10, 10], beta: 0.4, h: 0.1 }), { seed: 1 });
  assert.deepEqual(easy.warnings, []);
});

test('a marginal the model fixes is not diagnosed on its rounding noise (Swendsen–Wang on a zero-field Potts torus warned "batch means autocorrelated (0.95)" on every run)', async () => {
  const engine = await loadEngine();
  const model = pottsLattice({ shape: [4, 4], q: 3, beta: 1, periodic: true });
  for (const seed of [1, 2]) {
    const r = infer(engine, model, { method: 'sw', samples: 500, seed });
    r.marginals.forEach((p) => p.forEach((x) => assert.ok(Math.abs(x - 1 / 3) < 1e-12)));
    assert.deepEqual(r.warnings, [], `seed ${seed}`);
  }
});

test('Chib and Zhang on zero-field models average over the reference state\'s mirror images: chains in one mode no longer give log Z ln K low (chib −0.687 ± 0.004, zhang −0.688 ± 0.022 and, on Potts q = 3, −1.119 ± 0.012, silently)', async () => {
  const engine = await loadEngine();
  assert.deepEqual(mirrorImages([0, 2, 1], 3).map((x) => Array.from(x)), [[0, 2, 1], [1, 0, 2], [2, 1, 0]]);
  const ising = isingLattice({ shape: [10, 10], beta: 0.9 }), potts = pottsLattice({ shape: [5, 5], q: 3, beta: 2 });
  // The seeds whose chains all stayed in the reference state's mode (the estimates in the test's name).
  const runs = [[ising, 'chib', 10, 2], [ising, 'chib', 11, 2], [ising, 'zhang', 11, 2], [potts, 'zhang', 8, 3]] as const;
  for (const [model, estimator, seed, K] of runs) {
    const exact = infer(engine, model, { method: 'exact' }).logZ!;
    const r = estimateLogZ(engine, model, { estimator, seed });
    assert.equal(r.diagnostics.mirrorImages, K);
    assert.ok(Math.abs(r.logZ - exact) <= 4 * r.logZStdErr, `${estimator} seed ${seed}: ${r.logZ - exact} ± ${r.logZStdErr}`);
  }
  // A field breaks the symmetry: s* alone.
  assert.equal(estimateLogZ(engine, isingLattice({ shape: [4, 4], beta: 0.9, h: 0.01 }), { estimator: 'chib' }).diagnostics.mirrorImages, 1);
});

test('mirror on a zero-field model whose chains stayed in one mode is warned about (−1.063 ± 0.032 against exact on Potts q = 3, silently); on one whose chains mix it is not', async () => {
  const engine = await loadEngine();
  const potts = pottsLattice({ shape: [4, 4], q: 3, beta: 2 });
  const stuck = estimateLogZ(engine, potts, { estimator: 'mirror', seed: 1 });
  assert.ok(Math.abs(stuck.logZ - infer(engine, potts, { method: 'exact' }).logZ!) > 4 * stuck.logZStdErr);
  assert.ok(mirror(stuck.warnings), String(stuck.warnings));
  for (const seed of [1, 2, 3]) assert.deepEqual(estimateLogZ(engine, isingLattice({ shape: [4, 4], beta: 0.2 }), { estimator: 'mirror', seed }).warnings ?? [], []);
});

test('Zhang\'s weights p(s*|x), heavy-tailed on weakly coupled models, are warned about by their Pareto k̂ (6×6 at β = 0.3: +1.66 ± 0.41, +4.16 ± 0.43, +3.44 ± 0.47, silently)', async () => {
  const engine = await loadEngine();
  const model = isingLattice({ shape: [6, 6], beta: 0.3 });
  const exact = infer(engine, model, { method: 'exact' }).logZ!;
  for (const seed of [19, 22, 28]) {
    const r = estimateLogZ(engine, model, { estimator: 'zhang', seed });
    assert.ok(Math.abs(r.logZ - exact) > 4 * r.logZStdErr, `seed ${seed} is one the standard error misses`);
    assert.ok((r.diagnostics.paretoK as number) > 0.7);
    assert.ok((r.warnings ?? []).some((w) => /heavy-tailed/.test(w)), String(r.warnings));
  }
});

test('Chib on a weakly coupled grid, where K(s → s*) is heavy-tailed: 7–10 SE high, now with a warning (it was silent); a 5×5 grid at β = 0.2 does not warn', async () => {
  const engine = await loadEngine();
  const model = isingLattice({ shape: [12, 12], beta: 0.3, h: 0.05 });
  const exact = infer(engine, model, { method: 'exact' }).logZ!;
  for (const seed of [10, 11, 23]) {
    const r = infer(engine, model, { method: 'gibbs', logz: 'chib', seed });
    assert.ok((r.logZ! - exact) / r.logZStdErr! > 4, `seed ${seed}: ${r.logZ} ± ${r.logZStdErr} against ${exact}: the miss this test is about`);
    assert.ok((r.diagnostics['logz.paretoK'] as number) > 0.7);
    assert.ok((r.warnings ?? []).some((w) => /^log Z \(chib\): its transition probabilities K\(s → s\*\) are heavy-tailed \(Pareto k̂ [\d.]+ > 0\.7\)/.test(w)), String(r.warnings));
  }
  const control = isingLattice({ shape: [5, 5], beta: 0.2, h: 0.05 });
  for (let seed = 1; seed <= 8; seed++) {
    const r = infer(engine, control, { method: 'gibbs', logz: 'chib', seed });
    assert.ok((r.diagnostics['logz.paretoK'] as number) < 0.7, `seed ${seed}: k̂ ${r.diagnostics['logz.paretoK']}`);
    assert.deepEqual(r.warnings, []);
  }
});

test('dhmc and mala with one batch per chain warn that their standard errors rest on the chain means alone (12.6 SE off, silently); the defaults do not', async () => {
  const engine = await loadEngine();
  const model = isingLattice({ shape: [4, 4], beta: 0.4, h: 0.1 });
  for (const method of ['dhmc', 'mala'] as const) {
    const one = infer(engine, model, { method, batches: 1, samples: 400, seed: 5 });
    assert.ok((one.warnings ?? []).some((w) => /^only 1 batch mean per chain: the standard errors rest on 4 numbers/.test(w)), `${method}: ${one.warnings}`);
    const many = infer(engine, model, { method, samples: 400, seed: 5 });
    assert.ok(!(many.warnings ?? []).some((w) => /batch mean/.test(w)), `${method}: ${many.warnings}`);
  }
});

test('AIS runs that all miss a mode holding most of the mass: the estimate, 13–26 SE below exact, falls below mean field\'s certified lower bound, and now says so (UAI Segmentation_11, silent before)', async () => {
  const engine = await loadEngine();
  const { model } = await loadModelFile(join(dataDir(), 'uai2014', 'Segmentation_11.uai'));
  const exact = infer(engine, model, { method: 'exact' }).logZ!;
  const bound = infer(engine, model, { method: 'mf' }).logZ!;
  assert.ok(bound <= exact);
  for (const [seed, missed] of [[18, true], [22, true], [23, true], [19, false], [24, false]] as const) {
    const r = infer(engine, model, { method: 'gibbs', samples: 200, logz: 'ais', seed });
    assert.equal(r.diagnostics['logz.meanFieldBound'], bound);
    const z = (r.logZ! - exact) / r.logZStdErr!;
    const warned = (r.warnings ?? []).some((w) => /^log Z \(ais\): the estimate is [\d.]+ nats \([\d.]+ standard errors\) below mean field's lower bound/.test(w));
    assert.equal(z < -4, missed, `seed ${seed}: z ${z}`);
    assert.equal(warned, missed, `seed ${seed}: ${r.warnings}`);
  }
});

test('states that zero potentials kept every Gibbs chain from read 0 ± 0, now with a warning (1.0000 ± 0.0000 against 0.9012, silently); chains that reach them, and a field of 1000 nats, do not warn', async () => {
  const { runParallel } = await import('../bindings/parallel/parallel.ts');
  const engine = await loadEngine();
  // A pair factor allows only (x2, x5) ∈ {(0,0), (1,1), (2,1)}: single-site moves never leave (0, 0).
  const model = randomModel(mulberry32(104), 9, { cards: [2, 3], density: 0.5, scale: 1.5, zeros: 0.15 });
  const exact = exactInference(engine, model);
  const confined = (ws: string[] | undefined) => (ws ?? []).some((w) => /that no factor rules out on its own reads? 0 with a standard error of 0/.test(w));
  let stuck = 0, free = 0;
  for (let seed = 1; seed <= 12; seed++) {
    const r = infer(engine, model, { method: 'gibbs', samples: 300, seed });
    const frozen = r.marginalStdErr![5][1] === 0 && r.marginals[5][1] === 0;
    if (frozen) {
      stuck++;
      assert.ok(Math.abs(r.marginals[5][0] - exact.marginals[5][0]) > 0.09, 'the case: 1 against 0.90');
      assert.ok(confined(r.warnings), `seed ${seed}: ${JSON.stringify(r.warnings)}`);
    } else {
      free++;
      assert.ok(!confined(r.warnings), `seed ${seed}: ${JSON.stringify(r.warnings)}`);
    }
  }
  assert.ok(stuck >= 1 && free >= 1, `stuck ${stuck}, free ${free}`);
  // The chains folded from workers get the check too.
  const w = await runParallel(model, { method: 'gibbs', samples: 300, seed: 9, workers: 2 });
  assert.ok(confined(w.warnings), JSON.stringify(w.warnings));
  // Tree-block Gibbs: its Rao–Blackwellised marginals get the check, with the block remedy; counted ones have their own warning.
  const { confinedStatesWarning } = await import('../bindings/core/sampled-checks.ts');
  const frozen = infer(engine, model, { method: 'gibbs', samples: 300, seed: 9 });
  assert.match(confinedStatesWarning(model, { ...frozen, method: 'treegibbs', diagnostics: { raoBlackwell: true } }) ?? '', /redrawing one block at a time cannot leave.*Parallel tempering \(method pt\)/);
  assert.equal(confinedStatesWarning(model, { ...frozen, method: 'treegibbs', diagnostics: { raoBlackwell: false } }), null);
  assert.match(confinedStatesWarning(model, frozen) ?? '', /moves of one variable at a time cannot leave.*Tree-block Gibbs \(method treegibbs\)/);
  // Arc consistency misses states impossible through a chain of zeros (a = b, b = c, (a, c) ≠ (1, 1)): there the reading
  // 0 ± 0 is right, and the warning says it may be (it said the marginals were wrong).
  const chain = new ModelBuilder([2, 2, 2]);
  chain.addPairwise(0, 1, [0, -Infinity, -Infinity, 0]).addPairwise(1, 2, [0, -Infinity, -Infinity, 0]).addPairwise(0, 2, [0, 0, 0, -Infinity]);
  const right = infer(engine, chain.build(), { method: 'gibbs', samples: 200, seed: 1 });
  assert.deepEqual(right.marginals.map((m) => m[1]), [0, 0, 0]);
  const said = (right.warnings ?? []).find((w) => /no factor rules out on its own/.test(w)) ?? '';
  assert.match(said, /Either they are impossible through a chain of zeros, and the reading is right, or zero potentials kept every chain .* exact inference tells the two apart/);
  // A state of probability e^-1000 underflows to 0 ± 0 without zeros nearby: not a confinement.
  const b = new ModelBuilder([2, 2]);
  b.addUnary(0, [0, -1000]);
  b.addPairwise(0, 1, [0, 0.5, 0.5, 0]);
  const r = infer(engine, b.build(), { method: 'gibbs', samples: 200, seed: 1 });
  assert.equal(r.marginals[0][1], 0);
  assert.ok(!confined(r.warnings), JSON.stringify(r.warnings));
});

test('states read below 3 / draws are named in a warning: default Gibbs put every state it read past 4 SE there, silently (a 10×10 grid at β = 1, h = 1; UAI ObjectDetection_11); a grid without such states does not warn', async () => {
  const engine = await loadEngine();
  const rare = (ws: string[] | undefined) => (ws ?? []).some((w) => /read below 0\.00038 \(3 \/ 8000 draws\): marginals this small rest on the few configurations/.test(w));
  const ordered = isingLattice({ shape: [10, 10], beta: 1, h: 1 });
  const { model: od } = await loadModelFile(join(dataDir(), 'uai2014', 'ObjectDetection_11.uai'));
  for (const model of [ordered, od]) {
    const exact = exactInference(engine, model);
    const r = infer(engine, model, { method: 'gibbs', seed: 1 });
    const past: [number, number][] = [];
    r.marginals.forEach((row, v) => row.forEach((p, k) => Math.abs(p - exact.marginals[v][k]) > 4 * r.marginalStdErr![v][k] && past.push([v, k])));
    assert.ok(past.length > 0, 'the case: states past 4 SE');
    assert.ok(rare(r.warnings), JSON.stringify(r.warnings));
    // Each such variable has a state below the floor (the other state of a binary one is 1 − it).
    for (const [v] of past) assert.ok(r.marginals[v].some((p) => p > 0 && p < 3 / 8000), `x${v}: ${Array.from(r.marginals[v])}`);
  }
  assert.ok(!rare(infer(engine, isingLattice({ shape: [8, 8], beta: 0.3, h: 0.2 }), { method: 'gibbs', seed: 1 }).warnings));
});
