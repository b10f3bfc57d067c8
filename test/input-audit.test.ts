// Input at its edges, through the CLI and the readers: cases an audit found read wrongly or
// explained badly (each test's name says what happened before).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FormatError } from '../bindings/core/errors.ts';
import { readEvidence, readFG, readUAI } from '../bindings/io/formats.ts';
import { readCSV } from '../bindings/io/csv.ts';

const BIN = fileURLToPath(new URL('../bin/relaxmrf.js', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'relaxmrf-input-'));
const run = (...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const refusedWith = (f: () => unknown, pattern: RegExp): void => {
  assert.throws(f, (e: unknown) => e instanceof FormatError && pattern.test(e.message));
};

test('an option given twice is refused (the last one ran: --method gibbs --method exact ran exact)', () => {
  for (const args of [['--method', 'gibbs', '--method', 'exact'], ['--samples', '100', '--samples=200'], ['--json', '--json']]) {
    const r = run('infer', 'ising:3x3', ...args);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, new RegExp(`^relaxmrf: ${args[0]} is given twice\\n$`));
  }
  assert.equal(run('worker', '--queue', 'redis://127.0.0.1:1', '--queue', 'redis://127.0.0.1:2').code, 2);
});

test('a built-in model spec is read whole: trailing parts, an option with two values, a repeated periodic and sides not in digits are refused (they were dropped or read as 10)', () => {
  for (const spec of ['ising:3x3:foo', 'ising:3x3,beta=0.5:junk', 'ising:3x3,beta=1=2', 'ising:3x3,periodic,periodic', 'ising:1e1x2', 'potts:4x4,q=3=4']) {
    const r = run('infer', spec, '--method', 'exact');
    assert.equal(r.code, 2, `${spec}: ${r.err}`);
    assert.match(r.err, /^relaxmrf: .*(bad lattice shape|bad option|given twice)/);
  }
  assert.equal(run('infer', 'ising:3x3,beta=0.5,periodic', '--method', 'exact').code, 0);
});

test('evidence-like files beside a .uai model that are not MODEL.uai.evid are named in a note (FOO.evid beside FOO.uai was ignored without a word)', () => {
  const dir = mkdtempSync(join(tmp, 'evid-'));
  const model = join(dir, 'ev.uai');
  writeFileSync(model, 'MARKOV\n2\n2 2\n1\n2 0 1\n4\n1 2 3 4\n');
  writeFileSync(join(dir, 'ev.evid'), '1 1 1\n');
  const r = run('infer', model, '--method', 'exact', '--json');
  assert.equal(r.code, 0, r.err);
  assert.equal(JSON.parse(r.out).logZ, Math.log(10), 'no evidence applied');
  assert.match(r.err, /note: .*ev\.evid is not read: the evidence of .*ev\.uai is read from .*ev\.uai\.evid/);
  // With the right file too, the other is still named; the right one alone gives no note.
  writeFileSync(join(dir, 'ev.uai.evid'), '1 1 1\n');
  const both = run('infer', model, '--method', 'exact', '--json');
  assert.ok(Math.abs(JSON.parse(both.out).logZ - Math.log(6)) < 1e-12, 'x1 = 1 observed');
  assert.match(both.err, /ev\.evid is not read/);
  const alone = mkdtempSync(join(tmp, 'evid-'));
  writeFileSync(join(alone, 'm.uai'), 'MARKOV\n1\n2\n1\n1 0\n2\n1 2\n');
  writeFileSync(join(alone, 'm.uai.evid'), '1 0 1\n');
  assert.equal(run('infer', join(alone, 'm.uai'), '--method', 'exact').err, '');
});

test('--logz keeps the method\'s own log Z as diagnostics.methodLogZ (exact\'s value and trw\'s certified bound vanished)', () => {
  const exact = JSON.parse(run('infer', 'ising:3x3,beta=0.3', '--method', 'exact', '--json').out);
  const withAIS = JSON.parse(run('infer', 'ising:3x3,beta=0.3', '--method', 'exact', '--logz', 'ais', '--json').out);
  assert.equal(withAIS.logZKind, 'estimate');
  assert.equal(withAIS.diagnostics.methodLogZ, exact.logZ);
  assert.equal(withAIS.diagnostics.methodLogZKind, 'exact');
  const trw = JSON.parse(run('infer', 'ising:3x3,beta=0.3', '--method', 'trw', '--logz', 'ais', '--json').out);
  assert.equal(trw.diagnostics.methodLogZKind, 'upper-bound');
  assert.ok(trw.diagnostics.methodLogZ >= exact.logZ, 'the bound');
});

test('messages: sizes past 2^53 in powers of two (a 64-variable scope "needed Infinity entries"), several evidence samples named, CSV rows split by tabs or semicolons named (the first was taken as a header), a name beside numbers on the first row hinted', () => {
  const n = 64, vars = Array.from({ length: n }, (_, v) => v).join(' ');
  refusedWith(() => readUAI(`MARKOV ${n} ${'65536 '.repeat(n)} 1 ${n} ${vars}`), /needs 2\^1024\.0 table entries, past the limit/);
  refusedWith(() => readFG(`1\n${n}\n${vars}\n${'65536 '.repeat(n)}\n0\n`), /the factor needs 2\^1024\.0 table entries/);
  refusedWith(() => readFG(`1\n70\n1 2 3\n`), /arity 70 is past the limit of 64/);
  refusedWith(() => readEvidence('2 1 0 1 2 0 1 1 0'), /holds 2 evidence samples .* only one sample is supported/);
  refusedWith(() => readCSV('0\t1\n1\t0\n', 'tabs.csv'), /line 1\): no comma, but tabs: the values must be separated by commas/);
  refusedWith(() => readCSV('0;1\n', 'semi.csv'), /no comma, but semicolons/);
  refusedWith(() => readCSV('x1,2\n0,1\n', 'h.csv'), /column 1: "x1" is not a number \(a header line must have no field that is a number\)/);
  assert.deepEqual(readCSV('a,b\n0,1\n', 'ok.csv').header, ['a', 'b']);
});

test('small messages: --max-memory 1e9 says to write it in digits (it said only "must be a number of bytes"); evidence on a one-state variable says "1 state"', async () => {
  const r = run('infer', 'ising:3x3', '--method', 'exact', '--max-memory', '1e9');
  assert.equal(r.code, 2);
  assert.match(r.err, /got "1e9" \(write it in digits: 1000000000\)\n$/);
  const { applyEvidence } = await import('../bindings/io/formats.ts');
  assert.throws(() => applyEvidence(readUAI('MARKOV 2 1 2 1 2 0 1 2 1 1'), new Map([[0, 1]])), /variable 0 has 1 state; observed value 1 is out of range 0…0/);
});

test('--out refuses a prefix ending in a separator (dir/ wrote the hidden files dir/.MAR and dir/.PR); a PR file holding a bound or an estimate says so in a note', () => {
  const dir = mkdtempSync(join(tmp, 'out-'));
  const r = run('infer', 'ising:3x3', '--method', 'exact', '--out-format', 'uai', '--out', `${dir}/`);
  assert.equal(r.code, 2);
  assert.match(r.err, /--out needs a file prefix, not a directory/);
  for (const [method, kind] of [['trw', 'an upper bound on log10 Z'], ['mf', 'a lower bound on log10 Z'], ['bp', 'an estimate of log10 Z']]) {
    const w = run('infer', 'ising:3x3,beta=0.3', '--method', method, '--out-format', 'uai', '--out', join(dir, method));
    assert.equal(w.code, 0, w.err);
    assert.match(w.err, new RegExp(`note: the PR file \\(.*${method}\\.PR\\) holds ${kind} \\(--method ${method}\\), not the exact value`));
  }
  assert.doesNotMatch(run('infer', 'ising:3x3', '--method', 'exact', '--out-format', 'uai', '--out', join(dir, 'exact')).err, /holds/);
});

test('a closed stdout pipe (--json | head) leaves no temporary output files behind (4 of 5 runs left a .relaxmrf-PID-0.tmp)', () => {
  const dir = mkdtempSync(join(tmp, 'pipe-'));
  for (let k = 0; k < 5; k++) spawnSync('sh', ['-c', `"${process.execPath}" "${BIN}" infer ising:3x3 --out-format uai --out "${join(dir, 'x')}" --json | head -c 1 > /dev/null`]);
  assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.tmp')), []);
});
