// npm run bench:exact-kernel [-- --quick]: the block kernel of bucket elimination (bucketBlock,
// assembly/exact/exact_block.ts) on three synthetic cliques shaped like the UAI files' largest —
// cardinality 16 (ObjectDetection: 6 variables, 16^6 configurations) and binary (a grid's frontier:
// 22 variables, 2^22; and Grids_15's largest upward cliques, 2^21, memory already touched) — in
// WASM and in a native C reference of the same kernel
// (bench/native/bucket_block.c, gcc -O3 at -march=x86-64-v2, 128-bit SIMD like WASM, and at
// -march=native), after checking all give the same message; then the junction tree's upward step
// (elimTableOp, mode 3) on Grids_15's largest shape against bench/native/jt_group.c the same way.
// Medians of REPEATS runs, alternated; each run's figure is the median of INNER calls after an
// untimed one, in one process (the native builds' own loop), after WASM_WARMUP calls of the WASM
// kernel, so every build is timed on optimised code with its tables in cache as far as they fit.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { blockRuns } from '../bindings/exact/bucket-elimination.ts';
import { mulberry32 } from '../bindings/core/seed.ts';
import { QUICK, cpuModel, dist, resultsPath, wasmFacts } from './common.ts';

const HERE = new URL('.', import.meta.url).pathname;
const REPEATS = QUICK ? 3 : 7;
const BLOCK = 4096;

/** A clique: variables 0 … nv − 1 (0 is eliminated, 0 slowest in every table), inputs by scope, the message on 1 … nv − 1. */
interface Clique {
  name: string;
  card: number;
  nv: number;
  inputs: number[][];
}

const cliques: Clique[] = [
  { name: 'cardinality 16, 6 variables (ObjectDetection-like)', card: 16, nv: QUICK ? 5 : 6, inputs: [] },
  { name: 'binary, 22 variables (a grid frontier)', card: 2, nv: QUICK ? 18 : 22, inputs: [] },
  { name: 'binary, 21 variables, 3 inputs (Grids_15\'s largest upward cliques)', card: 2, nv: QUICK ? 17 : 21, inputs: [] },
];
{
  const [a, b, g] = cliques;
  // The premultiplied table over the eliminated variable and the block, a pair with an outer
  // variable, and the child's message, which lacks the newest variable (a run of two per entry).
  g.inputs.push([0, ...Array.from({ length: 12 }, (_, k) => g.nv - 12 + k)], [0, 1], Array.from({ length: g.nv - 1 }, (_, k) => k));
  // Pairwise factors of the eliminated variable with every other, and children's messages.
  for (let u = 1; u < a.nv; u++) a.inputs.push([0, u]);
  a.inputs.push([0, 1, 3, a.nv - 1], [0, 2, a.nv - 2, a.nv - 1], [0, ...Array.from({ length: a.nv - 3 }, (_, k) => k + 3)]);
  for (const u of [1, 7, b.nv - 7, b.nv - 1]) b.inputs.push([0, u]);
  b.inputs.push([0, ...Array.from({ length: b.nv - 1 }, (_, k) => k + 1).filter((u) => u !== 5 && u !== b.nv - 4)]);
  b.inputs.push([0, ...Array.from({ length: 13 }, (_, k) => b.nv - 13 + k)]);
}

interface Problem {
  outer: number[];
  B: number;
  tables: { size: number; kind: number; R: number; strides: number[]; segs: Int32Array; data: Float64Array }[];
  nIn: number;
}

function problem(c: Clique, seed: number): Problem {
  const rand = mulberry32(seed);
  // The block: the message's last variables, up to BLOCK configurations; outer: the rest, then 0.
  let nb = 0, B = 1;
  while (nb < c.nv - 1 && B * c.card <= BLOCK) (B *= c.card, nb++);
  const blockVars = Array.from({ length: nb }, (_, k) => c.nv - nb + k);
  const outer = [...Array.from({ length: c.nv - 1 - nb }, (_, k) => k + 1), 0];
  const scopes = [...c.inputs, Array.from({ length: c.nv - 1 }, (_, k) => k + 1)];
  const tables = scopes.map((scope, t) => {
    const stride = new Map<number, number>();
    let size = 1;
    for (let q = scope.length - 1; q >= 0; q--) (stride.set(scope[q], size), (size *= c.card));
    const st = (u: number) => stride.get(u) ?? 0;
    const { kind, R, segs } = blockRuns(blockVars.map(() => c.card), blockVars.map(st), B);
    const data = new Float64Array(size);
    if (t < c.inputs.length) for (let e = 0; e < size; e++) data[e] = 0.5 + 0.5 * rand();
    return { size, kind, R, strides: outer.map(st), segs, data };
  });
  return { outer, B, tables, nIn: c.inputs.length };
}

function writeProblem(p: Problem, card: number, path: string): void {
  const parts: Buffer[] = [Buffer.from(Int32Array.from([p.outer.length, p.nIn, p.tables.length - p.nIn, p.B]).buffer), Buffer.from(Int32Array.from(p.outer.map(() => card)).buffer)];
  for (const t of p.tables) {
    parts.push(Buffer.from(Int32Array.from([t.size, Math.min(t.kind, 1), t.R, ...t.strides]).buffer), Buffer.from(t.segs.buffer, t.segs.byteOffset, t.segs.byteLength));
    parts.push(Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
  }
  writeFileSync(path, Buffer.concat(parts));
}

const tmp = mkdtempSync(join(tmpdir(), 'relaxmrf-bucket-'));
const builds: { name: string; exe: string; jtExe: string; flags: string }[] = [];
if (spawnSync('gcc', ['--version']).status === 0) {
  for (const [name, march] of [['c-v2', 'x86-64-v2'], ['c-native', 'native']]) {
    const exe = join(tmp, `${name}.out`);
    const flags = ['-O3', `-march=${march}`, '-ffp-contract=off', '-std=c11', '-D_POSIX_C_SOURCE=199309L'];
    const cc = spawnSync('gcc', [...flags, '-o', exe, join(HERE, 'native', 'bucket_block.c')], { encoding: 'utf8' });
    if (cc.status !== 0) throw new Error(`gcc failed:\n${cc.stderr}`);
    const jtExe = join(tmp, `${name}-jt.out`);
    const jc = spawnSync('gcc', [...flags, '-o', jtExe, join(HERE, 'native', 'jt_group.c')], { encoding: 'utf8' });
    if (jc.status !== 0) throw new Error(`gcc failed:\n${jc.stderr}`);
    builds.push({ name, exe, jtExe, flags: flags.join(' ') });
  }
} else console.log('NOTE: gcc not found: the native C reference is skipped');

/**
 * WASM calls before the timed ones. V8 runs a WASM function on its baseline code (Liftoff) until it
 * has run enough, then swaps in optimised code between calls: at the quick sizes (calls of
 * 0.05–0.5 ms) the first 30–40 calls of the junction-tree step ran at 200–2500 M entries/s and
 * the later ones at ≈ 3800, so without these the quick bench timed the baseline code. The native
 * builds are compiled ahead of time.
 */
const WASM_WARMUP = 60;

/** Runs every program REPEATS + 1 times in rotating order, WASM WASM_WARMUP times more first; the first round warms up and is dropped. */
function alternate(runs: Record<string, () => void>, times: Record<string, number[]>): string[] {
  const names = Object.keys(runs);
  for (let w = 0; w < WASM_WARMUP; w++) runs.wasm();
  for (let rep = 0; rep < REPEATS + 1; rep++) {
    for (let k = 0; k < names.length; k++) runs[names[(rep + k) % names.length]]();
    if (rep === 0) for (const k of names) times[k].length = 0;
  }
  return names;
}

/** Kernel calls per timed sample, after one untimed call, in every build: the sample is their median. */
const INNER = 5;
/** One run of a native reference on a problem file: the numbers it prints (seconds first: the median of INNER calls after an untimed one). */
const native = (exe: string, file: string): number[] => spawnSync(exe, [file, String(INNER)], { encoding: 'utf8' }).stdout.trim().split(' ').map(Number);
/** The median of INNER timed calls of `call` (seconds), after one untimed call; `reset` before each. */
function timedCalls(call: () => void, reset: () => void): number {
  const secs: number[] = [];
  for (let k = 0; k <= INNER; k++) {
    reset();
    const t0 = performance.now();
    call();
    if (k > 0) secs.push((performance.now() - t0) / 1000);
  }
  return secs.sort((a, b) => a - b)[INNER >> 1];
}

const engine = await loadEngine();
const results: Record<string, unknown>[] = [];
console.log(`CPU ${cpuModel() ?? 'unknown'}, load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}; ${REPEATS} repetitions, medians`);
for (const [i, c] of cliques.entries()) {
  const p = problem(c, 11 + i);
  const file = join(tmp, 'clique.bin');
  writeProblem(p, c.card, file);
  const configs = c.card ** c.nv;
  // WASM: the tables in one arena, the kernel called as the binding calls it.
  const arena = engine.arena();
  const nT = p.tables.length, nOuter = p.outer.length;
  const addr = p.tables.map((t) => arena.allocF64(t.data));
  const segPtr = p.tables.map((t) => arena.allocI32(t.segs));
  const pCards = arena.allocI32(p.outer.map(() => c.card)), pAddr = arena.alloc(4 * nT), pStrides = arena.allocI32(p.tables.flatMap((t) => t.strides));
  const pRuns = arena.allocI32(p.tables.flatMap((t, k) => [t.kind, t.R, segPtr[k]])), pDigit = arena.alloc(4 * (nOuter + 1)), pOff = arena.alloc(4 * nT), pBuf = arena.alloc(8 * p.B);
  arena.u32(pAddr, nT).set(addr);
  const outs = p.tables.slice(p.nIn).map((t, k) => [addr[p.nIn + k], t.size]);
  const times: Record<string, number[]> = { wasm: [], ...Object.fromEntries(builds.map((b) => [b.name, []])) };
  const sums: Record<string, number> = {};
  const runs: Record<string, () => void> = {
    wasm: () => {
      const call = () => engine.kernels.bucketBlock(nOuter, pCards, p.nIn, nT - p.nIn, pAddr, pStrides, p.B, pRuns, 0, pDigit, pOff, pBuf, 0, 0);
      times.wasm.push(timedCalls(call, () => outs.forEach(([a, len]) => arena.f64(a, len).fill(0))));
      sums.wasm = outs.reduce((s, [a, len]) => arena.f64(a, len).reduce((x, y) => x + y, s), 0);
    },
  };
  for (const b of builds) {
    runs[b.name] = () => {
      const out = native(b.exe, file);
      times[b.name].push(out[0]);
      sums[b.name] = out[1];
    };
  }
  const names = alternate(runs, times);
  arena.dispose();
  for (const k of names) if (!(Math.abs(sums[k] - sums.wasm) <= 1e-12 * Math.abs(sums.wasm))) throw new Error(`${c.name}: ${k} sums the message to ${sums[k]}, WASM to ${sums.wasm}`);
  const d = Object.fromEntries(names.map((k) => [k, dist(times[k])]));
  const rate = (k: string) => configs / d[k].median / 1e6;
  console.log(`${c.name}: ${configs} configurations, ${p.nIn} inputs, block ${p.B}; M configurations/s: ${names.map((k) => `${k} ${rate(k).toFixed(0)}`).join(', ')}; WASM runs at ${names.filter((k) => k !== 'wasm').map((k) => `${(d[k].median / d.wasm.median).toFixed(2)}× ${k}'s speed`).join(', ')}`);
  results.push({ name: c.name, configurations: configs, inputs: p.nIn, block: p.B, seconds: d, mConfigsPerSecond: Object.fromEntries(names.map((k) => [k, rate(k)])) });
}

// The junction tree's upward step on Grids_15's largest shape (a frontier of 20 binary variables:
// 2^21 clique entries into a 2^20-entry message), with the descriptor bindings/exact/elimination.ts
// builds there (found by logging it): elimTableOp in mode 3, the innermost pair summed into each
// output once and the largest tracked; A is the child's message, B the node's factor table.
{
  const sh = QUICK
    ? { len: [2, 512, 32, 2, 2], so: [0, 1, 512, 16384, 32768], sa: [1, 2, 1024, 32768, 0], sb: [1, 2, 0, 1024, 2048], sizeA: 2 ** 16, sizeOut: 2 ** 16 }
    : { len: [2, 512, 512, 2, 2], so: [0, 1, 512, 262144, 524288], sa: [1, 2, 1024, 524288, 0], sb: [1, 2, 0, 1024, 2048], sizeA: 2 ** 20, sizeOut: 2 ** 20 };
  const rand = mulberry32(77);
  const A = Float64Array.from({ length: sh.sizeA }, () => 0.5 + 0.5 * rand());
  const B = Float64Array.from({ length: 4096 }, () => 0.5 + 0.5 * rand());
  const nd = sh.len.length;
  const file = join(tmp, 'jt.bin');
  writeFileSync(file, Buffer.concat([Buffer.from(Int32Array.from([nd, ...sh.len, ...sh.so, ...sh.sa, ...sh.sb, sh.sizeA, B.length, sh.sizeOut]).buffer), Buffer.from(A.buffer), Buffer.from(B.buffer)]));
  const arena = engine.arena();
  const desc = arena.allocI32([nd, ...sh.len, ...sh.so, ...sh.sa, ...sh.sb, ...new Array(nd).fill(0)]);
  const pA = arena.allocF64(A), pB = arena.allocF64(B), pOut = arena.alloc(8 * sh.sizeOut);
  const times: Record<string, number[]> = { wasm: [], ...Object.fromEntries(builds.map((b) => [b.name, []])) };
  const sums: Record<string, number> = {}, maxima: Record<string, number> = {};
  const runs: Record<string, () => void> = {
    wasm: () => {
      times.wasm.push(timedCalls(() => (maxima.wasm = engine.kernels.elimTableOp(desc, pOut, pA, pB, 3)), () => {}));
      sums.wasm = arena.f64(pOut, sh.sizeOut).reduce((x, y) => x + y, 0);
    },
  };
  for (const b of builds) {
    runs[b.name] = () => {
      const o = native(b.jtExe, file);
      times[b.name].push(o[0]);
      sums[b.name] = o[1];
      maxima[b.name] = o[2];
    };
  }
  const names = alternate(runs, times);
  arena.dispose();
  for (const k of names) if (sums[k] !== sums.wasm || maxima[k] !== maxima.wasm) throw new Error(`junction tree step: ${k} gives sum ${sums[k]} and max ${maxima[k]}, WASM ${sums.wasm} and ${maxima.wasm}`);
  const configs = sh.len.reduce((a, b) => a * b, 1);
  const d = Object.fromEntries(names.map((k) => [k, dist(times[k])]));
  const rate = (k: string) => configs / d[k].median / 1e6;
  const name = `junction tree upward step, ${configs} clique entries (Grids_15's largest)`;
  console.log(`${name}: M entries/s: ${names.map((k) => `${k} ${rate(k).toFixed(0)}`).join(', ')}; WASM runs at ${names.filter((k) => k !== 'wasm').map((k) => `${(d[k].median / d.wasm.median).toFixed(2)}× ${k}'s speed`).join(', ')} (the same sum and largest entry, bit for bit)`);
  results.push({ name, configurations: configs, seconds: d, mConfigsPerSecond: Object.fromEntries(names.map((k) => [k, rate(k)])) });
}
rmSync(tmp, { recursive: true });
const out = resultsPath('exact-kernel.json');
writeFileSync(out, JSON.stringify({ quick: QUICK, date: new Date().toISOString(), cpu: cpuModel(), loadavg: loadavg(), wasm: wasmFacts(), native: builds.map((b) => b.flags), repeats: REPEATS, results }, null, 2) + '\n');
console.log(`wrote ${out}`);
