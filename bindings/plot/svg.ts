// The drawing kit every plot shares: linear and log scales with round ticks, axes with labels, a
// legend, colours, and the SVG document. Strings only (no DOM), so it runs in Node and browsers.
// Every data mark carries class "mark" and data-* attributes with the value it shows, which the
// tests use to check that values are drawn where they belong.

/** Colour-blind-safe categorical colours (Okabe & Ito), in the order series use them. */
export const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#D55E00', '#CC79A7', '#56B4E9', '#F0E442', '#000000'] as const;

/** Size and title shared by every plot function's options. */
export interface PlotOptions {
  /** Width of the figure in CSS pixels (default 640). */
  width?: number;
  /** Height of the figure in CSS pixels (default 400). */
  height?: number;
  /** Title drawn above the plot (each plot has its own default). */
  title?: string;
}

/** Escapes text for SVG content and attribute values. */
export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A number with at most `digits` significant digits and no trailing zeros (tick labels, read-outs). */
export function fmt(x: number, digits = 4): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a >= 1e5 || a < 1e-3) return x.toExponential(Math.max(0, digits - 2)).replace(/\.?0+e/, 'e');
  return String(Number(x.toPrecision(digits)));
}

/** Coordinates rounded to 0.01 px: short files, no visible difference. */
export function px(x: number): string {
  return String(Math.round(x * 100) / 100);
}

/** A map from data to pixels. */
export interface Scale {
  (x: number): number;
  domain: [number, number];
  range: [number, number];
  ticks: number[];
  log: boolean;
}

/** Round tick values covering [lo, hi]: steps of 1, 2 or 5 × 10^k, about `count` of them. */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  // By integer index, so steps far below the values' own precision cannot stall the loop.
  const i0 = Math.ceil(lo / step - 1e-9), i1 = Math.floor(hi / step + 1e-9);
  if (!(i1 - i0 < 1000)) return [lo, hi];
  const out: number[] = [];
  for (let i = i0; i <= i1; i++) out.push(i === 0 ? 0 : Number((i * step).toPrecision(12)));
  return out;
}

/** [lo, hi] widened to round ticks at both ends (and a little room when lo = hi). */
export function niceDomain(lo: number, hi: number, count = 5): [number, number] {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [0, 1];
  if (hi - lo <= 1e-9 * Math.max(Math.abs(lo), Math.abs(hi))) {
    const d = lo === 0 ? 1 : Math.abs(lo) * 0.1;
    lo -= d;
    hi += d;
  }
  const t = niceTicks(lo, hi, count);
  const step = t.length > 1 ? t[1] - t[0] : hi - lo;
  return [Math.min(lo, t[0] > lo ? t[0] - step : t[0]), Math.max(hi, t[t.length - 1] < hi ? t[t.length - 1] + step : t[t.length - 1])];
}

export function linearScale(domain: [number, number], range: [number, number], count = 5): Scale {
  const [d0, d1] = domain, [r0, r1] = range;
  const k = d1 === d0 ? 0 : (r1 - r0) / (d1 - d0);
  const f = ((x: number) => r0 + (x - d0) * k) as Scale;
  f.domain = domain;
  f.range = range;
  f.ticks = niceTicks(d0, d1, count).filter((t) => t >= d0 - 1e-12 * Math.abs(d1 - d0) && t <= d1 + 1e-12 * Math.abs(d1 - d0));
  f.log = false;
  return f;
}

/** Base-10 log scale; ticks at powers of ten (and 2, 5 × when the domain spans under three decades). */
export function logScale(domain: [number, number], range: [number, number]): Scale {
  const l0 = Math.log10(domain[0]), l1 = Math.log10(domain[1]);
  const [r0, r1] = range;
  const k = l1 === l0 ? 0 : (r1 - r0) / (l1 - l0);
  const f = ((x: number) => r0 + (Math.log10(x) - l0) * k) as Scale;
  f.domain = domain;
  f.range = range;
  const ticks: number[] = [];
  const mult = l1 - l0 < 3 ? [1, 2, 5] : [1];
  // A domain end of 0 or ∞ (a value past the doubles' range) has no decades to count: no ticks,
  // where the loop ran on, pushing until the array's length was invalid.
  if (Number.isFinite(l0) && Number.isFinite(l1)) for (let e = Math.floor(l0); e <= Math.ceil(l1); e++) for (const m of mult) {
    const t = m * 10 ** e;
    if (t >= domain[0] * (1 - 1e-9) && t <= domain[1] * (1 + 1e-9)) ticks.push(Number(t.toPrecision(6)));
  }
  f.ticks = ticks;
  f.log = true;
  return f;
}

/** The plotting area inside the margins. */
export interface Frame {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

export function frame(o: PlotOptions, margins: { left?: number; right?: number; top?: number; bottom?: number } = {}): Frame {
  const width = o.width ?? 640, height = o.height ?? 400;
  return { width, height, left: margins.left ?? 70, right: width - (margins.right ?? 20), top: margins.top ?? 48, bottom: height - (margins.bottom ?? 52) };
}

const FONT = 'font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"';

/** The whole SVG document: white background, title, then the parts. */
export function svgDocument(f: Frame, title: string, parts: string[], subtitle?: string): string {
  const head = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${f.width}" height="${f.height}" viewBox="0 0 ${f.width} ${f.height}" ${FONT} font-size="12">`,
    `<title>${esc(title)}</title>`,
    `<rect class="background" x="0" y="0" width="${f.width}" height="${f.height}" fill="#ffffff"/>`,
    `<text class="title" x="${px(f.left)}" y="20" font-size="${fitFont(title, 15, 8.6, f.width - f.left - 8)}" font-weight="600" fill="#222">${esc(title)}</text>`,
  ];
  if (subtitle) head.push(`<text class="subtitle" x="${px(f.left)}" y="37" font-size="${fitFont(subtitle, 12, 6.4, f.width - f.left - 8)}" fill="#555">${esc(subtitle)}</text>`);
  return [...head, ...parts, '</svg>'].join('\n') + '\n';
}

/** A font size at most `size` at which `text` (about `perChar` px a character at `size`) fits in `room` px. */
function fitFont(text: string, size: number, perChar: number, room: number): number {
  const need = text.length * perChar;
  return need <= room ? size : Math.max(8, Math.floor((size * room) / need * 10) / 10);
}

/** x axis at the bottom of the frame: line, ticks, labels, light grid lines, axis title. */
export function xAxis(f: Frame, x: Scale, label: string, opts: { grid?: boolean; tickLabel?: (t: number) => string } = {}): string {
  const out = [`<g class="axis x-axis">`, `<line x1="${px(f.left)}" y1="${px(f.bottom)}" x2="${px(f.right)}" y2="${px(f.bottom)}" stroke="#333"/>`];
  for (const t of x.ticks) {
    const X = px(x(t));
    if (opts.grid !== false) out.push(`<line class="grid" x1="${X}" y1="${px(f.top)}" x2="${X}" y2="${px(f.bottom)}" stroke="#e6e6e6"/>`);
    out.push(`<line x1="${X}" y1="${px(f.bottom)}" x2="${X}" y2="${px(f.bottom + 5)}" stroke="#333"/>`);
    out.push(`<text class="tick" x="${X}" y="${px(f.bottom + 18)}" text-anchor="middle" fill="#333">${esc((opts.tickLabel ?? fmt)(t))}</text>`);
  }
  out.push(`<text class="axis-label" x="${px((f.left + f.right) / 2)}" y="${px(f.bottom + 40)}" text-anchor="middle" font-size="13" fill="#222">${esc(label)}</text>`, '</g>');
  return out.join('\n');
}

/** y axis on the left of the frame. */
export function yAxis(f: Frame, y: Scale, label: string, opts: { grid?: boolean } = {}): string {
  const out = [`<g class="axis y-axis">`, `<line x1="${px(f.left)}" y1="${px(f.top)}" x2="${px(f.left)}" y2="${px(f.bottom)}" stroke="#333"/>`];
  for (const t of y.ticks) {
    const Y = px(y(t));
    if (opts.grid !== false) out.push(`<line class="grid" x1="${px(f.left)}" y1="${Y}" x2="${px(f.right)}" y2="${Y}" stroke="#e6e6e6"/>`);
    out.push(`<line x1="${px(f.left - 5)}" y1="${Y}" x2="${px(f.left)}" y2="${Y}" stroke="#333"/>`);
    out.push(`<text class="tick" x="${px(f.left - 8)}" y="${Y}" dy="0.32em" text-anchor="end" fill="#333">${esc(fmt(t))}</text>`);
  }
  const cx = f.left - 52, cy = (f.top + f.bottom) / 2;
  out.push(`<text class="axis-label" x="${px(cx)}" y="${px(cy)}" transform="rotate(-90 ${px(cx)} ${px(cy)})" text-anchor="middle" font-size="13" fill="#222">${esc(label)}</text>`, '</g>');
  return out.join('\n');
}

export interface LegendEntry {
  label: string;
  color: string;
  /** How the entry's swatch is drawn. */
  kind: 'line' | 'dashed' | 'point' | 'hollow' | 'rect';
}

function swatch(e: LegendEntry, x: number, y: number): string {
  if (e.kind === 'line' || e.kind === 'dashed') return `<line x1="${px(x)}" y1="${px(y)}" x2="${px(x + 20)}" y2="${px(y)}" stroke="${e.color}" stroke-width="2"${e.kind === 'dashed' ? ' stroke-dasharray="5 3"' : ''}/>`;
  if (e.kind === 'rect') return `<rect x="${px(x + 4)}" y="${px(y - 6)}" width="12" height="12" fill="${e.color}"/>`;
  return `<circle cx="${px(x + 10)}" cy="${px(y)}" r="4" fill="${e.kind === 'hollow' ? '#ffffff' : e.color}" stroke="${e.color}" stroke-width="1.5"/>`;
}

/** A legend in one row just above the frame, right-aligned (it covers no data). */
export function legendRow(f: Frame, entries: LegendEntry[]): string {
  if (entries.length === 0) return '';
  const widths = entries.map((e) => e.label.length * 6.6 + 38);
  let x = f.right - widths.reduce((a, b) => a + b, 0);
  const y = f.top - 9;
  const out = [`<g class="legend">`];
  entries.forEach((e, i) => {
    out.push(swatch(e, x, y), `<text x="${px(x + 26)}" y="${px(y)}" dy="0.32em" fill="#222">${esc(e.label)}</text>`);
    x += widths[i];
  });
  out.push('</g>');
  return out.join('\n');
}

/** A legend box in the top-right corner of the frame (inside it). */
export function legend(f: Frame, entries: LegendEntry[]): string {
  if (entries.length === 0) return '';
  const w = Math.max(...entries.map((e) => e.label.length)) * 6.6 + 40, h = entries.length * 18 + 8;
  const x0 = f.right - w - 8, y0 = f.top + 8;
  const out = [`<g class="legend">`, `<rect x="${px(x0)}" y="${px(y0)}" width="${px(w)}" height="${px(h)}" fill="#ffffff" fill-opacity="0.9" stroke="#bbb"/>`];
  entries.forEach((e, i) => {
    const y = y0 + 13 + i * 18, x = x0 + 8;
    out.push(swatch(e, x, y));
    out.push(`<text x="${px(x + 28)}" y="${px(y)}" dy="0.32em" fill="#222">${esc(e.label)}</text>`);
  });
  out.push('</g>');
  return out.join('\n');
}

/** A polyline through the points (skipping non-finite ones). */
export function polyline(xs: ArrayLike<number>, ys: ArrayLike<number>, x: Scale, y: Scale, attrs: string): string {
  const pts: string[] = [];
  for (let i = 0; i < xs.length; i++) if (Number.isFinite(xs[i]) && Number.isFinite(ys[i])) pts.push(`${px(x(xs[i]))},${px(y(ys[i]))}`);
  return `<polyline fill="none" points="${pts.join(' ')}" ${attrs}/>`;
}

/** Smallest and largest finite value over several arrays. */
export function extent(...arrays: ArrayLike<number>[]): [number, number] {
  let lo = Infinity, hi = -Infinity;
  for (const a of arrays) for (let i = 0; i < a.length; i++) {
    const v = a[i];
    if (Number.isFinite(v)) {
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  return lo <= hi ? [lo, hi] : [0, 1];
}

/** Sequential colour map (viridis anchors, linear in between) for t ∈ [0, 1]. */
export function viridis(t: number): string {
  const A = [[68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142], [31, 158, 137], [53, 183, 121], [109, 205, 89], [180, 222, 44], [253, 231, 37]];
  const u = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (A.length - 1);
  const i = Math.min(A.length - 2, Math.floor(u)), w = u - i;
  const c = A[i].map((a, j) => Math.round(a + (A[i + 1][j] - a) * w));
  return '#' + c.map((v) => v.toString(16).padStart(2, '0')).join('');
}
