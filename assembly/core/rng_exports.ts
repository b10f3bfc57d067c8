// Bulk entry points to the generator, for tests and for seeding from TypeScript.
import { Philox, PHILOX_BYTES, rngInit, philoxBlockInto, uniform, uniform32, normal } from './rng';
import { normalsInto } from './rng_normal';

export function rngStateBytes(): usize {
  return PHILOX_BYTES;
}

export function rngSeed(state: usize, seedLo: u32, seedHi: u32, chain: u32, tag: u32): void {
  rngInit(changetype<Philox>(state), seedLo, seedHi, chain, tag);
}

export function rngFillUniform(state: usize, out: usize, n: i32): void {
  const r = changetype<Philox>(state);
  for (let i = 0; i < n; i++) store<f64>(out + (<usize>i << 3), uniform(r));
}

export function rngFillUniform32(state: usize, out: usize, n: i32): void {
  const r = changetype<Philox>(state);
  for (let i = 0; i < n; i++) store<f64>(out + (<usize>i << 3), uniform32(r));
}

export function rngFillNormal(state: usize, out: usize, n: i32): void {
  const r = changetype<Philox>(state);
  for (let i = 0; i < n; i++) store<f64>(out + (<usize>i << 3), normal(r));
}

/** n normals by normalsInto (equal to rngFillNormal's, bit for bit); added to out's values if add. */
export function rngFillNormalBulk(state: usize, out: usize, n: i32, add: i32): void {
  normalsInto(changetype<Philox>(state), out, n, add != 0);
}

/** Philox4x32-10 block of (counter, key) written as four u32 at out (known-answer tests). */
export function rngPhiloxBlock(state: usize, c0: u32, c1: u32, c2: u32, c3: u32, k0: u32, k1: u32, out: usize): void {
  const r = changetype<Philox>(state);
  philoxBlockInto(r, c0, c1, c2, c3, k0, k1);
  store<u32>(out, r.out0);
  store<u32>(out, r.out1, 4);
  store<u32>(out, r.out2, 8);
  store<u32>(out, r.out3, 12);
}
