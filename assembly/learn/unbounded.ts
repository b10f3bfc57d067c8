// State and pair counts of the data for learning's no-maximum warnings (bindings/learn/unbounded.ts):
// each visible bit's column as a bitset over the rows; a column's count of rows with its bit on is
// its popcount, a pair's count of rows with both bits on the popcount of the two columns' AND —
// words of 64 rows, not one multiply-add per row and pair.

/** u64 words of a column bitset over `rows` rows. */
export function learnColumnWords(rows: i32): i32 {
  return (rows + 63) >>> 6;
}

/**
 * Column bitsets of `rows` data rows of `bits` bits (u8 each, row r at data + r·bits): column q's
 * rows at columns + q·W·8, W = learnColumnWords(rows), bit r of word r >> 6 set when row r has it on.
 */
export function learnColumnBits(data: usize, rows: i32, bits: i32, columns: usize): void {
  const W = learnColumnWords(rows);
  memory.fill(columns, 0, <usize>bits * <usize>W * 8);
  for (let r = 0; r < rows; r++) {
    const row = data + <usize>r * <usize>bits, wordAt = <usize>(r >>> 6) << 3, bit = <u64>1 << <u64>(r & 63);
    for (let q = 0; q < bits; q++) {
      if (load<u8>(row + <usize>q) != 0) {
        const p = columns + <usize>q * <usize>W * 8 + wordAt;
        store<u64>(p, load<u64>(p) | bit);
      }
    }
  }
}

/** Each column's rows with its bit on (popcount of its bitset), into out (f64 per column). */
export function learnColumnCounts(columns: usize, rows: i32, bits: i32, out: usize): void {
  const stride = <usize>learnColumnWords(rows) * 8;
  for (let q = 0; q < bits; q++) {
    const a = columns + <usize>q * stride;
    let n: u64 = 0;
    for (let w: usize = 0; w < stride; w += 8) n += popcnt<u64>(load<u64>(a + w));
    store<f64>(out + (<usize>q << 3), <f64>n);
  }
}

/**
 * For each of `count` unit pairs (i32 u, v at pairs + 8k) and each pair of their states (s, t), s, t
 * < width (a unit's bits: 1 for binary units, K one-hot bits for Potts), the rows with bits
 * u·width + s and v·width + t both on, into out at (k·width + s)·width + t (f64).
 */
export function learnPairCounts(columns: usize, rows: i32, pairs: usize, count: i32, width: i32, out: usize): void {
  const W = learnColumnWords(rows), stride = <usize>W * 8;
  let at: usize = out;
  for (let k = 0; k < count; k++) {
    const u = load<i32>(pairs + (<usize>k << 3)), v = load<i32>(pairs + (<usize>k << 3), 4);
    for (let s = 0; s < width; s++) {
      const a = columns + <usize>(u * width + s) * stride;
      for (let t = 0; t < width; t++) {
        const b = columns + <usize>(v * width + t) * stride;
        let n: u64 = 0;
        for (let w: usize = 0; w < stride; w += 8) n += popcnt<u64>(load<u64>(a + w) & load<u64>(b + w));
        store<f64>(at, <f64>n);
        at += 8;
      }
    }
  }
}
