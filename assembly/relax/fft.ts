// The FFT factor (2022 note, DESIGN.md §2): for translation-invariant couplings on a periodic
// lattice, W + dI is (block-)circulant, diagonalised by the discrete Fourier transform, with real
// eigenvalues λ_k. Its symmetric square root M = F⁻¹ diag(√λ) F is real and symmetric (M = Mᵀ),
// so u = M x and g = Mᵀ v are the same n log n operation.
//
// Factor fields (assembly/relax/factor_header.ts): aux = number of axes (1–3), data = √λ (f64 × n, in the
// lattice's row-major order), index0 = shape (3 × i32, unused axes 1), index1 = complex
// workspace (2n f64, interleaved re/im), extra = per-axis twiddles (cos, sin interleaved, L/2 each,
// axes in order) followed by a complex line buffer (2·max L f64). Sides are powers of two.

import { Factor } from './factor_header';

/** In-place radix-2 FFT of a contiguous complex line (interleaved) of length L; sign −1 forward. */
function fftLine(buf: usize, L: i32, tw: usize, inverse: bool): void {
  // Bit-reversal permutation.
  for (let i = 1, j = 0; i < L; i++) {
    let bit = L >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      const pi = buf + (<usize>i << 4), pj = buf + (<usize>j << 4);
      const t = v128.load(pi);
      v128.store(pi, v128.load(pj));
      v128.store(pj, t);
    }
  }
  // Butterflies; twiddle k·(L/len) of the length-L table: e^{∓2πi k/len}.
  const conj = inverse ? f64x2(1.0, -1.0) : f64x2(1.0, 1.0);
  for (let len = 2; len <= L; len <<= 1) {
    const half = len >> 1;
    const step = L / len;
    for (let start = 0; start < L; start += len) {
      for (let k = 0; k < half; k++) {
        // w = (cos, −sin) forward or (cos, +sin) inverse; table holds (cos θ, −sin θ), θ = 2πk/L.
        const w = f64x2.mul(v128.load(tw + (<usize>(k * step) << 4)), conj);
        const pa = buf + (<usize>(start + k) << 4), pb = buf + (<usize>(start + k + half) << 4);
        const b = v128.load(pb);
        // Complex product w·b = (wr br − wi bi, wr bi + wi br).
        const wr = f64x2.splat(f64x2.extract_lane(w, 0)), wi = f64x2.splat(f64x2.extract_lane(w, 1));
        const bSwap = v128.shuffle<f64>(b, b, 1, 0);
        const t = f64x2.add(f64x2.mul(wr, b), f64x2.mul(f64x2.mul(wi, bSwap), f64x2(-1.0, 1.0)));
        const a = v128.load(pa);
        v128.store(pa, f64x2.add(a, t));
        v128.store(pb, f64x2.sub(a, t));
      }
    }
  }
}

/** Multidimensional FFT of the complex workspace, axis by axis (lines gathered into a buffer). */
function fftND(f: Factor, data: usize, inverse: bool): void {
  const nAxes = f.aux;
  const n = f.n;
  let tw = f.extra;
  let maxL = 1;
  for (let a = 0; a < nAxes; a++) maxL = max(maxL, load<i32>(f.index0 + (<usize>a << 2)));
  let twTotal: usize = 0;
  for (let a = 0; a < nAxes; a++) twTotal += <usize>(load<i32>(f.index0 + (<usize>a << 2)) >> 1) << 4;
  const line = f.extra + twTotal;
  let stride = n; // elements between consecutive indices of axis a
  for (let a = 0; a < nAxes; a++) {
    const L = load<i32>(f.index0 + (<usize>a << 2));
    stride /= L;
    if (L > 1) {
      // Every line along axis a: fixed outer index o (above a) and inner index q (below a).
      const outer = n / (L * stride);
      for (let o = 0; o < outer; o++) {
        for (let q = 0; q < stride; q++) {
          const base = o * L * stride + q;
          if (stride == 1) {
            fftLine(data + (<usize>base << 4), L, tw, inverse); // contiguous: in place
            continue;
          }
          for (let t = 0; t < L; t++) v128.store(line + (<usize>t << 4), v128.load(data + (<usize>(base + t * stride) << 4)));
          fftLine(line, L, tw, inverse);
          for (let t = 0; t < L; t++) v128.store(data + (<usize>(base + t * stride) << 4), v128.load(line + (<usize>t << 4)));
        }
      }
    }
    tw += <usize>(L >> 1) << 4;
  }
}

/** u = M x on the full complex lattice (the reference path): FFT, × √λ, inverse FFT (÷ n), real part. */
export function fftApplyComplex(f: Factor, x: usize, u: usize): void {
  const n = f.n;
  const work = f.index1;
  for (let i = 0; i < n; i++) v128.store(work + (<usize>i << 4), f64x2(load<f64>(x + (<usize>i << 3)), 0.0));
  fftND(f, work, false);
  for (let i = 0; i < n; i++) {
    const p = work + (<usize>i << 4);
    v128.store(p, f64x2.mul(v128.load(p), f64x2.splat(load<f64>(f.data + (<usize>i << 3)))));
  }
  fftND(f, work, true);
  const inv = 1.0 / <f64>n;
  for (let i = 0; i < n; i++) store<f64>(u + (<usize>i << 3), load<f64>(work + (<usize>i << 4)) * inv);
}

/**
 * u = M x using that x and u are real and √λ is real and even (λ_k = λ_−k). Rows along the last axis
 * (length Lr, R = n/Lr rows) are transformed two at a time, packed as one complex row z = x_a + i x_b:
 * with Z = DFT(z), X_a[k] = (Z[k] + conj Z[−k])/2 and X_b[k] = (Z[k] − conj Z[−k])/(2i). Only the
 * Lr/2 + 1 non-redundant columns (k ≤ Lr/2) are kept; the other axes are transformed on those
 * columns alone, multiplied by √λ and transformed back. The filtered rows are real again, so two of
 * them are rebuilt from their half spectra as one complex row Z = Y_a + i Y_b (extended by
 * Y[−k] = conj Y[k]) and one inverse row transform gives y_a (real part) and y_b (imaginary part).
 * About half the work of the complex path. Needs Lr ≥ 2 (the half spectra then fit in the workspace).
 */
function fftApplyReal(f: Factor, x: usize, u: usize): void {
  const n = f.n;
  const nAxes = f.aux;
  const Lr = load<i32>(f.index0 + (<usize>(nAxes - 1) << 2));
  const R = n / Lr;
  const H = (Lr >> 1) + 1;
  const work = f.index1;
  // Twiddles: the last axis's table follows the other axes'; then the line buffer.
  let twLast = f.extra;
  for (let a = 0; a < nAxes - 1; a++) twLast += <usize>(load<i32>(f.index0 + (<usize>a << 2)) >> 1) << 4;
  const line = twLast + (<usize>(Lr >> 1) << 4);
  const mask = Lr - 1;
  const half = f64x2.splat(0.5);
  const conj = f64x2(1.0, -1.0);
  const negRe = f64x2(-1.0, 1.0);
  // Forward row transforms, two real rows per complex transform.
  for (let ra = 0; ra < R; ra += 2) {
    const rb = ra + 1;
    const xa = x + ((<usize>ra * <usize>Lr) << 3);
    if (rb < R) {
      const xb = xa + (<usize>Lr << 3);
      for (let t = 0; t < Lr; t++) v128.store(line + (<usize>t << 4), f64x2(load<f64>(xa + (<usize>t << 3)), load<f64>(xb + (<usize>t << 3))));
    } else {
      for (let t = 0; t < Lr; t++) v128.store(line + (<usize>t << 4), f64x2(load<f64>(xa + (<usize>t << 3)), 0.0));
    }
    fftLine(line, Lr, twLast, false);
    const ha = work + ((<usize>ra * <usize>H) << 4);
    const hb = ha + (<usize>H << 4);
    for (let k = 0; k < H; k++) {
      const z = v128.load(line + (<usize>k << 4));
      const zm = v128.load(line + (<usize>((Lr - k) & mask) << 4));
      v128.store(ha + (<usize>k << 4), f64x2.mul(f64x2.add(z, f64x2.mul(zm, conj)), half));
      if (rb < R) {
        // (Z − conj Zm)/(2i) = ((zi + mi), (mr − zr))/2.
        const t = f64x2.add(f64x2.mul(z, negRe), zm);
        v128.store(hb + (<usize>k << 4), f64x2.mul(v128.shuffle<f64>(t, t, 1, 0), half));
      }
    }
  }
  // The other axes on the half-spectrum array (shape L0 × … × L_{D−2} × H), then × √λ, then back.
  halfColumns(f, work, H, false);
  for (let r = 0; r < R; r++) {
    const hr = work + ((<usize>r * <usize>H) << 4);
    const sr = f.data + ((<usize>r * <usize>Lr) << 3);
    for (let k = 0; k < H; k++) {
      const p = hr + (<usize>k << 4);
      v128.store(p, f64x2.mul(v128.load(p), f64x2.splat(load<f64>(sr + (<usize>k << 3)))));
    }
  }
  halfColumns(f, work, H, true);
  // Inverse row transforms: Z = Y_a + i Y_b from the half spectra (Y[0], Y[Lr/2] real for a real row).
  const inv = 1.0 / <f64>n;
  const halfL = Lr >> 1;
  for (let ra = 0; ra < R; ra += 2) {
    const rb = ra + 1;
    const ha = work + ((<usize>ra * <usize>H) << 4);
    const hb = ha + (<usize>H << 4);
    const both = rb < R;
    for (let k = 0; k < Lr; k++) {
      let A: v128, B: v128;
      if (k <= halfL) {
        A = v128.load(ha + (<usize>k << 4));
        B = both ? v128.load(hb + (<usize>k << 4)) : f64x2.splat(0);
        if (k == 0 || k == halfL) {
          A = f64x2.replace_lane(A, 1, 0.0);
          B = f64x2.replace_lane(B, 1, 0.0);
        }
      } else {
        A = f64x2.mul(v128.load(ha + (<usize>(Lr - k) << 4)), conj);
        B = both ? f64x2.mul(v128.load(hb + (<usize>(Lr - k) << 4)), conj) : f64x2.splat(0);
      }
      // A + iB = (Ar − Bi, Ai + Br).
      v128.store(line + (<usize>k << 4), f64x2.add(A, f64x2.mul(v128.shuffle<f64>(B, B, 1, 0), negRe)));
    }
    fftLine(line, Lr, twLast, true);
    const ua = u + ((<usize>ra * <usize>Lr) << 3);
    if (both) {
      const ub = ua + (<usize>Lr << 3);
      for (let t = 0; t < Lr; t++) {
        const z = v128.load(line + (<usize>t << 4));
        store<f64>(ua + (<usize>t << 3), f64x2.extract_lane(z, 0) * inv);
        store<f64>(ub + (<usize>t << 3), f64x2.extract_lane(z, 1) * inv);
      }
    } else {
      for (let t = 0; t < Lr; t++) store<f64>(ua + (<usize>t << 3), load<f64>(line + (<usize>t << 4)) * inv);
    }
  }
}

/** FFT along every axis but the last of the half-spectrum array (last extent H), lines gathered. */
function halfColumns(f: Factor, data: usize, H: i32, inverse: bool): void {
  const nAxes = f.aux;
  if (nAxes < 2) return;
  const Lr = load<i32>(f.index0 + (<usize>(nAxes - 1) << 2));
  let tw = f.extra;
  let twTotal: usize = 0;
  for (let a = 0; a < nAxes; a++) twTotal += <usize>(load<i32>(f.index0 + (<usize>a << 2)) >> 1) << 4;
  const line = f.extra + twTotal;
  const total = (f.n / Lr) * H; // entries of the half-spectrum array
  let stride = total;
  for (let a = 0; a < nAxes - 1; a++) {
    const L = load<i32>(f.index0 + (<usize>a << 2));
    stride /= L;
    if (L > 1) {
      const outer = total / (L * stride);
      for (let o = 0; o < outer; o++) {
        for (let q = 0; q < stride; q++) {
          const base = data + ((<usize>(o * L * stride + q)) << 4);
          const step = <usize>stride << 4;
          for (let t = 0; t < L; t++) v128.store(line + (<usize>t << 4), v128.load(base + <usize>t * step));
          fftLine(line, L, tw, inverse);
          for (let t = 0; t < L; t++) v128.store(base + <usize>t * step, v128.load(line + (<usize>t << 4)));
        }
      }
    }
    tw += <usize>(L >> 1) << 4;
  }
}

/** u = M x (M symmetric, so also Mᵀ x): the real path whenever the last side is ≥ 2. */
export function fftApply(f: Factor, x: usize, u: usize): void {
  if (load<i32>(f.index0 + (<usize>(f.aux - 1) << 2)) >= 2) fftApplyReal(f, x, u);
  else fftApplyComplex(f, x, u);
}

/** Real parts of the forward DFT of a real lattice array (for the spectrum of the coupling kernel). */
export function fftForwardReal(f: Factor, x: usize, out: usize): void {
  const n = f.n;
  const work = f.index1;
  for (let i = 0; i < n; i++) v128.store(work + (<usize>i << 4), f64x2(load<f64>(x + (<usize>i << 3)), 0.0));
  fftND(f, work, false);
  for (let i = 0; i < n; i++) store<f64>(out + (<usize>i << 3), load<f64>(work + (<usize>i << 4)));
}

/** Fills the twiddle tables of every axis: (cos θ, −sin θ), θ = 2πk/L, k < L/2. */
export function fftTwiddles(f: Factor): void {
  let tw = f.extra;
  for (let a = 0; a < f.aux; a++) {
    const L = load<i32>(f.index0 + (<usize>a << 2));
    for (let k = 0; k < (L >> 1); k++) {
      const th = (2.0 * Math.PI * <f64>k) / <f64>L;
      v128.store(tw + (<usize>k << 4), f64x2(Math.cos(th), -Math.sin(th)));
    }
    tw += <usize>(L >> 1) << 4;
  }
}

export function fftFactorTwiddles(hdr: usize): void {
  fftTwiddles(changetype<Factor>(hdr));
}

/** Test hook: u = M x by the full complex path. */
export function fftFactorApplyComplex(hdr: usize, x: usize, u: usize): void {
  fftApplyComplex(changetype<Factor>(hdr), x, u);
}

export function fftFactorForwardReal(hdr: usize, x: usize, out: usize): void {
  fftForwardReal(changetype<Factor>(hdr), x, out);
}
