import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dataDir } from './helpers.ts';
import { timeLeft } from '../bindings/cli/cli.ts';

const BIN = fileURLToPath(new URL('../bin/relaxmrf.js', import.meta.url));
const DATA = dataDir();
const tmp = mkdtempSync(join(tmpdir(), 'relaxmrf-cli-'));

function run(...args: string[]) {
  return runWith({}, ...args);
}

function runWith(env: Record<string, string>, ...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function csvFile(name: string, text: string): string {
  const path = join(tmp, name);
  writeFileSync(path, text);
  return path;
}

function uaiFile(name: string, text: string): string {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
}

test('infer --json (exact) on libDAI testfast.fg: the documented fields and the exact log Z', () => {
  const r = run('infer', join(DATA, 'libdai', 'testfast.fg'), '--json');
  assert.equal(r.code, 0, r.err);
  const j = JSON.parse(r.out);
  for (const k of ['model', 'method', 'logZ', 'logZStdErr', 'logZKind', 'marginals', 'diagnostics', 'seconds']) assert.ok(k in j, `missing ${k}`);
  assert.equal(j.model.n, 16);
  assert.equal(j.model.factors, 40);
  assert.equal(j.method, 'exact');
  assert.equal(j.logZKind, 'exact');
  assert.equal(j.logZStdErr, null);
  assert.ok(Math.abs(j.logZ - 14.3282332811) < 1e-9, String(j.logZ));
  assert.equal(j.marginals.length, 16);
  // testfast.out: x13 = (9.038e-01, 9.617e-02).
  assert.ok(Math.abs(j.marginals[13][0] - 0.9038) < 1e-4);
});

test('infer --method gibbs --json: estimates with standard errors; the same seed reproduces the output', () => {
  const args = ['infer', 'ising:3x3,beta=0.3,h=0.1', '--method', 'gibbs', '--seed', '7', '--samples', '3000', '--chains', '2', '--json'];
  const a = run(...args), b = run(...args);
  assert.equal(a.code, 0, a.err);
  const ja = JSON.parse(a.out), jb = JSON.parse(b.out);
  assert.equal(ja.method, 'gibbs');
  assert.equal(ja.logZ, null);
  assert.equal(ja.logZKind, null);
  assert.deepEqual(ja.marginals, jb.marginals);
  assert.equal(ja.diagnostics.chains, 2);
  assert.equal(ja.diagnostics.samplesPerChain, 3000);
  // Compare with exact from the CLI itself, within 4 standard errors.
  const ex = JSON.parse(run('infer', 'ising:3x3,beta=0.3,h=0.1', '--json').out);
  ja.marginals.forEach((row: number[], v: number) => assert.ok(Math.abs(row[1] - ex.marginals[v][1]) <= 4 * ja.marginalStdErr[v][1] + 1e-12));
});

test('--out-format uai writes PR (log10 Z) and MAR', () => {
  const r = run('infer', join(DATA, 'uai2014', 'Grids_11.uai'), '--out-format', 'uai');
  assert.equal(r.code, 0, r.err);
  const [pr, mar] = r.out.split(/(?=MAR)/);
  assert.match(pr, /^PR\n/);
  assert.ok(Math.abs(Number(pr.split('\n')[1]) - Number(readFileSync(join(DATA, 'uai2014', 'Grids_11.uai.PR'), 'utf8').split(/\s+/)[1])) < 1e-3);
  assert.equal(mar.split(/\s+/)[1], '100');
  const prefix = join(tmp, 'grids11');
  assert.equal(run('infer', join(DATA, 'uai2014', 'Grids_11.uai'), '--out-format', 'uai', '--out', prefix).code, 0);
  assert.match(readFileSync(prefix + '.MAR', 'utf8'), /^MAR\n100 2 /);
  assert.match(readFileSync(prefix + '.PR', 'utf8'), /^PR\n169\.40/);
});

test('bad input exits 2 with one line naming the problem, never a stack trace', () => {
  const cases: [string[], RegExp][] = [
    [['infer', join(tmp, 'missing.uai')], /missing\.uai.*(no such file|ENOENT)/],
    [['infer', uaiFile('dup.uai', 'MARKOV\n3\n2 2 2\n1\n3 0 1 0\n8\n1 1 1 1 1 1 1 1\n')], /dup\.uai.*factor 0.*variable 0 appears twice/],
    [['infer', uaiFile('trunc.uai', 'MARKOV\n2\n2 2\n1\n2 0 1\n4\n1 2 3')], /trunc\.uai.*(end of input|truncated)/i],
    [['infer', uaiFile('nan.uai', 'MARKOV\n1\n2\n1\n1 0\n2\n1 NaN\n')], /nan\.uai.*line 7/],
    [['infer', uaiFile('neg.uai', 'MARKOV\n1\n2\n1\n1 0\n2\n1 -1\n')], /neg\.uai.*negative/i],
    [['infer', uaiFile('scope.uai', 'MARKOV\n2\n2 2\n1\n2 0 5\n4\n1 1 1 1\n')], /scope\.uai \(line 5, factor 0\).*0…1.*'5'/],
    [['infer', uaiFile('size.uai', 'MARKOV\n2\n2 2\n1\n2 0 1\n3\n1 1 1\n')], /size\.uai.*(3 entries|table)/],
    [['infer', join(DATA, 'libdai', 'testfast.fg'), '--method', 'lbp'], /--method must be one of exact, gibbs/],
    [['infer', 'ising:3x3', '--method', 'gibbs', '--samples', '0'], /--samples must be an integer in \[1, 2147483647\], got "0"/],
    [['infer', 'ising:3x3', '--bogus'], /bogus/],
    [['infer', 'ising:3x3', '--method', 'gibbs', '--scan', 'random'], /--scan must be one of sequential, colored, got "random"/],
    [['infer', 'ising:3x3', '--method', 'gibbs', '--precision', 'f16'], /--precision must be one of f64, f32/],
    [['infer', 'ising:3x3', '--method', 'mf', '--scan', 'colored'], /--precision, --scan and --probability-table apply to --method gibbs/],
    [['infer', 'ising:3xQ'], /bad lattice shape/],
    [['infer', 'model.txt'], /unknown model format/],
    [['frobnicate'], /unknown command/],
    // A value starting with a dash: the argument parser's own message is three lines.
    [['infer', 'ising:3x3', '--method', 'exact', '--max-memory', '-5'], /--max-memory must be a number of bytes \(suffix K, M or G allowed\), got "-5"/],
    // Output files checked before the run: a missing directory, a directory where a file would go.
    [['infer', 'ising:3x3', '--out-format', 'uai', '--out', join(tmp, 'no-such-dir', 'r')], /--out .*no-such-dir.r: .*r\.MAR is in a directory that does not exist/],
    [['infer', 'ising:3x3', '--method', 'exact', '--samples', '5', '--out', join(tmp, 'no-such-dir', 'r')], /r\.samples is in a directory that does not exist/],
    // Exact samples have no UAI format: the lines were printed as if one were asked for.
    [['infer', 'ising:3x3', '--method', 'exact', '--samples', '5', '--out-format', 'uai'], /exact --samples has no UAI format/],
    [['infer', 'ising:3x3', '--method', 'exact', '--map', '--out-format', 'uai', '--out', join(tmp, 'no-such-dir', 'r')], /r\.MAP is in a directory that does not exist/],
    [['infer', 'ising:3x3', '--out-format', 'uai', '--out', join(tmp, 'taken')], /taken\.MAR is a directory/],
    // A directory that exists and refuses new files (procfs): refused before the run, where it was
    // reported after it as a directory that does not exist, the results written to the temporary directory.
    ...(existsSync('/proc/self') ? [[['infer', 'ising:3x3', '--out-format', 'uai', '--out', '/proc/x'], /^relaxmrf: --out \/proc\/x: \/proc\/x\.MAR cannot be created in its directory \(ENOENT\)$/] as [string[], RegExp]] : []),
    [['learn', csvFile('tiny.csv', '0,1\n1,0\n1,1\n'), '--out', join(tmp, 'no-such-dir', 'm.uai')], /--out .*m\.uai: is in a directory that does not exist/],
    [['infer', 'ising:3x3', '--method', 'exact', '--map', '--samples', '3'], /--map and --samples exclude each other/],
    // Two writers on standard output; decoding options that would be ignored; a lattice option with no value.
    [['infer', 'ising:3x3', '--out-format', 'uai', '--json'], /--json and --out-format uai would both write to standard output/],
    [['infer', 'ising:3x3', '--method', 'exact', '--map', '--queue', 'redis://127.0.0.1:1'], /--map decodes in this process .*--queue applies to exact inference's marginals/],
    [['infer', 'ising:3x3', '--method', 'exact', '--samples', '4', '--queue', 'redis://127.0.0.1:1'], /--samples decodes in this process/],
    [['infer', 'ising:3x3,beta='], /bad option "beta="/],
    // Counts past what the engine's loops take (2^31 iterations wrapped around and never ended) or the option's range, in the flag's words.
    [['infer', 'ising:3x3', '--method', 'bp', '--max-iterations', '2147483648'], /--max-iterations must be an integer in \[1, 2147483647\]/],
    [['infer', 'ising:3x3', '--method', 'mfrp', '--max-sweeps', '4294967297'], /--max-sweeps must be an integer in \[1, 2147483647\]/],
    [['infer', 'ising:3x3', '--method', 'mfrp', '--trials', '100000'], /--trials must be an integer in \[1, 65535\]/],
    // --samples with the default method (exact) draws exact samples: --logz was dropped without a word.
    [['infer', 'ising:3x3', '--logz', 'mirror', '--samples', '2000'], /--samples with --method exact \(the default\) decodes exact samples: --logz applies to a sampling run/],
    // 2^32 leapfrog or CD steps ran as none, 2^32 + 1 as one (exit 0); 10^9 chains or hidden units ran V8 out of heap (a fatal error).
    [['infer', 'ising:3x3', '--method', 'dhmc', '--leapfrog-steps', '4294967296'], /--leapfrog-steps must be an integer in \[1, 2147483647\]/],
    [['infer', 'ising:3x3', '--method', 'gibbs', '--samples', '1000000000000000'], /--samples must be an integer in \[1, 2147483647\]/],
    [['infer', 'ising:3x3', '--method', 'gibbs', '--chains', '1000000000'], /--chains must be an integer in \[1, 1048576\]/],
    [['learn', csvFile('tiny.csv', '0,1\n1,0\n1,1\n'), '--out', join(tmp, 'm.uai'), '--method', 'cd', '--cd-steps', '4294967297'], /--cd-steps must be an integer in \[1, 2147483647\]/],
    [['learn', csvFile('tiny.csv', '0,1\n1,0\n1,1\n'), '--out', join(tmp, 'm.uai'), '--sampler', 'dhmc', '--step-size', '0'], /--step-size must be a number > 0, got "0"/],
    // A negative value gets the option's own message, not the parser's "argument is ambiguous".
    [['infer', 'ising:3x3', '--method', 'bp', '--damping', '-0.1'], /--damping must be a number in \[0, 1\), got "-0.1"/],
    // Options of other methods, refused rather than ignored.
    [['infer', 'ising:3x3', '--method', 'bp', '--restarts', '3'], /--restarts, --budget and --max-sweeps apply to --method mf, mfrp or bounds .*not bp/],
    [['infer', 'ising:3x3', '--method', 'mf', '--trials', '3'], /--trials, --max-constraints and --budget-factor apply to --method mfrp, not mf/],
    [['infer', 'ising:3x3', '--method', 'gibbs', '--target-accept', '0.8'], /--target-accept applies to --method dhmc or mala, not gibbs/],
    [['infer', 'ising:3x3', '--method', 'bp', '--samples', '100'], /--samples applies to the samplers \(gibbs, .*\) and --logz chib, zhang and mirror, not --method bp$/],
    // Built-in specs: "periodic=1" got a message listing periodic as allowed; a repeated option kept its last value.
    [['infer', 'ising:4x4,periodic=1'], /ising:4x4,periodic=1: periodic takes no value \("periodic", not "periodic=1"\)/],
    [['infer', 'ising:4x4,h=1,h=2'], /ising:4x4,h=1,h=2: h is given twice/],
    // demo takes no options ("demo --foo" ran it with exit 0).
    [['demo', '--foo'], /demo takes no arguments, got "--foo"/],
    // AIS reads none of them (mf --logz ais --chains 8 ran as if not given).
    [['infer', 'ising:3x3', '--method', 'mf', '--logz', 'ais', '--chains', '8', '--samples', '10'], /--chains, --samples apply to the samplers .* not --method mf with --logz ais \(whose runs and temperatures are --ais-runs and --ais-steps\)/],
    [['infer', 'ising:3x3', '--method', 'exact', '--samples', '5', '--chains', '2'], /--chains applies to the samplers .*not --method exact \(whose --samples N draws exact samples\)/],
    [['infer', 'ising:3x3', '--method', 'mala', '--leapfrog-steps', '3'], /--leapfrog-steps applies to --method dhmc or pt \(with --pt-moves hmc\), not mala/],
    [['infer', 'ising:3x3', '--method', 'gibbs', '--workers', '1000000'], /--workers must be an integer in \[0, 256\]/],
    [['worker', '--queue', 'redis://127.0.0.1:1', '--concurrency', '-1'], /--concurrency must be an integer in \[1, 1024\], got "-1"/],
    [['worker', '--queue', 'redis://127.0.0.1:1', '--concurrency', '0'], /--concurrency must be an integer in \[1, 1024\], got "0"/],
    [['infer', 'ising:3x3', '--method', 'gibbs', '--shift', 'min-lambda-max'], /--shift and --factor apply to a relaxation .*not --method gibbs$/m],
    [['infer', 'ising:3x3', '--method', 'gibbs', '--logz', 'ais', '--factor', 'dense-eigen'], /--shift and --factor apply to a relaxation .*not --method gibbs --logz ais/],
    [['infer', 'ising:3x3', '--method', 'pt', '--factor', 'dense-eigen'], /--shift and --factor apply to a relaxation .*not --method pt/],
    [['infer', 'ising:4x4,periodic', '--method', 'dhmc', '--logz', 'mirror', '--factor', 'fft'], /--factor fft is the samplers' .*--logz mirror estimator/],
    [['learn', csvFile('tiny.csv', '0,1\n1,0\n1,1\n'), '--out', join(tmp, 'm.uai'), '--learning-rate', '-1'], /--learning-rate must be a number ≥ 0, got "-1"/],
    [['learn', csvFile('tiny.csv', '0,1\n1,0\n1,1\n'), '--out', join(tmp, 'm.uai'), '--model', 'rbm', '--hidden', '1000000000'], /--hidden must be an integer in \[1, 1048576\]/],
  ];
  mkdirSync(join(tmp, 'taken.MAR'), { recursive: true });
  for (const [args, re] of cases) {
    const r = run(...args);
    assert.equal(r.code, 2, `${args.join(' ')} → ${r.code}: ${r.err}`);
    const lines = r.err.trim().split('\n');
    assert.equal(lines.length, 1, `${args.join(' ')}: ${r.err}`);
    assert.match(lines[0], re);
    assert.doesNotMatch(r.err, /\n\s+at /);
  }
  assert.equal(existsSync(join(tmp, 'no-such-dir')), false, 'nothing created');
});

test('infer --method gibbs --precision f32 --scan colored: the JSON reports both; the default is f64, sequential', () => {
  const a = JSON.parse(run('infer', 'ising:4x4', '--method', 'gibbs', '--samples', '200', '--json', '--precision', 'f32', '--scan', 'colored').out);
  assert.equal(a.diagnostics.precision, 'f32');
  assert.equal(a.diagnostics.scan, 'colored');
  assert.ok(a.diagnostics.siteUpdatesPerSecond > 0);
  const b = JSON.parse(run('infer', 'ising:4x4', '--method', 'gibbs', '--samples', '200', '--json').out);
  assert.equal(b.diagnostics.precision, 'f64');
  assert.equal(b.diagnostics.scan, 'sequential');
  // --workers 0: this thread, the same result; --workers 2: the same result again, with workers.
  const c = JSON.parse(run('infer', 'ising:4x4', '--method', 'gibbs', '--samples', '200', '--json', '--workers', '0').out);
  const d = JSON.parse(run('infer', 'ising:4x4', '--method', 'gibbs', '--samples', '200', '--json', '--workers', '2').out);
  assert.deepEqual(c.marginals, b.marginals);
  assert.deepEqual(d.marginals, b.marginals);
  assert.equal(c.diagnostics.workers, undefined);
  assert.equal(d.diagnostics.workers, 2);
});

test('past the exact limit the engine refuses with exit 3 and the table size it would need', () => {
  const r = run('infer', 'ising:40x40');
  assert.equal(r.code, 3);
  assert.match(r.err, /2\^\d+ entries/);
});

test('npm start (the demo) checks Gibbs against exact inference and prints a summary', () => {
  const r = run('demo');
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /ising:32x32,beta=0\.4/);
  const m = /largest error ([\d.]+) standard errors/.exec(r.out);
  assert.ok(m, r.out);
  // 144 sites: the largest of 144 |z| values is below 4.5 unless something is wrong.
  assert.ok(Number(m[1]) < 4.5, r.out);
});

test('progress goes to stderr as plain lines when not a terminal; stdout stays JSON', () => {
  // The delay before the first report (1 s by default) set to 0, so the test does not depend on speed.
  const r = runWith({ RELAXMRF_PROGRESS_MS: '0' }, 'infer', 'ising:8x8', '--method', 'gibbs', '--samples', '1000', '--chains', '1', '--json');
  assert.equal(r.code, 0, r.err);
  assert.match(r.err, /^gibbs: \d+% \(\d+\/1200\)(, about \d+ (s|min) left)?$/m);
  // ising:8x8 (β = 1) freezes Gibbs chains into the two ordered states: the run warns, and prints nothing else.
  const short = run('infer', 'ising:8x8', '--method', 'gibbs', '--samples', '100', '--json').err;
  assert.equal(short.split('\n').filter((l) => l && !l.startsWith('relaxmrf: warning: ')).join('\n'), '', 'short runs print no progress');
  JSON.parse(r.out); // stdout stays pure JSON
});

test('exact inference by bucket elimination reports progress too, in clique configurations (--workers: as slices end)', () => {
  const model = join(DATA, 'uai2014-more', 'Pedigree_12.uai');
  for (const extra of [[], ['--workers', '2']]) {
    const r = runWith({ RELAXMRF_PROGRESS_MS: '0' }, 'infer', model, '--method', 'exact', '--max-memory', '2M', ...extra, '--json');
    assert.equal(r.code, 0, r.err);
    const flops = JSON.parse(r.out).diagnostics.flops;
    assert.match(r.err, new RegExp(`^exact: \\d+% \\(\\d+/${flops}\\)(, about \\d+ (s|min) left)?$`, 'm'), r.err);
  }
});

test('--method mf prints a lower bound at or below exact log Z, mfrp an estimate (here below it too)', () => {
  const model = join(DATA, 'libdai', 'testfast.fg');
  const mf = JSON.parse(run('infer', model, '--method', 'mf', '--restarts', '3', '--json').out);
  const mfrp = JSON.parse(run('infer', model, '--method', 'mfrp', '--restarts', '2', '--trials', '3', '--max-constraints', '4', '--json').out);
  assert.equal(mf.logZKind, 'lower-bound');
  assert.equal(mfrp.logZKind, 'estimate');
  for (const r of [mf, mfrp]) {
    assert.ok(r.logZ <= 14.3282332811 + 1e-9, `${r.method}: ${r.logZ}`);
    assert.ok(r.logZ > 14.3282332811 - 2, `${r.method}: ${r.logZ} is a weak bound`);
    assert.equal(r.marginals.length, 16);
  }
  assert.equal(mf.diagnostics.restarts, 3);
  assert.match(run('infer', model, '--method', 'mfrp', '--trials', '0').err, /--trials must be an integer in \[1, 65535\], got "0"/);
  // Budgets: mf's in coupling visits, mfrp's as a multiple of mean field's work; MFRP ≥ MF with the same restarts.
  const cut = JSON.parse(run('infer', 'ising:16x16,beta=0.4,periodic', '--method', 'mf', '--budget', '2e5', '--max-sweeps', '50', '--json').out);
  assert.equal(cut.diagnostics.budget, 2e5);
  assert.equal(cut.diagnostics.maxSweeps, 50);
  assert.ok(cut.diagnostics.work <= 2e5 && cut.diagnostics.budgetExhausted === true);
  const rp = JSON.parse(run('infer', model, '--method', 'mfrp', '--restarts', '3', '--budget-factor', '2', '--json').out);
  const mf3 = JSON.parse(run('infer', model, '--method', 'mf', '--restarts', '3', '--json').out);
  assert.equal(rp.diagnostics.budgetFactor, 2);
  assert.equal(rp.diagnostics.mfBound, mf3.logZ);
  assert.ok(rp.logZ >= mf3.logZ);
  for (const [flag, v] of [['--budget', '0'], ['--budget', 'x'], ['--budget-factor', '0']]) {
    const r = run('infer', model, '--method', 'mfrp', flag, v);
    assert.equal(r.code, 2);
    assert.match(r.err, new RegExp(`${flag} must be a positive number`));
  }
});

test('--method blockgibbs: relaxation options, marginals within 4 standard errors of exact', () => {
  const spec = 'ising:3x3,beta=0.3,h=0.1';
  const ex = JSON.parse(run('infer', spec, '--json').out);
  for (const factor of ['sparse-cholesky', 'dense-eigen']) {
    const r = run('infer', spec, '--method', 'blockgibbs', '--factor', factor, '--shift', 'min-lambda-max', '--samples', '4000', '--seed', '3', '--json');
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out);
    assert.equal(j.method, 'blockgibbs');
    j.marginals.forEach((row: number[], v: number) => assert.ok(Math.abs(row[1] - ex.marginals[v][1]) <= 4 * j.marginalStdErr[v][1] + 1e-12));
  }
  assert.match(run('infer', spec, '--method', 'blockgibbs', '--factor', 'qr').err, /--factor must be one of/);
});

test('--method dhmc and mala: marginals within 4 standard errors of exact; FFT factor chosen for a periodic lattice', () => {
  const spec = 'ising:8x8,beta=0.15,h=0.1,periodic';
  const ex = JSON.parse(run('infer', spec, '--json').out);
  const check = (j: { marginals: number[][]; marginalStdErr: number[][] }) =>
    j.marginals.forEach((row, v) => assert.ok(Math.abs(row[1] - ex.marginals[v][1]) <= 4 * j.marginalStdErr[v][1] + 1e-12, `site ${v}`));
  const d = run('infer', spec, '--method', 'dhmc', '--samples', '2000', '--leapfrog-steps', '5', '--target-accept', '0.9', '--seed', '2', '--json');
  assert.equal(d.code, 0, d.err);
  const jd = JSON.parse(d.out);
  assert.equal(jd.method, 'dhmc');
  assert.equal(jd.diagnostics.factor, 'fft');
  assert.ok(jd.diagnostics.acceptRate > 0.8, String(jd.diagnostics.acceptRate));
  check(jd);
  const m = run('infer', spec, '--method', 'mala', '--factor', 'sparse-cholesky', '--samples', '3000', '--seed', '2', '--json');
  assert.equal(m.code, 0, m.err);
  const jm = JSON.parse(m.out);
  assert.equal(jm.diagnostics.factor, 'sparse-cholesky');
  check(jm);
  assert.match(run('infer', spec, '--method', 'dhmc', '--target-accept', '1.5').err, /--target-accept must be a number in \(0, 1\)/);
  assert.match(run('infer', 'ising:3x3', '--method', 'dhmc', '--factor', 'fft').err, /no FFT factor|not a periodic lattice/);
});

test('--logz ais and chib: estimates within 4 standard errors of exact log Z, logZKind "estimate"', () => {
  const model = join(DATA, 'libdai', 'testfast.fg');
  for (const est of ['ais', 'chib']) {
    const r = run('infer', model, '--method', 'gibbs', '--samples', '2000', '--logz', est, '--seed', '4', '--json');
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out);
    assert.equal(j.logZKind, 'estimate');
    assert.equal(j.diagnostics.logzEstimator, est);
    assert.ok(j.logZStdErr > 0 && j.logZStdErr < 0.1, String(j.logZStdErr));
    assert.ok(Math.abs(j.logZ - 14.3282332811) <= 4 * j.logZStdErr, `${est}: ${j.logZ} ± ${j.logZStdErr}`);
  }
  assert.match(run('infer', model, '--logz', 'wish').err, /--logz must be one of/);
});

test('--logz ais with --ais-* options: population annealing from the CLI, within 4 SE of exact; options checked', () => {
  const model = join(DATA, 'libdai', 'testfast.fg');
  const r = run('infer', model, '--method', 'mf', '--logz', 'ais', '--ais-runs', '128', '--ais-population', '32', '--ais-steps', '500', '--ais-transition', 'gibbs', '--seed', '2', '--json');
  assert.equal(r.code, 0, r.err);
  const j = JSON.parse(r.out);
  assert.equal(j.logZKind, 'estimate');
  assert.equal(j.diagnostics['logz.runs'], 128);
  assert.equal(j.diagnostics['logz.population'], 32);
  assert.equal(j.diagnostics['logz.populations'], 4);
  assert.equal(j.diagnostics['logz.temperatures'], 500);
  assert.equal(j.diagnostics['logz.transition'], 'gibbs');
  assert.ok(j.logZStdErr > 0 && Math.abs(j.logZ - 14.3282332811) <= 4 * j.logZStdErr, `${j.logZ} ± ${j.logZStdErr}`);
  assert.match(run('infer', model, '--ais-runs', '8').err, /--ais-\* options need --logz ais/);
  assert.match(run('infer', model, '--logz', 'ais', '--ais-transition', 'metropolis').err, /--ais-transition must be one of/);
  const odd = run('infer', model, '--logz', 'ais', '--ais-runs', '10', '--ais-population', '4');
  assert.equal(odd.code, 2);
  assert.match(odd.err, /multiple of the population size/);
});

test('--workers runs the chains on worker threads with the same output; refused for methods without chains or slices', () => {
  const base = ['infer', 'ising:4x4,beta=0.3,h=0.1', '--seed', '3', '--samples', '1500', '--chains', '3', '--json'];
  for (const method of ['gibbs', 'dhmc']) {
    const one = run(...base, '--method', method);
    const two = run(...base, '--method', method, '--workers', '2');
    assert.equal(two.code, 0, two.err);
    const [a, b] = [JSON.parse(one.out), JSON.parse(two.out)];
    assert.deepEqual(b.marginals, a.marginals, method);
    assert.deepEqual(b.marginalStdErr, a.marginalStdErr, method);
    for (const k of Object.keys(a.diagnostics)) if (!/second/i.test(k)) assert.deepEqual(b.diagnostics[k], a.diagnostics[k], `${method} ${k}`);
  }
  const bad = run('infer', 'ising:3x3', '--method', 'mf', '--workers', '2');
  assert.equal(bad.code, 2);
  assert.match(bad.err, /--workers applies to exact, gibbs/);
  // Exact inference takes --workers (its slices; a model that needs none runs on this thread, the same result).
  const exact = JSON.parse(run('infer', 'ising:3x3', '--json').out), exact2 = JSON.parse(run('infer', 'ising:3x3', '--workers', '2', '--json').out);
  assert.deepEqual(exact2.marginals, exact.marginals);
  assert.equal(exact2.logZ, exact.logZ);
  assert.equal(exact2.diagnostics.workers, 1);
  assert.equal(run('infer', 'ising:3x3', '--method', 'gibbs', '--workers', '-1').code, 2); // 0 is this thread
});

test('a pairwise-only method refuses a higher-order model with exit 2 naming the methods that take it, and each of those runs on it', () => {
  const path = uaiFile('triple.uai', 'MARKOV\n3\n2 2 2\n1\n3 0 1 2\n8\n1 2 3 4 5 6 7 8\n');
  const refusals = [['treegibbs'], ['blockgibbs'], ['dhmc'], ['mala'], ['mfrp'], ['gibbs', '--logz', 'zhang'], ['gibbs', '--logz', 'chib']];
  let named = '';
  for (const args of refusals) {
    const r = run('infer', path, '--method', ...args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
    assert.equal(r.err.trim().split('\n').length, 1);
    named = /for higher-order factors use --method ([^(]*)\(/.exec(r.err)?.[1] ?? '';
    assert.ok(named, r.err);
  }
  // "exact, gibbs, pt, mf, bp, trw or bounds, or --logz ais with Gibbs transitions "
  const methods = named.replace(/, or --logz ais.*/, '').split(/, | or /).map((m) => m.trim());
  assert.ok(methods.length >= 7 && methods.includes('exact') && methods.includes('trw'), named);
  for (const m of methods) {
    const sampler = ['gibbs', 'pt'].includes(m);
    const r = run('infer', path, '--method', m, ...(sampler ? ['--samples', '200'] : []));
    assert.equal(r.code, 0, `${m}: ${r.err}`);
  }
  assert.match(named, /--logz ais with Gibbs transitions/);
  assert.equal(run('infer', path, '--method', 'gibbs', '--logz', 'ais', '--samples', '200').code, 0);
});

test('higher-order models: exact by bucket elimination and mf; zero-probability evidence and all-zero tables exit 3; bad evidence exits 2 naming the line', () => {
  // p(a) p(b) p(c | a, b): a BAYES network with a factor of arity 3 (c = a XOR b with noise).
  const net = 'BAYES\n3\n2 2 2\n3\n1 0\n1 1\n3 0 1 2\n2\n0.3 0.7\n2\n0.6 0.4\n8\n0.9 0.1 0.2 0.8 0.2 0.8 0.9 0.1\n';
  const path = uaiFile('xor.uai', net);
  const exact = JSON.parse(run('infer', path, '--json').out);
  assert.equal(exact.diagnostics.kernel, 'bucket');
  assert.ok(Math.abs(exact.logZ) < 1e-12, 'a Bayesian network without evidence has Z = 1');
  const mf = JSON.parse(run('infer', path, '--method', 'mf', '--json').out);
  assert.equal(mf.diagnostics.kernel, 'factor-graph');
  assert.ok(mf.logZ <= exact.logZ + 1e-12);
  // Evidence c = 1, a = 0: p = 0.3 · (0.6 · 0.1 + 0.4 · 0.8) = 0.114; b's posterior 0.4 · 0.8 / 0.38.
  writeFileSync(path + '.evid', '2 2 1 0 0\n');
  const ev = JSON.parse(run('infer', path, '--json').out);
  assert.ok(Math.abs(ev.logZ - Math.log(0.114)) < 1e-12, `log Z with evidence ${ev.logZ}`);
  assert.ok(Math.abs(ev.marginals[1][1] - (0.4 * 0.8) / 0.38) < 1e-12);
  assert.deepEqual(ev.marginals[0], [1, 0]);
  // Evidence of probability zero (a table of arity 3 with a zero where it points), and an all-zero table.
  const zero = uaiFile('zero.uai', net.replace('0.9 0.1 0.2 0.8 0.2 0.8 0.9 0.1', '0.9 0.1 1 0 0.2 0.8 0.9 0.1'));
  writeFileSync(zero + '.evid', '3 0 0 1 1 2 1\n'); // p(c = 1 | a = 0, b = 1) = 0
  const dead = uaiFile('dead.uai', 'MARKOV\n3\n2 2 2\n1\n3 2 0 1\n8\n0 0 0 0 0 0 0 0\n');
  for (const [file, method, re] of [[zero, 'exact', /zero potential/], [zero, 'mf', /positive probability/], [dead, 'exact', /factor 0 \(variables 0 1 2\) is zero everywhere/], [dead, 'mf', /zero everywhere/]] as const) {
    const r = run('infer', file, '--method', method);
    assert.equal(r.code, 3, `${file} ${method}: ${r.err}`);
    assert.equal(r.err.trim().split('\n').length, 1);
    assert.match(r.err, re);
  }
  writeFileSync(path + '.evid', '2\n0 1\n2 5\n');
  let r = run('infer', path);
  assert.equal(r.code, 2);
  assert.match(r.err.trim(), /^relaxmrf: .*xor\.uai\.evid \(line 3\): evidence: variable 2 has 2 states; observed value 5/);
  writeFileSync(path + '.evid', '2\n0 1\n0 0\n');
  r = run('infer', path);
  assert.equal(r.code, 2);
  assert.match(r.err.trim(), /xor\.uai\.evid \(line 3\): variable 0 is observed twice, as 1 on line 2 and as 0 here$/);
  // Too large to enumerate (2^40 configurations) but of treewidth 2: bucket elimination solves it.
  const big = uaiFile('chain3.uai', `MARKOV\n40\n${'2 '.repeat(40)}\n38\n${Array.from({ length: 38 }, (_, v) => `3 ${v} ${v + 1} ${v + 2}`).join('\n')}\n${Array.from({ length: 38 }, () => '8\n1 2 2 1 2 1 1 2').join('\n')}\n`);
  r = run('infer', big, '--json');
  assert.equal(r.code, 0, r.err);
  const chain = JSON.parse(r.out);
  assert.equal(chain.diagnostics.kernel, 'bucket');
  assert.equal(chain.diagnostics.treewidth, 2);
  // Refused at once: 30 six-state variables, every pair coupled (treewidth 29).
  const pairs: string[] = [];
  for (let a = 0; a < 30; a++) for (let b = a + 1; b < 30; b++) pairs.push(`${a} ${b}`);
  const wide = uaiFile('wide.uai', `MARKOV\n30\n${'6 '.repeat(30)}\n${pairs.length}\n${pairs.map((p) => `2 ${p}`).join('\n')}\n${pairs.map(() => `36\n${Array.from({ length: 36 }, (_, k) => 1 + (k % 5)).join(' ')}`).join('\n')}\n`);
  r = run('infer', wide);
  assert.equal(r.code, 3);
  assert.match(r.err, /largest message of/);
});

test('--method bp, trw, bounds: Bethe estimate, upper bound, interval (logZLower/logZUpper) around exact; bad options exit 2 with one line', () => {
  const fg = join(DATA, 'libdai', 'testfast.fg');
  const exact = JSON.parse(run('infer', fg, '--json').out);
  assert.equal(exact.logZLower, null);
  assert.equal(exact.logZUpper, null);
  const bp = run('infer', fg, '--method', 'bp', '--schedule', 'residual', '--damping', '0.2', '--tolerance', '1e-12', '--max-iterations', '500', '--json');
  assert.equal(bp.code, 0, bp.err);
  const jb = JSON.parse(bp.out);
  assert.equal(jb.logZKind, 'estimate');
  assert.equal(jb.logZStdErr, null);
  assert.equal(jb.diagnostics.approximation, 'Bethe');
  assert.equal(jb.diagnostics.converged, true);
  assert.equal(jb.diagnostics.schedule, 'residual');
  assert.ok(Math.abs(jb.logZ - exact.logZ - 7.187e-4) < 1e-6, String(jb.logZ)); // libDAI's BP: +7.187e-04
  const trw = JSON.parse(run('infer', fg, '--method', 'trw', '--trw-steps', '3', '--json').out);
  assert.equal(trw.logZKind, 'upper-bound');
  assert.ok(trw.logZ >= exact.logZ && trw.diagnostics.gradientSteps === 3, JSON.stringify(trw.diagnostics));
  const b = run('infer', fg, '--method', 'bounds', '--json');
  assert.equal(b.code, 0, b.err);
  const jo = JSON.parse(b.out);
  assert.equal(jo.logZ, null);
  assert.equal(jo.logZKind, 'interval');
  assert.ok(jo.logZLower <= exact.logZ && exact.logZ <= jo.logZUpper, `[${jo.logZLower}, ${jo.logZUpper}] vs ${exact.logZ}`);
  assert.equal(jo.marginals.length, 16);
  const text = run('infer', fg, '--method', 'bounds');
  assert.match(text.out, /log Z\s+in \[[-\d.]+, [-\d.]+\] \(interval\)/);
  const cases: [string[], RegExp][] = [
    [['--method', 'bp', '--damping', '1'], /--damping must be a number in \[0, 1\)/],
    [['--method', 'bp', '--damping', 'x'], /--damping/],
    [['--method', 'trw', '--schedule', 'random'], /--schedule must be one of parallel, sequential, residual/],
    [['--method', 'bp', '--max-iterations', '0'], /--max-iterations must be an integer in \[1, 2147483647\]/],
    [['--method', 'bp', '--tolerance=-1'], /--tolerance must be a number ≥ 0/],
    [['--method', 'gibbs', '--damping', '0.5'], /apply to --method bp, trw or bounds/],
    [['--method', 'bp', '--trw-steps', '2'], /--trw-steps applies to --method trw or bounds/],
  ];
  for (const [args, re] of cases) {
    const r = run('infer', 'ising:3x3', ...args);
    assert.equal(r.code, 2, `${args.join(' ')} → ${r.code}: ${r.err}`);
    assert.equal(r.err.trim().split('\n').length, 1, r.err);
    assert.match(r.err, re);
  }
  // Higher-order models: Promedus_24 has factors of arity 3 (TRW on its bipartite pairwise form); its
  // .PR is log10 Z given its evidence, which the CLI applies.
  const pr = Number(readFileSync(join(DATA, 'uai2014', 'Promedus_24.uai.PR'), 'utf8').trim().split(/\s+/).pop()) * Math.LN10;
  const upper = JSON.parse(run('infer', join(DATA, 'uai2014', 'Promedus_24.uai'), '--method', 'trw', '--json').out);
  assert.ok(upper.logZ >= pr - 1e-4 && upper.diagnostics.factorNodes > 0, `TRW ${upper.logZ} vs ${pr}`);
  const box = JSON.parse(run('infer', join(DATA, 'uai2014', 'Promedus_24.uai'), '--method', 'bounds', '--json').out);
  assert.ok(box.logZLower <= pr + 1e-4 && pr - 1e-4 <= box.logZUpper, `[${box.logZLower}, ${box.logZUpper}] vs ${pr}`);
});

test('a reader that stops early (| head) ends the run quietly, with the status of SIGPIPE (141), not a stack trace', async () => {
  // 250 000 marginals of JSON (≈ 20 MB): far more than a pipe holds, so the writer is still writing when the reader leaves.
  const child = spawn(process.execPath, [BIN, 'infer', 'ising:500x500', '--method', 'mf', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const first = await new Promise<string>((resolve) => child.stdout.once('data', (d) => resolve(String(d))));
  assert.match(first, /^\{"model":\{"n":250000/);
  child.stdout.destroy();
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  assert.equal(code, 141, err);
  assert.doesNotMatch(err, /EPIPE|\n\s+at /);
});

test('exact --samples --out PREFIX writes PREFIX.samples (plain lines: no --out-format needed), with --json too', () => {
  const a = run('infer', 'ising:3x3,beta=0.3', '--method', 'exact', '--samples', '5', '--out', join(tmp, 's1'));
  assert.equal(a.code, 0, a.err);
  assert.equal(a.out, '');
  const rows = readFileSync(join(tmp, 's1.samples'), 'utf8').trim().split('\n');
  assert.equal(rows.length, 5);
  for (const row of rows) assert.match(row, /^[01]( [01]){8}$/);
  const b = run('infer', 'ising:3x3,beta=0.3', '--method', 'exact', '--samples', '5', '--json', '--out', join(tmp, 's2'));
  assert.equal(b.code, 0, b.err);
  assert.deepEqual(JSON.parse(b.out).samples.map((x: number[]) => x.join(' ')), readFileSync(join(tmp, 's2.samples'), 'utf8').trim().split('\n'), 'the file and the JSON hold the same samples');
  assert.deepEqual(readFileSync(join(tmp, 's2.samples'), 'utf8'), readFileSync(join(tmp, 's1.samples'), 'utf8'), 'the same seed, the same samples');
});

test('--out-format uai without a single log Z (bounds: an interval; a sampler without --logz) says why there is no PR, on stderr', () => {
  const b = run('infer', 'ising:3x3', '--method', 'bounds', '--out-format', 'uai');
  assert.equal(b.code, 0);
  assert.match(b.out, /^MAR\n/);
  assert.match(b.err, /^relaxmrf: note: no PR written: --method bounds gives an interval \(logZLower, logZUpper in --json\), not one log Z\n$/);
  const g = run('infer', 'ising:3x3', '--method', 'gibbs', '--samples', '100', '--out-format', 'uai');
  assert.match(g.err, /no PR written: --method gibbs gives no log Z \(add --logz to estimate one\)/);
});

test('.fg labels other than 0, 1, …: outputs follow increasing label order, and the summary and --json (model.labels) say which label each variable is', () => {
  // Labels 5, 17, 3: x0 is label 3 (its unary table [1, 3] gives it marginal [0.25, 0.75]).
  const fg = csvFile('labels.fg', '3\n\n1\n5\n2\n2\n0 1\n1 1\n\n1\n17\n2\n2\n0 1\n1 1\n\n1\n3\n2\n2\n0 1\n1 3\n');
  const j = JSON.parse(run('infer', fg, '--json').out);
  assert.deepEqual(j.model.labels, [3, 5, 17]);
  assert.ok(Math.abs(j.marginals[0][1] - 0.75) < 1e-12, `x0 is label 3: ${j.marginals[0]}`);
  assert.match(run('infer', fg).out, /\nlabels    x0, x1, … are the file's variables 3, 5, 17 \(--json: model\.labels\)\n/);
  assert.equal(JSON.parse(run('infer', join(DATA, 'libdai', 'testfast.fg'), '--json').out).model.labels, undefined, 'labels 0 … n − 1: no map');
});

test('output files: every file is written or none is, and a failed write of the only copy keeps it in the temporary directory', async () => {
  const { writeOutputs, OutputError } = await import('../bindings/cli/output-files.ts');
  const dir = mkdtempSync(join(tmpdir(), 'relaxmrf-out-'));
  // The second file cannot be written: the first is not left behind alone (a full disk left PREFIX.PR without .MAR).
  await assert.rejects(writeOutputs('--out', [[join(dir, 'r.PR'), '1\n'], [join(dir, 'missing', 'r.MAR'), '2\n']], '; kept'), (e: unknown) => e instanceof OutputError && /--out .*missing\/r\.MAR: is in a directory that does not exist; kept$/.test((e as Error).message));
  assert.equal(existsSync(join(dir, 'r.PR')), false);
  assert.deepEqual(readdirSync(dir), [], 'no temporary file left');
  // The only copy (a learned model, samples not printed): written instead to the temporary directory.
  await assert.rejects(writeOutputs('--out', [[join(dir, 'missing', 'm.uai'), 'MARKOV\n']], '', true), (e: unknown) => {
    const m = /written instead to (\S+)$/.exec((e as Error).message);
    return m !== null && readFileSync(m[1], 'utf8') === 'MARKOV\n';
  });
  await writeOutputs('--out', [[join(dir, 'r.PR'), '1\n'], [join(dir, 'r.MAR'), '2\n']]);
  assert.deepEqual(readdirSync(dir).sort(), ['r.MAR', 'r.PR']);
});

test('progress lines say how long is left at the phase\'s pace so far, once it has run for 2 s', () => {
  const p = (done: number) => ({ phase: 'gibbs', done, total: 1000 });
  const first = { t: 0, done: 100 };
  assert.equal(timeLeft(first, 1000, p(200)), '', 'before 2 s');
  assert.equal(timeLeft(first, 5000, p(100)), '', 'no progress since first seen');
  assert.equal(timeLeft(first, 5000, p(1000)), '', 'done');
  // 100 units in 4 s: 800 left take 32 s; 100 in 60 s: 800 take 8 min; 1 in 60 s: 899 take ≈ 15 h.
  assert.equal(timeLeft(first, 4000, p(200)), 'about 32 s left');
  assert.equal(timeLeft(first, 60_000, p(200)), 'about 8 min left');
  assert.equal(timeLeft(first, 60_000, p(101)), 'about 14 h 59 min left');
  assert.equal(timeLeft({ t: 0, done: 0 }, 5400_000 - 30_000, { phase: 'x', done: 1, total: 2 }), 'about 1 h 30 min left', 'minutes rounded before hours are taken (not "1 h 60 min")');
});

test('numbers on the command line are decimal: --learning-rate 0x10 ran at 16; --epochs 1e9 is asked for in digits, not refused as "not an integer in [0, 2147483647]"', () => {
  const csv = csvFile('hex.csv', '0,1\n1,0\n1,1\n');
  const out = join(tmp, 'hex.uai');
  const hex = run('learn', csv, '--out', out, '--learning-rate', '0x10', '--epochs', '1');
  assert.equal(hex.code, 2);
  assert.match(hex.err, /--learning-rate must be a number ≥ 0, got "0x10"/);
  const sci = run('learn', csv, '--out', out, '--epochs', '1e9');
  assert.equal(sci.code, 2);
  assert.match(sci.err, /--epochs must be written in digits, got "1e9" \(1000000000\)/);
  const damping = run('infer', 'ising:4x4', '--method', 'bp', '--damping', '0x0');
  assert.equal(damping.code, 2);
  assert.match(damping.err, /--damping must be a number in \[0, 1\), got "0x0"/);
  assert.equal(run('infer', 'ising:4x4,beta=0x1').code, 2);
  assert.equal(run('infer', 'ising:4x4', '--method', 'bp', '--damping', '.5e-1').code, 0, 'decimal forms still read');
});

test('--json names the evidence file read beside a .uai model and how many variables it observes (a foreign one in range showed only in the text)', () => {
  const file = join(DATA, 'uai2014', 'Promedus_24.uai');
  const r = run('infer', file, '--method', 'mf', '--json');
  assert.equal(r.code, 0, r.err);
  const evid = readFileSync(file + '.evid', 'utf8').trim().split(/\s+/).map(Number);
  assert.deepEqual(JSON.parse(r.out).model.evidence, { file: file + '.evid', observed: evid[0] });
  const built = run('infer', 'ising:3x3', '--method', 'mf', '--json');
  assert.equal(JSON.parse(built.out).model.evidence, undefined);
});

test('AIS on a model whose zeros leave few configurations possible: exit 3, saying why more runs do not help (it said "try more runs", as futile at 1024)', () => {
  const r = run('infer', join(DATA, 'uai2014', 'Promedus_24.uai'), '--method', 'gibbs', '--samples', '100', '--logz', 'ais', '--ais-runs', '64');
  assert.equal(r.code, 3, r.err);
  assert.match(r.err, /^relaxmrf: every AIS run \(64\) started on a configuration a zero potential forbids: no estimate \(AIS starts uniformly .*exact inference, or mean field for a lower bound, does not need that\)\n$/);
});

test('BP whose messages diverge on a satisfiable model says so and how to damp them (it said the model had no configuration of positive probability); damped, it runs', () => {
  const file = join(DATA, 'uai2014-more', '2bitcomp_5.cnf.uai');
  const r = run('infer', file, '--method', 'bp');
  assert.equal(r.code, 3, r.err);
  assert.match(r.err, /^relaxmrf: belief propagation diverged: .* although the model has configurations of positive probability; try damping \(damping 0\.5, --damping 0\.5\)/);
  const damped = run('infer', file, '--method', 'bp', '--damping', '0.5', '--json');
  assert.equal(damped.code, 0, damped.err);
  assert.ok(Number.isFinite(JSON.parse(damped.out).logZ));
});
