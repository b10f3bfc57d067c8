// The vectorised exponentials (assembly/core/vmath.ts) in ulps against Math.exp over the whole
// range: expPair (f64x2) must be AssemblyScript's Math.exp bit for bit — the lanes kernels rely on
// it to reproduce the single-chain kernel — and within 1 ulp of JavaScript's Math.exp; expF32x4
// within 1 ulp of Math.exp rounded to f32, including subnormal results, 0, ∞ and NaN.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { mulberry32 } from './helpers.ts';

const engine = await loadEngine();
const k = engine.kernels;

/** Distance in representable values (same sign convention for both; NaN only equals NaN). */
function ulps64(a: number, b: number): number {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b) ? 0 : Infinity;
  const v = new DataView(new ArrayBuffer(16));
  v.setFloat64(0, a);
  v.setFloat64(8, b);
  const ia = v.getBigInt64(0), ib = v.getBigInt64(8); // results of exp are ≥ 0: ordered as integers
  return Number(ia > ib ? ia - ib : ib - ia);
}

function ulps32(a: number, b: number): number {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b) ? 0 : Infinity;
  const v = new DataView(new ArrayBuffer(8));
  v.setFloat32(0, a);
  v.setFloat32(4, b);
  return Math.abs(v.getInt32(0) - v.getInt32(4));
}

/** Arguments over the whole f64 range: a dense grid where exp is finite and nonzero, random bit patterns, and the edges. */
function arguments64(): Float64Array {
  const rand = mulberry32(77);
  const xs: number[] = [0, -0, Infinity, -Infinity, NaN, 709.78, 709.79, 710, -708.39, -745.13, -745.2, 1e-300, -1e-300, 2 ** -54, -(2 ** -54), 511.99, 512, -512, 1e308, -1e308];
  for (let i = 0; i <= 200_000; i++) xs.push(-750 + (1460 * i) / 200_000);
  const w = new DataView(new ArrayBuffer(8));
  for (let i = 0; i < 100_000; i++) {
    w.setUint32(0, (rand() * 2 ** 32) >>> 0);
    w.setUint32(4, (rand() * 2 ** 32) >>> 0);
    xs.push(w.getFloat64(0));
  }
  for (let i = 0; i < 100_000; i++) xs.push((rand() - 0.5) * 2 ** (rand() * 12 - 2)); // |x| up to 1024, every scale
  if (xs.length % 2) xs.push(1);
  return Float64Array.from(xs);
}

test('expPair: AssemblyScript Math.exp bit for bit, within 1 ulp of JavaScript Math.exp, over the whole range', () => {
  const x = arguments64();
  const n = x.length;
  const arena = engine.arena();
  try {
    const src = arena.allocF64(x), a = arena.allocF64(n), b = arena.allocF64(n);
    k.vmathExpF64(src, a, n);
    k.vmathExpScalar(src, b, n);
    const lanes = arena.f64(a, n).slice(), scalar = arena.f64(b, n).slice();
    let worst = 0, worstAt = 0;
    for (let i = 0; i < n; i++) {
      assert.equal(ulps64(lanes[i], scalar[i]), 0, `exp(${x[i]}): lanes ${lanes[i]}, scalar ${scalar[i]}`);
      const d = ulps64(lanes[i], Math.exp(x[i]));
      if (d > worst) (worst = d), (worstAt = x[i]);
    }
    assert.ok(worst <= 1, `${worst} ulps from Math.exp at x = ${worstAt}`);
  } finally {
    arena.dispose();
  }
});

test('expF32x4: within 1 ulp of Math.exp rounded to f32, subnormal results, 0, ∞ and NaN included', () => {
  const rand = mulberry32(78);
  const xs: number[] = [0, -0, Infinity, -Infinity, NaN, 88.72, 88.7228, 88.73, 89, 100, -87.3, -103.27, -103.97, -104, -110, 1e-30, -1e-30, 3e38, -3e38];
  for (let i = 0; i <= 400_000; i++) xs.push(-106 + (196 * i) / 400_000);
  const w = new DataView(new ArrayBuffer(4));
  for (let i = 0; i < 100_000; i++) {
    w.setUint32(0, (rand() * 2 ** 32) >>> 0);
    xs.push(w.getFloat32(0));
  }
  while (xs.length % 4) xs.push(0);
  const x = Float32Array.from(xs);
  const n = x.length;
  const arena = engine.arena();
  try {
    const src = arena.alloc(4 * n), dst = arena.alloc(4 * n);
    new Float32Array(k.memory.buffer, src, n).set(x);
    k.vmathExpF32(src, dst, n);
    const y = new Float32Array(k.memory.buffer, dst, n).slice();
    let worst = 0, worstAt = 0;
    for (let i = 0; i < n; i++) {
      const d = ulps32(y[i], Math.fround(Math.exp(x[i])));
      if (d > worst) (worst = d), (worstAt = x[i]);
    }
    assert.ok(worst <= 1, `${worst} ulps from Math.exp at x = ${worstAt}`);
  } finally {
    arena.dispose();
  }
});
