import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FormatError, ModelError } from '../bindings/core/errors.ts';
import { loadModelFile } from '../bindings/io/files.ts';
import {
  applyEvidence,
  readEvidence,
  readEvidenceWithLines,
  readFG,
  readFGWithLabels,
  readMAR,
  readPR,
  readUAI,
  writeMAR,
  writePR,
  writeUAI,
} from '../bindings/io/formats.ts';
import { Model, ModelBuilder } from '../bindings/core/model.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import { dataDir, mulberry32, randomFactorGraph } from './helpers.ts';

// Shared read-only data next to the repository (see SOURCE.txt in each folder).
const DATA = dataDir();
const UAI_DIR = join(DATA, 'uai2014');
const FG_FILE = join(DATA, 'libdai', 'testfast.fg');

function throwsFormat(fn: () => unknown, ...patterns: (string | RegExp)[]): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof FormatError, `expected a FormatError, got ${e}`);
    for (const p of patterns) {
      if (typeof p === 'string') assert.ok(e.message.includes(p), `message ${JSON.stringify(e.message)} lacks ${JSON.stringify(p)}`);
      else assert.match(e.message, p);
    }
    return true;
  });
}

/** Calls fn on every configuration of the given cardinalities (first variable slowest). */
function forEachConfig(card: ArrayLike<number>, fn: (x: number[]) => void): void {
  const x = new Array<number>(card.length).fill(0);
  for (;;) {
    fn(x);
    let v = card.length - 1;
    while (v >= 0 && ++x[v] === card[v]) x[v--] = 0;
    if (v < 0) return;
  }
}

function logSumExp(xs: number[]): number {
  const m = Math.max(...xs);
  if (m === -Infinity) return m;
  let s = 0;
  for (const x of xs) s += Math.exp(x - m);
  return m + Math.log(s);
}

function assertClose(actual: number, expected: number, tol: number, what: string): void {
  if (actual === expected) return; // also covers equal infinities
  assert.ok(Math.abs(actual - expected) <= tol, `${what}: ${actual} vs ${expected}`);
}

/**
 * An independent, naive reading of a UAI MARKOV file (any arity): log of the product of the
 * factor entries at configuration x, with tables listed last variable fastest.
 */
function naiveUAI(text: string): { card: number[]; scopes: number[][]; logPotential: (x: number[]) => number } {
  const t = text.trim().split(/\s+/).map(Number);
  let p = 1;
  const n = t[p++];
  const card = t.slice(p, p + n);
  p += n;
  const F = t[p++];
  const scopes: number[][] = [];
  for (let f = 0; f < F; f++) {
    const a = t[p++];
    scopes.push(t.slice(p, p + a));
    p += a;
  }
  const tables: number[][] = [];
  for (let f = 0; f < F; f++) {
    const c = t[p++];
    tables.push(t.slice(p, p + c));
    p += c;
  }
  const logPotential = (x: number[]): number => {
    let s = 0;
    scopes.forEach((scope, f) => {
      let idx = 0;
      for (const v of scope) idx = idx * card[v] + x[v];
      s += Math.log(tables[f][idx]);
    });
    return s;
  };
  return { card, scopes, logPotential };
}

/** Deterministic pseudo-random numbers in [0, 1). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

// ---------------------------------------------------------------------------------------------
// UAI

const uaiFiles = readdirSync(UAI_DIR).filter((f) => f.endsWith('.uai')).sort();

test('the UAI 2014 data set is present', () => {
  assert.deepEqual(uaiFiles, [
    'CSP_11.uai', 'DBN_11.uai', 'Grids_11.uai', 'Grids_12.uai', 'Grids_15.uai',
    'ObjectDetection_11.uai', 'Promedus_24.uai', 'Segmentation_11.uai',
  ]);
});

// Variables, sum of cardinalities and distinct edges, counted independently of the reader.
const expectedShape: Record<string, [n: number, cardSum: number, edges: number]> = {
  'CSP_11.uai': [82, 202, 380],
  'DBN_11.uai': [40, 80, 400],
  'Grids_11.uai': [100, 200, 200],
  'Grids_12.uai': [100, 200, 180],
  'Grids_15.uai': [400, 800, 760],
  'ObjectDetection_11.uai': [60, 660, 165],
  'Segmentation_11.uai': [228, 456, 617],
};

const MORE_DIR = join(UAI_DIR, '..', 'uai2014-more');
const moreFiles = readdirSync(MORE_DIR).filter((f) => f.endsWith('.uai')).sort();

// Higher-order files (factors of arity up to 5, given in any scope order): every factor read,
// table layout checked against the naive reader's product at random configurations.
for (const [dir, name] of [[UAI_DIR, 'Promedus_24.uai'], ...moreFiles.map((f) => [MORE_DIR, f])]) {
  test(`readUAI parses ${name} (factors of any arity)`, () => {
    const text = readFileSync(join(dir, name), 'utf8');
    const m = readUAI(text, name);
    const naive = naiveUAI(text);
    assert.deepEqual([...m.card], naive.card);
    const distinct = new Set(naive.scopes.filter((s) => s.length > 0).map((s) => [...s].sort((a, b) => a - b).join(',')));
    assert.equal(m.nFactors, distinct.size);
    assert.equal(m.maxArity, Math.max(...naive.scopes.map((s) => s.length)));
    const r = rng(m.n);
    for (let s = 0; s < 50; s++) {
      const x = Array.from(m.card, (k) => Math.floor(r() * k));
      assertClose(m.logPotential(x), naive.logPotential(x), 1e-9, `${name} configuration ${s}`);
    }
  });
}

for (const name of uaiFiles) {
  if (name === 'Promedus_24.uai') continue;
  test(`readUAI parses ${name}`, () => {
    const text = readFileSync(join(UAI_DIR, name), 'utf8');
    const m = readUAI(text, name);
    const naive = naiveUAI(text);
    const [n, cardSum, edges] = expectedShape[name];
    assert.equal(m.n, n);
    assert.deepEqual([...m.card], naive.card);
    assert.equal(naive.card.reduce((a, b) => a + b, 0), cardSum);
    assert.equal(m.edges.length, edges);
    const pairs = new Set(naive.scopes.filter((s) => s.length === 2).map(([i, j]) => `${Math.min(i, j)},${Math.max(i, j)}`));
    assert.deepEqual(m.edges.map((e) => `${e.i},${e.j}`), [...pairs].sort((a, b) => {
      const [ai, aj] = a.split(',').map(Number), [bi, bj] = b.split(',').map(Number);
      return ai - bi || aj - bj;
    }));
    // Table layout: the model must agree with the naive product of factors on random configurations.
    const r = rng(n);
    for (let s = 0; s < 50; s++) {
      const x = m.card.length ? Array.from(m.card, (k) => Math.floor(r() * k)) : [];
      assertClose(m.logPotential(x), naive.logPotential(x), 1e-9, `${name} configuration ${s}`);
    }
  });
}

test('readUAI: a BAYES network reads as its conditional probability tables; a 3-scope in any order', () => {
  // p(a) p(b) p(c | a, b) with the scope of the last table written (c, a, b)… and as (a, b, c).
  const pa = [0.3, 0.7], pb = [0.6, 0.4];
  const pc = [0.9, 0.1, 0.5, 0.5, 0.2, 0.8, 0.25, 0.75]; // index (a, b, c), c fastest
  const bayes = readUAI(`BAYES\n3\n2 2 2\n3\n1 0\n1 1\n3 0 1 2\n2\n${pa.join(' ')}\n2\n${pb.join(' ')}\n8\n${pc.join(' ')}\n`, 'net.uai');
  // The same table listed for scope (2, 0, 1): index (c, a, b), b fastest.
  const perm: number[] = [];
  for (let c = 0; c < 2; c++) for (let a = 0; a < 2; a++) for (let b = 0; b < 2; b++) perm.push(pc[a * 4 + b * 2 + c]);
  const markov = readUAI(`MARKOV\n3\n2 2 2\n3\n1 0\n1 1\n3 2 0 1\n2\n${pa.join(' ')}\n2\n${pb.join(' ')}\n8\n${perm.join(' ')}\n`, 'net.uai');
  let total = 0;
  for (let a = 0; a < 2; a++) for (let b = 0; b < 2; b++) for (let c = 0; c < 2; c++) {
    const p = pa[a] * pb[b] * pc[a * 4 + b * 2 + c];
    assertClose(Math.exp(bayes.logPotential([a, b, c])), p, 1e-15, `bayes ${a}${b}${c}`);
    assertClose(Math.exp(markov.logPotential([a, b, c])), p, 1e-15, `markov ${a}${b}${c}`);
    total += Math.exp(bayes.logPotential([a, b, c]));
  }
  assertClose(total, 1, 1e-12, 'a Bayesian network sums to 1');
  assert.deepEqual([...bayes.scope(2)], [0, 1, 2]);
  assert.throws(() => bayes.edges, /factor 2 has arity 3 \(variables 0 1 2\)/);
});

// Three variables (2, 3, 2 states), a constant, a unary, two factors on the pair {0, 1} given in
// both orders, and a pairwise factor with a zero entry. Tabs, CRLF and several items per line.
const SMALL_UAI = [
  'MARKOV',
  '3',
  '2 3\t2',
  '6',
  '0',
  '1 1',
  '2 0 1',
  '2 1 0',
  '2 1 2   2 2 0',
  '',
  '1 2.5',
  '3  0.5 2 4',
  '6',
  ' 1 2 3',
  ' 4 5 6',
  '6\t0.1 0.2 0.3 0.4 0.5 0.6',
  '6 1 0 2 3 0.25 8',
  '4 7 11 13 17',
  '',
].join('\r\n');

test('readUAI: small model matches the product of its factors at every configuration', () => {
  const m = readUAI(SMALL_UAI, 'small.uai');
  assert.deepEqual([...m.card], [2, 3, 2]);
  assert.deepEqual(m.edges.map((e) => [e.i, e.j]), [[0, 1], [0, 2], [1, 2]]);
  const unary1 = [0.5, 2, 4];
  const f01 = [1, 2, 3, 4, 5, 6]; // scope (0, 1): index x0 * 3 + x1
  const f10 = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]; // scope (1, 0): index x1 * 2 + x0
  const f12 = [1, 0, 2, 3, 0.25, 8]; // scope (1, 2): index x1 * 2 + x2
  const f20 = [7, 11, 13, 17]; // scope (2, 0): index x2 * 2 + x0
  let count = 0;
  forEachConfig(m.card, ([x0, x1, x2]) => {
    const p = 2.5 * unary1[x1] * f01[x0 * 3 + x1] * f10[x1 * 2 + x0] * f12[x1 * 2 + x2] * f20[x2 * 2 + x0];
    assertClose(m.logPotential([x0, x1, x2]), Math.log(p), 1e-12, `x = ${[x0, x1, x2]}`);
    count++;
  });
  assert.equal(count, 12);
  // The zero entry (x1 = 0, x2 = 1) is a −Infinity log-potential.
  assert.equal(m.logPotential([0, 0, 1]), -Infinity);
});

test('readUAI: every table entry is the value Number() gives (short decimals parsed digit by digit, the rest by Number())', () => {
  const rand = mulberry32(7);
  const tokens = ['0', '1', '0.1', '0.3', '.5', '5.', '00.0700', '123456789012345', '1234567890123456', '0.000000000000001', '9007199254740993', '1e-5', '2.5E3', '0.1000000000000000055511151231257827'];
  for (let k = 0; k < 20000; k++) {
    let t = '';
    for (let a = Math.floor(rand() * 8); a > 0; a--) t += Math.floor(rand() * 10);
    if (rand() < 0.7) {
      t += '.';
      for (let a = Math.floor(rand() * 16); a > 0; a--) t += Math.floor(rand() * 10);
    }
    tokens.push(/[0-9]/.test(t) ? t : '0');
  }
  if (tokens.length % 2) tokens.push('3');
  const m = tokens.length / 2;
  const lines = ['MARKOV', String(m), Array(m).fill(2).join(' '), String(m), ...Array.from({ length: m }, (_, v) => `1 ${v}`)];
  for (let v = 0; v < m; v++) lines.push('2', ` ${tokens[2 * v]}\t${tokens[2 * v + 1]}`);
  const model = readUAI(lines.join('\n'));
  for (let v = 0; v < m; v++) {
    for (let k = 0; k < 2; k++) {
      const t = tokens[2 * v + k];
      assert.ok(Object.is(model.tables[model.tableStart[v] + k], Math.log(Number(t))), `entry '${t}'`);
    }
  }
});

test('readUAI: malformed input gives a FormatError naming the file and the line or factor', () => {
  const f = 'bad.uai';
  const head = 'MARKOV\n2\n2 3\n';
  throwsFormat(() => readUAI('MRF\n2\n2 2\n0\n', f), 'bad.uai (line 1)', "network type 'MRF' is not supported: expected MARKOV or BAYES");
  throwsFormat(() => readUAI('', f), 'bad.uai (line 1)', 'empty file');
  throwsFormat(() => readUAI('MARKOV\n2\n2', f), 'bad.uai (line 3)', 'unexpected end of input: expected the cardinality of variable 1');
  throwsFormat(() => readUAI(head + '1\n1 0\n', f), 'bad.uai (line 6, factor 0)', 'unexpected end of input: expected the number of table entries');
  throwsFormat(() => readUAI(head + '1\n1 0\n2\n0.5\n', f), 'bad.uai (line 8, factor 0)', 'unexpected end of input: expected table entry');
  throwsFormat(() => readUAI(head + '2\n1 0\n', f), 'bad.uai (line 6, factor 1)', 'unexpected end of input: expected the arity of a factor');
  throwsFormat(() => readUAI('MARKOV\ntwo\n2 3\n0\n', f), 'bad.uai (line 2)', "expected the number of variables, found 'two'");
  throwsFormat(() => readUAI(head + '1\n1 0\n2\n0.5 x\n', f), 'bad.uai (line 7, factor 0)', "expected table entry, found 'x'");
  throwsFormat(() => readUAI(head + '1\n1 0\n2\n0.5 0x1\n', f), 'bad.uai (line 7, factor 0)', "found '0x1'");
  throwsFormat(() => readUAI('MARKOV\n2\n2 0\n0\n', f), 'bad.uai (line 3)', "variable 1 has cardinality '0'");
  throwsFormat(() => readUAI('MARKOV\n2\n2.5 2\n0\n', f), 'bad.uai (line 3)', "variable 0 has cardinality '2.5'");
  throwsFormat(() => readUAI('MARKOV\n2\n-1 2\n0\n', f), 'bad.uai (line 3)', "variable 0 has cardinality '-1'");
  throwsFormat(() => readUAI(head + '1\n2 0 2\n', f), 'bad.uai (line 5, factor 0)', "a variable index must be an integer in 0…1, found '2'");
  throwsFormat(() => readUAI(head + '2\n1 0\n2 1 1\n', f), 'bad.uai (line 6, factor 1)', 'variable 1 appears twice');
  throwsFormat(() => readUAI('MARKOV\n3\n2 2 2\n2\n1 0\n3 0 1 0\n', f), 'bad.uai (line 6, factor 1)', 'variable 0 appears twice in the scope');
  throwsFormat(() => readUAI(head + '1\n2 0 1\n5\n1 2 3 4 5\n', f), 'bad.uai (line 6, factor 0)', 'table has 5 entries; scope (0 1) needs 6');
  throwsFormat(() => readUAI(head + '1\n1 1\n3\n1 NaN 1\n', f), 'line 7, factor 0', "found 'NaN'");
  throwsFormat(() => readUAI(head + '1\n1 1\n3\n1 -0.5 1\n', f), 'line 7, factor 0', "table entry '-0.5' is not a finite non-negative number");
  throwsFormat(() => readUAI(head + '1\n1 1\n3\n1 Infinity 1\n', f), 'line 7, factor 0', "'Infinity' is not a finite");
  throwsFormat(() => readUAI(head + '1\n1 1\n3\n1 1e999 1\n', f), 'line 7, factor 0', "'1e999' is not a finite");
  throwsFormat(() => readUAI(head + '1\n1 1\n3\n1 2 3\n\n4\n', f), 'bad.uai (line 9)', "unexpected '4' after the last table");
});

test('readUAI: default file name, upper bound on n, and CRLF line counting', () => {
  throwsFormat(() => readUAI('MARKOV 1 2 1 1 0 2 1'), '<input> (line 1, factor 0)');
  throwsFormat(() => readUAI('MARKOV\r\n1\r\n2\r\n1\r\n1 0\r\n2\r\n1 -1\r\n', 'crlf.uai'), 'crlf.uai (line 7, factor 0)');
  throwsFormat(() => readUAI('MARKOV 0', 'zero.uai'), 'zero.uai (line 1)', 'the number of variables must be an integer in 1…');
});

test('error lines under any mix of line endings (LF, CRLF, lone CR, blank lines), .fg comments and evidence lines: the line a bad token starts on', () => {
  // The tokenizer counts lines only when asked (an error, an evidence entry): the answer must be the
  // line the token starts on, 1 + the LF, CRLF and lone-CR breaks before it, as counted here.
  const rand = mulberry32(2718);
  const seps = [' ', '\t', '\n', '\r\n', '\r', '\n\n', ' \r\n ', '\r\r\n'];
  const lineOf = (text: string, at: number): number => text.slice(0, at).split(/\r\n|\r|\n/).length;
  const join = (tokens: string[]): { text: string; starts: number[] } => {
    let text = '';
    const starts: number[] = [];
    tokens.forEach((t, i) => {
      if (i > 0) text += seps[Math.floor(rand() * seps.length)];
      starts.push(text.length);
      text += t;
    });
    return { text, starts };
  };
  const uai = 'MARKOV 3 2 2 3 3 1 0 2 0 1 2 1 2 2 0.5 1.5 4 1 2 3 4 6 1 2 3 4 5 6'.split(' ');
  for (let trial = 0; trial < 60; trial++) {
    // A table entry (from token 14 on) or a scope index made bad: 'x' there.
    const bad = 8 + Math.floor(rand() * (uai.length - 8));
    const tokens = uai.map((t, i) => (i === bad ? 'x' : t));
    const { text, starts } = join(tokens);
    throwsFormat(() => readUAI(text, 't.uai'), new RegExp(`^t\\.uai \\(line ${lineOf(text, starts[bad])}[,)]`));
    // Cut short after a token: the end of input's line, past the trailing breaks.
    const cut = text.slice(0, starts[bad] - 1 >= 0 ? starts[bad] : 0) + seps[trial % seps.length];
    if (bad > 8) throwsFormat(() => readUAI(cut, 'c.uai'), new RegExp(`^c\\.uai \\(line ${lineOf(cut, cut.length)}[,)]`), 'unexpected end of input');
    // Evidence: the line each observed variable is given on.
    const ev = join(['3', '0', '1', '1', '0', '2', '2']);
    const { lines } = readEvidenceWithLines(ev.text);
    assert.deepEqual([...lines], [[0, lineOf(ev.text, ev.starts[1])], [1, lineOf(ev.text, ev.starts[3])], [2, lineOf(ev.text, ev.starts[5])]], `evidence lines in ${JSON.stringify(ev.text)}`);
  }
  // .fg: comment lines (a '#' first on its line, after blanks) skipped, a '#' after a token no comment.
  for (let trial = 0; trial < 30; trial++) {
    const eol = ['\n', '\r\n', '\r'][trial % 3];
    const lines = ['# head', '1', '  # indented comment', '', '1', '0', '2', '2', '\t# another', '0 1', '1 y'];
    const text = lines.join(eol);
    throwsFormat(() => readFG(text, 'f.fg'), `f.fg (line ${lines.length}`, "'y'");
    throwsFormat(() => readFG(lines.slice(0, 9).join(eol) + eol + '0 1 # not a comment', 'g.fg'), 'g.fg (line 10', "'#'");
  }
});

// ---------------------------------------------------------------------------------------------
// Evidence

test('readEvidence: plain, empty and old (sample-count) formats', () => {
  const promedus = readEvidence(readFileSync(join(UAI_DIR, 'Promedus_24.uai.evid'), 'utf8'), 'Promedus_24.uai.evid');
  assert.deepEqual([...promedus], [[63, 1], [25, 1], [66, 1], [44, 1]]);
  for (const name of uaiFiles) {
    if (name === 'Promedus_24.uai') continue;
    assert.equal(readEvidence(readFileSync(join(UAI_DIR, `${name}.evid`), 'utf8')).size, 0, name);
  }
  assert.equal(readEvidence('').size, 0);
  assert.equal(readEvidence(' \n').size, 0);
  assert.equal(readEvidence('0\n').size, 0);
  assert.deepEqual([...readEvidence('1 2 3 1 5 0')], [[3, 1], [5, 0]]);
  assert.deepEqual([...readEvidence('1\n1 7 2\n')], [[7, 2]]);
  // "1 7 2" fits the plain format (one pair), which wins.
  assert.deepEqual([...readEvidence('1 7 2')], [[7, 2]]);
});

test('readEvidence: malformed files', () => {
  throwsFormat(() => readEvidence('2 1 0', 'e.evid'), 'e.evid: expected the number of observed variables', 'found 3 numbers');
  throwsFormat(() => readEvidence('1\n3 x', 'e.evid'), 'e.evid (line 2)', "found 'x'");
  throwsFormat(() => readEvidence('1 3 -1', 'e.evid'), 'e.evid (line 1)', "found '-1'");
  throwsFormat(() => readEvidence('2\n3 1\n3 0\n', 'e.evid'), 'e.evid (line 3)', 'variable 3 is observed twice');
  throwsFormat(() => readEvidence('1 0 1.5'), '<evid> (line 1)');
});

test('applyEvidence clamps observed variables and leaves the model alone', () => {
  const m = readUAI(SMALL_UAI, 'small.uai');
  const { model: c, observed } = applyEvidence(m, new Map([[1, 2]]));
  assert.deepEqual([...observed], [[1, 2]]);
  assert.deepEqual([...c.card], [...m.card]);
  assert.deepEqual([...c.unary[1]], [-Infinity, -Infinity, m.unary[1][2]]);
  assert.deepEqual([...m.unary[1]], [0.5, 2, 4].map(Math.log), 'input model unchanged');
  forEachConfig(m.card, (x) => {
    assert.equal(c.logPotential(x), x[1] === 2 ? m.logPotential(x) : -Infinity);
  });
  // log Z with evidence is the log-sum over configurations consistent with it.
  const all: number[] = [], consistent: number[] = [];
  forEachConfig(m.card, (x) => {
    all.push(c.logPotential(x));
    if (x[1] === 2) consistent.push(m.logPotential(x));
  });
  assertClose(logSumExp(all), logSumExp(consistent), 1e-12, 'log Z with evidence');

  assert.throws(() => applyEvidence(m, new Map([[3, 0]])), (e) => e instanceof ModelError && /variable 3 is out of range 0…2/.test(e.message));
  assert.throws(() => applyEvidence(m, new Map([[0, 2]])), (e) => e instanceof ModelError && /variable 0 has 2 states; observed value 2/.test(e.message));
  assert.throws(() => applyEvidence(m, new Map([[0, 0.5]])), ModelError);
});

// ---------------------------------------------------------------------------------------------
// writeUAI

function randomModel(r: () => number, n: number, logConst: number): Model {
  const card = Array.from({ length: n }, () => 2 + Math.floor(r() * 3));
  const b = new ModelBuilder(card);
  // Entries span several orders of magnitude; some are zero potentials, some large.
  const entry = (): number => (r() < 0.1 ? -Infinity : r() < 0.1 ? 600 * (r() - 0.5) : 4 * (r() - 0.5));
  for (let v = 0; v < n; v++) if (r() < 0.8) b.addUnary(v, Array.from({ length: card[v] }, entry));
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      if (r() < 0.6) b.addPairwise(i, j, Array.from({ length: card[i] * card[j] }, entry));
    }
  }
  return b.addConstant(logConst).build();
}

test('writeUAI → readUAI reproduces every log-potential', () => {
  const r = rng(7);
  const consts = [0, 1.25, -3, 900, -2000, -Infinity];
  for (let trial = 0; trial < 30; trial++) {
    const m = randomModel(r, 2 + (trial % 4), consts[trial % consts.length]);
    const back = readUAI(writeUAI(m), 'roundtrip.uai');
    assert.deepEqual([...back.card], [...m.card]);
    assert.deepEqual(back.edges.map((e) => [e.i, e.j]), m.edges.map((e) => [e.i, e.j]));
    forEachConfig(m.card, (x) => {
      assertClose(back.logPotential(x), m.logPotential(x), 1e-12 * Math.max(1, Math.abs(m.logPotential(x))), `trial ${trial}, x = ${x}`);
    });
  }
});

test('writeUAI writes a MARKOV file with a factor per factor (scopes in increasing order)', () => {
  const m = new ModelBuilder([2, 3]).addPairwise(1, 0, [0, 1, 2, 3, 4, 5]).build();
  const text = writeUAI(m);
  // The pairwise table is scaled to a largest entry of 1; its log-scale 5 becomes a constant factor.
  assert.match(text, /^MARKOV\n2\n2 3\n2\n2 0 1\n0\n\n/);
  assert.ok(text.endsWith(`\n1\n${Math.exp(5)}\n`));
  assert.ok(!/NaN|Infinity/.test(text));
});

test('writeUAI → readUAI reproduces every log-potential of factor graphs of arity up to 4 (zeros, large constants)', () => {
  const r = rng(17);
  for (let trial = 0; trial < 12; trial++) {
    const m = randomFactorGraph(r, 4 + (trial % 3), { cards: [1, 2, 3], maxArity: 4, factors: 5, zeros: 0.2, scale: trial % 2 ? 300 : 2 });
    const back = readUAI(writeUAI(m), 'roundtrip.uai');
    assert.deepEqual([...back.card], [...m.card]);
    assert.equal(back.maxArity, m.maxArity);
    forEachConfig(m.card, (x) => {
      const want = m.logPotential(x);
      if (want === -Infinity) assert.equal(back.logPotential(x), -Infinity);
      else assertClose(back.logPotential(x), want, 1e-12 * Math.max(1, Math.abs(want)), `trial ${trial}, x = ${x}`);
    });
  }
});

test('writeUAI prints a table several factors share once per factor and piece, as it prints one of their own: shared tables spanning past 700 nats, read back', () => {
  // A shared table spanning 1500 nats is written as 3 pieces on each of its 4 scopes; a table of its
  // own with the same entries gives the same lines, and each piece the same text.
  const entries = [0, -1500, 2, 1];
  const b = new ModelBuilder([2, 2, 2, 2, 2]);
  const shared = b.shareTable(entries);
  for (const [i, j] of [[0, 1], [1, 2], [2, 3], [0, 4]]) b.addSharedFactor([i, j], shared);
  b.addPairwise(3, 4, entries);
  const m = b.build();
  const text = writeUAI(m);
  // The tables follow the scopes' blank line; their entry lines are the ones with spaces (the constants' have one entry).
  const lines = text.slice(text.indexOf('\n\n') + 2).split('\n').filter((l) => l.includes(' '));
  assert.equal(lines.length, 5 * 3, `three pieces for each of five pair factors: ${lines.length} table lines`);
  assert.equal(new Set(lines).size, 1, 'every piece of every factor has the same line');
  const back = readUAI(text, 'shared.uai');
  forEachConfig(m.card, (x) => assertClose(back.logPotential(x), m.logPotential(x), 1e-9 * Math.max(1, Math.abs(m.logPotential(x))), `x = ${x}`));
  // A lattice whose bonds share one table: the bonds' lines all the same, read back exactly.
  const lattice = isingLattice({ shape: [4, 5], J: 0.7, h: -0.2 });
  const back2 = readUAI(writeUAI(lattice), 'lattice.uai');
  forEachConfig(lattice.card, (x) => assertClose(back2.logPotential(x), lattice.logPotential(x), 1e-12 * Math.max(1, Math.abs(lattice.logPotential(x))), `x = ${x}`));
});

test('readFG and readUAI agree on factors of arity 3 and 4 (first vs last variable fastest)', () => {
  const r = rng(18);
  for (let trial = 0; trial < 6; trial++) {
    const m = randomFactorGraph(r, 5, { cards: [2, 3], maxArity: 4, factors: 4, zeros: 0.2 });
    // The model as .fg: each factor's scope reversed (first fastest = last fastest reversed), sparse.
    const blocks: string[] = [];
    for (let f = 0; f < m.nFactors; f++) {
      const scope = Array.from(m.scope(f)).reverse();
      const t = m.table(f);
      const nz = Array.from(t, (x, k) => [k, x] as const).filter(([, x]) => x > -Infinity);
      blocks.push([String(scope.length), scope.join(' '), scope.map((v) => m.card[v]).join(' '), String(nz.length), ...nz.map(([k, x]) => `${k} ${Math.exp(x)}`)].join('\n'));
    }
    const fg = readFG(`${m.nFactors}\n\n${blocks.join('\n\n')}\n`, 'arity.fg');
    forEachConfig(m.card, (x) => {
      const want = m.logPotential(x) - m.logConst;
      if (want === -Infinity) assert.equal(fg.logPotential(x), -Infinity);
      else assertClose(fg.logPotential(x), want, 1e-12 * Math.max(1, Math.abs(want)), `trial ${trial}, x = ${x}`);
    });
  }
});

test('readUAI: factors of arity > 2 are validated as strictly as pairs (scope, length, NaN, +∞, LIMITS)', () => {
  const f = 'big.uai', head = 'MARKOV\n4\n2 2 3 2\n1\n';
  throwsFormat(() => readUAI(head + '3 0 2 0\n', f), 'big.uai (line 5, factor 0)', 'variable 0 appears twice');
  throwsFormat(() => readUAI(head + '3 0 1 2\n11\n' + '1 '.repeat(11), f), 'big.uai (line 6, factor 0)', 'table has 11 entries; scope (0 1 2) needs 12');
  throwsFormat(() => readUAI(head + '3 0 1 2\n12\n' + '1 '.repeat(5) + 'nan ' + '1 '.repeat(6), f), 'big.uai (line 7, factor 0)', "found 'nan'");
  throwsFormat(() => readUAI(head + '4 3 0 1 2\n24\n' + '1 '.repeat(23) + 'Infinity', f), 'big.uai (line 7, factor 0)', "'Infinity' is not a finite");
  const n = 30;
  throwsFormat(() => readUAI(`MARKOV\n${n}\n${'2 '.repeat(n)}\n1\n${n} ${Array.from({ length: n }, (_, v) => v).join(' ')}\n`, f), 'big.uai (line 5, factor 0)', `needs ${2 ** 30} table entries, past the limit`);
});

test('evidence: a variable given twice with one value counts once; with two values, or out of range, the file and line are named', () => {
  assert.deepEqual([...readEvidence('3\n4 1\n2 0\n4 1\n')], [[4, 1], [2, 0]]);
  throwsFormat(() => readEvidence('2\n4 1\n4 0\n', 'two.evid'), 'two.evid (line 3)', 'variable 4 is observed twice, as 1 on line 2 and as 0 here');
  const m = readUAI(SMALL_UAI, 'small.uai');
  const { evidence, lines } = readEvidenceWithLines('2\n0 1\n1 7\n', 'e.evid');
  throwsFormat(() => applyEvidence(m, evidence, { file: 'e.evid', lines }), 'e.evid (line 3)', 'variable 1 has 3 states; observed value 7 is out of range 0…2');
  const far = readEvidenceWithLines('1\n\n9 0\n', 'e.evid');
  throwsFormat(() => applyEvidence(m, far.evidence, { file: 'e.evid', lines: far.lines }), 'e.evid (line 3)', 'variable 9 is out of range 0…2');
});

// ---------------------------------------------------------------------------------------------
// libDAI .fg

const FG_TEXT = readFileSync(FG_FILE, 'utf8');

test('readFG: testfast.fg has 16 variables and log Z = 14.3282332811 by enumeration', () => {
  const { model: m, labels } = readFGWithLabels(FG_TEXT, 'testfast.fg');
  assert.equal(m.n, 16);
  assert.deepEqual(labels, Array.from({ length: 16 }, (_, i) => i));
  assert.ok(m.card.every((k) => k === 2));
  assert.equal(m.edges.length, 24); // 4 × 4 grid
  const logP: number[] = [];
  const x = new Array<number>(16);
  for (let s = 0; s < 1 << 16; s++) {
    for (let v = 0; v < 16; v++) x[v] = (s >> v) & 1;
    logP.push(m.logPotential(x));
  }
  const logZ = logSumExp(logP);
  assertClose(logZ, 14.3282332811, 1e-9, 'log Z');

  // Exact marginals as printed by libDAI (4 significant digits) in testfast.out.
  const out = readFileSync(join(DATA, 'libdai', 'testfast.out'), 'utf8');
  for (let v = 0; v < 16; v++) {
    const line = new RegExp(`# \\(\\{x${v}\\}, \\(([\\d.e+-]+), ([\\d.e+-]+)\\)\\)`).exec(out);
    assert.ok(line, `marginal of x${v} in testfast.out`);
    let p1 = 0;
    for (let s = 0; s < 1 << 16; s++) if ((s >> v) & 1) p1 += Math.exp(logP[s] - logZ);
    assertClose(p1, Number(line[2]), 6e-4 * Number(line[2]), `P(x${v} = 1)`);
  }
  assert.equal(readFG(FG_TEXT).n, 16);
});

test('readFG lists the first variable fastest (UAI: last fastest), with sparse labels and entries', () => {
  // f(a, b) for a (2 states) and b (3 states): distinct values, non-symmetric.
  const f = (a: number, b: number): number => [[1, 2, 3], [5, 7, 0]][a][b];
  // .fg factor over (a = label 9, b = label 4): index a + 2 b; the zero entry (a 1, b 2 → 5) is left out.
  const fg = [
    '# comment line',
    '2',
    '',
    '2',
    '9 4',
    '2 3',
    '5',
    '0 1', '1 5', '2 2', '3 7', '4 3',
    '',
    '  # indented comment',
    '1',
    '4',
    '3',
    '3',
    '0 1',
    '1 0.5',
    '2 4',
    '',
  ].join('\n');
  const { model: m, labels } = readFGWithLabels(fg, 'order.fg');
  assert.deepEqual(labels, [4, 9]); // variable 0 is label 4 (b), variable 1 is label 9 (a)
  assert.deepEqual([...m.card], [3, 2]);
  // The same factor in UAI with scope (a, b) = (1, 0): index a * 3 + b.
  const uai = `MARKOV\n2\n3 2\n2\n2 1 0\n1 0\n6\n${[0, 1].flatMap((a) => [0, 1, 2].map((b) => f(a, b))).join(' ')}\n3\n1 0.5 4\n`;
  const u = readUAI(uai, 'order.uai');
  forEachConfig(m.card, ([b, a]) => {
    const expected = Math.log(f(a, b) * [1, 0.5, 4][b]);
    assertClose(m.logPotential([b, a]), expected, 1e-15, `fg a=${a} b=${b}`);
    assertClose(u.logPotential([b, a]), expected, 1e-15, `uai a=${a} b=${b}`);
  });
});

test('readFG: malformed input gives a FormatError naming the file and the line or factor', () => {
  const f = 'bad.fg';
  throwsFormat(() => readFG('', f), 'bad.fg (line 1)', 'unexpected end of input: expected the number of factors');
  throwsFormat(() => readFG('1\n\n2\n0 1\n2 2\n4\n0 1\n1 1\n', f), 'bad.fg (line 9, factor 0)', 'unexpected end of input: expected an entry index');
  throwsFormat(() => readFG('1\n3\n0 1 0\n2 2 2\n0\n', f), 'bad.fg (line 3, factor 0)', 'variable 0 appears twice');
  throwsFormat(() => readFG('2\n1\n5\n2\n0\n1\n5\n3\n0\n', f), 'bad.fg (line 8, factor 1)', 'variable 5 has cardinality 3 here but 2 in factor 0');
  throwsFormat(() => readFG('1\n1\n-3\n2\n0\n', f), 'bad.fg (line 3, factor 0)', "a variable label must be an integer in 0…2^53 − 1, found '-3'");
  throwsFormat(() => readFG('1\n2\n3 3\n2 2\n0\n', f), 'bad.fg (line 3, factor 0)', 'variable 3 appears twice');
  throwsFormat(() => readFG('1\n1\n0\n2\n3\n', f), 'bad.fg (line 5, factor 0)', "the number of nonzero entries must be an integer in 0…2, found '3'");
  throwsFormat(() => readFG('1\n1\n0\n2\n1\n2 1\n', f), 'bad.fg (line 6, factor 0)', "an entry index must be an integer in 0…1, found '2'");
  throwsFormat(() => readFG('1\n1\n0\n2\n2\n1 1\n1 2\n', f), 'bad.fg (line 7, factor 0)', 'entry 1 is listed twice');
  throwsFormat(() => readFG('1\n1\n0\n2\n1\n1 -2\n', f), 'bad.fg (line 6, factor 0)', "'-2' is not a finite non-negative number");
  throwsFormat(() => readFG('1\n1\n0\n0\n0\n', f), 'bad.fg (line 4, factor 0)', "variable 0 has cardinality '0'");
  throwsFormat(() => readFG('1\n1\n0\n2\n0\n\nextra\n', f), 'bad.fg (line 7)', "unexpected 'extra' after the last factor");
  throwsFormat(() => readFG('0\n', f), 'bad.fg: the factor graph has no variables');
  // '#' starts a comment only at the beginning of a line.
  throwsFormat(() => readFG('1 # no\n', f), 'bad.fg (line 1, factor 0)', "found '#'");
});

// ---------------------------------------------------------------------------------------------
// PR and MAR

test('writePR / readPR round trip and the provided PR files', () => {
  for (const logZ of [14.3282332811, -0.1, 0, 1234.5678901234567, -Infinity]) {
    const text = writePR(logZ);
    assert.match(text, /^PR\n\S+\n$/);
    assertClose(readPR(text) * Math.LN10, logZ, 1e-12 * Math.max(1, Math.abs(logZ)), `log Z ${logZ}`);
    assert.equal(readPR(text), logZ / Math.LN10, 'log10 Z is written exactly');
  }
  assert.equal(readPR(readFileSync(join(UAI_DIR, 'CSP_11.uai.PR'), 'utf8')), 13.563);
  assert.equal(readPR(readFileSync(join(UAI_DIR, 'Promedus_24.uai.PR'), 'utf8')), -5.86181);
  throwsFormat(() => readPR('MAR\n1\n', 'x.PR'), "x.PR (line 1): expected 'PR', found 'MAR'");
  throwsFormat(() => readPR('PR\n', 'x.PR'), 'x.PR (line 2)', 'unexpected end of input: expected log10 Z');
  throwsFormat(() => readPR('PR\n1.5\n2\n', 'x.PR'), 'x.PR (line 3)', "unexpected '2'");
});

test('writeMAR / readMAR round trip', () => {
  const marginals = [new Float64Array([0.25, 0.75]), new Float64Array([0.1, 0.2, 0.7]), new Float64Array([1 / 3, 2 / 3])];
  const text = writeMAR(marginals);
  assert.equal(text.split('\n').length, 3); // "MAR", the data line, and the final newline
  assert.ok(text.startsWith('MAR\n3 2 0.25 0.75 3 0.1 0.2 0.7 2 '));
  assert.deepEqual(readMAR(text), marginals.map((p) => [...p]));
  assert.deepEqual(readMAR(writeMAR([[1], [0.5, 0.5]])), [[1], [0.5, 0.5]]);
  throwsFormat(() => readMAR('MAR\n2 2 0.5 0.5 2 0.5\n', 'x.MAR'), 'x.MAR (line 3)', 'unexpected end of input: expected probability');
  throwsFormat(() => readMAR('MAR\n1 2 0.5 -0.5\n', 'x.MAR'), 'x.MAR (line 2)', "probability '-0.5' is not a finite non-negative number");
  throwsFormat(() => readMAR('PR\n1\n', 'x.MAR'), "x.MAR (line 1): expected 'MAR', found 'PR'");
  throwsFormat(() => readMAR('MAR\n1 1 1 0.5\n', 'x.MAR'), "unexpected '0.5' after the last marginal");
});

test('readMAR reads the provided MAR files', () => {
  for (const name of uaiFiles) {
    const marginals = readMAR(readFileSync(join(UAI_DIR, `${name}.MAR`), 'utf8'), `${name}.MAR`);
    const { card } = naiveUAI(readFileSync(join(UAI_DIR, name), 'utf8'));
    assert.deepEqual(marginals.map((p) => p.length), card, name);
    marginals.forEach((p, v) => assertClose(p.reduce((a, b) => a + b, 0), 1, 1e-5, `${name} variable ${v}`));
  }
});

// ---------------------------------------------------------------------------------------------
// loadModelFile

test('loadModelFile picks the format, applies .evid, and reports unreadable files', async () => {
  const fg = await loadModelFile(FG_FILE);
  assert.equal(fg.format, 'fg');
  assert.equal(fg.model.n, 16);
  assert.equal(fg.evidence, null);

  const grids = await loadModelFile(join(UAI_DIR, 'Grids_11.uai'));
  assert.equal(grids.format, 'uai');
  assert.equal(grids.model.n, 100);
  assert.equal(grids.evidence?.size, 0);

  const dir = await mkdtemp(join(tmpdir(), 'relaxmrf-formats-'));
  try {
    const path = join(dir, 'small.UAI');
    await writeFile(path, SMALL_UAI);
    const plain = await loadModelFile(path);
    assert.equal(plain.evidence, null);
    assert.equal(plain.model.logPotential([1, 2, 0]), readUAI(SMALL_UAI).logPotential([1, 2, 0]));

    await writeFile(path + '.evid', '1 2 1\n');
    const clamped = await loadModelFile(path);
    assert.deepEqual([...clamped.evidence!], [[2, 1]]);
    assert.equal(clamped.model.logPotential([1, 2, 0]), -Infinity);
    assert.equal(clamped.model.logPotential([1, 2, 1]), plain.model.logPotential([1, 2, 1]));

    await writeFile(path + '.evid', '1 2 5\n');
    await assert.rejects(loadModelFile(path), (e: unknown) => e instanceof FormatError && e.message.startsWith(`${path}.evid (line 1): evidence: variable 2 has 2 states`));

    await assert.rejects(loadModelFile(join(dir, 'model.txt')), (e: unknown) => e instanceof FormatError && e.message.includes('unknown model format'));
    await assert.rejects(loadModelFile(join(dir, 'missing.uai')), (e: unknown) =>
      e instanceof FormatError && e.message === `${join(dir, 'missing.uai')}: cannot read the file: no such file or directory (ENOENT)`);
    await assert.rejects(loadModelFile(join(dir, 'bad.fg')), FormatError);
  } finally {
    await rm(dir, { recursive: true });
  }
});

test('old Mac line endings (CR only): .fg comments end at a CR, and errors name the right line; messages show at most 40 characters of a token, control characters escaped', () => {
  const lf = '# a comment\n1\n\n2\n0 1\n2 2\n# another\n3\n0 1\n1 2\n3 3\n';
  const want = readFG(lf, 'lf.fg');
  const cr = readFG(lf.replace(/\n/g, '\r'), 'cr.fg');
  assert.deepEqual([cr.n, Array.from(cr.tables)], [want.n, Array.from(want.tables)]);
  throwsFormat(() => readUAI('MARKOV\r1\r2\r1\r1 0\r2\r0.5 x\r', 'cr.uai'), 'cr.uai (line 7, factor 0)', "found 'x'");
  // A 200 kB token and a NUL inside one: one short line each.
  throwsFormat(() => readUAI('y'.repeat(200_000), 'long.uai'), /network type 'y{40}… \(200000 characters\)' is not supported/);
  throwsFormat(() => readUAI('MARKOV\n1\n2\n1\n1 0\n2\n0.5 0.3\u00000.7\n', 'nul.uai'), "found '0.3\\x000.7'");
});

test('readFG: factors on one scope in any variable order multiply into one table, as the file defines them (each entry listed by every factor, else 0)', () => {
  const rand = mulberry32(404);
  for (let trial = 0; trial < 60; trial++) {
    const n = 2 + Math.floor(rand() * 3), card = Array.from({ length: n }, () => 1 + Math.floor(rand() * 3));
    // A few scopes, each used by 1–4 factors listing its variables in random orders, sparse entries.
    const factors: { vars: number[]; entries: Map<number, number> }[] = [];
    for (let s = 0; s < 3; s++) {
      const scope = Array.from({ length: n }, (_, v) => v).filter(() => rand() < 0.7);
      if (scope.length === 0) continue;
      for (let copy = 1 + Math.floor(rand() * 4); copy > 0; copy--) {
        const vars = [...scope].sort(() => rand() - 0.5);
        const size = vars.reduce((p, v) => p * card[v], 1), entries = new Map<number, number>();
        for (let k = 0; k < size; k++) if (rand() < 0.85) entries.set(k, 0.25 + rand() * 3);
        factors.push({ vars, entries });
      }
    }
    const text = `${factors.length}\n` + factors.map(({ vars, entries }) => `\n${vars.length}\n${vars.join(' ')}\n${vars.map((v) => card[v]).join(' ')}\n${entries.size}\n${[...entries].map(([k, x]) => `${k} ${x}`).join('\n')}\n`).join('');
    const { model, labels } = readFGWithLabels(text, 'repeat.fg');
    // The file's own product, entry by entry (first variable fastest), against the model.
    forEachConfig(labels.map((l) => card[l]), (x) => {
      let expected = 0;
      for (const { vars, entries } of factors) {
        let k = 0;
        for (let j = vars.length - 1; j >= 0; j--) k = k * card[vars[j]] + x[labels.indexOf(vars[j])];
        expected += entries.has(k) ? Math.log(entries.get(k)!) : -Infinity;
      }
      if (expected === -Infinity) assert.equal(model.logPotential(x), -Infinity, `trial ${trial} ${x}`);
      else assertClose(model.logPotential(x), expected, 1e-12, `trial ${trial} ${x}`);
    });
  }
});

test('readFG: forty sparse factors on one 22-variable scope, each in its own variable order, are read into one table in a fraction of a second (a table per order took 3.9 s and 1.5 GB)', () => {
  const rand = mulberry32(22), n = 22, F = 40, all = 2 ** n - 1;
  let text = `${F}\n`;
  for (let f = 0; f < F; f++) {
    const vars = Array.from({ length: n }, (_, v) => v).sort(() => rand() - 0.5);
    // Entries 0 (all zero) and 2^22 − 1 (all one) are the same configurations in every order.
    text += `\n${n}\n${vars.join(' ')}\n${'2 '.repeat(n)}\n2\n0 0.5\n${all} ${1 + f}\n`;
  }
  const c0 = process.cpuUsage();
  const model = readFG(text, 'orders.fg');
  const c = process.cpuUsage(c0);
  assert.ok((c.user + c.system) / 1e6 < 1.5, `${(c.user + c.system) / 1e6} s of CPU time`);
  assertClose(model.logPotential(new Array(n).fill(0)), F * Math.log(0.5), 1e-9, 'all zero');
  let logOnes = 0;
  for (let f = 0; f < F; f++) logOnes += Math.log(1 + f);
  assertClose(model.logPotential(new Array(n).fill(1)), logOnes, 1e-9, 'all one');
  assert.equal(model.logPotential([1, ...new Array(n - 1).fill(0)]), -Infinity);
});

test('table entries below binary64\'s normal range keep their value: logs taken from the decimal text (subnormals had 2–3 significant bits; 1e-400 became a hard zero)', () => {
  const u = readUAI('MARKOV 1 2 1 1 0 2 1.4e-323 2.1e-323', 'tiny.uai');
  assertClose(u.logPotential([1]) - u.logPotential([0]), Math.log(1.5), 1e-12, '2.1e-323 / 1.4e-323');
  assertClose(u.logPotential([0]), Math.log(1.4) - 323 * Math.LN10, 1e-12, 'ln 1.4e-323');
  const far = readUAI('MARKOV 1 2 1 1 0 2 1e-400 3', 'far.uai');
  assertClose(far.logPotential([0]), -400 * Math.LN10, 1e-9, 'ln 1e-400');
  const both = readUAI('MARKOV 1 2 1 1 0 2 1e-400 00012.5e-390', 'both.uai');
  assertClose(both.logPotential([1]) - both.logPotential([0]), Math.log(1.25) + 11 * Math.LN10, 1e-9, 'ratio');
  // Zeros written in any form stay zeros; the same on .fg entries.
  assert.equal(readUAI('MARKOV 1 2 1 1 0 2 0.000e-400 1', 'zero.uai').logPotential([0]), -Infinity);
  const fg = readFG('1\n\n1\n0\n2\n2\n0 1e-330\n1 3e-330\n', 'tiny.fg');
  assertClose(fg.logPotential([1]) - fg.logPotential([0]), Math.log(3), 1e-12, '.fg ratio');
});

test('a Unicode space is no number: a table one entry short, ended by a no-break space, and evidence of one, are refused, the character shown', () => {
  throwsFormat(() => readUAI('MARKOV 1 2 1 1 0 2 1 \u00a0', 'nbsp.uai'), "expected table entry, found '\\u00a0'");
  throwsFormat(() => readUAI('MARKOV 1 2 1 1 0 2 1\u00a03', 'nbsp.uai'), "found '1\\u00a03'");
  throwsFormat(() => readEvidence('1 1 \u2003', 'nbsp.evid'), "'\\u2003'");
});

test('readMAP reads back writeMAP (the package exported neither: a MAP file could not be read with the library)', async () => {
  const { readMAP, writeMAP } = await import('../bindings/api.ts');
  assert.deepEqual(readMAP(writeMAP(Int32Array.from([0, 2, 1, 15]))), [0, 2, 1, 15]);
  assert.deepEqual(readMAP('MAP\n0\n'), []);
  throwsFormat(() => readMAP('MAP 2 0', 'x.MAP'), 'x.MAP', 'unexpected end of input');
  throwsFormat(() => readMAP('MAR 1 0', 'x.MAP'), "expected 'MAP', found 'MAR'");
  throwsFormat(() => readMAP('MAP 1 0 3', 'x.MAP'), "unexpected '3' after the last state");
});
