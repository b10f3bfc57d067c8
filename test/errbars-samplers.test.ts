// Error bars that never lie, part 2: every sampler on glassy and critical models either reports
// standard errors that cover its error against exact marginals (|error| ≤ 4 SE for ≥ 98 % of the
// variables) or warns; on easy models it covers without warning. Models: Grids_11 (UAI 2014, exact
// by elimination), a frustrated ±J 10×10 grid (elimination), the 32×32 periodic Ising model at β_c
// (zero field: every marginal is ½ by symmetry; log Z by Kaufman in kaufman.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { infer, type Method } from '../bindings/infer.ts';
import { readUAI } from '../bindings/io/formats.ts';
import { ising, isingLattice, pottsLattice } from '../bindings/core/builders.ts';
import type { Model } from '../bindings/core/model.ts';
import type { InferenceResult } from '../bindings/core/result.ts';
import { estimateLogZ } from '../bindings/logz/logz.ts';
import { dataDir, mulberry32 } from './helpers.ts';

const engine = await loadEngine();
const BIN = fileURLToPath(new URL('../bin/relaxmrf.js', import.meta.url));

const grids11 = () => readUAI(readFileSync(join(dataDir(), 'uai2014', 'Grids_11.uai'), 'utf8'), 'Grids_11.uai');

/** A 10×10 grid with couplings ±1 at random (fixed seed) at β = 1.5: frustrated plaquettes, glassy. */
function frustratedGrid(): Model {
  const rand = mulberry32(7);
  const L = 10;
  const couplings: [number, number, number][] = [];
  for (let i = 0; i < L; i++) {
    for (let j = 0; j < L; j++) {
      const v = i * L + j;
      if (j + 1 < L) couplings.push([v, v + 1, rand() < 0.5 ? 1 : -1]);
      if (i + 1 < L) couplings.push([v, v + L, rand() < 0.5 ? 1 : -1]);
    }
  }
  return ising({ n: L * L, couplings, beta: 1.5 });
}

const BETA_C = 0.5 * Math.log(1 + Math.SQRT2);

/** Fraction of marginal entries within 4 reported SE of the exact ones. */
function coverage(r: InferenceResult, exact: Float64Array[]): number {
  let ok = 0, all = 0;
  r.marginals.forEach((row, v) => {
    row.forEach((p, k) => {
      all++;
      if (Math.abs(p - exact[v][k]) <= 4 * r.marginalStdErr![v][k] + 1e-12) ok++;
    });
  });
  return ok / all;
}

function coversOrWarns(name: string, r: InferenceResult, exact: Float64Array[]): void {
  const c = coverage(r, exact);
  assert.ok(Array.isArray(r.warnings));
  assert.ok(c >= 0.98 || r.warnings!.length > 0, `${name} ${r.method}: ${(100 * c).toFixed(1)} % within 4 SE and no warning`);
  for (const key of ['rhatMax', 'essMin', 'essMedian']) assert.ok(key in r.diagnostics, `${r.method}: diagnostics.${key}`);
}

/** Per method, settings that keep each run to a few seconds. */
const HARD_RUNS: [Method, { samples: number; burnin: number }][] = [
  ['gibbs', { samples: 20000, burnin: 1000 }],
  ['treegibbs', { samples: 5000, burnin: 500 }],
  ['blockgibbs', { samples: 5000, burnin: 500 }],
  ['dhmc', { samples: 600, burnin: 300 }],
  ['mala', { samples: 600, burnin: 300 }],
];

test('glassy Grids_11: every sampler covers or warns; Gibbs at the issue\'s settings warns', () => {
  const model = grids11();
  const exact = infer(engine, model, { method: 'exact' }).marginals;
  for (const [method, o] of HARD_RUNS) coversOrWarns('Grids_11', infer(engine, model, { method, chains: 4, seed: 1, ...o }), exact);
  // The report in the issue: marginals off by up to 0.98 with a largest SE of 0.056, and no R̂.
  const r = infer(engine, model, { method: 'gibbs', samples: 200000, chains: 4, seed: 1 });
  assert.ok((r.diagnostics.rhatMax as number) > 1.5, `R̂ ${r.diagnostics.rhatMax}`);
  assert.ok(r.warnings!.some((w) => w.startsWith('R̂')), r.warnings!.join(' | '));
});

test('frustrated ±J 10×10 grid: every sampler covers or warns', () => {
  const model = frustratedGrid();
  const exact = infer(engine, model, { method: 'exact' }).marginals;
  for (const [method, o] of HARD_RUNS) coversOrWarns('frustrated grid', infer(engine, model, { method, chains: 4, seed: 2, ...o }), exact);
});

test('32×32 periodic Ising model at β_c: every sampler covers ½ or warns', () => {
  const model = isingLattice({ shape: [32, 32], periodic: true, beta: BETA_C });
  const half = Array.from({ length: model.n }, () => Float64Array.of(0.5, 0.5));
  const runs: [Method, { samples: number; burnin: number }][] = [
    ['gibbs', { samples: 2000, burnin: 200 }],
    ['treegibbs', { samples: 1000, burnin: 100 }],
    ['blockgibbs', { samples: 1000, burnin: 100 }],
    ['dhmc', { samples: 200, burnin: 100 }],
    ['mala', { samples: 200, burnin: 100 }],
  ];
  for (const [method, o] of runs) coversOrWarns('Ising 32×32 at β_c', infer(engine, model, { method, chains: 4, seed: 3, ...o }), half);
});

test('3-state Potts torus at β = 1, block Gibbs: chains that stay in a mode for several batches cover or warn (seeds whose R̂ stayed under its noise limit now warn on the batch means\' autocorrelation)', () => {
  const model = pottsLattice({ shape: [4, 4], q: 3, beta: 1, periodic: true });
  const exact = infer(engine, model, { method: 'exact' }).marginals;
  // Seeds 1, 72 and 77 of 100: a marginal past 4 standard errors (z up to 12.4) and no warning.
  for (const seed of [1, 72, 77]) {
    const r = infer(engine, model, { method: 'blockgibbs', seed });
    coversOrWarns(`potts seed ${seed}`, r, exact);
    assert.ok(r.warnings!.some((w) => /batch means autocorrelated \(median lag-1 correlation/.test(w)), `seed ${seed}: ${r.warnings}`);
  }
});

test('easy model: every sampler covers without a warning (no false alarms)', () => {
  const model = isingLattice({ shape: [6, 6], beta: 0.25, h: 0.1 });
  const exact = infer(engine, model, { method: 'exact' }).marginals;
  const runs: [Method, { samples: number; burnin: number }][] = [
    ['gibbs', { samples: 4000, burnin: 200 }],
    ['treegibbs', { samples: 4000, burnin: 200 }],
    ['blockgibbs', { samples: 8000, burnin: 200 }],
    ['dhmc', { samples: 2000, burnin: 500 }],
    ['mala', { samples: 4000, burnin: 500 }],
  ];
  for (const [method, o] of runs) {
    for (const seed of [4, 5]) {
      const r = infer(engine, model, { method, chains: 4, seed, ...o });
      assert.deepEqual(r.warnings, [], `${method} seed ${seed}`);
      assert.equal(coverage(r, exact), 1, `${method} seed ${seed}: every marginal within 4 SE`);
      assert.ok((r.diagnostics.rhatMax as number) < 1.3 && (r.diagnostics.essMin as number) > 0, `${method}: R̂ ${r.diagnostics.rhatMax}, ESS ${r.diagnostics.essMin}`);
    }
  }
});

test('log Z: Chib on Grids_11 covers or warns; AIS on an easy model covers without a warning', () => {
  const hard = grids11();
  const hardZ = infer(engine, hard, { method: 'exact' }).logZ!;
  for (const estimator of ['chib', 'zhang', 'mirror', 'ais'] as const) {
    const r = estimateLogZ(engine, hard, { estimator, seed: 1 });
    assert.ok(Math.abs(r.logZ - hardZ) <= 4 * r.logZStdErr || (r.warnings ?? []).length > 0, `${estimator}: error ${r.logZ - hardZ}, SE ${r.logZStdErr}, no warning`);
  }
  const easy = isingLattice({ shape: [6, 6], beta: 0.25, h: 0.1 });
  const easyZ = infer(engine, easy, { method: 'exact' }).logZ!;
  for (const estimator of ['ais', 'chib'] as const) {
    const r = estimateLogZ(engine, easy, { estimator, seed: 2 });
    assert.deepEqual(r.warnings ?? [], [], estimator);
    assert.ok(Math.abs(r.logZ - easyZ) <= 4 * r.logZStdErr, `${estimator}: error ${r.logZ - easyZ}, SE ${r.logZStdErr}`);
  }
});

test('CLI: warnings in --json and one line each on stderr; exit code 0', () => {
  const run = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  const file = join(dataDir(), 'uai2014', 'Grids_11.uai');
  const hard = run('infer', file, '--method', 'gibbs', '--samples', '4000', '--json');
  assert.equal(hard.status, 0, hard.stderr);
  const out = JSON.parse(hard.stdout);
  assert.ok(out.warnings.length > 0);
  assert.ok(out.diagnostics.rhatMax > 1.01);
  const lines = hard.stderr.split('\n').filter((l) => l.startsWith('relaxmrf: warning: '));
  assert.deepEqual(lines.map((l) => l.slice('relaxmrf: warning: '.length)), out.warnings);
  const exact = run('infer', 'ising:4x4,beta=0.3', '--json');
  assert.equal(exact.status, 0, exact.stderr);
  assert.deepEqual(JSON.parse(exact.stdout).warnings, []);
  assert.equal(exact.stderr, '');
});
