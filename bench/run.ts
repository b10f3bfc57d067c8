// relaxmrf benchmark: `npm run bench` (full) or `npm run bench -- --quick` / BENCH_QUICK=1 (smoke).
//
// 1. Sequential Gibbs, spin (site) updates per second, on fixed seeded models, in three
//    implementations of the same algorithm: the WASM kernel through GibbsSampler, a native C
//    reference (bench/native/gibbs.c, gcc -O3 -march=native) and plain JS (bench/js/gibbs.ts).
//    Before timing, the bench proves they are the same algorithm: from one seed, after N sweeps,
//    initial and final configurations are bit-identical and the accumulators agree to ~1e-12.
// 2. Medians over interleaved repetitions, ratios WASM/C, WASM/JS, WASM/libDAI (libDAI numbers are
//    constants measured earlier on this machine kind, not run here).
// 3. Exact elimination of the UAI 2014 Grids_15 model (20×20), when bindings/exact.ts exists.
// Writes bench/results/latest.json (quick mode: latest-quick.json, so a smoke test does not
// overwrite the full results). Exits non-zero when the implementations disagree.
// Environment: BENCH_QUICK=1, BENCH_WASM=path (another build of the module), BENCH_UAI=path.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import type { Engine } from '../bindings/core/engine.ts';
import { isingLattice, latticeBonds } from '../bindings/core/builders.ts';
import { Model, ModelBuilder } from '../bindings/core/model.ts';
import { toCanonical, type CanonicalForm } from '../bindings/core/canonical.ts';
import { GibbsSampler } from '../bindings/samplers/gibbs.ts';
import { GibbsJS, PhiloxJS } from './js/gibbs.ts';
import { dataDir, mulberry32 } from '../test/helpers.ts';
import { cpuModel, dist, QUICK, writeFormFile, type Dist } from './common.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..');

const SEED = 20240611; // the chain seed for verification and timing
const CHAIN = 0;
/** Stream tag of the Gibbs sampler (GIBBS_STREAM in bindings/gibbs.ts); the init check confirms it. */
const GIBBS_TAG = 1;
const REPS = QUICK ? 3 : 7;
/** Wall time aimed at per WASM measurement (seconds); C and JS run the same number of sweeps. */
const TARGET_SECONDS = QUICK ? 0.03 : 0.4;
const EXACT_RUNS = QUICK ? 1 : 3;
/** BENCH_WASM=path benchmarks another build of the module (default: build/release.wasm). */
const WASM_PATH = process.env.BENCH_WASM || undefined;
const UAI_FILE = process.env.BENCH_UAI || join(dataDir(), 'uai2014', 'Grids_15.uai');

/** libDAI 0.3.0 Gibbs, measured earlier on this machine kind (NOT run by this bench). */
const LIBDAI = {
  note: 'libDAI 0.3.0 Gibbs, previously measured on this machine kind; not run here',
  smallGridRange: [1.6e6, 2.3e6] as const, // 10×10 … 20×20 grids
  largeGrid: 1.0e6, // 100×100
};

const TARGETS = { wasmOverC: 0.8, wasmOverLibdai: 50, exactSeconds: 10, exactMemoryBytes: 1 << 30 };

// ---------------------------------------------------------------------------------------------
// Models

function randomIsingGrid(L: number, M: number, seed: number, scale = 1): Model {
  const rnd = mulberry32(seed);
  const n = L * M;
  const h = Float64Array.from({ length: n }, () => scale * (rnd() - 0.5)); // U[−0.5, 0.5]
  const J = new Map<string, number>();
  for (const [i, j] of latticeBonds([L, M], false)) J.set(`${i},${j}`, scale * (2 * rnd() - 1)); // U[−1, 1]
  return isingLattice({ shape: [L, M], periodic: false, J: (i, j) => J.get(`${i},${j}`)!, h, beta: 1 });
}

/** 3-state Potts grid with random couplings J_ij ~ U[−1,1] on [x_i = x_j] and fields U[−0.5,0.5]. */
function randomPottsGrid(L: number, q: number, seed: number): Model {
  const rnd = mulberry32(seed);
  const n = L * L;
  const b = new ModelBuilder(new Array(n).fill(q));
  for (let v = 0; v < n; v++) b.addUnary(v, Array.from({ length: q }, () => rnd() - 0.5));
  for (const [i, j] of latticeBonds([L, L], false)) {
    const w = 2 * rnd() - 1;
    const t = new Float64Array(q * q);
    for (let k = 0; k < q; k++) t[k * q + k] = w;
    b.addPairwise(i, j, t);
  }
  return b.build();
}

interface BenchModel {
  name: string;
  model: Model;
  form: CanonicalForm;
  /** libDAI's updates/s on this kind of model, or null when there is no measurement. */
  libdai: { lo: number; hi: number } | null;
  verifySweeps: number;
  /** false: verified only (edge cases for the kernels), not timed. */
  timed: boolean;
}

function benchModels(): BenchModel[] {
  const mk = (name: string, model: Model, libdai: BenchModel['libdai'], verifySweeps: number, timed = true): BenchModel => ({
    name,
    model,
    form: toCanonical(model),
    libdai,
    verifySweeps: QUICK ? Math.max(20, verifySweeps / 10) : verifySweeps,
    timed,
  });
  const small = { lo: LIBDAI.smallGridRange[0], hi: LIBDAI.smallGridRange[1] };
  return [
    mk('ising 10x10', randomIsingGrid(10, 10, 101), small, 20000),
    mk('ising 20x20', randomIsingGrid(20, 20, 202), small, 5000),
    mk('ising 100x100', randomIsingGrid(100, 100, 303), { lo: LIBDAI.largeGrid, hi: LIBDAI.largeGrid }, 500),
    mk('potts3 30x30', randomPottsGrid(30, 3, 404), null, 2000),
    // Verified, not timed: an odd number of bits (the stream's 4-word blocks straddle sweeps), a
    // dense model (every earlier bit a neighbour), a strongly coupled one (fields past exp's main
    // range), a mix of free bits and one-hot blocks, and hard constraints (a random start outside
    // the support: the one-hot update's uniform moves).
    mk('ising 7x9', randomIsingGrid(7, 9, 505), null, 3000, false),
    mk('dense bm 13', denseBoltzmann(13, 606, 1), null, 3000, false),
    mk('ising 6x6 strong', randomIsingGrid(6, 6, 707, 400), null, 2000, false),
    mk('mixed 2/3-state', mixedGrid(8, 808), null, 2000, false),
    mk('3-coloring 6x6', coloringGrid(6, 909), null, 2000, false),
  ];
}

/** Dense Boltzmann machine on s ∈ {0,1}: a_i ~ U[−1,1]·scale, W_ij ~ U[−1,1]·scale for all i < j. */
function denseBoltzmann(n: number, seed: number, scale: number): Model {
  const rnd = mulberry32(seed);
  const b = new ModelBuilder(new Array(n).fill(2));
  for (let i = 0; i < n; i++) b.addUnary(i, [0, scale * (2 * rnd() - 1)]);
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) b.addPairwise(i, j, [0, 0, 0, scale * (2 * rnd() - 1)]);
  return b.build();
}

/** 3-state Potts grid with hard constraints: neighbours must differ (log 0 = −∞ on the diagonal). */
function coloringGrid(L: number, seed: number): Model {
  const rnd = mulberry32(seed);
  const b = new ModelBuilder(new Array(L * L).fill(3));
  for (let v = 0; v < L * L; v++) b.addUnary(v, [rnd() - 0.5, rnd() - 0.5, rnd() - 0.5]);
  const t = [-Infinity, 0, 0, 0, -Infinity, 0, 0, 0, -Infinity];
  for (const [i, j] of latticeBonds([L, L], false)) b.addPairwise(i, j, t);
  return b.build();
}

/** Open grid where even sites are binary and odd sites 3-state, random tables. */
function mixedGrid(L: number, seed: number): Model {
  const rnd = mulberry32(seed);
  const card = Array.from({ length: L * L }, (_, v) => (v % 2 ? 3 : 2));
  const b = new ModelBuilder(card);
  for (let v = 0; v < L * L; v++) b.addUnary(v, Array.from({ length: card[v] }, () => rnd() - 0.5));
  for (const [i, j] of latticeBonds([L, L], false)) b.addPairwise(i, j, Array.from({ length: card[i] * card[j] }, () => 2 * rnd() - 1));
  return b.build();
}

// ---------------------------------------------------------------------------------------------
// The three implementations behind one interface

interface RunResult {
  changed: number;
  init: Uint8Array;
  bits: Uint8Array;
  acc: Float64Array;
  /** The generator's state afterwards: ctr0, ctr1, pos, out0 … out3. */
  rng: Uint32Array;
}

/** The WASM kernel through GibbsSampler; `chunks` splits the sweeps over several step() calls. */
function wasmVerify(engine: Engine, m: BenchModel, sweeps: number, chunks: number[] = [sweeps]): RunResult {
  const sampler = new GibbsSampler(engine, m.model);
  try {
    const st = sampler.uniformInit(SEED, CHAIN); // the kernel's start, as C's and JS's (init would replace a start of probability zero)
    const k = engine.kernels;
    const bitsAt = () => new Uint8Array(k.memory.buffer, st.ptr + k.rngStateBytes(), m.form.nBits).slice();
    const init = bitsAt();
    const acc = sampler.accumulator();
    let changed = 0;
    for (const c of chunks) changed += Math.round(sampler.step(st, c, acc).changeRate * c * m.form.n);
    // Philox layout (assembly/rng.ts): key0 key1 ctr0 ctr1 ctr2 ctr3 out0..out3 pos.
    const w = new Uint32Array(k.memory.buffer, st.ptr, 11);
    const rng = Uint32Array.of(w[2], w[3], w[10], w[6], w[7], w[8], w[9]);
    return { changed, init, bits: bitsAt(), acc: sampler.readAndClear(acc), rng };
  } finally {
    sampler.dispose();
  }
}

function jsVerify(m: BenchModel, sweeps: number): RunResult {
  const g = new GibbsJS(m.form);
  const r = new PhiloxJS(SEED >>> 0, Math.floor(SEED / 2 ** 32), CHAIN, GIBBS_TAG);
  g.init(r);
  const init = g.s.slice();
  const acc = new Float64Array(m.form.nBits);
  const changed = g.sweeps(r, sweeps, acc);
  const rng = Uint32Array.of(r.ctr0, r.ctr1, r.pos, ...r.out);
  return { changed, init, bits: g.s.slice(), acc, rng };
}

let nativeExe: string | null = null;
let nativeNote = '';
const work = mkdtempSync(join(tmpdir(), 'relaxmrf-bench-'));
const modelFiles = new Map<CanonicalForm, string>();

function buildNative(): void {
  const src = join(HERE, 'native', 'gibbs.c');
  const exe = join(HERE, 'native', 'gibbs.out');
  const probe = spawnSync('gcc', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    nativeNote = 'gcc not found: the native C reference is skipped';
    return;
  }
  // -ffp-contract=off: WASM (without relaxed SIMD) has no fused multiply-add, so the reference
  // must not fuse acc += w·inv either; nothing else in the sweep has an a·b+c shape.
  const flags = ['-O3', '-march=native', '-ffp-contract=off', '-std=c11', '-D_POSIX_C_SOURCE=199309L', '-o', exe, src, '-lm'];
  const cc = spawnSync('gcc', flags, { encoding: 'utf8' });
  if (cc.status !== 0) throw new Error(`gcc failed to build the C reference:\n${cc.stderr}`);
  nativeExe = exe;
  nativeNote = `gcc ${flags.filter((f) => f.startsWith('-') && f !== '-o' && f !== '-lm').join(' ')} (${probe.stdout.split('\n')[0]})`;
}

function modelFile(form: CanonicalForm): string {
  let f = modelFiles.get(form);
  if (f) return f;
  f = join(work, `model${modelFiles.size}.bin`);
  writeFormFile(form, f);
  modelFiles.set(form, f);
  return f;
}

function nativeArgs(form: CanonicalForm): string[] {
  return [modelFile(form), String(SEED >>> 0), String(Math.floor(SEED / 2 ** 32)), String(CHAIN), String(GIBBS_TAG)];
}

function nativeVerify(m: BenchModel, sweeps: number): RunResult {
  const out = join(work, 'verify.out');
  const r = spawnSync(nativeExe!, ['verify', ...nativeArgs(m.form), String(sweeps), out], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`C reference failed: ${r.stderr || r.error}`);
  const buf = readFileSync(out);
  const nb = m.form.nBits;
  return {
    changed: buf.readDoubleLE(0),
    init: new Uint8Array(buf.subarray(8, 8 + nb)),
    bits: new Uint8Array(buf.subarray(8 + nb, 8 + 2 * nb)),
    acc: new Float64Array(buf.buffer.slice(buf.byteOffset + 8 + 2 * nb, buf.byteOffset + 8 + 10 * nb)),
    rng: new Uint32Array(buf.buffer.slice(buf.byteOffset + 8 + 10 * nb, buf.byteOffset + 8 + 10 * nb + 28)),
  };
}

// ---------------------------------------------------------------------------------------------
// Verification

interface Agreement {
  against: string;
  initIdentical: boolean;
  bitsIdentical: boolean;
  changedEqual: boolean;
  rngIdentical: boolean;
  accMaxRelDiff: number;
  accBitwiseDiffering: number;
  ok: boolean;
}

const ACC_TOL = 1e-12;

function compare(ref: RunResult, other: RunResult, against: string): Agreement {
  const same = (x: Uint8Array, y: Uint8Array) => x.length === y.length && x.every((v, i) => v === y[i]);
  let maxRel = 0, differing = 0;
  for (let i = 0; i < ref.acc.length; i++) {
    if (ref.acc[i] !== other.acc[i]) differing++;
    const d = Math.abs(ref.acc[i] - other.acc[i]) / Math.max(1, Math.abs(ref.acc[i]));
    if (!(d <= maxRel)) maxRel = Number.isNaN(d) ? Infinity : Math.max(maxRel, d);
  }
  const a: Agreement = {
    against,
    initIdentical: same(ref.init, other.init),
    bitsIdentical: same(ref.bits, other.bits),
    changedEqual: ref.changed === other.changed,
    rngIdentical: ref.rng.length === other.rng.length && ref.rng.every((v, i) => v === other.rng[i]),
    accMaxRelDiff: maxRel,
    accBitwiseDiffering: differing,
    ok: false,
  };
  a.ok = a.initIdentical && a.bitsIdentical && a.changedEqual && a.rngIdentical && maxRel <= ACC_TOL;
  return a;
}

/** First sweep after which two implementations' configurations differ (diagnostic on failure). */
function firstDivergence(engine: Engine, m: BenchModel, other: 'js' | 'c', upTo: number): number {
  let lo = 0, hi = upTo; // agree after lo sweeps, differ after hi
  const run = (k: number) => (other === 'js' ? jsVerify(m, k) : nativeVerify(m, k));
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (compare(wasmVerify(engine, m, mid), run(mid), other).bitsIdentical) lo = mid;
    else hi = mid;
  }
  return hi;
}

/**
 * exp agreement: a model of isolated free bits with biases x_i has p_i = 1/(1+exp(−x_i)) after one
 * sweep with accumulation, computed by each implementation's own exp on its own code path. The
 * accept test flips only when the uniform lands between two implementations' p, so the expected
 * number of flipped decisions per update is the mean |Δp| (uniform32 has a 2^−32 grid, far coarser
 * than an ulp of p, so it is usually exactly 0).
 */
function expAgreement(engine: Engine) {
  const count = QUICK ? 1 << 14 : 1 << 18;
  const rnd = mulberry32(777);
  // Edge cases first: zero, tiny, the ends of exp's main range and past them (p rounds to 0 or 1).
  const special = [0, 1e-300, -1e-300, 5e-324, 2 ** -54, -(2 ** -54), 2 ** -53, 511.99, -511.99, 512, -512, 700, -700, 745.2, -745.2, 800, -800, 1e300, -1e300];
  // Local fields of the bench models are sums of a few U[−1,1] terms: sample [−8, 8] densely.
  const fields = Float64Array.from({ length: count }, (_, i) => (i < special.length ? special[i] : 16 * rnd() - 8));
  const probe = (extraOneHot: boolean): BenchModel => {
    const b = new ModelBuilder([...new Array(count).fill(2), ...(extraOneHot ? [3] : [])]);
    fields.forEach((x, i) => b.addUnary(i, [0, x]));
    const model = b.build();
    return { name: 'exp probe', model, form: toCanonical(model), libdai: null, verifySweeps: 1, timed: false };
  };
  const m = probe(false);
  const w = wasmVerify(engine, m, 1).acc;
  // The same fields through the kernel's general path (one 3-state variable more makes the model
  // not all-free), whose free bits use the scalar Math.exp: must match the fast path's expPair.
  const g = wasmVerify(engine, probe(true), 1).acc.subarray(0, count);
  const j = jsVerify(m, 1).acc;
  const c = nativeExe ? nativeVerify(m, 1).acc : null;
  const stat = (x: Float64Array, y: Float64Array) => {
    let differ = 0, sumAbs = 0, maxUlp = 0;
    const ulp = (v: number) => 2 ** (Math.floor(Math.log2(Math.abs(v))) - 52);
    for (let i = 0; i < count; i++) {
      if (Object.is(x[i], y[i])) continue;
      differ++;
      const d = Math.abs(x[i] - y[i]);
      sumAbs += d;
      maxUlp = Math.max(maxUlp, d / ulp(x[i]));
    }
    return { differing: differ, differingFraction: differ / count, maxUlp, expectedFlipsPerUpdate: sumAbs / count };
  };
  return { samples: count, range: [-8, 8], special, wasmFastVsGeneral: stat(w, g), wasmVsJs: stat(w, j), wasmVsC: c ? stat(w, c) : null };
}

// ---------------------------------------------------------------------------------------------
// Timing

interface Timer {
  /** Runs `sweeps` sweeps (with accumulation) and returns the seconds they took. */
  run(sweeps: number): number;
}

function wasmTimer(engine: Engine, m: BenchModel): Timer & { dispose(): void } {
  const sampler = new GibbsSampler(engine, m.model);
  const st = sampler.uniformInit(SEED, CHAIN);
  const acc = sampler.accumulator();
  return {
    run(sweeps) {
      const t0 = performance.now();
      sampler.step(st, sweeps, acc); // one call: many sweeps
      return (performance.now() - t0) / 1000;
    },
    dispose: () => sampler.dispose(),
  };
}

function jsTimer(m: BenchModel): Timer {
  const g = new GibbsJS(m.form);
  const r = new PhiloxJS(SEED >>> 0, Math.floor(SEED / 2 ** 32), CHAIN, GIBBS_TAG);
  g.init(r);
  const acc = new Float64Array(m.form.nBits);
  return {
    run(sweeps) {
      const t0 = performance.now();
      g.sweeps(r, sweeps, acc);
      return (performance.now() - t0) / 1000;
    },
  };
}

function nativeTimer(m: BenchModel): Timer {
  return {
    run(sweeps) {
      // A fresh process per repetition; its own clock times only the sweeps, after a warm-up.
      const warm = String(Math.max(1, Math.floor(sweeps / 10)));
      const r = spawnSync(nativeExe!, ['time', ...nativeArgs(m.form), String(sweeps), warm], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`C reference failed: ${r.stderr || r.error}`);
      return Number(r.stdout.trim().split(/\s+/)[0]);
    },
  };
}



/** Sweeps per measurement so the WASM call takes about TARGET_SECONDS. */
function calibrate(t: Timer, n: number): number {
  let sweeps = Math.max(1, Math.floor(2e5 / n));
  for (;;) {
    const sec = t.run(sweeps);
    if (sec >= TARGET_SECONDS / 4 || sweeps > 1e8) return Math.max(1, Math.round((sweeps * TARGET_SECONDS) / Math.max(sec, 1e-6)));
    sweeps *= 4;
  }
}

// ---------------------------------------------------------------------------------------------
// Exact elimination

type ExactSkipped = { skipped: true; note: string };
type ExactDone = {
  skipped: false;
  file: string;
  runs: number;
  seconds: Dist;
  memoryBytes: number;
  logZ: number | null;
  log10Z: number | null;
  referenceLog10Z: number | null;
  treewidth: unknown;
  maxTableEntries: unknown;
};

async function exactBench(): Promise<ExactSkipped | ExactDone> {
  let exactInference: (engine: Engine, model: Model, opts?: unknown) => unknown;
  let readUAI: (text: string, file?: string) => Model;
  try {
    ({ exactInference } = (await import('../bindings/exact/exact.ts')) as { exactInference: typeof exactInference });
    ({ readUAI } = (await import('../bindings/io/formats.ts')) as { readUAI: typeof readUAI });
    if (typeof exactInference !== 'function' || typeof readUAI !== 'function') throw new Error('exactInference or readUAI is not exported');
  } catch (e) {
    return { skipped: true as const, note: `exact elimination skipped: bindings/exact.ts or readUAI not available (${firstLine(e)})` };
  }
  if (!existsSync(UAI_FILE)) return { skipped: true as const, note: `exact elimination skipped: ${UAI_FILE} not found` };
  try {
    const text = readFileSync(UAI_FILE, 'utf8');
    const seconds: number[] = [], memory: number[] = [];
    let last: Record<string, unknown> = {};
    for (let k = 0; k < EXACT_RUNS; k++) {
      const engine = await loadEngine(WASM_PATH);
      const model = readUAI(text, UAI_FILE);
      const t0 = performance.now();
      const res = (await exactInference(engine, model)) as Record<string, unknown>;
      seconds.push((performance.now() - t0) / 1000);
      memory.push(engine.memoryBytes);
      last = res;
    }
    const pr = UAI_FILE + '.PR';
    let referenceLog10Z: number | null = null;
    if (existsSync(pr)) {
      // UAI .PR files hold log10 Z (Grids_15's to 3 decimals).
      const v = Number(readFileSync(pr, 'utf8').trim().split(/\s+/).pop());
      if (Number.isFinite(v)) referenceLog10Z = v;
    }
    return {
      skipped: false as const,
      file: UAI_FILE,
      runs: EXACT_RUNS,
      seconds: dist(seconds),
      memoryBytes: Math.max(...memory),
      logZ: typeof last.logZ === 'number' ? last.logZ : null,
      log10Z: typeof last.logZ === 'number' ? last.logZ / Math.LN10 : null,
      referenceLog10Z,
      treewidth: last.treewidth ?? null,
      maxTableEntries: last.maxTableEntries ?? null,
    };
  } catch (e) {
    return { skipped: true as const, note: `exact elimination FAILED, not timed (${firstLine(e)})` };
  }
}

function firstLine(e: unknown): string {
  return String(e instanceof Error ? e.message : e).split('\n')[0];
}

// ---------------------------------------------------------------------------------------------


const fmtM = (x: number | null | undefined) => (x == null ? '—' : (x / 1e6).toFixed(1));
const fmtR = (x: number | null | undefined) => (x == null ? '—' : x.toFixed(2) + '×');
const mark = (ok: boolean | null) => (ok == null ? '' : ok ? 'PASS' : 'MISS');

async function main() {
  console.log(`relaxmrf bench${QUICK ? ' (quick)' : ''}: node ${process.version}, ${cpuModel() ?? 'cpu unknown'}`);
  buildNative();
  console.log(nativeExe ? `C reference: ${nativeNote}` : `NOTE: ${nativeNote}`);
  const engine = await loadEngine(WASM_PATH);
  const models = benchModels();

  // --- 1. Same algorithm: verify bit-identity before timing anything.
  console.log('\nVerifying that WASM, C and JS run the same algorithm (same seed and N sweeps: initial and final\n' +
    'configurations, change counts and generator states identical; accumulators within 1e-12):');
  const verification: Record<string, unknown>[] = [];
  let failed = false;
  const describe = (c: Agreement) =>
    c.ok
      ? 'ok'
      : `FAILED (init ${c.initIdentical ? 'same' : 'DIFFERS'}, config ${c.bitsIdentical ? 'same' : 'DIFFERS'}, ` +
        `changes ${c.changedEqual ? 'same' : 'DIFFER'}, generator ${c.rngIdentical ? 'same' : 'DIFFERS'}, acc rel diff ${c.accMaxRelDiff.toExponential(1)})`;
  for (const m of models) {
    const N = m.verifySweeps;
    const w = wasmVerify(engine, m, N);
    const checks = [compare(w, jsVerify(m, N), 'js')];
    if (nativeExe) checks.push(compare(w, nativeVerify(m, N), 'c'));
    // The same sweeps over several calls of uneven length: the chain state must carry over exactly.
    const chunks: number[] = [];
    for (let left = N, len = 1; left > 0; len = (len * 3 + 1) % 97 || 1) chunks.push(Math.min(len, left)), (left -= Math.min(len, left));
    checks.push(compare(w, wasmVerify(engine, m, N, chunks), 'wasm split'));
    const line = checks.map((c) => `${c.against === 'wasm split' ? `${chunks.length} calls` : c.against.toUpperCase()}: ${describe(c)}`).join(', ');
    const accNote = checks
      .filter((c) => c.against !== 'wasm split')
      .map((c) => `${c.against.toUpperCase()} ${c.accMaxRelDiff.toExponential(0)}, ${c.accBitwiseDiffering}/${m.form.nBits} not bit-equal`)
      .join('; ');
    console.log(`  ${m.name.padEnd(17)} ${String(N).padStart(5)} sweeps  vs ${line}  [acc: ${accNote}]`);
    for (const c of checks) {
      if (!c.ok) {
        failed = true;
        if (c.against !== 'wasm split' && c.initIdentical && !c.bitsIdentical) {
          const at = firstDivergence(engine, m, c.against as 'js' | 'c', N);
          console.log(`    configurations first differ after sweep ${at}`);
        }
      }
      verification.push({ model: m.name, sweeps: N, ...c });
    }
  }
  const expCheck = expAgreement(engine);
  const fastGen = expCheck.wasmFastVsGeneral;
  console.log(
    `  exp probe (${expCheck.samples} fields, [-8, 8] and edge cases): WASM fast path (two-lane exp) vs general path (Math.exp): ` +
      (fastGen.differing === 0 ? 'identical  ok' : `${fastGen.differing} differ  FAILED`),
  );
  if (fastGen.differing !== 0) failed = true;
  const ed = (s: { differingFraction: number; maxUlp: number; expectedFlipsPerUpdate: number }) =>
    `p differs in ${(100 * s.differingFraction).toFixed(3)}% of arguments (max ${s.maxUlp.toFixed(1)} ulp), expected accept flips ${s.expectedFlipsPerUpdate.toExponential(1)} per update`;
  console.log(`  exp probe: WASM vs JS Math.exp: ${ed(expCheck.wasmVsJs)}`);
  if (expCheck.wasmVsC) console.log(`  exp probe: WASM vs C libm exp: ${ed(expCheck.wasmVsC)}`);
  if (failed) {
    console.error('\nFAILED: the implementations do not agree; timings would compare different algorithms.');
    process.exitCode = 1;
    rmSync(work, { recursive: true, force: true });
    return;
  }

  // --- 2. Timing, interleaved.
  console.log(`\nTiming: ${REPS} interleaved repetitions per implementation, ~${TARGET_SECONDS}s per WASM measurement`);
  const rows: Record<string, unknown>[] = [];
  const printed: string[][] = [];
  let allWasmOverC = true, allLibdai = true;
  for (const m of models.filter((x) => x.timed)) {
    const n = m.form.n;
    const wt = wasmTimer(engine, m);
    const timers: Record<'wasm' | 'c' | 'js', Timer | null> = { wasm: wt, c: nativeExe ? nativeTimer(m) : null, js: jsTimer(m) };
    const sweeps = calibrate(wt, n);
    timers.js!.run(Math.max(1, Math.floor(sweeps / 4))); // JIT warm-up
    const rates: Record<string, number[]> = { wasm: [], c: [], js: [] };
    const order = (['wasm', 'c', 'js'] as const).filter((k) => timers[k]);
    for (let rep = 0; rep < REPS; rep++) {
      for (let q = 0; q < order.length; q++) {
        const k = order[(rep + q) % order.length]; // rotate who goes first
        rates[k].push((sweeps * n) / timers[k]!.run(sweeps));
      }
    }
    wt.dispose();
    const W = dist(rates.wasm), C = rates.c.length ? dist(rates.c) : null, J = dist(rates.js);
    const paired = (xs: number[]) => dist(rates.wasm.map((w, i) => w / xs[i])).median;
    const wasmOverC = C ? W.median / C.median : null;
    const wasmOverJs = W.median / J.median;
    const wasmOverLibdai = m.libdai ? W.median / m.libdai.hi : null; // against the fast end of libDAI's range
    const cOk = wasmOverC == null ? null : wasmOverC >= TARGETS.wasmOverC;
    const lOk = wasmOverLibdai == null ? null : wasmOverLibdai >= TARGETS.wasmOverLibdai;
    if (cOk === false) allWasmOverC = false;
    if (lOk === false) allLibdai = false;
    rows.push({
      model: m.name,
      n,
      nBits: m.form.nBits,
      nnz: m.form.col.length,
      sweepsPerMeasurement: sweeps,
      updatesPerSecond: { wasm: W, c: C, js: J },
      ratios: {
        wasmOverC,
        wasmOverJs,
        wasmOverCPairedMedian: C ? paired(rates.c) : null,
        wasmOverJsPairedMedian: paired(rates.js),
        wasmOverLibdai,
        wasmOverLibdaiSlowEnd: m.libdai ? W.median / m.libdai.lo : null,
      },
      libdaiUpdatesPerSecond: m.libdai,
      targets: { wasmOverC: mark(cOk), wasmOverLibdai: mark(lOk) },
    });
    printed.push([
      m.name,
      String(n),
      `${fmtM(W.median)} [${fmtM(W.min)}–${fmtM(W.max)}]`,
      C ? `${fmtM(C.median)} [${fmtM(C.min)}–${fmtM(C.max)}]` : 'skipped',
      `${fmtM(J.median)} [${fmtM(J.min)}–${fmtM(J.max)}]`,
      `${fmtR(wasmOverC)} ${mark(cOk)}`,
      fmtR(wasmOverJs),
      m.libdai ? (m.libdai.lo === m.libdai.hi ? fmtM(m.libdai.hi) : `${fmtM(m.libdai.lo)}–${fmtM(m.libdai.hi)}`) : '—',
      wasmOverLibdai == null
        ? '—'
        : `${m.libdai!.lo === m.libdai!.hi ? '' : `${wasmOverLibdai.toFixed(0)}–`}${(W.median / m.libdai!.lo).toFixed(0)}× ${mark(lOk)}`,
    ]);
  }
  const head = ['model', 'n', 'WASM M/s', 'C M/s', 'JS M/s', 'WASM/C (≥0.8)', 'WASM/JS', 'libDAI* M/s', 'WASM/libDAI (≥50)'];
  const widths = head.map((h, i) => Math.max(h.length, ...printed.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i])).join('  ');
  console.log('\nSpin updates per second, median [min–max] over repetitions:');
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of printed) console.log(line(r));
  console.log(`* ${LIBDAI.note}. WASM/libDAI over libDAI's range; PASS/MISS judged against its fast end.`);

  // --- 3. Exact elimination.
  console.log(`\nExact elimination of ${UAI_FILE.split('/').pop()} (median of ${EXACT_RUNS}, fresh engine each):`);
  const exact = await exactBench();
  let exactTargets: Record<string, string> | null = null;
  if (exact.skipped) console.log(`  NOTE: ${exact.note}`);
  else {
    const e = exact;
    const tOk = e.seconds.median <= TARGETS.exactSeconds, mOk = e.memoryBytes <= TARGETS.exactMemoryBytes;
    exactTargets = { seconds: mark(tOk), memory: mark(mOk) };
    console.log(
      `  ${e.seconds.median.toFixed(2)} s [${e.seconds.min.toFixed(2)}–${e.seconds.max.toFixed(2)}] (≤ 10 s: ${mark(tOk)}), ` +
        `WASM memory ${(e.memoryBytes / 2 ** 20).toFixed(0)} MiB (≤ 1 GiB: ${mark(mOk)}), treewidth ${e.treewidth}, ` +
        `log10 Z ${e.log10Z?.toFixed(5)}${e.referenceLog10Z != null ? ` (Grids_15.uai.PR: ${e.referenceLog10Z})` : ''}`,
    );
  }

  // --- Summary and JSON.
  console.log('\nTargets:');
  console.log(`  WASM Gibbs ≥ 0.8× native C: ${nativeExe ? mark(allWasmOverC) : 'not measured (no gcc)'}`);
  console.log(`  WASM Gibbs ≥ 50× libDAI:    ${mark(allLibdai)}`);
  console.log(`  exact Grids_15 ≤ 10 s, ≤ 1 GB: ${exactTargets ? `${exactTargets.seconds}, ${exactTargets.memory}` : 'not measured (skipped)'}`);

  const results = {
    date: new Date().toISOString(),
    quick: QUICK,
    wasm: WASM_PATH ?? 'build/release.wasm',
    machine: { node: process.version, cpu: cpuModel(), platform: `${process.platform} ${process.arch}` },
    native: nativeExe ? nativeNote : `skipped: ${nativeNote}`,
    settings: { seed: SEED, chain: CHAIN, repetitions: REPS, targetSecondsPerWasmMeasurement: TARGET_SECONDS, accumulate: true },
    libdai: LIBDAI,
    targets: TARGETS,
    verification,
    expAgreement: expCheck,
    gibbs: rows,
    exact,
    exactTargets,
  };
  const outDir = join(ROOT, 'bench', 'results');
  mkdirSync(outDir, { recursive: true });
  const outName = QUICK ? 'latest-quick.json' : 'latest.json';
  writeFileSync(join(outDir, outName), JSON.stringify(results, null, 2) + '\n');
  console.log(`\nwrote ${join('bench', 'results', outName)}`);
  rmSync(work, { recursive: true, force: true });
}

await main();
