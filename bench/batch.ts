// Batched relaxed samplers: `npm run bench:batch` (BENCH_QUICK=1 or --quick: smoke). Writes
// bench/results/batch.json.
//
// Transitions per second per chain of DHMC (whitened, unit mass, 5 leapfrog steps, fixed ε) and block
// Gibbs with B = 1, 2, 4, 8 chains advancing together (assembly/samplers/hmc_batch.ts, blockgibbs_batch.ts:
// one batched factor product M X / Mᵀ Π per gradient or half-sweep), on a 64×64 Ising grid with the
// incidence factor (m = bonds) and with sparse Cholesky, and on a dense random Boltzmann machine of 256
// bits (dense Cholesky). B = 1 is the single-chain kernel (hmcStep, blockGibbsStep), what a chain ran
// before batching. "cost" is the time of B chains' transitions over one chain's (a batch of B costs
// cost × a single chain; per-chain throughput is B / cost times the single chain's); the target asks
// whether a batch of 4 costs ≤ 2× a single chain. Beside them: the batched factor products alone (M·X then
// Mᵀ·V; B = 1 the single-chain products factorMul / factorMulT), and m standard normals per chain (one
// DHMC momentum, one block Gibbs x | s draw) — per-chain work a batch cannot share, since every chain
// draws from its own stream (core/rng_normal.ts: Box–Muller in bulk, two pairs per f64x2 evaluation).
//
// Plain JS (bench/js/relaxed-batch.ts): the same batched algorithm (layout, summation order, streams) in
// JavaScript, for the WASM / JS ratio; its batched products are first checked to equal the WASM ones bit
// for bit (exit 1 otherwise). The JS reference implements free bits only, which all three models are.
// Times are this process's CPU time (process.cpuUsage; wall-time ratios are in the JSON too): the machine
// is shared and loaded, where wall time mostly measures the scheduler. Repetitions are interleaved (every
// configuration once per round) and summarised by medians; ratios are taken within the run.

import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import type { Model } from '../bindings/core/model.ts';
import { buildRelaxation, type Relaxation } from '../bindings/relax/relaxation.ts';
import { BoundRelaxation } from '../bindings/relax/relaxation-bound.ts';
import { BlockGibbsSampler, type BlockGibbsBatch, type BlockGibbsState } from '../bindings/samplers/blockgibbs.ts';
import { DHMCSampler, type ContinuousState } from '../bindings/samplers/dhmc.ts';
import { RelaxedBatchJS, StreamJS } from './js/relaxed-batch.ts';
import { mulberry32, randomModel } from '../test/helpers.ts';
import { cpuModel, dist, QUICK, resultsPath, wasmFacts, type Dist } from './common.ts';

const SEED = 20241125;
const WIDTHS = [1, 2, 4, 8];
const REPS = QUICK ? 3 : 5;
/** Seconds one measurement of a single chain takes (the number of transitions is fixed from it). */
const TARGET_SECONDS = QUICK ? 0.02 : 0.08;
const STEP_SIZE = 0.15;
const LEAPFROG = 5;

const engine = await loadEngine();
/** Seconds of this process's CPU time (user + system): on a shared, loaded machine far steadier than wall time. */
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const now = () => performance.now() / 1000;

const models: { name: string; model: Model; factor: 'incidence' | 'sparse-cholesky' | 'dense-cholesky' }[] = [
  { name: 'Ising 64×64, incidence', model: isingLattice({ shape: [64, 64], J: 0.25, h: 0.1 }), factor: 'incidence' },
  { name: 'Ising 64×64, sparse Cholesky', model: isingLattice({ shape: [64, 64], J: 0.25, h: 0.1 }), factor: 'sparse-cholesky' },
  { name: 'Boltzmann 256 (dense), dense Cholesky', model: randomModel(mulberry32(SEED), 256, { density: 1, scale: 0.05 }), factor: 'dense-cholesky' },
];

type Kind = 'dhmc' | 'blockgibbs' | 'products' | 'normals';
const KINDS: Kind[] = ['dhmc', 'blockgibbs', 'products', 'normals'];
type Impl = 'wasm' | 'js';

/** One configuration: `run(iters)` advances each of its B chains by iters transitions. */
interface Config {
  model: string;
  kind: Kind;
  impl: Impl;
  B: number;
  run: (iters: number) => void;
  iters: number;
  /** CPU seconds per measurement. */
  times: number[];
  /** Wall seconds per measurement. */
  wall: number[];
}

function checkProducts(rel: Relaxation): void {
  const f = rel.factor;
  if (f.kind === 'fft') return;
  const bound = new BoundRelaxation(engine, rel);
  try {
    const B = 4, { n, m } = bound, a = bound.arena, r = mulberry32(SEED + 1);
    const X = Float64Array.from({ length: m * B }, () => r() - 0.5);
    const V = Float64Array.from({ length: n * B }, () => (r() < 0.5 ? 0 : r()));
    const xp = a.allocF64(X), up = a.allocF64(n * B), vp = a.allocF64(V), gp = a.allocF64(m * B);
    engine.kernels.factorMulBatch(bound.factor, xp, up, B);
    engine.kernels.factorMulTBatch(bound.factor, vp, gp, B);
    const js = new RelaxedBatchJS(f, new Float64Array(n), B);
    const U = new Float64Array(n * B), G = new Float64Array(m * B);
    js.apply(X, U);
    js.applyT(V, G);
    const same = (p: Float64Array, q: Float64Array) => p.every((v, i) => Object.is(v, q[i]));
    if (!same(U, a.readF64(up, n * B)) || !same(G, a.readF64(gp, m * B))) {
      console.error(`${f.kind} factor: the JS reference's batched products differ from the WASM kernels'`);
      process.exit(1);
    }
  } finally {
    bound.dispose();
  }
}

const configs: Config[] = [];
const cleanup: (() => void)[] = [];
const facts: { model: string; factor: string; n: number; m: number; entries: number }[] = [];

for (const { name, model, factor } of models) {
  const rel = buildRelaxation(engine, model, { factor });
  if (!rel.form.oneHot.every((x) => x === 0)) throw new Error(`${name}: the JS reference needs free bits only`);
  checkProducts(rel);
  const f = rel.factor as Extract<typeof rel.factor, { kind: 'dense' | 'sparse' }>;
  facts.push({ model: name, factor, n: f.n, m: f.m, entries: f.values.length });
  const bias = Float64Array.from(rel.form.a, (a, i) => a - 0.5 * rel.d[i]);

  // The factor products alone (M·X then Mᵀ·V; B = 1: factorMul / factorMulT, the single-chain products),
  // and m standard normals per chain (the momentum of one transition; x | s of one block Gibbs sweep).
  const bound = new BoundRelaxation(engine, rel);
  cleanup.push(() => bound.dispose());
  {
    const a = bound.arena, W = Math.max(...WIDTHS), r = mulberry32(SEED + 2);
    const xp = a.allocF64(Float64Array.from({ length: f.m * W }, () => r() - 0.5)), up = a.allocF64(f.n * W);
    const vp = a.allocF64(Float64Array.from({ length: f.n * W }, () => r())), gp = a.allocF64(f.m * W);
    const rng = a.alloc(engine.kernels.rngStateBytes()), normals = a.allocF64(f.m);
    engine.kernels.rngSeed(rng, SEED, 0, 0, 4);
    const k = engine.kernels;
    for (const B of WIDTHS) {
      configs.push({
        model: name, kind: 'products', impl: 'wasm', B, iters: 0, times: [], wall: [],
        run: (it) => {
          for (let i = 0; i < it; i++) {
            if (B === 1) {
              k.factorMul(bound.factor, xp, up);
              k.factorMulT(bound.factor, vp, gp);
            } else {
              k.factorMulBatch(bound.factor, xp, up, B);
              k.factorMulTBatch(bound.factor, vp, gp, B);
            }
          }
        },
      });
      const js = new RelaxedBatchJS(f, bias, B);
      const X = new Float64Array(f.m * B).fill(0.25), U = new Float64Array(f.n * B), V = new Float64Array(f.n * B).fill(0.5), G = new Float64Array(f.m * B);
      configs.push({ model: name, kind: 'products', impl: 'js', B, iters: 0, times: [], wall: [], run: (it) => { for (let i = 0; i < it; i++) { js.apply(X, U); js.applyT(V, G); } } });
      const streams = Array.from({ length: B }, (_, c) => new StreamJS(SEED, 0, c, 4));
      const out = new Float64Array(f.m);
      configs.push({ model: name, kind: 'normals', impl: 'wasm', B, iters: 0, times: [], wall: [], run: (it) => { for (let i = 0; i < it * B; i++) k.rngFillNormalBulk(rng, normals, f.m, 0); } });
      configs.push({ model: name, kind: 'normals', impl: 'js', B, iters: 0, times: [], wall: [], run: (it) => { for (let i = 0; i < it; i++) for (const st of streams) for (let q = 0; q < f.m; q++) out[q] = st.normal(); } });
    }
  }

  const dhmc = new DHMCSampler(engine, rel, { leapfrogSteps: LEAPFROG });
  const gibbs = new BlockGibbsSampler(engine, rel);
  cleanup.push(() => dhmc.dispose(), () => gibbs.dispose());
  for (const B of WIDTHS) {
    const states: ContinuousState[] = Array.from({ length: B }, (_, c) => dhmc.init(SEED, c, { stepSize: STEP_SIZE }));
    configs.push({ model: name, kind: 'dhmc', impl: 'wasm', B, iters: 0, times: [], wall: [], run: (it) => void dhmc.stepChains(states, it) });
    // B = 1: the single-chain kernel; otherwise one lockstep batch.
    const single: BlockGibbsState | null = B === 1 ? gibbs.init(SEED, 0) : null;
    const batch: BlockGibbsBatch | null = B === 1 ? null : gibbs.initBatch(SEED, Array.from({ length: B }, (_, c) => c));
    configs.push({ model: name, kind: 'blockgibbs', impl: 'wasm', B, iters: 0, times: [], wall: [], run: (it) => void (single ? gibbs.step(single, it) : gibbs.stepBatch(batch!, it, false)) });

    const js = new RelaxedBatchJS(f, bias, B);
    const rngs = Array.from({ length: B }, (_, c) => new StreamJS(SEED, 0, c, 3));
    const X = Float64Array.from({ length: f.m * B }, () => rngs[0].normal());
    const S = new Float64Array(f.n * B);
    configs.push({ model: name, kind: 'blockgibbs', impl: 'js', B, iters: 0, times: [], wall: [], run: (it) => void js.blockGibbs(X, S, rngs, it) });
    const Xh = Float64Array.from({ length: f.m * B }, () => rngs[0].normal()), G = new Float64Array(f.m * B), logp = new Float64Array(B);
    js.gradient(Xh, G, new Uint8Array(B).fill(1), logp);
    const eps = new Float64Array(B).fill(STEP_SIZE);
    configs.push({ model: name, kind: 'dhmc', impl: 'js', B, iters: 0, times: [], wall: [], run: (it) => void js.hmc(Xh, G, logp, eps, LEAPFROG, it, rngs) });
  }
}

// Transitions per measurement: from the single chain's speed, the same for every B of a (model, kind, impl).
for (const c of configs.filter((c) => c.B === 1)) {
  let it = 1;
  for (;;) {
    const t0 = cpu();
    c.run(it);
    const t = cpu() - t0;
    if (t > TARGET_SECONDS / 4 || it > 1e6) {
      c.iters = Math.max(1, Math.round((it * TARGET_SECONDS) / Math.max(t, 1e-6)));
      break;
    }
    it *= 4;
  }
  for (const o of configs) if (o.model === c.model && o.kind === c.kind && o.impl === c.impl) o.iters = c.iters;
}
for (const c of configs) c.run(Math.max(1, Math.round(c.iters / 10))); // warm the code paths
const load0 = loadavg()[0];
for (let rep = 0; rep < REPS; rep++) {
  for (let q = 0; q < configs.length; q++) {
    const c = configs[(q + rep * 5) % configs.length];
    const t0 = now(), c0 = cpu();
    c.run(c.iters);
    c.times.push(cpu() - c0);
    c.wall.push(now() - t0);
  }
}
const load1 = loadavg()[0];
cleanup.forEach((f) => f());

interface Row {
  B: number;
  wasm: { perChainPerSecond: number; seconds: Dist; cost: number; wallCost: number };
  js: { perChainPerSecond: number; seconds: Dist; cost: number; wallCost: number };
  wasmOverJs: number;
}
const results = facts.map((fact) => {
  const out: Record<Kind, Row[]> = { dhmc: [], blockgibbs: [], products: [], normals: [] };
  for (const kind of KINDS) {
    const find = (impl: Impl, B: number) => configs.find((c) => c.model === fact.model && c.kind === kind && c.impl === impl && c.B === B)!;
    for (const B of WIDTHS) {
      const row = {} as Row;
      row.B = B;
      for (const impl of ['wasm', 'js'] as Impl[]) {
        const c = find(impl, B), one = find(impl, 1);
        // Ratios of medians within the run; each rep's ratio would pair unrelated moments of load.
        const t = dist(c.times), t1 = dist(one.times);
        row[impl] = { perChainPerSecond: c.iters / t.median, seconds: t, cost: t.median / t1.median, wallCost: dist(c.wall).median / dist(one.wall).median };
      }
      row.wasmOverJs = row.wasm.perChainPerSecond / row.js.perChainPerSecond;
      out[kind].push(row);
    }
  }
  const within = (k: Kind) => out[k].find((r) => r.B === 4)!.wasm.cost <= 2;
  // One chain's m normals against its transition (single-chain kernels): the share batching cannot touch.
  const perOne = (k: Kind) => out[k][0].wasm.seconds.median / find4(fact.model, k).wasm;
  const normalsShare = { dhmc: perOne('normals') / perOne('dhmc'), blockgibbs: perOne('normals') / perOne('blockgibbs') };
  return {
    ...fact,
    transitionsPerMeasurement: { dhmc: find4(fact.model, 'dhmc'), blockgibbs: find4(fact.model, 'blockgibbs'), products: find4(fact.model, 'products'), normals: find4(fact.model, 'normals') },
    ...out,
    normalsShareOfSingleTransition: normalsShare,
    batchOf4Within2x: { dhmc: within('dhmc'), blockgibbs: within('blockgibbs'), products: within('products') },
  };
});

function find4(model: string, kind: Kind): { wasm: number; js: number } {
  const c = (impl: Impl) => configs.find((o) => o.model === model && o.kind === kind && o.impl === impl && o.B === 1)!.iters;
  return { wasm: c('wasm'), js: c('js') };
}

const report = {
  bench: 'batch',
  quick: QUICK,
  date: new Date().toISOString(),
  machine: { cpu: cpuModel(), node: process.version, loadavgStart: load0, loadavgEnd: load1, note: 'shared machine: CPU time of this process (wall time beside it), medians of interleaved repetitions; ratios within the run' },
  wasm: wasmFacts(),
  settings: { reps: REPS, widths: WIDTHS, stepSize: STEP_SIZE, leapfrogSteps: LEAPFROG, targetSecondsSingle: TARGET_SECONDS },
  results,
};
const path = resultsPath('batch.json');
writeFileSync(path, JSON.stringify(report, (_k, v) => (v instanceof Float64Array ? Array.from(v) : v), 2));

for (const r of results) {
  console.log(`\n${r.model} (${r.factor}: n = ${r.n}, m = ${r.m}, ${r.entries} entries)`);
  for (const kind of KINDS) {
    console.log(`  ${kind}: B | WASM transitions/s per chain | cost vs B=1 | JS transitions/s per chain | JS cost | WASM/JS`);
    for (const row of r[kind]) {
      console.log(`    ${row.B} | ${row.wasm.perChainPerSecond.toFixed(0).padStart(8)} | ${row.wasm.cost.toFixed(2)} | ${row.js.perChainPerSecond.toFixed(0).padStart(8)} | ${row.js.cost.toFixed(2)} | ${row.wasmOverJs.toFixed(2)}`);
    }
    if (kind !== 'normals') console.log(`    batch of 4 ≤ 2× a single chain: ${r.batchOf4Within2x[kind as 'dhmc'] ? 'yes' : 'no'}`);
  }
}
for (const r of results) console.log(`${r.model}: one chain's m normals = ${(100 * r.normalsShareOfSingleTransition.dhmc).toFixed(0)}% of a DHMC transition, ${(100 * r.normalsShareOfSingleTransition.blockgibbs).toFixed(0)}% of a block Gibbs sweep (single-chain kernels)`);
console.log(`\nload average ${load0.toFixed(2)} → ${load1.toFixed(2)}; wrote ${path}`);
