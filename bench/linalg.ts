// Speed of the relaxation's linear algebra in the engine (assembly/linalg/): `npm run bench:linalg`
// (a few minutes, most of it the 1000×1000 grid) or BENCH_QUICK=1 / --quick (under a minute: a
// 300×300 grid instead). Writes bench/results/linalg.json.
//
// (a) Relaxation setup of a 100×100 Ising grid with the defaults (Lanczos spectrum, Martens' shift,
//     minimum-degree ordering, sparse Cholesky): buildRelaxation's wall time by phase, and the same
//     steps in the TypeScript the engine replaced (test/linalg-reference.ts) for context. Target:
//     setup ≤ 50 ms. Also the process's CPU time per setup (less sensitive to other jobs on the
//     machine than wall time).
// (b) The 1000×1000 grid (10⁶ bits): buildRelaxation with the sparse Cholesky factor must build;
//     time by phase and nnz(L). One run (it takes minutes).
// (c) WASM kernel vs native C of the same loops (bench/native/linalg.c): dense Cholesky of a random
//     SPD matrix and the numeric sparse Cholesky of a grid's W + D (the symbolic factorisation shared),
//     outputs compared first (normwise relative difference ≤ 1e-12, else exit 1). C is built with
//     gcc -O3 -march=x86-64-v2 -ffp-contract=off (128-bit SSE like WASM SIMD: the reference) and
//     -O3 -march=native -ffp-contract=off beside it. Target: t_C / t_WASM ≥ 0.8.
// BENCH_PARTS=ac (any of a, b, c) runs only those parts; the results file is then written to the
// temporary directory.
// Timings: repetitions interleaved (order rotated), medians with min–max. The machine is shared with
// other jobs: figures taken under load are noisy, ratios are measured within one run.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import type { Engine } from '../bindings/core/engine.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import { toCanonical } from '../bindings/core/canonical.ts';
import { buildRelaxation } from '../bindings/relax/relaxation.ts';
import { SparseCholesky } from '../bindings/linalg/sparse-cholesky.ts';
import * as ref from '../test/linalg-reference.ts';
import { mulberry32 } from '../test/helpers.ts';
import { cpuModel, dist, QUICK, resultsPath, wasmFacts, type Dist } from './common.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const CFG = QUICK ? { reps: 5, bigSide: 300, denseN: 300, sparseSide: 100, minSeconds: 0.05 } : { reps: 11, bigSide: 1000, denseN: 600, sparseSide: 200, minSeconds: 0.2 };
const PARTS = process.env.BENCH_PARTS ?? 'abc';
const TARGETS = { setupMs100: 50, wasmOverC: 0.8, agreement: 1e-12 };
const SEED = 20241125;
const now = () => performance.now() / 1000;
const fmtMs = (d: Dist) => `${(1e3 * d.median).toFixed(1)} ms (${(1e3 * d.min).toFixed(1)}–${(1e3 * d.max).toFixed(1)})`;

// ---------------------------------------------------------------------------------------------
// (a) 100×100 setup.

function partA(engine: Engine) {
  const model = isingLattice({ shape: [100, 100], J: 0.3 });
  const wasm: number[] = [], js: number[] = [], cpu: number[] = [];
  const phases: Record<string, number[]> = { spectrum: [], shift: [], ordering: [], factor: [] };
  let fill = 0;
  buildRelaxation(engine, model); // warm-up (compilation tiers)
  for (let rep = 0; rep < CFG.reps; rep++) {
    const order = rep % 2 ? ['js', 'wasm'] : ['wasm', 'js'];
    for (const which of order) {
      if (which === 'wasm') {
        const t0 = now(), c0 = process.cpuUsage();
        const r = buildRelaxation(engine, model);
        wasm.push(now() - t0);
        const c = process.cpuUsage(c0);
        cpu.push((c.user + c.system) / 1e6);
        for (const k of Object.keys(phases)) phases[k].push(r.timings[k as keyof typeof r.timings]);
        fill = r.fill!;
      } else {
        // The same steps in the replaced TypeScript: canonical form, Lanczos on W, shift, ordering, factor.
        const t0 = now();
        const form = toCanonical(model);
        const n = form.nBits;
        const lz = ref.lanczosExtremes((x, y) => {
          for (let i = 0; i < n; i++) {
            let s = 0;
            for (let q = form.rowPtr[i]; q < form.rowPtr[i + 1]; q++) s += form.val[q] * x[form.col[q]];
            y[i] = s;
          }
        }, n);
        const rho = Math.max(Math.abs(lz.min), Math.abs(lz.max));
        const d = new Float64Array(n).fill(Math.max(0, -(lz.min - lz.minResidual)) + 1e-3 * Math.max(rho, 1));
        const r = ref.sparseCholesky(form, d, ref.minimumDegree(n, form.rowPtr, form.col));
        if (!r.ok) throw new Error('reference sparse Cholesky failed');
        js.push(now() - t0);
      }
    }
  }
  const res = { wasm: dist(wasm), wasmCpu: dist(cpu), typescript: dist(js), phases: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, dist(v)])), fill, met: dist(wasm).median * 1e3 <= TARGETS.setupMs100 };
  console.log(`(a) relaxation setup, 100×100 Ising grid (n = 10⁴, sparse Cholesky, nnz(L) = ${fill}): engine ${fmtMs(res.wasm)} wall, ${fmtMs(res.wasmCpu)} CPU time of this process; replaced TypeScript ${fmtMs(res.typescript)}`);
  console.log(`    phases (median): ${Object.entries(res.phases).map(([k, v]) => `${k} ${(1e3 * v.median).toFixed(1)} ms`).join(', ')}; target ≤ ${TARGETS.setupMs100} ms: ${res.met ? 'met' : 'NOT met'}`);
  return res;
}

// ---------------------------------------------------------------------------------------------
// (b) The big grid.

function partB(engine: Engine) {
  const L = CFG.bigSide;
  const t0 = now();
  const model = isingLattice({ shape: [L, L], J: 0.3 });
  const form = toCanonical(model);
  const tModel = now() - t0;
  const t1 = now(), c0 = process.cpuUsage();
  const r = buildRelaxation(engine, model, { factor: 'sparse-cholesky' });
  const seconds = now() - t1;
  const c = process.cpuUsage(c0);
  const cpuSeconds = (c.user + c.system) / 1e6;
  const res = { side: L, n: form.nBits, modelSeconds: tModel, seconds, cpuSeconds, timings: r.timings, fill: r.fill, fillPerBit: r.fill! / form.nBits, engineMemoryMiB: engine.memoryBytes / 2 ** 20 };
  console.log(`(b) ${L}×${L} grid (n = ${form.nBits}): sparse Cholesky relaxation built in ${seconds.toFixed(1)} s wall, ${cpuSeconds.toFixed(1)} s CPU (model and canonical form ${tModel.toFixed(1)} s); nnz(L) = ${r.fill} (${res.fillPerBit.toFixed(1)} per bit)`);
  console.log(`    phases: ${Object.entries(r.timings).map(([k, v]) => `${k} ${v.toFixed(2)} s`).join(', ')}; engine memory ${res.engineMemoryMiB.toFixed(0)} MiB`);
  return res;
}

// ---------------------------------------------------------------------------------------------
// (c) WASM vs C.

interface Case {
  name: string;
  file: Buffer;
  /** Runs the kernel `calls` times; returns seconds. */
  wasm: (calls: number) => number;
  wasmOutput: () => Float64Array;
  dispose: () => void;
}

function i32(a: ArrayLike<number>): Buffer {
  return Buffer.from(Int32Array.from(a).buffer);
}
function f64(a: ArrayLike<number>): Buffer {
  return Buffer.from(Float64Array.from(a).buffer);
}

function denseCase(engine: Engine): Case {
  const n = CFG.denseN;
  const rand = mulberry32(SEED);
  const B = Float64Array.from({ length: n * n }, () => 2 * rand() - 1);
  const A = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) {
    let s = i === j ? n : 0;
    for (let k = 0; k < n; k++) s += B[i * n + k] * B[j * n + k];
    A[i * n + j] = A[j * n + i] = s;
  }
  const arena = engine.arena();
  const a = arena.allocF64(A), l = arena.allocF64(n * n);
  const k = engine.kernels;
  return {
    name: `dense Cholesky ${n}×${n}`,
    file: Buffer.concat([Buffer.from('RMRFLIN1'), i32([0, n]), f64(A)]),
    wasm: (calls) => {
      const t0 = now();
      for (let c = 0; c < calls; c++) if (k.denseCholesky(a, l, n) >= 0) throw new Error('not positive definite');
      return now() - t0;
    },
    wasmOutput: () => arena.readF64(l, n * n),
    dispose: () => arena.dispose(),
  };
}

function sparseCase(engine: Engine): Case {
  const side = CFG.sparseSide;
  const form = toCanonical(isingLattice({ shape: [side, side], J: 0.3 }));
  const n = form.nBits;
  let maxW = 0;
  for (const v of form.val) maxW = Math.max(maxW, Math.abs(v));
  const d = new Float64Array(n).fill(4 * maxW + 0.01); // Gershgorin: W + D ≻ 0 on a 4-neighbour grid
  const sym = new SparseCholesky(engine, n, form.rowPtr, form.col);
  const rowIdx = sym.rowIdx(), nnzL = rowIdx.length;
  const arena = engine.arena();
  const p = {
    rowPtr: arena.allocI32(form.rowPtr), col: arena.allocI32(form.col), val: arena.allocF64(form.val), d: arena.allocF64(d),
    perm: arena.allocI32(sym.perm), pos: arena.allocI32(sym.pos), colPtr: arena.allocI32(sym.colPtr), rowIdx: arena.allocI32(rowIdx),
    Lx: arena.allocF64(nnzL), diag: arena.allocF64(n), w: arena.allocF64(n), headL: arena.allocI32(n), link: arena.allocI32(n), next: arena.allocI32(n),
  };
  const k = engine.kernels;
  const file = Buffer.concat([
    Buffer.from('RMRFLIN1'), i32([1, n, form.col.length, nnzL]), i32(form.rowPtr), i32(form.col), f64(form.val), f64(d),
    i32(sym.perm), i32(sym.pos), i32(sym.colPtr), i32(rowIdx),
  ]);
  sym.dispose();
  return {
    name: `sparse numeric Cholesky, ${side}×${side} grid (n = ${n}, nnz(L) = ${nnzL + n})`,
    file,
    wasm: (calls) => {
      const t0 = now();
      for (let c = 0; c < calls; c++) {
        if (k.choleskyNumeric(n, p.rowPtr, p.col, p.val, p.d, p.perm, p.pos, p.colPtr, p.rowIdx, p.Lx, p.diag, p.w, p.headL, p.link, p.next) >= 0) throw new Error('not positive definite');
      }
      return now() - t0;
    },
    wasmOutput: () => {
      const out = new Float64Array(nnzL + n);
      out.set(arena.f64(p.Lx, nnzL));
      out.set(arena.f64(p.diag, n), nnzL);
      return out;
    },
    dispose: () => arena.dispose(),
  };
}

function relDiff(a: Float64Array, b: Float64Array): number {
  let num = 0, den = 0;
  for (let i = 0; i < a.length; i++) {
    num += (a[i] - b[i]) ** 2;
    den += b[i] ** 2;
  }
  return Math.sqrt(num / Math.max(den, 1e-300));
}

function partC(engine: Engine, work: string) {
  const probe = spawnSync('gcc', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    console.log('(c) NOTE: gcc not found: the native comparison is skipped');
    return { skipped: true, failed: false, rows: [] };
  }
  const src = join(HERE, 'native', 'linalg.c');
  const builds = [
    { name: 'c-v2', flags: ['-O3', '-march=x86-64-v2', '-ffp-contract=off'] },
    { name: 'c-native', flags: ['-O3', '-march=native', '-ffp-contract=off'] },
  ].map((b) => {
    const exe = join(work, `linalg-${b.name}.out`);
    const cc = spawnSync('gcc', [...b.flags, '-std=c11', '-D_POSIX_C_SOURCE=200112L', '-o', exe, src, '-lm'], { encoding: 'utf8' });
    if (cc.status !== 0) throw new Error(`gcc failed on bench/native/linalg.c:\n${cc.stderr}`);
    return { ...b, exe };
  });
  const compiler = probe.stdout.split('\n')[0];
  console.log(`(c) WASM kernel vs native C of the same loops (${compiler}; C v2 = ${builds[0].flags.join(' ')}, the reference; C native = ${builds[1].flags.join(' ')})`);
  const rows = [];
  let failed = false;
  for (const c of [denseCase(engine), sparseCase(engine)]) {
    try {
      const file = join(work, 'input.bin');
      writeFileSync(file, c.file);
      // Agreement first.
      c.wasm(1);
      const wOut = c.wasmOutput();
      const agreement: Record<string, number> = {};
      for (const b of builds) {
        const out = join(work, `out-${b.name}.bin`);
        const v = spawnSync(b.exe, ['verify', file, out], { encoding: 'utf8' });
        if (v.status !== 0) throw new Error(`${b.name} verify failed: ${v.stderr}`);
        const buf = readFileSync(out);
        agreement[b.name] = relDiff(wOut, new Float64Array(buf.buffer, buf.byteOffset, buf.byteLength / 8));
        if (!(agreement[b.name] <= TARGETS.agreement)) failed = true;
      }
      // Calls per measurement: at least CFG.minSeconds of work.
      const once = Math.max(c.wasm(1), 1e-6);
      const calls = Math.max(1, Math.ceil(CFG.minSeconds / once));
      const t: Record<string, number[]> = { wasm: [] };
      for (const b of builds) t[b.name] = [];
      const runners: [string, () => number][] = [
        ['wasm', () => c.wasm(calls) / calls],
        ...builds.map((b) => [b.name, () => {
          const r = spawnSync(b.exe, ['time', file, String(calls)], { encoding: 'utf8' });
          if (r.status !== 0) throw new Error(`${b.name} time failed: ${r.stderr}`);
          return Number(r.stdout.trim().split(' ')[0]) / calls;
        }] as [string, () => number]),
      ];
      for (let rep = 0; rep < CFG.reps; rep++) {
        for (let j = 0; j < runners.length; j++) {
          const [name, run] = runners[(rep + j) % runners.length];
          t[name].push(run());
        }
      }
      const d = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, dist(v)]));
      const ratio = { v2: d['c-v2'].median / d.wasm.median, native: d['c-native'].median / d.wasm.median };
      rows.push({ name: c.name, calls, seconds: d, ratio, agreement, met: ratio.v2 >= TARGETS.wasmOverC });
      console.log(`    ${c.name}: WASM ${fmtMs(d.wasm)}, C v2 ${fmtMs(d['c-v2'])}, C native ${fmtMs(d['c-native'])}; t_C/t_WASM = ${ratio.v2.toFixed(2)} (v2), ${ratio.native.toFixed(2)} (native); outputs agree to ${Math.max(...Object.values(agreement)).toExponential(1)}`);
    } finally {
      c.dispose();
    }
  }
  return { skipped: false, failed, compiler, builds: builds.map((b) => ({ name: b.name, flags: b.flags })), rows };
}

const engine = await loadEngine(process.env.BENCH_WASM || undefined);
const work = mkdtempSync(join(tmpdir(), 'relaxmrf-linalg-'));
try {
  console.log(`linalg bench${QUICK ? ' (quick)' : ''}: ${cpuModel() ?? 'unknown CPU'}, Node ${process.version}; medians of ${CFG.reps} interleaved repetitions; the machine is shared (load average ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')})`);
  const a = PARTS.includes('a') ? partA(engine) : null;
  const c = PARTS.includes('c') ? partC(engine, work) : { skipped: true, failed: false, rows: [] };
  const b = PARTS.includes('b') ? partB(engine) : null;
  const results = { quick: QUICK, date: new Date().toISOString(), cpu: cpuModel(), node: process.version, wasm: wasmFacts(), targets: TARGETS, setup100: a, big: b, native: c };
  const out = PARTS === 'abc' ? resultsPath('linalg.json') : join(tmpdir(), `linalg-${PARTS}.json`);
  writeFileSync(out, JSON.stringify(results, (k, v) => (k === 'samples' ? undefined : v), 1) + '\n');
  console.log(`results: ${out}`);
  if (c.failed) {
    console.log('FAILED: WASM and C outputs disagree');
    process.exitCode = 1;
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
