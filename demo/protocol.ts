// Messages between the demo page (main.ts) and its Web Worker (worker.ts).
export type DemoMethod = 'gibbs' | 'blockgibbs' | 'dhmc';

export interface LatticeSpec {
  /** Side of the square lattice. */
  size: number;
  beta: number;
  /** Field h (log p = β (h Σσ + Σ σσ')). */
  h: number;
  periodic: boolean;
}

export interface LiveSpec extends LatticeSpec {
  method: DemoMethod;
  seed: number;
}

/** A one-shot infer() call on the lattice (any method of infer(), with its options). */
export interface RunSpec extends LatticeSpec {
  method: 'exact' | DemoMethod;
  seed?: number;
  chains?: number;
  samples?: number;
  burnin?: number;
  batches?: number;
}

export type ToWorker = { type: 'start'; spec: LiveSpec } | { type: 'stop' } | { type: 'run'; id: number; spec: RunSpec };

export interface Frame {
  type: 'frame';
  gen: number;
  /** Per site: the configuration (0 = σ −1, 1 = σ +1), or for DHMC p(σ = +1 | x). */
  picture: Float64Array;
  /** Running estimate of p(σ_v = +1) and its batch-means standard error. */
  marginals: Float64Array;
  stdErr: Float64Array;
  sweeps: number;
  batches: number;
  /** Change rate (Gibbs, block Gibbs) or mean acceptance statistic (DHMC). */
  rate: number;
  maxStdErr: number | null;
  sweepsPerSecond: number;
}

export type FromWorker =
  | { type: 'hello' }
  | Frame
  | { type: 'result'; id: number; marginals: Float64Array[]; marginalStdErr: Float64Array[] | null; diagnostics: Record<string, unknown>; logZ: number | null }
  | { type: 'error'; id: number | null; message: string };
