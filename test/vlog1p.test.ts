// log1pUnitPair (assembly/core/vlog1p.ts): Math.log1p on both f64x2 lanes for x ∈ [0, 1], bit for bit,
// over both of musl's paths, their boundary, tiny and subnormal arguments and e^−|u| as softplus makes it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { mulberry32 } from './helpers.ts';

const engine = await loadEngine();

test('log1pUnitPair is Math.log1p bit for bit on [0, 1]', () => {
  const k = engine.kernels;
  const arena = engine.arena();
  try {
    const rand = mulberry32(11);
    const edge = 0.41421356237309503; // near musl's switch (high word 0x3FDA827A)
    const xs: number[] = [0, 1, 5e-324, 2.2250738585072014e-308, 2 ** -53, 2 ** -53 * (1 - 2 ** -52), 2 ** -54, 1e-300, 0.5, 0.9999999999999999, edge, edge * (1 + 2 ** -52), edge * (1 - 2 ** -52), Math.SQRT2 - 1];
    const bits = new Float64Array(1);
    const u = new Uint32Array(bits.buffer);
    for (let h = 0x3fda8270; h < 0x3fda8280; h++) {
      u[1] = h;
      u[0] = (rand() * 2 ** 32) >>> 0;
      xs.push(bits[0]);
    }
    while (xs.length < 40000) {
      const r = rand();
      if (r < 0.4) xs.push(rand());
      else if (r < 0.8) xs.push(Math.exp(-Math.abs((rand() - 0.5) * 80)));
      else xs.push(Math.exp(-rand() * 800)); // down to subnormals and 0
    }
    if (xs.length % 2) xs.push(0.25);
    const src = arena.allocF64(xs), a = arena.allocF64(xs.length), b = arena.allocF64(xs.length);
    k.vlog1pPair(src, a, xs.length);
    k.vlog1pScalar(src, b, xs.length);
    const va = arena.readF64(a, xs.length), vb = arena.readF64(b, xs.length);
    for (let i = 0; i < xs.length; i++) assert.ok(Object.is(va[i], vb[i]), `log1p(${xs[i]}): ${va[i]} vs ${vb[i]}`);
  } finally {
    arena.dispose();
  }
});
