// The demo's three pages in headless Chromium (one launch): the live lattice page starts sampling
// on load; the problems page runs a shipped instance and a user's file through its worker and plots
// the errors against exact inference (testfast.fg: exact log Z by enumeration 14.3282332811; mean
// field below it; AIS within 4 standard errors; Gibbs' marginal error falls); the denoising page
// samples the posterior of a noisy image and its thresholded marginals are closer to the clean image
// than the noisy image is. Screenshots in test/artifacts/. Without Chromium: fails under CI, skips
// (with a message) otherwise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startDemoServer } from '../scripts/serve-demo.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const missing = existsSync(CHROMIUM) ? null : `Chromium not found at ${CHROMIUM}: install it with "apt-get install -y chromium" (or set CHROMIUM_PATH)`;
const ARTIFACTS = fileURLToPath(new URL('./artifacts/', import.meta.url));

interface Point { method: string; seconds: number; logZ: number | null; logZStdErr: number | null; logZKind: string | null; maxMarginalError: number | null }

test('demo pages in Chromium: live start on load, real problems against exact, denoising', { skip: missing !== null && !process.env.CI ? missing! : false, timeout: 120_000 }, async () => {
  if (missing) assert.fail(missing);
  mkdirSync(ARTIFACTS, { recursive: true });
  const { chromium } = await import('playwright-core');
  const demo = await startDemoServer();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  try {
    const page = await browser.newPage({ viewport: { width: 1250, height: 900 } });
    const errors: string[] = [];
    // With its stack: a run's "Invalid array length" came without one, and was not seen again.
    page.on('pageerror', (e) => errors.push(e.stack ?? e.message));

    // 1. The live page samples without anyone pressing Start.
    await page.goto(demo.url);
    await page.waitForFunction(() => ((globalThis as any).demo.latest()?.sweeps ?? 0) > 0, undefined, { timeout: 15_000 });
    assert.match((await page.textContent('#status'))!, /running gibbs/);

    // 2. Real problems: a shipped instance, then a user's file through the file input.
    await page.goto(demo.url + 'problems.html');
    await page.evaluate(() => (globalThis as any).problems.ready());
    const names: string[] = await page.evaluate(() => (globalThis as any).problems.instances());
    for (const n of ['Grids_11.uai', 'Grids_12.uai', 'testfast.fg', 'grid5x5.uai']) assert.ok(names.includes(n), n);
    await page.evaluate(() => (globalThis as any).problems.solveInstance('testfast.fg', ['gibbs', 'mf', 'ais'], 1.5));
    const exact: number = await page.evaluate(() => (globalThis as any).problems.exactLogZ());
    assert.ok(Math.abs(exact - 14.3282332811) < 1e-8, String(exact));
    const pts: Point[] = await page.evaluate(() => (globalThis as any).problems.points());
    assert.deepEqual(await page.evaluate(() => (globalThis as any).problems.errors()), []);
    for (const p of pts) {
      assert.ok(Number.isFinite(p.seconds) && p.seconds >= 0);
      if (p.logZ !== null) assert.ok(Number.isFinite(p.logZ));
      if (p.maxMarginalError !== null) assert.ok(Number.isFinite(p.maxMarginalError) && p.maxMarginalError >= 0);
    }
    const gibbs = pts.filter((p) => p.method === 'gibbs'), mf = pts.filter((p) => p.method === 'mf'), ais = pts.filter((p) => p.method === 'ais');
    assert.ok(gibbs.length >= 3 && mf.length >= 1 && ais.length >= 2, `${gibbs.length} ${mf.length} ${ais.length} runs`);
    assert.ok(gibbs.at(-1)!.maxMarginalError! < gibbs[0].maxMarginalError!, 'Gibbs: more sweeps, smaller error');
    assert.ok(gibbs.at(-1)!.maxMarginalError! < 0.05);
    for (const p of mf) assert.ok(p.logZKind === 'lower-bound' && p.logZ! <= exact + 1e-9, `mean field ${p.logZ} above exact ${exact}`);
    const a = ais.at(-1)!;
    assert.ok(Math.abs(a.logZ! - exact) <= 4 * a.logZStdErr!, `AIS ${a.logZ} ± ${a.logZStdErr} vs ${exact}`);
    // The plots: one point per run with marginals (error plot), one per log Z (log Z plot).
    assert.equal(await page.locator('#plot-error svg .mark').count(), gibbs.length + mf.length);
    assert.equal(await page.locator('#plot-logz svg .mark').count(), mf.length + ais.length);
    await page.screenshot({ path: ARTIFACTS + 'demo-problems.png', fullPage: true });

    await page.fill('#seconds', '0.3');
    await page.setInputFiles('#file', { name: 'grid5x5.uai', mimeType: 'text/plain', buffer: readFileSync(new URL('../demo/instances/grid5x5.uai', import.meta.url)) });
    await page.waitForFunction(() => document.getElementById('status')!.textContent === 'done', undefined, { timeout: 30_000 });
    assert.match((await page.textContent('#model'))!, /grid5x5\.uai: 25 variables/);
    assert.match((await page.textContent('#exact'))!, /^-?\d+\.\d{6} \(elimination/);

    // 3. Denoising: starts on load; the posterior's thresholded image beats the noisy one.
    await page.goto(demo.url + 'denoise.html');
    await page.waitForFunction(() => (globalThis as any).denoise.latest()?.done === true, undefined, { timeout: 30_000 });
    const e = await page.evaluate(() => (globalThis as any).denoise.errors());
    assert.ok(e.finite, 'posterior marginals are probabilities');
    assert.ok(e.noisy > 0.1 * e.pixels, `noise flipped ${e.noisy} of ${e.pixels}`);
    assert.ok(e.denoised < e.noisy / 3, `denoised ${e.denoised} wrong pixels, noisy ${e.noisy}`);
    await page.screenshot({ path: ARTIFACTS + 'demo-denoise.png', fullPage: true });
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await demo.close();
  }
});

test("every number input's default value is one the browser accepts (problems.html's seconds, 4 with min 0.2 and step 0.5, failed the form's validation and Run did nothing)", () => {
  for (const page of ['index.html', 'problems.html', 'denoise.html']) {
    const html = readFileSync(fileURLToPath(new URL(`../demo/${page}`, import.meta.url)), 'utf8');
    for (const tag of html.match(/<input[^>]*type="number"[^>]*>/g) ?? []) {
      const attr = (name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1];
      const value = Number(attr('value')), min = attr('min'), max = attr('max'), step = attr('step') ?? '1';
      assert.ok(Number.isFinite(value), `${page}: ${tag}`);
      if (min !== undefined) assert.ok(value >= Number(min), `${page}: ${tag} below min`);
      if (max !== undefined) assert.ok(value <= Number(max), `${page}: ${tag} above max`);
      if (step !== 'any') {
        const k = (value - Number(min ?? 0)) / Number(step);
        assert.ok(Math.abs(k - Math.round(k)) < 1e-9, `${page}: ${tag}: the value is off the step`);
      }
    }
  }
});
