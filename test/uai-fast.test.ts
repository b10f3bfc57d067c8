// The engine's UAI reader (bindings/io/fast-uai.ts, assembly/io/uai_read.ts) against the
// TypeScript reader: the same model, bit for bit, or null (and the TypeScript reader's message).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAST_UAI_MIN_CHARS, readUAIFast } from '../bindings/io/fast-uai.ts';
import { readUAI, readUAIText, writeUAI } from '../bindings/io/formats.ts';
import { loadModelFile } from '../bindings/io/files.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import type { Model } from '../bindings/core/model.ts';
import { plannerEngine } from '../bindings/core/engine.ts';
import { dataDir, mulberry32, randomFactorGraph, renumbered } from './helpers.ts';

/** Asserts two models are the same arrays, entry for entry (Object.is: −0, −∞ and NaN told apart). */
function assertSameModel(got: Model | null, want: Model, what: string): void {
  assert.ok(got, `${what}: read by the engine`);
  for (const key of ['card', 'scopeStart', 'scopeVars', 'tableStart'] as const) assert.deepEqual(Array.from(got[key]), Array.from(want[key]), `${what}: ${key}`);
  assert.equal(got.tables.length, want.tables.length, `${what}: tables`);
  for (let e = 0; e < want.tables.length; e++) if (!Object.is(got.tables[e], want.tables[e])) assert.fail(`${what}: table entry ${e} ${got.tables[e]} against ${want.tables[e]}`);
  assert.ok(Object.is(got.logConst, want.logConst), `${what}: constant ${got.logConst} against ${want.logConst}`);
}

/** Entries in the forms UAI files use, and some the engine leaves to the TypeScript side. */
function entry(rand: () => number): string {
  const r = rand(), x = rand() * 10 ** Math.floor(rand() * 12 - 6);
  if (r < 0.05) return '0';
  if (r < 0.08) return '0.000';
  if (r < 0.1) return `+${x}`;
  if (r < 0.12) return `${1 + Math.floor(rand() * 9)}e-${310 + Math.floor(rand() * 10)}`;
  if (r < 0.14) return `0.${'3'.repeat(24)}`;
  if (r < 0.17) return x.toExponential(18).toUpperCase();
  if (r < 0.2) return String(Math.floor(x * 1000));
  if (r < 0.25) return x.toFixed(6);
  return String(x);
}

/** A UAI text: scopes in any order, some repeated or empty, entries in mixed forms, mixed blanks. */
function randomText(rand: () => number, n: number, F: number, sorted = false): string {
  const card = Array.from({ length: n }, () => 1 + Math.floor(rand() * 4));
  const blank = (): string => [' ', '\t', '\n', '\r\n', '  '][Math.floor(rand() * 5)];
  const scopes: number[][] = [];
  for (let f = 0; f < F; f++) {
    if (f > 0 && rand() < 0.1) {
      scopes.push(scopes[Math.floor(rand() * f)]);
      continue;
    }
    const arity = rand() < 0.05 ? 0 : 1 + Math.floor(rand() * 4), vars = new Set<number>();
    while (vars.size < Math.min(arity, n)) vars.add(Math.floor(rand() * n));
    const s = [...vars];
    scopes.push(sorted || rand() < 0.5 ? s.sort((a, b) => a - b) : s);
  }
  const parts = [rand() < 0.5 ? 'MARKOV' : 'BAYES', String(n), card.join(blank()), String(F)];
  for (const s of scopes) parts.push([s.length, ...s].join(blank()));
  for (const s of scopes) {
    const size = s.reduce((p, v) => p * card[v], 1);
    parts.push(String(size), Array.from({ length: size }, () => entry(rand)).join(blank()));
  }
  return parts.join(blank()) + blank();
}

test('random texts (any scope order, repeated and empty scopes, mixed entry forms and blanks): the TypeScript reader\'s model, bit for bit', () => {
  const rand = mulberry32(2024);
  for (let trial = 0; trial < 60; trial++) {
    const text = randomText(rand, 2 + Math.floor(rand() * 30), Math.floor(rand() * 60));
    assertSameModel(readUAIFast(text), readUAIText(text), `trial ${trial}`);
  }
});

test('texts whose scopes are all increasing, some repeated (one, two and more variables): the same model (the repeats merged)', () => {
  const rand = mulberry32(31);
  let repeats = 0;
  for (let trial = 0; trial < 60; trial++) {
    const text = randomText(rand, 2 + Math.floor(rand() * 12), 1 + Math.floor(rand() * 40), true), want = readUAIText(text);
    assertSameModel(readUAIFast(text), want, `trial ${trial}`);
    if (want.nFactors < Number(text.split(/\s+/)[2 + Number(text.split(/\s+/)[1])])) repeats++;
  }
  assert.ok(repeats > 20, `${repeats} texts with a repeated scope`);
});

test('writeUAI\'s texts of random factor graphs and of a renumbered lattice (constants after the factors): the same model', () => {
  const rand = mulberry32(77);
  for (let trial = 0; trial < 20; trial++) {
    const text = writeUAI(randomFactorGraph(rand, 3 + Math.floor(rand() * 12), { maxArity: 4, zeros: 0.1, scale: 3 }));
    assertSameModel(readUAIFast(text), readUAIText(text), `factor graph ${trial}`);
  }
  const text = writeUAI(renumbered(isingLattice({ shape: [60, 60], J: (i, j) => Math.sin(i + 7 * j) / 2, h: 0.1, beta: 3 }), 5).model);
  assert.ok(text.length >= FAST_UAI_MIN_CHARS, 'large enough for readUAI to take the engine\'s path');
  const want = readUAIText(text);
  assert.ok(want.logConst !== 0);
  assertSameModel(readUAIFast(text), want, 'lattice');
  assertSameModel(readUAI(text), want, 'lattice through readUAI');
});

test('the shipped UAI 2014 files: the same model', () => {
  for (const dir of ['uai2014', 'uai2014-more']) {
    for (const name of readdirSync(join(dataDir(), dir)).filter((f) => f.endsWith('.uai'))) {
      const text = readFileSync(join(dataDir(), dir, name), 'utf8');
      assertSameModel(readUAIFast(text), readUAIText(text), name);
    }
  }
});

test('texts with a fault, or anything the TypeScript reader would read otherwise: not read by the engine (null)', () => {
  const ok = 'MARKOV 3 2 2 3 3 1 0 2 0 1 2 1 2 2 0.5 1 4 1 2 3 4 6 1 2 3 4 5 6';
  assert.ok(readUAIFast(ok));
  const faults: Record<string, string> = {
    'network type': ok.replace('MARKOV', 'MARKOW'),
    'count': ok.replace(' 4 1 2 3 4', ' 5 1 2 3 4'),
    'variable twice in a scope': ok.replace('2 0 1', '2 1 1'),
    'variable out of range': ok.replace('2 1 2 2', '2 1 3 2'),
    'cardinality 0': ok.replace('3 2 2 3 3', '3 2 0 3 3'),
    'negative entry': ok.replace('0.5 1', '-0.5 1'),
    'a word for an entry': ok.replace('0.5 1', 'half 1'),
    'hexadecimal entry': ok.replace('0.5 1', '0x1 1'),
    'infinite entry': ok.replace('0.5 1', '1e999 1'),
    'text after the tables': `${ok} 7`,
    'missing entry': ok.slice(0, -2),
    'non-ASCII blank': ok.replace(' 0.5', '\u00a00.5'),
    'arity past the limit': ok.replace('3 1 0', '65 1 0'),
    'fractional count': ok.replace(' 4 1 2 3 4', ' 4.5 1 2 3 4'),
  };
  for (const [what, text] of Object.entries(faults)) {
    assert.equal(readUAIFast(text), null, what);
    assert.throws(() => readUAIText(text), Error, `${what}: the TypeScript reader refuses it too`);
  }
  // What both read: a BOM (the TypeScript reader's), entries the engine leaves to this side — also
  // the text's last token, with no blank after it.
  assert.equal(readUAIFast(`\ufeff${ok}`), null);
  for (const text of [ok.replace('0.5 1', '+0.5 1'), `${ok.slice(0, -1)}+6`, `${ok.slice(0, -1)}6.${'0'.repeat(25)}1`]) {
    assertSameModel(readUAIFast(text), readUAIText(text), text.slice(-30));
  }
});

test('no room in the engine\'s memory: the TypeScript reader reads the text (no EngineError)', () => {
  const text = writeUAI(isingLattice({ shape: [60, 60], J: 0.2, h: 0.1 }));
  const engine = plannerEngine(), limit = engine.memoryLimit;
  engine.memoryLimit = engine.bytesInUse + 1000;
  try {
    assert.equal(readUAIFast(text), null);
    assertSameModel(readUAI(text), readUAIText(text), 'read by the TypeScript reader');
  } finally {
    engine.memoryLimit = limit;
  }
});

test('a large text with a fault near its end: readUAI\'s message is the TypeScript reader\'s (line and token)', () => {
  const text = writeUAI(isingLattice({ shape: [60, 60], J: 0.3, h: 0.1 }));
  assert.ok(text.length >= FAST_UAI_MIN_CHARS);
  const bad = `${text.slice(0, -40)} 1.5q ${text.slice(-40)}`;
  let message = '';
  try {
    readUAIText(bad, 'big.uai');
  } catch (e) {
    message = (e as Error).message;
  }
  assert.match(message, /1\.5q|after the last table|entries/);
  assert.throws(() => readUAI(bad, 'big.uai'), (e: Error) => e.message === message);
});

test('loadModelFile reads a large .uai file from its bytes: the same model as its text', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'relaxmrf-uai-fast-'));
  try {
    const text = writeUAI(renumbered(isingLattice({ shape: [70, 70], J: (i, j) => Math.cos(i * j) / 3, h: 0.2 }), 9).model);
    assert.ok(text.length >= FAST_UAI_MIN_CHARS);
    const file = join(dir, 'lattice.uai');
    writeFileSync(file, text);
    assertSameModel((await loadModelFile(file)).model, readUAIText(text), 'from bytes');
    // A fault: the TypeScript reader's message, with the file's name.
    writeFileSync(file, text.replace(/\n2\n/, '\n2 7\n'));
    await assert.rejects(loadModelFile(file), (e: Error) => e.message.includes('lattice.uai') && /line \d+/.test(e.message));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a .uai file past 512 MiB that the engine\'s reader gives up (bytes after the tables): refused naming both readers', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'relaxmrf-uai-huge-'));
  try {
    // A small model, then NUL bytes to 600 MB (a sparse file: nothing written to disk).
    const file = join(dir, 'huge.uai');
    writeFileSync(file, 'MARKOV\n1\n2\n1\n1 0\n2\n0.5 0.5\n');
    truncateSync(file, 600 * 2 ** 20);
    await assert.rejects(loadModelFile(file), (e: Error) => /larger than 512 MiB/.test(e.message) && /engine's reader, which reads a \.uai file's bytes, did not read it/.test(e.message));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('mutated texts (1–3 random edits of writeUAI\'s output): whatever the engine reads, the TypeScript reader reads the same; what it refuses, the engine does not read', () => {
  const rand = mulberry32(404);
  const pieces = ['0', '1', '2', '9', '.', 'e', 'E', '-', '+', ' ', '\n', '\t', 'x', '#', '\u00e9', '\r', '00', '1e400', '1e-400', '99999999999999999999', ''];
  let read = 0, refused = 0;
  for (let trial = 0; trial < 1500; trial++) {
    let text = writeUAI(randomFactorGraph(rand, 2 + Math.floor(rand() * 6), { maxArity: 3, zeros: 0.1, scale: 2 }));
    for (let e = 1 + Math.floor(rand() * 3); e > 0; e--) {
      const p = Math.floor(rand() * text.length);
      text = text.slice(0, p) + pieces[Math.floor(rand() * pieces.length)] + text.slice(p + Math.floor(rand() * 3));
    }
    let want: Model | null = null;
    try {
      want = readUAIText(text);
    } catch {
      refused++;
    }
    const got = readUAIFast(text);
    if (got === null) continue;
    assert.ok(want, `the engine read a text the TypeScript reader refuses: ${JSON.stringify(text)}`);
    assertSameModel(got, want, JSON.stringify(text));
    read++;
  }
  assert.ok(read > 100 && refused > 100, `${read} read by the engine, ${refused} refused`);
});
