// npm run bench:exact-refusal: how long exact inference takes to refuse a model it cannot do within
// its limits (default maxFlops 2^34), and to rescue one it can. The models: a dense random pairwise
// model of 45 variables and a 30×30 Ising grid (greedy plans 2^35.7 and 2^38.8: within the rescue
// range, refused after the first stages of the tree search), a random 3-regular graph of 190
// variables (greedy 2^36.7: the rescue search brings it within the limit; its planning time), and
// 40×40 and 100×100 grids (past the rescue range: no search; the 100×100 one by the grid bound,
// and with a diagonal more and renumbered by the orderings), 1000×1000 lattices by the grid bound
// (from the builders' layout; read from UAI text, row by row, renumbered, and a 3-state Potts one
// renumbered, by a square of the grid among the pair factors), a 100³ lattice renumbered (by a
// square on a face), and linkage_11 and 2bitcomp_5.cnf
// (with their evidence) under a 10 kB memory budget, refused only after the whole rescue search (the
// smallest budget that would do depends on its plan: issue 11's refusals not within 0.1 s). Per
// model, in a fresh process each:
// the first call's CPU and wall time (the planner's code compiled on the way; CPU time includes
// V8's compiler threads), median of FRESH processes, and, in the first of them, the median, min and
// max of the next calls' (warm: what a program calling exactInference again pays). Then the CLI
// (`relaxmrf infer FILE --method exact`, from dist/ when built), wall time, median of runs, beside
// the same command on a 6×6 grid: the difference is what the refusal adds to a CLI run (for the
// renumbered 10⁶-site lattice's 157 MB file, reading it too). Calls are
// timed in the process's CPU time (other load on the machine counts little) and in wall time.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { exactInference, type ExactOptions } from '../bindings/exact/exact.ts';
import { loadModelFile } from '../bindings/io/files.ts';
import { isingLattice, pottsLattice } from '../bindings/core/builders.ts';
import { readUAI, writeUAI } from '../bindings/io/formats.ts';
import { Model } from '../bindings/core/model.ts';
import { dataDir, hiddenGrid, mulberry32, randomModel, regular3, renumbered } from '../test/helpers.ts';
import { QUICK, cpuModel, resultsPath } from './common.ts';

/** The builders a child uses: dist/'s when built (a lattice keeps its layout, which UAI text does not hold), else the sources'. */
type Builders = { isingLattice: typeof isingLattice; pottsLattice: typeof pottsLattice; Model: typeof Model };
let lib: Builders = { isingLattice, pottsLattice, Model };
const grid = (side: number): Model => lib.isingLattice({ shape: [side, side], J: (i, j) => Math.sin(i + 7 * j) / 2, h: 0.1 });
const file = async (name: string): Promise<Model> => (await loadModelFile(join(dataDir(), 'uai2014-more', name))).model;
const MODELS: Record<string, () => Model | Promise<Model>> = {
  'dense 45': () => randomModel(mulberry32(4501), 45, { density: 0.5 }),
  'grid 30×30': () => grid(30),
  '3-regular 190 (rescued)': () => regular3(190, 4),
  'grid 40×40': () => grid(40),
  'grid 100×100': () => grid(100),
  // The same grid with a diagonal more, renumbered: the orderings' refusal (the grid's bound refuses the one above, by its layout or numbering).
  'grid 100×100 + a diagonal, renumbered': () => hiddenGrid(grid(100), 100, 1),
  'lattice 1000×1000': () => grid(1000),
  // Read from UAI text (no layout), numbered row by row and shuffled: refused by a square of the grid among its pair factors (gridUnderAnyNumbering).
  'lattice 1000×1000, row by row': () => lib.Model.fromData({ ...grid(1000).toData(), lattice: null }),
  'lattice 1000×1000, renumbered': () => renumbered(grid(1000), 1).model,
  // 3 states: each 3 × 3 bond table on the square tested for a coupling (no builder's mark read back).
  'Potts 3-state 1000×1000, renumbered': () => renumbered(lib.pottsLattice({ shape: [1000, 1000], q: 3, J: 0.3 }), 1).model,
  // A 3-D lattice renumbered: by a square on a face (the orderings took 9.8 s).
  'lattice 100×100×100, renumbered': () => renumbered(lib.isingLattice({ shape: [100, 100, 100], beta: 0.3 }), 1).model,
  'linkage_11, 10 kB': () => file('linkage_11.uai'),
  '2bitcomp_5.cnf, 10 kB': () => file('2bitcomp_5.cnf.uai'),
};
/** The options a model's calls take (the default limits otherwise). */
const OPTIONS: Record<string, ExactOptions> = { 'linkage_11, 10 kB': { maxMemory: 10_000 }, '2bitcomp_5.cnf, 10 kB': { maxMemory: 10_000 } };
const WARM = QUICK ? 3 : 9;
/** Fresh processes per refused model (the first call's median). */
const FRESH = QUICK ? 1 : 7;
const CLI_RUNS = QUICK ? 1 : 5;
const HERE = fileURLToPath(new URL('.', import.meta.url));
const FROM_DIST = existsSync(join(HERE, '..', 'dist', 'exact', 'exact.js'));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** One call's CPU and wall seconds and outcome (CPU time includes V8's compiler threads). */
function timed(infer: (model: Model) => unknown, model: Model): { cpu: number; wall: number; outcome: string } {
  const c0 = process.cpuUsage(), t0 = performance.now();
  let outcome = 'solved';
  try {
    infer(model);
  } catch (e) {
    outcome = `refused: ${(e as Error).message.slice(0, 60)}…`;
  }
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / 1e6, wall: (performance.now() - t0) / 1000, outcome };
}

if (process.argv[2] === '--child') {
  // A fresh process: the first call, then the warm ones. From dist/ when built, as a program using
  // the package runs it (the model read back from UAI by dist/'s own reader).
  const name = process.argv[3], opts = OPTIONS[name] ?? {};
  let infer: (model: Model) => unknown;
  let read: (text: string) => Model = readUAI;
  const dist = join(HERE, '..', 'dist');
  if (FROM_DIST) {
    const builders = (await import(join(dist, 'core', 'builders.js'))) as typeof import('../bindings/core/builders.ts');
    lib = { isingLattice: builders.isingLattice, pottsLattice: builders.pottsLattice, Model: ((await import(join(dist, 'core', 'model.js'))) as typeof import('../bindings/core/model.ts')).Model };
  }
  let model = await MODELS[name]();
  // Models read back from UAI text by dist/'s reader, but lattices, which the builders made from dist/ with their layout.
  const layout = model.lattice;
  if (FROM_DIST) {
    const { loadEngine: load } = (await import(join(dist, 'core', 'wasm-node.js'))) as typeof import('../bindings/core/wasm-node.ts');
    const { exactInference: exact } = (await import(join(dist, 'exact', 'exact.js'))) as typeof import('../bindings/exact/exact.ts');
    read = ((await import(join(dist, 'io', 'formats.js'))) as typeof import('../bindings/io/formats.ts')).readUAI;
    const engine = await load();
    if (!layout) model = read(writeUAI(model));
    infer = (m) => exact(engine, m, opts);
  } else {
    const engine = await loadEngine();
    infer = (m) => exactInference(engine, m, opts);
  }
  // Each warm call on a model object of its own: the same object's plan would come from the plan
  // cache (exact.ts, slicedBucketPlan), and a repeat there costs only the greedy orders.
  // (A lattice rebuilt, others read again.)
  const text = layout ? '' : writeUAI(model);
  const copies = Array.from({ length: Number(process.argv[4]) }, () => (layout ? MODELS[name]() as Model : read(text)));
  const first = timed(infer, model);
  const runs = copies.map((m) => timed(infer, m));
  console.log(JSON.stringify({ first: first.cpu, firstWall: first.wall, outcome: first.outcome, warm: runs.map((r) => r.cpu), warmWall: runs.map((r) => r.wall) }));
  process.exit(0);
}

const rows: Record<string, unknown>[] = [];
console.log(`exactInference ${FROM_DIST ? 'from dist/' : 'through tsx (dist/ not built)'}:\n`);
console.log(`| model | outcome | first call in a fresh process: CPU s (wall s), median of ${FRESH} processes (wall min–max) | warm calls: median (min–max) CPU s, ${WARM} runs (median wall s) |`);
console.log('| --- | --- | --- | --- |');
for (const name of Object.keys(MODELS)) {
  // The rescued model's first call is a contraction of seconds, not a refusal: one process.
  const rescued = name.includes('rescued'), processes = rescued ? 1 : FRESH;
  const firsts: number[] = [], firstWalls: number[] = [];
  let outcome = '', warm: number[] = [], warmWall: number[] = [];
  for (let p = 0; p < processes; p++) {
    // The warm calls in the first process only.
    const warmRuns = p > 0 ? 0 : rescued ? Math.min(WARM, 3) : WARM;
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(HERE, 'exact-refusal.ts'), '--child', name, String(warmRuns)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`child for ${name} failed: ${r.stderr}`);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { first: number; firstWall: number; outcome: string; warm: number[]; warmWall: number[] };
    firsts.push(out.first);
    firstWalls.push(out.firstWall);
    outcome = out.outcome;
    if (p === 0) ({ warm, warmWall } = out);
  }
  rows.push({ model: name, outcome, firstCpu: median(firsts), firstWall: median(firstWalls), firstWallMin: Math.min(...firstWalls), firstWallMax: Math.max(...firstWalls), processes, warmMedianCpu: median(warm), warmMinCpu: Math.min(...warm), warmMaxCpu: Math.max(...warm), warmMedianWall: median(warmWall) });
  const spread = processes > 1 ? `, ${Math.min(...firstWalls).toFixed(3)}–${Math.max(...firstWalls).toFixed(3)}` : '';
  console.log(`| ${name} | ${outcome} | ${median(firsts).toFixed(3)} (${median(firstWalls).toFixed(3)}${spread}) | ${median(warm).toFixed(3)} (${Math.min(...warm).toFixed(3)}–${Math.max(...warm).toFixed(3)}) (${median(warmWall).toFixed(3)}) |`);
}

// The CLI, end to end.
const dir = mkdtempSync(join(tmpdir(), 'relaxmrf-refusal-'));
const bin = join(HERE, '..', 'bin', 'relaxmrf.js');
const fromDist = existsSync(join(HERE, '..', 'dist', 'cli', 'cli.js'));
const cli: Record<string, number> = {};
try {
  const files: [string, Model][] = [['grid 6×6', isingLattice({ shape: [6, 6], J: 0.3, h: 0.1 })], ['dense 45', randomModel(mulberry32(4501), 45, { density: 0.5 })], ['grid 30×30', grid(30)], ['grid 40×40', grid(40)], ['grid 100×100', grid(100)]];
  // A large file: the whole command, reading included (157 MB; a 300×300 lattice's 14 MB in a quick run).
  const side = QUICK ? 300 : 1000;
  files.push([`lattice ${side}×${side}, renumbered`, renumbered(grid(side), 1).model]);
  for (const [name, model] of files) writeFileSync(join(dir, `${name.replace(/\W+/g, '_')}.uai`), writeUAI(model));
  console.log(`\nCLI \`relaxmrf infer FILE --method exact\` (${fromDist ? 'dist/' : 'through tsx: dist/ not built'}), wall seconds, median of ${CLI_RUNS}:\n`);
  console.log('| model | exit | wall s | over the 6×6 grid |');
  console.log('| --- | --- | --- | --- |');
  for (const [name] of files) {
    const times: number[] = [];
    let status = -1;
    for (let k = 0; k < CLI_RUNS; k++) {
      const t0 = performance.now();
      const r = spawnSync(process.execPath, [bin, 'infer', join(dir, `${name.replace(/\W+/g, '_')}.uai`), '--method', 'exact'], { encoding: 'utf8' });
      times.push((performance.now() - t0) / 1000);
      status = r.status ?? -1;
    }
    cli[name] = median(times);
    console.log(`| ${name} | ${status} | ${cli[name].toFixed(3)} | ${name === 'grid 6×6' ? '' : (cli[name] - cli['grid 6×6']).toFixed(3)} |`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const out = resultsPath('exact-refusal.json');
writeFileSync(out, JSON.stringify({ quick: QUICK, date: new Date().toISOString(), cpu: cpuModel(), node: process.version, callsFromDist: FROM_DIST, models: rows, cli: { fromDist, wallSeconds: cli } }, null, 2));
console.log(`\nwrote ${out}`);
