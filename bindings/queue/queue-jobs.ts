// The job queue's jobs as data: what a job carries (JSON, validated as untrusted input on the
// worker), the Redis keys beside the queue, and the limits. Shared by the client (queue-client.ts)
// and the worker (queue-worker.ts, queue-thread.ts); no BullMQ import.
import { ModelError } from '../core/errors.ts';
import { PARALLEL_METHODS, type ParallelMethod } from '../parallel/parallel-job.ts';
import { PRECISIONS, SCANS } from '../samplers/gibbs-lanes.ts';
import { PROBABILITY_TABLES } from '../samplers/gibbs-table.ts';

/** BullMQ queue name (the Redis keys are bull:relaxmrf:…; blobs and results relaxmrf:…). */
export const QUEUE_NAME = 'relaxmrf';
/** Largest job payload (JSON characters); a job carries options and indices, the model goes by hash. */
export const MAX_JOB_CHARS = 1 << 20;
/** Largest blob (model or schedule): Redis' string limit. */
export const MAX_BLOB_BYTES = 512 * 2 ** 20;
/** Blobs, results and cancel marks expire after a day (a run that died leaves nothing behind for long). */
export const KEY_TTL_MS = 24 * 3600 * 1000;

export const keys = {
  blob: (hash: string) => `relaxmrf:blob:${hash}`,
  result: (jobId: string) => `relaxmrf:result:${jobId}`,
  cancelled: (run: string) => `relaxmrf:cancelled:${run}`,
};

/**
 * The methods a queue runs as one job on one worker: every method but the chain samplers', which go
 * out chain by chain (bp, trw, bounds, treegibbs, pt, sw and wolff were sent and refused by the
 * worker's payload check, while --queue promised any method).
 */
export const WHOLE_METHODS = ['exact', 'mf', 'mfrp', 'bp', 'trw', 'bounds', 'treegibbs', 'pt', 'sw', 'wolff'] as const;

/** One job. chains: runJob's chains of `method`; ais: a piece of AIS runs; logz: a whole log Z estimate; infer: a whole run of a method without chain jobs; slices: slices of a sliced exact plan (the worker plans again: the plan is deterministic). */
export type QueueJob =
  | { v: 1; run: string; kind: 'chains'; model: string; method: ParallelMethod; opts: JobOpts; chains: number[] }
  | { v: 1; run: string; kind: 'ais'; model: string; opts: JobOpts; firstRun: number; runs: number; schedule: string | null }
  | { v: 1; run: string; kind: 'logz'; model: string; opts: JobOpts }
  | { v: 1; run: string; kind: 'infer'; model: string; method: (typeof WHOLE_METHODS)[number]; opts: JobOpts }
  | { v: 1; run: string; kind: 'slices'; model: string; opts: JobOpts; slices: number[] };

/** Options as data: numbers, booleans, short strings, arrays of those (or of number pairs), and the ais / exact / relaxation groups. */
export type JobOpts = Record<string, unknown>;

type Kind = 'number' | 'boolean' | 'string' | 'numbers' | 'strings' | 'pairs' | 'string-or-numbers' | 'group';
const OPTION_KINDS: Record<string, Kind> = {
  seed: 'number', chains: 'number', samples: 'number', burnin: 'number', batches: 'number', targetAccept: 'number',
  stepSize: 'number', leapfrogSteps: 'number', margin: 'number', traceBudget: 'number', restarts: 'number',
  trials: 'number', maxConstraints: 'number', minConstraints: 'number', maxSweeps: 'number', tol: 'number',
  budget: 'number', budgetFactor: 'number', runs: 'number', steps: 'number', population: 'number',
  sweepsPerStep: 'number', pilotRuns: 'number', pilotSteps: 'number', thin: 'number', covarianceCap: 'number',
  maxTableEntries: 'number', maxMessageEntries: 'number', maxFlops: 'number', maxMemory: 'number', orderSearchWork: 'number', orderRestarts: 'number',
  treeSearch: 'boolean', speedSlicing: 'boolean', adaptMass: 'boolean', empirical: 'boolean', orderedStarts: 'boolean', collapse: 'boolean', lanes: 'boolean', raoBlackwell: 'boolean',
  // BP, TRW and bounds; parallel tempering (the whole-run methods past exact, mf and mfrp).
  damping: 'number', maxIterations: 'number', tolerance: 'number', trwSteps: 'number', trwTrees: 'number',
  replicas: 'number', betaMin: 'number', adaptLadder: 'boolean', ladder: 'numbers', moves: 'string', probabilityTable: 'string',
  method: 'string', shift: 'string', factor: 'string', parametrisation: 'string', logz: 'string', estimator: 'string',
  transition: 'string', schedule: 'string', reference: 'string', covariance: 'string', precision: 'string', scan: 'string',
  integrator: 'string-or-numbers', trace: 'string-or-numbers', pairs: 'pairs', orderings: 'strings',
  ais: 'group', exact: 'group', relaxation: 'group',
};
/** String options with a fixed set of values (Gibbs's and AIS's `precision`, Gibbs's `scan`). */
const OPTION_VALUES: Record<string, readonly string[]> = { precision: PRECISIONS, scan: SCANS, probabilityTable: PROBABILITY_TABLES };
const MAX_ARRAY = 1 << 16;
const MAX_STRING = 64;

/** Checks that `o` is options as data (see JobOpts); `where` names it in the message. */
export function checkJobOpts(o: unknown, where = 'options', depth = 0): JobOpts {
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw new ModelError(`${where} must be an object`);
  for (const [k, v] of Object.entries(o)) {
    const kind = OPTION_KINDS[k];
    const name = `${where}.${k}`;
    if (kind === undefined) throw new ModelError(`${name} is not an option that crosses the queue`);
    if (v === undefined) continue;
    const isNum = (x: unknown) => typeof x === 'number' && Number.isFinite(x);
    const isStr = (x: unknown) => typeof x === 'string' && x.length <= MAX_STRING;
    const arrayOf = (test: (x: unknown) => boolean) => Array.isArray(v) && v.length <= MAX_ARRAY && v.every(test);
    const ok =
      kind === 'number' ? isNum(v)
      : kind === 'boolean' ? typeof v === 'boolean'
      : kind === 'string' ? isStr(v)
      : kind === 'numbers' ? arrayOf(isNum)
      : kind === 'strings' ? arrayOf(isStr)
      : kind === 'pairs' ? arrayOf((p) => Array.isArray(p) && p.length === 2 && p.every(isNum))
      : kind === 'string-or-numbers' ? isStr(v) || arrayOf(isNum)
      : depth === 0 && (checkJobOpts(v, name, 1), true);
    if (!ok) throw new ModelError(`${name} has a bad value (${kind === 'group' ? 'an option group, one level deep' : `expected ${kind}`})`);
    const values = OPTION_VALUES[k];
    if (values && !values.includes(v as string)) throw new ModelError(`${name} must be one of ${values.join(', ')}, got "${String(v)}"`);
  }
  return o as JobOpts;
}

const HASH = /^[0-9a-f]{64}$/;
const RUN = /^[0-9a-f]{8,64}$/;

/** A job's payload from the queue (untrusted): its shape checked, or a ModelError saying what is wrong. */
export function checkJob(data: unknown): QueueJob {
  let text: string;
  try {
    text = JSON.stringify(data);
  } catch {
    throw new ModelError('job payload is not JSON data');
  }
  if (text === undefined || text.length > MAX_JOB_CHARS) throw new ModelError(`job payload is ${text === undefined ? 'empty' : `${text.length} characters, over the limit of ${MAX_JOB_CHARS}`}`);
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new ModelError('job payload must be an object');
  const j = data as Record<string, unknown>;
  if (j.v !== 1) throw new ModelError(`job payload version ${String(j.v)} is not 1 (a worker of another relaxmrf version?)`);
  if (typeof j.run !== 'string' || !RUN.test(j.run)) throw new ModelError('job payload: run must be a hex id');
  if (typeof j.model !== 'string' || !HASH.test(j.model)) throw new ModelError('job payload: model must be a sha256 hex hash');
  const opts = checkJobOpts(j.opts, 'job options');
  const int = (x: unknown, min: number) => typeof x === 'number' && Number.isSafeInteger(x) && x >= min;
  const allowed = (extra: string[]) => {
    for (const k of Object.keys(j)) if (!['v', 'run', 'kind', 'model', 'opts', ...extra].includes(k)) throw new ModelError(`job payload: unknown field "${k}"`);
  };
  switch (j.kind) {
    case 'chains': {
      allowed(['method', 'chains']);
      if (!PARALLEL_METHODS.includes(j.method as ParallelMethod)) throw new ModelError(`job payload: method must be one of ${PARALLEL_METHODS.join(', ')}`);
      const c = j.chains;
      if (!Array.isArray(c) || c.length === 0 || c.length > MAX_ARRAY || !c.every((x, i) => int(x, 0) && (i === 0 || x > c[i - 1]))) throw new ModelError('job payload: chains must be increasing chain indices');
      return { v: 1, run: j.run, kind: 'chains', model: j.model, method: j.method as ParallelMethod, opts, chains: c as number[] };
    }
    case 'ais': {
      allowed(['firstRun', 'runs', 'schedule']);
      if (!int(j.firstRun, 0) || !int(j.runs, 1)) throw new ModelError('job payload: firstRun and runs must be integers (≥ 0, ≥ 1)');
      if (j.schedule !== null && (typeof j.schedule !== 'string' || !HASH.test(j.schedule))) throw new ModelError('job payload: schedule must be null or a sha256 hex hash');
      return { v: 1, run: j.run, kind: 'ais', model: j.model, opts, firstRun: j.firstRun as number, runs: j.runs as number, schedule: j.schedule };
    }
    case 'logz':
      allowed([]);
      return { v: 1, run: j.run, kind: 'logz', model: j.model, opts };
    case 'slices': {
      allowed(['slices']);
      const s = j.slices;
      if (!Array.isArray(s) || s.length === 0 || s.length > MAX_ARRAY || !s.every((x, i) => int(x, 0) && (i === 0 || x > s[i - 1]))) throw new ModelError('job payload: slices must be increasing slice indices');
      return { v: 1, run: j.run, kind: 'slices', model: j.model, opts, slices: s as number[] };
    }
    case 'infer':
      allowed(['method']);
      if (!WHOLE_METHODS.includes(j.method as (typeof WHOLE_METHODS)[number])) throw new ModelError(`job payload: method must be one of ${WHOLE_METHODS.join(', ')}`);
      return { v: 1, run: j.run, kind: 'infer', model: j.model, method: j.method as (typeof WHOLE_METHODS)[number], opts };
    default:
      throw new ModelError(`job payload: unknown kind "${String(j.kind)}"`);
  }
}

/** A queue URL: redis://[user:password@]host[:port][/db] or rediss://… (TLS); ModelError otherwise. */
export function parseQueueURL(url: string): { url: string; display: string } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ModelError(`--queue: "${url}" is not a URL (expected redis://HOST:PORT[/DB] or rediss://[:PASSWORD@]HOST:PORT[/DB])`);
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new ModelError(`--queue: "${u.protocol}" is not a Redis URL scheme (expected redis:// or rediss://)`);
  if (!u.hostname) throw new ModelError(`--queue: "${url}" names no host`);
  const db = u.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d{1,2}$/.test(db)) throw new ModelError(`--queue: the database "${db}" must be a number (e.g. redis://HOST:6379/0)`);
  if (u.search || u.hash) throw new ModelError('--queue: the URL takes no query or fragment');
  // Shown in messages and diagnostics: never the password.
  const display = `${u.protocol}//${u.hostname}${u.port ? `:${u.port}` : ''}/${db || '0'}`;
  return { url, display };
}
