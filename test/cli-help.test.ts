// relaxmrf --version, help, help COMMAND and COMMAND --help: the texts, their agreement with the
// usage text, and exit codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/relaxmrf.js', import.meta.url));
const run = (...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

test('--version prints the package version', () => {
  const r = run('--version');
  assert.equal(r.code, 0);
  assert.equal(r.out.trim(), JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version);
});

test('help: the whole usage and the list of commands; no arguments: the usage and exit 2', () => {
  const h = run('help'), none = run(), dash = run('--help');
  assert.equal(h.code, 0);
  assert.match(h.out, /relaxmrf infer MODEL/);
  assert.match(h.out, /commands: infer, learn, worker, demo, help/);
  assert.equal(dash.code, 0);
  assert.equal(none.code, 2);
  assert.ok(h.out.startsWith(dash.out.trimEnd()), 'help starts with the --help text');
});

test('help infer and infer --help: the infer options, what MODEL is, examples; nothing about demo', () => {
  const a = run('help', 'infer'), b = run('infer', '--help');
  assert.equal(a.code, 0);
  assert.equal(a.out, b.out);
  assert.match(a.out, /^relaxmrf infer: /);
  for (const opt of ['--method', '--samples', '--logz', '--plot FILE.svg', '--restarts', 'MODEL is a .uai file', 'examples:']) assert.ok(a.out.includes(opt), opt);
  assert.ok(!a.out.includes('relaxmrf demo'), 'only the infer block');
  // Every option the full usage lists for infer appears in infer's help.
  const usage = run('--help').out;
  const inferPart = usage.slice(usage.indexOf('  relaxmrf infer'), usage.indexOf('  relaxmrf learn'));
  const all = new Set(inferPart.match(/--[a-z][a-z-]+/g));
  for (const o of ['--help', '--version']) all.delete(o);
  for (const o of all) assert.ok(a.out.includes(o), `${o} missing from help infer`);
});

test('help learn: its options, defaults and examples, without the paragraph on what MODEL is (learn writes MODEL.uai, it reads none)', () => {
  const a = run('help', 'learn');
  assert.equal(a.code, 0);
  assert.match(a.out, /^relaxmrf learn: /);
  for (const opt of ['--out MODEL.uai', 'Defaults: --model boltzmann', '--ais-runs 100', 'examples:']) assert.ok(a.out.includes(opt), opt);
  assert.ok(!a.out.includes('MODEL is a .uai file'), a.out);
});

test('help demo; help for an unknown command is one line on stderr and exit 2', () => {
  const d = run('help', 'demo');
  assert.equal(d.code, 0);
  assert.match(d.out, /^relaxmrf demo: .*32×32/);
  const bad = run('help', 'sample');
  assert.equal(bad.code, 2);
  assert.equal(bad.out, '');
  assert.equal(bad.err.trim().split('\n').length, 1);
  assert.match(bad.err, /no help for "sample": the commands are infer, learn, worker, demo, help/);
});

test('help worker and worker --help: the worker options and examples (it said there was no help for "worker")', () => {
  const a = run('help', 'worker'), b = run('worker', '--help');
  assert.equal(a.code, 0);
  assert.equal(a.out, b.out);
  assert.match(a.out, /^relaxmrf worker: .*queue/);
  for (const o of ['--queue', '--concurrency', '--name', '--lock-ms']) assert.ok(a.out.includes(o), `${o} missing`);
  assert.doesNotMatch(a.out, /--method/);
});
