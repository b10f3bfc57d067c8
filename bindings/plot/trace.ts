// Sampler traces: one series per chain, and each chain's running mean, with R̂ and ESS.
import { ess, rankNormalizedRhat } from '../samplers/diagnostics.ts';
import { ModelError } from '../core/errors.ts';
import { extent, fmt, frame, linearScale, niceDomain, PALETTE, polyline, px, svgDocument, xAxis, yAxis, legendRow, type Frame, type LegendEntry, type PlotOptions, type Scale } from './svg.ts';

/** Options of `plotTrace`. */
export interface TraceOptions extends PlotOptions {
  /** Name of the quantity on the y axis (default "value"). */
  label?: string;
  /** What one point of a chain is, for the x axis (default "batch": batch means of a sampler). */
  xLabel?: string;
  /** Reference value drawn as a dashed line (e.g. the exact expectation). */
  reference?: number;
}

/**
 * Two panels over `chains[c][i]` (chain c, point i — per-iteration draws or per-batch means):
 * the trace of every chain, and every chain's running mean with the pooled running mean. The
 * subtitle gives the rank-normalised split-R̂ and the ESS of the series (computed over the points
 * given: for batch means, an ESS in batches). Chains of unequal length are cut to the shortest.
 * Returns SVG text.
 */
export function plotTrace(chains: readonly ArrayLike<number>[], opts: TraceOptions = {}): string {
  const N = Math.min(...chains.map((c) => c.length));
  if (chains.length === 0 || !(N > 0)) throw new ModelError('plotTrace: no chains, or a chain with no points');
  const cut = chains.map((c) => Float64Array.from({ length: N }, (_, i) => c[i]));
  const running = cut.map(runningMean);
  const pooled = runningMean(Float64Array.from({ length: N }, (_, i) => cut.reduce((s, c) => s + c[i], 0) / cut.length));
  const width = opts.width ?? 720, height = opts.height ?? 520;
  const outer = frame({ ...opts, width, height }, { left: 70, right: 20, top: 66, bottom: 52 });
  const gap = 72, panelH = (outer.bottom - outer.top - gap) / 2;
  const top: Frame = { ...outer, bottom: outer.top + panelH };
  const bottom: Frame = { ...outer, top: outer.top + panelH + gap };
  const xs = Float64Array.from({ length: N }, (_, i) => i + 1);
  const x1 = linearScale([1, Math.max(2, N)], [outer.left, outer.right]);
  const label = opts.label ?? 'value', xl = opts.xLabel ?? 'batch';
  const refs = opts.reference !== undefined ? [opts.reference] : [];
  const yTop = linearScale(niceDomain(...extent(...cut, refs)), [top.bottom, top.top]);
  const yBot = linearScale(niceDomain(...extent(...running, refs)), [bottom.bottom, bottom.top]);
  const parts: string[] = [];
  const panel = (f: Frame, y: Scale, series: Float64Array[], name: string, extra: string[]) => {
    parts.push(xAxis(f, x1, xl), yAxis(f, y, name));
    parts.push(`<g class="series ${name === label ? 'trace' : 'running-mean'}">`);
    series.forEach((s, c) => parts.push(polyline(xs, s, x1, y, `class="mark line" data-chain="${c}" data-points="${N}" stroke="${PALETTE[c % PALETTE.length]}" stroke-width="1.4" stroke-opacity="0.9"`)));
    parts.push(...extra, '</g>');
    if (opts.reference !== undefined) parts.push(`<line class="reference" x1="${px(f.left)}" x2="${px(f.right)}" y1="${px(y(opts.reference))}" y2="${px(y(opts.reference))}" stroke="#333" stroke-dasharray="5 3"/>`);
  };
  panel(top, yTop, cut, label, []);
  panel(bottom, yBot, running, `running mean`, [polyline(xs, pooled, x1, yBot, `class="mark line pooled" data-points="${N}" stroke="#000" stroke-width="2.2"`)]);
  const entries: LegendEntry[] = cut.slice(0, 8).map((_, c) => ({ label: `chain ${c}`, color: PALETTE[c % PALETTE.length], kind: 'line' }));
  if (cut.length > 8) entries.push({ label: `… ${cut.length} chains`, color: '#999', kind: 'line' });
  parts.push(legendRow(top, entries));
  parts.push(legendRow(bottom, [{ label: 'all chains', color: '#000', kind: 'line' }, ...(opts.reference !== undefined ? [{ label: 'reference', color: '#333', kind: 'dashed' as const }] : [])]));
  const rhat = cut.length >= 1 && N >= 4 ? rankNormalizedRhat(cut) : NaN;
  const e = N >= 4 ? ess(cut) : NaN;
  const sub = `R̂ = ${Number.isFinite(rhat) ? rhat.toFixed(3) : '—'} · ESS = ${Number.isFinite(e) ? fmt(e, 3) : '—'} of ${cut.length} × ${N} ${xl === 'batch' ? 'batch means' : 'points'} · mean = ${fmt(pooled[N - 1])}`;
  return svgDocument(outer, opts.title ?? `Trace and running mean of ${label}`, parts, sub);
}

function runningMean(s: Float64Array): Float64Array {
  const out = new Float64Array(s.length);
  let sum = 0;
  for (let i = 0; i < s.length; i++) out[i] = (sum += s[i]) / (i + 1);
  return out;
}
