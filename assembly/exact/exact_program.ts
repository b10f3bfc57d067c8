// A junction-tree pass as one kernel call: the binding (bindings/exact/elimination.ts) records its
// table operations, normalisations and checks as a program of i32 words, and elimProgramRun runs
// them in order. On a chain or a thin strip each clique's tables have a handful of entries, so one
// call per operation cost far more than the operation; a program is flushed only when its buffer fills.
//
// Ops (i32 words; pointers are byte addresses):
//   TABLE   [1, mode, out, a, b, nd, len[nd], so[nd], sa[nd], sb[nd], counter[nd]]   elimTableOp(mode 0|1)
//   REDUCE  [2, outSize, out, a, b, nd, …as TABLE]   out = Σ A·B (mode 3; where the kernel cannot, out
//           zeroed then mode 1); sets the `known` register to the largest entry when that pass knows it, else −1
//           (and `knownMin` to its smallest)
//   SCALE   [3, p, n, bits, useKnown, check]   m = elimScaleBy(known) if useKnown and known ≠ −1, else
//           elimMaxScale; m is the next result; its `lows` pair: the table's smallest positive entry
//           before the scaling, negated if it has zeros, and its largest (elimTableRange or what a reduce knew);
//           stops when the check fails (CHECK_*)
//   EXPSHIFT [4, p, n]   m = elimExpShift; the next result; stops when m = −∞
//   ROWNORM [5, p, rows, rs, cols, cs, rowLog]   elimRowNormalise
//   SUPPORT [6, p, n]   elimSupport
//   DIVIDE  [7, out, den, n]   elimDivide
//   FILL0   [8, p, n]   n zeros
// The `known` register lives across calls, so a program may be cut between any two ops.

import { elimTableOp, elimWrittenMin, elimTableRange, elimTableLow, elimScaleBy, elimExpShift, elimRowNormalise, elimSupport, elimDivide, elimFill } from './exact_elim';

const OP_TABLE = 1, OP_REDUCE = 2, OP_SCALE = 3, OP_EXPSHIFT = 4, OP_ROWNORM = 5, OP_SUPPORT = 6, OP_DIVIDE = 7, OP_FILL0 = 8;
/** SCALE checks: stop on m ≤ 0, NaN or ∞ (an upward λ, a μ); stop on NaN or ∞ only (a recomputed λ). */
const CHECK_POSITIVE = 1, CHECK_FINITE = 2;

let known: f64 = -1;
let knownMin: f64 = 0; // with `known`: the smallest entry (elimWrittenMin)

/**
 * Runs `words` i32 words of ops at `prog`, writing each SCALE's and EXPSHIFT's m to `results` (f64,
 * in op order) and a SCALE's table's smallest positive entry (negated if it has zeros:
 * elimTableRange) and largest entry, both before the scaling, to `lows` (f64 pairs) at the same
 * index (EXPSHIFT: 0, 0).
 * Returns −1 when every op ran, else the index of the result whose check stopped the run (that
 * result is written; nothing after it runs).
 */
export function elimProgramRun(prog: usize, words: i32, results: usize, lows: usize): i32 {
  const end = prog + (<usize>words << 2);
  let p = prog;
  let r: i32 = 0;
  while (p < end) {
    const op = load<i32>(p);
    if (op == OP_TABLE || op == OP_REDUCE) {
      const desc = p + 20;
      const nd = load<i32>(desc);
      const out = <usize>load<u32>(p + 8), a = <usize>load<u32>(p + 12), b = <usize>load<u32>(p + 16);
      if (op == OP_TABLE) elimTableOp(desc, out, a, b, load<i32>(p + 4));
      else {
        const m = elimTableOp(desc, out, a, b, 3);
        if (m == -2) known = -1;
        else if (m != -1) {
          known = m;
          knownMin = elimWrittenMin();
        }
        else {
          elimFill(out, load<i32>(p + 4), 0);
          elimTableOp(desc, out, a, b, 1);
          known = -1;
        }
      }
      p = desc + (<usize>(1 + 5 * nd) << 2);
    } else if (op == OP_SCALE) {
      const q = <usize>load<u32>(p + 4), n = load<i32>(p + 8), bits = load<i32>(p + 12);
      const k = load<i32>(p + 16) != 0 ? known : -1;
      // Read before the scaling: an entry the division pushes below the normal range still counts.
      // The reduce knew the smallest entry; where that is 0 the smallest positive one takes a pass.
      const mx = k == -1 || !(knownMin > 0) ? elimTableRange(q, n) : k;
      store<f64>(lows + (<usize>r << 4), k == -1 || !(knownMin > 0) ? elimTableLow() : knownMin);
      store<f64>(lows + (<usize>r << 4) + 8, mx);
      const m = elimScaleBy(q, n, mx, bits);
      store<f64>(results + (<usize>r << 3), m);
      const check = load<i32>(p + 20);
      if (check == CHECK_POSITIVE && (!(m > 0) || m == Infinity)) return r;
      if (check == CHECK_FINITE && (isNaN(m) || m == Infinity)) return r;
      r++;
      p += 24;
    } else if (op == OP_EXPSHIFT) {
      const m = elimExpShift(<usize>load<u32>(p + 4), load<i32>(p + 8));
      store<f64>(results + (<usize>r << 3), m);
      store<f64>(lows + (<usize>r << 4), 0);
      store<f64>(lows + (<usize>r << 4) + 8, 0);
      if (m == -Infinity) return r;
      r++;
      p += 12;
    } else if (op == OP_ROWNORM) {
      elimRowNormalise(<usize>load<u32>(p + 4), load<i32>(p + 8), load<i32>(p + 12), load<i32>(p + 16), load<i32>(p + 20), <usize>load<u32>(p + 24));
      p += 28;
    } else if (op == OP_SUPPORT) {
      elimSupport(<usize>load<u32>(p + 4), load<i32>(p + 8));
      p += 12;
    } else if (op == OP_DIVIDE) {
      elimDivide(<usize>load<u32>(p + 4), <usize>load<u32>(p + 8), load<i32>(p + 12));
      p += 16;
    } else if (op == OP_FILL0) {
      elimFill(<usize>load<u32>(p + 4), load<i32>(p + 8), 0);
      p += 12;
    } else {
      abort('elimProgramRun: bad op');
      return -1;
    }
  }
  return -1;
}
