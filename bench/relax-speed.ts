// Speed of the relaxation's kernels (issue 3): `npm run bench:relax` (full, ~4 min) or BENCH_QUICK=1 /
// --quick (under a minute). Writes bench/results/relax-speed.json ("quick" says which mode wrote it; a
// quick run does not replace a full run's file: it writes to the temp directory).
//
// (a) One DHMC leapfrog step on a 100×100 grid with a sparse factor vs one sequential Gibbs sweep of
//     the same model (target: leapfrog ≤ 2× sweep), for two sparse factors: sparse Cholesky (Martens'
//     shift; JSON leapfrogVsGibbs) and the edge-incidence factor (d_i = Σ_j |w_ij|, M = B with one
//     column per bond, m = 19800; JSON leapfrogVsGibbsIncidence). The leapfrog step is timed through
//     the kernel's own integrator, hmcIntegrate(chain, x, p, L, ε) on arena buffers: one call evaluates
//     the density once at the start and then takes L velocity-Verlet steps (gradient only, log p at the
//     last), so
//       leapfrog = (t(L) − t(0)) / L
//     (both calls restore the same x, p first). Also shown: one gradient with log p (relaxedLogp on arena
//     buffers: u = Mx, softplus/σ, g = Mᵀπ − x), u = Mx and Mᵀv alone, and a whole HMC transition
//     (momentum draw, 5 leapfrog steps, Metropolis test) divided by 5. The Gibbs sweep is timed with and
//     without Rao–Blackwell accumulation; the target uses the plain sweep. All of (a) is one interleaved
//     set of measurements.
// (b) The FFT factor on L×L periodic lattices with nearest- and next-nearest-neighbour couplings,
//     L = 64 … 1024: time of u = Mx (one FFT apply, real-input path), of a gradient (Mx and Mᵀπ, two
//     applies) and of a leapfrog step (as in (a)); time / (n log₂ n) printed (roughly constant for an
//     n log n method). Target: leapfrog ≤ 200 ms at 1024². The models are built once through the
//     TypeScript builders (ising → toCanonical → latticeSpectrum, i.e. fftFactor's steps), which takes
//     several seconds at 1024² (reported); quick mode writes the same canonical forms directly (checked
//     against the builders at 32×32) to stay under a minute.
// (c) u = Mx and g = Mᵀv in the WASM kernels vs a native C reference of the same loops
//     (bench/native/factor.c, gcc -O3 -march=native -ffp-contract=off: the kernel's arithmetic bit for
//     bit, the reference the target is judged against; also -ffp-contract=fast, FMA where the CPU has
//     it, and plain -O3 without -march=native (128-bit SSE2 vectors, like WASM SIMD), for context) on a
//     dense 1000×1000 matrix (random entries; the cost does not depend on them) and on the two sparse
//     factors of (a), the same data passed through a binary file. Outputs are compared first
//     (normwise relative difference ≤ 1e-12, else exit 1). Target: WASM/C speed ratio (t_C / t_WASM) ≥ 0.8.
// (d) Mixing of the incidence factor against sparse Cholesky (whitened DHMC, library defaults, 4
//     chains): MSE of node marginals vs exact elimination and MSE × seconds on 10×10 Zhang grids,
//     ESS/s on 100×100 grids (see partD).
// Timings: repetitions interleaved (order rotated), medians reported with min–max; the machine is shared.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import type { Engine, Arena } from '../bindings/core/engine.ts';
import { boltzmann, ising, latticeBonds, type Coupling } from '../bindings/core/builders.ts';
import type { Model } from '../bindings/core/model.ts';
import { toCanonical, type CanonicalForm } from '../bindings/core/canonical.ts';
import { GibbsSampler } from '../bindings/samplers/gibbs.ts';
import { DHMCSampler, runDHMC } from '../bindings/samplers/dhmc.ts';
import { exactInference } from '../bindings/exact/exact.ts';
import { buildRelaxation } from '../bindings/relax/relaxation.ts';
import { BoundRelaxation, type RelaxationData } from '../bindings/relax/relaxation-bound.ts';
import { latticeSpectrum, type FFTFactorData } from '../bindings/relax/fft-factor.ts';
import { mulberry32 } from '../test/helpers.ts';
import { cpuModel, dist, QUICK, resultsPath, wasmFacts, type Dist } from './common.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const WASM_PATH = process.env.BENCH_WASM || undefined;

const CFG = QUICK
  ? { reps: 5, seconds: 0.03, fftSides: [64, 128, 256, 512, 1024], leapfrogs: 10, warmup: 40 }
  : { reps: 11, seconds: 0.15, fftSides: [64, 128, 256, 512, 1024], leapfrogs: 20, warmup: 150 };
const SEED = 20240903;
const TARGETS = { leapfrogOverSweep: 2, fftLeapfrogMs1024: 200, wasmOverC: 0.8, agreement: 1e-12 };

// ---------------------------------------------------------------------------------------------
// Helpers


function normal(r: () => number): number {
  let u = r();
  while (u === 0) u = r();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
}



const now = () => performance.now() / 1000;

/** A timed operation: `run(calls)` does `calls` units of work and returns seconds. */
interface Op {
  name: string;
  /** Units of work per call of `once` (e.g. sweeps). */
  run(calls: number): number;
}

/** Calls per measurement so one measurement takes about CFG.seconds. */
function calibrate(op: Op): number {
  op.run(1); // tier-up
  let calls = 1;
  for (;;) {
    const t = op.run(calls);
    if (t >= CFG.seconds / 4 || calls >= 1 << 24) return Math.max(1, Math.round((calls * CFG.seconds) / Math.max(t, 1e-7)));
    calls *= 4;
  }
}

/** Seconds per call of each op: CFG.reps interleaved repetitions (rotating order), per-op calls calibrated. */
function interleave(ops: Op[], reps = CFG.reps): Map<string, Dist> {
  const calls = ops.map(calibrate);
  const per: number[][] = ops.map(() => []);
  for (let r = 0; r < reps; r++) {
    for (let q = 0; q < ops.length; q++) {
      const k = (q + r) % ops.length;
      per[k].push(ops[k].run(calls[k]) / calls[k]);
    }
  }
  return new Map(ops.map((o, k) => [o.name, dist(per[k])]));
}

function timeLoop(fn: () => void): (calls: number) => number {
  return (calls) => {
    const t = now();
    for (let c = 0; c < calls; c++) fn();
    return now() - t;
  };
}

const ms = (s: number) => s * 1e3;
const us = (s: number) => s * 1e6;
const f = (x: number, d = 3) => (Number.isFinite(x) ? x.toFixed(d) : String(x));
const fd = (d: Dist, scale: (s: number) => number, digits = 3) => `${f(scale(d.median), digits)} [${f(scale(d.min), digits)}–${f(scale(d.max), digits)}]`;
const mark = (ok: boolean) => (ok ? 'PASS' : 'MISS');


// ---------------------------------------------------------------------------------------------
// DHMC through its exported API.

/** A DHMC chain (whitened, 5 leapfrog steps) and x, p buffers for timing hmcIntegrate. */
function leapfrogRig(engine: Engine, rel: RelaxationData, arena: Arena, opts: { warmup: number; stepSize?: number }) {
  const k = engine.kernels;
  const sampler = new DHMCSampler(engine, rel, { parametrisation: 'whitened', leapfrogSteps: 5 });
  const st = sampler.init(SEED, 0, opts.stepSize !== undefined ? { stepSize: opts.stepSize } : {});
  if (opts.warmup > 0) sampler.warmup(st, opts.warmup, { targetAccept: 0.9 });
  const eps = sampler.stepSize(st);
  const m = sampler.m;
  const x0 = sampler.position(st);
  const r = mulberry32(SEED + 7);
  const p0 = Float64Array.from({ length: m }, () => normal(r));
  const xp = arena.allocF64(m), pp = arena.allocF64(m);
  let lastLogp = NaN;
  const integrate = (L: number) => {
    arena.f64(xp, m).set(x0);
    arena.f64(pp, m).set(p0);
    lastLogp = k.hmcIntegrate(st.ptr, xp, pp, L, eps);
  };
  return {
    sampler,
    st,
    eps,
    m,
    integrate,
    get lastLogp() {
      return lastLogp;
    },
    dispose: () => sampler.dispose(),
  };
}

/** Gradient, Mx and Mᵀv on arena buffers of a BoundRelaxation (no copies per call). */
function gradientRig(engine: Engine, bound: BoundRelaxation, arena: Arena) {
  const k = engine.kernels;
  const r = mulberry32(SEED + 11);
  const x = arena.allocF64(Float64Array.from({ length: bound.m }, () => normal(r)));
  const g = arena.allocF64(bound.m);
  const u = arena.allocF64(bound.n);
  const v = arena.allocF64(Float64Array.from({ length: bound.n }, () => r()));
  return {
    gradient: () => void k.relaxedLogp(bound.relaxed, x, g),
    mul: () => k.factorMul(bound.factor, x, u),
    mulT: () => k.factorMulT(bound.factor, v, g),
  };
}

// ---------------------------------------------------------------------------------------------
// (a) 100×100 grid: leapfrog step vs Gibbs sweep.

/** Zhang's 'standard' grid (c₁ = c₂ = 0.5): a_i ~ c₁N(0,4), w_ij ~ c₂N(0,4) on the bonds of an open grid. */
function zhangGrid(side: number, c1: number, c2: number, seed: number): Model {
  const r = mulberry32(seed);
  const edges = latticeBonds([side, side], false).map(([i, j]): Coupling => [i, j, c2 * 2 * normal(r)]);
  const a = Float64Array.from({ length: side * side }, () => c1 * 2 * normal(r));
  return boltzmann({ a, edges });
}

const SPARSE_FACTORS = ['sparse-cholesky', 'incidence'] as const;
type SparseFactor = (typeof SPARSE_FACTORS)[number];

function partA(engine: Engine) {
  const side = 100;
  const model = zhangGrid(side, 0.5, 0.5, SEED);
  const gibbs = new GibbsSampler(engine, model);
  const gst = gibbs.init(SEED, 0);
  const acc = gibbs.accumulator();
  gibbs.step(gst, 200, 0); // past the random start
  const arena = engine.arena();
  const L = CFG.leapfrogs;
  const ops: Op[] = [
    { name: 'gibbs sweep', run: (c) => { const t = now(); gibbs.step(gst, c, 0); return now() - t; } },
    { name: 'gibbs sweep + RB', run: (c) => { const t = now(); gibbs.step(gst, c, acc); return now() - t; } },
  ];
  type Setup = {
    kind: SparseFactor; rel: RelaxationData & { fill: number | null; timings: unknown }; factor: Extract<RelaxationData['factor'], { kind: 'sparse' }>;
    relaxSeconds: number; bound: BoundRelaxation; rig: ReturnType<typeof leapfrogRig> | null; note: string;
  };
  const setups: Setup[] = [];
  for (const kind of SPARSE_FACTORS) {
    const t0 = now();
    const rel = buildRelaxation(engine, model, { factor: kind });
    const relaxSeconds = now() - t0;
    const factor = rel.factor as Setup['factor'];
    const bound = new BoundRelaxation(engine, rel);
    const grad = gradientRig(engine, bound, arena);
    let rig: Setup['rig'] = null;
    let note = '';
    try {
      rig = leapfrogRig(engine, rel, arena, { warmup: CFG.warmup });
    } catch (e) {
      note = `DHMC leapfrog not timed: ${String(e instanceof Error ? e.message : e).split('\n')[0]}`;
    }
    setups.push({ kind, rel, factor, relaxSeconds, bound, rig, note });
    ops.push(
      { name: `${kind} gradient`, run: timeLoop(grad.gradient) },
      { name: `${kind} Mx`, run: timeLoop(grad.mul) },
      { name: `${kind} Mᵀv`, run: timeLoop(grad.mulT) },
    );
    if (rig) {
      const R = rig;
      ops.push(
        { name: `${kind} integrate ${L}`, run: timeLoop(() => R.integrate(L)) },
        { name: `${kind} integrate 0`, run: timeLoop(() => R.integrate(0)) },
        { name: `${kind} hmc transition`, run: (c) => { const t = now(); R.sampler.step(R.st, c); return now() - t; } },
      );
    }
  }
  const res = interleave(ops);
  const sweep = res.get('gibbs sweep')!;
  const outs: Record<SparseFactor, Record<string, unknown> & { pass: boolean | null; leapfrogOverSweep: number | null }> = {} as never;
  for (const S of setups) {
    const { kind, rel, factor, rig } = S;
    let note = S.note;
    if (rig && !Number.isFinite(rig.lastLogp)) note = `the timed trajectory diverged (log p = ${rig.lastLogp}); leapfrog timing not valid`;
    console.log(
      `\n(a) ${side}×${side} Zhang 'standard' grid (c₁ = c₂ = 0.5), ${kind} factor: n = ${factor.n}, m = ${factor.m}, nnz(M) = ${factor.values.length} ` +
        `(${(factor.values.length / factor.n).toFixed(1)} per row; W has ${model.edges.length} bonds); relaxation built in ${f(S.relaxSeconds, 2)} s`,
    );
    let leap: Dist | null = null;
    if (rig && !note) {
      const tL = res.get(`${kind} integrate ${L}`)!.samples, t0s = res.get(`${kind} integrate 0`)!.samples;
      leap = dist(tL.map((t, i) => (t - t0s[i]) / L));
    }
    const transition = res.get(`${kind} hmc transition`);
    const perLeapFromTransition = transition ? dist(transition.samples.map((t) => t / 5)) : null;
    const ratio = leap ? leap.median / sweep.median : null;
    const ok = ratio !== null && ratio <= TARGETS.leapfrogOverSweep;
    console.log('| operation | time (µs), median [min–max] | × Gibbs sweep |');
    console.log('|---|---|---|');
    const row = (name: string, d: Dist | null | undefined) => d && console.log(`| ${name} | ${fd(d, us, 1)} | ${f(d.median / sweep.median, 2)} |`);
    row('Gibbs sweep (10⁴ site updates)', sweep);
    row('Gibbs sweep with RB accumulation', res.get('gibbs sweep + RB'));
    row(`u = Mx (${kind})`, res.get(`${kind} Mx`));
    row(`g = Mᵀv (${kind})`, res.get(`${kind} Mᵀv`));
    row('gradient with log p (relaxedLogp: Mx, σ/softplus, Mᵀπ − x)', res.get(`${kind} gradient`));
    row(`leapfrog step ((t(${L}) − t(0))/${L}, hmcIntegrate)`, leap);
    row('HMC transition / 5 (momentum, 5 leapfrogs, MH)', perLeapFromTransition);
    if (note) console.log(`NOTE: ${note}`);
    console.log(`leapfrog / Gibbs sweep (${kind}) = ${ratio === null ? '—' : f(ratio, 2)} (target ≤ ${TARGETS.leapfrogOverSweep}): ${ratio === null ? 'not measured' : mark(ok)}` + (rig ? `  [step size ${f(rig.eps, 3)} after ${CFG.warmup} warm-up transitions]` : ''));
    const own = (name: string) => res.get(`${kind} ${name}`);
    outs[kind] = {
      model: { side, kind: "Zhang 'standard' Boltzmann grid, c1 = c2 = 0.5", bonds: model.edges.length },
      factor: { kind, n: factor.n, m: factor.m, nnz: factor.values.length, fill: rel.fill, relaxationSeconds: S.relaxSeconds, timings: rel.timings },
      leapfrogMethod: rig ? `hmcIntegrate: (t(L) − t(0))/L, L = ${L}, whitened, step size ${rig.eps}` : null,
      secondsPerOp: {
        'gibbs sweep': sweep, 'gibbs sweep + RB': res.get('gibbs sweep + RB'), gradient: own('gradient'), Mx: own('Mx'), 'Mᵀv': own('Mᵀv'),
        [`integrate ${L}`]: own(`integrate ${L}`), 'integrate 0': own('integrate 0'), 'hmc transition': own('hmc transition'),
      },
      leapfrogSeconds: leap,
      hmcTransitionPerLeapfrogSeconds: perLeapFromTransition,
      leapfrogOverSweep: ratio,
      target: TARGETS.leapfrogOverSweep,
      pass: ratio === null ? null : ok,
      note: note || null,
    };
  }
  for (const S of setups) {
    S.rig?.dispose();
    S.bound.dispose();
  }
  arena.dispose();
  gibbs.dispose();
  return { outs, factors: Object.fromEntries(setups.map((S) => [S.kind, S.factor])) as Record<SparseFactor, Setup['factor']> };
}

// ---------------------------------------------------------------------------------------------
// (b) FFT factor on periodic lattices.

const J1 = 0.3, J2 = -0.15, H = 0.1;

function nnnLattice(L: number): Model {
  const n = L * L;
  function* couplings(): Generator<Coupling> {
    for (let r = 0; r < L; r++) {
      const r1 = ((r + 1) % L) * L;
      for (let c = 0; c < L; c++) {
        const i = r * L + c;
        yield [i, r * L + ((c + 1) % L), J1];
        yield [i, r1 + c, J1];
        yield [i, r1 + ((c + 1) % L), J2];
        yield [i, r1 + ((c + L - 1) % L), J2];
      }
    }
  }
  return ising({ n, couplings: couplings(), h: H });
}

/**
 * The canonical form of nnnLattice(L) written directly (σ = 2s − 1: W_ij = 4J_ij, a_i = 2h − 2Σ_j J_ij,
 * log Z offset −nh + Σ_pairs J), for quick mode, where going through the builders at 1024² would take
 * most of the minute. Checked against toCanonical(nnnLattice(L)) at a small L before use.
 */
function nnnForm(L: number): CanonicalForm {
  const n = L * L;
  const rowPtr = new Int32Array(n + 1);
  const col = new Int32Array(8 * n);
  const val = new Float64Array(8 * n);
  const a = new Float64Array(n).fill(2 * H - 2 * (4 * J1 + 4 * J2));
  const nb = new Array<[number, number]>(8);
  for (let r = 0; r < L; r++) {
    const up = ((r + L - 1) % L) * L, dn = ((r + 1) % L) * L, mid = r * L;
    for (let c = 0; c < L; c++) {
      const i = mid + c, cl = (c + L - 1) % L, cr = (c + 1) % L;
      nb[0] = [mid + cl, 4 * J1]; nb[1] = [mid + cr, 4 * J1]; nb[2] = [up + c, 4 * J1]; nb[3] = [dn + c, 4 * J1];
      nb[4] = [up + cl, 4 * J2]; nb[5] = [up + cr, 4 * J2]; nb[6] = [dn + cl, 4 * J2]; nb[7] = [dn + cr, 4 * J2];
      nb.sort((x, y) => x[0] - y[0]);
      for (let q = 0; q < 8; q++) {
        col[8 * i + q] = nb[q][0];
        val[8 * i + q] = nb[q][1];
      }
      rowPtr[i + 1] = 8 * (i + 1);
    }
  }
  return {
    n, nBits: n, blockStart: Int32Array.from({ length: n + 1 }, (_, i) => i), oneHot: new Uint8Array(n), card: new Int32Array(n).fill(2),
    a, rowPtr, col, val, logZOffset: -n * H + 2 * n * (J1 + J2),
  };
}

/** Throws unless nnnForm(L) equals the builders' canonical form (to 1e-12). */
function checkNnnForm(L: number): void {
  const x = nnnForm(L), y = toCanonical(nnnLattice(L));
  const close = (p: number, q: number) => Math.abs(p - q) <= 1e-12 * Math.max(1, Math.abs(q));
  const same = x.n === y.n && x.nBits === y.nBits && x.rowPtr.every((v, i) => v === y.rowPtr[i]) && x.col.every((v, i) => v === y.col[i]) &&
    x.val.every((v, i) => close(v, y.val[i])) && x.a.every((v, i) => close(v, y.a[i])) && close(x.logZOffset, y.logZOffset) && y.oneHot.every((v) => v === 0);
  if (!same) throw new Error(`bench: the direct canonical form of the ${L}×${L} lattice differs from the builders'`);
}

function partB(engine: Engine) {
  console.log(`\n(b) FFT factor, L×L periodic Ising lattices, J₁ = ${J1} (nearest), J₂ = ${J2} (diagonal next-nearest), h = ${H}; d = −λ_min(W) + 10⁻³·max(ρ, 1)`);
  console.log('| L | n | build model + form + factor (s) | u = Mx (ms) | gradient (ms) | leapfrog step (ms) | leapfrog / (n log₂ n) (ns) |');
  console.log('|---|---|---|---|---|---|---|');
  const rows = [];
  let note = '';
  if (QUICK) {
    checkNnnForm(32);
    console.log('(quick mode: canonical forms written directly, checked against the builders at 32×32; build times below are not the builders\')');
  }
  for (const L of CFG.fftSides) {
    const n = L * L;
    const t0 = now();
    // Full mode: through the builders (timed). Quick mode: the same form written directly (checked once).
    const model = QUICK ? null : nnnLattice(L);
    const tModel = now() - t0;
    const form = model ? toCanonical(model) : nnnForm(L);
    const tForm = now() - t0 - tModel;
    // fftFactor's two steps, so the spectrum (the slow part: the translation check) is computed once.
    const probe = latticeSpectrum(engine, form, [L, L]);
    const rho = Math.max(Math.abs(probe.lambdaMin), Math.abs(probe.lambdaMax));
    const d = Math.max(0, -probe.lambdaMin) + 1e-3 * Math.max(rho, 1);
    const factor: FFTFactorData = { kind: 'fft', n, m: n, shape: [L, L], sqrtSpectrum: probe.lambda.map((l) => Math.sqrt(l + d)) };
    const tFactor = now() - t0 - tModel - tForm;
    const rel: RelaxationData = { form, d: new Float64Array(n).fill(d), factor };
    const arena = engine.arena();
    const bound = new BoundRelaxation(engine, rel);
    const grad = gradientRig(engine, bound, arena);
    let rig: ReturnType<typeof leapfrogRig> | null = null;
    try {
      rig = leapfrogRig(engine, rel, arena, { warmup: 0, stepSize: 0.1 });
    } catch (e) {
      note = `FFT leapfrog not timed: ${String(e instanceof Error ? e.message : e).split('\n')[0]}`;
    }
    const steps = L >= 512 ? 2 : 4;
    const ops: Op[] = [
      { name: 'Mx', run: timeLoop(grad.mul) },
      { name: 'gradient', run: timeLoop(grad.gradient) },
    ];
    if (rig) {
      const R = rig;
      ops.push({ name: `integrate ${steps}`, run: timeLoop(() => R.integrate(steps)) }, { name: 'integrate 0', run: timeLoop(() => R.integrate(0)) });
    }
    const reps = L >= 1024 ? Math.min(CFG.reps, QUICK ? 3 : 5) : CFG.reps;
    const res = interleave(ops, reps);
    let leap: Dist | null = null;
    if (rig) {
      if (!Number.isFinite(rig.lastLogp)) note = `the timed FFT trajectory diverged at L = ${L}`;
      else {
        const tS = res.get(`integrate ${steps}`)!.samples, tZ = res.get('integrate 0')!.samples;
        leap = dist(tS.map((t, i) => (t - tZ[i]) / steps));
      }
    }
    const nlogn = n * Math.log2(n);
    const build = tModel + tForm + tFactor;
    rows.push({
      L, n, buildSeconds: { model: tModel, canonical: tForm, factor: tFactor, throughBuilders: !QUICK }, d,
      lambdaMinW: probe.lambdaMin, lambdaMaxW: probe.lambdaMax,
      mulSeconds: res.get('Mx'), gradientSeconds: res.get('gradient'), leapfrogSeconds: leap,
      leapfrogNsPerNLog2N: leap ? (leap.median * 1e9) / nlogn : null,
      gradientNsPerNLog2N: (res.get('gradient')!.median * 1e9) / nlogn,
      mulNsPerNLog2N: (res.get('Mx')!.median * 1e9) / nlogn,
      repetitions: reps,
    });
    console.log(
      `| ${L} | ${n} | ${f(build, 2)} | ${fd(res.get('Mx')!, ms, 2)} | ${fd(res.get('gradient')!, ms, 2)} | ${leap ? fd(leap, ms, 2) : '—'} | ` +
        `${leap ? f((leap.median * 1e9) / nlogn, 3) : '—'} (gradient ${f((res.get('gradient')!.median * 1e9) / nlogn, 3)}) |`,
    );
    rig?.dispose();
    bound.dispose();
    arena.dispose();
  }
  if (note) console.log(`NOTE: ${note}`);
  const last = rows.find((r) => r.L === 1024);
  const leap1024 = last?.leapfrogSeconds ? last.leapfrogSeconds.median * 1e3 : null;
  const ok = leap1024 !== null && leap1024 <= TARGETS.fftLeapfrogMs1024;
  console.log(`FFT leapfrog at 1024² = ${leap1024 === null ? '—' : f(leap1024, 1)} ms (target ≤ ${TARGETS.fftLeapfrogMs1024} ms): ${leap1024 === null ? 'not measured' : mark(ok)}`);
  return { couplings: { J1, J2, h: H }, rows, leapfrogMs1024: leap1024, target: TARGETS.fftLeapfrogMs1024, pass: leap1024 === null ? null : ok, note: note || null };
}

// ---------------------------------------------------------------------------------------------
// (c) WASM vs native C, same loops.

type Layout = { kind: 'dense'; n: number; m: number; values: Float64Array } | { kind: 'sparse'; n: number; m: number; rowPtr: Int32Array; col: Int32Array; values: Float64Array };

function partC(engine: Engine, sparse: Record<SparseFactor, Layout>, work: string) {
  const probe = spawnSync('gcc', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    console.log('\n(c) NOTE: gcc not found: the native comparison is skipped');
    return { skipped: true, note: 'gcc not found' };
  }
  const src = join(HERE, 'native', 'factor.c');
  const builds = [
    { name: 'c', flags: ['-O3', '-march=native', '-ffp-contract=off'] },
    // gcc contracts a·b + c into FMA only with -ffp-contract=fast (its default in GNU modes, not with -std=c11).
    { name: 'c-fma', flags: ['-O3', '-march=native', '-ffp-contract=fast'] },
    // For context only: the baseline x86-64 target (SSE2, 128-bit vectors like WASM SIMD).
    { name: 'c-o3', flags: ['-O3', '-ffp-contract=off'] },
  ].map((b) => {
    const exe = join(work, `factor-${b.name}.out`);
    const cc = spawnSync('gcc', [...b.flags, '-std=c11', '-D_POSIX_C_SOURCE=200112L', '-o', exe, src], { encoding: 'utf8' });
    if (cc.status !== 0) throw new Error(`gcc failed on bench/native/factor.c:\n${cc.stderr}`);
    return { ...b, exe };
  });
  const gccVersion = probe.stdout.split('\n')[0];
  console.log(`\n(c) u = Mx and g = Mᵀv, WASM kernel vs native C of the same loops (${gccVersion}; 'C' = ${builds[0].flags.join(' ')} (the reference), 'C+FMA' = ${builds[1].flags.join(' ')}, 'C -O3' = ${builds[2].flags.join(' ')})`);

  const r = mulberry32(SEED + 3);
  const N = 1000;
  const dense: Layout = { kind: 'dense', n: N, m: N, values: Float64Array.from({ length: N * N }, () => 2 * r() - 1) };
  const cases = [
    { name: `dense ${N}×${N}`, label: 'dense', layout: dense },
    { name: `sparse 100×100-grid factor (n = ${sparse['sparse-cholesky'].n}, nnz = ${sparse['sparse-cholesky'].values.length})`, label: 'sparse', layout: sparse['sparse-cholesky'] },
    { name: `sparse incidence 100×100-grid factor (n = ${sparse.incidence.n}, m = ${sparse.incidence.m}, nnz = ${sparse.incidence.values.length})`, label: 'sparse incidence', layout: sparse.incidence },
  ];
  const rows = [];
  let failed = false;
  for (const cs of cases) {
    const F = cs.layout;
    const x = Float64Array.from({ length: F.m }, () => normal(r));
    const v = Float64Array.from({ length: F.n }, () => r()); // like π ∈ (0, 1)
    // The data file for C.
    const head = Buffer.alloc(24);
    head.write('RMRFFAC1', 0, 'latin1');
    head.writeInt32LE(F.kind === 'dense' ? 0 : 1, 8);
    head.writeInt32LE(F.n, 12);
    head.writeInt32LE(F.m, 16);
    head.writeInt32LE(F.values.length, 20);
    const buf = (a: Float64Array | Int32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    const parts = F.kind === 'dense' ? [head, buf(F.values), buf(x), buf(v)] : [head, buf(F.rowPtr), buf(F.col), buf(F.values), buf(x), buf(v)];
    const file = join(work, `factor-${F.kind}.bin`);
    writeFileSync(file, Buffer.concat(parts));
    // The same data in WASM.
    const k = engine.kernels;
    const arena = engine.arena();
    const data = arena.allocF64(F.values);
    const i0 = F.kind === 'sparse' ? arena.allocI32(F.rowPtr) : 0;
    const i1 = F.kind === 'sparse' ? arena.allocI32(F.col) : 0;
    const hdr = arena.alloc(k.factorBytes());
    k.factorInit(hdr, F.kind === 'dense' ? 0 : 1, F.n, F.m, 0, data, i0, i1, 0);
    const xp = arena.allocF64(x), vp = arena.allocF64(v), up = arena.allocF64(F.n), gp = arena.allocF64(F.m);
    k.factorMul(hdr, xp, up);
    k.factorMulT(hdr, vp, gp);
    const wu = arena.readF64(up, F.n), wg = arena.readF64(gp, F.m);
    // Verify against each C build.
    const agreement: Record<string, unknown> = {};
    for (const b of builds) {
      const out = join(work, 'verify.out');
      const run = spawnSync(b.exe, ['verify', file, out], { encoding: 'utf8' });
      if (run.status !== 0) throw new Error(`factor.out verify failed: ${run.stderr || run.error}`);
      const o = readFileSync(out);
      const cu = new Float64Array(o.buffer.slice(o.byteOffset, o.byteOffset + 8 * F.n));
      const cg = new Float64Array(o.buffer.slice(o.byteOffset + 8 * F.n, o.byteOffset + 8 * (F.n + F.m)));
      const cmp = (a: Float64Array, c: Float64Array) => {
        let diff = 0, scale = 0, bits = 0;
        for (let i = 0; i < a.length; i++) {
          diff = Math.max(diff, Math.abs(a[i] - c[i]));
          scale = Math.max(scale, Math.abs(c[i]));
          if (!Object.is(a[i], c[i])) bits++;
        }
        return { normwiseRelDiff: scale > 0 ? diff / scale : diff, notBitEqual: bits };
      };
      const au = cmp(wu, cu), ag = cmp(wg, cg);
      const ok = au.normwiseRelDiff <= TARGETS.agreement && ag.normwiseRelDiff <= TARGETS.agreement;
      if (!ok) failed = true;
      agreement[b.name] = { mul: au, mulT: ag, ok };
      console.log(
        `  ${cs.name}: WASM vs ${b.name}: Mx rel. diff ${au.normwiseRelDiff.toExponential(1)} (${au.notBitEqual}/${F.n} not bit-equal), ` +
          `Mᵀv ${ag.normwiseRelDiff.toExponential(1)} (${ag.notBitEqual}/${F.m} not bit-equal)  ${ok ? 'ok' : 'FAILED'}`,
      );
    }
    if (failed) {
      arena.dispose();
      break;
    }
    // Timing, interleaved: WASM in-process; C in a fresh process per measurement with its own clock.
    const result: Record<string, unknown> = { case: cs.name, kind: F.kind, label: cs.label, n: F.n, m: F.m, nnz: F.values.length, agreement };
    for (const op of ['mul', 'mult'] as const) {
      const wasmRun = timeLoop(op === 'mul' ? () => k.factorMul(hdr, xp, up) : () => k.factorMulT(hdr, vp, gp));
      const cRun = (exe: string) => (calls: number) => {
        const run = spawnSync(exe, ['time', file, op, String(calls), String(Math.max(1, Math.floor(calls / 5)))], { encoding: 'utf8' });
        if (run.status !== 0) throw new Error(`factor.out time failed: ${run.stderr || run.error}`);
        return Number(run.stdout.trim().split(/\s+/)[0]);
      };
      const ops: Op[] = [{ name: 'wasm', run: wasmRun }, ...builds.map((b) => ({ name: b.name, run: cRun(b.exe) }))];
      // One call count for all (calibrated on WASM) so each process does the same work.
      const calls = calibrate(ops[0]);
      for (let w = 0; w < 3; w++) wasmRun(Math.max(1, calls >> 2));
      const per: Record<string, number[]> = Object.fromEntries(ops.map((o) => [o.name, []]));
      for (let rep = 0; rep < CFG.reps; rep++) {
        for (let q = 0; q < ops.length; q++) {
          const o = ops[(q + rep) % ops.length];
          per[o.name].push(o.run(calls) / calls);
        }
      }
      const W = dist(per.wasm), C = dist(per.c), CF = dist(per['c-fma']), CO = dist(per['c-o3']);
      const ratio = C.median / W.median, ratioFma = CF.median / W.median;
      const paired = dist(per.wasm.map((w, i) => per.c[i] / w)).median;
      result[op] = {
        callsPerMeasurement: calls, seconds: { wasm: W, c: C, cFma: CF, cO3: CO }, wasmOverC: ratio, wasmOverCPaired: paired, wasmOverCFma: ratioFma,
        wasmOverCO3: CO.median / W.median, pass: ratio >= TARGETS.wasmOverC,
      };
    }
    rows.push(result);
    arena.dispose();
  }
  if (failed) {
    console.error('FAILED: WASM and C disagree beyond 1e-12: the timings would compare different computations (not timed).');
    process.exitCode = 1;
    return { skipped: false, failed: true, rows };
  }
  console.log('| case | product | WASM (µs) | C (µs) | C+FMA (µs) | C -O3 (µs) | WASM/C speed (≥ 0.8) | WASM/(C+FMA) | WASM/(C -O3) |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const row of rows as Record<string, any>[]) {
    for (const op of ['mul', 'mult'] as const) {
      const q = row[op];
      console.log(
        `| ${row.case} | ${op === 'mul' ? 'u = Mx' : 'g = Mᵀv'} | ${fd(q.seconds.wasm, us, 1)} | ${fd(q.seconds.c, us, 1)} | ${fd(q.seconds.cFma, us, 1)} | ${fd(q.seconds.cO3, us, 1)} | ` +
          `${f(q.wasmOverC, 2)} (paired ${f(q.wasmOverCPaired, 2)}) ${mark(q.pass)} | ${f(q.wasmOverCFma, 2)} | ${f(q.wasmOverCO3, 2)} |`,
      );
    }
  }
  return { skipped: false, failed: false, compiler: gccVersion, builds: builds.map((b) => ({ name: b.name, flags: b.flags })), rows };
}

// ---------------------------------------------------------------------------------------------
// (d) Mixing: the incidence factor's d_i = Σ_j |w_ij| against the sparse Cholesky factor with Martens'
// shift, both sampled by whitened DHMC with the library's defaults (5 leapfrog steps, dual averaging
// to 0.9, 4 chains, RB marginals). 10×10 grids: MSE of the node marginals against exact elimination,
// and MSE × seconds (the time-normalised error: MSE of a Monte Carlo average falls as 1/time); 100×100
// grids: ESS per second (median and minimum over the traced nodes). Seconds are the whole run (warm-up
// included), the relaxation's setup excluded. The two factors run back to back on each grid, order
// alternating.

function partD(engine: Engine) {
  const cells: [number, number][] = [[0.5, 0.5], [0.5, 1], [1, 2]];
  const small = QUICK ? { grids: 1, samples: 1000, burnin: 300 } : { grids: 2, samples: 3000, burnin: 500 };
  const big = QUICK ? { cells: cells.slice(0, 1), samples: 150, burnin: 100 } : { cells, samples: 600, burnin: 200 };
  console.log(`\n(d) Mixing, whitened DHMC (defaults), sparse Cholesky (Martens' shift) vs incidence (d_i = Σ_j |w_ij|), Zhang 'standard' grids`);
  console.log('| grid | c₁ | c₂ | # | factor | m | λ_min(W+D) | λ_max(W+D) | step size | seconds | MSE | MSE × s | ESS/s median | ESS/s min |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  const rows: Record<string, unknown>[] = [];
  // Per grid, incidence / sparse Cholesky; ESS/s kept apart for the two grid sizes.
  const ratios = { mseTimesSeconds: [] as number[], essPerSecondMedian: { 10: [] as number[], 100: [] as number[] }, essPerSecondMin: { 10: [] as number[], 100: [] as number[] } };
  let order = 0;
  const run = (side: number, c1: number, c2: number, g: number, samples: number, burnin: number) => {
    const model = zhangGrid(side, c1, c2, SEED + 1000 * side + 100 * g + Math.round(10 * c2));
    const exact = side <= 10 ? Float64Array.from(exactInference(engine, model).marginals, (p) => p[1]) : null;
    const got: Record<string, { mseS: number; essMed: number; essMin: number }> = {};
    const kinds = order++ % 2 ? [...SPARSE_FACTORS].reverse() : [...SPARSE_FACTORS];
    for (const kind of kinds) {
      const rel = buildRelaxation(engine, model, { factor: kind });
      const r = runDHMC(engine, rel, { seed: SEED + g, chains: 4, samples, burnin });
      let mse: number | null = null;
      if (exact) {
        mse = 0;
        r.marginals.forEach((p, i) => (mse! += (p[1] - exact[i]) ** 2 / exact.length));
      }
      const sec = r.seconds;
      const essMed = (r.diagnostics.essMedian as number) / sec, essMin = (r.diagnostics.essMin as number) / sec;
      const row = {
        side, c1, c2, grid: g, factor: kind, m: rel.factor.m, lambdaMinWD: rel.lambdaMinWD, lambdaMaxWD: rel.lambdaMaxWD,
        stepSize: r.diagnostics.stepSize, acceptRate: r.diagnostics.acceptRate, divergences: r.diagnostics.divergences, seconds: sec,
        mse, mseTimesSeconds: mse === null ? null : mse * sec, essPerSecondMedian: essMed, essPerSecondMin: essMin, rhatMax: r.diagnostics.rhatMax,
      };
      rows.push(row);
      got[kind] = { mseS: mse === null ? NaN : mse * sec, essMed, essMin };
      console.log(
        `| ${side}×${side} | ${c1} | ${c2} | ${g} | ${kind} | ${rel.factor.m} | ${rel.lambdaMinWD.toExponential(1)} | ${f(rel.lambdaMaxWD, 1)} | ${f(r.diagnostics.stepSize as number, 3)} | ` +
          `${f(sec, 2)} | ${mse === null ? '—' : mse.toExponential(2)} | ${mse === null ? '—' : (mse * sec).toExponential(2)} | ${f(essMed, 1)} | ${f(essMin, 2)} |`,
      );
    }
    if (exact) ratios.mseTimesSeconds.push(got.incidence.mseS / got['sparse-cholesky'].mseS);
    const key = side as 10 | 100;
    ratios.essPerSecondMedian[key].push(got.incidence.essMed / got['sparse-cholesky'].essMed);
    ratios.essPerSecondMin[key].push(got.incidence.essMin / got['sparse-cholesky'].essMin);
  };
  for (const [c1, c2] of cells) for (let g = 0; g < small.grids; g++) run(10, c1, c2, g, small.samples, small.burnin);
  for (const [c1, c2] of big.cells) run(100, c1, c2, 0, big.samples, big.burnin);
  const geo = (xs: number[]) => (xs.length ? Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length) : null);
  const summary = {
    mseTimesSecondsIncidenceOverCholesky10: geo(ratios.mseTimesSeconds),
    mseTimesSecondsIncidenceBetter10: `${ratios.mseTimesSeconds.filter((r) => r < 1).length} of ${ratios.mseTimesSeconds.length}`,
    essPerSecondMedianIncidenceOverCholesky: { '10': geo(ratios.essPerSecondMedian[10]), '100': geo(ratios.essPerSecondMedian[100]) },
    essPerSecondMinIncidenceOverCholesky: { '10': geo(ratios.essPerSecondMin[10]), '100': geo(ratios.essPerSecondMin[100]) },
    perGrid: ratios,
  };
  const g = (x: number | null) => f(x ?? NaN, 2);
  console.log(
    `incidence / sparse Cholesky, geometric means over grids: 10×10 MSE × s ${g(summary.mseTimesSecondsIncidenceOverCholesky10)} ` +
      `(< 1: incidence better; better on ${summary.mseTimesSecondsIncidenceBetter10} grids); ESS/s (> 1: incidence better) median node ` +
      `${g(summary.essPerSecondMedianIncidenceOverCholesky['10'])} (10×10), ${g(summary.essPerSecondMedianIncidenceOverCholesky['100'])} (100×100), ` +
      `worst node ${g(summary.essPerSecondMinIncidenceOverCholesky['10'])} (10×10), ${g(summary.essPerSecondMinIncidenceOverCholesky['100'])} (100×100)`,
  );
  return { settings: { cells, small, big }, rows, summary, note: null };
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const tAll = now();
  console.log(`relax-speed bench${QUICK ? ' (quick)' : ''}: node ${process.version}, ${cpuModel() ?? 'cpu unknown'}; ${CFG.reps} interleaved repetitions, ~${CFG.seconds} s per measurement`);
  const engine = await loadEngine(WASM_PATH);
  const work = mkdtempSync(join(tmpdir(), 'relaxmrf-relax-'));
  try {
    const a = partA(engine);
    const c = partC(engine, a.factors as Record<SparseFactor, Layout>, work);
    const b = partB(engine);
    const d = partD(engine);
    console.log('\nTargets:');
    for (const kind of SPARSE_FACTORS) {
      const o = a.outs[kind];
      console.log(`  (a) leapfrog ≤ 2× Gibbs sweep (100×100, ${kind}): ${o.pass === null ? 'not measured' : `${mark(o.pass)} (${f(o.leapfrogOverSweep!, 2)}×)`}`);
    }
    console.log(`  (b) FFT leapfrog ≤ 200 ms at 1024²: ${b.pass === null ? 'not measured' : `${mark(b.pass)} (${f(b.leapfrogMs1024!, 1)} ms)`}`);
    if (c.skipped || c.failed) console.log(`  (c) WASM/C ≥ 0.8: not measured (${c.skipped ? 'no gcc' : 'outputs disagree'})`);
    else for (const row of c.rows as Record<string, any>[]) for (const op of ['mul', 'mult']) console.log(`  (c) WASM/C ≥ 0.8, ${row.label} ${op === 'mul' ? 'Mx' : 'Mᵀv'}: ${mark(row[op].pass)} (${f(row[op].wasmOverC, 2)})`);
    const results = {
      quick: QUICK,
      date: new Date().toISOString(),
      machine: { node: process.version, cpu: cpuModel(), platform: `${process.platform} ${process.arch}` },
      wasm: wasmFacts(WASM_PATH),
      settings: { ...CFG, seed: SEED },
      targets: TARGETS,
      leapfrogVsGibbs: a.outs['sparse-cholesky'],
      leapfrogVsGibbsIncidence: a.outs.incidence,
      fft: b,
      native: c,
      mixing: d,
      seconds: now() - tAll,
    };
    const out = resultsPath('relax-speed.json');
    writeFileSync(out, JSON.stringify(results, null, 1) + '\n');
    console.log(`\nwrote ${out} (${f(results.seconds, 1)} s)`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
