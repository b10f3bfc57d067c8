// The problems page: a shipped UAI / .fg instance or the user's file, methods to compare, and two
// plots redrawn as runs finish — the largest marginal error against time (against exact inference,
// when the engine can do it) and log Z estimates ± 2 standard errors against time.
import { plotLines, plotLogZ } from '../bindings/plot/index.ts';
import type { FromProblemWorker, ProblemMethod, ProblemPoint, ToProblemWorker } from './problems-protocol.ts';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const worker = new Worker(new URL('./problems-worker.js', import.meta.url), { type: 'module' });
const send = (m: ToProblemWorker) => worker.postMessage(m);
const LABELS: Record<ProblemMethod, string> = { gibbs: 'Gibbs', blockgibbs: 'block Gibbs', dhmc: 'DHMC', mf: 'mean field', ais: 'AIS' };

let points: ProblemPoint[] = [];
let exactLogZ: number | null = null;
let done: (() => void) | null = null;
const errorsSeen: string[] = [];
let ready!: () => void;
const workerReady = new Promise<void>((ok) => (ready = ok));

worker.onmessage = (e: MessageEvent<FromProblemWorker>) => {
  const m = e.data;
  if (m.type === 'hello') ready();
  else if (m.type === 'model') $('model').textContent = `${m.name}: ${m.n} variables, ${m.factors} factors (arity ≤ ${m.maxArity})`;
  else if (m.type === 'exact') {
    exactLogZ = m.logZ;
    $('exact').textContent = m.logZ !== null ? `${m.logZ.toFixed(6)} (elimination, ${m.seconds.toFixed(2)} s)` : `not feasible: ${m.refused}`;
  } else if (m.type === 'point') {
    points.push(m);
    redraw();
  } else if (m.type === 'done') {
    $('status').textContent = m.stopped ? 'stopped' : 'done';
    done?.();
  } else if (m.type === 'error') {
    errorsSeen.push(m.message);
    $('error').textContent = errorsSeen.join('\n');
  }
};

function redraw(): void {
  const methods = [...new Set(points.map((p) => p.method))];
  const rows = methods.map((m) => {
    const p = points.filter((q) => q.method === m).at(-1)!;
    const lz = p.logZ === null ? '–' : `${p.logZ.toFixed(4)}${p.logZStdErr !== null ? ` ± ${p.logZStdErr.toFixed(4)}` : ''}${p.logZKind === 'lower-bound' ? ' (lower bound)' : ''}`;
    return `<tr><td>${LABELS[m]}</td><td>${p.budget}</td><td>${p.seconds.toFixed(3)}</td><td>${lz}</td><td>${p.maxMarginalError === null ? '–' : p.maxMarginalError.toExponential(2)}</td></tr>`;
  });
  $('latest').innerHTML = '<tr><th>method</th><th>budget</th><th>seconds</th><th>log Z</th><th>max marginal error</th></tr>' + rows.join('');
  const withErr = methods.filter((m) => points.some((p) => p.method === m && p.maxMarginalError !== null));
  $('plot-error').innerHTML = withErr.length
    ? plotLines(withErr.map((m) => ({ label: LABELS[m], points: points.filter((p) => p.method === m && p.maxMarginalError !== null).map((p) => ({ x: p.seconds, y: p.maxMarginalError! })).sort((a, b) => a.x - b.x) })), { logX: true, logY: true, xLabel: 'wall time (s)', yLabel: 'largest |p − p_exact|', title: 'Marginals: error against time', subtitle: 'each point one run; budgets double', width: 560, height: 380 })
    : '';
  const withLogZ = methods.filter((m) => points.some((p) => p.method === m && p.logZ !== null));
  $('plot-logz').innerHTML = withLogZ.length
    ? plotLogZ(withLogZ.map((m) => ({ label: LABELS[m] + (m === 'mf' ? ' (lower bound)' : ''), points: points.filter((p) => p.method === m && p.logZ !== null).map((p) => ({ seconds: p.seconds, logZ: p.logZ!, stdErr: p.logZStdErr })).sort((a, b) => a.seconds - b.seconds) })), { exact: exactLogZ ?? undefined, title: 'log Z against time', width: 560, height: 380 })
    : '';
}

async function instances(): Promise<string[]> {
  const names: string[] = await (await fetch('./instances/index.json')).json();
  $('instance').innerHTML = names.map((n) => `<option>${n}</option>`).join('');
  return names;
}

function chosenMethods(): ProblemMethod[] {
  return Array.from(document.querySelectorAll<HTMLInputElement>('input[name=method]:checked'), (i) => i.value as ProblemMethod);
}

/** Runs a model text; resolves when the worker is done. */
function solve(name: string, text: string, methods = chosenMethods(), seconds = Number($<HTMLInputElement>('seconds').value), seed = Number($<HTMLInputElement>('seed').value)): Promise<void> {
  points = [];
  exactLogZ = null;
  errorsSeen.length = 0;
  $('error').textContent = '';
  $('exact').textContent = '…';
  $('plot-error').innerHTML = $('plot-logz').innerHTML = '';
  $('status').textContent = `running ${methods.map((m) => LABELS[m]).join(', ')}`;
  const format = /\.fg$/i.test(name) ? 'fg' : 'uai';
  return new Promise((ok) => {
    done = ok;
    send({ type: 'solve', text, format, name, methods, seconds, seed });
  });
}

async function solveInstance(name: string, methods?: ProblemMethod[], seconds?: number): Promise<void> {
  const text = await (await fetch(`./instances/${name}`)).text();
  return solve(name, text, methods, seconds);
}

async function solveFile(file: File): Promise<void> {
  return solve(file.name, await file.text());
}

$('settings').addEventListener('submit', (e) => {
  e.preventDefault();
  solveInstance($<HTMLSelectElement>('instance').value);
});
$('stop').addEventListener('click', () => send({ type: 'stop' }));
$('file').addEventListener('change', () => {
  const f = $<HTMLInputElement>('file').files?.[0];
  if (f) solveFile(f);
});
const drop = $('drop');
drop.addEventListener('dragover', (e) => {
  e.preventDefault();
  drop.classList.add('over');
});
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (e) => {
  e.preventDefault();
  drop.classList.remove('over');
  const f = e.dataTransfer?.files[0];
  if (f) solveFile(f);
});

/** Hooks for scripted use (the browser test). */
const api = {
  ready: () => workerReady,
  instances,
  solveInstance,
  solveText: (name: string, text: string, methods: ProblemMethod[], seconds: number) => solve(name, text, methods, seconds),
  points: () => points,
  exactLogZ: () => exactLogZ,
  errors: () => errorsSeen.slice(),
};
(globalThis as unknown as { problems: typeof api }).problems = api;
await instances();

