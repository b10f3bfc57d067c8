// The engine's decimal reader (assembly/io/decimal.ts) against Number(), its log (fdlibm_log.ts)
// against Math.log, bit for bit, and its table of powers of five against its generator.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { plannerEngine } from '../bindings/core/engine.ts';
import { pow5TableSource } from '../scripts/pow5-table.ts';
import { mulberry32 } from './helpers.ts';

/** The engine's value of each token (NaN: left to the caller). */
function scan(tokens: string[], sep = ' '): Float64Array {
  const engine = plannerEngine(), k = engine.kernels, arena = engine.arena();
  try {
    const bytes = new TextEncoder().encode(tokens.join(sep));
    const inPtr = arena.alloc(bytes.length + 8, false), out = arena.alloc(8 * tokens.length, false), left = arena.alloc(8 * tokens.length, false);
    const view = new Uint8Array(k.memory.buffer, inPtr, bytes.length + 8);
    view.set(bytes);
    view.fill(32, bytes.length);
    const count = k.decimalScan(inPtr, bytes.length, 0, out, tokens.length, left, tokens.length);
    assert.equal(count, tokens.length);
    assert.equal(k.decimalScanLeft(), arena.f64(out, count).filter((x) => Number.isNaN(x)).length);
    return arena.f64(out, count).slice();
  } finally {
    arena.dispose();
  }
}

/** Asserts every value the engine gives is Number()'s, bit for bit; returns how many it left. */
function sameAsNumber(tokens: string[]): number {
  const got = scan(tokens);
  let left = 0;
  tokens.forEach((t, i) => {
    if (Number.isNaN(got[i])) left++;
    else assert.ok(Object.is(got[i], Number(t)), `${t}: ${got[i]} against Number()'s ${Number(t)}`);
  });
  return left;
}

test('pow5_table.ts is what scripts/pow5-table.ts writes', () => {
  assert.equal(readFileSync(new URL('../assembly/io/pow5_table.ts', import.meta.url), 'utf8'), pow5TableSource());
});

test('hard cases: ties, the ends of the normal range, exact powers, and what is left to Number()', () => {
  const values: Record<string, string | null> = {
    // null: left to the caller; else the engine must give Number()'s value.
    '9007199254740993': '', '9007199254740995': '', '4503599627370497.5': '', '9007199254740992.5': '',
    '7.3177701707893310e+15': '', '2.2250738585072014e-308': '', '1.7976931348623157e308': '', '1.7976931348623158e308': '',
    '1e23': '', '8.98846567431158e307': '', '0.1': '', '0.3': '', '123456789012345678': '', '1234567890123456789': '',
    '0.000000000000000000000000000000001': '', '3.0540315e-308': '', '0': '', '0.0': '', '00000': '', '0e500': '', '.5': '',
    '5.': '', '1e+0': '', '1E-0': '', '2.5e-3': '', '0.99980000000000': '',
    '12345678901234567890': '', '54029168721636100000': '', '1.000000000000000000000': '', '12345678901234567891': null,
    // Eight digits at a time: runs cut by a point, an exponent or the token's end inside a word.
    '12345678.12345678': '', '1.2345678e5': '', '1.23456789e5': '', '0.000123456789012345678': '', '1.23456789012345678e-5': '',
    '9.99999999999999999': '', '1234567890123456789e-10': '', '123456789012345678901': null, '1.00000000000000000001': null, '12345678x': null, '1.7976931348623159e308': null, '1e309': null, '1e-343': null, '5e-324': null,
    '2.2250738585072011e-308': null, '+1': null, '-1': null, '1e': null, '1e+': null, '.': null, '0x10': null,
    '1.2.3': null, 'Infinity': null, 'NaN': null, '1ee5': null, '1_000': null, 'MARKOV': null,
  };
  const tokens = Object.keys(values), got = scan(tokens);
  tokens.forEach((t, i) => {
    if (values[t] === null) assert.ok(Number.isNaN(got[i]), `${t} is left to Number()`);
    else assert.ok(Object.is(got[i], Number(t)), `${t}: ${got[i]} against ${Number(t)}`);
  });
});

test('random doubles printed shortest (past 10^20 with trailing zeros), to 17 and to 19 digits: Number()\'s value, none left', () => {
  const rand = mulberry32(7), f = new Float64Array(1), u = new Uint32Array(f.buffer), tokens: string[] = [];
  while (tokens.length < 300_000) {
    u[0] = (rand() * 2 ** 32) >>> 0;
    u[1] = (rand() * 0x7fefffff) >>> 0;
    const x = f[0];
    // Normal doubles printed within 19 significant digits: the engine reads them all.
    if (x < 2.2250738585072014e-308 * 10) continue;
    tokens.push(tokens.length % 3 === 0 ? String(x) : tokens.length % 3 === 1 ? x.toPrecision(17) : x.toExponential(18));
  }
  assert.equal(sameAsNumber(tokens), 0);
});

test('random digit strings (1–24 digits, a point anywhere, exponents to ±340): Number()\'s value or left, and left only past 19 significant digits or the normal range', () => {
  const rand = mulberry32(11), tokens: string[] = [];
  for (let i = 0; i < 300_000; i++) {
    const nd = 1 + Math.floor(rand() * 24);
    let d = '';
    for (let j = 0; j < nd; j++) d += Math.floor(rand() * 10);
    const dot = rand() < 0.7 ? Math.floor(rand() * (nd + 1)) : -1;
    let t = dot >= 0 ? `${d.slice(0, dot)}.${d.slice(dot)}` : d;
    if (rand() < 0.5) t += `${rand() < 0.5 ? 'e' : 'E'}${rand() < 0.3 ? '-' : rand() < 0.5 ? '+' : ''}${Math.floor(rand() * 340)}`;
    tokens.push(t);
  }
  const got = scan(tokens);
  let left = 0;
  tokens.forEach((t, i) => {
    const x = Number(t);
    if (!Number.isNaN(got[i])) return assert.ok(Object.is(got[i], x), `${t}: ${got[i]} against ${x}`);
    left++;
    const digits = t.replace(/[eE].*$/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '').length;
    assert.ok(digits > 19 || !(x >= 2.2250738585072014e-308 && x < Infinity), `${t} (${digits} digits, ${x}) was left`);
  });
  assert.ok(left > 0 && left < tokens.length / 2, `${left} left`);
});

test('tokens split by any ASCII blank (tab, CR, LF, VT, FF)', () => {
  const tokens = ['1.5', '2', '3e2', '0.25', '7'];
  for (const sep of ['\t', '\r\n', '\n', '\v', '\f', ' \t ']) {
    const engine = plannerEngine(), k = engine.kernels, arena = engine.arena();
    try {
      const bytes = new TextEncoder().encode(sep + tokens.join(sep) + sep);
      const p = arena.alloc(bytes.length + 8, false), out = arena.alloc(64, false), left = arena.alloc(64, false);
      new Uint8Array(k.memory.buffer, p, bytes.length + 8).set([...bytes, 32, 32, 32, 32, 32, 32, 32, 32]);
      assert.equal(k.decimalScan(p, bytes.length, 0, out, 8, left, 8), 5);
      assert.deepEqual(Array.from(arena.f64(out, 5)), tokens.map(Number));
    } finally {
      arena.dispose();
    }
  }
});

test('fdlibmLog is Math.log bit for bit: random doubles over the whole range, near 1, powers of two, subnormals, 0, ∞', () => {
  const rand = mulberry32(3), n = 400_000, xs = new Float64Array(n), f = new Float64Array(1), u = new Uint32Array(f.buffer);
  for (let i = 0; i < n; i++) {
    const kind = i % 5;
    if (kind === 0) {
      u[0] = (rand() * 2 ** 32) >>> 0;
      u[1] = (rand() * 0x7ff00000) >>> 0;
      xs[i] = f[0];
    } else if (kind === 1) xs[i] = 1 + (rand() - 0.5) * 2 ** -(1 + Math.floor(rand() * 40));
    else if (kind === 2) xs[i] = 2 ** Math.floor(rand() * 2098 - 1074) * (rand() < 0.5 ? 1 : 1 + 2 ** -52);
    else if (kind === 3) xs[i] = rand() * 2.2250738585072014e-308;
    else xs[i] = rand() * 10;
  }
  xs.set([0, Infinity, 1, 2, 0.5, Math.E, 5e-324, Number.MAX_VALUE], 0);
  const engine = plannerEngine(), arena = engine.arena();
  try {
    const p = arena.alloc(8 * n, false);
    arena.f64(p, n).set(xs);
    engine.kernels.fdlibmLogs(p, n);
    const got = arena.f64(p, n);
    for (let i = 0; i < n; i++) assert.ok(Object.is(got[i], Math.log(xs[i])), `log(${xs[i]}): ${got[i]} against Math.log's ${Math.log(xs[i])}`);
  } finally {
    arena.dispose();
  }
});
