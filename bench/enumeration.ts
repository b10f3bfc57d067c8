// Exact enumeration on the factor graph: the WASM kernel (assembly/exact/exact_enum.ts, through
// runFactorGraphEnumeration: plan, binding and kernel) against a native C reference of the same
// algorithm (bench/native/enumerate.c, gcc -O3 at -march=x86-64-v2, 128-bit SIMD like WASM, and at
// -march=native) and a plain-JS one (bench/js/enumerate.ts), on a pairwise binary model, a binary
// model with factors of arity 3–4 and a 3-state model with factors of arity 3. First checks that
// all give the same log Z and marginals (to 1e-9), then times them: the implementations take turns
// in each repetition, and the medians are reported with the ratios of one run.
// Usage: npm run bench:enum [-- --quick]   (writes bench/results/enumeration.json)

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../bindings/index.ts';
import { ModelBuilder, type Model } from '../bindings/core/model.ts';
import { enumerationPlan, runFactorGraphEnumeration } from '../bindings/exact/enumeration.ts';
import { enumerateJS, type EnumArrays } from './js/enumerate.ts';
import { QUICK, cpuModel, dist, resultsPath, wasmFacts, type Dist } from './common.ts';
import { mulberry32 } from '../test/helpers.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPEATS = QUICK ? 3 : 7;

/** n variables of K states on a chain of factors of the given arities plus `extra` random ones. */
function model(n: number, K: number, arities: number[], extra: number, seed: number): Model {
  const rand = mulberry32(seed);
  const b = new ModelBuilder(new Array(n).fill(K));
  const table = (size: number) => Array.from({ length: size }, () => 2 * rand() - 1);
  for (let v = 0; v < n; v++) b.addUnary(v, table(K));
  for (let t = 0; t < n - 1 + extra; t++) {
    const a = arities[t % arities.length];
    const scope: number[] = t < n - 1 ? [t, t + 1] : [];
    while (scope.length < a) {
      const v = Math.floor(rand() * n);
      if (!scope.includes(v)) scope.push(v);
    }
    b.addFactor(scope, table(K ** a));
  }
  return b.build();
}

/** The flat arrays of the kernel, as the binding lays them out. */
function arrays(m: Model): EnumArrays {
  const { n, card, scopeStart, scopeVars, tableStart, tables } = m;
  const F = m.nFactors, S = scopeVars.length;
  const scopeStride = new Int32Array(S);
  for (let f = 0; f < F; f++) {
    let s = 1;
    for (let p = scopeStart[f + 1] - 1; p >= scopeStart[f]; p--) (scopeStride[p] = s), (s *= card[scopeVars[p]]);
  }
  const incStart = new Int32Array(n + 1);
  for (let p = 0; p < S; p++) incStart[scopeVars[p] + 1]++;
  for (let v = 0; v < n; v++) incStart[v + 1] += incStart[v];
  const fill = incStart.slice(0, n), incFactor = new Int32Array(S), incStride = new Int32Array(S);
  for (let f = 0; f < F; f++) for (let p = scopeStart[f]; p < scopeStart[f + 1]; p++) (incFactor[fill[scopeVars[p]]] = f), (incStride[fill[scopeVars[p]]++] = scopeStride[p]);
  const plan = enumerationPlan(m);
  if (plan.components.length !== 1) throw new Error('bench models are connected');
  const digits = plan.components[0].vars;
  let nb = 0;
  for (let prodK = 1; nb < digits.length && (nb === 0 || prodK * card[digits[nb]] <= 4096); nb++) prodK *= card[digits[nb]];
  return { n, card, scopeStart, scopeVars, scopeStride, tableStart, tables, incStart, incFactor, incStride, digits, nb };
}

function writeModel(a: EnumArrays, path: string): void {
  const head = Int32Array.from([a.n, a.tableStart.length, a.scopeVars.length, a.tables.length, a.digits.length, a.nb]);
  const parts = [head, a.card, a.scopeStart, a.scopeVars, a.scopeStride, a.tableStart, a.incStart, a.incFactor, a.incStride, a.digits].map((x) => Buffer.from(x.buffer, x.byteOffset, x.byteLength));
  writeFileSync(path, Buffer.concat([...parts, Buffer.from(a.tables.buffer, a.tables.byteOffset, a.tables.byteLength)]));
}

const tmp = mkdtempSync(join(tmpdir(), 'relaxmrf-enum-'));
const builds: { name: string; exe: string; flags: string }[] = [];
if (spawnSync('gcc', ['--version']).status === 0) {
  for (const [name, march] of [['c-v2', 'x86-64-v2'], ['c-native', 'native']]) {
    const exe = join(tmp, `${name}.out`);
    const flags = ['-O3', `-march=${march}`, '-ffp-contract=off', '-std=c11', '-D_POSIX_C_SOURCE=199309L'];
    const cc = spawnSync('gcc', [...flags, '-o', exe, join(HERE, 'native', 'enumerate.c'), '-lm'], { encoding: 'utf8' });
    if (cc.status !== 0) throw new Error(`gcc failed:\n${cc.stderr}`);
    builds.push({ name, exe, flags: flags.join(' ') });
  }
} else console.log('NOTE: gcc not found: the native C reference is skipped');

const engine = await loadEngine();
const cases: [string, Model][] = QUICK
  ? [['pairwise binary, 16 variables', model(16, 2, [2], 8, 1)], ['binary, arity 3–4, 16 variables', model(16, 2, [3, 4], 6, 2)], ['3 states, arity 3, 10 variables', model(10, 3, [3], 4, 3)]]
  : [['pairwise binary, 22 variables', model(22, 2, [2], 24, 1)], ['binary, arity 3–4, 22 variables', model(22, 2, [3, 4], 10, 2)], ['3 states, arity 3, 14 variables', model(14, 3, [3], 6, 3)]];
const results: Record<string, unknown>[] = [];
console.log(`CPU ${cpuModel() ?? 'unknown'}, load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}; ${REPEATS} repetitions, medians`);
for (const [name, m] of cases) {
  const a = arrays(m);
  const file = join(tmp, 'model.bin');
  writeModel(a, file);
  const configs = m.card.reduce((p, K) => p * K, 1);
  const times: Record<string, number[]> = { wasm: [], js: [], ...Object.fromEntries(builds.map((b) => [b.name, []])) };
  const answers: Record<string, [number, number]> = {};
  const runs: Record<string, () => void> = {
    wasm: () => {
      const t0 = performance.now();
      const r = runFactorGraphEnumeration(engine, m);
      times.wasm.push((performance.now() - t0) / 1000);
      answers.wasm = [r.logZ, r.marginals![0][0]];
    },
    js: () => {
      const t0 = performance.now();
      const r = enumerateJS(a);
      times.js.push((performance.now() - t0) / 1000);
      answers.js = [r.logZ, r.marg[0]];
    },
  };
  for (const b of builds) {
    runs[b.name] = () => {
      const out = spawnSync(b.exe, [file, '1'], { encoding: 'utf8' }).stdout.trim().split(' ').map(Number);
      times[b.name].push(out[0]);
      answers[b.name] = [out[1], out[2]];
    };
  }
  const names = Object.keys(runs);
  for (let rep = 0; rep < REPEATS + 1; rep++) {
    for (let i = 0; i < names.length; i++) runs[names[(rep + i) % names.length]]();
    if (rep === 0) for (const k of names) times[k].length = 0; // the first round warms up
  }
  for (const k of names) {
    const [z, p] = answers[k], [z0, p0] = answers.wasm;
    if (!(Math.abs(z - z0) <= 1e-9 * Math.abs(z0) && Math.abs(p - p0) <= 1e-9)) throw new Error(`${name}: ${k} gives log Z ${z}, p ${p}; WASM ${z0}, ${p0}`);
  }
  const d: Record<string, Dist> = Object.fromEntries(names.map((k) => [k, dist(times[k])]));
  const rate = (k: string) => configs / d[k].median / 1e6;
  const ratio = (k: string) => (d[k] ? d[k].median / d.wasm.median : null);
  console.log(`${name}: ${configs} configurations, log Z ${answers.wasm[0].toFixed(6)}; M configurations/s: ${names.map((k) => `${k} ${rate(k).toFixed(1)}`).join(', ')}; WASM is ${names.filter((k) => k !== 'wasm').map((k) => `${ratio(k)!.toFixed(2)}× ${k}'s speed`).join(', ')}`);
  results.push({ name, configurations: configs, factors: m.nFactors, maxArity: m.maxArity, logZ: answers.wasm[0], seconds: d, mConfigsPerSecond: Object.fromEntries(names.map((k) => [k, rate(k)])) });
}
rmSync(tmp, { recursive: true });
const out = resultsPath('enumeration.json');
writeFileSync(out, JSON.stringify({ quick: QUICK, date: new Date().toISOString(), cpu: cpuModel(), loadavg: loadavg(), wasm: wasmFacts(), native: builds.map((b) => b.flags), repeats: REPEATS, results }, null, 2) + '\n');
console.log(`wrote ${out}`);
