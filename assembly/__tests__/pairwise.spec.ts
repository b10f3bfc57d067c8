import { PairwiseForm, pairwiseFormInit, localField } from '../core/pairwise';

// Three bits: 0 — 1 with W = −∞ (a zero potential), 1 — 2 with W = 0.5; a = (0.25, −1, 2).
function tinyForm(): PairwiseForm {
  const blockStart = heap.alloc(16);
  for (let i = 0; i < 4; i++) store<i32>(blockStart + (<usize>i << 2), i);
  const oneHot = heap.alloc(3);
  memory.fill(oneHot, 0, 3);
  const a = heap.alloc(24);
  store<f64>(a, 0.25);
  store<f64>(a, -1.0, 8);
  store<f64>(a, 2.0, 16);
  const rowPtr = heap.alloc(16);
  store<i32>(rowPtr, 0);
  store<i32>(rowPtr, 1, 4);
  store<i32>(rowPtr, 3, 8);
  store<i32>(rowPtr, 4, 12);
  const col = heap.alloc(16);
  const val = heap.alloc(32);
  store<i32>(col, 1); store<f64>(val, -Infinity);
  store<i32>(col, 0, 4); store<f64>(val, -Infinity, 8);
  store<i32>(col, 2, 8); store<f64>(val, 0.5, 16);
  store<i32>(col, 1, 12); store<f64>(val, 0.5, 24);
  const hdr = heap.alloc(offsetof<PairwiseForm>());
  pairwiseFormInit(hdr, 3, 3, 1, 1, blockStart, oneHot, a, rowPtr, col, val);
  return changetype<PairwiseForm>(hdr);
}

function bits(b0: u8, b1: u8, b2: u8): usize {
  const s = heap.alloc(3);
  store<u8>(s, b0);
  store<u8>(s, b1, 1);
  store<u8>(s, b2, 2);
  return s;
}

describe('localField', () => {
  it('adds W only over set neighbours, so −∞ next to an unset bit is no NaN', () => {
    const m = tinyForm();
    expect(localField(m, bits(0, 0, 0), 0)).toBe(0.25);
    expect(localField(m, bits(0, 0, 1), 1)).toBe(-0.5);
    expect(localField(m, bits(0, 0, 0), 2)).toBe(2.0);
  });
  it('a set neighbour across a zero potential gives −∞', () => {
    const m = tinyForm();
    expect(localField(m, bits(0, 1, 0), 0)).toBe(-Infinity);
    expect(localField(m, bits(1, 0, 1), 1)).toBe(-Infinity);
  });
});
