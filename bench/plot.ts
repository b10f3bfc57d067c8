// Figures from the committed bench results (no measuring): the Gibbs sweep in WASM against native C
// and plain JS (results/latest.json), and the log Z estimators' error against time on the glassy
// UAI grids (results/logz.json). Writes SVG files to bench/results/figures/.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { plotBars, plotLogZ, type LogZSeries } from '../bindings/plot/index.ts';

const results = new URL('./results/', import.meta.url);
const out = new URL('./figures/', results);
mkdirSync(out, { recursive: true });
const read = (name: string) => JSON.parse(readFileSync(new URL(name, results), 'utf8'));

interface Stat { median: number; min: number; max: number }
const latest = read('latest.json');
const groups = latest.gibbs.map((g: { model: string; updatesPerSecond: Record<string, Stat> }) => ({
  label: g.model,
  values: Object.fromEntries(Object.entries(g.updatesPerSecond).map(([k, v]) => [k, { median: v.median / 1e6, min: v.min / 1e6, max: v.max / 1e6 }])),
}));
writeFileSync(new URL('gibbs-sweep.svg', out), plotBars(groups, {
  title: `Gibbs sweep: WASM, native C and plain JS (${latest.machine.cpu}, Node ${latest.machine.node})`,
  unit: 'M site updates / s',
  series: [{ key: 'wasm', label: 'WASM' }, { key: 'c', label: 'C (gcc -O3)' }, { key: 'js', label: 'plain JS' }],
  ratioOf: 'wasm',
}));

interface Row { model: string; estimator: string; budget: number; logZ: number; stdErr: number; seconds: number; exact: number }
const logz = read('logz.json');
const labels: Record<string, string> = { 'ais-gibbs': 'AIS, Gibbs', 'ais-tree': 'AIS, tree blocks', 'pa-gibbs': 'PA, Gibbs', 'pa-tree': 'PA, tree blocks' };
for (const model of ['Grids_11', 'Grids_12']) {
  const rows: Row[] = logz.rows.filter((r: Row) => r.model === model && r.estimator in labels);
  const series: LogZSeries[] = Object.keys(labels).map((e) => ({
    label: labels[e],
    points: rows.filter((r) => r.estimator === e).sort((a, b) => a.seconds - b.seconds).map((r) => ({ seconds: r.seconds, logZ: r.logZ, stdErr: r.stdErr })),
  })).filter((s) => s.points.length > 0);
  writeFileSync(new URL(`logz-${model}.svg`, out), plotLogZ(series, { exact: rows[0].exact, error: true, title: `log Z on UAI ${model}: error against time (AIS and population annealing)` }));
}
console.log(`figures written to ${out.pathname}`);
