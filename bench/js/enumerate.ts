// Plain-JS reference of the WASM enumeration kernel (assembly/exact/exact_enum.ts), for
// bench/enumeration.ts: the same Gray-code walk over the digits, the same per-factor entry updates,
// zero counting, running shift, blocks and compensated sums, on the same flat arrays.

export interface EnumArrays {
  n: number;
  card: Int32Array;
  scopeStart: Int32Array;
  scopeVars: Int32Array;
  scopeStride: Int32Array;
  tableStart: Int32Array;
  tables: Float64Array;
  incStart: Int32Array;
  incFactor: Int32Array;
  incStride: Int32Array;
  /** Digits (fastest first) and the block's size; every factor is listed. */
  digits: Int32Array;
  nb: number;
}

/** log Σ_x exp(Σ_f θ_f(x)) and the digits' marginals (flat, variable v at off[v]). */
export function enumerateJS(a: EnumArrays): { logZ: number; marg: Float64Array } {
  const { n, card, scopeStart, scopeVars, scopeStride, tableStart, tables, incStart, incFactor, incStride, digits, nb } = a;
  const nd = digits.length, F = tableStart.length;
  const off = new Int32Array(n);
  let entries = 0;
  for (let v = 0; v < n; v++) (off[v] = entries), (entries += card[v]);
  const x = new Int32Array(n), dir = new Int32Array(nd).fill(1), entry = new Int32Array(F);
  const marg = new Float64Array(entries), margC = new Float64Array(entries), acc = new Float64Array(entries), start = new Float64Array(n);
  let M = -Infinity, S = 0, Sc = 0;
  const kadd = (s: Float64Array, c: Float64Array, i: number, v: number): void => {
    const t = s[i] + v;
    c[i] += Math.abs(s[i]) >= Math.abs(v) ? s[i] - t + v : v - t + s[i];
    s[i] = t;
  };
  for (;;) {
    let phi = 0, z = 0;
    for (let f = 0; f < F; f++) {
      let e = tableStart[f];
      for (let p = scopeStart[f]; p < scopeStart[f + 1]; p++) e += x[scopeVars[p]] * scopeStride[p];
      entry[f] = e;
      const t = tables[e];
      if (t === -Infinity) z++;
      else phi += t;
    }
    let sb = 0;
    for (let j = 0; j < nb; j++) {
      const v = digits[j];
      start[v] = 0;
      acc.fill(0, off[v], off[v] + card[v]);
    }
    let j = 0;
    for (;;) {
      if (z === 0) {
        if (phi > M + 600) {
          if (M !== -Infinity) {
            const r = Math.exp(M - phi);
            for (let q = 0; q < nb; q++) {
              const v = digits[q];
              start[v] *= r;
              for (let t = 0; t < card[v]; t++) acc[off[v] + t] *= r;
            }
            for (let q = 0; q < nd; q++) {
              const v = digits[q];
              for (let t = 0; t < card[v]; t++) (marg[off[v] + t] *= r), (margC[off[v] + t] *= r);
            }
            S *= r;
            Sc *= r;
            sb *= r;
          }
          M = phi;
        }
        sb += Math.exp(phi - M);
      }
      j = 0;
      while (j < nd) {
        const v = digits[j], nx = x[v] + dir[j];
        if (nx >= 0 && nx < card[v]) break;
        dir[j] = -dir[j];
        j++;
      }
      if (j >= nb) break;
      const u = digits[j], old = x[u], d = dir[j], ou = off[u];
      acc[ou + old] += sb - start[u];
      start[u] = sb;
      for (let q = incStart[u]; q < incStart[u + 1]; q++) {
        const f = incFactor[q], i0 = entry[f], i1 = i0 + d * incStride[q];
        entry[f] = i1;
        const t0 = tables[i0], t1 = tables[i1];
        if (t0 === -Infinity) z--;
        else phi -= t0;
        if (t1 === -Infinity) z++;
        else phi += t1;
      }
      x[u] = old + d;
    }
    for (let q = 0; q < nb; q++) {
      const v = digits[q];
      acc[off[v] + x[v]] += sb - start[v];
      for (let t = 0; t < card[v]; t++) kadd(marg, margC, off[v] + t, acc[off[v] + t]);
    }
    for (let q = nb; q < nd; q++) kadd(marg, margC, off[digits[q]] + x[digits[q]], sb);
    const t = S + sb;
    Sc += Math.abs(S) >= Math.abs(sb) ? S - t + sb : sb - t + S;
    S = t;
    if (j >= nd) break;
    x[digits[j]] += dir[j];
  }
  const total = S + Sc;
  for (let i = 0; i < entries; i++) marg[i] = (marg[i] + margC[i]) / total;
  return { logZ: M + Math.log(total), marg };
}
