// npm run bench:exact-thin: exact inference on long, thin models — chains and strips of width 2, 4, 8
// and 10 (treewidth = width), the kind a user expects exact inference to finish at once. Their
// contraction work is small (about n · 2^(width+1) configurations), so the time per variable shows
// the time around the kernels (planning, the tree, and bucket elimination's per-clique set-up), not the
// kernels. Both executors: the junction tree (what auto takes on these) and bucket elimination.
// Wall time per call, median of 3 after one warm-up call, in one process; µs per variable.
import { writeFileSync } from 'node:fs';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { exactInference } from '../bindings/exact/exact.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import { QUICK, cpuModel, resultsPath } from './common.ts';

const SHAPES: [number, number][] = QUICK ? [[2000, 1], [500, 4]] : [[10000, 1], [100000, 1], [5000, 2], [10000, 4], [40000, 4], [2000, 10], [12500, 8]];
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const engine = await loadEngine();
const rows: Record<string, unknown>[] = [];
console.log('| model | variables | treewidth | method | algorithm | seconds per call | µs per variable | configurations streamed |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const [length, width] of SHAPES) {
  const model = isingLattice({ shape: width === 1 ? [length] : [length, width], J: (i, j) => Math.sin(i + 7 * j) / 2, h: 0.1 });
  let logZ = NaN;
  for (const method of ['auto', 'bucket'] as const) {
    exactInference(engine, model, { method });
    const times: number[] = [];
    let r = exactInference(engine, model, { method });
    for (let k = 0; k < (QUICK ? 1 : 3); k++) {
      const t0 = performance.now();
      r = exactInference(engine, model, { method });
      times.push((performance.now() - t0) / 1000);
    }
    // The two executors must agree before their times mean anything.
    if (Number.isNaN(logZ)) logZ = r.logZ;
    else if (Math.abs(r.logZ - logZ) > 1e-9 * Math.abs(logZ)) throw new Error(`${length}×${width}: log Z ${r.logZ} (${method}) against ${logZ}`);
    const s = median(times);
    rows.push({ length, width, n: model.n, treewidth: r.treewidth, method, algorithm: r.algorithm, seconds: s, usPerVariable: (1e6 * s) / model.n, flops: r.flops });
    console.log(`| ${width === 1 ? `chain ${length}` : `strip ${length}×${width}`} | ${model.n} | ${r.treewidth} | ${method} | ${r.algorithm} | ${s.toFixed(3)} | ${((1e6 * s) / model.n).toFixed(1)} | ${r.flops.toExponential(2)} |`);
  }
}
const out = resultsPath('exact-thin.json');
writeFileSync(out, JSON.stringify({ quick: QUICK, date: new Date().toISOString(), cpu: cpuModel(), node: process.version, rows }, null, 2));
console.log(`\nwrote ${out}`);
