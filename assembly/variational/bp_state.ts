// The loopy-BP state header and the binary-pair message helpers shared by the general sweeps
// (bp.ts) and the log-odds / ratio sweeps (bp_odds.ts); see bp.ts for the memory layout.

@unmanaged
export class BPState {
  g: usize; // FactorGraph
  msgStart: usize; // i32[S + 1]
  incPos: usize; // i32[S]
  belStart: usize; // i32[n + 1]
  weight: usize; // f64[nFactors]
  fac2var: usize; // f64[M]
  var2fac: usize; // f64[M]
  newMsg: usize; // f64[M]; 0 until the general loop first runs (the log-odds path needs none)
  belief: usize; // f64[Σ card]
  scratchE: usize; // f64[max table size]
  scratchS: usize; // f64[max Σ card over one scope]
  digits: usize; // i32[max arity]
  pairIndex: usize; // i32[nFactors]: k for the k-th factor on two binary variables (factor order), else −1
  nPairs: i32;
  pairConst: usize; // f64[6 · nPairs]: binary pair constants (see pairConstants), NaN in slot 0 where not used
  // Residual schedule only, 0 until it first runs:
  prio: usize; // f64[nFactors]: the largest change of a factor's inputs since its last update
  heap: usize; // i32[nFactors]: factors of arity ≥ 2 in a max-heap by prio
  heapPos: usize; // i32[nFactors]
  heapSize: i32;
  odds: usize; // f64[bpOddsEntries]: the log-odds work memory of bp_odds.ts; 0 when some factor of arity ≥ 2 is no binary pair
  /** Set when every state of some message or belief became −∞ (no consistent configuration). */
  vanished: i32;
}

@inline function stF(p: usize, i: i32, x: f64): void { store<f64>(p + (<usize>i << 3), x); }

/**
 * The binary pair message m(1) − m(0) from the incoming log-odds ν = n(1) − n(0). A and B are e^a,
 * e^b with |a|, |b| ≤ 600 (pairConstants), so the ratio of the two sums leaves the normal range once
 * |a − b| passes ≈ 708: then the logs are taken apart (one log was ±∞, or imprecise when subnormal:
 * a field of 500 and a coupling of 250 gave NaN on two variables, and trees of couplings 190–300
 * converged to wrong marginals with no warning).
 */
@inline
export function pairDelta1(c: f64, A: f64, B: f64, nu: f64): f64 {
  let num: f64, den: f64;
  if (nu <= 0.0) {
    const t = Math.exp(nu);
    num = 1.0 + A * t;
    den = 1.0 + B * t;
  } else {
    const t = Math.exp(-nu);
    num = t + A;
    den = t + B;
  }
  const q = num / den;
  if (q >= 2.2250738585072014e-308 && q < Infinity) return c + Math.log(q);
  return c + (Math.log(num) - Math.log(den));
}

/** Writes the two-state log-message (0, δ) shifted to max 0. */
@inline
export function storeDelta(out: usize, d: f64): void {
  if (d > 0.0) {
    stF(out, 0, -d);
    stF(out, 1, 0.0);
  } else {
    stF(out, 0, 0.0);
    stF(out, 1, d);
  }
}
