// Standard normals in bulk: n draws of rng.ts's normal from one stream, two Box–Muller pairs per
// f64x2 evaluation (vnormal.ts), Philox blocks four at a time (rng_lanes.ts) when the stream is at a
// block boundary. The stream is left exactly as n normal(r) calls leave it and the values are theirs
// bit for bit (same words, same arithmetic), so a kernel may draw its noise either way. bulkWords hands
// out the stream's words the same way (for uniforms).

import { Philox, next32, normal } from './rng';
import { boxMullerPair } from './vnormal';
import { philox4Blocks } from './rng_lanes';

const WORDS = memory.data(64, 16); // up to four blocks of words
const OUT = memory.data(64, 16); // up to eight normals

/** 2^26, ½, 2^−53: rng.ts uniform's constants. */
const U_K = memory.data<f64>([67108864.0, 0.5, 1.1102230246251565e-16]);

/** rng.ts's uniform from words (a, b) in lanes: (a >>> 5)·2^26 + (b >>> 6) + ½, times 2^−53. */
@inline
function uniforms(a: v128, b: v128): v128 {
  const x = f64x2.mul(f64x2.convert_low_i32x4_u(i32x4.shr_u(a, 5)), v128.load64_splat(U_K));
  return f64x2.mul(f64x2.add(f64x2.add(x, f64x2.convert_low_i32x4_u(i32x4.shr_u(b, 6))), v128.load64_splat(U_K, 8)), v128.load64_splat(U_K, 16));
}

/** Two Box–Muller pairs from eight consecutive stream words at w (pair j: words 4j … 4j+3) into out. */
@inline
function twoPairs(w: usize, out: usize): void {
  const A = v128.load(w), B = v128.load(w, 16);
  const a = v128.shuffle<i32>(A, B, 0, 4, 2, 6); // first words of u1 (pairs 0, 1), then of u2
  const b = v128.shuffle<i32>(A, B, 1, 5, 3, 7); // second words
  const u1 = uniforms(a, b);
  const u2 = uniforms(v128.shuffle<i32>(a, a, 2, 3, 2, 3), v128.shuffle<i32>(b, b, 2, 3, 2, 3));
  boxMullerPair(u1, u2, out);
}

@inline
function put(dst: usize, z: f64, add: bool): void {
  store<f64>(dst, add ? load<f64>(dst) + z : z);
}

/** The next four blocks of r (16 words) into WORDS at once; r must be at a block boundary (pos ≥ 4). */
@inline
function fourBlocks(r: Philox): void {
  const ctr = (<u64>r.ctr1 << 32) | <u64>r.ctr0;
  philox4Blocks(WORDS, ctr, r.ctr2, r.ctr3, r.key0, r.key1);
  r.ctr0 = <u32>(ctr + 4);
  r.ctr1 = <u32>((ctr + 4) >>> 32);
  v128.store(changetype<usize>(r) + offsetof<Philox>('out0'), v128.load(WORDS, 48)); // the last block, as refill leaves it
}

/**
 * The stream's next words for a caller that wants `want` more: 16 (four blocks at once) when r is at a
 * block boundary and want ≥ 16, else one; returns how many, the words (u32) being at `bulkWordsAt`. r is
 * left as that many next32 calls leave it, and the words are theirs.
 */
export function bulkWords(r: Philox, want: i32): i32 {
  if (r.pos >= 4 && want >= 16) {
    fourBlocks(r);
    return 16;
  }
  store<u32>(WORDS, next32(r));
  return 1;
}

/** Where bulkWords leaves its words. */
export const bulkWordsAt: usize = WORDS;

/** rng.ts's uniform32 of a word w. */
@inline
export function uniform32Of(w: u32): f64 {
  return (<f64>w + 0.5) * 2.3283064365386963e-10; // 2^-32
}

/** n standard normals from r into dst (f64 × n), or added to dst's values when add is set. */
export function normalsInto(r: Philox, dst: usize, n: i32, add: bool): void {
  let i = 0;
  if (n > 0 && r.hasSpare) {
    r.hasSpare = 0;
    put(dst, r.spare, add);
    i = 1;
  }
  while (n - i >= 4) {
    let got = 4;
    if (r.pos >= 4 && n - i >= 8) {
      // At a block boundary: the next four blocks at once; the stream then stands after them.
      fourBlocks(r);
      twoPairs(WORDS, OUT);
      twoPairs(WORDS + 32, OUT + 32);
      got = 8;
    } else {
      for (let j = 0; j < 8; j++) store<u32>(WORDS + (<usize>j << 2), next32(r));
      twoPairs(WORDS, OUT);
    }
    for (let j = 0; j < got; j++) put(dst + (<usize>(i + j) << 3), load<f64>(OUT + (<usize>j << 3)), add);
    i += got;
    r.spare = load<f64>(OUT + (<usize>(got - 1) << 3)); // the last sine, where normal leaves it (unused: hasSpare = 0)
  }
  for (; i < n; i++) put(dst + (<usize>i << 3), normal(r), add);
}
