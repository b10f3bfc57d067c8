// Philox4x32-10 (Salmon et al., SC'11), counter-based: the output block is a pure function of
// (counter, key), so a stream is (key = seed, counter words 2–3 = chain id and stream tag) and
// any block can be computed without running the ones before it.

import { boxMuller } from './vnormal';

const M0: u64 = 0xD2511F53;
const M1: u64 = 0xCD9E8D57;
const W0: u32 = 0x9E3779B9;
const W1: u32 = 0xBB67AE85;

/** One generator stream, laid out in WASM memory (owned by the caller). 64 bytes. */
@unmanaged
export class Philox {
  key0: u32;
  key1: u32;
  ctr0: u32; // block counter, low word
  ctr1: u32; // block counter, high word
  ctr2: u32; // chain id
  ctr3: u32; // stream tag (which use of the chain's randomness)
  out0: u32;
  out1: u32;
  out2: u32;
  out3: u32;
  pos: u32; // next unused output word, 4 = block exhausted
  hasSpare: u32; // Box–Muller produces normals in pairs
  spare: f64;
}

export const PHILOX_BYTES: usize = offsetof<Philox>();

/** Ten rounds on (c0..c3) with key (k0, k1); writes the block into r.out*. */
@inline
function philoxRounds(r: Philox, c0: u32, c1: u32, c2: u32, c3: u32, k0: u32, k1: u32): void {
  for (let i = 0; i < 10; i++) {
    const p0 = M0 * <u64>c0;
    const p1 = M1 * <u64>c2;
    const n0 = (<u32>(p1 >>> 32)) ^ c1 ^ k0;
    const n2 = (<u32>(p0 >>> 32)) ^ c3 ^ k1;
    c0 = n0;
    c1 = <u32>p1;
    c2 = n2;
    c3 = <u32>p0;
    k0 += W0;
    k1 += W1;
  }
  r.out0 = c0;
  r.out1 = c1;
  r.out2 = c2;
  r.out3 = c3;
}

export function rngInit(r: Philox, seedLo: u32, seedHi: u32, chain: u32, tag: u32): void {
  r.key0 = seedLo;
  r.key1 = seedHi;
  r.ctr0 = 0;
  r.ctr1 = 0;
  r.ctr2 = chain;
  r.ctr3 = tag;
  r.pos = 4;
  r.hasSpare = 0;
  r.spare = 0;
}

/** The raw block function, for the published known-answer tests. */
export function philoxBlockInto(r: Philox, c0: u32, c1: u32, c2: u32, c3: u32, k0: u32, k1: u32): void {
  philoxRounds(r, c0, c1, c2, c3, k0, k1);
}

@inline
function refill(r: Philox): void {
  philoxRounds(r, r.ctr0, r.ctr1, r.ctr2, r.ctr3, r.key0, r.key1);
  const lo = r.ctr0 + 1;
  r.ctr0 = lo;
  if (lo == 0) r.ctr1 += 1;
  r.pos = 0;
}

/** Next 32 random bits of the stream. */
@inline
export function next32(r: Philox): u32 {
  if (r.pos >= 4) refill(r);
  const p = r.pos;
  r.pos = p + 1;
  // Branch-free pick of word p of the block.
  return load<u32>(changetype<usize>(r) + offsetof<Philox>('out0') + ((<usize>p) << 2));
}

/** Uniform on (0, 1) with 32-bit resolution: enough for an accept test against a probability. */
@inline
export function uniform32(r: Philox): f64 {
  return (<f64>next32(r) + 0.5) * 2.3283064365386963e-10; // 2^-32
}

/** Uniform on (0, 1) with 53-bit resolution (two words); never 0, so log() is safe. */
@inline
export function uniform(r: Philox): f64 {
  const a = next32(r) >>> 5;
  const b = next32(r) >>> 6;
  return (<f64>a * 67108864.0 + <f64>b + 0.5) * 1.1102230246251565e-16; // 2^-53
}

const NORMAL_PAIR = memory.data(16, 16);

/**
 * Standard normal by Box–Muller (vnormal.ts's arithmetic, which rng_normal.ts's normalsInto repeats
 * two pairs at a time); a pair takes two uniforms (four words), the cosine is returned first and the
 * sine kept for the next call.
 */
export function normal(r: Philox): f64 {
  if (r.hasSpare) {
    r.hasSpare = 0;
    return r.spare;
  }
  const u1 = uniform(r);
  const u2 = uniform(r);
  boxMuller(u1, u2, NORMAL_PAIR);
  r.spare = load<f64>(NORMAL_PAIR, 8);
  r.hasSpare = 1;
  return load<f64>(NORMAL_PAIR);
}
