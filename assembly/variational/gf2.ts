// Linear systems A x = b over GF(2), bit-packed: row r of [A | b] is `stride` u64 words at
// rows + r·stride·8, column c at bit (c & 63) of word c >> 6, b at column n. Bits past column n must
// be zero. `stride` is even (whole v128s), so rows XOR two words at a time.
//
// gf2Reduce brings the system to reduced row-echelon form C = [I | A′] up to a column permutation
// (Hsu et al. §2.2): processing the rows in order, each is first cleared of the pivot columns found
// so far; a row left with no bit among the n columns is dependent — dropped when its b bit is 0,
// and proof that the system has no solution when it is 1 (an empty projection); otherwise one of its
// columns becomes the row's pivot and is cleared from the earlier pivot rows. The pivot rows are
// compacted to rows 0 … rank−1, pivot columns to piv[0 … rank−1]; every pivot column then appears
// in its own row only, so x_{piv[l]} = b_l ⊕ ⊕_{c free} C_lc x_c.
//
// Pivot choice: any set bit is a correct pivot. With `avoid` (a bitmask of `stride` words, or 0)
// the first column not in `avoid` is preferred; with a graph (CSR rowPtr/col over the n columns,
// or rowPtr = 0) each new pivot and its neighbours are added to `avoid`, so pivots tend not to be
// adjacent — which keeps Proposition 1's pivot–pivot terms (assembly/mfrp.ts) rare.

@inline
export function gf2Bit(row: usize, c: i32): i32 {
  return <i32>((load<u64>(row + (<usize>(c >>> 6) << 3)) >>> (<u64>(c & 63))) & 1);
}

@inline
export function gf2SetBit(row: usize, c: i32): void {
  const p = row + (<usize>(c >>> 6) << 3);
  store<u64>(p, load<u64>(p) | (<u64>1 << <u64>(c & 63)));
}

/** dst ^= src over `stride` words (even). */
@inline
export function gf2Xor(dst: usize, src: usize, stride: i32): void {
  const end = dst + (<usize>stride << 3);
  let s = src;
  for (let d = dst; d < end; d += 16, s += 16) v128.store(d, v128.xor(v128.load(d), v128.load(s)));
}

/** First set column < n of row & ~avoid (avoid may be 0), or −1. */
function firstColumn(row: usize, avoid: usize, n: i32): i32 {
  const full = n >>> 6; // words entirely made of columns < n
  for (let w = 0; w < full; w++) {
    let x = load<u64>(row + (<usize>w << 3));
    if (avoid) x &= ~load<u64>(avoid + (<usize>w << 3));
    if (x) return (w << 6) + <i32>ctz(x);
  }
  const rem = n & 63;
  if (rem) {
    let x = load<u64>(row + (<usize>full << 3)) & ((<u64>1 << <u64>rem) - 1);
    if (avoid) x &= ~load<u64>(avoid + (<usize>full << 3));
    if (x) return (full << 6) + <i32>ctz(x);
  }
  return -1;
}

/**
 * Row-reduces the m × (n+1) system in place. Returns the rank r of A when the system is consistent,
 * and −(r + 1) when it has no solution. piv: i32[m], receives the pivot columns.
 */
export function gf2Reduce(rows: usize, m: i32, n: i32, stride: i32, piv: usize, avoid: usize, rowPtr: usize, col: usize): i32 {
  const rowBytes = <usize>stride << 3;
  let rank = 0;
  let consistent = true;
  for (let r = 0; r < m; r++) {
    const row = rows + <usize>r * rowBytes;
    for (let q = 0; q < rank; q++) {
      if (gf2Bit(row, load<i32>(piv + (<usize>q << 2)))) gf2Xor(row, rows + <usize>q * rowBytes, stride);
    }
    let c = avoid ? firstColumn(row, avoid, n) : -1;
    if (c < 0) c = firstColumn(row, 0, n);
    if (c < 0) {
      if (gf2Bit(row, n)) consistent = false; // 0 = 1: no solution
      continue; // 0 = 0: a dependent row, dropped
    }
    for (let q = 0; q < rank; q++) {
      const other = rows + <usize>q * rowBytes;
      if (gf2Bit(other, c)) gf2Xor(other, row, stride);
    }
    const dst = rows + <usize>rank * rowBytes;
    if (dst != row) memory.copy(dst, row, rowBytes);
    store<i32>(piv + (<usize>rank << 2), c);
    rank++;
    if (avoid) {
      gf2SetBit(avoid, c);
      if (rowPtr) {
        const end = load<i32>(rowPtr + (<usize>(c + 1) << 2));
        for (let k = load<i32>(rowPtr + (<usize>c << 2)); k < end; k++) gf2SetBit(avoid, load<i32>(col + (<usize>k << 2)));
      }
    }
  }
  return consistent ? rank : -(rank + 1);
}
