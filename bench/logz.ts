// log Z error against wall time for each estimator of bindings/logz.ts: `npm run bench:logz` (full,
// a few minutes) or BENCH_QUICK=1 / --quick. Writes bench/results/logz.json.
//
// Models, each with an exact log Z:
//   * Zhang et al. (2012) §5 10×10 open grids over s ∈ {0,1} (as in bench/zhang.ts: w_ij = 2c₂z,
//     'standard' a_i = 2c₁z, 'frustrated' a_i = c₁(Σ_j w_ij + 2z)), a few (c₁, c₂) cells; exact by
//     elimination (bindings/exact.ts);
//   * UAI 2014 Grids_11 and Grids_12 (published log10 Z);
//   * the periodic 32×32 ferromagnetic Ising model at β_c = ½ ln(1 + √2) (Kaufman 1949, test/kaufman.ts).
// Estimators at increasing budgets (AIS: temperatures per run; the others: samples per chain), one
// fixed seed per (model, estimator, budget); per row: error = estimate − exact, the reported standard
// error, and seconds (single thread, one WASM engine; the median of three runs where a run is short).

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { boltzmann, latticeBonds, isingLattice } from '../bindings/core/builders.ts';
import type { Model } from '../bindings/core/model.ts';
import { exactInference } from '../bindings/exact/exact.ts';
import { readUAI, readPR } from '../bindings/io/formats.ts';
import { estimateLogZ, type EstimateLogZOptions, type LogZEstimator } from '../bindings/logz/logz.ts';
import { kaufmanLogZ, K_CRITICAL } from '../test/kaufman.ts';
import { dataDir, mulberry32 } from '../test/helpers.ts';
import { cpuModel, dist, QUICK, resultsPath } from './common.ts';

function gaussian(rand: () => number): () => number {
  return () => {
    const u = Math.max(rand(), 1e-300), v = rand();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
}

function zhangGrid(kind: 'standard' | 'frustrated', c1: number, c2: number, seed: number): Model {
  const L = 10, n = L * L;
  const z = gaussian(mulberry32(seed));
  const edges: [number, number, number][] = latticeBonds([L, L], false).map(([i, j]) => [i, j, 2 * c2 * z()]);
  const rowSum = new Float64Array(n);
  for (const [i, j, w] of edges) {
    rowSum[i] += w;
    rowSum[j] += w;
  }
  const a = Float64Array.from({ length: n }, (_, i) => (kind === 'standard' ? 2 * c1 * z() : c1 * (rowSum[i] + 2 * z())));
  return boltzmann({ a, edges });
}

async function main() {
  const engine = await loadEngine();
  const models: { name: string; model: Model; exact: number; exactSource: string }[] = [];
  for (const [kind, c1, c2] of [['standard', 0.5, 0.5], ['frustrated', 0.5, 0.5], ['frustrated', 1, 1]] as const) {
    const model = zhangGrid(kind, c1, c2, 1000 + models.length);
    models.push({ name: `zhang-${kind}-c1=${c1}-c2=${c2}`, model, exact: exactInference(engine, model).logZ, exactSource: 'elimination' });
  }
  for (const g of ['Grids_11', 'Grids_12']) {
    const dir = join(dataDir(), 'uai2014');
    const model = readUAI(readFileSync(join(dir, `${g}.uai`), 'utf8'), `${g}.uai`);
    models.push({ name: g, model, exact: readPR(readFileSync(join(dir, `${g}.uai.PR`), 'utf8')) * Math.LN10, exactSource: 'published log10 Z (UAI 2014)' });
  }
  models.push({ name: 'ising-32x32-periodic-beta_c', model: isingLattice({ shape: [32, 32], periodic: true, beta: K_CRITICAL }), exact: kaufmanLogZ(K_CRITICAL, 32), exactSource: 'Kaufman (1949)' });

  const budgets = QUICK ? [1, 4] : [1, 4, 16];
  const rows: Record<string, unknown>[] = [];
  for (const { name, model, exact } of models) {
    const big = model.n > 256;
    for (const variant of ['ais-gibbs', 'ais-tree', 'ais-relaxed', 'pa-gibbs', 'pa-tree', 'chib', 'zhang', 'zhang-eq14', 'mirror'] as const) {
      const estimator: LogZEstimator = variant === 'zhang-eq14' ? 'zhang' : variant.startsWith('ais') || variant.startsWith('pa') ? 'ais' : (variant as LogZEstimator);
      const transition = variant.endsWith('tree') ? ('tree' as const) : variant.endsWith('relaxed') ? ('relaxed' as const) : ('gibbs' as const);
      for (const b of budgets) {
        // Trace memory of the relaxed estimators is samples × (m + n + 1) doubles per chain.
        if (big && (estimator === 'zhang' || estimator === 'mirror') && b > 4) continue;
        // Population annealing on the 1024-site lattice: 8 × 1024 particles × 500 temperatures is minutes.
        if (big && variant.startsWith('pa') && b > 4) continue;
        const opts: EstimateLogZOptions =
          variant.startsWith('ais') ? { estimator: 'ais', seed: 1, runs: 16, steps: 500 * b, transition }
          : variant.startsWith('pa') ? { estimator: 'ais', seed: 1, runs: 8 * 64 * b, population: 64 * b, steps: 500, transition }
          : estimator === 'chib' ? { estimator, seed: 1, chains: 4, samples: 500 * b }
          : { estimator, seed: 1, chains: 4, samples: 500 * b, burnin: 500, ...(variant === 'zhang-eq14' ? { reference: 'zero' as const } : {}) };
        let row: Record<string, unknown>;
        try {
          const r = estimateLogZ(engine, model, opts);
          // The machine is shared: rows under 5 s are timed three times (the same seed gives the
          // same estimate) and report the median.
          const times = [r.seconds];
          while (r.seconds < 5 && times.length < 3) {
            const again = estimateLogZ(engine, model, opts);
            if (again.logZ !== r.logZ) throw new Error(`${name} ${variant}: a repeat at the same seed gave another estimate`);
            times.push(again.seconds);
          }
          const t = dist(times);
          row = { model: name, estimator: variant, budget: b, logZ: r.logZ, exact, error: r.logZ - exact, stdErr: r.logZStdErr, seconds: t.median, secondsRuns: t.samples, diagnostics: r.diagnostics };
        } catch (e) {
          row = { model: name, estimator: variant, budget: b, exact, error: null, failure: String(e) };
        }
        rows.push(row);
        const err = typeof row.error === 'number' ? (row.error as number).toFixed(3) : 'n/a';
        const se = typeof row.stdErr === 'number' ? (row.stdErr as number).toFixed(3) : '';
        console.log(`${name.padEnd(34)} ${variant.padEnd(10)} ×${String(b).padEnd(3)} error ${err.padStart(9)} SE ${se.padStart(7)} ${typeof row.seconds === 'number' ? (row.seconds as number).toFixed(2) + ' s' : String(row.failure ?? '').slice(0, 80)}`);
      }
    }
  }
  const out = {
    description: 'log Z error (estimate − exact, nats) against wall time per estimator; bench/logz.ts',
    quick: QUICK,
    node: process.version,
    cpu: cpuModel(),
    date: new Date().toISOString(),
    timing: 'seconds: median of 3 runs for rows under 5 s, else one run; 2-core machine shared with other work while this ran',
    budgets: 'ais-gibbs, ais-tree, ais-relaxed: 16 independent AIS runs, temperatures 500×budget (adaptive schedule, 1 sweep each: single-site Gibbs, tree-block Gibbs over the partition of bindings/treeblocks.ts, or block Gibbs on the relaxed joint p_β(x, s) with the default relaxation); pa-gibbs, pa-tree: population annealing, 8 populations of 64×budget particles, 500 temperatures (standard error over the populations); chib: 4 chains × 500×budget Gibbs sweeps; zhang (reference: marginal mode), zhang-eq14 (reference s = 0, eq. 14 as printed), mirror: 4 DHMC chains × 500×budget samples after 500 warm-up',
    models: models.map(({ name, model, exact, exactSource }) => ({ name, variables: model.n, exact, exactSource })),
    rows,
  };
  const file = resultsPath('logz.json'); // a quick run never replaces a full run's file
  writeFileSync(file, JSON.stringify(out, null, 1) + '\n');
  console.log(`wrote ${file}`);
}

await main();
