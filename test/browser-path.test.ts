// The browser entry: loads the same .wasm through fetch (served over HTTP with the wasm MIME type)
// and imports nothing Node-only anywhere in its module graph.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../bindings/core/wasm-browser.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import { runGibbs } from '../bindings/samplers/gibbs.ts';
import { loadEngine as loadNodeEngine } from '../bindings/core/wasm-node.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

test('bindings/browser.ts imports nothing Node-only (whole module graph)', () => {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const src = readFileSync(file, 'utf8');
    for (const m of src.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/gm)) {
      const spec = m[1];
      assert.ok(!spec.startsWith('node:') && !['fs', 'path', 'url', 'os', 'child_process'].includes(spec), `${file} imports ${spec}`);
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec));
    }
  };
  visit(resolve(ROOT, 'bindings/browser.ts'));
  assert.ok(seen.size > 5);
});

test('the fetch loader runs the same module and gives the same bits as the Node loader', async () => {
  const wasm = readFileSync(resolve(ROOT, 'build/release.wasm'));
  const server = createServer((req, res) => {
    if (req.url === '/release.wasm') {
      res.writeHead(200, { 'Content-Type': 'application/wasm' });
      res.end(wasm);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  try {
    const web = await loadEngine(`http://127.0.0.1:${port}/release.wasm`);
    await assert.rejects(loadEngine(`http://127.0.0.1:${port}/missing.wasm`), /HTTP 404/);
    const model = isingLattice({ shape: [5, 5], beta: 0.3, h: 0.1 });
    const a = runGibbs(web, model, { seed: 11, samples: 300 });
    const b = runGibbs(await loadNodeEngine(), model, { seed: 11, samples: 300 });
    assert.deepEqual(a.marginals, b.marginals);
  } finally {
    server.close();
  }
});
