// The SVG plots: well-formed documents, the right number of marks, each value drawn where the axis
// ticks say it belongs (the tick labels define the map from data to pixels; every mark is checked
// against it), the CLI's --plot and its errors; then every figure rendered in headless Chromium
// (one launch), parsed there as SVG and saved as a PNG in test/artifacts/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import { infer } from '../bindings/infer.ts';
import { GibbsSampler } from '../bindings/samplers/gibbs.ts';
import { driveChains } from '../bindings/samplers/chains.ts';
import { runAIS } from '../bindings/logz/logz.ts';
import { rankNormalizedRhat } from '../bindings/samplers/diagnostics.ts';
import { plotMarginalHeatmap, plotMarginals, plotTrace, plotLogZ, plotBars, plotLines } from '../bindings/plot/index.ts';
import { logScale, viridis } from '../bindings/plot/svg.ts';

const BIN = fileURLToPath(new URL('../bin/relaxmrf.js', import.meta.url));
const ARTIFACTS = fileURLToPath(new URL('./artifacts/', import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const engine = await loadEngine();
const model = isingLattice({ shape: [6, 8], beta: 0.35, h: 0.05 });
const exact = infer(engine, model, { method: 'exact' });
const gibbs = infer(engine, model, { method: 'gibbs', seed: 3, chains: 4, samples: 2000, burnin: 100 });
const figures: Record<string, string> = {};

/** Attributes of every element with class containing `cls`. */
function elements(svg: string, cls: string): Record<string, string>[] {
  const out: Record<string, string>[] = [];
  for (const m of svg.matchAll(/<(\w+)\s([^>]*?)\/?>/g)) {
    const attrs: Record<string, string> = { tag: m[1] };
    for (const a of m[2].matchAll(/([\w-]+)="([^"]*)"/g)) attrs[a[1]] = a[2];
    if ((attrs.class ?? '').split(' ').includes(cls)) out.push(attrs);
  }
  return out;
}

/** Well-formed XML: every opened element closed in order, one root <svg>. */
function assertWellFormed(svg: string): void {
  assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'), 'root element');
  const stack: string[] = [];
  for (const m of svg.matchAll(/<(\/?)(\w+)[^>]*?(\/?)>/g)) {
    if (m[3] === '/') continue;
    if (m[1] === '/') assert.equal(stack.pop(), m[2], `</${m[2]}> closes the wrong element`);
    else stack.push(m[2]);
  }
  assert.deepEqual(stack, [], 'unclosed elements');
  assert.ok(!/&(?!amp;|lt;|gt;|quot;)/.test(svg), 'unescaped &');
  assert.ok(!/NaN|undefined/.test(svg.replace(/data-[\w-]+="[^"]*"/g, '')), 'NaN or undefined drawn');
}

/** The y (or x) position of a value, from an axis's tick labels (which must lie on a line in data space). */
function axisMap(svg: string, axis: 'x-axis' | 'y-axis', log = false): (v: number) => number {
  const g = svg.slice(svg.indexOf(`class="axis ${axis}"`));
  const ticks = [...g.slice(0, g.indexOf('</g>')).matchAll(/<text class="tick" x="([\d.-]+)" y="([\d.-]+)"[^>]*>([^<]+)<\/text>/g)].map((m) => ({ x: +m[1], y: +m[2], v: Number(m[3]) }));
  assert.ok(ticks.length >= 2, `${axis}: at least two ticks`);
  const t = (v: number) => (log ? Math.log10(v) : v), pos = (k: { x: number; y: number }) => (axis === 'x-axis' ? k.x : k.y);
  const [a, b] = [ticks[0], ticks[ticks.length - 1]];
  const k = (pos(b) - pos(a)) / (t(b.v) - t(a.v));
  for (const tk of ticks) assert.ok(Math.abs(pos(a) + (t(tk.v) - t(a.v)) * k - pos(tk)) < 0.05, `${axis}: tick ${tk.v} off the line`);
  return (v) => pos(a) + (t(v) - t(a.v)) * k;
}

test('heatmap: one cell per variable at its row and column, coloured by its marginal', () => {
  const svg = plotMarginalHeatmap(exact, [6, 8]);
  assertWellFormed(svg);
  const cells = elements(svg, 'cell');
  assert.equal(cells.length, 48);
  const w = Number(cells[0].width) - 0.3;
  // The colour bar's domain: round numbers around the values, within [0, 1].
  const [d0, d1] = elements(svg, 'colorbar')[0]['data-domain'].split(' ').map(Number);
  const values = exact.marginals.map((p) => p[1]);
  assert.ok(d0 >= 0 && d1 <= 1 && d0 <= Math.min(...values) && d1 >= Math.max(...values) && d1 - d0 < 0.5, `domain ${d0} … ${d1}`);
  for (const c of cells) {
    const v = Number(c['data-var']);
    assert.equal(Number(c['data-value']), exact.marginals[v][1]);
    assert.equal(c.fill, viridis((exact.marginals[v][1] - d0) / (d1 - d0)));
    assert.ok(Math.abs(Number(c.x) - Number(cells[0].x) - (v % 8) * w) < 0.02 && Math.abs(Number(c.y) - Number(cells[0].y) - Math.floor(v / 8) * w) < 0.02, `cell ${v} misplaced`);
  }
  assert.throws(() => plotMarginalHeatmap(exact, [5, 8]), /does not match 48 variables/);
  figures.heatmap = plotMarginalHeatmap(gibbs, [6, 8]);
  // Equal values (h = 0: every marginal 1/2 up to rounding) still give a colour bar.
  assertWellFormed(plotMarginalHeatmap({ marginals: Array.from({ length: 4 }, (_, i) => Float64Array.of(0.5, 0.5 + i * 1e-17)) }, [2, 2]));
});

test('marginals with error bars: estimates, ± 2 SE bars and exact values at their heights', () => {
  const svg = plotMarginals(gibbs, { reference: exact.marginals });
  assertWellFormed(svg);
  const est = elements(svg, 'estimate'), ref = elements(svg, 'reference'), bars = elements(svg, 'errorbar');
  assert.equal(est.length, 48);
  assert.equal(ref.length, 48);
  assert.equal(bars.length, 48);
  const y = axisMap(svg, 'y-axis'), x = axisMap(svg, 'x-axis');
  for (const e of est) {
    const v = Number(e['data-var']);
    assert.equal(Number(e['data-value']), gibbs.marginals[v][1]);
    assert.ok(Math.abs(y(gibbs.marginals[v][1]) - Number(e.cy)) < 0.02, `estimate ${v} at the wrong height`);
    assert.ok(Math.abs(x(v) - Number(e.cx)) < 0.02, `estimate ${v} at the wrong x`);
  }
  for (const r of ref) assert.ok(Math.abs(y(exact.marginals[Number(r['data-var'])][1]) - Number(r.cy)) < 0.02);
  bars.forEach((b, v) => assert.ok(Math.abs(Number(b['data-hi']) - Number(b['data-lo']) - 4 * gibbs.marginalStdErr![v][1]) < 1e-12));
  assert.match(svg, /gibbs ± 2 SE/);
  assert.match(svg, /exact/);
  assert.equal(elements(plotMarginals(gibbs, { maxVariables: 10 }), 'estimate').length, 10);
  figures.marginals = svg;
});

test('trace and running mean: one line per chain in each panel, R̂ as diagnostics computes it', () => {
  // Per-chain batch means of the magnetisation (mean of the spins), 40 batches per chain.
  const sampler = new GibbsSampler(engine, model);
  const chains: number[][] = [[], [], [], []];
  driveChains(sampler, { seed: 5, chains: [0, 1, 2, 3], samples: 4000, burnin: 200, batches: 40, chunk: 1000 }, {
    onBatch: (c, sums, len) => chains[c].push(sums.reduce((s, p) => s + 2 * p / len - 1, 0) / model.n),
  });
  sampler.dispose();
  const mExact = exact.marginals.reduce((s, p) => s + (p[1] - p[0]), 0) / model.n;
  const svg = plotTrace(chains, { label: 'magnetisation', reference: mExact });
  assertWellFormed(svg);
  const lines = elements(svg, 'line').filter((l) => l.tag === 'polyline');
  assert.equal(lines.length, 9, 'four traces, four running means, the pooled mean');
  for (const l of lines) assert.equal(l.points.trim().split(' ').length, 40);
  assert.ok(svg.includes(`R̂ = ${rankNormalizedRhat(chains).toFixed(3)}`));
  // The pooled running mean ends at the mean of all batch means, drawn at its height on the lower axis.
  const pooled = lines.find((l) => l.class.includes('pooled'))!;
  const last = pooled.points.trim().split(' ').pop()!.split(',').map(Number);
  const mean = chains.flat().reduce((s, v) => s + v, 0) / 160;
  const lower = svg.slice(svg.lastIndexOf('class="axis y-axis"') - 10);
  assert.ok(Math.abs(axisMap(lower, 'y-axis')(mean) - last[1]) < 0.05);
  figures.trace = svg;
});

test('log Z against time: points at (seconds, estimate) with ± 2 SE bars and the exact line', () => {
  const points = [200, 800, 3200].map((steps) => {
    const r = runAIS(engine, model, { seed: 1, runs: 16, steps });
    return { seconds: r.seconds, logZ: r.logZ, stdErr: r.logZStdErr };
  });
  const svg = plotLogZ([{ label: 'AIS, 16 runs', points }, { label: 'shifted copy', points: points.map((p) => ({ ...p, logZ: p.logZ + 0.05 })) }], { exact: exact.logZ!, logTime: true });
  assertWellFormed(svg);
  const est = elements(svg, 'estimate');
  assert.equal(est.length, 6);
  assert.equal(elements(svg, 'errorbar').length, 6);
  const y = axisMap(svg, 'y-axis'), x = axisMap(svg, 'x-axis', true);
  for (const e of est) {
    assert.ok(Math.abs(y(Number(e['data-value'])) - Number(e.cy)) < 0.02);
    assert.ok(Math.abs(x(Number(e['data-seconds'])) + Number(e['data-dodge']) - Number(e.cx)) < 0.02);
    assert.ok(Math.abs(Number(e['data-dodge'])) <= 6);
  }
  const line = elements(svg, 'exact')[0];
  assert.ok(Math.abs(y(exact.logZ!) - Number(line.y1)) < 0.02);
  figures.logz = svg;
});

test('a log scale whose domain ends at 0 or ∞ (values past the doubles\' range) has no ticks and returns', () => {
  assert.deepEqual(logScale([0, 1], [0, 100]).ticks, []);
  assert.deepEqual(logScale([1, Infinity], [0, 100]).ticks, []);
  assert.deepEqual(logScale([0.1, 10], [0, 100]).ticks, [0.1, 0.2, 0.5, 1, 2, 5, 10]);
});

test('bench bars: one bar per model and implementation, height from zero to the median', () => {
  const bench = JSON.parse(readFileSync(new URL('../bench/results/latest.json', import.meta.url), 'utf8'));
  const groups = bench.gibbs.map((g: { model: string; updatesPerSecond: Record<string, { median: number; min: number; max: number }> }) => ({
    label: g.model,
    values: Object.fromEntries(Object.entries(g.updatesPerSecond).map(([k, v]) => [k, { median: v.median / 1e6, min: v.min / 1e6, max: v.max / 1e6 }])),
  }));
  const svg = plotBars(groups, { unit: 'M site updates / s', title: 'Gibbs sweep: WASM, native C, plain JS', series: [{ key: 'wasm', label: 'WASM' }, { key: 'c', label: 'C -O3' }, { key: 'js', label: 'plain JS' }], ratioOf: 'wasm' });
  assertWellFormed(svg);
  const bars = elements(svg, 'bar');
  assert.equal(bars.length, groups.length * 3);
  const y = axisMap(svg, 'y-axis');
  for (const b of bars) {
    assert.ok(Math.abs(y(Number(b['data-value'])) - Number(b.y)) < 0.02);
    assert.ok(Math.abs(y(0) - (Number(b.y) + Number(b.height))) < 0.03, 'bars start at zero');
  }
  figures.bench = svg;
});

test('lines on log–log axes: every point where both axes put it; non-positive values skipped', () => {
  const a = [0.01, 0.1, 1, 10].map((x) => ({ x, y: 0.3 / Math.sqrt(x) }));
  const b = [0.02, 0.2, 2, 20].map((x) => ({ x, y: 0.05 / x }));
  const svg = plotLines([{ label: 'sampler', points: a }, { label: 'other', points: [...b, { x: 5, y: 0 }] }], { logX: true, logY: true, xLabel: 'seconds', yLabel: 'max marginal error' });
  assertWellFormed(svg);
  const pts = elements(svg, 'point');
  assert.equal(pts.length, 8);
  const x = axisMap(svg, 'x-axis', true), y = axisMap(svg, 'y-axis', true);
  for (const p of pts) {
    assert.ok(Math.abs(x(Number(p['data-x'])) - Number(p.cx)) < 0.02);
    assert.ok(Math.abs(y(Number(p['data-y'])) - Number(p.cy)) < 0.02);
  }
  figures.lines = svg;
});

test('CLI --plot: the heatmap of a lattice, error bars for a file model; bad paths exit 2 after the result', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'relaxmrf-plot-'));
  const run = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  const a = run('infer', 'ising:4x5,beta=0.3', '--plot', join(tmp, 'a.svg'), '--json');
  assert.equal(a.status, 0, a.stderr);
  const j = JSON.parse(a.stdout);
  const cells = elements(readFileSync(join(tmp, 'a.svg'), 'utf8'), 'cell');
  assert.equal(cells.length, 20);
  cells.forEach((c) => assert.equal(Number(c['data-value']), j.marginals[Number(c['data-var'])][1]));
  const b = run('infer', 'ising:7,beta=0.3', '--method', 'gibbs', '--samples', '200', '--plot', join(tmp, 'b.svg'));
  assert.equal(b.status, 0, b.stderr);
  assert.equal(elements(readFileSync(join(tmp, 'b.svg'), 'utf8'), 'errorbar').length, 7);
  const locked = join(tmp, 'locked');
  mkdirSync(locked);
  chmodSync(locked, 0o500);
  // Root writes into a read-only directory; /sys refuses new files even to root.
  const unwritable = process.getuid?.() === 0 ? (existsSync('/sys/kernel') ? '/sys/x.svg' : null) : join(locked, 'x.svg');
  const cases: [string, RegExp][] = [[tmp, /needs|ending in \.svg/], [join(tmp, 'dir.svg'), /is a directory/], [join(tmp, 'missing', 'x.svg'), /does not exist/], [join(tmp, 'x.png'), /ending in \.svg/]];
  mkdirSync(join(tmp, 'dir.svg'));
  if (unwritable) cases.push([unwritable, /permission denied/]);
  for (const [path, why] of cases) {
    const r = run('infer', 'ising:3x3,beta=0.3', '--plot', path);
    assert.equal(r.status, 2, path);
    assert.match(r.stdout, /log Z\s+\S+ \(exact\)/, 'the result is still printed');
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], why);
  }
});

test('every figure renders in headless Chromium as SVG; screenshots in test/artifacts/', { skip: existsSync(CHROMIUM) ? false : `Chromium not found at ${CHROMIUM}`, timeout: 60_000 }, async () => {
  assert.equal(Object.keys(figures).length, 6, 'the earlier tests produced every figure');
  mkdirSync(ARTIFACTS, { recursive: true });
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'], headless: true });
  try {
    const page = await browser.newPage({ deviceScaleFactor: 1.5 });
    for (const [name, svg] of Object.entries(figures)) {
      // Parsed by the browser's XML parser as image/svg+xml: no parser error, the same marks.
      const parsed = await page.evaluate((text) => {
        const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
        return { error: doc.getElementsByTagName('parsererror').length, marks: doc.querySelectorAll('.mark').length, root: doc.documentElement.namespaceURI };
      }, svg);
      assert.equal(parsed.error, 0, `${name}: parser error`);
      assert.equal(parsed.root, 'http://www.w3.org/2000/svg');
      assert.equal(parsed.marks, (svg.match(/class="mark[ "]/g) ?? []).length);
      await page.setContent(`<!doctype html><body style="margin:0;background:#fff">${svg}</body>`);
      const box = await page.locator('svg').boundingBox();
      assert.ok(box && box.width > 300 && box.height > 300, `${name}: rendered size`);
      // Every text label lies inside the figure.
      const outside = await page.evaluate(() => {
        const r = document.querySelector('svg')!.getBoundingClientRect();
        return Array.from(document.querySelectorAll('svg text')).filter((t) => { const b = t.getBoundingClientRect(); return b.left < r.left - 1 || b.right > r.right + 1 || b.top < r.top - 1 || b.bottom > r.bottom + 1; }).map((t) => t.textContent);
      });
      assert.deepEqual(outside, [], `${name}: labels outside the figure`);
      writeFileSync(join(ARTIFACTS, `plot-${name}.svg`), svg);
      await page.locator('svg').screenshot({ path: join(ARTIFACTS, `plot-${name}.png`) });
    }
  } finally {
    await browser.close();
  }
});
