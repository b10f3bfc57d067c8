// The denoising page: draws a clean binary image, flips pixels at random, and shows the posterior
// the worker samples, the thresholded image and the error rates against the clean image.
import { mulberry32 } from '../bindings/core/seed.ts';
import type { DenoiseFrame, FromDenoiseWorker, ToDenoiseWorker } from './denoise-protocol.ts';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const worker = new Worker(new URL('./denoise-worker.js', import.meta.url), { type: 'module' });
const send = (m: ToDenoiseWorker) => worker.postMessage(m);

let gen = 0;
let latest: DenoiseFrame | null = null;
let clean: Int8Array = new Int8Array(0), noisy: Int8Array = new Int8Array(0);
let size = 0;
let ready!: () => void;
const workerReady = new Promise<void>((ok) => (ready = ok));

worker.onmessage = (e: MessageEvent<FromDenoiseWorker>) => {
  const m = e.data;
  if (m.type === 'hello') ready();
  else if (m.type === 'frame') {
    if (m.gen !== gen) return;
    latest = m;
    show(m);
  } else $('error').textContent = m.message;
};

/** The clean image, ±1 per pixel (+1 = ink), drawn on a canvas and thresholded. */
function cleanImage(shape: string, n: number): Int8Array {
  const c = new OffscreenCanvas(n, n);
  const g = c.getContext('2d')!;
  g.fillStyle = '#000';
  g.fillRect(0, 0, n, n);
  g.fillStyle = g.strokeStyle = '#fff';
  if (shape === 'digit') {
    g.font = `bold ${Math.round(n * 0.9)}px sans-serif`;
    g.textAlign = 'center';
    g.textBaseline = 'middle';
    g.fillText('3', n / 2, n / 2 + n * 0.04);
  } else if (shape === 'ring') {
    g.lineWidth = n * 0.14;
    g.beginPath();
    g.arc(n / 2, n / 2, n * 0.32, 0, 2 * Math.PI);
    g.stroke();
  } else {
    g.fillRect(n * 0.4, n * 0.15, n * 0.2, n * 0.7);
    g.fillRect(n * 0.15, n * 0.4, n * 0.7, n * 0.2);
  }
  const px = g.getImageData(0, 0, n, n).data;
  return Int8Array.from({ length: n * n }, (_, i) => (px[4 * i] > 127 ? 1 : -1));
}

/** A small seeded generator (mulberry32), so the same seed gives the same noise. */
const rng = mulberry32;

function paint(id: string, values: ArrayLike<number>, toGrey: (v: number) => number): void {
  const c = $<HTMLCanvasElement>(id);
  c.width = c.height = size;
  const g = c.getContext('2d')!;
  const img = g.createImageData(size, size);
  for (let i = 0; i < values.length; i++) {
    const v = Math.round(255 * toGrey(values[i]));
    img.data.set([v, v, v, 255], 4 * i);
  }
  g.putImageData(img, 0, 0);
}

const wrong = (img: ArrayLike<number>) => {
  let k = 0;
  for (let i = 0; i < clean.length; i++) if (img[i] !== clean[i]) k++;
  return k;
};

function denoised(m: Float64Array): Int8Array {
  return Int8Array.from(m, (p) => (p > 0.5 ? 1 : -1));
}

function show(f: DenoiseFrame): void {
  paint('posterior', f.marginals, (p) => p);
  paint('denoised', denoised(f.marginals), (s) => (s + 1) / 2);
  paint('sample', f.sample, (s) => s);
  $('sweepcount').textContent = String(f.sweeps);
  $('speed').textContent = f.sweepsPerSecond.toFixed(0);
  const d = wrong(denoised(f.marginals));
  $('denoised-error').textContent = `${d} of ${clean.length} (${((100 * d) / clean.length).toFixed(1)} %)`;
  $('status').textContent = f.done ? 'done' : 'sampling';
}

function start(): void {
  const num = (id: string) => Number($<HTMLInputElement>(id).value);
  size = Math.max(16, Math.min(128, Math.round(num('size'))));
  const flip = Math.min(0.45, Math.max(0.01, num('flip')));
  const seed = Math.max(0, Math.round(num('seed')));
  clean = cleanImage($<HTMLSelectElement>('shape').value, size);
  const r = rng(seed + 12345);
  noisy = Int8Array.from(clean, (s) => (r() < flip ? -s : s));
  paint('clean', clean, (s) => (s + 1) / 2);
  paint('noisy', noisy, (s) => (s + 1) / 2);
  const w = wrong(noisy);
  $('noisy-error').textContent = `${w} of ${clean.length} (${((100 * w) / clean.length).toFixed(1)} %)`;
  $('error').textContent = '';
  latest = null;
  gen++;
  send({ type: 'start', width: size, height: size, noisy, flip, coupling: num('coupling'), seed, maxSweeps: Math.max(10, Math.round(num('sweeps'))) });
}

$('settings').addEventListener('submit', (e) => {
  e.preventDefault();
  start();
});
$('stop').addEventListener('click', () => {
  gen++;
  send({ type: 'stop' });
  $('status').textContent = 'stopped';
});

/** Hooks for scripted use (the browser test): errors against the clean image. */
const api = {
  ready: () => workerReady,
  start,
  latest: () => latest,
  errors: () => ({ pixels: clean.length, noisy: wrong(noisy), denoised: latest ? wrong(denoised(latest.marginals)) : null, finite: latest ? latest.marginals.every((p) => Number.isFinite(p) && p >= 0 && p <= 1) : false }),
};
(globalThis as unknown as { denoise: typeof api }).denoise = api;
workerReady.then(start);
