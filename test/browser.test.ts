// The demo in a real browser: Chromium (Debian's /usr/bin/chromium) driven by playwright-core loads
// the demo page, whose Web Worker runs the engine from the fetched .wasm. Checks the page's Gibbs
// marginals against exact inference in Node (within 4 MCSE), bit-identical marginals against Node's
// runGibbs for the same model and seed, and that each live sampler produces frames; saves a
// screenshot in test/artifacts/. Without Chromium: fails under CI, skips (with a message) otherwise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startDemoServer } from '../scripts/serve-demo.ts';
import { loadEngine } from '../bindings/wasm-node.ts';
import { isingLattice } from '../bindings/builders.ts';
import { runGibbs } from '../bindings/gibbs.ts';
import { exactInference } from '../bindings/exact.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const missing = existsSync(CHROMIUM) ? null : `Chromium not found at ${CHROMIUM}: install it with "apt-get install -y chromium" (or set CHROMIUM_PATH)`;

interface PageResult {
  marginals: number[][];
  stdErr: number[][];
  diagnostics: Record<string, unknown>;
}

test('demo page in Chromium: live samplers, exact agreement, and bit-identical to Node', { skip: missing !== null && !process.env.CI ? missing! : false, timeout: 60_000 }, async () => {
  if (missing) assert.fail(missing);
  const { chromium } = await import('playwright-core');
  const demo = await startDemoServer();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 620 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    let wasmType: string | null = null;
    page.on('response', (r) => {
      if (r.url().endsWith('/release.wasm')) wasmType = r.headers()['content-type'] ?? null;
    });
    await page.goto(demo.url);
    await page.evaluate(() => (globalThis as any).demo.ready());

    // A small model, fixed seed, through infer() in the page's worker.
    const spec = { size: 4, beta: 0.3, h: 0.1, periodic: false, method: 'gibbs' as const, seed: 7, chains: 4, samples: 4000, burnin: 200, batches: 20 };
    const got: PageResult = await page.evaluate(async (s) => {
      const r = await (globalThis as any).demo.run(s);
      return { marginals: r.marginals.map((m: Float64Array) => Array.from(m)), stdErr: r.marginalStdErr.map((m: Float64Array) => Array.from(m)), diagnostics: r.diagnostics };
    }, spec);
    assert.equal(wasmType, 'application/wasm');

    const model = isingLattice({ shape: [4, 4], beta: spec.beta, h: spec.h, periodic: false });
    const engine = await loadEngine();
    const node = runGibbs(engine, model, { seed: spec.seed, chains: spec.chains, samples: spec.samples, burnin: spec.burnin, batches: spec.batches });
    // Same module, same streams, same arithmetic: the same bits in the browser as in Node.
    assert.deepEqual(got.marginals, node.marginals.map((m) => Array.from(m)), 'browser and Node marginals differ');
    assert.deepEqual(got.stdErr, node.marginalStdErr!.map((m) => Array.from(m)));
    const exact = exactInference(engine, model).marginals;
    for (let v = 0; v < 16; v++) {
      for (let k = 0; k < 2; k++) {
        const se = got.stdErr[v][k];
        assert.ok(se > 0, `standard error of node ${v}`);
        assert.ok(Math.abs(got.marginals[v][k] - exact[v][k]) <= 4 * se, `node ${v}: ${got.marginals[v][k]} vs exact ${exact[v][k]} (MCSE ${se})`);
      }
    }

    // Each live sampler produces frames while the page keeps painting.
    for (const method of ['dhmc', 'blockgibbs', 'gibbs']) {
      await page.selectOption('#method', method);
      await page.fill('#size', '16');
      await page.click('#start');
      await page.waitForFunction(() => ((globalThis as any).demo.latest()?.batches ?? 0) >= 5, undefined, { timeout: 15_000 });
      const f = await page.evaluate(() => {
        const l = (globalThis as any).demo.latest();
        return { n: l.marginals.length, rate: l.rate, maxStdErr: l.maxStdErr, sweeps: l.sweeps };
      });
      assert.equal(f.n, 256, method);
      assert.ok(f.rate > 0 && f.rate <= 1, `${method} rate ${f.rate}`);
      assert.ok(f.maxStdErr !== null && f.maxStdErr > 0, `${method} standard error`);
      const sweeps = await page.textContent('#sweeps');
      assert.ok(Number(sweeps) > 0, `${method}: read-out shows ${sweeps} sweeps`);
    }
    const before = Number(await page.textContent('#fps'));
    await page.waitForTimeout(500);
    assert.ok(Number(await page.textContent('#fps')) > before, 'the page stopped painting while sampling');
    const dir = fileURLToPath(new URL('./artifacts/', import.meta.url));
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: dir + 'demo.png' });
    await page.click('#stop');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await demo.close();
  }
});
