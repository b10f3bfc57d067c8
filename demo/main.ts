// The demo page: settings form, two canvases and read-outs; all sampling runs in worker.ts, so the
// page only draws the latest frame once per animation frame and stays responsive.
import type { DemoMethod, Frame, FromWorker, LiveSpec, RunSpec, ToWorker } from './protocol.ts';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
const send = (m: ToWorker) => worker.postMessage(m);

let latest: Frame | null = null;
let drawn: Frame | null = null;
let gen = 0;
let framesPainted = 0;
const pending = new Map<number, { ok: (r: unknown) => void; fail: (e: Error) => void }>();
let nextId = 1;
let ready!: () => void;
const workerReady = new Promise<void>((ok) => (ready = ok));

worker.onmessage = (e: MessageEvent<FromWorker>) => {
  const m = e.data;
  if (m.type === 'hello') ready();
  else if (m.type === 'frame') {
    if (m.gen === gen) latest = m;
  } else if (m.type === 'result') {
    pending.get(m.id)?.ok(m);
    pending.delete(m.id);
  } else if (m.type === 'error') {
    if (m.id !== null && pending.has(m.id)) {
      pending.get(m.id)!.fail(new Error(m.message));
      pending.delete(m.id);
    } else {
      $('error').textContent = m.message;
      $('status').textContent = 'error';
    }
  }
};
worker.onerror = (e) => {
  $('error').textContent = `worker: ${e.message}`;
};

function readSpec(): LiveSpec {
  const num = (id: string) => Number(($<HTMLInputElement>(id)).value);
  return {
    size: Math.max(2, Math.min(256, Math.round(num('size')))),
    beta: num('beta'),
    h: num('h'),
    method: $<HTMLSelectElement>('method').value as DemoMethod,
    seed: Math.max(0, Math.round(num('seed'))),
    periodic: $<HTMLInputElement>('periodic').checked,
  };
}

function start(spec: LiveSpec = readSpec()): void {
  gen++;
  latest = drawn = null;
  $('error').textContent = '';
  $('status').textContent = `running ${spec.method}`;
  $('rate-label').textContent = spec.method === 'dhmc' ? 'acceptance (mean statistic)' : 'change rate';
  $('accept-label').textContent = spec.method === 'dhmc' ? 'acceptance (mean Metropolis probability)' : 'acceptance (Gibbs: every draw kept)';
  for (const id of ['logz', 'logz-se', 'logz-kind', 'ess', 'rhat', 'accept']) $(id).textContent = '–';
  $('picture-title').textContent = spec.method === 'dhmc' ? 'Current p(σ = +1 | x)' : 'Current configuration';
  $('picture-legend').textContent = spec.method === 'dhmc' ? 'black 0, white 1' : 'black σ = −1, white σ = +1';
  for (const id of ['config', 'heat']) {
    const c = $<HTMLCanvasElement>(id);
    c.width = c.height = spec.size;
  }
  // The worker counts generations the same way: one per 'start' (and per 'stop').
  send({ type: 'start', spec });
}

function stop(): void {
  gen++;
  send({ type: 'stop' });
  $('status').textContent = 'stopped';
}

function paint(canvas: HTMLCanvasElement, values: ArrayLike<number>, colour: (x: number) => [number, number, number]): void {
  const ctx = canvas.getContext('2d')!;
  const img = ctx.createImageData(canvas.width, canvas.height);
  for (let i = 0; i < values.length; i++) {
    const [r, g, b] = colour(values[i]);
    img.data.set([r, g, b, 255], 4 * i);
  }
  ctx.putImageData(img, 0, 0);
}

const grey = (x: number): [number, number, number] => {
  const v = Math.round(255 * x);
  return [v, v, v];
};
/** Diverging blue–white–red for a probability. */
const diverging = (p: number): [number, number, number] => {
  const t = Math.max(0, Math.min(1, p));
  return t < 0.5 ? [Math.round(510 * t), Math.round(510 * t), 255] : [255, Math.round(510 * (1 - t)), Math.round(510 * (1 - t))];
};

function draw(): void {
  framesPainted++;
  if (framesPainted % 10 === 0) $('fps').textContent = String(framesPainted);
  const f = latest;
  if (f && f !== drawn) {
    drawn = f;
    paint($<HTMLCanvasElement>('config'), f.picture, grey);
    paint($<HTMLCanvasElement>('heat'), f.marginals, diverging);
    let seSum = 0, seCount = 0, mag = 0;
    for (const x of f.stdErr) if (Number.isFinite(x)) (seSum += x), seCount++;
    for (const p of f.marginals) mag += 2 * p - 1;
    $('sweeps').textContent = String(f.sweeps);
    $('speed').textContent = f.sweepsPerSecond.toFixed(0);
    $('rate').textContent = f.rate.toFixed(4);
    $('batches').textContent = String(f.batches);
    $('maxse').textContent = f.maxStdErr === null ? '–' : f.maxStdErr.toExponential(2);
    $('meanse').textContent = seCount ? (seSum / seCount).toExponential(2) : '–';
    $('mag').textContent = (mag / f.marginals.length).toFixed(4);
    $('chains').textContent = String(f.chains);
    $('accept').textContent = f.accept.toFixed(4);
    $('ess').textContent = f.ess === null ? '–' : `${f.ess.toFixed(1)} (draws every ${f.traceThin} ${f.traceThin === 1 ? 'step' : 'steps'})`;
    $('rhat').textContent = f.rhat === null ? '–' : f.rhat.toFixed(4);
    if (f.logZ) {
      $('logz').textContent = f.logZ.value.toFixed(4);
      $('logz-se').textContent = Number.isFinite(f.logZ.stdErr) ? f.logZ.stdErr.toFixed(4) : '–';
      $('logz-kind').textContent = `${f.logZ.estimator}, ${f.logZ.runs}/${f.logZ.totalRuns} runs${f.logZ.runs === f.logZ.totalRuns ? ' (final)' : ''}`;
    }
  }
  requestAnimationFrame(draw);
}
requestAnimationFrame(draw);

$('settings').addEventListener('submit', (e) => {
  e.preventDefault();
  start();
});
$('stop').addEventListener('click', stop);

/** Hooks for scripted use (the browser test): one-shot infer() in the worker, and the live controls. */
const api = {
  ready: () => workerReady,
  run(spec: RunSpec): Promise<unknown> {
    const id = nextId++;
    return new Promise((ok, fail) => {
      pending.set(id, { ok, fail });
      send({ type: 'run', id, spec });
    });
  },
  start,
  stop,
  latest: () => latest,
};
(globalThis as unknown as { demo: typeof api }).demo = api;
// Sampling starts on load with the form's settings (?idle leaves the page waiting for Start).
if (!new URLSearchParams(location.search).has('idle')) workerReady.then(() => start());
