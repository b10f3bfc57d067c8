// The built package in a real browser, unbundled: Chromium (playwright-core) loads a plain HTML page
// whose <script type="module"> imports dist/browser.js from a static server (application/wasm for
// .wasm, text/javascript for .js; no bundler, no import map). Checks Gibbs in the page against
// Node bit for bit and against exact inference (4 MCSE), runParallel on Web Workers for 1, 2 and 3
// workers against Node, and cancellation. Without Chromium: fails under CI, skips otherwise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import { runGibbs } from '../bindings/samplers/gibbs.ts';
import { exactInference, slicedBucketPlan } from '../bindings/exact/exact.ts';
import { infer } from '../bindings/infer.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const missing = !existsSync(CHROMIUM)
  ? `Chromium not found at ${CHROMIUM}: install it with "apt-get install -y chromium" (or set CHROMIUM_PATH)`
  : !existsSync(resolve(ROOT, 'dist/browser.js'))
    ? 'dist/ not built: run "npm run build:js" (npm test does)'
    : null;

const TYPES: Record<string, string> = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html; charset=utf-8' };

/** Serves the package directory as files, nothing else (no rewriting, no bundling). */
async function staticServer() {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    requests.push(path);
    const file = resolve(ROOT, '.' + path);
    const type = TYPES[extname(file)];
    if (!file.startsWith(ROOT.endsWith(sep) ? ROOT : ROOT + sep) || !type || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': type, 'Cache-Control': 'no-store' });
    res.end(readFileSync(file));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, requests, close: () => new Promise<void>((ok) => server.close(() => ok())) };
}

type Rows = number[][];
const rows = (m: ArrayLike<number>[]) => m.map((r) => Array.from(r));

test('dist/browser.js unbundled in Chromium: Gibbs bit-identical to Node and exact within 4 MCSE; runParallel on Web Workers', { skip: missing !== null && !process.env.CI ? missing! : false, timeout: 120_000 }, async () => {
  if (missing) assert.fail(missing);
  const { chromium } = await import('playwright-core');
  const server = await staticServer();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  try {
    const page = await browser.newPage();
    // The callbacks below are compiled by tsx (esbuild keepNames), which may wrap them in __name().
    await page.addInitScript('globalThis.__name = (f) => f;');
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const types = new Map<string, string>();
    page.on('response', (r) => types.set(new URL(r.url()).pathname, r.headers()['content-type'] ?? ''));
    await page.goto(`${server.url}/test/fixtures/unbundled.html`);
    await page.waitForSelector('body[data-ready="yes"]', { state: 'attached', timeout: 15_000 });

    // The order search's kernels run on a planner instance of the engine, made synchronously on the
    // page's main thread from the module loadEngine compiled: before any engine, planning says so;
    // after, a 20×20 grid's plan (greedy 2^26 configurations: the order annealing and the tree
    // search run) is Node's, order and all.
    const planned = await page.evaluate(async () => {
      const r = (globalThis as any).relaxmrf;
      const grid = r.isingLattice({ shape: [20, 20], beta: 0.3, h: 0.1, periodic: false });
      let before = '';
      try {
        r.slicedBucketPlan(grid);
      } catch (e) {
        before = (e as Error).message;
      }
      await r.loadEngine();
      const sp = r.slicedBucketPlan(grid);
      return { before, order: Array.from(sp.choice.plan.order as Int32Array), flops: sp.sliced.flops, by: sp.choice.search?.by, treeWork: sp.choice.search?.treeWork };
    });
    const nodePlan = slicedBucketPlan(isingLattice({ shape: [20, 20], beta: 0.3, h: 0.1, periodic: false }));
    assert.match(planned.before, /load one first/);
    assert.ok(nodePlan.choice.search && nodePlan.choice.search.treeWork > 0, 'the tree search ran');
    assert.deepEqual(planned, { before: planned.before, order: Array.from(nodePlan.choice.plan.order), flops: nodePlan.sliced.flops, by: nodePlan.choice.search.by, treeWork: nodePlan.choice.search.treeWork });

    const model = isingLattice({ shape: [4, 4], beta: 0.3, h: 0.1, periodic: false });
    const engine = await loadEngine();
    const gibbsOpts = { seed: 7, chains: 5, samples: 4000, burnin: 200, batches: 20 };

    // Gibbs on the page's own engine (dist/wasm-browser.js fetches ../build/release.wasm).
    const got = await page.evaluate(async (o) => {
      const r = (globalThis as any).relaxmrf;
      const engine = await r.loadEngine();
      const res = r.runGibbs(engine, r.isingLattice({ shape: [4, 4], beta: 0.3, h: 0.1, periodic: false }), o);
      return { marginals: res.marginals.map((m: Float64Array) => Array.from(m)), stdErr: res.marginalStdErr.map((m: Float64Array) => Array.from(m)) };
    }, gibbsOpts) as { marginals: Rows; stdErr: Rows };
    const node = runGibbs(engine, model, gibbsOpts);
    assert.deepEqual(got.marginals, rows(node.marginals), 'browser and Node marginals differ');
    assert.deepEqual(got.stdErr, rows(node.marginalStdErr!));
    const exact = exactInference(engine, model).marginals;
    for (let v = 0; v < 16; v++) {
      for (let k = 0; k < 2; k++) {
        const se = got.stdErr[v][k];
        assert.ok(se > 0, `standard error of node ${v}`);
        assert.ok(Math.abs(got.marginals[v][k] - exact[v][k]) <= 4 * se, `node ${v}: ${got.marginals[v][k]} vs exact ${exact[v][k]} (MCSE ${se})`);
      }
    }
    assert.equal(types.get('/build/release.wasm'), 'application/wasm');
    assert.equal(types.get('/dist/browser.js'), 'text/javascript');
    // Only files of the package were asked for: every import resolved to dist/ without help.
    assert.ok(server.requests.every((p) => p.startsWith('/dist/') || p.startsWith('/build/') || p === '/test/fixtures/unbundled.html' || p === '/favicon.ico'), server.requests.join(' '));

    // runParallel on Web Workers: 1, 2 and 3 workers give Node's runGibbs bits.
    for (const workers of [1, 2, 3]) {
      const par = await page.evaluate(async ([o, w]) => {
        const r = (globalThis as any).relaxmrf;
        const res = await r.runParallel(r.isingLattice({ shape: [4, 4], beta: 0.3, h: 0.1, periodic: false }), { ...o, workers: w });
        return { marginals: res.marginals.map((m: Float64Array) => Array.from(m)), stdErr: res.marginalStdErr.map((m: Float64Array) => Array.from(m)), workers: res.diagnostics.workers, changeRate: res.diagnostics.changeRate, partial: res.partial };
      }, [gibbsOpts, workers] as const) as { marginals: Rows; stdErr: Rows; workers: number; changeRate: number; partial: boolean };
      assert.equal(par.workers, workers);
      assert.equal(par.partial, false);
      assert.deepEqual(par.marginals, rows(node.marginals), `workers = ${workers}`);
      assert.deepEqual(par.stdErr, rows(node.marginalStdErr!), `workers = ${workers}`);
      assert.equal(par.changeRate, node.diagnostics.changeRate);
    }

    assert.ok(server.requests.includes('/dist/parallel/parallel-worker-browser.js'), 'the Web Workers loaded dist/parallel-worker-browser.js');
    assert.equal(types.get('/dist/parallel/parallel-worker-browser.js'), 'text/javascript');

    // A continuous method in browser workers equals Node's single-thread run.
    const dhmcOpts = { method: 'dhmc' as const, seed: 5, chains: 2, samples: 400, burnin: 100, batches: 10 };
    const dhmc = await page.evaluate(async (o) => {
      const r = (globalThis as any).relaxmrf;
      const res = await r.runParallel(r.isingLattice({ shape: [4, 4], beta: 0.3, h: 0.1, periodic: false }), { ...o, workers: 2 });
      return { marginals: res.marginals.map((m: Float64Array) => Array.from(m)), acceptRate: res.diagnostics.acceptRate };
    }, dhmcOpts) as { marginals: Rows; acceptRate: number };
    const dhmcNode = infer(engine, model, dhmcOpts);
    assert.deepEqual(dhmc.marginals, rows(dhmcNode.marginals));
    assert.equal(dhmc.acceptRate, dhmcNode.diagnostics.acceptRate);

    // Cancellation: the abort terminates the workers; what was computed comes back, marked partial.
    // The abort comes at 60 000 sweeps in all (batches of 5000 per chain, two chains per worker):
    // some worker has then run 30 000, so one of its chains is 15 000 in, past its first batch,
    // whose event the worker posted before the later steps'. At 20 000 — possibly every chain just
    // at its first batch's end — the progress could win the race against the batch events.
    const cut = await page.evaluate(async () => {
      const r = (globalThis as any).relaxmrf;
      const ac = new AbortController();
      const res = await r.runParallel(r.isingLattice({ shape: [20, 20], beta: 0.3 }), {
        seed: 5, chains: 4, workers: 2, samples: 1_000_000, burnin: 0, batches: 200, signal: ac.signal,
        onProgress: (p: { done: number }) => { if (p.done >= 60_000) ac.abort(); },
      });
      let rejected = '';
      await r.runParallel(r.isingLattice({ shape: [3, 3], beta: 0.3 }), { signal: AbortSignal.abort() }).catch((e: Error) => (rejected = e.message));
      return { partial: res.partial, completed: res.diagnostics.completedChains, inRange: res.marginals.every((m: Float64Array) => m.every((x) => x >= 0 && x <= 1)), rejected };
    });
    assert.equal(cut.partial, true);
    assert.ok(cut.completed < 4);
    assert.ok(cut.inRange);
    assert.match(cut.rejected, /cancelled before the first batch/);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await server.close();
  }
});
