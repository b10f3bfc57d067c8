// npm run bench:io [-- --quick]: reading and writing UAI text at scale. A side × side Ising lattice
// (1000 × 1000, 157 MB of text; --quick 300 × 300) written by writeUAI, then read back by readUAI,
// numbered row by row as written and with its variables shuffled (each variable's factors then at
// random places in the builder's per-variable arrays). readUAI reads a text this large in the engine
// (fast-uai.ts); loadModelFile reads the file's bytes straight into it (no string). Beside them, a
// native C reference of the
// same parse (bench/native/uai_read.c: strtol, strtod and log per token, flat arrays, no
// duplicate-scope merging or checks; gcc -O3 at -march=x86-64-v2 and -march=native). Wall seconds,
// in one process: writeUAI's median of REPEATS, readUAI's first call and median of REPEATS,
// loadModelFile's median of REPEATS (the file read from disk, in the page cache), C's median of
// REPEATS (its parse of the text in memory). Writes bench/results/io.json.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isingLattice } from '../bindings/core/builders.ts';
import { readUAI, writeUAI } from '../bindings/io/formats.ts';
import { loadModelFile } from '../bindings/io/files.ts';
import { renumbered } from '../test/helpers.ts';
import { QUICK, buildNative, cpuModel, gccVersion, resultsPath } from './common.ts';

const SIDE = QUICK ? 300 : 1000;
const REPEATS = QUICK ? 3 : 5;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const seconds = (f: () => unknown): number => {
  const t0 = performance.now();
  f();
  return (performance.now() - t0) / 1000;
};

const model = isingLattice({ shape: [SIDE, SIDE], J: (i, j) => Math.sin(i + 7 * j) / 2, h: 0.1 });
let text = '';
const writes = Array.from({ length: REPEATS }, () => seconds(() => (text = writeUAI(model))));
const shuffled = writeUAI(renumbered(readUAI(text), 1).model);
const dir = mkdtempSync(join(tmpdir(), 'relaxmrf-io-'));
const rows: Record<string, unknown>[] = [];
try {
  const natives = ['x86-64-v2', 'native'].map((march) => [march, buildNative('uai_read.c', march, join(dir, `uai_read-${march}.out`))] as const);
  console.log(`UAI text of a ${SIDE}×${SIDE} lattice (${model.nFactors} factors): writeUAI ${median(writes).toFixed(2)} s (median of ${REPEATS}), ${(text.length / 1e6).toFixed(0)} MB.\n`);
  console.log(`| numbering | MB | readUAI first call s | readUAI median s | MB/s | loadModelFile median s | C x86-64-v2 s | C native s | readUAI / C (v2) |`);
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const [name, t] of [['row by row', text], ['shuffled', shuffled]] as const) {
    const file = join(dir, `${name.replace(/\W+/g, '-')}.uai`);
    writeFileSync(file, t);
    const reads = Array.from({ length: REPEATS }, () => seconds(() => readUAI(t)));
    const loads: number[] = [];
    for (let r = 0; r < REPEATS; r++) {
      const t0 = performance.now();
      await loadModelFile(file);
      loads.push((performance.now() - t0) / 1000);
    }
    const c = natives.map(([, exe]) => (exe ? Number(spawnSync(exe, [file, String(REPEATS)], { encoding: 'utf8' }).stdout.split(' ')[0]) : NaN));
    const row = { numbering: name, mb: t.length / 1e6, readFirst: reads[0], readMedian: median(reads), loadMedian: median(loads), cV2: c[0], cNative: c[1] };
    rows.push(row);
    console.log(`| ${name} | ${row.mb.toFixed(0)} | ${row.readFirst.toFixed(2)} | ${row.readMedian.toFixed(2)} | ${(row.mb / row.readMedian).toFixed(0)} | ${row.loadMedian.toFixed(2)} | ${c[0].toFixed(2)} | ${c[1].toFixed(2)} | ${(row.readMedian / c[0]).toFixed(1)}× |`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const out = resultsPath('io.json');
writeFileSync(out, JSON.stringify({ quick: QUICK, date: new Date().toISOString(), cpu: cpuModel(), gcc: gccVersion(), side: SIDE, factors: model.nFactors, writeMedian: median(writes), writes, reads: rows }, null, 2) + '\n');
console.log(`\nwrote ${out}`);
