// Philox streams read four blocks at a time (SIMD), for kernels that draw one word per site.
import { Philox, PHILOX_BYTES } from './rng';

// Philox's multipliers as vectors, loaded (V8 rebuilds a v128 constant at every use).
const PHILOX_M = memory.data<u32>([0xD2511F53, 0xD2511F53, 0xD2511F53, 0xD2511F53, 0xCD9E8D57, 0xCD9E8D57, 0xCD9E8D57, 0xCD9E8D57]);

// The ten rounds' keys (k0, k1 of round r splat at 32·r, 32·r + 16): built once per refill.
const ROUND_KEYS = memory.data(320, 16);

@inline
function roundKeys(k0: u32, k1: u32): void {
  for (let i = 0; i < 10; i++) {
    v128.store(ROUND_KEYS + (<usize>i << 5), i32x4.splat(<i32>k0));
    v128.store(ROUND_KEYS + (<usize>i << 5), i32x4.splat(<i32>k1), 16);
    k0 += 0x9E3779B9;
    k1 += 0xBB67AE85;
  }
}

// Philox4x32-10's ten rounds on four counter vectors at once (lane l: one block), the same
// arithmetic as philoxRounds in rng.ts, with the keys of roundKeys; the output words 0…3 go to
// out, out + 16, out + 32, out + 48.
@inline
function philoxRounds4(out: usize, x0: v128, x1: v128, x2: v128, x3: v128): void {
  for (let i = 0; i < 10; i++) {
    const m0 = v128.load(PHILOX_M), m1 = v128.load(PHILOX_M, 16);
    const p0l = i64x2.extmul_low_i32x4_u(x0, m0);
    const p0h = i64x2.extmul_high_i32x4_u(x0, m0);
    const p1l = i64x2.extmul_low_i32x4_u(x2, m1);
    const p1h = i64x2.extmul_high_i32x4_u(x2, m1);
    const key = ROUND_KEYS + (<usize>i << 5);
    const n0 = v128.xor(v128.xor(v128.shuffle<i32>(p1l, p1h, 1, 3, 5, 7), x1), v128.load(key));
    const n2 = v128.xor(v128.xor(v128.shuffle<i32>(p0l, p0h, 1, 3, 5, 7), x3), v128.load(key, 16));
    x1 = v128.shuffle<i32>(p1l, p1h, 0, 2, 4, 6);
    x3 = v128.shuffle<i32>(p0l, p0h, 0, 2, 4, 6);
    x0 = n0;
    x2 = n2;
  }
  v128.store(out, x0);
  v128.store(out, x1, 16);
  v128.store(out, x2, 32);
  v128.store(out, x3, 48);
}

const PHILOX_TMP = memory.data(64, 16);

// Four consecutive Philox4x32-10 blocks at once, one per i32x4 lane, written in stream order
// (block by block) to `out` (64 bytes); the same arithmetic as philoxRounds in rng.ts.
@inline
export function philox4Blocks(out: usize, ctr: u64, c2: u32, c3: u32, k0: u32, k1: u32): void {
  let x0 = i32x4.splat(<i32>ctr);
  x0 = i32x4.replace_lane(x0, 1, <i32>(ctr + 1));
  x0 = i32x4.replace_lane(x0, 2, <i32>(ctr + 2));
  x0 = i32x4.replace_lane(x0, 3, <i32>(ctr + 3));
  let x1 = i32x4.splat(<i32>(ctr >>> 32));
  x1 = i32x4.replace_lane(x1, 1, <i32>((ctr + 1) >>> 32));
  x1 = i32x4.replace_lane(x1, 2, <i32>((ctr + 2) >>> 32));
  x1 = i32x4.replace_lane(x1, 3, <i32>((ctr + 3) >>> 32));
  roundKeys(k0, k1);
  philoxRounds4(PHILOX_TMP, x0, x1, i32x4.splat(<i32>c2), i32x4.splat(<i32>c3));
  x0 = v128.load(PHILOX_TMP);
  x1 = v128.load(PHILOX_TMP, 16);
  const x2 = v128.load(PHILOX_TMP, 32);
  const x3 = v128.load(PHILOX_TMP, 48);
  // Transpose: lane b of (x0, x1, x2, x3) is block b's (out0, out1, out2, out3).
  const t0 = v128.shuffle<i32>(x0, x1, 0, 4, 1, 5);
  const t1 = v128.shuffle<i32>(x2, x3, 0, 4, 1, 5);
  const t2 = v128.shuffle<i32>(x0, x1, 2, 6, 3, 7);
  const t3 = v128.shuffle<i32>(x2, x3, 2, 6, 3, 7);
  v128.store(out, v128.shuffle<i64>(t0, t1, 0, 2));
  v128.store(out, v128.shuffle<i64>(t0, t1, 1, 3), 16);
  v128.store(out, v128.shuffle<i64>(t2, t3, 0, 2), 32);
  v128.store(out, v128.shuffle<i64>(t2, t3, 1, 3), 48);
}

// ---------------------------------------------------------------------------------------------
// The streams of a batch of chains that advance in lockstep (gibbs_lanes.ts): every chain is at the
// same position of its own stream (same key, counter and word; only the chain id differs), so one
// Philox evaluation over i32x4 lanes = four chains gives each lane its own chain's block, and word
// k of the current block of chains 4g … 4g+3 is one vector.
//
// Layout from `at`: [counter: u64][pos: u32][pad][ids: G × i32x4][words: G × 16 × i32x4], G =
// ⌈B/4⌉ groups (lanes past B carry the last chain's id; their words are never used). Word vector k
// of group g holds word k mod 4 of block ⌊k/4⌋ of the four blocks last generated, so, as in
// freeBitSweeps, the current block on opening is block 3 and position 12 + pos.

export function batchStreamsBytes(B: i32): usize {
  const G = <usize>((B + 3) >> 2);
  return 16 + G * 16 + G * 256;
}

/** Word vector `pos` of group 0 (group g: + 256·g), refilling all groups when used up. */
@inline
export function batchStreamsNext(at: usize, B: i32, p0: usize): usize {
  let pos = load<u32>(at, 8);
  if (pos >= 16) {
    batchStreamsRefill(at, B, p0);
    pos = 0;
  }
  store<u32>(at, pos + 1, 8);
  return batchStreamsWords(at, B) + (<usize>pos << 4);
}

/** Where word vector 0 of group 0 is (group g: + 256·g). */
@inline
export function batchStreamsWords(at: usize, B: i32): usize {
  return at + 16 + (<usize>((B + 3) >> 2) << 4);
}

/**
 * The next four blocks of every chain into the word vectors, counter advanced; the position is
 * the caller's (kernels that keep it in a local store it back at the end, offset 8).
 */
export function batchStreamsRefill(at: usize, B: i32, p0: usize): void {
  const ctr = load<u64>(at);
  const r = changetype<Philox>(p0);
  const G = (B + 3) >> 2;
  roundKeys(r.key0, r.key1);
  if (B <= 2) philoxPairs(at + 32, ctr, v128.load(at + 16), r.ctr3);
  else for (let g = 0; g < G; g++) philoxChains(at + 16 + <usize>G * 16 + (<usize>g << 8), ctr, v128.load(at + 16 + (<usize>g << 4)), r.ctr3);
  store<u64>(at, ctr + 4);
}

/**
 * philoxChains for a group whose lanes 0, 1 only are used (a batch of ≤ 2 chains): each evaluation
 * takes two chains × two blocks, (chain 0, block b), (chain 1, b), (0, b + 1), (1, b + 1), so the
 * four blocks cost two evaluations instead of four. Lanes 0, 1 of the word vectors get the same
 * words; lanes 2, 3 (padding) are left as they were.
 */
@inline
function philoxPairs(out: usize, ctr: u64, ids: v128, c3: u32): void {
  const ids2 = v128.shuffle<i32>(ids, ids, 0, 1, 0, 1);
  for (let b: u64 = 0; b < 4; b += 2) {
    const c0 = ctr + b, c1 = ctr + b + 1;
    let x0 = i32x4.splat(<i32>c0), x1 = i32x4.splat(<i32>(c0 >>> 32));
    x0 = i32x4.replace_lane(i32x4.replace_lane(x0, 2, <i32>c1), 3, <i32>c1);
    x1 = i32x4.replace_lane(i32x4.replace_lane(x1, 2, <i32>(c1 >>> 32)), 3, <i32>(c1 >>> 32));
    philoxRounds4(PHILOX_TMP, x0, x1, ids2, i32x4.splat(<i32>c3));
    const lo = out + (<usize>b << 6), hi = lo + 64;
    for (let k = 0; k < 4; k++) {
      const w = v128.load(PHILOX_TMP + (<usize>k << 4));
      v128.store64_lane(lo + (<usize>k << 4), w, 0);
      v128.store64_lane(hi + (<usize>k << 4), w, 1);
    }
  }
}

/** Four blocks (counters ctr … ctr+3) of four chains' streams: word vector 4b + k is block b's word k. */
@inline
function philoxChains(out: usize, ctr: u64, ids: v128, c3: u32): void {
  for (let b: u64 = 0; b < 4; b++) {
    const x0 = i32x4.splat(<i32>(ctr + b)), x1 = i32x4.splat(<i32>((ctr + b) >>> 32));
    philoxRounds4(out + (<usize>b << 6), x0, x1, ids, i32x4.splat(<i32>c3));
  }
}

/** Loads the batch's streams from its chains' Philox states (Philox × B at p0); they must be in lockstep. */
export function batchStreamsOpen(at: usize, B: i32, p0: usize): void {
  const r0 = changetype<Philox>(p0);
  const G = (B + 3) >> 2;
  store<u64>(at, (<u64>r0.ctr1 << 32) | <u64>r0.ctr0);
  store<u32>(at, 12 + r0.pos, 8);
  for (let l = 0; l < G * 4; l++) {
    const c = min(l, B - 1);
    const r = changetype<Philox>(p0 + <usize>c * PHILOX_BYTES);
    assert(r.ctr0 == r0.ctr0 && r.ctr1 == r0.ctr1 && r.pos == r0.pos && r.ctr3 == r0.ctr3 && r.key0 == r0.key0 && r.key1 == r0.key1, 'the chains of a batch must be in lockstep');
    const g = <usize>(l >> 2), lane = <usize>(l & 3) << 2;
    store<u32>(at + 16 + (g << 4) + lane, r.ctr2);
    const w = at + 16 + <usize>G * 16 + (g << 8) + lane;
    store<u32>(w + 12 * 16, r.out0);
    store<u32>(w + 13 * 16, r.out1);
    store<u32>(w + 14 * 16, r.out2);
    store<u32>(w + 15 * 16, r.out3);
  }
}

/** Writes the streams back: each chain exactly where word-by-word next32 calls would have left it. */
export function batchStreamsClose(at: usize, B: i32, p0: usize): void {
  const G = (B + 3) >> 2;
  const pos = load<u32>(at, 8);
  const q = (pos - 1) >> 2; // the block holding the last word drawn (3 if none was)
  const cur = load<u64>(at) - 3 + <u64>q; // its counter + 1
  for (let c = 0; c < B; c++) {
    const r = changetype<Philox>(p0 + <usize>c * PHILOX_BYTES);
    const w = at + 16 + <usize>G * 16 + (<usize>(c >> 2) << 8) + (<usize>(c & 3) << 2) + (<usize>q << 6);
    r.out0 = load<u32>(w);
    r.out1 = load<u32>(w, 16);
    r.out2 = load<u32>(w, 32);
    r.out3 = load<u32>(w, 48);
    r.ctr0 = <u32>cur;
    r.ctr1 = <u32>(cur >>> 32);
    r.pos = pos - (q << 2);
  }
}
