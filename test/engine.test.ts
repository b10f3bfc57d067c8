import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { GibbsSampler } from '../bindings/samplers/gibbs.ts';
import { EngineError } from '../bindings/core/errors.ts';
import { mulberry32, randomModel } from './helpers.ts';

const engine = await loadEngine();

test('an abort inside WASM surfaces as an EngineError with a readable message', () => {
  // The allocator aborts on a block larger than it can manage.
  const arena = engine.arena();
  assert.throws(() => arena.alloc(0xf000_0000), (e: unknown) => e instanceof EngineError && /engine aborted: .*[Aa]llocation too large/.test((e as Error).message));
  arena.dispose();
});

test('arenas: use after dispose throws; disposing frees memory for reuse', () => {
  const arena = engine.arena();
  const p = arena.allocF64([1, 2, 3]);
  assert.deepEqual(Array.from(arena.readF64(p, 3)), [1, 2, 3]);
  arena.dispose();
  assert.throws(() => arena.f64(p, 3), /use after dispose/);
  // Freed blocks are reused: repeated alloc/dispose cycles do not grow memory.
  const before = engine.memoryBytes;
  for (let i = 0; i < 50; i++) {
    const a = engine.arena();
    a.alloc(8 << 20);
    a.dispose();
  }
  assert.ok(engine.memoryBytes <= before + (16 << 20), `memory grew from ${before} to ${engine.memoryBytes}`);
});

test('views are rebuilt after memory growth: a sampler gives the same result across a growth', () => {
  const m = randomModel(mulberry32(8), 12, { cards: [2, 3] });
  const run = (grow: boolean) => {
    const e = engine;
    const s = new GibbsSampler(e, m);
    const st = s.init(3, 0);
    const acc = s.accumulator();
    s.step(st, 100, acc);
    const other = e.arena();
    if (grow) other.alloc(64 << 20); // forces memory.grow: old ArrayBuffer views detach
    s.step(st, 100, acc);
    const out = { x: s.configuration(st), acc: s.readAndClear(acc) };
    other.dispose();
    s.dispose();
    return out;
  };
  const plain = run(false), grown = run(true);
  assert.deepEqual(grown.x, plain.x);
  assert.deepEqual(grown.acc, plain.acc);
});

test('generator from the bindings: same seed and chain → same bits; streams differ; normals are N(0,1)', async () => {
  const fill = (seed: number, chain: number, n: number, kind: 'rngFillUniform' | 'rngFillNormal') => {
    const a = engine.arena();
    const st = a.alloc(engine.kernels.rngStateBytes());
    const out = a.allocF64(n);
    engine.kernels.rngSeed(st, seed, 0, chain, 0);
    engine.kernels[kind](st, out, n);
    const r = a.readF64(out, n);
    a.dispose();
    return r;
  };
  assert.deepEqual(fill(1, 0, 1000, 'rngFillUniform'), fill(1, 0, 1000, 'rngFillUniform'));
  assert.notDeepEqual(fill(1, 0, 1000, 'rngFillUniform'), fill(1, 1, 1000, 'rngFillUniform'));
  // A second engine instance reproduces the same stream.
  const other = await loadEngine();
  const a = other.arena();
  const st = a.alloc(other.kernels.rngStateBytes()), out = a.allocF64(1000);
  other.kernels.rngSeed(st, 1, 0, 0, 0);
  other.kernels.rngFillUniform(st, out, 1000);
  assert.deepEqual(a.readF64(out, 1000), fill(1, 0, 1000, 'rngFillUniform'));
  const z = fill(9, 2, 100000, 'rngFillNormal');
  const mean = z.reduce((s, x) => s + x, 0) / z.length;
  const variance = z.reduce((s, x) => s + (x - mean) ** 2, 0) / z.length;
  // Standard errors: 1/√n = 3.2e-3 for the mean, √(2/n) = 4.5e-3 for the variance; 5 SE.
  assert.ok(Math.abs(mean) < 5 * 3.2e-3, `mean ${mean}`);
  assert.ok(Math.abs(variance - 1) < 5 * 4.5e-3, `variance ${variance}`);
});
