// The CLI's --json output is a contract: every diagnostics field any method emits is named in the
// README's "diagnostics by method" table (blockgibbs, dhmc and the log Z estimators emitted dozens
// the README never named).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

test('every diagnostics field of every method (and of --logz, --max-memory) is named in its method\'s row of the README table (or an "any" row)', () => {
  const readme = readFileSync(root + 'README.md', 'utf8');
  const at = readme.indexOf('| method | `diagnostics` fields |');
  assert.ok(at > 0, 'the table is in the README');
  const table = readme.slice(at, readme.indexOf('\n\n', at));
  // Per row: the methods its first cell names ("any" rows hold fields every method can get) and the fields it names.
  const rows = table.split('\n').slice(2).map((line) => {
    const [, first, ...cells] = line.split('|'), rest = cells.join('|'); // "p(s*|x)" holds a bar
    return { methods: first.trim().startsWith('any') ? null : first.split(',').map((m) => m.trim()), named: new Set([...rest.matchAll(/`([A-Za-z0-9.]+)`/g)].map((m) => m[1])) };
  });
  // A row may say it holds another row's fields: "the Gibbs fields" (pt, blockgibbs), blockgibbs' relaxation fields (dhmc, mala), mean field's and TRW's (bounds).
  const rowOf = (method: string) => rows.find((r) => r.methods?.includes(method))!;
  const lines = table.split('\n').slice(2);
  const inherits = (i: number) => [[/the Gibbs fields/, 'gibbs'], [/the relaxation's fields as blockgibbs/, 'blockgibbs'], [/mean field's fields/, 'mf'], [/TRW's/, 'trw']].filter(([re]) => (re as RegExp).test(lines[i])).map(([, m]) => rowOf(m as string));
  const namedFor = (method: string) => new Set(rows.flatMap((r, i) => (r.methods === null || r.methods.includes(method) ? [r, ...inherits(i)] : [])).flatMap((r) => [...r.named]));
  const runs = [
    ['exact'], ['exact', '--max-memory', '2K'], ['gibbs'], ['treegibbs'], ['pt'], ['pt', '--pt-moves', 'hmc'], ['sw'], ['wolff'], ['blockgibbs'], ['dhmc'], ['mala'],
    ['mf'], ['mfrp'], ['bp'], ['trw'], ['bounds'],
    ['gibbs', '--logz', 'ais'], ['gibbs', '--logz', 'ais', '--ais-transition', 'hmc', '--ais-steps', '50'], ['gibbs', '--logz', 'zhang'], ['gibbs', '--logz', 'mirror'], ['mf', '--logz', 'chib'],
  ];
  const missing: string[] = [];
  for (const r of runs) {
    const small = r[0] === 'exact' || ['mf', 'mfrp', 'bp', 'trw', 'bounds'].includes(r[0]) ? [] : ['--samples', '200'];
    const out = execFileSync(process.execPath, [root + 'bin/relaxmrf.js', 'infer', 'ising:4x4,beta=0.3,h=0.1', '--method', ...r, ...small, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const named = namedFor(r[0]);
    for (const key of Object.keys(JSON.parse(out).diagnostics)) {
      // Prefixed fields (mf.*, trw.*, logz.*) are named without their prefix.
      const bare = key.replace(/^(mf|trw|logz)\./, '');
      if (!named.has(key) && !named.has(bare)) missing.push(`${r.join(' ')}: ${key}`);
    }
  }
  assert.deepEqual(missing, [], 'diagnostics fields the README does not name');
});
