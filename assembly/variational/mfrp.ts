// Mean field with random XOR projections (MFRP; Hsu, Achim & Ermon, AISTATS 2016, Algorithm 1) on
// an all-free-bit canonical form: x ∈ {0,1}^n, log p̃(x) = aᵀx + ½ xᵀWx (+ logZOffset, added by TS).
//
// One projection: A ∈ {0,1}^{m×n}, b ∈ {0,1}^m drawn from the stream, row-reduced (assembly/gf2.ts)
// to rank r pivot rows x_{p_l} = b_l ⊕ ⊕_{f ∈ S_l} x_f over free variables f (S_l ⊆ free columns),
// or found inconsistent (the projected model is empty: γ = 0, log γ = −∞). Dependent rows are
// dropped, but the caller still rescales by 2^m (not 2^r): E_{A,b}[Z(A,b)] = 2^{−m} Z holds for every
// A because b is uniform, and that is what Theorem 1 uses.
//
// The family: q(x) = Π_{f free} Bernoulli(μ_f) · Π_l 1{x_{p_l} = b_l ⊕ ⊕_{S_l} x_f}; the bound
//   F(μ) = E_q[aᵀx + ½ xᵀWx] + Σ_{f free} H(μ_f)  ≤  log Z(A, b)                          (Hsu (11))
//
// ---------------------------------------------------------------------------------------------
// Proposition 1, re-derived (the OCR'd text repeats one term of the pivot–pivot formula a dozen
// times and loses its structure; its other formulas are right up to notation).
//
// Work in spins y = 1 − 2x ∈ {±1}. Under q the free spins are independent with E[y_f] = m_f = 1 − 2μ_f,
// and each pivot spin is a signed product of free spins: y_{p_l} = σ_l Π_{f ∈ S_l} y_f, σ_l = 1 − 2b_l
// (Hsu eq. 6). Since y_f² = 1, every product of spins is σ · Π_{f ∈ S} y_f for one set S, whose
// expectation is σ · Π_{f ∈ S} m_f. With P(S) = Π_{f ∈ S} m_f and x_i x_j = ¼(1 − y_i − y_j + y_i y_j):
//   singletons  free f:     μ_f;
//               pivot p_l:  μ_{p_l} = ½ (1 − σ_l P(S_l));                                   (Hsu ✓)
//   pairs       free f, g:  μ_f μ_g;
//               free f, pivot p_l, f ∉ S_l:  μ_f μ_{p_l};
//               free f, pivot p_l, f ∈ S_l:  E[y_f y_{p_l}] = σ_l P(S_l ∖ f), so
//                   μ_{f p_l} = ¼ (1 − m_f − σ_l P(S_l) + σ_l P(S_l ∖ f)) = μ_f · ½ (1 + σ_l P(S_l ∖ f))
//                   (Hsu's form: given x_f = 1 the parity flips, so x_{p_l} = 1 has probability
//                   ½(1 + σ_l P(S_l ∖ f)));                                                  (Hsu ✓)
//               pivots p_k, p_l:  E[y_{p_k} y_{p_l}] = σ_k σ_l P(S_k Δ S_l), so
//                   μ_{p_k p_l} = ¼ (1 − σ_k P(S_k) − σ_l P(S_l) + σ_k σ_l P(S_k Δ S_l)).
//   Hsu's garbled line ends in (1−2b_k)(1−2b_l) Π (1 − μ_i(2C_ki + 2C_li − 4C_ki C_li)): that is
//   σ_k σ_l P(S_k Δ S_l), since 2C_k + 2C_l − 4C_k C_l = 2 (C_k ⊕ C_l); its first terms should read
//   ¼(1 − σ_k P(S_k) − σ_l P(S_l) + …) — the OCR'd "+ ½(1 − (1−2b_k) Π …)" repeated is not it.
// Every marginal is affine in each m_f (each set contains f at most once), which is Hsu's
// Proposition 2: F is concave in each free μ_f, and the coordinate maximiser is μ_f = σ(g_f) with
// g_f = ∂E_q[energy]/∂μ_f = −2 ∂E_q[energy]/∂m_f.
// Other slips in the paper: Algorithm 1's inner loop writes "μ_k ← (1 − Π …)/2" for the constrained
// update where it means μ_l (the l-th constrained marginal), and assumes wlog that A's first m
// columns are the pivots and that A has full rank; here pivots are any columns (see gf2.ts) and rank
// deficiency is handled as above.
// ---------------------------------------------------------------------------------------------
//
// Energy in spin form: aᵀx + ½xᵀWx = c + Σ_i h_i y_i + Σ_{i<j} J_ij y_i y_j with J = W/4,
// h_i = −a_i/2 − Σ_j W_ij/4, c = Σ a_i/2 + Σ_{i<j} W_ij/4. Then
//   ∂E/∂m_k = h_k + Σ_{j ~ k} J_kj · (m_j if j free; σ_l P(S_l) if j = p_l with k ∉ S_l; 0 if k ∈ S_l)
//           + Σ_{l: k ∈ S_l} σ_l [ h_{p_l} P(S_l∖k) + Σ_{j ~ p_l, j free, j ≠ k} J · (P(S_l∖{j,k}) if j ∈ S_l,
//                                                                              P(S_l∖k) m_j otherwise) ]
//           + Σ_{pivot–pivot edges (p_a, p_b): k ∈ S_a Δ S_b} J σ_a σ_b P((S_a Δ S_b) ∖ k).
// Cost per coordinate: the graph degree, plus per constraint containing k one exp and the pivot's
// degree — O(m) extra, so a sweep costs O(|E| + m n): linear in m (Hsu Fig. 3).
//
// Products P(S) of up to n factors |m_f| ≤ 1 would underflow; each set keeps (L = Σ log|m_f| over its
// nonzero factors, sign, number of zero factors), so P(S ∖ X) = 0 if a zero is left, else
// sign · exp(L − Σ_X log|m|) with an exponent ≤ 0: never exp of a large number. These sums are
// updated per coordinate and rebuilt from scratch at every sweep (no drift).
//
// Layout for speed: besides the rows (bit sets S_l), each free variable has a bit mask of the rows
// containing it (colMask), so a coordinate visits exactly those rows; each row lists its pivot's free
// neighbours with J and a flag "in S_l" (pn*); the per-set sums are branch-free (log|m| is stored as
// 0 for m = 0, signs as a parity bit).

import { PairwiseForm } from '../core/pairwise';
import { Philox, PHILOX_BYTES, next32, uniform } from '../core/rng';
import { gf2Reduce, gf2Bit } from './gf2';

@unmanaged
export class Mfrp {
  form: usize; // PairwiseForm, allFree
  n: i32;
  stride: i32; // u64 words per row (even), covering columns 0 … n (b at column n)
  mCap: i32;
  t5Cap: i32;
  pnCap: i32;
  cw: i32; // u64 words per column mask: ceil(mCap / 64)
  rank: i32;
  /** 1 when Ax = b has solutions, 0 when it is inconsistent. */
  status: i32;
  t5n: i32;
  /** Experiment switches (MFRP_LEFTMOST_PIVOTS, MFRP_PER_SWEEP); 0 = the defaults. */
  variant: i32;
  rows: usize; // u64[mCap · stride]: after reduction, row l holds S_l only (pivot and b bits cleared)
  piv: usize; // i32[mCap]
  rowOf: usize; // i32[n]: the pivot row of a variable, −1 when free
  sig: usize; // f64[mCap]: σ_l = 1 − 2 b_l
  L: usize; // f64[mCap]: Σ log|m_f| over S_l
  N: usize; // i32[mCap]: parity of the negative m_f in S_l
  Z: usize; // i32[mCap]: number of zero m_f in S_l
  colMask: usize; // u64[n · cw]: rows containing each free variable
  pnStart: usize; // i32[mCap + 1]
  pnIdx: usize; // i32[pnCap]: free neighbours of each row's pivot
  pnJ: usize; // f64[pnCap]: their couplings J = W/4
  pnIn: usize; // i32[pnCap]: 1 when the neighbour is in S_l
  t5bits: usize; // u64[t5Cap · stride]: S_a Δ S_b of each pivot–pivot edge
  t5J: usize; // f64[t5Cap]: J σ_a σ_b
  t5L: usize; // f64[t5Cap]
  t5N: usize; // i32[t5Cap]
  t5Z: usize; // i32[t5Cap]
  h: usize; // f64[n]: spin-form fields
  mu: usize; // f64[n]
  mm: usize; // f64[n]: m_f = 1 − 2μ_f (free variables), never −0
  mm0: usize; // f64[n]: m_f at the start of the sweep (MFRP_PER_SWEEP only)
  lm: usize; // f64[n]: log|m_f| (0 where m_f = 0)
  ent: usize; // f64[n]: H(μ_f) (free variables)
  avoid: usize; // u64[stride]
  rng: usize; // Philox
  scratch: usize; // u64[stride] + 32 bytes
  c: f64; // spin-form constant
}

/**
 * Experiment switches (bench/mfrp.ts reads Hsu et al. literally with them; not user options):
 * MFRP_LEFTMOST_PIVOTS — each row's pivot is its first set column, as in the paper's C = [I | A′],
 * instead of preferring pivots not adjacent to earlier ones (same solution set, another family q);
 * MFRP_PER_SWEEP — Algorithm 1 with its "update constrained marginals" loop after the sweep: every
 * product over a row's free set (constrained singletons, and the pairs through Proposition 1) is
 * taken at the free marginals of the sweep's start, free–free terms at the current ones. That is no
 * longer exact coordinate ascent, so the bound is evaluated from scratch after each sweep.
 */
export const MFRP_LEFTMOST_PIVOTS: i32 = 1;
export const MFRP_PER_SWEEP: i32 = 2;

@inline function f64At(p: usize, i: i32): f64 { return load<f64>(p + (<usize>i << 3)); }
@inline function f64Set(p: usize, i: i32, x: f64): void { store<f64>(p + (<usize>i << 3), x); }
@inline function i32At(p: usize, i: i32): i32 { return load<i32>(p + (<usize>i << 2)); }
@inline function i32Set(p: usize, i: i32, x: i32): void { store<i32>(p + (<usize>i << 2), x); }
@inline function rowAt(st: Mfrp, l: i32): usize { return st.rows + (<usize>l * <usize>st.stride << 3); }
@inline function t5At(st: Mfrp, t: i32): usize { return st.t5bits + (<usize>t * <usize>st.stride << 3); }
@inline function align16(x: usize): usize { return (x + 15) & ~(<usize>15); }

/** u64 words per row for n variables (columns 0 … n), rounded up to whole v128s. */
export function mfrpStride(n: i32): i32 {
  return (((n + 1 + 63) >>> 6) + 1) & ~1;
}

/**
 * Bytes of one state block (header and every array) for n variables, mCap rows, t5Cap pivot–pivot
 * edges and pnCap pivot-neighbour slots (Σ of the pivots' degrees: mCap · max degree suffices).
 */
export function mfrpStateBytes(n: i32, mCap: i32, t5Cap: i32, pnCap: i32): usize {
  return layout(0, n, mCap, t5Cap, pnCap);
}

/** Lays the arrays out after the header at `base` (when base ≠ 0, writes the pointers); returns the size. */
function layout(base: usize, n: i32, mCap: i32, t5Cap: i32, pnCap: i32): usize {
  const stride = <usize>mfrpStride(n);
  const N = <usize>max(n, 1), M = <usize>max(mCap, 1), T = <usize>max(t5Cap, 1), P = <usize>max(pnCap, 1);
  const cw = (M + 63) >> 6;
  let p = align16(offsetof<Mfrp>());
  const rows = p; p = align16(p + M * stride * 8);
  const piv = p; p = align16(p + M * 4);
  const rowOf = p; p = align16(p + N * 4);
  const sig = p; p = align16(p + M * 8);
  const L = p; p = align16(p + M * 8);
  const Nn = p; p = align16(p + M * 4);
  const Z = p; p = align16(p + M * 4);
  const colMask = p; p = align16(p + N * cw * 8);
  const pnStart = p; p = align16(p + (M + 1) * 4);
  const pnIdx = p; p = align16(p + P * 4);
  const pnJ = p; p = align16(p + P * 8);
  const pnIn = p; p = align16(p + P * 4);
  const t5bits = p; p = align16(p + T * stride * 8);
  const t5J = p; p = align16(p + T * 8);
  const t5L = p; p = align16(p + T * 8);
  const t5N = p; p = align16(p + T * 4);
  const t5Z = p; p = align16(p + T * 4);
  const h = p; p = align16(p + N * 8);
  const mu = p; p = align16(p + N * 8);
  const mm = p; p = align16(p + N * 8);
  const mm0 = p; p = align16(p + N * 8);
  const lm = p; p = align16(p + N * 8);
  const ent = p; p = align16(p + N * 8);
  const avoid = p; p = align16(p + stride * 8);
  const rng = p; p = align16(p + PHILOX_BYTES);
  const scratch = p; p = align16(p + stride * 8 + 32);
  if (base) {
    const st = changetype<Mfrp>(base);
    st.stride = <i32>stride;
    st.cw = <i32>cw;
    st.rows = base + rows;
    st.piv = base + piv;
    st.rowOf = base + rowOf;
    st.sig = base + sig;
    st.L = base + L;
    st.N = base + Nn;
    st.Z = base + Z;
    st.colMask = base + colMask;
    st.pnStart = base + pnStart;
    st.pnIdx = base + pnIdx;
    st.pnJ = base + pnJ;
    st.pnIn = base + pnIn;
    st.t5bits = base + t5bits;
    st.t5J = base + t5J;
    st.t5L = base + t5L;
    st.t5N = base + t5N;
    st.t5Z = base + t5Z;
    st.h = base + h;
    st.mu = base + mu;
    st.mm = base + mm;
    st.mm0 = base + mm0;
    st.lm = base + lm;
    st.ent = base + ent;
    st.avoid = base + avoid;
    st.rng = base + rng;
    st.scratch = base + scratch;
  }
  return p;
}

/** Addresses inside a state block, for the bindings: 0 rows, 1 piv, 2 rowOf, 3 sig, 4 mu, 5 rng. */
export function mfrpPtr(state: usize, which: i32): usize {
  const st = changetype<Mfrp>(state);
  switch (which) {
    case 0: return st.rows;
    case 1: return st.piv;
    case 2: return st.rowOf;
    case 3: return st.sig;
    case 4: return st.mu;
    case 5: return st.rng;
    default: return 0;
  }
}

/** Sets the experiment switches (MFRP_LEFTMOST_PIVOTS | MFRP_PER_SWEEP; 0 = the defaults); reduce again after. */
export function mfrpSetVariant(state: usize, flags: i32): void {
  changetype<Mfrp>(state).variant = flags;
}

/** rank (0), status (1), number of pivot–pivot terms (2), stride (3). */
export function mfrpInfo(state: usize, which: i32): i32 {
  const st = changetype<Mfrp>(state);
  switch (which) {
    case 0: return st.rank;
    case 1: return st.status;
    case 2: return st.t5n;
    case 3: return st.stride;
    default: return 0;
  }
}

/** Lays out a zeroed state block at `state` (mfrpStateBytes long); computes the spin-form fields. */
export function mfrpInit(state: usize, form: usize, mCap: i32, t5Cap: i32, pnCap: i32): void {
  const st = changetype<Mfrp>(state);
  const m = changetype<PairwiseForm>(form);
  const n = m.nBits;
  memory.fill(state, 0, mfrpStateBytes(n, mCap, t5Cap, pnCap));
  layout(state, n, mCap, t5Cap, pnCap);
  st.form = form;
  st.n = n;
  st.mCap = mCap;
  st.t5Cap = t5Cap;
  st.pnCap = pnCap;
  st.rank = 0;
  st.status = 1;
  st.t5n = 0;
  let c = 0.0;
  for (let i = 0; i < n; i++) {
    const ai = f64At(m.a, i);
    let hi = -0.5 * ai;
    c += 0.5 * ai;
    const end = i32At(m.rowPtr, i + 1);
    for (let k = i32At(m.rowPtr, i); k < end; k++) {
      const w = f64At(m.val, k);
      hi -= 0.25 * w;
      if (i32At(m.col, k) > i) c += 0.25 * w;
    }
    f64Set(st.h, i, hi);
    i32Set(st.rowOf, i, -1);
  }
  st.c = c;
}

// ---------------------------------------------------------------------------------------------
// Projections

/** Draws m rows of [A | b] (columns 0 … n) uniformly from st.rng into rows 0 … m−1. */
export function mfrpDraw(state: usize, m: i32): void {
  const st = changetype<Mfrp>(state);
  const r = changetype<Philox>(st.rng);
  const n = st.n;
  const used = (n + 1 + 63) >>> 6; // words holding columns 0 … n
  for (let l = 0; l < m; l++) {
    const row = rowAt(st, l);
    memory.fill(row, 0, <usize>st.stride << 3);
    for (let w = 0; w < used; w++) {
      const lo = <u64>next32(r);
      const hi = <u64>next32(r);
      store<u64>(row + (<usize>w << 3), lo | (hi << 32));
    }
    const rem = (n + 1) & 63;
    if (rem) {
      const p = row + (<usize>(used - 1) << 3);
      store<u64>(p, load<u64>(p) & ((<u64>1 << <u64>rem) - 1));
    }
  }
}

@inline
function clearBit(row: usize, c: i32): void {
  const p = row + (<usize>(c >>> 6) << 3);
  store<u64>(p, load<u64>(p) & ~(<u64>1 << <u64>(c & 63)));
}

/**
 * Row-reduces the m rows in place (pivots preferably non-adjacent), then sets up the projection:
 * pivots, σ, S_l (pivot and b bits cleared), column masks, pivot-neighbour lists and the pivot–pivot
 * terms. Returns gf2Reduce's code: the rank when consistent, −(rank + 1) when empty. Aborts if a
 * capacity given to mfrpInit is too small.
 */
export function mfrpReduce(state: usize, m: i32): i32 {
  const st = changetype<Mfrp>(state);
  const f = changetype<PairwiseForm>(st.form);
  const n = st.n;
  assert(m <= st.mCap, 'mfrp: more rows than allocated');
  for (let i = 0; i < n; i++) i32Set(st.rowOf, i, -1);
  memory.fill(st.avoid, 0, <usize>st.stride << 3);
  const code = st.variant & MFRP_LEFTMOST_PIVOTS
    ? gf2Reduce(st.rows, m, n, st.stride, st.piv, 0, 0, 0)
    : gf2Reduce(st.rows, m, n, st.stride, st.piv, st.avoid, f.rowPtr, f.col);
  const rank = code >= 0 ? code : -code - 1;
  st.rank = rank;
  st.status = code >= 0 ? 1 : 0;
  st.t5n = 0;
  for (let l = 0; l < rank; l++) {
    const row = rowAt(st, l);
    const p = i32At(st.piv, l);
    i32Set(st.rowOf, p, l);
    f64Set(st.sig, l, gf2Bit(row, n) ? -1.0 : 1.0);
    clearBit(row, n);
    clearBit(row, p);
  }
  // Column masks.
  const cw = st.cw;
  memory.fill(st.colMask, 0, <usize>n * <usize>cw << 3);
  for (let l = 0; l < rank; l++) {
    const row = rowAt(st, l);
    const off = <usize>(l >>> 6) << 3;
    const bit = <u64>1 << <u64>(l & 63);
    for (let w = 0; w < st.stride; w++) {
      let x = load<u64>(row + (<usize>w << 3));
      while (x) {
        const c = (w << 6) + <i32>ctz(x);
        x &= x - 1;
        const q = st.colMask + ((<usize>c * <usize>cw) << 3) + off;
        store<u64>(q, load<u64>(q) | bit);
      }
    }
  }
  // Each pivot's free neighbours, and the pivot–pivot edges (J σ_a σ_b, S_a Δ S_b).
  let q = 0;
  for (let l = 0; l < rank; l++) {
    i32Set(st.pnStart, l, q);
    const p = i32At(st.piv, l);
    const row = rowAt(st, l);
    const end = i32At(f.rowPtr, p + 1);
    for (let k = i32At(f.rowPtr, p); k < end; k++) {
      const j = i32At(f.col, k);
      const l2 = i32At(st.rowOf, j);
      if (l2 < 0) {
        assert(q < st.pnCap, 'mfrp: more pivot neighbours than allocated');
        i32Set(st.pnIdx, q, j);
        f64Set(st.pnJ, q, 0.25 * f64At(f.val, k));
        i32Set(st.pnIn, q, gf2Bit(row, j));
        q++;
        continue;
      }
      if (j <= p) continue;
      const t = st.t5n;
      assert(t < st.t5Cap, 'mfrp: more pivot-pivot edges than allocated');
      const dst = t5At(st, t);
      const a = rowAt(st, l), b = rowAt(st, l2);
      for (let w = 0; w < st.stride; w++) {
        const o = <usize>w << 3;
        store<u64>(dst + o, load<u64>(a + o) ^ load<u64>(b + o));
      }
      f64Set(st.t5J, t, 0.25 * f64At(f.val, k) * f64At(st.sig, l) * f64At(st.sig, l2));
      st.t5n = t + 1;
    }
  }
  i32Set(st.pnStart, rank, q);
  return code;
}

// ---------------------------------------------------------------------------------------------
// Products over sets of free variables: (L, N, Z) = (Σ log|m_f|, parity of negatives, zeros).

/** The stats of the set in `bits`, written to the three slots. */
function setStats(st: Mfrp, bits: usize, Lp: usize, Np: usize, Zp: usize): void {
  let L = 0.0;
  let N = 0, Z = 0;
  const mm = st.mm, lm = st.lm;
  for (let w = 0; w < st.stride; w++) {
    let x = load<u64>(bits + (<usize>w << 3));
    while (x) {
      const f = (w << 6) + <i32>ctz(x);
      x &= x - 1;
      const mf = f64At(mm, f);
      L += f64At(lm, f);
      N ^= <i32>(mf < 0.0);
      Z += <i32>(mf == 0.0);
    }
  }
  store<f64>(Lp, L);
  store<i32>(Np, N);
  store<i32>(Zp, Z);
}

function allStats(st: Mfrp): void {
  for (let l = 0; l < st.rank; l++) {
    setStats(st, rowAt(st, l), st.L + (<usize>l << 3), st.N + (<usize>l << 2), st.Z + (<usize>l << 2));
  }
  for (let t = 0; t < st.t5n; t++) {
    setStats(st, t5At(st, t), st.t5L + (<usize>t << 3), st.t5N + (<usize>t << 2), st.t5Z + (<usize>t << 2));
  }
}

@inline
function signed(neg: i32, x: f64): f64 {
  return neg ? -x : x;
}

/** P(S) from its stats. */
@inline
function prodAll(L: f64, N: i32, Z: i32): f64 {
  return Z > 0 ? 0.0 : signed(N, Math.exp(L));
}

/** P(S ∖ {k}) for k ∈ S. */
@inline
function prodWithout(st: Mfrp, L: f64, N: i32, Z: i32, k: i32): f64 {
  const mk = f64At(st.mm, k);
  const z = Z - <i32>(mk == 0.0);
  return z > 0 ? 0.0 : signed(N ^ <i32>(mk < 0.0), Math.exp(L - f64At(st.lm, k)));
}

/** Sets m_f, log|m_f| and H(μ_f) from μ_f (for marginals written by the caller or drawn). */
@inline
function freeFromMu(st: Mfrp, f: i32, mu: f64): void {
  f64Set(st.mu, f, mu);
  const m = (1.0 - 2.0 * mu) + 0.0;
  f64Set(st.mm, f, m);
  f64Set(st.lm, f, m == 0.0 ? 0.0 : Math.log(Math.abs(m)));
  let h = 0.0;
  if (mu > 0.0) h -= mu * Math.log(mu);
  if (mu < 1.0) h -= (1.0 - mu) * Math.log1p(-mu);
  f64Set(st.ent, f, h);
}

/** Recomputes m, log|m| and entropy of every free variable from st.mu. */
export function mfrpSetFree(state: usize): void {
  const st = changetype<Mfrp>(state);
  for (let f = 0; f < st.n; f++) if (i32At(st.rowOf, f) < 0) freeFromMu(st, f, f64At(st.mu, f));
}

/** Random start: μ_f ~ U(0,1) for each free variable, from st.rng (Algorithm 1). */
export function mfrpRandomStart(state: usize): void {
  const st = changetype<Mfrp>(state);
  const r = changetype<Philox>(st.rng);
  for (let f = 0; f < st.n; f++) if (i32At(st.rowOf, f) < 0) freeFromMu(st, f, uniform(r));
}

// ---------------------------------------------------------------------------------------------
// Marginals (Proposition 1) and the objective

/** E[y_i] under q. Needs fresh stats (allStats) for pivots. */
function spin1(st: Mfrp, i: i32): f64 {
  const l = i32At(st.rowOf, i);
  if (l < 0) return f64At(st.mm, i);
  return f64At(st.sig, l) * prodAll(f64At(st.L, l), i32At(st.N, l), i32At(st.Z, l));
}

/** E[y_i y_j] under q, i ≠ j. Needs fresh stats; the pivot–pivot case computes its set's product. */
function spin2(st: Mfrp, i: i32, j: i32): f64 {
  const li = i32At(st.rowOf, i), lj = i32At(st.rowOf, j);
  if (li < 0 && lj < 0) return f64At(st.mm, i) * f64At(st.mm, j);
  if (li < 0 || lj < 0) {
    // f free, pivot row l
    const f = li < 0 ? i : j;
    const l = li < 0 ? lj : li;
    const L = f64At(st.L, l);
    const N = i32At(st.N, l), Z = i32At(st.Z, l);
    const s = f64At(st.sig, l);
    if (gf2Bit(rowAt(st, l), f)) return s * prodWithout(st, L, N, Z, f);
    return s * prodAll(L, N, Z) * f64At(st.mm, f);
  }
  const bits = st.scratch;
  const a = rowAt(st, li), b = rowAt(st, lj);
  for (let w = 0; w < st.stride; w++) {
    const o = <usize>w << 3;
    store<u64>(bits + o, load<u64>(a + o) ^ load<u64>(b + o));
  }
  const o = bits + (<usize>st.stride << 3);
  setStats(st, bits, o, o + 8, o + 16);
  return f64At(st.sig, li) * f64At(st.sig, lj) * prodAll(load<f64>(o), load<i32>(o, 8), load<i32>(o, 16));
}

/**
 * Writes every singleton marginal μ_i = P(x_i = 1) to out (f64[n], or 0) — free ones as they are,
 * pivots by Proposition 1 — and returns the objective F (without logZOffset):
 * E_q[aᵀx + ½xᵀWx] + Σ H(μ_f), computed from scratch.
 */
export function mfrpEvaluate(state: usize, out: usize): f64 {
  const st = changetype<Mfrp>(state);
  const f = changetype<PairwiseForm>(st.form);
  const n = st.n;
  allStats(st);
  let E = st.c;
  let H = 0.0;
  for (let i = 0; i < n; i++) {
    const yi = spin1(st, i);
    if (out) f64Set(out, i, i32At(st.rowOf, i) < 0 ? f64At(st.mu, i) : 0.5 * (1.0 - yi));
    E += f64At(st.h, i) * yi;
    if (i32At(st.rowOf, i) < 0) H += f64At(st.ent, i);
    const end = i32At(f.rowPtr, i + 1);
    for (let k = i32At(f.rowPtr, i); k < end; k++) {
      const j = i32At(f.col, k);
      if (j <= i) continue;
      E += 0.25 * f64At(f.val, k) * spin2(st, i, j);
    }
  }
  return E + H;
}

/** E[x_i x_j] under q (Proposition 1; i = j gives μ_i). Refreshes the stats. */
export function mfrpPairMarginal(state: usize, i: i32, j: i32): f64 {
  const st = changetype<Mfrp>(state);
  allStats(st);
  const yi = spin1(st, i);
  if (i == j) return 0.5 * (1.0 - yi);
  const yj = spin1(st, j);
  return 0.25 * (1.0 - yi - yj + spin2(st, i, j));
}

// ---------------------------------------------------------------------------------------------
// Coordinate ascent

/**
 * ∂E_q[energy]/∂m_k for free k (see the header). Needs current stats; mmSet holds the m_f the row
 * products were taken at (st.mm, or st.mm0 with MFRP_PER_SWEEP).
 */
@inline
function slope(st: Mfrp, rowPtr: usize, col: usize, val: usize, k: i32, mmSet: usize): f64 {
  const mm = st.mm, rowOf = st.rowOf, h = st.h, sig = st.sig;
  const Ls = st.L, Ns = st.N, Zs = st.Z;
  let d = f64At(h, k);
  const end = i32At(rowPtr, k + 1);
  for (let e = i32At(rowPtr, k); e < end; e++) {
    const j = i32At(col, e);
    const J = 0.25 * f64At(val, e);
    const l = i32At(rowOf, j);
    if (l < 0) d += J * f64At(mm, j);
    else if (!gf2Bit(rowAt(st, l), k)) d += J * f64At(sig, l) * prodAll(f64At(Ls, l), i32At(Ns, l), i32At(Zs, l));
  }
  const cw = st.cw;
  const cm = st.colMask + ((<usize>k * <usize>cw) << 3);
  const mk = f64At(mm, k);
  const zk = <i32>(mk == 0.0);
  const nk = <i32>(mk < 0.0);
  const lmk = f64At(st.lm, k);
  const piv = st.piv, pnStart = st.pnStart, pnIdx = st.pnIdx, pnJ = st.pnJ, pnIn = st.pnIn;
  for (let w = 0; w < cw; w++) {
    let x = load<u64>(cm + (<usize>w << 3));
    while (x) {
      const l = (w << 6) + <i32>ctz(x);
      x &= x - 1;
      const z = i32At(Zs, l) - zk;
      if (z > 1) continue; // every product over S_l ∖ k (and smaller) has a zero factor
      const base = signed(i32At(Ns, l) ^ nk, Math.exp(f64At(Ls, l) - lmk)); // nonzero factors of S_l ∖ k
      const E0 = z == 0 ? base : 0.0; // P(S_l ∖ k)
      const E1 = z == 1 ? base : 0.0; // P(S_l ∖ {k, the zero})
      let acc = f64At(h, i32At(piv, l)) * E0;
      const qEnd = i32At(pnStart, l + 1);
      for (let q = i32At(pnStart, l); q < qEnd; q++) {
        const j = i32At(pnIdx, q);
        const mj = f64At(mm, j), mjSet = f64At(mmSet, j);
        // j ∈ S_l: P(S_l ∖ {j, k}); else P(S_l ∖ k) m_j. k's own edge to the pivot is constant.
        const tin = mjSet != 0.0 ? E0 / mjSet : E1;
        const tout = E0 * mj;
        const t = reinterpret<f64>(select<i64>(reinterpret<i64>(tin), reinterpret<i64>(tout), i32At(pnIn, q) != 0));
        acc += select<f64>(0.0, f64At(pnJ, q) * t, j == k);
      }
      d += f64At(sig, l) * acc;
    }
  }
  for (let t = 0; t < st.t5n; t++) {
    if (!gf2Bit(t5At(st, t), k)) continue;
    d += f64At(st.t5J, t) * prodWithout(st, f64At(st.t5L, t), i32At(st.t5N, t), i32At(st.t5Z, t), k);
  }
  return d;
}

/** One sweep over the free variables in index order; returns the increase of F (exact bookkeeping). */
function sweep(st: Mfrp, out: usize): f64 {
  const f = changetype<PairwiseForm>(st.form);
  allStats(st);
  const rowPtr = f.rowPtr, col = f.col, val = f.val;
  const n = st.n, cw = st.cw, t5n = st.t5n;
  const rowOf = st.rowOf, mu = st.mu, mm = st.mm, lm = st.lm, ent = st.ent, colMask = st.colMask;
  const Ls = st.L, Ns = st.N, Zs = st.Z;
  const perSweep = (st.variant & MFRP_PER_SWEEP) != 0;
  if (perSweep) memory.copy(st.mm0, mm, <usize>n << 3);
  const mmSet = perSweep ? st.mm0 : mm;
  let dF = 0.0;
  let maxStep = 0.0;
  for (let k = 0; k < n; k++) {
    if (i32At(rowOf, k) >= 0) continue;
    const g = -2.0 * slope(st, rowPtr, col, val, k, mmSet);
    const ag = Math.abs(g);
    const pos = g >= 0.0;
    const cm = colMask + ((<usize>k * <usize>cw) << 3);
    let any: u64 = 0;
    for (let w = 0; w < cw; w++) any |= load<u64>(cm + (<usize>w << 3));
    const muOld = f64At(mu, k);
    const mOld = f64At(mm, k), lmOld = f64At(lm, k);
    if (!any && t5n == 0) {
      // k is in no set: only μ, m (to absolute precision) and H are needed. e = exp(−|g|).
      const e = Math.exp(-ag);
      const inv = 1.0 / (1.0 + e);
      const l1 = Math.log1p(e);
      const muNew = pos ? inv : e * inv;
      const mNew = ((1.0 - e) * inv) * (pos ? -1.0 : 1.0) + 0.0;
      dF += (max(g, 0.0) + l1) - (muOld * g + f64At(ent, k));
      maxStep = max(maxStep, Math.abs(muNew - muOld));
      f64Set(mu, k, muNew);
      f64Set(mm, k, mNew);
      f64Set(ent, k, l1 + ag * (e * inv));
      continue;
    }
    // μ = σ(g), m = 1 − 2μ (to relative precision: it enters products) and log|m| from one expm1:
    // e = expm1(−|g|), so 1 + exp(−|g|) = 2 + e and |m| = −e / (2 + e).
    const e = Math.expm1(-ag);
    const d = 2.0 + e;
    const logd = Math.log(d);
    const inv = 1.0 / d;
    const muNew = pos ? inv : (1.0 + e) * inv;
    const mNew = (pos ? e * inv : -e * inv) + 0.0; // never −0
    dF += (max(g, 0.0) + logd) - (muOld * g + f64At(ent, k));
    maxStep = max(maxStep, Math.abs(muNew - muOld));
    f64Set(mu, k, muNew);
    f64Set(mm, k, mNew);
    f64Set(ent, k, logd + ag * ((1.0 + e) * inv));
    const lmNew = e == 0.0 ? 0.0 : Math.log(-e) - logd;
    f64Set(lm, k, lmNew);
    if (perSweep) continue; // the row products stay at the sweep's start
    const dL = lmNew - lmOld;
    const dN = <i32>(mOld < 0.0) ^ <i32>(mNew < 0.0);
    const dZ = <i32>(mNew == 0.0) - <i32>(mOld == 0.0);
    for (let w = 0; w < cw; w++) {
      let x = load<u64>(cm + (<usize>w << 3));
      while (x) {
        const l = (w << 6) + <i32>ctz(x);
        x &= x - 1;
        f64Set(Ls, l, f64At(Ls, l) + dL);
        i32Set(Ns, l, i32At(Ns, l) ^ dN);
        i32Set(Zs, l, i32At(Zs, l) + dZ);
      }
    }
    for (let t = 0; t < t5n; t++) {
      if (!gf2Bit(t5At(st, t), k)) continue;
      f64Set(st.t5L, t, f64At(st.t5L, t) + dL);
      i32Set(st.t5N, t, i32At(st.t5N, t) ^ dN);
      i32Set(st.t5Z, t, i32At(st.t5Z, t) + dZ);
    }
  }
  store<f64>(out, maxStep, 24);
  return dF;
}

/**
 * Coordinate ascent over the free marginals from the current ones, until a sweep raises F by at most
 * tol · max(n, |F|) (relative change per variable, as mean field) or maxSweeps. Returns the sweeps; out f64[4] = (F from scratch, converged,
 * last ΔF, last max |Δμ|); marg (f64[n], or 0) receives every singleton marginal.
 */
export function mfrpAscend(state: usize, maxSweeps: i32, tol: f64, out: usize, marg: usize): i32 {
  let F = mfrpEvaluate(state, 0);
  const st = changetype<Mfrp>(state);
  let sweeps = 0;
  let converged = false;
  let dF = 0.0;
  const perSweep = (st.variant & MFRP_PER_SWEEP) != 0;
  while (sweeps < maxSweeps) {
    dF = sweep(st, out);
    if (perSweep) {
      // Not an ascent any more: the change of the bound from scratch, either sign.
      const Fn = mfrpEvaluate(state, 0);
      dF = Math.abs(Fn - F);
      F = Fn;
    } else F += dF;
    sweeps++;
    if (dF <= tol * max(<f64>st.n, Math.abs(F))) {
      converged = true;
      break;
    }
  }
  const step = sweeps > 0 ? load<f64>(out, 24) : 0.0;
  mfrpSetFree(state); // entropies and m from μ, as the objective's definition reads them
  store<f64>(out, mfrpEvaluate(state, marg));
  store<f64>(out, converged ? 1.0 : 0.0, 8);
  store<f64>(out, dF, 16);
  store<f64>(out, step, 24);
  return sweeps;
}
