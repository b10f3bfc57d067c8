// Any y against any x, one line with points per series; either axis may be logarithmic (e.g. an
// error against wall time, both spanning decades).
import { ModelError } from '../core/errors.ts';
import { esc, extent, fmt, frame, legend, linearScale, logScale, niceDomain, PALETTE, polyline, px, svgDocument, xAxis, yAxis, type LegendEntry, type PlotOptions } from './svg.ts';

/** One series: points (x, y) joined in the order given. */
export interface LineSeries {
  /** Legend label. */
  label: string;
  /** The points; non-finite values (and values ≤ 0 on a log axis) are skipped. */
  points: readonly { x: number; y: number }[];
}

/** Options of `plotLines`. */
export interface LinePlotOptions extends PlotOptions {
  /** x-axis label, with its unit (default "x"). */
  xLabel?: string;
  /** y-axis label, with its unit (default "y"). */
  yLabel?: string;
  /** Logarithmic x axis (default false). */
  logX?: boolean;
  /** Logarithmic y axis (default false). */
  logY?: boolean;
  /** Subtitle under the title. */
  subtitle?: string;
}

/** Lines with points, one colour per series, a legend. Returns SVG text. */
export function plotLines(series: readonly LineSeries[], opts: LinePlotOptions = {}): string {
  const ok = (v: number, log: boolean | undefined) => Number.isFinite(v) && (!log || v > 0);
  const pts = series.map((s) => s.points.filter((p) => ok(p.x, opts.logX) && ok(p.y, opts.logY)));
  if (pts.every((p) => p.length === 0)) throw new ModelError('plotLines: no points to plot');
  const f = frame({ ...opts, width: opts.width ?? 680, height: opts.height ?? 420 });
  const xs = pts.flatMap((p) => p.map((q) => q.x)), ys = pts.flatMap((p) => p.map((q) => q.y));
  const scale = (vals: number[], log: boolean | undefined, range: [number, number]) => {
    const [lo, hi] = extent(vals);
    if (!log) return linearScale(niceDomain(lo, hi), range);
    const l0 = Math.floor(Math.log10(lo)), l1 = Math.ceil(Math.log10(hi));
    return logScale([10 ** l0, 10 ** Math.max(l1, l0 + 1)], range);
  };
  const x = scale(xs, opts.logX, [f.left, f.right]), y = scale(ys, opts.logY, [f.bottom, f.top]);
  const parts = [xAxis(f, x, opts.xLabel ?? 'x'), yAxis(f, y, opts.yLabel ?? 'y')];
  const entries: LegendEntry[] = [];
  series.forEach((s, i) => {
    const c = PALETTE[i % PALETTE.length];
    parts.push(`<g class="series" data-label="${esc(s.label)}">`, polyline(pts[i].map((p) => p.x), pts[i].map((p) => p.y), x, y, `stroke="${c}" stroke-width="1.6"`));
    for (const p of pts[i]) parts.push(`<circle class="mark point" data-x="${p.x}" data-y="${p.y}" cx="${px(x(p.x))}" cy="${px(y(p.y))}" r="3" fill="${c}"><title>${esc(s.label)}: ${fmt(p.y)} at ${fmt(p.x)}</title></circle>`);
    parts.push('</g>');
    entries.push({ label: s.label, color: c, kind: 'line' });
  });
  parts.push(legend(f, entries));
  return svgDocument(f, opts.title ?? `${opts.yLabel ?? 'y'} against ${opts.xLabel ?? 'x'}`, parts, opts.subtitle);
}
