// `relaxmrf learn`: the JSON report, the UAI file it writes (read back and checked against exact
// inference), bad data files (exit 2, one line naming file and line) and a divergent run (exit 3,
// the last good model written).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { linkSync, mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { readUAI } from '../bindings/io/formats.ts';
import { exactInference } from '../bindings/exact/exact.ts';
import { readCSV } from '../bindings/io/csv.ts';
import { mulberry32 } from './helpers.ts';

const BIN = fileURLToPath(new URL('../bin/relaxmrf.js', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'relaxmrf-learn-'));
const engine = await loadEngine();

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function file(name: string, text: string): string {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
}

/** Rows of 6 correlated bits: two groups of three copies of a coin, each bit flipped w.p. 0.1. */
function csv(rows: number, seed: number): string {
  const rand = mulberry32(seed), lines = ['a,b,c,d,e,f'];
  for (let r = 0; r < rows; r++) {
    const g = [rand() < 0.5 ? 1 : 0, rand() < 0.3 ? 1 : 0];
    lines.push(Array.from({ length: 6 }, (_, i) => g[i >> 1 & 1] ^ (rand() < 0.1 ? 1 : 0)).join(','));
  }
  return lines.join('\n') + '\n';
}

test('learn --json: settings, epochs, log-likelihoods; the UAI file is the learned RBM', () => {
  const data = file('train.csv', csv(400, 1)), testData = file('test.csv', csv(200, 2)), out = join(tmp, 'rbm.uai');
  const r = run('learn', data, '--model', 'rbm', '--hidden', '2', '--epochs', '30', '--learning-rate', '0.3', '--batch', '20', '--test', testData, '--out', out, '--json', '--seed', '3');
  assert.equal(r.code, 0, r.err);
  const j = JSON.parse(r.out);
  assert.equal(j.data.rows, 400);
  assert.deepEqual(j.data.header, ['a', 'b', 'c', 'd', 'e', 'f']);
  assert.equal(j.settings.model, 'rbm');
  assert.equal(j.settings.hidden, 2);
  assert.equal(j.epochs.length, 30);
  assert.equal(j.diverged, null);
  assert.deepEqual(j.model, { out, variables: 8, visible: 6, hidden: 2, states: 2, couplings: 12 });
  // The file: visible units 0…5, hidden 6, 7; its exact log Z, with the data's log-potentials
  // summed over the hidden units, gives the reported training log-likelihood.
  const model = readUAI(readFileSync(out, 'utf8'), out);
  assert.equal(model.n, 8);
  const logZ = exactInference(engine, model).logZ;
  const d = readCSV(readFileSync(data, 'utf8'), data);
  let ll = 0;
  for (let r2 = 0; r2 < d.rows; r2++) {
    const terms: number[] = [];
    for (let h = 0; h < 4; h++) terms.push(model.logPotential([...d.values.subarray(r2 * 6, r2 * 6 + 6), h & 1, h >> 1]));
    const m = Math.max(...terms);
    ll += m + Math.log(terms.reduce((s, t) => s + Math.exp(t - m), 0)) - logZ;
  }
  assert.equal(j.trainLogLikelihood.method, 'exact');
  assert.ok(Math.abs(ll / d.rows - j.trainLogLikelihood.value) < 1e-9, `${ll / d.rows} vs ${j.trainLogLikelihood.value}`);
  assert.equal(j.testLogLikelihood.samples, 200);
  // Learning helped: better than independent bits at the data's frequencies (about −4.0 here; the best is about −3.1).
  assert.ok(j.trainLogLikelihood.value > -3.6, `train log-likelihood ${j.trainLogLikelihood.value}`);
});

test('learn --sampler blockgibbs / dhmc: an SRBM learns; epochs report the shift and the DHMC acceptance', () => {
  const data = file('srbm.csv', csv(400, 4)), out = join(tmp, 'srbm.uai');
  for (const sampler of ['blockgibbs', 'dhmc']) {
    const r = run('learn', data, '--model', 'srbm', '--hidden', '2', '--sampler', sampler, '--epochs', '20', '--learning-rate', '0.3', '--batch', '20', '--out', out, '--json', '--seed', '3');
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out);
    assert.equal(j.settings.sampler, sampler);
    assert.equal(j.settings.shiftEpsilon, 0.01);
    const last = j.epochs.at(-1);
    assert.ok(last.shiftAlpha >= 0 && last.lambdaMin <= 0 && last.refreshSeconds >= 0, JSON.stringify(last));
    if (sampler === 'dhmc') assert.ok(last.acceptance > 0.5 && last.stepSize > 0, JSON.stringify(last));
    assert.ok(j.trainLogLikelihood.value > -3.6, `${sampler}: train log-likelihood ${j.trainLogLikelihood.value}`);
  }
});

test('learn: bad data files and usage exit 2 with one line naming the file and line', () => {
  const out = join(tmp, 'bad.uai');
  const cases: [string, string, RegExp][] = [
    ['ragged.csv', '0,1,0\n1,1\n', /ragged\.csv \(line 2\): 2 values, expected 3/],
    ['range.csv', 'x,y\n0,1\n2,0\n', /range\.csv \(line 3\): column 1: 2 is not a state in 0…1/],
    ['empty.csv', '\n\n', /empty\.csv: empty: no data rows/],
    ['nan.csv', '0,1\n1,abc\n', /nan\.csv \(line 2\): column 2: "abc" is not a number/],
  ];
  for (const [name, text, re] of cases) {
    const r = run('learn', file(name, text), '--out', out);
    assert.equal(r.code, 2, `${name}: ${r.err}`);
    assert.match(r.err, re);
    assert.equal(r.err.trim().split('\n').length, 1);
  }
  const good = file('ok.csv', '0,1\n1,0\n');
  assert.equal(run('learn', good).code, 2);
  assert.match(run('learn', good, '--out', out, '--model', 'rbm').err, /needs --hidden/);
  assert.match(run('learn', good, '--out', out, '--sampler', 'mala').err, /not available for learning/);
  assert.match(run('learn', good, '--out', out, '--sampler', 'dhmc', '--leapfrog-steps', '0').err, /--leapfrog-steps/);
  // Options the run would ignore (the model, statistics and likelihoods were the same; settings echoed them).
  for (const [args, re] of [
    [['--leapfrog-steps', '3'], /^relaxmrf: --leapfrog-steps applies to --sampler dhmc, not gibbs$/],
    [['--sampler', 'tree', '--step-size', '0.2', '--leapfrog-steps', '2'], /--leapfrog-steps and --step-size apply to --sampler dhmc, not tree/],
    [['--shift-epsilon', '0.1'], /--shift-epsilon applies to --sampler blockgibbs or dhmc/],
    [['--model', 'rbm', '--hidden', '2', '--visible-rate', '0.1'], /--visible-rate applies to machines with visible–visible couplings/],
    // An RBM has no Gaussian layer: its dhmc is its block Gibbs, and the step size went unused.
    [['--model', 'rbm', '--hidden', '2', '--sampler', 'dhmc', '--step-size', '0.1', '--shift-epsilon', '0.1'], /^relaxmrf: --step-size and --shift-epsilon apply to the Gaussian layer of machines with visible–visible couplings \(boltzmann, srbm, potts\); an rbm's samplers are its block Gibbs$/],
    // Each option once (the last one was used).
    [['--epochs', '3'], /^relaxmrf: --epochs is given twice$/],
    [['--ais-runs', '8'], /--ais-runs and --ais-steps apply when the log-likelihood is estimated by AIS .*with 2 binary columns it is exact/],
    [['--no-evaluate', '--ais-steps', '50'], /--ais-runs and --ais-steps apply to the log-likelihood, which --no-evaluate skips/],
    // CD's chains are the minibatch's rows (settings echoed --particles 7, unused); --test was ignored; --max-weight 0 ran, then exit 3 "diverged".
    [['--method', 'cd', '--particles', '7'], /^relaxmrf: --particles applies to --method pcd \(persistent particles\); cd runs one chain per minibatch row \(--batch\)$/],
    [['--test', good, '--no-evaluate'], /^relaxmrf: --test applies to the log-likelihood, which --no-evaluate skips$/],
    [['--max-weight', '0'], /^relaxmrf: --max-weight must be a number > 0, got "0"$/],
  ] as const) {
    const r = run('learn', good, '--out', out, '--epochs', '1', ...args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
    assert.match(r.err.trim(), re);
  }
  // Past 2^20 visible configurations the likelihood is AIS's, and they are taken.
  const wide = file('wide.csv', Array.from({ length: 12 }, (_, r) => Array.from({ length: 21 }, (_, c) => (r * 7 + c * 3) % 5 < 2 ? 1 : 0).join(',')).join('\n') + '\n');
  const ais = run('learn', wide, '--out', out, '--epochs', '1', '--ais-runs', '4', '--ais-steps', '20', '--json');
  assert.equal(ais.code, 0, ais.err);
  const like = JSON.parse(ais.out).trainLogLikelihood;
  assert.deepEqual([like.method, like.aisRuns, like.aisSteps], ['ais', 4, 20]);
  // AIS's caveats: in the likelihood, in --json's warnings and on stderr, as infer reports its own (4 runs passed silently).
  assert.match(like.warnings.join('\n'), /only 4 runs/);
  // First the data's own (12 rows of 21 columns: repeated columns, whose couplings have no maximum), then AIS's.
  const warnings: string[] = JSON.parse(ais.out).warnings;
  const fromAIS = warnings.filter((w) => /^the log-likelihood's log Z \(AIS\): /.test(w));
  assert.ok(fromAIS.length > 0, JSON.stringify(warnings));
  assert.deepEqual(warnings.slice(0, warnings.length - fromAIS.length).map((w) => /^the log-likelihood has no maximum: /.test(w)), [true]);
  assert.deepEqual(ais.err.trim().split('\n'), warnings.map((w: string) => `relaxmrf: warning: ${w}`));
  const text = run('learn', wide, '--out', out, '--epochs', '1', '--ais-runs', '4', '--ais-steps', '20');
  assert.equal(text.code, 0, text.err);
  assert.match(text.err, /^relaxmrf: warning: the log-likelihood's log Z \(AIS\): only 4 runs/m);
  // An exact likelihood has no caveats, on data with every pair of states (ok.csv's two rows have no maximum).
  const full = file('full.csv', '0,1\n1,0\n0,0\n1,1\n');
  assert.deepEqual(JSON.parse(run('learn', full, '--out', out, '--epochs', '1', '--json').out).warnings, []);
});

test('learn: a divergent run stops with exit 3 and writes the last good model', () => {
  const data = file('div.csv', csv(200, 4)), out = join(tmp, 'div.uai');
  const r = run('learn', data, '--out', out, '--learning-rate', '50', '--schedule', 'constant', '--max-weight', '30', '--epochs', '20', '--batch', '10');
  assert.equal(r.code, 3, r.err);
  assert.match(r.err, /learning diverged in epoch \d+ .*past the limit 30 \(maxWeight, --max-weight\)/);
  const model = readUAI(readFileSync(out, 'utf8'), out);
  assert.equal(model.n, 6);
  for (const t of model.tables) assert.ok(Number.isFinite(t) && Math.abs(t) <= 30, `table entry ${t}`);
});

test('learn --model potts: states from the data, a UAI model with 3-state variables', () => {
  const rand = mulberry32(5), lines: string[] = [];
  for (let r = 0; r < 300; r++) {
    const x = Math.floor(rand() * 3);
    lines.push([x, rand() < 0.8 ? x : Math.floor(rand() * 3), Math.floor(rand() * 3)].join(','));
  }
  const data = file('potts.csv', lines.join('\n')), out = join(tmp, 'potts.uai');
  const r = run('learn', data, '--model', 'potts', '--epochs', '10', '--batch', '30', '--out', out, '--json');
  assert.equal(r.code, 0, r.err);
  const j = JSON.parse(r.out);
  assert.equal(j.settings.states, 3);
  assert.deepEqual(j.model, { out, variables: 3, visible: 3, hidden: 0, states: 3, couplings: 3 });
  const model = readUAI(readFileSync(out, 'utf8'), out);
  assert.deepEqual(Array.from(model.card), [3, 3, 3]);
  // Exact log Z of the written file and the data's log-potentials give the reported log-likelihood.
  const logZ = exactInference(engine, model).logZ;
  const d = readCSV(readFileSync(data, 'utf8'), data, 2);
  let ll = 0;
  for (let i = 0; i < d.rows; i++) ll += model.logPotential(d.values.subarray(i * 3, i * 3 + 3)) - logZ;
  assert.ok(Math.abs(ll / d.rows - j.trainLogLikelihood.value) < 1e-9, `${ll / d.rows} vs ${j.trainLogLikelihood.value}`);
  assert.match(run('learn', data, '--model', 'potts', '--states', '2', '--out', out).err, /potts\.csv \(line \d+\): column \d: 2 is not a state in 0…1/);
});

test('learn --model potts --sampler blockgibbs / dhmc: the Gaussian layer over the one-hot bits; epochs report the shift and the DHMC acceptance', () => {
  const rand = mulberry32(5), lines: string[] = [];
  for (let r = 0; r < 300; r++) {
    const x = Math.floor(rand() * 3);
    lines.push([x, rand() < 0.8 ? x : Math.floor(rand() * 3), Math.floor(rand() * 3)].join(','));
  }
  const data = file('potts-layer.csv', lines.join('\n')), out = join(tmp, 'potts-layer.uai');
  // Independent units at the data's frequencies: the log-likelihood learning must beat.
  let indep = 0;
  for (let c = 0; c < 3; c++) {
    const f = [0, 0, 0];
    for (const l of lines) f[Number(l.split(',')[c])]++;
    for (const n of f) if (n) indep += (n * Math.log(n / lines.length)) / lines.length;
  }
  const ll: Record<string, number> = {};
  for (const sampler of ['gibbs', 'blockgibbs', 'dhmc']) {
    const r = run('learn', data, '--model', 'potts', '--sampler', sampler, '--epochs', '40', '--batch', '30', '--out', out, '--json', '--seed', '3');
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out), last = j.epochs.at(-1);
    assert.equal(j.settings.sampler, sampler);
    assert.deepEqual(Array.from(readUAI(readFileSync(out, 'utf8'), out).card), [3, 3, 3]);
    ll[sampler] = j.trainLogLikelihood.value;
    if (sampler === 'gibbs') continue;
    assert.ok(last.shiftAlpha > 0 && last.lambdaMin < 0 && last.refreshSeconds >= 0, JSON.stringify(last));
    if (sampler === 'dhmc') assert.ok(last.acceptance > 0.5 && last.stepSize > 0, JSON.stringify(last));
    // As good as Gibbs particles (−2.660 here, independent units −3.287; the three runs within 0.0002;
    // particles drawing independent bits instead of one state a unit ended 0.054–0.057 above).
    assert.ok(ll[sampler] > indep + 0.2 && Math.abs(ll[sampler] - ll.gibbs) < 0.02, `${sampler}: train log-likelihood ${ll[sampler]}, Gibbs particles ${ll.gibbs}, independent ${indep}`);
  }
});

test('readCSV: LF, CRLF and CR-only line endings read alike (a CR-only file failed with a raw CR inside its message); hex literals are not numbers', () => {
  assert.throws(() => readCSV('0x1,0\n1,0\n', 'hex.csv'), /column 1: "0x1" is not a number/);
  const want = readCSV('a,b\n0,1\n1,0\n1,1\n', 'lf.csv');
  for (const text of ['a,b\r\n0,1\r\n1,0\r\n1,1\r\n', 'a,b\r0,1\r1,0\r1,1\r']) {
    const d = readCSV(text, 'x.csv');
    assert.deepEqual([d.rows, d.cols, Array.from(d.values)], [want.rows, want.cols, Array.from(want.values)]);
  }
});

test('learn --no-evaluate skips the log-likelihood (AIS on a 3-unit, 255-state Potts machine took minutes); the model is still written', () => {
  const data = file('potts255.csv', '0,254,3\n254,0,7\n1,2,3\n');
  const out = join(tmp, 'potts255.uai');
  const t0 = performance.now();
  const r = run('learn', data, '--model', 'potts', '--states', '255', '--epochs', '1', '--no-evaluate', '--out', out, '--json');
  assert.equal(r.code, 0, r.err);
  const j = JSON.parse(r.out);
  assert.equal(j.trainLogLikelihood, null);
  assert.equal(j.settings.evaluate, false);
  assert.equal(readUAI(readFileSync(out, 'utf8')).card[0], 255);
  assert.ok(performance.now() - t0 < 20_000);
});

test('learn refuses an --out that is the training or the --test file (the learned model replaced the data at the end of the run)', () => {
  const data = file('self.csv', csv(50, 6)), testData = file('self-test.csv', csv(20, 7));
  const before = [readFileSync(data, 'utf8'), readFileSync(testData, 'utf8')];
  for (const [out, what] of [[`${tmp}/./self.csv`, 'the training data'], [`${tmp}/x/../self-test.csv`, 'the --test data']] as const) {
    const r = run('learn', data, '--test', testData, '--epochs', '1', '--out', out);
    assert.equal(r.code, 2, r.err);
    assert.equal(r.err.trim(), `relaxmrf: --out ${out} is ${what} (${what === 'the training data' ? data : testData}): the model would overwrite it`);
  }
  // A hard link to the training file is that file too.
  const link = join(tmp, 'self-link.csv');
  linkSync(data, link);
  assert.match(run('learn', data, '--epochs', '1', '--out', link).err, /is the training data/);
  assert.deepEqual([readFileSync(data, 'utf8'), readFileSync(testData, 'utf8')], before);
});

test('learn refuses a --test file whose header names other columns than the training file\'s (b,a against a,b was scored with its columns swapped)', () => {
  const data = file('ab.csv', 'a,b\n0,1\n1,0\n1,1\n0,1\n'), out = join(tmp, 'ab.uai');
  const r = run('learn', data, '--test', file('ba.csv', 'b,a\n0,1\n1,1\n'), '--epochs', '1', '--out', out);
  assert.equal(r.code, 2, r.err);
  assert.equal(r.err.trim(), `relaxmrf: ${join(tmp, 'ba.csv')}: header "b,a" differs from ${data}'s "a,b" (columns are matched by position: reorder them, or give the same names)`);
  // The same names, or a header on one file only: matched by position as before.
  assert.equal(run('learn', data, '--test', file('ab2.csv', 'a,b\n0,1\n'), '--epochs', '1', '--out', out).code, 0);
  assert.equal(run('learn', data, '--test', file('bare.csv', '0,1\n'), '--epochs', '1', '--out', out).code, 0);
});

test('learn --json on one sample: sampleStdErr is null, as the README\'s table says (one value has no spread); the text report says so', () => {
  const data = file('one.csv', '0,1,1\n'), out = join(tmp, 'one.uai');
  const j = JSON.parse(run('learn', data, '--epochs', '1', '--out', out, '--json').out);
  assert.equal(j.trainLogLikelihood.samples, 1);
  assert.equal(j.trainLogLikelihood.sampleStdErr, null);
  assert.match(run('learn', data, '--epochs', '1', '--out', out).out, /one sample: no spread over samples/);
  const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
  assert.match(readme, /sampleStdErr \(spread of the per-sample values \/ √samples; `null` for one sample/);
});
