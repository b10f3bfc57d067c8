// Model files and result files at their edges: cases an audit found (each test's name says what
// happened before).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { ModelBuilder } from '../bindings/core/model.ts';
import { readUAI, writeUAI } from '../bindings/io/formats.ts';
import { infer } from '../bindings/infer.ts';

const BIN = fileURLToPath(new URL('../bin/relaxmrf.js', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'relaxmrf-files-'));
const run = (...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const file = (name: string, text: string) => {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
};
const SMALL_UAI = 'MARKOV\n2\n2 2\n3\n1 0\n1 1\n2 0 1\n\n2\n1 2\n2\n3 1\n4\n1 2 2 1\n';

test('writeUAI refuses a constant past 7·10⁸ nats at once (1e20 looped for ever, 1e12 for 1.4·10⁹ steps), still writes one of 7.2·10⁶ (a 10⁶-site lattice at β = 3.6), and splits a table spanning more than 700 nats into factors on its scope', () => {
  const b = new ModelBuilder([2]);
  b.addUnary(0, [0, 1e20]);
  const t0 = performance.now();
  assert.throws(() => writeUAI(b.build()), /factor 0's finite log-potentials span 1\.000e\+20 nats: UAI's probability tables would need more than 1000000 copies/);
  assert.ok(performance.now() - t0 < 1000);
  const big = new ModelBuilder([2]);
  big.addConstant(1e9);
  assert.throws(() => writeUAI(big.build()), /constant log-potential .* is 1000000000 nats/);
  const lattice = new ModelBuilder([2]);
  lattice.addConstant(7.2e6);
  const kept = readUAI(writeUAI(lattice.build()));
  assert.ok(Math.abs(kept.logConst - 7.2e6) < 1e-3, `${kept.logConst}`);
  // Entries 0 and −2000 nats: three factors of −666.7 each, read back exactly enough.
  const wide = new ModelBuilder([2, 2]);
  wide.addPairwise(0, 1, [0, -2000, 5, 1]);
  const m = wide.build(), text = writeUAI(m), back = readUAI(text);
  assert.equal(text.split('\n').filter((l) => l === '2 0 1').length, 3, 'three copies of the pair factor');
  for (const x of [[0, 0], [0, 1], [1, 0], [1, 1]]) assert.ok(Math.abs(back.logPotential(x) - m.logPotential(x)) < 1e-9, `${x}: ${back.logPotential(x)} against ${m.logPotential(x)}`);
});

test('a .fg file whose factors declare more table entries than the engine holds is refused before they are allocated (392 bytes took 26 s and 4.2 GB)', () => {
  const scope = (first: number) => Array.from({ length: 26 }, (_, k) => first + k).join(' ');
  const factor = (first: number) => `26\n${scope(first)}\n${Array(26).fill(2).join(' ')}\n1\n0 1\n`;
  const p = file('big.fg', `3\n\n${factor(0)}\n${factor(1)}\n${factor(2)}`);
  const t0 = performance.now();
  const r = run('infer', p);
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /big\.fg \(line \d+, factor 2\): the factors so far need 201326592 table entries in all, past the limit of 134217728/);
  assert.ok(performance.now() - t0 < 15_000);
});

test('--map and --samples on a .fg file with labels other than 0…n−1 give the label map (JSON: labels; otherwise a note on stderr)', () => {
  const p = file('lab.fg', '1\n\n2\n40 9\n2 2\n4\n0 1\n1 2\n2 3\n3 4\n');
  const map = run('infer', p, '--map', '--json');
  assert.equal(map.code, 0, map.err);
  assert.deepEqual(JSON.parse(map.out).labels, [9, 40]);
  const samples = run('infer', p, '--samples', '3');
  assert.equal(samples.code, 0, samples.err);
  assert.match(samples.err, /each sample lists the variables in increasing label order: 9, 40/);
  // Evidence applies to .uai models: a .fg.evid beside the file is named as not read.
  writeFileSync(p + '.evid', '1 0 1\n');
  assert.match(run('infer', p).err, /lab\.fg\.evid is not read: evidence files apply to \.uai models/);
  // 0…n−1 labels: nothing added.
  const plain = run('infer', file('plain.fg', '1\n\n2\n0 1\n2 2\n4\n0 1\n1 2\n2 3\n3 4\n'), '--map', '--json');
  assert.equal(JSON.parse(plain.out).labels, undefined);
});

test('--out "" is refused (it printed UAI text and JSON mixed on stdout, exit 0, no files); a PREFIX.PR left by an earlier run is removed when this run has no log Z', () => {
  const uai = file('m.uai', SMALL_UAI);
  const empty = run('infer', uai, '--out-format', 'uai', '--out', '', '--json');
  assert.equal(empty.code, 2);
  assert.match(empty.err, /--out needs a file prefix, got an empty string/);
  const prefix = join(tmp, 'p');
  assert.equal(run('infer', uai, '--out-format', 'uai', '--out', prefix).code, 0);
  assert.ok(existsSync(prefix + '.PR'));
  const again = run('infer', uai, '--method', 'gibbs', '--samples', '200', '--out-format', 'uai', '--out', prefix);
  assert.equal(again.code, 0, again.err);
  assert.ok(!existsSync(prefix + '.PR'), 'the first run\'s PR beside the second run\'s MAR');
  assert.match(again.err, /removed .*p\.PR, left by an earlier run: this run has no log Z/);
  assert.match(readFileSync(prefix + '.MAR', 'utf8'), /^MAR\n/);
});

test('--out with a name too long for the file system is refused before the run; the temporary names never are (PREFIX.MAR.<pid>.tmp passed 255 bytes and failed after the run)', () => {
  const uai = file('n.uai', SMALL_UAI);
  const long = run('infer', uai, '--out-format', 'uai', '--out', join(tmp, 'b'.repeat(260)));
  assert.equal(long.code, 2);
  assert.match(long.err, /has a name longer than 255 bytes/);
  const edge = join(tmp, 'c'.repeat(250)); // PREFIX.MAR is 254 bytes
  const r = run('infer', uai, '--out-format', 'uai', '--out', edge);
  assert.equal(r.code, 0, r.err);
  assert.ok(existsSync(edge + '.MAR') && existsSync(edge + '.PR'));
});

test('exact log Z sums its messages with compensation (10⁶ independent variables drifted by 4·10⁻⁶ nats, 10⁵ by 1.1·10⁻⁷)', async () => {
  const engine = await loadEngine();
  const n = 100_000, b = new ModelBuilder(new Array(n).fill(2));
  for (let v = 0; v < n; v++) b.addUnary(v, [0, 0.3]);
  const m = b.build(), truth = n * Math.log1p(Math.exp(0.3));
  for (const method of ['elimination', 'bucket'] as const) {
    const r = infer(engine, m, { method: 'exact', exact: { method } });
    assert.ok(Math.abs(r.logZ! - truth) < 1e-9, `${method}: ${r.logZ! - truth}`);
  }
});

test('a .fg file\'s factors on one scope count once against the size limit and share one table (129 sparse copies of a 2^20-entry factor were refused, and took a table each)', async () => {
  const engine = await loadEngine();
  const labels = Array.from({ length: 20 }, (_, k) => k).join(' '), cards = Array(20).fill(2).join(' ');
  const copy = (entry: number, value: number) => `20\n${labels}\n${cards}\n2\n0 1\n${entry} ${value}\n`;
  // 128 copies listing entries 0 and 5, one listing 0 and 7: only entry 0 survives the product.
  const text = `129\n\n${Array.from({ length: 128 }, () => copy(5, 2)).join('\n')}\n${copy(7, 3)}`;
  const { readFG } = await import('../bindings/io/formats.ts');
  const t0 = performance.now();
  const m = readFG(text, 'dup.fg');
  assert.ok(performance.now() - t0 < 5000);
  assert.equal(m.nFactors, 1);
  assert.equal(infer(engine, m, { method: 'exact' }).logZ, 0, 'the product is 1 on entry 0 and 0 elsewhere');
  // Three factors on one variable: (1, 3) · (2, 5) · (0, 7) = (0, 105).
  const small = `3\n\n1\n0\n2\n2\n0 1\n1 3\n\n1\n0\n2\n2\n0 2\n1 5\n\n1\n0\n2\n1\n1 7\n`;
  assert.ok(Math.abs(infer(engine, readFG(small), { method: 'exact' }).logZ! - Math.log(3 * 5 * 7)) < 1e-12);
});
