// log Z estimates ± standard error against time, one series per estimator.
import { ModelError } from '../core/errors.ts';
import { esc, extent, fmt, frame, legend, linearScale, logScale, niceDomain, PALETTE, polyline, px, svgDocument, xAxis, yAxis, type LegendEntry, type PlotOptions } from './svg.ts';

/** One estimate: wall time in seconds, the natural-log estimate and its standard error (nats). */
export interface LogZPoint {
  /** Wall time of the run that gave the estimate, in seconds (> 0 on a log time axis). */
  seconds: number;
  /** The estimate of the natural log of the partition function (nats). */
  logZ: number;
  /** Its standard error in nats, or null (no error bar). */
  stdErr: number | null;
}

/** One estimator's estimates at increasing budgets, drawn in one colour. */
export interface LogZSeries {
  /** Legend label, e.g. "AIS, 16 runs". */
  label: string;
  /** The estimates, in any order (joined by a line in the order given). */
  points: readonly LogZPoint[];
}

/** Options of `plotLogZ`. */
export interface LogZPlotOptions extends PlotOptions {
  /** The exact log Z (or a published value), drawn as a dashed line. */
  exact?: number;
  /** Error bars of ± this many standard errors (default 2). */
  errorBarSE?: number;
  /** Logarithmic time axis (default: when the times span more than a factor of 10). */
  logTime?: boolean;
  /** Plot estimate − exact instead of the estimate (needs `exact`; default false). */
  error?: boolean;
}

/**
 * Each series' log Z estimates against wall time, with ± `errorBarSE` standard-error bars and the
 * exact value as a dashed line. Returns SVG text.
 */
export function plotLogZ(series: readonly LogZSeries[], opts: LogZPlotOptions = {}): string {
  const pts = series.flatMap((s) => s.points);
  if (pts.length === 0) throw new ModelError('plotLogZ: no estimates to plot');
  if (opts.error && opts.exact === undefined) throw new ModelError('plotLogZ: error: true needs exact');
  const z = opts.errorBarSE ?? 2;
  const shift = opts.error ? opts.exact! : 0;
  const t = pts.map((p) => p.seconds).filter((s) => s > 0);
  const [t0, t1] = extent(t);
  const useLog = opts.logTime ?? t1 > 10 * t0;
  const f = frame({ ...opts, width: opts.width ?? 680, height: opts.height ?? 420 });
  const x = useLog ? logScale(logDomain(t0, t1), [f.left, f.right]) : linearScale(niceDomain(0, t1), [f.left, f.right]);
  // Series at the same times are set apart by a few pixels so their error bars do not overlap.
  const dodge = (i: number) => (i - (series.length - 1) / 2) * Math.min(6, 24 / series.length);
  const lows = pts.map((p) => p.logZ - shift - z * (p.stdErr ?? 0)), highs = pts.map((p) => p.logZ - shift + z * (p.stdErr ?? 0));
  const y = linearScale(niceDomain(...extent(lows, highs, opts.exact !== undefined ? [opts.exact - shift] : [])), [f.bottom, f.top]);
  const parts = [xAxis(f, x, 'wall time (s)'), yAxis(f, y, opts.error ? 'log Z estimate − exact (nats)' : 'log Z (nats)')];
  const entries: LegendEntry[] = [];
  if (opts.exact !== undefined) {
    parts.push(`<line class="exact" data-value="${opts.exact}" x1="${px(f.left)}" x2="${px(f.right)}" y1="${px(y(opts.exact - shift))}" y2="${px(y(opts.exact - shift))}" stroke="#333" stroke-width="1.5" stroke-dasharray="6 4"/>`);
    entries.push({ label: `exact ${fmt(opts.exact, 8)}`, color: '#333', kind: 'dashed' });
  }
  series.forEach((s, i) => {
    const c = PALETTE[i % PALETTE.length];
    const ok = s.points.filter((p) => p.seconds > 0 || !useLog);
    parts.push(`<g class="series" data-label="${esc(s.label)}">`);
    parts.push(`<g transform="translate(${px(dodge(i))} 0)">`, polyline(ok.map((p) => p.seconds), ok.map((p) => p.logZ - shift), x, y, `stroke="${c}" stroke-width="1.5" stroke-opacity="0.6"`), '</g>');
    for (const p of ok) {
      const X = px(x(p.seconds) + dodge(i));
      if (p.stdErr !== null && Number.isFinite(p.stdErr)) parts.push(`<line class="errorbar" x1="${X}" x2="${X}" y1="${px(y(p.logZ - shift - z * p.stdErr))}" y2="${px(y(p.logZ - shift + z * p.stdErr))}" stroke="${c}" stroke-width="1.5"/>`);
      parts.push(`<circle class="mark estimate" data-seconds="${p.seconds}" data-dodge="${dodge(i)}" data-value="${p.logZ}" data-stderr="${p.stdErr}" cx="${X}" cy="${px(y(p.logZ - shift))}" r="3.5" fill="${c}"><title>${esc(s.label)}: ${fmt(p.logZ, 8)} ± ${p.stdErr === null ? '—' : fmt(p.stdErr, 2)} at ${fmt(p.seconds, 3)} s</title></circle>`);
    }
    parts.push('</g>');
    entries.push({ label: s.label, color: c, kind: 'point' });
  });
  parts.push(legend(f, entries));
  return svgDocument(f, opts.title ?? 'log Z estimates against time', parts, `error bars ± ${z} standard errors${useLog ? '; time on a log scale' : ''}`);
}

/** Round log-axis ends: 1, 2 or 5 × 10^k just outside [t0, t1]. */
function logDomain(t0: number, t1: number): [number, number] {
  const steps = (e: number) => [1, 2, 5].map((m) => m * 10 ** e);
  const e0 = Math.floor(Math.log10(t0)), e1 = Math.floor(Math.log10(t1));
  const lo = [...steps(e0)].reverse().find((v) => v <= t0 * (1 + 1e-9)) ?? 10 ** e0;
  const hi = [...steps(e1), 10 ** (e1 + 1)].find((v) => v >= t1 * (1 - 1e-9)) ?? 10 ** (e1 + 1);
  return [lo, hi];
}
