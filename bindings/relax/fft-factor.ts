// The FFT factor's setup: checks that W is translation-invariant on a periodic lattice (W_ij depends
// only on the displacement r_j − r_i mod L, any range), and computes the spectrum of W by one FFT
// of its coupling kernel. The per-sample work (M x by FFT) is in assembly/fft.ts.
import type { Engine } from '../core/engine.ts';
import type { CanonicalForm } from '../core/canonical.ts';
import { ModelError } from '../core/errors.ts';
import { toCanonical } from '../core/canonical.ts';
import type { Model } from '../core/model.ts';
import type { FFTFactorData, Relaxation } from './relaxation-types.ts';
import { checkRelaxationRange } from './relaxation.ts';

export type { FFTFactorData } from './relaxation-types.ts';

/** The coupling kernel w(r) (indexed like a site) if W is translation-invariant on `shape`, else a reason. */
export function translationKernel(form: CanonicalForm, shape: readonly number[]): Float64Array | string {
  const n = shape.reduce((p, L) => p * L, 1);
  if (form.nBits !== n || form.n !== n || form.oneHot.some((x) => x)) return `the model is not ${n} binary variables on a ${shape.join('×')} lattice`;
  const coords = (i: number) => {
    const c = new Array(shape.length);
    for (let d = shape.length - 1; d >= 0; d--) {
      c[d] = i % shape[d];
      i = Math.floor(i / shape[d]);
    }
    return c;
  };
  const disp = (i: number, j: number) => {
    const ci = coords(i), cj = coords(j);
    let idx = 0;
    for (let d = 0; d < shape.length; d++) idx = idx * shape[d] + ((cj[d] - ci[d] + shape[d]) % shape[d]);
    return idx;
  };
  const kernel = new Float64Array(n);
  const row0 = form.rowPtr[1] - form.rowPtr[0];
  for (let k = form.rowPtr[0]; k < form.rowPtr[1]; k++) kernel[disp(0, form.col[k])] = form.val[k];
  for (let i = 1; i < n; i++) {
    if (form.rowPtr[i + 1] - form.rowPtr[i] !== row0) return `site ${i} has ${form.rowPtr[i + 1] - form.rowPtr[i]} couplings, site 0 has ${row0}`;
    for (let k = form.rowPtr[i]; k < form.rowPtr[i + 1]; k++) {
      const w = kernel[disp(i, form.col[k])];
      if (Math.abs(w - form.val[k]) > 1e-12 * Math.max(1, Math.abs(w))) return `coupling (${i}, ${form.col[k]}) = ${form.val[k]} differs from the same displacement at site 0 (${w})`;
    }
  }
  return kernel;
}

const isPowerOfTwo = (L: number) => Number.isInteger(L) && L >= 1 && (L & (L - 1)) === 0;

/** Runs `fn` with a scratch FFT factor header for `shape` bound in the engine. */
export function withFFT<T>(engine: Engine, shape: readonly number[], sqrtSpectrum: Float64Array | null, fn: (hdr: number, arena: ReturnType<Engine['arena']>) => T): T {
  const arena = engine.arena();
  try {
    return fn(bindFFT(engine, arena, shape, sqrtSpectrum), arena);
  } finally {
    arena.dispose();
  }
}

/** Allocates an FFT factor (header, spectrum, workspace, twiddles) in `arena`; returns the header. */
export function bindFFT(engine: Engine, arena: ReturnType<Engine['arena']>, shape: readonly number[], sqrtSpectrum: Float64Array | null): number {
  if (shape.length < 1 || shape.length > 3) throw new ModelError(`the FFT factor needs a 1-D, 2-D or 3-D lattice, got ${shape.length} axes`);
  for (const L of shape) if (!isPowerOfTwo(L)) throw new ModelError(`the FFT factor needs power-of-two lattice sides, got ${shape.join('×')}`);
  const n = shape.reduce((p, L) => p * L, 1);
  const k = engine.kernels;
  const data = arena.allocF64(sqrtSpectrum ?? n);
  const shapePtr = arena.allocI32([...shape, 1, 1, 1].slice(0, 3));
  const work = arena.allocF64(2 * n);
  const twEntries = shape.reduce((s, L) => s + 2 * (L >> 1), 0);
  const extra = arena.allocF64(twEntries + 2 * Math.max(...shape));
  const hdr = arena.alloc(k.factorBytes());
  k.factorInit(hdr, 2, n, n, shape.length, data, shapePtr, work, extra);
  k.fftFactorTwiddles(hdr);
  return hdr;
}

/** Eigenvalues of the circulant W with kernel w: the (real) DFT of w. */
export function circulantSpectrum(engine: Engine, shape: readonly number[], kernel: Float64Array): Float64Array {
  return withFFT(engine, shape, null, (hdr, arena) => {
    const x = arena.allocF64(kernel), out = arena.allocF64(kernel.length);
    engine.call('FFT spectrum', (kk) => kk.fftFactorForwardReal(hdr, x, out));
    return arena.readF64(out, kernel.length);
  });
}

/** Spectrum of a translation-invariant periodic lattice's W, with its extremes (for choosing d). */
export function latticeSpectrum(engine: Engine, form: CanonicalForm, shape: readonly number[]): { lambda: Float64Array; lambdaMin: number; lambdaMax: number } {
  const kernel = translationKernel(form, shape);
  if (typeof kernel === 'string') throw new ModelError(`no FFT factor: ${kernel}`);
  const lambda = circulantSpectrum(engine, shape, kernel);
  let lambdaMin = Infinity, lambdaMax = -Infinity;
  for (const l of lambda) {
    lambdaMin = Math.min(lambdaMin, l);
    lambdaMax = Math.max(lambdaMax, l);
  }
  return { lambda, lambdaMin, lambdaMax };
}

/** The FFT factor of W + dI for a translation-invariant periodic lattice model: M = F⁻¹ diag(√(λ + d)) F. */
export function fftFactor(engine: Engine, form: CanonicalForm, shape: readonly number[], d: number): { factor: FFTFactorData; lambdaMin: number; lambdaMax: number } {
  const { lambda, lambdaMin, lambdaMax } = latticeSpectrum(engine, form, shape);
  if (!(lambdaMin + d > 0)) throw new ModelError(`W + dI is not positive definite: λ_min(W) = ${lambdaMin}, d = ${d}`);
  const n = form.nBits;
  return { factor: { kind: 'fft', n, m: n, shape: [...shape], sqrtSpectrum: lambda.map((l) => Math.sqrt(l + d)) }, lambdaMin, lambdaMax };
}

/** Whether a model qualifies for the FFT factor: binary, on a periodic power-of-two lattice, translation-invariant. */
export function fftApplicable(model: Model): boolean {
  const lat = model.lattice;
  if (!lat || !lat.periodic || !lat.shape.every(isPowerOfTwo)) return false;
  return typeof translationKernel(toCanonical(model), lat.shape) !== 'string';
}

/**
 * A relaxation with the FFT factor: Martens' constant shift d = max(0, −λ_min(W)) + margin·max(ρ(W), 1)
 * (the same rule as buildRelaxation's default), λ's exact from the spectrum.
 */
export function fftRelaxation(engine: Engine, model: Model, margin = 1e-3): Relaxation {
  const t0 = performance.now();
  const lat = model.lattice;
  if (!lat || !lat.periodic) throw new ModelError('no FFT factor: the model is not a periodic lattice (isingLattice with periodic: true, or a built-in ising:…,periodic)');
  const form = toCanonical(model);
  checkRelaxationRange(form);
  const { lambdaMin, lambdaMax } = latticeSpectrum(engine, form, lat.shape);
  const rho = Math.max(Math.abs(lambdaMin), Math.abs(lambdaMax));
  const d = Math.max(0, -lambdaMin) + margin * Math.max(rho, 1);
  const { factor } = fftFactor(engine, form, lat.shape, d);
  const n = form.nBits;
  const lambdaMaxWD = lambdaMax + d;
  const total = (performance.now() - t0) / 1000;
  return {
    form,
    d: new Float64Array(n).fill(d),
    factor,
    factorKind: 'fft',
    shiftKind: 'martens',
    lambdaMin,
    lambdaMaxW: lambdaMax,
    lambdaMinWD: lambdaMin + d,
    lambdaMaxWD,
    // Free bits only (translationKernel checked it): log-concave iff λ_max(W + D) ≤ 4 (Zhang, Prop. 1).
    concavityIndex: lambdaMaxWD / 4,
    logConcave: lambdaMaxWD <= 4,
    logConcaveCriterion: 'iff',
    fill: null,
    logZRelation: form.logZOffset - (n / 2) * Math.log(2 * Math.PI),
    spectrumMethod: 'dense',
    ordering: null,
    timings: { spectrum: total, shift: 0, ordering: 0, factor: 0, total },
  };
}
