// The FFT factor (2022 note, DESIGN.md §2): for translation-invariant couplings on a periodic
// lattice, W + dI is (block-)circulant, diagonalised by the discrete Fourier transform, with real
// eigenvalues λ_k. Its symmetric square root M = F⁻¹ diag(√λ) F is real and symmetric (M = Mᵀ),
// so u = M x and g = Mᵀ v are the same n log n operation.
//
// Factor fields (assembly/factor.ts): aux = number of axes (1–3), data = √λ (f64 × n, in the
// lattice's row-major order), index0 = shape (3 × i32, unused axes 1), index1 = complex
// workspace (2n f64, interleaved re/im), extra = per-axis twiddles (cos, sin interleaved, L/2 each,
// axes in order) followed by a complex line buffer (2·max L f64). Sides are powers of two.

import { Factor } from './factor';

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

/** u = M x: FFT, multiply by √λ, inverse FFT (scaled by 1/n), real part. */
export function fftApply(f: Factor, x: usize, u: usize): void {
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

export function fftFactorForwardReal(hdr: usize, x: usize, out: usize): void {
  fftForwardReal(changetype<Factor>(hdr), x, out);
}
