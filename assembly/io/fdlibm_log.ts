// ln x as V8's Math.log computes it: fdlibm's e_log.c (V8's src/base/ieee754.cc), the same IEEE
// operations in the same order (WASM contracts nothing into an FMA), so the engine's reader gives a
// table entry the log-potential the TypeScript reader gives it, bit for bit (test/decimal.test.ts
// checks it against Math.log). AssemblyScript's Math.log (musl's table-driven log) differs from it
// in the last bit for some inputs.

const LN2_HI: f64 = 6.93147180369123816490e-01;
const LN2_LO: f64 = 1.90821492927058770002e-10;
const TWO54: f64 = 1.80143985094819840000e16;
const LG1: f64 = 6.666666666666735130e-01;
const LG2: f64 = 3.999999999940941908e-01;
const LG3: f64 = 2.857142874366239149e-01;
const LG4: f64 = 2.222219843214978396e-01;
const LG5: f64 = 1.818357216161805012e-01;
const LG6: f64 = 1.531383769920937332e-01;
const LG7: f64 = 1.479819860511658591e-01;

/** ln x, bit for bit V8's Math.log (−∞ at ±0, NaN below 0, x at +∞ and NaN). */
export function fdlibmLog(x: f64): f64 {
  let bits = reinterpret<u64>(x);
  let hx = <i32>(bits >> 32);
  let k = 0;
  if (hx < 0x00100000) {
    // Below 2^−1022: zero, negative or subnormal (scaled up).
    if (((hx & 0x7fffffff) | <i32>(<u32>bits)) == 0) return -Infinity;
    if (hx < 0) return NaN;
    k -= 54;
    x *= TWO54;
    bits = reinterpret<u64>(x);
    hx = <i32>(bits >> 32);
  }
  if (hx >= 0x7ff00000) return x + x;
  k += (hx >> 20) - 1023;
  hx &= 0x000fffff;
  let i = (hx + 0x95f64) & 0x100000;
  // x or x/2 normalised into [√2/2, √2).
  x = reinterpret<f64>((<u64>(<u32>(hx | (i ^ 0x3ff00000))) << 32) | (bits & 0xffffffff));
  k += i >> 20;
  const f = x - 1.0;
  if ((0x000fffff & (2 + hx)) < 3) {
    // |f| < 2^−20.
    if (f == 0.0) {
      if (k == 0) return 0.0;
      const dk = <f64>k;
      return dk * LN2_HI + dk * LN2_LO;
    }
    const R = f * f * (0.5 - 0.33333333333333333 * f);
    if (k == 0) return f - R;
    const dk = <f64>k;
    return dk * LN2_HI - ((R - dk * LN2_LO) - f);
  }
  const s = f / (2.0 + f);
  const dk = <f64>k;
  const z = s * s;
  i = hx - 0x6147a;
  const w = z * z;
  const j = 0x6b851 - hx;
  const t1 = w * (LG2 + w * (LG4 + w * LG6));
  const t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
  i |= j;
  const R = t2 + t1;
  if (i > 0) {
    const hfsq = 0.5 * f * f;
    if (k == 0) return f - (hfsq - s * (hfsq + R));
    return dk * LN2_HI - ((hfsq - (s * (hfsq + R) + dk * LN2_LO)) - f);
  }
  if (k == 0) return f - s * (f - R);
  return dk * LN2_HI - ((s * (f - R) - dk * LN2_LO) - f);
}

/** fdlibmLog over n doubles in place (tests: against Math.log). */
export function fdlibmLogs(ptr: usize, n: i32): void {
  for (let i = 0; i < n; i++) {
    const at = ptr + (<usize>i << 3);
    store<f64>(at, fdlibmLog(load<f64>(at)));
  }
}
