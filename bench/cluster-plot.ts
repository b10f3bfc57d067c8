// Log-log plot of τ_int(m²) against L from bench/results/cluster.json → bench/results/cluster-tau.svg.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = join(fileURLToPath(new URL('.', import.meta.url)), 'results');
const { rows } = JSON.parse(readFileSync(join(dir, 'cluster.json'), 'utf8')) as { rows: { L: number; kind: string; tau: number; lowerBound: boolean }[] };
const W = 480, H = 360, M = { l: 60, r: 110, t: 20, b: 45 };
const Ls = rows.map((r) => r.L), taus = rows.map((r) => r.tau);
const lx0 = Math.log10(Math.min(...Ls) / 1.3), lx1 = Math.log10(Math.max(...Ls) * 1.3);
const ly0 = Math.floor(Math.log10(Math.min(...taus))), ly1 = Math.ceil(Math.log10(Math.max(...taus)));
const X = (L: number) => M.l + ((Math.log10(L) - lx0) / (lx1 - lx0)) * (W - M.l - M.r);
const Y = (t: number) => H - M.b - ((Math.log10(t) - ly0) / (ly1 - ly0)) * (H - M.t - M.b);
const colour: Record<string, string> = { sw: '#1f77b4', wolff: '#2ca02c', heatbath: '#d62728' };
const label: Record<string, string> = { sw: 'Swendsen–Wang', wolff: 'Wolff', heatbath: 'heat-bath Gibbs' };
const parts: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`, `<rect width="${W}" height="${H}" fill="white"/>`];
for (let e = ly0; e <= ly1; e++) parts.push(`<line x1="${M.l}" x2="${W - M.r}" y1="${Y(10 ** e)}" y2="${Y(10 ** e)}" stroke="#ddd"/><text x="${M.l - 6}" y="${Y(10 ** e) + 4}" text-anchor="end">${10 ** e}</text>`);
for (const L of [...new Set(Ls)]) parts.push(`<text x="${X(L)}" y="${H - M.b + 16}" text-anchor="middle">${L}</text>`);
parts.push(`<text x="${(M.l + W - M.r) / 2}" y="${H - 8}" text-anchor="middle">L (periodic L×L Ising at β_c)</text>`);
parts.push(`<text transform="translate(16 ${(M.t + H - M.b) / 2}) rotate(-90)" text-anchor="middle">τ_int(m²), sweeps</text>`);
let legendY = M.t + 10;
for (const kind of ['sw', 'wolff', 'heatbath']) {
  const pts = rows.filter((r) => r.kind === kind);
  if (!pts.length) continue;
  parts.push(`<polyline fill="none" stroke="${colour[kind]}" stroke-width="2" points="${pts.map((r) => `${X(r.L).toFixed(1)},${Y(r.tau).toFixed(1)}`).join(' ')}"/>`);
  for (const r of pts) parts.push(`<circle cx="${X(r.L).toFixed(1)}" cy="${Y(r.tau).toFixed(1)}" r="3.5" fill="${r.lowerBound ? 'white' : colour[kind]}" stroke="${colour[kind]}"/>`);
  parts.push(`<line x1="${W - M.r + 10}" x2="${W - M.r + 28}" y1="${legendY}" y2="${legendY}" stroke="${colour[kind]}" stroke-width="2"/><text x="${W - M.r + 32}" y="${legendY + 4}">${label[kind]}</text>`);
  legendY += 18;
}
parts.push(`<text x="${W - M.r + 10}" y="${legendY + 8}" font-size="10">open: lower bound</text>`, '</svg>');
writeFileSync(join(dir, 'cluster-tau.svg'), parts.join('\n') + '\n');
console.log(`wrote ${join(dir, 'cluster-tau.svg')}`);
