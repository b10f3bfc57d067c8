// Parallel tempering against single-site Gibbs at equal wall-clock time on frustrated Zhang grids
// (10×10, a_i ~ c₁N(Σ_j w_ij, 4), w_ij ~ c₂N(0, 4), c₁ = c₂ = 1; bench/zhang-grids.ts):
// `npm run bench:pt` (BENCH_QUICK=1: fewer grids). Per grid: PT with default settings (runTempering:
// 4 chains × 8 replicas, 400 warm-up + 2000 kept sweeps, adaptive ladder), timed; then Gibbs
// (runGibbs, 4 chains, burn-in 1/6 of its sweeps) given the same wall-clock time, from a short
// calibration run of its speed. Reported per grid: RMSE of the marginals p(s_i = 1) against exact
// elimination, the fraction of marginals within 4 reported SE, and PT's log Z error in units of its SE.
import { writeFileSync } from 'node:fs';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { exactInference } from '../bindings/exact/exact.ts';
import { runTempering } from '../bindings/samplers/tempering.ts';
import { runGibbs } from '../bindings/samplers/gibbs.ts';
import type { InferenceResult } from '../bindings/core/result.ts';
import { cpuModel, QUICK, resultsPath } from './common.ts';
import { zhangGrid } from './zhang-grids.ts';

const GRIDS = QUICK ? 3 : 10;
// BENCH_PT_C=4: other coupling scales (c₁ = c₂ = C).
const C = Number(process.env.BENCH_PT_C) > 0 ? Number(process.env.BENCH_PT_C) : 1;
const engine = await loadEngine();

function score(r: InferenceResult, exact: Float64Array[]): { rmse: number; covered: number } {
  let ss = 0, cov = 0;
  r.marginals.forEach((p, v) => {
    const e = p[1] - exact[v][1];
    ss += e * e;
    if (Math.abs(e) <= 4 * r.marginalStdErr![v][1] + 1e-12) cov++;
  });
  return { rmse: Math.sqrt(ss / r.marginals.length), covered: cov / r.marginals.length };
}

const rows = [];
for (let g = 0; g < GRIDS; g++) {
  const model = zhangGrid('frustrated', C, C, 7000 + g);
  const ex = exactInference(engine, model);
  const pt = runTempering(engine, model, { seed: g + 1 });
  const cal = runGibbs(engine, model, { seed: 99, samples: 600, burnin: 0 });
  const sweepsPerSecond = (4 * 600) / cal.seconds;
  const total = Math.max(12, Math.round((sweepsPerSecond * pt.seconds) / 4));
  const gibbs = runGibbs(engine, model, { seed: g + 1, samples: total - Math.round(total / 6), burnin: Math.round(total / 6) });
  const a = score(pt, ex.marginals), b = score(gibbs, ex.marginals);
  const row = {
    grid: 7000 + g,
    ptSeconds: pt.seconds,
    gibbsSeconds: gibbs.seconds,
    gibbsSweepsPerChain: total,
    ptRMSE: a.rmse,
    gibbsRMSE: b.rmse,
    ptCovered: a.covered,
    gibbsCovered: b.covered,
    ptLogZErrorInSE: (pt.logZ! - ex.logZ) / pt.logZStdErr!,
    ptLogZStdErr: pt.logZStdErr,
    swapRateMin: pt.diagnostics.swapRateMin,
    ptWarnings: pt.warnings?.length ?? 0,
    gibbsWarnings: gibbs.warnings?.length ?? 0,
  };
  rows.push(row);
  console.log(JSON.stringify(row));
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const summary = {
  grids: GRIDS,
  medianPtRMSE: median(rows.map((r) => r.ptRMSE)),
  medianGibbsRMSE: median(rows.map((r) => r.gibbsRMSE)),
  maxPtRMSE: Math.max(...rows.map((r) => r.ptRMSE)),
  maxGibbsRMSE: Math.max(...rows.map((r) => r.gibbsRMSE)),
  ptBetter: rows.filter((r) => r.ptRMSE < r.gibbsRMSE).length,
  medianSeconds: median(rows.map((r) => r.ptSeconds)),
};
console.log(summary);
const out = resultsPath(C === 1 ? 'tempering.json' : `tempering-c${C}.json`);
writeFileSync(out, JSON.stringify({ quick: QUICK, c1: C, c2: C, cpu: cpuModel(), summary, rows }, null, 1) + '\n');
console.log(`wrote ${out}`);
