// The generator's normals (assembly/core/vnormal.ts, rng.ts normal, rng_normal.ts normalsInto): the
// scalar and f64x2 forms of ln u and (cos 2πu, sin 2πu) equal bit for bit and within a few ulps of
// Math; bulk draws equal one-at-a-time draws bit for bit, stream state included; the draws pass
// moment, Kolmogorov–Smirnov and χ² tests at a fixed seed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { mulberry32 } from './helpers.ts';

const engine = await loadEngine();
const k = engine.kernels;

const bits = new DataView(new ArrayBuffer(8));
/** The f64's position on the number line counted in representable values (±0 both at 0). */
function ordinal(x: number): bigint {
  bits.setFloat64(0, x);
  const b = bits.getBigInt64(0);
  return b < 0n ? -(b & 0x7fffffffffffffffn) : b;
}
function ulps(a: number, b: number): number {
  const d = ordinal(a) - ordinal(b);
  return Number(d < 0n ? -d : d);
}

/** Uniforms as the generator makes them ((a·2^26 + b + ½)·2^−53), plus every binade down to 2^−54 and the edges. */
function unitArguments(): Float64Array {
  const rand = mulberry32(5);
  const xs: number[] = [2 ** -54, 2 ** -53 * 1.5, 0.5, Math.SQRT1_2, Math.SQRT1_2 + 2 ** -53, Math.SQRT1_2 - 2 ** -53, 0.25, 0.75, 1 - 2 ** -53, 1 - 2 ** -52, 0.125, 0.375, 0.625, 0.875];
  for (let i = 0; i < 200_000; i++) {
    const a = Math.floor(rand() * 2 ** 27), b = Math.floor(rand() * 2 ** 26);
    xs.push((a * 2 ** 26 + b + 0.5) * 2 ** -53);
  }
  for (let i = 0; i < 100_000; i++) xs.push((0.5 + rand() / 2) * 2 ** -Math.floor(rand() * 54)); // every binade
  for (let i = 0; i < 20_000; i++) xs.push(1 - rand() * 2 ** -20); // near 1 (small ln u)
  for (let i = 0; i < 20_000; i++) xs.push((i % 4) / 4 + (rand() - 0.5) * 2 ** -20); // near quarter turns
  const ok = xs.filter((x) => x > 0 && x < 1);
  return Float64Array.from(ok.slice(0, ok.length - (ok.length % 2)));
}

function run(fn: 'vnormalLogScalar' | 'vnormalLogPair' | 'vnormalTurnScalar' | 'vnormalTurnPair', x: Float64Array, outLen: number): Float64Array {
  const arena = engine.arena();
  try {
    const src = arena.allocF64(x), dst = arena.allocF64(outLen);
    k[fn](src, dst, x.length);
    return arena.f64(dst, outLen).slice();
  } finally {
    arena.dispose();
  }
}

test('ln u: the f64x2 form is the scalar form bit for bit, and within 1 ulp of Math.log on (0, 1)', () => {
  const x = unitArguments();
  const s = run('vnormalLogScalar', x, x.length), p = run('vnormalLogPair', x, x.length);
  let worst = 0, at = 0;
  for (let i = 0; i < x.length; i++) {
    assert.equal(ordinal(p[i]), ordinal(s[i]), `ln ${x[i]}: pair ${p[i]}, scalar ${s[i]}`);
    const d = ulps(s[i], Math.log(x[i]));
    if (d > worst) (worst = d), (at = x[i]);
  }
  if (process.env.SHOW) console.log("ln worst ulps", worst, at);
  assert.ok(worst <= 1, `worst ${worst} ulps at u = ${at}`);
});

// π/2 as a double-double and Dekker's exact product, for a reference cos/sin of 2πu good to ~1 ulp.
const HALF_PI_HI = 1.5707963267948966, HALF_PI_LO = 6.123233995736766e-17;
function split(a: number): [number, number] {
  const c = 134217729 * a; // 2^27 + 1
  const hi = c - (c - a);
  return [hi, a - hi];
}
function twoProduct(a: number, b: number): [number, number] {
  const p = a * b;
  const [ah, al] = split(a), [bh, bl] = split(b);
  return [p, ah * bh - p + ah * bl + al * bh + al * bl];
}
/** (cos 2πu, sin 2πu): exact reduction 4u = q + r, θ = πr/2 in double-double, one correction term. */
function turnReference(u: number): [number, number] {
  const y = 4 * u, q = Math.round(y) === y + 0.5 && Math.round(y) % 2 ? Math.round(y) - 1 : Math.round(y); // ties to even
  const r = y - q;
  const [ph, pl] = twoProduct(HALF_PI_HI, r);
  const th = ph + (pl + HALF_PI_LO * r), tl = pl + HALF_PI_LO * r - (th - ph);
  let c = Math.cos(th) - Math.sin(th) * tl, s = Math.sin(th) + Math.cos(th) * tl;
  if (q & 1) [c, s] = [-s, c];
  if (q & 2) [c, s] = [-c, -s];
  return [c, s];
}

test('cos 2πu, sin 2πu: the f64x2 form is the scalar form bit for bit, and within 2 ulps of a double-double reference', () => {
  const x = unitArguments();
  const s = run('vnormalTurnScalar', x, 2 * x.length), p = run('vnormalTurnPair', x, 2 * x.length);
  let worst = 0, at = 0, worstMath = 0;
  for (let i = 0; i < x.length; i++) {
    for (let j = 0; j < 2; j++) assert.equal(ordinal(p[2 * i + j]), ordinal(s[2 * i + j]), `u = ${x[i]}: pair ${p[2 * i + j]}, scalar ${s[2 * i + j]}`);
    const [c, sn] = turnReference(x[i]);
    const d = Math.max(ulps(s[2 * i], c), ulps(s[2 * i + 1], sn));
    if (d > worst) (worst = d), (at = x[i]);
    // Against Math directly (whose 2π·u rounds): absolute error.
    worstMath = Math.max(worstMath, Math.abs(s[2 * i] - Math.cos(2 * Math.PI * x[i])), Math.abs(s[2 * i + 1] - Math.sin(2 * Math.PI * x[i])));
  }
  if (process.env.SHOW) console.log("turn worst ulps", worst, at, "abs vs Math", worstMath);
  assert.ok(worst <= 2, `worst ${worst} ulps at u = ${at}`);
  assert.ok(worstMath <= 2 ** -50, `worst absolute difference from Math.cos/sin(2πu): ${worstMath}`);
});

/**
 * Draws from one stream following `plan` (one-at-a-time normals, bulk normals, uniform32 words that
 * move the stream off block boundaries); the normals drawn and the stream's state (16 u32) after.
 * With `base`, bulk draws are added to base's values (cycled) instead of stored.
 */
function draws(seed: number, plan: Array<['one' | 'bulk' | 'word', number]>, base?: number[]): { z: number[]; state: number[] } {
  const a = engine.arena();
  try {
    const st = a.alloc(k.rngStateBytes());
    k.rngSeed(st, seed, 0, 3, 1);
    const z: number[] = [];
    for (const [kind, n] of plan) {
      if (n === 0) continue;
      const out = a.allocF64(n);
      if (kind === 'word') k.rngFillUniform32(st, out, n);
      else if (kind === 'one') k.rngFillNormal(st, out, n);
      else {
        if (base) a.f64(out, n).set(Array.from({ length: n }, (_, i) => base[i % base.length]));
        k.rngFillNormalBulk(st, out, n, base ? 1 : 0);
      }
      if (kind !== 'word') z.push(...a.f64(out, n));
    }
    return { z, state: Array.from(a.u32(st, 16)) };
  } finally {
    a.dispose();
  }
}

test('normalsInto: bulk draws are the one-at-a-time draws bit for bit and leave the stream where they would', () => {
  const rand = mulberry32(11);
  const oneAtATime = (plan: Array<['one' | 'bulk' | 'word', number]>) => plan.map(([kind, n]): ['one' | 'bulk' | 'word', number] => [kind === 'bulk' ? 'one' : kind, n]);
  for (let t = 0; t < 60; t++) {
    const plan: Array<['one' | 'bulk' | 'word', number]> = [];
    for (let j = 0; j < 6; j++) plan.push([(['one', 'bulk', 'word'] as const)[Math.floor(rand() * 3)], Math.floor(rand() * 40)]);
    const bulk = draws(t, plan), one = draws(t, oneAtATime(plan));
    assert.ok(one.z.length > 0 || plan.every(([kind, n]) => kind === 'word' || n === 0));
    assert.deepEqual(bulk.z.map(ordinal), one.z.map(ordinal), `plan ${JSON.stringify(plan)}`);
    assert.deepEqual(bulk.state, one.state, `stream state after ${JSON.stringify(plan)}`);
  }
  // With add set, dst + z, the same f64 addition.
  const plan: Array<['one' | 'bulk' | 'word', number]> = [['word', 3], ['bulk', 21]];
  const base = [0.25, -3.5, 1e-3, 7];
  const added = draws(99, plan, base), plain = draws(99, oneAtATime(plan));
  for (let i = 0; i < 21; i++) assert.equal(ordinal(added.z[i]), ordinal(base[i % 4] + plain.z[i]));
  assert.deepEqual(added.state, plain.state);
});

/** Φ(x) by erfc (W. J. Cody's rational Chebyshev fits are overkill here: Numerical Recipes' erfc, |error| < 1.2e-7). */
function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.5 * z);
  const r = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
  return x >= 0 ? 1 - r / 2 : r / 2;
}

test('normals: moments, Kolmogorov–Smirnov and χ² at a fixed seed', () => {
  const n = 400_000;
  const a = engine.arena();
  let z: Float64Array;
  try {
    const st = a.alloc(k.rngStateBytes()), out = a.allocF64(n);
    k.rngSeed(st, 2024, 7, 0, 0);
    k.rngFillNormalBulk(st, out, n, 0);
    z = a.f64(out, n).slice();
  } finally {
    a.dispose();
  }
  let s1 = 0, s2 = 0, s3 = 0, s4 = 0;
  for (const x of z) (s1 += x), (s2 += x * x), (s3 += x * x * x), (s4 += x * x * x * x);
  // Standard errors of the raw moments of N(0, 1): √(1/n), √(2/n), √(15/n), √(96/n); 4 SE.
  assert.ok(Math.abs(s1 / n) < 4 * Math.sqrt(1 / n), `mean ${s1 / n}`);
  assert.ok(Math.abs(s2 / n - 1) < 4 * Math.sqrt(2 / n), `E z² ${s2 / n}`);
  assert.ok(Math.abs(s3 / n) < 4 * Math.sqrt(15 / n), `E z³ ${s3 / n}`);
  assert.ok(Math.abs(s4 / n - 3) < 4 * Math.sqrt(96 / n), `E z⁴ ${s4 / n}`);
  // KS: √n·D beyond 1.95 has probability 0.001 under the null.
  const sorted = Float64Array.from(z).sort();
  let D = 0;
  for (let i = 0; i < n; i++) {
    const F = normalCdf(sorted[i]);
    D = Math.max(D, F - i / n, (i + 1) / n - F);
  }
  assert.ok(Math.sqrt(n) * D < 1.95, `KS √n·D = ${Math.sqrt(n) * D}`);
  // χ² on 100 equiprobable bins (99 degrees of freedom: 0.999 quantile 148.2), bins found by bisection on Φ.
  const B = 100, edges: number[] = [];
  for (let b = 1; b < B; b++) {
    let lo = -10, hi = 10;
    for (let it = 0; it < 80; it++) {
      const mid = (lo + hi) / 2;
      if (normalCdf(mid) < b / B) lo = mid;
      else hi = mid;
    }
    edges.push((lo + hi) / 2);
  }
  const counts = new Array(B).fill(0);
  let e = 0;
  for (const x of sorted) {
    while (e < edges.length && x >= edges[e]) e++;
    counts[e]++;
  }
  const expct = n / B;
  const chi2 = counts.reduce((s, c) => s + (c - expct) ** 2 / expct, 0);
  assert.ok(chi2 < 148.2, `χ² = ${chi2}`);
  // The tails reach where Box–Muller's 53-bit uniforms allow (|z| up to √(2·53 ln 2) ≈ 8.6).
  assert.ok(Math.abs(sorted[0]) > 4 && sorted[n - 1] > 4);
});
