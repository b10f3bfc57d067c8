// The canonical binary pairwise form as the kernels see it (see bindings/canonical.ts): a header
// of pointers into arena memory, written by the TypeScript side once per model.

@unmanaged
export class PairwiseForm {
  nBlocks: i32;
  nBits: i32;
  /** 1 when every block is a single free bit: the kernels take their fast path. */
  allFree: i32;
  maxBlock: i32;
  blockStart: usize; // i32[nBlocks + 1]
  oneHot: usize; // u8[nBlocks]
  a: usize; // f64[nBits]
  rowPtr: usize; // i32[nBits + 1]
  col: usize; // i32[nnz]
  val: usize; // f64[nnz]
}

export function pairwiseFormBytes(): usize {
  return offsetof<PairwiseForm>();
}

/**
 * Local field of bit p: a_p + Σ_j W_pj s_j over set neighbours only, adding W_pj where s_j = 1 and
 * +0.0 where s_j = 0 — a mask rather than a product, because W may hold −∞ (a zero potential) and
 * −∞ · 0 is NaN. The mask is applied to W's bits with an integer AND: a float `select` compiles to
 * a branch on s_j, which mispredicts about as often as the neighbours' states are random.
 */
@inline
export function localField(m: PairwiseForm, s: usize, p: i32): f64 {
  let u = load<f64>(m.a + (<usize>p << 3));
  const end = load<i32>(m.rowPtr + (<usize>(p + 1) << 2));
  for (let k = load<i32>(m.rowPtr + (<usize>p << 2)); k < end; k++) {
    const j = load<i32>(m.col + (<usize>k << 2));
    const mask = -<i64>(load<u8>(s + <usize>j) != 0); // all ones where s_j = 1
    u += reinterpret<f64>(load<i64>(m.val + (<usize>k << 3)) & mask);
  }
  return u;
}

/** Fills a header (the bindings own its memory and every array it points to). */
export function pairwiseFormInit(
  hdr: usize, nBlocks: i32, nBits: i32, allFree: i32, maxBlock: i32,
  blockStart: usize, oneHot: usize, a: usize, rowPtr: usize, col: usize, val: usize,
): void {
  const m = changetype<PairwiseForm>(hdr);
  m.nBlocks = nBlocks;
  m.nBits = nBits;
  m.allFree = allFree;
  m.maxBlock = maxBlock;
  m.blockStart = blockStart;
  m.oneHot = oneHot;
  m.a = a;
  m.rowPtr = rowPtr;
  m.col = col;
  m.val = val;
}
