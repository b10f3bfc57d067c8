// Grouped bars with min–max whiskers: the bench figures (WASM against native C and plain JS).
import { ModelError } from '../core/errors.ts';
import { esc, fmt, frame, legend, linearScale, niceDomain, PALETTE, px, svgDocument, yAxis, type PlotOptions } from './svg.ts';

/** One measured value: the median, and optionally the range of the repetitions. */
export interface Measurement {
  /** The bar's height, in the unit of the y axis. */
  median: number;
  /** Lower end of the whisker (the smallest repetition); no whisker without min and max. */
  min?: number;
  /** Upper end of the whisker (the largest repetition). */
  max?: number;
}

/** One group of bars (e.g. a model), one bar per series name (e.g. "wasm", "c", "js"). */
export interface BarGroup {
  /** Label under the group, e.g. the model. */
  label: string;
  /** One value per series key (a plain number is a median without whiskers); missing keys draw no bar. */
  values: Readonly<Record<string, Measurement | number>>;
}

/** Options of `plotBars`. */
export interface BarPlotOptions extends PlotOptions {
  /** y-axis label, with its unit (default "value"). */
  unit?: string;
  /** Series in drawing order, with legend labels (default: the keys of the first group, as named). */
  series?: readonly {
    /** Key into each group's `values`. */
    key: string;
    /** Legend label. */
    label: string;
  }[];
  /** Print each group's ratio of this series to the others above the group (e.g. "wasm"). */
  ratioOf?: string;
}

/**
 * Grouped vertical bars from 0, whiskers from min to max when given, the median's value on each bar.
 * Returns SVG text.
 */
export function plotBars(groups: readonly BarGroup[], opts: BarPlotOptions = {}): string {
  if (groups.length === 0) throw new ModelError('plotBars: no groups to plot');
  const series = opts.series ?? Object.keys(groups[0].values).map((key) => ({ key, label: key }));
  const m = (g: BarGroup, key: string): Measurement | null => {
    const v = g.values[key];
    return v === undefined ? null : typeof v === 'number' ? { median: v } : v;
  };
  let top = 0;
  for (const g of groups) for (const s of series) {
    const v = m(g, s.key);
    if (v) top = Math.max(top, v.max ?? v.median, v.median);
  }
  const f = frame({ ...opts, width: opts.width ?? 720, height: opts.height ?? 420 }, { bottom: opts.ratioOf ? 76 : 56 });
  const y = linearScale(niceDomain(0, top * 1.08), [f.bottom, f.top]);
  const parts = [yAxis(f, y, opts.unit ?? 'value'), `<line x1="${px(f.left)}" y1="${px(f.bottom)}" x2="${px(f.right)}" y2="${px(f.bottom)}" stroke="#333"/>`];
  const gw = (f.right - f.left) / groups.length, bw = (gw * 0.75) / series.length;
  groups.forEach((g, gi) => {
    const x0 = f.left + gi * gw + gw * 0.125;
    parts.push(`<text class="tick group-label" x="${px(f.left + (gi + 0.5) * gw)}" y="${px(f.bottom + 18)}" text-anchor="middle" fill="#222">${esc(g.label)}</text>`);
    series.forEach((s, si) => {
      const v = m(g, s.key);
      if (!v) return;
      const X = x0 + si * bw, c = PALETTE[si % PALETTE.length];
      parts.push(`<rect class="mark bar" data-group="${gi}" data-series="${s.key}" data-value="${v.median}" x="${px(X + 1)}" y="${px(y(v.median))}" width="${px(bw - 2)}" height="${px(f.bottom - y(v.median))}" fill="${c}"><title>${esc(`${g.label}, ${s.label}`)}: ${fmt(v.median)}</title></rect>`);
      if (v.min !== undefined && v.max !== undefined) parts.push(`<line class="whisker" x1="${px(X + bw / 2)}" x2="${px(X + bw / 2)}" y1="${px(y(v.min))}" y2="${px(y(v.max))}" stroke="#333"/>`);
      parts.push(`<text x="${px(X + bw / 2)}" y="${px(y(v.max ?? v.median) - 4)}" text-anchor="middle" font-size="10" fill="#333">${fmt(v.median, 3)}</text>`);
    });
    if (opts.ratioOf) {
      const base = m(g, opts.ratioOf);
      const others = series.filter((s) => s.key !== opts.ratioOf && m(g, s.key));
      if (base) others.forEach((s, k) => parts.push(`<text class="ratio" x="${px(f.left + (gi + 0.5) * gw)}" y="${px(f.bottom + 34 + 14 * k)}" text-anchor="middle" font-size="11" fill="#555">${esc(`${(base.median / m(g, s.key)!.median).toFixed(2)}× ${s.label}`)}</text>`));
    }
  });
  parts.push(legend(f, series.map((s, i) => ({ label: s.label, color: PALETTE[i % PALETTE.length], kind: 'rect' as const }))));
  return svgDocument(f, opts.title ?? 'Benchmark', parts, opts.ratioOf ? `bars: medians; whiskers: min–max of the repetitions; below: ${series.find((x) => x.key === opts.ratioOf)?.label ?? opts.ratioOf} as a multiple of each other` : 'bars: medians; whiskers: min–max of the repetitions');
}
