// The relaxation's data types, shared by its builders (relaxation.ts, fft-factor.ts) and the code that
// binds it into an engine (relaxation-bound.ts); a file of its own so none of them import each other.
import type { CanonicalForm } from '../core/canonical.ts';

/**
 * The FFT factor of a periodic lattice's relaxation: M applied by fast Fourier transforms (translation-invariant
 * W).
 */
export interface FFTFactorData {
  /** Tag of the FFT factor. */
  kind: 'fft';
  /** Number of bits n (lattice sites). */
  n: number;
  /** Dimension m of x (equal to n). */
  m: number;
  /** Lattice side lengths (powers of two), first axis slowest, as in latticeIndex. */
  shape: number[];
  /** √(λ_k(W) + d) for every wave vector k, in the lattice's row-major order. */
  sqrtSpectrum: Float64Array;
}

/** M as plain data: dense row-major n × m, or CSR rows (n rows, column indices < m). */
export type FactorData =
  | { kind: 'dense'; n: number; m: number; values: Float64Array }
  | { kind: 'sparse'; n: number; m: number; rowPtr: Int32Array; col: Int32Array; values: Float64Array }
  | FFTFactorData;

/** A relaxation as plain data: W + D = M Mᵀ for the canonical form's coupling matrix W. */
export interface RelaxationData {
  /** The model's canonical pairwise form (biases a, couplings W over bits). */
  form: CanonicalForm;
  /** The diagonal D added to W (per bit). */
  d: Float64Array;
  /** The factor M (n × m) with M Mᵀ = W + D. */
  factor: FactorData;
}

/**
 * How M was built: dense Cholesky, dense symmetric eigendecomposition, sparse Cholesky, the incidence factor (one
 * column per coupling) or FFT.
 */
export type FactorKind = 'dense-cholesky' | 'dense-eigen' | 'sparse-cholesky' | 'incidence' | 'fft';

/** A relaxation with the facts of its construction: the factor's kind, the shift, spectra and timings. */
export interface Relaxation extends RelaxationData {
  /** How the factor M was built. */
  factorKind: FactorKind;
  /**
   * How d was chosen: 'martens', 'min-lambda-max', 'martens-fallback' (min-lambda-max on a model too
   * large for it), 'user', 'incidence' (d_i = Σ_j |w_ij|, the incidence factor's own).
   */
  shiftKind: 'martens' | 'min-lambda-max' | 'martens-fallback' | 'user' | 'incidence';
  /** Smallest and largest eigenvalue of W (within-block entries 0). Lanczos estimates on large models. */
  lambdaMin: number;
  /** λ_max(W) (see lambdaMin). */
  lambdaMaxW: number;
  /** λ_min(W + D) and λ_max(W + D). */
  lambdaMinWD: number;
  /** λ_max(W + D) (see lambdaMinWD). */
  lambdaMaxWD: number;
  /** λ_max(S(W+D)S) (see relaxation.ts's header); p(x) is log-concave when ≤ 1. All-free models: λ_max(W+D)/4. */
  concavityIndex: number;
  /** Zhang Prop. 1 (extended to one-hot blocks): p(x) is log-concave. */
  logConcave: boolean;
  /** 'iff': logConcave is exact (all blocks ≤ 2 states); 'sufficient': false may still be log-concave. */
  logConcaveCriterion: 'iff' | 'sufficient';
  /** nnz of the sparse Cholesky factor L (diagonal included); null for dense factors. */
  fill: number | null;
  /** log Z_model = log ∫ exp(relaxed log density) dx + logZRelation. */
  logZRelation: number;
  /** 'dense' (Householder + QL, exact to rounding) or 'lanczos' (estimates). */
  spectrumMethod: 'dense' | 'lanczos';
  /** Sparse factor only: bit eliminated k-th (the ordering; column k of M belongs to it). */
  ordering: Int32Array | null;
  /** Setup time in seconds, by phase. */
  timings: { spectrum: number; shift: number; ordering: number; factor: number; total: number };
}
