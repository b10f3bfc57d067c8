// The CLI's --json output is a contract: every diagnostics field any method emits is named in the
// README's "diagnostics by method" table (blockgibbs, dhmc and the log Z estimators emitted dozens
// the README never named).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

test('every diagnostics field of every method (and of --logz, --max-memory) is named in the README table', () => {
  const readme = readFileSync(root + 'README.md', 'utf8');
  const at = readme.indexOf('| method | `diagnostics` fields |');
  assert.ok(at > 0, 'the table is in the README');
  const table = readme.slice(at, readme.indexOf('\n\n', at));
  const named = new Set([...table.matchAll(/`([A-Za-z0-9.]+)`/g)].map((m) => m[1]));
  const runs = [
    ['exact'], ['exact', '--max-memory', '2K'], ['gibbs'], ['treegibbs'], ['pt'], ['pt', '--pt-moves', 'hmc'], ['sw'], ['wolff'], ['blockgibbs'], ['dhmc'], ['mala'],
    ['mf'], ['mfrp'], ['bp'], ['trw'], ['bounds'],
    ['gibbs', '--logz', 'ais'], ['gibbs', '--logz', 'ais', '--ais-transition', 'hmc', '--ais-steps', '50'], ['gibbs', '--logz', 'zhang'], ['gibbs', '--logz', 'mirror'], ['mf', '--logz', 'chib'],
  ];
  const missing: string[] = [];
  for (const r of runs) {
    const small = r[0] === 'exact' || ['mf', 'mfrp', 'bp', 'trw', 'bounds'].includes(r[0]) ? [] : ['--samples', '200'];
    const out = execFileSync(process.execPath, [root + 'bin/relaxmrf.js', 'infer', 'ising:4x4,beta=0.3,h=0.1', '--method', ...r, ...small, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    for (const key of Object.keys(JSON.parse(out).diagnostics)) {
      // Prefixed fields (mf.*, trw.*, logz.*) are named without their prefix.
      const bare = key.replace(/^(mf|trw|logz)\./, '');
      if (!named.has(key) && !named.has(bare)) missing.push(`${r.join(' ')}: ${key}`);
    }
  }
  assert.deepEqual(missing, [], 'diagnostics fields the README does not name');
});
