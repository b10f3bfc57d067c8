// The sparse Cholesky's fill-reducing ordering (bindings/linalg/sparse-cholesky.ts): `npm run
// bench:ordering` (≈ 2 minutes, most of it minimum degree on the 32³ lattice) or BENCH_QUICK=1 /
// --quick (under 20 s: no 32³ lattice). Writes bench/results/ordering.json.
//
// Per pattern: the ordering `auto` chose (minimum degree within its work limit, else nested
// dissection) and its analysis time (the orderings tried plus the symbolic factorisation), against
// minimum degree and dissection forced; the numeric factorisation's time and nnz(L) for each order.
// Medians of `reps` interleaved repetitions (minimum degree forced on the largest 3-D lattice: one).

import { writeFileSync } from 'node:fs';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import type { Engine } from '../bindings/core/engine.ts';
import { ising, isingLattice } from '../bindings/core/builders.ts';
import { toCanonical, type CanonicalForm } from '../bindings/core/canonical.ts';
import { SparseCholesky, type OrderingChoice } from '../bindings/linalg/sparse-cholesky.ts';
import { mulberry32 } from '../test/helpers.ts';
import { cpuModel, dist, QUICK, resultsPath, type Dist } from './common.ts';

const REPS = QUICK ? 3 : 5;

/** A sparse random graph of n bits and m distinct edges (weak couplings). */
function sparseRandom(n: number, m: number, seed: number): CanonicalForm {
  const rand = mulberry32(seed), couplings: [number, number, number][] = [], seen = new Set<number>();
  while (couplings.length < m) {
    const i = Math.floor(rand() * n), j = Math.floor(rand() * n);
    const key = Math.min(i, j) * n + Math.max(i, j);
    if (i === j || seen.has(key)) continue;
    seen.add(key);
    couplings.push([i, j, 0.1]);
  }
  return toCanonical(ising({ n, couplings }));
}

const CASES: { name: string; form: () => CanonicalForm; slowMinDegree?: boolean }[] = [
  { name: '128×128 lattice', form: () => toCanonical(isingLattice({ shape: [128, 128], J: 0.3 })) },
  { name: '200×200 lattice', form: () => toCanonical(isingLattice({ shape: [200, 200], J: 0.3 })) },
  { name: '16³ lattice', form: () => toCanonical(isingLattice({ shape: [16, 16, 16], J: 0.3 })) },
  { name: '24³ lattice', form: () => toCanonical(isingLattice({ shape: [24, 24, 24], J: 0.3 })) },
  ...(QUICK ? [] : [{ name: '32³ lattice', form: () => toCanonical(isingLattice({ shape: [32, 32, 32], J: 0.3 })), slowMinDegree: true }]),
  { name: 'random, 8000 bits, 12000 edges', form: () => sparseRandom(8000, 12000, 7) },
  { name: 'random, 5000 bits, 15000 edges', form: () => sparseRandom(5000, 15000, 4) },
];

interface Row {
  name: string;
  bits: number;
  chosen: string;
  analyse: Record<OrderingChoice, Dist>;
  factor: Record<OrderingChoice, Dist>;
  fill: Record<OrderingChoice, number>;
}

function measure(engine: Engine, form: CanonicalForm, ordering: OrderingChoice): { analyse: number; factor: number; fill: number; chosen: string } {
  const t0 = performance.now();
  const s = new SparseCholesky(engine, form.nBits, form.rowPtr, form.col, undefined, ordering);
  const t1 = performance.now();
  try {
    const d = new Float64Array(form.nBits).fill(50); // diagonally dominant: every pivot positive
    if (!s.factor(form.val, d).ok) throw new Error('factorisation failed');
    return { analyse: (t1 - t0) / 1000, factor: (performance.now() - t1) / 1000, fill: s.fill, chosen: s.ordering };
  } finally {
    s.dispose();
  }
}

const engine = await loadEngine();
console.log(`ordering bench${QUICK ? ' (quick)' : ''}: ${cpuModel() ?? 'unknown CPU'}, Node ${process.version}; medians of ${REPS} interleaved repetitions`);
const rows: Row[] = [];
for (const c of CASES) {
  const form = c.form();
  const orderings: OrderingChoice[] = ['auto', 'min-degree', 'dissection'];
  const t: Record<string, { analyse: number[]; factor: number[] }> = Object.fromEntries(orderings.map((o) => [o, { analyse: [], factor: [] }]));
  const fill: Record<string, number> = {};
  let chosen = '';
  for (let rep = 0; rep < REPS; rep++) {
    for (let k = 0; k < orderings.length; k++) {
      const o = orderings[(rep + k) % orderings.length];
      if (o === 'min-degree' && c.slowMinDegree && t[o].analyse.length > 0) continue;
      const m = measure(engine, form, o);
      t[o].analyse.push(m.analyse);
      t[o].factor.push(m.factor);
      fill[o] = m.fill;
      if (o === 'auto') chosen = m.chosen;
    }
  }
  const row: Row = {
    name: c.name, bits: form.nBits, chosen,
    analyse: Object.fromEntries(orderings.map((o) => [o, dist(t[o].analyse)])) as Row['analyse'],
    factor: Object.fromEntries(orderings.map((o) => [o, dist(t[o].factor)])) as Row['factor'],
    fill: fill as Row['fill'],
  };
  rows.push(row);
  const ms = (d: Dist) => `${(1000 * d.median).toFixed(d.median < 0.1 ? 1 : 0)} ms`;
  console.log(`  ${c.name} (${form.nBits} bits): auto → ${chosen}, analysis ${ms(row.analyse.auto)} + factor ${ms(row.factor.auto)}, nnz(L) ${fill.auto}; minimum degree ${ms(row.analyse['min-degree'])} + ${ms(row.factor['min-degree'])}, nnz ${fill['min-degree']}; dissection ${ms(row.analyse.dissection)} + ${ms(row.factor.dissection)}, nnz ${fill.dissection}`);
}
const out = resultsPath('ordering.json');
writeFileSync(out, JSON.stringify({ quick: QUICK, date: new Date().toISOString(), cpu: cpuModel(), node: process.version, reps: REPS, rows }, (k, v) => (k === 'samples' ? undefined : v), 1) + '\n');
console.log(`results: ${out}`);
