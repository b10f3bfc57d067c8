// Messages between the problems page (problems.ts) and its worker (problems-worker.ts).

/** What the page can ask for: marginals from the samplers and mean field, log Z from AIS and mean field. */
export const PROBLEM_METHODS = ['gibbs', 'blockgibbs', 'dhmc', 'mf', 'ais'] as const;
export type ProblemMethod = (typeof PROBLEM_METHODS)[number];

export interface SolveRequest {
  type: 'solve';
  /** The model file's text and its format. */
  text: string;
  format: 'uai' | 'fg';
  name: string;
  methods: ProblemMethod[];
  /** Wall-clock budget per method (seconds): budgets double until the next run would pass it. */
  seconds: number;
  seed: number;
}

export type ToProblemWorker = SolveRequest | { type: 'stop' };

/** One run of one method at one budget. */
export interface ProblemPoint {
  type: 'point';
  method: ProblemMethod;
  /** Samples per chain, AIS temperatures, or mean-field restarts. */
  budget: number;
  seconds: number;
  logZ: number | null;
  logZStdErr: number | null;
  logZKind: string | null;
  /** Largest |p − p_exact| over variables and states (null without exact marginals). */
  maxMarginalError: number | null;
  /** Mean over variables of the largest error per variable. */
  meanMarginalError: number | null;
}

export type FromProblemWorker =
  | { type: 'hello' }
  | { type: 'model'; name: string; n: number; factors: number; maxArity: number }
  | { type: 'exact'; logZ: number | null; seconds: number; refused: string | null }
  | ProblemPoint
  | { type: 'done'; stopped: boolean }
  | { type: 'error'; message: string };
