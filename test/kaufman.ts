// Exact log Z of the ferromagnetic 2-D Ising model on an m × n torus (periodic in both directions),
// p(σ) ∝ exp(K Σ_bonds σ_i σ_j), σ ∈ {−1, +1}^{mn}, zero field — B. Kaufman, "Crystal Statistics. II.
// Partition Function Evaluated by Spinor Analysis", Phys. Rev. 76, 1232 (1949), eq. (39)–(41):
//
//   Z = ½ (2 sinh 2K)^{mn/2} (Z₁ + Z₂ + Z₃ + Z₄),
//   Z₁ = Π_{r=0}^{n−1} 2 cosh(m γ_{2r+1}/2),   Z₂ = Π 2 sinh(m γ_{2r+1}/2),
//   Z₃ = Π_{r=0}^{n−1} 2 cosh(m γ_{2r}/2),     Z₄ = Π 2 sinh(m γ_{2r}/2),
//   cosh γ_k = cosh 2K coth 2K − cos(πk/n)  (k ≥ 1, γ_k > 0),    γ₀ = 2K + ln tanh K  (signed:
//   negative above the critical temperature, which makes Z₄ negative there).
//
// m is the number of rows (the transfer direction), n the number of columns. Checked against a
// transfer-matrix computation (below) on small tori in test/kaufman.test.ts.

function logAbsCosh(x: number): number {
  const a = Math.abs(x);
  return a + Math.log1p(Math.exp(-2 * a)) - Math.LN2;
}

/** log|sinh x| and its sign. */
function logSinh(x: number): { log: number; sign: number } {
  const a = Math.abs(x);
  return { log: a + Math.log(-Math.expm1(-2 * a)) - Math.LN2, sign: Math.sign(x) };
}

export function kaufmanLogZ(K: number, m: number, n: number = m): number {
  if (!(K > 0)) throw new Error('kaufmanLogZ: K must be > 0');
  const gamma = (k: number): number => {
    if (k === 0) return 2 * K + Math.log(Math.tanh(K));
    const c = Math.cosh(2 * K) / Math.tanh(2 * K) - Math.cos((Math.PI * k) / n);
    return Math.acosh(c);
  };
  // Each Z_i as (log |Z_i|, sign).
  const terms: { log: number; sign: number }[] = [];
  for (const odd of [1, 0]) {
    let lc = 0, ls = 0, sign = 1;
    for (let r = 0; r < n; r++) {
      const g = gamma(2 * r + odd);
      lc += Math.LN2 + logAbsCosh((m * g) / 2);
      const sh = logSinh((m * g) / 2);
      ls += Math.LN2 + sh.log;
      sign *= sh.sign;
    }
    terms.push({ log: lc, sign: 1 }, { log: ls, sign });
  }
  const top = Math.max(...terms.map((t) => t.log));
  let s = 0;
  for (const t of terms) if (t.sign !== 0) s += t.sign * Math.exp(t.log - top);
  return -Math.LN2 + ((m * n) / 2) * Math.log(2 * Math.sinh(2 * K)) + top + Math.log(s);
}

/**
 * log Z of the same model by the row-to-row transfer matrix: Z = Tr(T^m), T(σ, σ') =
 * exp(K Σ_j σ_j σ_{j+1} + K Σ_j σ_j σ'_j) over rows σ ∈ {±1}^n (periodic). For n ≤ 10 or so.
 */
export function transferMatrixLogZ(K: number, m: number, n: number = m): number {
  const S = 1 << n;
  const spin = (c: number, j: number) => ((c >> j) & 1 ? 1 : -1);
  const T = new Float64Array(S * S);
  for (let c = 0; c < S; c++) {
    let h = 0;
    for (let j = 0; j < n; j++) h += spin(c, j) * spin(c, (j + 1) % n);
    for (let d = 0; d < S; d++) {
      let v = 0;
      for (let j = 0; j < n; j++) v += spin(c, j) * spin(d, j);
      T[c * S + d] = Math.exp(K * (h + v));
    }
  }
  // P = T^m by repeated multiplication, rescaled to stay finite.
  let P = T.slice();
  let logScale = 0;
  for (let step = 1; step < m; step++) {
    const Q = new Float64Array(S * S);
    for (let i = 0; i < S; i++)
      for (let k = 0; k < S; k++) {
        const a = P[i * S + k];
        if (a === 0) continue;
        for (let j = 0; j < S; j++) Q[i * S + j] += a * T[k * S + j];
      }
    let mx = 0;
    for (const x of Q) mx = Math.max(mx, x);
    for (let i = 0; i < Q.length; i++) Q[i] /= mx;
    logScale += Math.log(mx);
    P = Q;
  }
  let tr = 0;
  for (let i = 0; i < S; i++) tr += P[i * S + i];
  return logScale + Math.log(tr);
}

/** Onsager's critical coupling K_c = ½ ln(1 + √2). */
export const K_CRITICAL = 0.5 * Math.log(1 + Math.SQRT2);
