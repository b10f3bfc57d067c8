// Node marginals: a heatmap for lattice models, points with error bars for any model.
import type { InferenceResult } from '../core/result.ts';
import { extent, fmt, frame, legend, linearScale, niceDomain, PALETTE, px, svgDocument, viridis, xAxis, yAxis, type LegendEntry, type PlotOptions } from './svg.ts';
import { ModelError } from '../core/errors.ts';

/** What the marginal plots read: an InferenceResult, or just its marginals (and standard errors). */
export type MarginalsInput = Pick<InferenceResult, 'marginals'> & Partial<Pick<InferenceResult, 'marginalStdErr' | 'method'>>;

/** Options of `plotMarginalHeatmap`. */
export interface HeatmapOptions extends PlotOptions {
  /** The state k whose probability p(x_v = k) is shown (default: each variable's last state, σ = +1 for Ising models). */
  state?: number;
  /** Colour scale's range (default: the values' range widened to round numbers, within [0, 1]). */
  domain?: [number, number];
}

/**
 * A heatmap of p(x_v = k) on a 2-D lattice of `shape` = [rows, cols] (variable v at row ⌊v / cols⌋,
 * column v mod cols: the order of `isingLattice` and `pottsLattice`), with a colour bar.
 * Returns SVG text.
 */
export function plotMarginalHeatmap(r: MarginalsInput, shape: readonly [number, number], opts: HeatmapOptions = {}): string {
  const [rows, cols] = shape;
  if (!(Number.isInteger(rows) && Number.isInteger(cols) && rows > 0 && cols > 0) || rows * cols !== r.marginals.length) {
    throw new ModelError(`plotMarginalHeatmap: shape ${rows}×${cols} does not match ${r.marginals.length} variables`);
  }
  const values = r.marginals.map((m) => stateValue(m, opts.state));
  // The figure fits the lattice: cells are square, at most 520 px across and 440 px down.
  const cell = opts.width || opts.height ? Math.min(((opts.width ?? 640) - 156) / cols, ((opts.height ?? 480) - 100) / rows) : Math.min(520 / cols, 440 / rows, 48);
  const width = opts.width ?? Math.max(360, Math.ceil(cell * cols + 156)), height = opts.height ?? Math.ceil(cell * rows + 100);
  const f = frame({ ...opts, width, height }, { left: 56, right: 100, bottom: 52 });
  const gw = cell * cols, gh = cell * rows;
  const [v0, v1] = extent(values);
  const [d0, d1] = opts.domain ?? niceDomain(Math.max(0, v0), Math.min(1, v1), 4);
  const t = (v: number) => (d1 === d0 ? 0 : (v - d0) / (d1 - d0));
  const parts: string[] = [`<g class="cells">`];
  for (let v = 0; v < values.length; v++) {
    const i = Math.floor(v / cols), j = v % cols;
    parts.push(`<rect class="mark cell" data-var="${v}" data-row="${i}" data-col="${j}" data-value="${values[v]}" x="${px(f.left + j * cell)}" y="${px(f.top + i * cell)}" width="${px(cell + 0.3)}" height="${px(cell + 0.3)}" fill="${viridis(t(values[v]))}"><title>x${v} (row ${i}, column ${j}): ${fmt(values[v])}</title></rect>`);
  }
  parts.push('</g>', `<rect x="${px(f.left)}" y="${px(f.top)}" width="${px(gw)}" height="${px(gh)}" fill="none" stroke="#333"/>`);
  // Row and column ticks at round indices.
  const colScale = linearScale([0, cols], [f.left, f.left + gw], Math.min(cols, 8));
  const rowScale = linearScale([0, rows], [f.top, f.top + gh], Math.min(rows, 8));
  for (const c of colScale.ticks.filter((c) => c < cols)) parts.push(`<text class="tick" x="${px(colScale(c + 0.5))}" y="${px(f.top + gh + 16)}" text-anchor="middle" fill="#333">${c}</text>`);
  for (const rr of rowScale.ticks.filter((rr) => rr < rows)) parts.push(`<text class="tick" x="${px(f.left - 6)}" y="${px(rowScale(rr + 0.5))}" dy="0.32em" text-anchor="end" fill="#333">${rr}</text>`);
  parts.push(`<text class="axis-label" x="${px(f.left + gw / 2)}" y="${px(f.top + gh + 36)}" text-anchor="middle" font-size="13" fill="#222">column</text>`);
  parts.push(`<text class="axis-label" x="${px(f.left - 36)}" y="${px(f.top + gh / 2)}" transform="rotate(-90 ${px(f.left - 36)} ${px(f.top + gh / 2)})" text-anchor="middle" font-size="13" fill="#222">row</text>`);
  // Colour bar: 50 stripes, ticks on the right.
  const bx = f.left + gw + 24, bw = 16, bh = gh;
  const stripes: string[] = [`<g class="colorbar" data-domain="${d0} ${d1}">`];
  for (let s = 0; s < 50; s++) stripes.push(`<rect x="${px(bx)}" y="${px(f.top + (bh * (49 - s)) / 50)}" width="${bw}" height="${px(bh / 50 + 0.5)}" fill="${viridis((s + 0.5) / 50)}"/>`);
  stripes.push(`<rect x="${px(bx)}" y="${px(f.top)}" width="${bw}" height="${px(bh)}" fill="none" stroke="#333"/>`);
  const bar = linearScale([d0, d1], [f.top + bh, f.top], 5);
  for (const tk of bar.ticks) stripes.push(`<line x1="${px(bx + bw)}" y1="${px(bar(tk))}" x2="${px(bx + bw + 4)}" y2="${px(bar(tk))}" stroke="#333"/><text class="tick" x="${px(bx + bw + 7)}" y="${px(bar(tk))}" dy="0.32em" fill="#333">${fmt(tk)}</text>`);
  stripes.push('</g>');
  parts.push(...stripes);
  const k = opts.state === undefined ? 'last state' : `state ${opts.state}`;
  const title = opts.title ?? `Node marginals p(x = ${k})${r.method ? ` — ${r.method}` : ''}`;
  return svgDocument(f, title, parts, `${rows} × ${cols} lattice; values ${fmt(v0, 3)} … ${fmt(v1, 3)}`);
}

/** Options of `plotMarginals`. */
export interface MarginalBarsOptions extends PlotOptions {
  /** The state k whose probability is shown (default: each variable's last state). */
  state?: number;
  /** Exact (or reference) marginals drawn beside the estimates as hollow circles. */
  reference?: readonly ArrayLike<number>[];
  /** Label of the reference in the legend (default "exact"). */
  referenceLabel?: string;
  /** Error bars of ± this many standard errors (default 2). */
  errorBarSE?: number;
  /** At most this many variables, the first ones (default 100). */
  maxVariables?: number;
}

/**
 * p(x_v = k) for each variable v with error bars of ± `errorBarSE` Monte Carlo standard errors
 * (when the result has them) and, optionally, reference values. Returns SVG text.
 */
export function plotMarginals(r: MarginalsInput, opts: MarginalBarsOptions = {}): string {
  const n = Math.min(r.marginals.length, opts.maxVariables ?? 100);
  if (n === 0) throw new ModelError('plotMarginals: the result has no variables to plot');
  const z = opts.errorBarSE ?? 2;
  // A state no variable has drew every mark at NaN; a short reference threw a TypeError.
  if (opts.state !== undefined && !r.marginals.slice(0, n).some((row) => opts.state! < row.length)) throw new ModelError(`plotMarginals: no variable has state ${opts.state} (the states are 0…${Math.max(...r.marginals.slice(0, n).map((row) => row.length)) - 1})`);
  if (opts.reference && opts.reference.length < n) throw new ModelError(`plotMarginals: the reference has ${opts.reference.length} rows, the plot ${n} variables`);
  const p = Float64Array.from({ length: n }, (_, v) => stateValue(r.marginals[v], opts.state));
  const se = r.marginalStdErr ? Float64Array.from({ length: n }, (_, v) => stateValue(r.marginalStdErr![v], opts.state, r.marginals[v].length)) : null;
  const ref = opts.reference ? Float64Array.from({ length: n }, (_, v) => stateValue(opts.reference![v], opts.state)) : null;
  const f = frame({ ...opts, width: opts.width ?? 720, height: opts.height ?? 400 });
  const x = linearScale([-0.5, n - 0.5], [f.left, f.right], Math.min(n, 10));
  x.ticks = x.ticks.filter((t) => Number.isInteger(t) && t >= 0 && t < n);
  const lo = se ? p.map((v, i) => v - z * se[i]) : p, hi = se ? p.map((v, i) => v + z * se[i]) : p;
  const [e0, e1] = extent(lo, hi, ref ?? []);
  const y = linearScale(niceDomain(Math.max(0, e0), Math.min(1, e1)), [f.bottom, f.top]);
  const parts = [xAxis(f, x, 'variable'), yAxis(f, y, `p(x = ${opts.state ?? 'last state'})`)];
  const color = PALETTE[0], refColor = PALETTE[3];
  const w = Math.max(1, Math.min(4, (0.3 * (f.right - f.left)) / n));
  parts.push('<g class="marks">');
  for (let v = 0; v < n; v++) {
    const X = x(v);
    if (se && Number.isFinite(se[v])) parts.push(`<g class="errorbar" data-var="${v}" data-lo="${lo[v]}" data-hi="${hi[v]}"><line x1="${px(X)}" y1="${px(y(lo[v]))}" x2="${px(X)}" y2="${px(y(hi[v]))}" stroke="${color}" stroke-width="1.2"/><line x1="${px(X - w)}" y1="${px(y(lo[v]))}" x2="${px(X + w)}" y2="${px(y(lo[v]))}" stroke="${color}"/><line x1="${px(X - w)}" y1="${px(y(hi[v]))}" x2="${px(X + w)}" y2="${px(y(hi[v]))}" stroke="${color}"/></g>`);
    parts.push(`<circle class="mark estimate" data-var="${v}" data-value="${p[v]}" cx="${px(X)}" cy="${px(y(p[v]))}" r="${n > 60 ? 2.2 : 3.2}" fill="${color}"><title>x${v}: ${fmt(p[v])}${se ? ` ± ${fmt(se[v], 2)}` : ''}</title></circle>`);
    if (ref) parts.push(`<circle class="mark reference" data-var="${v}" data-value="${ref[v]}" cx="${px(X)}" cy="${px(y(ref[v]))}" r="${n > 60 ? 3 : 4.5}" fill="none" stroke="${refColor}" stroke-width="1.5"/>`);
  }
  parts.push('</g>');
  const entries: LegendEntry[] = [{ label: se ? `${r.method ?? 'estimate'} ± ${z} SE` : r.method ?? 'estimate', color, kind: 'point' }];
  if (ref) entries.push({ label: opts.referenceLabel ?? 'exact', color: refColor, kind: 'hollow' });
  parts.push(legend(f, entries));
  const more = r.marginals.length > n ? ` (first ${n} of ${r.marginals.length} variables)` : '';
  return svgDocument(f, opts.title ?? `Node marginals${r.method ? ` — ${r.method}` : ''}`, parts, `p(x_v = ${opts.state ?? 'last state'}) per variable${more}`);
}

/** Entry `state` of a row (default its last), or of a standard-error row of `card` entries. */
function stateValue(row: ArrayLike<number>, state: number | undefined, card = row.length): number {
  const k = state ?? card - 1;
  if (!(Number.isInteger(k) && k >= 0)) throw new ModelError(`plot: state must be an integer ≥ 0, got ${state}`);
  return k < row.length ? row[k] : NaN;
}

/**
 * The marginal plot that suits a result: the heatmap when `shape` is a 2-D lattice shape
 * ([rows, cols]), otherwise points with error bars. Returns SVG text.
 */
export function plotResult(r: MarginalsInput, opts: { shape?: readonly number[]; reference?: readonly ArrayLike<number>[] } & PlotOptions = {}): string {
  const { shape, ...rest } = opts;
  if (shape && shape.length === 2 && shape[0] > 1 && shape[1] > 1) return plotMarginalHeatmap(r, [shape[0], shape[1]], rest);
  return plotMarginals(r, rest);
}
