// The demo in a real browser: Chromium (Debian's /usr/bin/chromium) driven by playwright-core loads
// the demo page, whose Web Worker runs the engine from the fetched .wasm. Checks the page's Gibbs
// marginals against exact inference in Node (within 4 MCSE), bit-identical marginals against Node's
// runGibbs for the same model and seed, that each live sampler produces frames with finite
// acceptance, ESS and R̂ read-outs, and that the log Z read-out (AIS, run piece by piece in the
// worker) equals Node's runAIS bit for bit and lies within 4 standard errors of exact; saves a
// screenshot in test/artifacts/. Without Chromium: fails under CI, skips (with a message) otherwise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startDemoServer } from '../scripts/serve-demo.ts';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import { runGibbs } from '../bindings/samplers/gibbs.ts';
import { exactInference } from '../bindings/exact/exact.ts';
import { runAIS } from '../bindings/logz/logz.ts';
import { AIS_RUNS, aisSteps } from '../demo/protocol.ts';

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
    const engine0 = await loadEngine();
    const node = runGibbs(engine0, model, { seed: spec.seed, chains: spec.chains, samples: spec.samples, burnin: spec.burnin, batches: spec.batches });
    // Same module, same streams, same arithmetic: the same bits in the browser as in Node.
    assert.deepEqual(got.marginals, node.marginals.map((m) => Array.from(m)), 'browser and Node marginals differ');
    assert.deepEqual(got.stdErr, node.marginalStdErr!.map((m) => Array.from(m)));
    const exact = exactInference(engine0, model).marginals;
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
      // Ten rounds of batches (one per chain each): long enough traces for ESS and R̂.
      await page.waitForFunction(() => ((globalThis as any).demo.latest()?.batches ?? 0) >= 40, undefined, { timeout: 15_000 });
      const f = await page.evaluate(() => {
        const l = (globalThis as any).demo.latest();
        return { n: l.marginals.length, rate: l.rate, maxStdErr: l.maxStdErr, sweeps: l.sweeps, accept: l.accept, ess: l.ess, rhat: l.rhat, chains: l.chains };
      });
      assert.equal(f.n, 256, method);
      assert.ok(f.rate > 0 && f.rate <= 1, `${method} rate ${f.rate}`);
      assert.ok(f.maxStdErr !== null && f.maxStdErr > 0, `${method} standard error`);
      assert.ok(f.accept > 0 && f.accept <= 1, `${method} acceptance ${f.accept}`);
      assert.ok(f.chains >= 2, `${method}: ${f.chains} chains`);
      assert.ok(f.ess !== null && f.ess > 0, `${method} ESS ${f.ess}`);
      assert.ok(f.rhat !== null && f.rhat > 0.5, `${method} R̂ ${f.rhat}`);
      // The read-outs on the page show them as finite numbers.
      await page.waitForFunction(() => ['sweeps', 'accept', 'ess', 'rhat', 'logz', 'logz-se'].every((id) => Number.isFinite(parseFloat(document.getElementById(id)!.textContent!))), undefined, { timeout: 15_000 });
      const sweeps = await page.textContent('#sweeps');
      assert.ok(Number(sweeps) > 0, `${method}: read-out shows ${sweeps} sweeps`);
      assert.match((await page.textContent('#logz-kind'))!, /^AIS /);
    }

    // log Z on a small lattice: the AIS read-out, once all its runs are done, is the estimate of one
    // runAIS call in Node (same seed, runs, temperatures) and lies within 4 standard errors of exact.
    await page.fill('#size', '4');
    await page.fill('#beta', '0.4');
    await page.fill('#h', '0.1');
    await page.fill('#seed', '3');
    await page.selectOption('#method', 'gibbs');
    await page.click('#start');
    await page.waitForFunction((runs) => (globalThis as any).demo.latest()?.logZ?.runs === runs, AIS_RUNS, { timeout: 30_000 });
    const lz = await page.evaluate(() => (globalThis as any).demo.latest().logZ);
    await page.waitForFunction(() => document.getElementById('logz-kind')!.textContent!.includes('(final)'), undefined, { timeout: 5_000 });
    assert.equal(parseFloat((await page.textContent('#logz'))!), Number(lz.value.toFixed(4)));
    const small = isingLattice({ shape: [4, 4], beta: 0.4, h: 0.1, periodic: true });
    const engine = await loadEngine();
    const ais = runAIS(engine, small, { seed: 3, runs: AIS_RUNS, steps: aisSteps(16) });
    // The engine's weights are the same bits; log-mean-exp runs on each side's Math.exp, which V8
    // builds may round differently in the last place, so the combined value is compared to 1e-12.
    assert.deepEqual(lz.logWeights, Array.from(ais.logWeights), 'the page\'s piecewise AIS runs differ from one runAIS call');
    assert.ok(Math.abs(lz.value - ais.logZ) <= 1e-12 * Math.abs(ais.logZ), `log Z ${lz.value} vs ${ais.logZ}`);
    assert.ok(Math.abs(lz.stdErr - ais.logZStdErr) <= 1e-12 * ais.logZStdErr, `standard error ${lz.stdErr} vs ${ais.logZStdErr}`);
    const exactLogZ = exactInference(engine, small).logZ;
    assert.ok(lz.stdErr > 0 && Math.abs(lz.value - exactLogZ) <= 4 * lz.stdErr, `log Z ${lz.value} ± ${lz.stdErr} vs exact ${exactLogZ}`);
    const before = Number(await page.textContent('#fps'));
    await page.waitForTimeout(500);
    assert.ok(Number(await page.textContent('#fps')) > before, 'the page stopped painting while sampling');
    const dir = fileURLToPath(new URL('./artifacts/', import.meta.url));
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: dir + 'demo.png', fullPage: true });
    await page.click('#stop');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await demo.close();
  }
});
