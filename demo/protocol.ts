// Messages between the demo page (main.ts) and its Web Worker (worker.ts).
/** Chains side by side: enough for ESS and R̂ across chains to mean something, few enough to stay quick. */
export const LIVE_CHAINS = 4;
/** AIS budget of the log Z read-out: runs, and temperatures per run (fewer on large lattices). */
export const AIS_RUNS = 32;
export const aisSteps = (n: number): number => Math.max(200, Math.min(1000, Math.round(1e6 / n)));

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
  /** Chains sampled side by side (all estimates pool them). */
  chains: number;
  /** Mean acceptance: DHMC's acceptance statistic; 1 for the Gibbs samplers (every draw is kept). */
  accept: number;
  /** ESS and rank-normalised split-R̂ of the magnetisation trace over the chains (null: too short). */
  ess: number | null;
  rhat: number | null;
  /** Draws per trace point (the traces are thinned to stay short). */
  traceThin: number;
  logZ: LogZReadout | null;
}

/** log Z by AIS, run a piece at a time between sampling batches; final once runs === totalRuns. */
export interface LogZReadout {
  estimator: string;
  value: number;
  stdErr: number;
  runs: number;
  totalRuns: number;
  /** The runs' log weights (what the engine computed; value and stdErr are JavaScript arithmetic on them). */
  logWeights: number[];
}

export type FromWorker =
  | { type: 'hello' }
  | Frame
  | { type: 'result'; id: number; marginals: Float64Array[]; marginalStdErr: Float64Array[] | null; diagnostics: Record<string, unknown>; logZ: number | null }
  | { type: 'error'; id: number | null; message: string };
