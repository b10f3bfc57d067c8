// The built package (npm run build:js → dist/): plain `node` (no tsx) imports it by its own name
// through package.json's exports, and the browser entry's module graph in dist/ has only relative
// imports and nothing Node-only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import { runGibbs } from '../bindings/samplers/gibbs.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const built = existsSync(resolve(ROOT, 'dist/index.js')) && existsSync(resolve(ROOT, 'dist/browser.js'));
// Under CI a missing dist/ is a failure (npm test builds it), not a reason to skip.
if (!built && process.env.CI) throw new Error('dist/ is not built: npm test runs "npm run build:js" first');
const skip = built ? false : 'dist/ not built: run "npm run build:js" (npm test does)';

test('plain node imports "relaxmrf" (dist/index.js) and runs Gibbs, bit-identical to the sources', { skip }, async () => {
  // A child process without tsx's loader: only compiled JavaScript can load.
  const code = `
    import { loadEngine, isingLattice, runGibbs, exactInference } from 'relaxmrf';
    const model = isingLattice({ shape: [3, 4], beta: 0.35, h: 0.1 });
    const engine = await loadEngine();
    const r = runGibbs(engine, model, { seed: 9, chains: 2, samples: 500 });
    console.log(JSON.stringify({ marginals: r.marginals.map((m) => Array.from(m)), logZ: exactInference(engine, model).logZ, entry: import.meta.resolve('relaxmrf') }));
  `;
  const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } }));
  assert.ok(out.entry.endsWith('/dist/index.js'), out.entry);
  const model = isingLattice({ shape: [3, 4], beta: 0.35, h: 0.1 });
  const ref = runGibbs(await loadEngine(), model, { seed: 9, chains: 2, samples: 500 });
  assert.deepEqual(out.marginals, ref.marginals.map((m) => Array.from(m)));
  assert.ok(Number.isFinite(out.logZ));
});

test('plain node: runParallel from the built package starts dist/parallel/parallel-worker.js and matches runGibbs', { skip }, async () => {
  const code = `
    import { runParallel, isingLattice } from 'relaxmrf';
    const model = isingLattice({ shape: [4, 4], beta: 0.3, h: 0.05 });
    const r = await runParallel(model, { seed: 3, chains: 3, workers: 2, samples: 400 });
    console.log(JSON.stringify({ marginals: r.marginals.map((m) => Array.from(m)), workers: r.diagnostics.workers }));
  `;
  const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } }));
  assert.equal(out.workers, 2);
  const ref = runGibbs(await loadEngine(), isingLattice({ shape: [4, 4], beta: 0.3, h: 0.05 }), { seed: 3, chains: 3, samples: 400 });
  assert.deepEqual(out.marginals, ref.marginals.map((m) => Array.from(m)));
});

test('dist/browser.js: every import in its module graph is relative and present, none Node-only', { skip }, () => {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    assert.ok(existsSync(file), `missing ${file}`);
    const src = readFileSync(file, 'utf8');
    for (const m of src.matchAll(/(?:^|[;\n])\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
      const spec = m[1] ?? m[2];
      assert.ok(spec.startsWith('./') || spec.startsWith('../'), `${file} imports "${spec}" (a browser cannot resolve bare specifiers)`);
      assert.ok(spec.endsWith('.js'), `${file} imports "${spec}"`);
      visit(resolve(dirname(file), spec));
    }
    // Workers and the .wasm are located relative to the module: those files must exist too.
    for (const m of src.matchAll(/new URL\(\s*['"]([^'"]+)['"]\s*,\s*import\.meta\.url\s*\)/g)) {
      assert.ok(existsSync(resolve(dirname(file), m[1])), `${file}: new URL("${m[1]}") does not exist in the built layout`);
    }
  };
  visit(resolve(ROOT, 'dist/browser.js'));
  assert.ok(seen.size > 10, `graph of ${seen.size} files`);
  assert.ok(!seen.has(resolve(ROOT, 'dist/core/wasm-node.js')) && !seen.has(resolve(ROOT, 'dist/io/files.js')));
});

test('a bundler (esbuild) resolves "relaxmrf" through exports: dist/browser.js for browsers, dist/index.js for Node', { skip }, async () => {
  const bundle = async (platform: 'browser' | 'node') => {
    const r = await build({
      absWorkingDir: ROOT,
      stdin: { contents: "import { runParallel, loadEngine } from 'relaxmrf'; export { runParallel, loadEngine };", resolveDir: ROOT, loader: 'js' },
      bundle: true, format: 'esm', platform, write: false, metafile: true, logLevel: 'silent',
    });
    return { inputs: Object.keys(r.metafile!.inputs).filter((f) => f !== '<stdin>'), text: r.outputFiles[0].text };
  };
  const web = await bundle('browser');
  assert.ok(web.inputs.includes('dist/browser.js') && web.inputs.every((f) => f.startsWith('dist/')), web.inputs.join(' '));
  assert.ok(!web.inputs.includes('dist/parallel/parallel.js') && !web.inputs.includes('dist/core/wasm-node.js'));
  assert.ok(!/node:|worker_threads/.test(web.text), 'Node-only module in the browser bundle');
  // The worker and the .wasm stay located relative to the module, for the bundler to copy or serve.
  assert.match(web.text, /new URL\("\.\/parallel-worker-browser\.js", import\.meta\.url\)/);
  assert.match(web.text, /new URL\("\.\.\/\.\.\/build\/release\.wasm", import\.meta\.url\)/);
  const node = await bundle('node');
  assert.ok(node.inputs.includes('dist/index.js') && node.inputs.includes('dist/parallel/parallel.js'), node.inputs.join(' '));
});
