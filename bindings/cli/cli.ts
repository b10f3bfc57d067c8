// relaxmrf command line. Exit codes: 0 ok, 2 bad input or usage (one line on stderr, no stack),
// 3 the engine refused the job (e.g. treewidth past the exact limit), 1 anything unexpected.

import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { loadEngine } from '../core/wasm-node.ts';
import { loadModelFile } from '../io/files.ts';
import { infer, METHODS, type InferOptions, type Method } from '../infer.ts';
import { PARALLEL_METHODS, type ParallelMethod } from '../parallel/parallel.ts';
import { localRun as runHere } from './local-run.ts';
import { PRECISIONS, SCANS } from '../samplers/gibbs-lanes.ts';
import { PROBABILITY_TABLES } from '../samplers/gibbs-table.ts';
import { GIBBS_DEFAULTS } from '../samplers/gibbs.ts';
import { PT_MOVES } from '../samplers/tempering.ts';
import { BP_SCHEDULES } from '../variational/bp.ts';
import { isingLattice, pottsLattice } from '../core/builders.ts';
import { writeMAR, writePR } from '../io/formats.ts';
import { writeJSON } from './json-stream.ts';
import { writePlotFile } from './plot-file.ts';
import { OutputError, unwritablePath, writeOutputs } from './output-files.ts';
import { commandHelp, COMMANDS } from './help.ts';
import { exactDecode } from './exact-decode.ts';
import { CancelledError, EngineError, FormatError, ModelError } from '../core/errors.ts';
import type { Model } from '../core/model.ts';
import { MAX_CHAINS, MAX_CONCURRENCY, MAX_LOOP_COUNT, MAX_WORKERS } from '../core/options.ts';
import type { InferenceResult, Progress } from '../core/result.ts';
import { learnCommand, LearnUsageError, LEARN_USAGE } from './learn-command.ts';
import { ArgsError, decimalNumber, parseOptions } from './args.ts';

const USAGE = `usage:
  relaxmrf infer MODEL [--method exact|gibbs|pt|sw|wolff|treegibbs|blockgibbs|dhmc|mala|mf|mfrp|bp|trw|bounds] [--seed N] [--json]
                       [--out-format uai] [--out PREFIX] [--plot FILE.svg]
      exact:              [--map]  a MAP configuration (max-product elimination; --out-format uai: the UAI MAP format)
                          [--max-memory BYTES]  WASM memory exact inference's messages may use (K/M/G suffixes; default 2G):
                                          past it the junction tree gives way to bucket elimination, whose plan is
                                          sliced (conditioned on a few variables, slices summed; --map, --samples too);
                                          exit 3 with the smallest budget that would do when even slicing cannot fit
                          [--workers W]   the slices on W worker threads (the same result for any W; --map, --samples too)
                          [--samples N]  N exact i.i.d. configurations, one per line (--seed N; --out PREFIX.samples)
      samplers:           [--samples N] [--burnin N] [--chains N]
                          [--workers W]   run the chains on W worker threads (gibbs, blockgibbs, dhmc, mala);
                                          the same estimates as without (plus workers, completedChains);
                                          default: gibbs runs of ≥ 1e8 site updates and ≥ 1000 sweeps
                                          per chain that repay the threads' start-up, and blockgibbs,
                                          dhmc, mala runs of ≥ 5e7 bit-steps (chains × sweeps × bits,
                                          × leapfrog steps for dhmc), use min(chains, cores);
                                          0: this thread. Ctrl-C on workers:
                                          the result of the batches completed (partial); on this
                                          thread it ends the run (the thread cannot listen)
      gibbs:              [--precision f64|f32]   f32: four chains per SIMD vector (f64, default: two)
                          [--scan sequential|colored]   colored: the variables color by color
                          [--probability-table auto|on|off]   each site's conditional from a table built
                                          once (binary variables, ≤ 8 neighbours; the same chains)
      any method:         [--queue redis://HOST:PORT[/DB]]   run as jobs on \`relaxmrf worker\` processes
                                          (rediss://:PASSWORD@HOST:PORT for TLS); the same estimates as
                                          without (plus workers, completedChains, queue); Ctrl-C: partial
      relaxation (blockgibbs, dhmc, mala, pt --pt-moves hmc; --logz zhang, mirror, ais --ais-transition relaxed|hmc):
                          [--shift martens|min-lambda-max] [--factor auto|dense-cholesky|dense-eigen|sparse-cholesky|incidence|fft]
                                          min-lambda-max: a per-bit shift minimising λ_max(W + D) (models
                                          of ≤ 200 bits with dense couplings; else Martens', and the
                                          diagnostics' shift says martens-fallback); default martens,
                                          none with --factor incidence (which has a shift of its own)
      pt:                 [--replicas R] [--ladder B0,B1,…,1] [--pt-moves gibbs|hmc]   parallel tempering with
                          Gibbs moves (on the factor graph itself for factors of arity > 2) or HMC replicas
                          on the relaxed density p_β(x) (--pt-moves hmc [--leapfrog-steps L]) (default
                          8 replicas, 16 with hmc: 0, then geometric from 0.05 to 1, re-spaced for equal swap rates
                          during burn-in; a given ladder — strictly increasing in [0, 1], ending at 1 —
                          stays fixed); log Z by stepping stone when the ladder starts at 0
      sw, wolff:          Swendsen–Wang / Wolff cluster moves for ferromagnetic Ising and Potts models
                          (any fields); a model with any negative coupling is refused
      dhmc:               [--leapfrog-steps L] [--target-accept A] [--parametrisation whitened|zhang]
      mala:               [--target-accept A] [--parametrisation whitened|zhang]
      any method:         [--logz zhang|mirror|chib|ais]   also estimate log Z (reported with its standard error)
      --logz ais:         [--ais-runs R] [--ais-steps T] [--ais-population P] [--ais-transition tree|gibbs|relaxed|hmc]
                          (defaults 32 runs, 2000 temperatures, population 1 = independent runs, tree —
                          gibbs on the factor graph for models with factors of arity > 2, which tree
                          and relaxed refuse; P > 1: population annealing, R a multiple of P — what
                          glassy models need)
                          [--ais-precision f64|f32]   f32: the tree / gibbs transitions four chains per
                                          SIMD vector (other chains, same targets; default f64)
                          [--workers W]   the populations (or groups of runs) on W worker threads, the
                                          same estimate for any W (plus logz.workers); default: runs of
                                          ≥ 1e8 site updates use min(populations, cores); 0: this thread
      mf:     [--restarts J] [--budget V] [--max-sweeps S]
              (defaults 10, 1e8, 1000: two ordered starts, then up to J random restarts while the
              budget of V coupling visits lasts — one sweep costs variables + 2·edges; with factors
              of arity > 2 V counts table entries: a sweep costs Σ (arity + 1)·table size)
      mfrp:   [--restarts J] [--trials T] [--max-constraints M] [--budget V] [--budget-factor K] [--max-sweeps S]
              (defaults 10, 5, at most 20, 1e8, 4, 1000: m = 0 is mean field with the same restarts and budget;
              m = 1, 2, … and J per projection as fit K × mean field's work, unless M is given; binary
              models with positive potentials and no evidence: mf takes the others)
      bp, trw, bounds:    [--damping A] [--schedule parallel|sequential|residual] [--max-iterations N] [--tolerance T]
              (defaults 0, parallel, 1000, 1e-9, T bounding each message's change in log space; trw and bounds on
              models with factors of arity > 2: residual with damping 0.5 unless --schedule or --damping is
              given: loopy BP's messages in log space; bp reports the Bethe
              estimate of log Z, trw an upper bound (any arity), bounds the interval
              [mf, trw] as logZLower/logZUpper)
      trw, bounds:        [--trw-steps S]  conditional-gradient steps on the edge appearance probabilities (default 10)
      --plot FILE.svg:    the node marginals as an SVG figure (a heatmap for 2-D built-in lattices,
                          points with ± 2 standard-error bars otherwise), written after the result
${LEARN_USAGE}
  relaxmrf worker --queue redis://HOST:PORT[/DB] [--concurrency N] [--name NAME] [--lock-ms MS]
                                     run queued jobs until interrupted (N compute threads, default:
                                     cores; MS: lock duration, default 30000 — a killed worker's job
                                     is retried elsewhere after about 2 × MS)
  relaxmrf demo                      the default job (npm start)
  relaxmrf help [infer|learn|worker|demo] | --help | --version

MODEL is a .uai file (with MODEL.evid applied if present), a libDAI .fg file, or a built-in lattice:
  ising:32x32[,beta=1][,h=0][,J=1][,periodic]     (1 to 3 sides)
  potts:16x16[,q=3][,beta=1][,J=1][,periodic]`;

class UsageError extends Error {}

/**
 * An integer option, ≥ min and ≤ max (default MAX_LOOP_COUNT: counts the engine's loops take as i32s;
 * past that they wrapped around — 2^32 leapfrog steps ran as none, 2^32 + 1 as one).
 */
function integer(name: string, v: string | undefined, min: number, max: number = MAX_LOOP_COUNT): number | undefined {
  if (v === undefined) return undefined;
  const x = Number(v);
  if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(x) || x < min || x > max) {
    // "1e9" is an integer in range, written otherwise: say so rather than contradict it.
    const y = decimalNumber(v);
    if (Number.isSafeInteger(y) && y >= min && y <= max) throw new UsageError(`--${name} must be written in digits, got "${v}" (${y})`);
    throw new UsageError(`--${name} must be an integer ${max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `in [${min}, ${max}]`}, got "${v}"`);
  }
  return x;
}

/** A byte count: an integer with an optional K, M or G suffix (powers of 1024). */
function bytes(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([KMG]i?B?)?\s*$/i.exec(v);
  const x = m ? Number(m[1]) * 1024 ** (m[2] ? 'KMG'.indexOf(m[2][0].toUpperCase()) + 1 : 0) : NaN;
  // "1e9" read as not a number of bytes at all: say what to write (as the integer options do).
  const exponent = /^\s*\d+(\.\d+)?e\d+\s*$/i.test(v) && Number.isSafeInteger(Number(v)) ? ` (write it in digits: ${Number(v)})` : '';
  if (!(x >= 1) || !Number.isFinite(x)) throw new UsageError(`--${name} must be a number of bytes (suffix K, M or G allowed), got "${v}"${exponent}`);
  return Math.floor(x);
}

function positive(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const x = decimalNumber(v);
  if (v.trim() === '' || !Number.isFinite(x) || !(x > 0)) throw new UsageError(`--${name} must be a positive number, got "${v}"`);
  return x;
}

/** A built-in lattice model from a spec such as "ising:32x32,beta=0.4,periodic". */
export function builtinModel(spec: string): Model {
  // Everything after the first colon is the shape and options: "ising:3x3:foo" ran a 3×3 lattice.
  const colon = spec.indexOf(':'), kind = colon < 0 ? spec : spec.slice(0, colon), rest = colon < 0 ? '' : spec.slice(colon + 1);
  const [shapeText, ...opts] = rest.split(',');
  // Sides in digits ("1e1x2" was a 10×2 lattice).
  const shape = shapeText.split('x').map((L) => (/^\d+$/.test(L) ? Number(L) : NaN));
  if (shape.some((L) => !Number.isInteger(L) || L < 1)) throw new UsageError(`${spec}: bad lattice shape "${shapeText}" (expected e.g. 32x32)`);
  const params: Record<string, number> = {};
  let periodic = false;
  for (const o of opts) {
    if (o === 'periodic') {
      if (periodic) throw new UsageError(`${spec}: periodic is given twice`);
      periodic = true;
      continue;
    }
    // "beta=1=2" ran at β = 1.
    if (o.split('=').length > 2) throw new UsageError(`${spec}: bad option "${o}"`);
    const [k, v] = o.split('=');
    // "periodic=1" was called an unknown option in a message that listed periodic as allowed.
    if (k === 'periodic') throw new UsageError(`${spec}: periodic takes no value ("periodic", not "${o}")`);
    const x = v === undefined ? NaN : decimalNumber(v);
    if (v === undefined || v.trim() === '' || !Number.isFinite(x)) throw new UsageError(`${spec}: bad option "${o}"`);
    // A repeated option silently kept its last value.
    if (Object.hasOwn(params, k)) throw new UsageError(`${spec}: ${k} is given twice`);
    params[k] = x;
  }
  const allowed = kind === 'ising' ? ['beta', 'h', 'J'] : ['beta', 'J', 'q'];
  for (const k of Object.keys(params)) if (!allowed.includes(k)) throw new UsageError(`${spec}: unknown option "${k}" for ${kind} (allowed: ${allowed.join(', ')}, periodic)`);
  if (kind === 'ising') return isingLattice({ shape, periodic, beta: params.beta ?? 1, h: params.h ?? 0, J: params.J ?? 1 });
  if (kind === 'potts') return pottsLattice({ shape, periodic, q: params.q ?? 3, beta: params.beta ?? 1, J: params.J ?? 1 });
  throw new UsageError(`unknown built-in model "${kind}" (expected ising:… or potts:…)`);
}

async function loadModel(source: string): Promise<{ model: Model; description: string; labels?: number[]; evidence?: EvidenceRead }> {
  if (/^(ising|potts):/.test(source)) return { model: builtinModel(source), description: source };
  const { model, format, evidence, labels } = await loadModelFile(source);
  const ev = evidence && evidence.size ? `, ${evidence.size} observed` : '';
  // Evidence is read for .uai models only: a MODEL.fg.evid beside the file was ignored without a word.
  if (format === 'fg' && existsSync(source + '.evid')) process.stderr.write(`relaxmrf: note: ${source}.evid is not read: evidence files apply to .uai models\n`);
  // Only MODEL.uai.evid is read: FOO.evid beside FOO.uai, or a name differing in case, was ignored without a word.
  if (format === 'uai') for (const other of unreadEvidence(source)) process.stderr.write(`relaxmrf: note: ${other} is not read: the evidence of ${source} is read from ${source}.evid\n`);
  // .fg labels other than 0, 1, …: outputs are in increasing label order, and say which label each is.
  const renumbered = labels && labels.some((l, i) => l !== i) ? labels : undefined;
  return { model, description: `${source} (${format}${ev})`, labels: renumbered, evidence: evidence ? { file: `${source}.evid`, observed: evidence.size } : undefined };
}

/** Evidence-like files beside a .uai model that are not its MODEL.uai.evid: FOO.evid, or a name differing only in case. */
function unreadEvidence(source: string): string[] {
  const dir = dirname(source), base = basename(source), stem = base.replace(/\.uai$/i, '');
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const wanted = [`${base}.evid`, `${stem}.evid`].map((n) => n.toLowerCase());
  return names.filter((n) => n !== `${base}.evid` && wanted.includes(n.toLowerCase())).map((n) => join(dir, n));
}

/** The evidence file read beside a .uai model: its path and how many variables it observes. */
interface EvidenceRead {
  file: string;
  observed: number;
}

/**
 * Progress on stderr once a run has taken a second: a bar on a terminal, a line every few seconds
 * otherwise; with the time left at the phase's pace so far, once it has run for two seconds. A
 * phase shown once is also shown at its end (its last update fell in the throttle's gap: the bar
 * stayed at 99 %, a log's last line at 21 %).
 */
function progressReporter(): (p: Progress) => void {
  const t0 = performance.now();
  // RELAXMRF_PROGRESS_MS changes the one-second delay (scripts and tests set 0).
  const delay = Number(process.env.RELAXMRF_PROGRESS_MS ?? 1000);
  let last = -Infinity;
  const tty = process.stderr.isTTY;
  const bar = tty ? terminalBar() : null;
  const firstSeen = new Map<string, { t: number; done: number }>();
  const shown = new Set<string>(), ended = new Set<string>();
  return (p) => {
    const now = performance.now();
    if (!firstSeen.has(p.phase)) firstSeen.set(p.phase, { t: now, done: p.done });
    const end = p.done >= p.total;
    // Lines every 5 s off a terminal (every call with RELAXMRF_PROGRESS_MS=0: tests follow the phases).
    const due = now - t0 >= delay && now - last >= (tty ? 100 : Math.min(5000, 5 * delay));
    if (!due && !(end && shown.has(p.phase) && !ended.has(p.phase))) return;
    last = now;
    shown.add(p.phase);
    if (end) ended.add(p.phase);
    const frac = p.total ? p.done / p.total : 0;
    const left = timeLeft(firstSeen.get(p.phase)!, now, p);
    if (bar) {
      const width = 30, fill = Math.round(frac * width);
      bar(`\r${p.phase} [${'#'.repeat(fill)}${'.'.repeat(width - fill)}] ${(100 * frac).toFixed(0)}%${left ? `, ${left}` : ''}   `, end);
    } else {
      process.stderr.write(`${p.phase}: ${(100 * frac).toFixed(0)}% (${p.done}/${p.total})${left ? `, ${left}` : ''}\n`);
    }
  };
}

let barWriter: ((text: string, end: boolean) => void) | null = null;
/**
 * Writes a terminal's progress bar, whose line stays open for the next frame; anything else written
 * to stderr first ends that line (a warning or the Ctrl-C notice was glued to "99%").
 */
function terminalBar(): (text: string, end: boolean) => void {
  if (barWriter) return barWriter;
  let open = false;
  const write = process.stderr.write.bind(process.stderr) as (chunk: string) => boolean;
  process.stderr.write = ((...args: Parameters<typeof process.stderr.write>) => {
    if (open) (open = false), write('\n');
    return (write as (...a: unknown[]) => boolean)(...args);
  }) as typeof process.stderr.write;
  return (barWriter = (text, end) => {
    write(end ? `${text}\n` : text);
    open = !end;
  });
}

/** "about 3 h 50 min left" at the pace since the phase was first seen; '' before 2 s or any progress, and at the end. */
export function timeLeft(first: { t: number; done: number }, now: number, p: Progress): string {
  const elapsed = (now - first.t) / 1000, done = p.done - first.done;
  if (elapsed < 2 || done <= 0 || p.done >= p.total) return '';
  const s = (elapsed * (p.total - p.done)) / done;
  const min = Math.round(s / 60);
  const text = s < 90 ? `${Math.max(1, Math.round(s))} s` : min < 90 ? `${min} min` : `${Math.floor(min / 60)} h ${min % 60} min`;
  return `about ${text} left`;
}

/** The --json object (the contract: field names and order). Rows stay typed arrays; writeJSON writes them as arrays. */
export function jsonResult(model: Model, r: InferenceResult, labels?: number[], evidence?: EvidenceRead): Record<string, unknown> {
  const factors = model.nFactors + (model.logConst !== 0 ? 1 : 0);
  return {
    // evidence: the file read beside the model (a foreign one in range was applied with only "N observed" in the text).
    model: { n: model.n, factors, edges: model.countPairs(), maxArity: model.maxArity, ...(labels ? { labels } : {}), ...(evidence ? { evidence } : {}) },
    method: r.method,
    logZ: r.logZ,
    logZStdErr: r.logZStdErr,
    logZKind: r.logZKind,
    logZLower: r.logZLower ?? null,
    logZUpper: r.logZUpper ?? null,
    marginals: r.marginals,
    marginalStdErr: r.marginalStdErr,
    diagnostics: r.diagnostics,
    seconds: r.seconds,
    partial: r.partial,
    warnings: r.warnings ?? [],
  };
}

function summary(description: string, model: Model, r: InferenceResult, labels?: number[]): string {
  const lines = [`model     ${description}: ${model.n} variables, ${model.nFactors} factors (arity ≤ ${model.maxArity})`, `method    ${r.method}`];
  if (labels) lines.splice(1, 0, `labels    x0, x1, … are the file's variables ${labels.slice(0, 8).join(', ')}${labels.length > 8 ? ', …' : ''} (--json: model.labels)`);
  if (r.logZLower != null && r.logZUpper != null) lines.push(`log Z     in [${r.logZLower.toPrecision(12)}, ${r.logZUpper.toPrecision(12)}] (${r.logZKind})`);
  if (r.logZ !== null) lines.push(`log Z     ${r.logZ.toPrecision(12)}${r.logZStdErr !== null ? ` ± ${r.logZStdErr.toPrecision(3)}` : ''} (${r.logZKind})`);
  const show = Math.min(model.n, 8);
  for (let v = 0; v < show; v++) {
    const p = Array.from(r.marginals[v], (x) => x.toFixed(4)).join(' ');
    const se = r.marginalStdErr ? `  ± ${Array.from(r.marginalStdErr[v], (x) => x.toFixed(4)).join(' ')}` : '';
    lines.push(`x${v}`.padEnd(10) + p + se);
  }
  if (model.n > show) lines.push(`…         (${model.n - show} more; --json or --out-format uai for all)`);
  for (const [k, v] of Object.entries(r.diagnostics)) lines.push(k.padEnd(10) + ' ' + (typeof v === 'number' && !Number.isInteger(v) ? v.toPrecision(4) : String(v)));
  lines.push(`seconds   ${r.seconds.toFixed(3)}`);
  if (r.partial) lines.push('partial   true: the run was cut short; the estimates use what completed');
  return lines.join('\n');
}

/**
 * `--name -0.5` as `--name=-0.5`: Node's parser takes a value that starts with "-" for an option and
 * answered "argument is ambiguous" instead of the option's own range message.
 */
function joinNegativeValues(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i], next = argv[i + 1];
    if (a.startsWith('--') && !a.includes('=') && next !== undefined && /^-(\d|\.\d)/.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

async function inferCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseOptions({
    args: joinNegativeValues(argv),
    allowPositionals: true,
    options: {
      method: { type: 'string' },
      seed: { type: 'string' },
      samples: { type: 'string' },
      burnin: { type: 'string' },
      chains: { type: 'string' },
      workers: { type: 'string' },
      precision: { type: 'string' },
      scan: { type: 'string' },
      'probability-table': { type: 'string' },
      queue: { type: 'string' },
      restarts: { type: 'string' },
      trials: { type: 'string' },
      'max-constraints': { type: 'string' },
      'max-sweeps': { type: 'string' },
      budget: { type: 'string' },
      'budget-factor': { type: 'string' },
      shift: { type: 'string' },
      factor: { type: 'string' },
      'leapfrog-steps': { type: 'string' },
      replicas: { type: 'string' },
      'pt-moves': { type: 'string' },
      ladder: { type: 'string' },
      'target-accept': { type: 'string' },
      parametrisation: { type: 'string' },
      logz: { type: 'string' },
      'ais-runs': { type: 'string' },
      'ais-steps': { type: 'string' },
      'ais-population': { type: 'string' },
      'ais-precision': { type: 'string' },
      'ais-transition': { type: 'string' },
      damping: { type: 'string' },
      schedule: { type: 'string' },
      'max-iterations': { type: 'string' },
      tolerance: { type: 'string' },
      'trw-steps': { type: 'string' },
      json: { type: 'boolean' },
      'out-format': { type: 'string' },
      out: { type: 'string' },
      plot: { type: 'string' },
      map: { type: 'boolean' },
      'max-memory': { type: 'string' },
    },
  });
  if (positionals.length !== 1) throw new UsageError('infer takes exactly one MODEL');
  const method = (values.method ?? 'exact') as Method;
  if (!METHODS.includes(method)) throw new UsageError(`--method must be one of ${METHODS.join(', ')}, got "${values.method}"`);
  const choice = <T extends string>(name: string, v: string | undefined, allowed: readonly T[]): T | undefined => {
    if (v !== undefined && !allowed.includes(v as T)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}, got "${v}"`);
    return v as T | undefined;
  };
  const shift = choice('shift', values.shift, ['martens', 'min-lambda-max'] as const);
  const factor = choice('factor', values.factor, ['auto', 'dense-cholesky', 'dense-eigen', 'sparse-cholesky', 'incidence', 'fft'] as const);
  const logz = choice('logz', values.logz, ['zhang', 'mirror', 'chib', 'ais'] as const);
  const parametrisation = choice('parametrisation', values.parametrisation, ['whitened', 'zhang'] as const);
  const precision = choice('precision', values.precision, PRECISIONS);
  const scan = choice('scan', values.scan, SCANS);
  const probabilityTable = choice('probability-table', values['probability-table'], PROBABILITY_TABLES);
  if ((precision !== undefined || scan !== undefined || probabilityTable !== undefined) && method !== 'gibbs') throw new UsageError('--precision, --scan and --probability-table apply to --method gibbs');
  const ais = {
    runs: integer('ais-runs', values['ais-runs'], 1),
    steps: integer('ais-steps', values['ais-steps'], 1),
    population: integer('ais-population', values['ais-population'], 1),
    transition: choice('ais-transition', values['ais-transition'], ['tree', 'gibbs', 'relaxed', 'hmc'] as const),
    precision: choice('ais-precision', values['ais-precision'], PRECISIONS),
  };
  const aisGiven = Object.values(ais).some((v) => v !== undefined);
  if (aisGiven && logz !== 'ais') throw new UsageError('--ais-* options need --logz ais');
  let targetAccept: number | undefined;
  if (values['target-accept'] !== undefined) {
    targetAccept = decimalNumber(values['target-accept']);
    if (!(targetAccept > 0 && targetAccept < 1)) throw new UsageError(`--target-accept must be a number in (0, 1), got "${values['target-accept']}"`);
  }
  let damping: number | undefined;
  if (values.damping !== undefined) {
    damping = decimalNumber(values.damping);
    if (values.damping.trim() === '' || !(damping >= 0 && damping < 1)) throw new UsageError(`--damping must be a number in [0, 1), got "${values.damping}"`);
  }
  let tolerance: number | undefined;
  if (values.tolerance !== undefined) {
    tolerance = decimalNumber(values.tolerance);
    if (values.tolerance.trim() === '' || !(tolerance >= 0) || !Number.isFinite(tolerance)) throw new UsageError(`--tolerance must be a number ≥ 0, got "${values.tolerance}"`);
  }
  const bpGiven = [values.damping, values.schedule, values['max-iterations'], values.tolerance].some((v) => v !== undefined);
  if (bpGiven && !['bp', 'trw', 'bounds'].includes(method)) throw new UsageError(`--damping, --schedule, --max-iterations and --tolerance apply to --method bp, trw or bounds, not ${method}`);
  if (values['trw-steps'] !== undefined && !['trw', 'bounds'].includes(method)) throw new UsageError(`--trw-steps applies to --method trw or bounds, not ${method}`);
  // Chain options with a method that runs no chains and no --logz estimator that does (--samples with
  // bp ran BP as if not given; AIS has runs and temperatures, and mf --logz ais --chains 8 ignored
  // them); exact takes --samples (exact samples) only.
  const SAMPLERS = ['gibbs', 'pt', 'sw', 'wolff', 'treegibbs', 'blockgibbs', 'dhmc', 'mala'];
  if (!SAMPLERS.includes(method) && (logz === undefined || logz === 'ais')) {
    const keys: ('chains' | 'burnin' | 'samples')[] = method === 'exact' ? ['chains', 'burnin'] : ['chains', 'burnin', 'samples'];
    const given = keys.filter((k) => values[k] !== undefined);
    if (given.length > 0) throw new UsageError(`${given.map((k) => `--${k}`).join(', ')} ${given.length > 1 ? 'apply' : 'applies'} to the samplers (${SAMPLERS.join(', ')}) and --logz chib, zhang and mirror, not --method ${method}${logz === 'ais' ? ' with --logz ais (whose runs and temperatures are --ais-runs and --ais-steps)' : ''}${method === 'exact' ? ' (whose --samples N draws exact samples)' : ''}`);
  }
  // The continuous samplers' options, refused elsewhere (--target-accept with gibbs ran as if not given).
  if (values['target-accept'] !== undefined && !['dhmc', 'mala'].includes(method)) throw new UsageError(`--target-accept applies to --method dhmc or mala, not ${method}`);
  if (values['leapfrog-steps'] !== undefined && !['dhmc', 'pt'].includes(method)) throw new UsageError(`--leapfrog-steps applies to --method dhmc or pt (with --pt-moves hmc), not ${method}`);
  if (parametrisation !== undefined && !['dhmc', 'mala'].includes(method)) throw new UsageError(`--parametrisation applies to --method dhmc or mala, not ${method}`);
  // Mean field's and MFRP's options: refused elsewhere, not ignored (--restarts with bp ran BP as if not given).
  if ([values.restarts, values.budget, values['max-sweeps']].some((v) => v !== undefined) && !['mf', 'mfrp', 'bounds'].includes(method)) {
    throw new UsageError(`--restarts, --budget and --max-sweeps apply to --method mf, mfrp or bounds (its mean-field end), not ${method}`);
  }
  if ([values.trials, values['max-constraints'], values['budget-factor']].some((v) => v !== undefined) && method !== 'mfrp') {
    throw new UsageError(`--trials, --max-constraints and --budget-factor apply to --method mfrp, not ${method}`);
  }
  if (values['out-format'] !== undefined && values['out-format'] !== 'uai') throw new UsageError(`--out-format must be "uai", got "${values['out-format']}"`);
  // Exact --samples writes plain lines (PREFIX.samples); every other file is in a UAI format.
  const plainSamples = method === 'exact' && values.samples !== undefined && !values.map;
  // An empty prefix (an unset shell variable) passed the checks below as "not given" and wrote nothing.
  if (values.out === '') throw new UsageError('--out needs a file prefix, got an empty string');
  // "dir/" wrote the hidden files dir/.MAR and dir/.PR.
  if (values.out !== undefined && /[/\\]$/.test(values.out)) throw new UsageError(`--out needs a file prefix, not a directory: got "${values.out}" (try "${values.out}result")`);
  if (values.out !== undefined && values['out-format'] === undefined && !plainSamples) throw new UsageError('--out needs --out-format uai');
  if (plainSamples && values['out-format'] !== undefined) throw new UsageError('exact --samples has no UAI format: its lines are the samples (PREFIX.samples with --out); omit --out-format');
  if (values.json && values['out-format'] === 'uai' && values.out === undefined) throw new UsageError('--json and --out-format uai would both write to standard output: add --out PREFIX for the UAI files');
  // Before the run, the files it will write: PREFIX.MAP (--map), PREFIX.samples (exact --samples), else PREFIX.MAR and .PR.
  if (values.out !== undefined) {
    const suffixes = method === 'exact' && values.map ? ['.MAP'] : plainSamples ? ['.samples'] : ['.MAR', '.PR'];
    for (const file of suffixes.map((x) => values.out + x)) {
      const problem = unwritablePath(file);
      if (problem) throw new UsageError(`--out ${values.out}: ${file} ${problem}`);
    }
  }
  if ((values.replicas !== undefined || values.ladder !== undefined) && method !== 'pt') throw new UsageError(`--replicas and --ladder apply to --method pt, not --method ${method}`);
  const moves = choice('pt-moves', values['pt-moves'], PT_MOVES);
  if (moves !== undefined && method !== 'pt') throw new UsageError(`--pt-moves applies to --method pt, not --method ${method}`);
  // The relaxation's options, refused where no relaxation is built (--shift with gibbs ran as if not given).
  const relaxedLogZ = logz === 'zhang' || logz === 'mirror' || (logz === 'ais' && (ais.transition === 'relaxed' || ais.transition === 'hmc'));
  if ((shift !== undefined || factor !== undefined) && !['blockgibbs', 'dhmc', 'mala'].includes(method) && !(method === 'pt' && moves === 'hmc') && !relaxedLogZ) {
    throw new UsageError(`--shift and --factor apply to a relaxation (--method blockgibbs, dhmc, mala, pt --pt-moves hmc; --logz zhang, mirror, ais --ais-transition relaxed|hmc), not --method ${method}${logz ? ` --logz ${logz}` : ''}`);
  }
  if (factor === 'fft' && relaxedLogZ) throw new UsageError(`--factor fft is the samplers' (lattice models); the --logz ${logz} estimator builds its relaxation with another factor`);
  let ladder: number[] | undefined;
  if (values.ladder !== undefined) {
    ladder = values.ladder.split(',').map((t) => {
      if (!Number.isFinite(decimalNumber(t))) throw new UsageError(`--ladder must be comma-separated numbers, got "${values.ladder}"`);
      return Number(t);
    });
  }
  const maxMemory = bytes('max-memory', values['max-memory']);
  if (maxMemory !== undefined && method !== 'exact') throw new UsageError(`--max-memory applies to --method exact, not --method ${method}`);
  const seed = integer('seed', values.seed, 0, Number.MAX_SAFE_INTEGER);
  const opts = {
    method,
    exact: maxMemory !== undefined ? { maxMemory } : undefined,
    replicas: integer('replicas', values.replicas, 2, 4096),
    ladder,
    moves,
    // Taken with every method (infer passes it only to the runs that draw).
    seed,
    samples: integer('samples', values.samples, 1),
    burnin: integer('burnin', values.burnin, 0),
    chains: integer('chains', values.chains, 1, MAX_CHAINS),
    restarts: integer('restarts', values.restarts, 1),
    trials: integer('trials', values.trials, 1, 65535),
    maxConstraints: integer('max-constraints', values['max-constraints'], 0, 65535),
    maxSweeps: integer('max-sweeps', values['max-sweeps'], 1, MAX_LOOP_COUNT),
    budget: positive('budget', values.budget),
    budgetFactor: positive('budget-factor', values['budget-factor']),
    shift,
    factor,
    parametrisation,
    precision,
    scan,
    probabilityTable,
    logz,
    ais: aisGiven ? ais : undefined,
    targetAccept,
    leapfrogSteps: integer('leapfrog-steps', values['leapfrog-steps'], 1),
    damping,
    schedule: choice('schedule', values.schedule, BP_SCHEDULES),
    maxIterations: integer('max-iterations', values['max-iterations'], 1, MAX_LOOP_COUNT),
    tolerance,
    trwSteps: integer('trw-steps', values['trw-steps'], 0),
    onProgress: progressReporter(),
  };
  const workers = integer('workers', values.workers, 0, MAX_WORKERS);
  if (workers !== undefined && method !== 'exact' && !PARALLEL_METHODS.includes(method as ParallelMethod) && logz !== 'ais') {
    throw new UsageError(`--workers applies to exact, ${PARALLEL_METHODS.join(', ')} and --logz ais, not --method ${method}`);
  }
  if (workers !== undefined && values.queue !== undefined) throw new UsageError('--workers and --queue exclude each other (a queue worker has --concurrency)');
  if (values.map && method !== 'exact') throw new UsageError('--map needs --method exact');
  if (values.map && opts.samples !== undefined) throw new UsageError('--map and --samples exclude each other with --method exact (a MAP configuration, or N exact samples)');
  // --samples with exact inference (the default method) draws exact samples: a log Z estimator's
  // request would be dropped without a word.
  if (method === 'exact' && (values.map || opts.samples !== undefined) && logz !== undefined) {
    throw new UsageError(`${values.map ? '--map' : '--samples'} with --method exact (the default) decodes exact ${values.map ? 'MAP' : 'samples'}: --logz applies to a sampling run (give --method, e.g. dhmc)`);
  }
  if (method === 'exact' && (values.map || opts.samples !== undefined) && values.queue !== undefined) {
    throw new UsageError(`${values.map ? '--map' : '--samples'} decodes in this process (on --workers threads for a sliced plan): --queue applies to exact inference's marginals`);
  }
  const { model, description, labels, evidence } = await loadModel(positionals[0]);
  if (method === 'exact' && (values.map || opts.samples !== undefined)) {
    return exactDecode(await loadEngine(), model, { map: values.map ?? false, samples: opts.samples, seed, json: values.json ?? false, outFormat: values['out-format'], out: values.out, maxMemory, workers, labels });
  }
  const r = values.queue !== undefined ? await queuedRun(model, opts, values.queue) : await localRun(model, opts, workers);

  // The result stands (exit 0); each caveat is one line on stderr, and in --json's `warnings`.
  for (const w of r.warnings ?? []) process.stderr.write(`relaxmrf: warning: ${w}\n`);

  const pr = values['out-format'] === 'uai' && r.logZ !== null ? writePR(r.logZ) : null;
  // PR is one number: say why there is none rather than leave the file out silently.
  if (values['out-format'] === 'uai' && pr === null) process.stderr.write(`relaxmrf: note: no PR ${values.out ? 'file ' : ''}written: --method ${method} gives ${r.logZKind === 'interval' ? 'an interval (logZLower, logZUpper in --json), not one log Z' : 'no log Z (add --logz to estimate one)'}\n`);
  if (values['out-format'] === 'uai' && !values.out) process.stdout.write((pr ?? '') + writeMAR(r.marginals));
  // A PR file holds log10 Z: a bound or an estimate there said nothing of being one.
  const prKind = r.logZKind === 'upper-bound' ? 'an upper bound on log10 Z' : r.logZKind === 'lower-bound' ? 'a lower bound on log10 Z' : r.logZKind === 'estimate' ? 'an estimate of log10 Z' : null;
  if (values['out-format'] === 'uai' && pr !== null && prKind) process.stderr.write(`relaxmrf: note: the PR ${values.out ? `file (${values.out}.PR) ` : ''}holds ${prKind} (--method ${method}${r.diagnostics?.logzEstimator ? `, --logz ${r.diagnostics.logzEstimator}` : ''}), not the exact value\n`);
  // The UAI formats have no place to say so.
  if (values['out-format'] === 'uai' && r.partial) process.stderr.write(`relaxmrf: note: the UAI output${values.out ? ` (${values.out}.MAR${pr ? `, ${values.out}.PR` : ''})` : ''} holds a partial result: the run was stopped before it ended\n`);
  if (values.json) {
    // In chunks: the JSON of 10⁶ marginals is ~100 MB, never built as one string.
    writeJSON(jsonResult(model, r, labels, evidence), (chunk) => process.stdout.write(chunk));
    process.stdout.write('\n');
  } else if (values['out-format'] === undefined || values.out) process.stdout.write(summary(description, model, r, labels) + '\n');
  // The files after the result is printed, so a failed write costs the files, not the result.
  if (values['out-format'] === 'uai' && values.out) {
    const files: [string, string][] = [[values.out + '.MAR', writeMAR(r.marginals)]];
    if (pr) files.unshift([values.out + '.PR', pr]);
    // Without --json the files are the marginals' only copy: a failed write keeps them in the temporary directory.
    await writeOutputs('--out', files, `; the result above is complete, only ${files.map(([f]) => f).join(' and ')} ${files.length > 1 ? 'were' : 'was'} not written`, !values.json);
    // No log Z: a PREFIX.PR from an earlier run would sit beside this run's MAR as if it were its.
    if (!pr && existsSync(values.out + '.PR')) {
      rmSync(values.out + '.PR', { force: true });
      process.stderr.write(`relaxmrf: note: removed ${values.out}.PR, left by an earlier run: this run has no log Z\n`);
    }
  }
  if (values.plot !== undefined) {
    const failed = await writePlotFile(values.plot, model, r);
    if (failed) throw new UsageError(failed);
  }
}

async function localRun(model: Model, opts: InferOptions, workers: number | undefined): Promise<InferenceResult> {
  // RELAXMRF_WASM_LIMIT_MB lowers every engine's memory limit, workers' too (core/wasm-node.ts).
  const engine = await loadEngine();
  // Workers change where chains run, not what they compute: runParallel equals infer bit for bit.
  // Without --workers, a long Gibbs run uses min(chains, cores) workers (autoWorkers). Ctrl-C: local-run.ts.
  return runHere(engine, model, opts, workers);
}

/** The run as jobs on the queue (bullmq loads only here); Ctrl-C cancels them and keeps what completed. */
async function queuedRun(model: Model, opts: InferOptions, url: string): Promise<InferenceResult> {
  const { runQueued } = await import('../queue/queue-client.ts');
  const ac = new AbortController();
  // Both listeners go at the first signal (as in local-run.ts): a second, of either kind, ends the process.
  const onInterrupt = () => {
    process.removeListener('SIGINT', onInterrupt);
    process.removeListener('SIGTERM', onInterrupt);
    process.stderr.write("relaxmrf: interrupted: cancelling the run's jobs; the result of what completed follows (partial: true), if anything did; interrupt again to quit at once\n");
    ac.abort();
  };
  // SIGTERM as SIGINT: the run's waiting jobs are cancelled (a terminated client left them to a later worker).
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onInterrupt);
  try {
    // RELAXMRF_QUEUE_LOST_MS: how long Redis may be silent before the run fails (default 10 s; tests set less).
    const lost = Number(process.env.RELAXMRF_QUEUE_LOST_MS);
    const note = (line: string) => process.stderr.write(`relaxmrf: note: ${line}\n`);
    // RELAXMRF_QUEUE_WAIT_MS: how long before "no worker has taken a job" (default 10 s; tests set less).
    const wait = Number(process.env.RELAXMRF_QUEUE_WAIT_MS);
    return await runQueued(model, { ...opts, signal: ac.signal }, { connection: url, lostAfterMs: lost > 0 ? lost : undefined, onNote: note, waitingNoteMs: wait > 0 ? wait : undefined });
  } finally {
    process.removeListener('SIGINT', onInterrupt);
    process.removeListener('SIGTERM', onInterrupt);
  }
}

/** `relaxmrf worker`: serves the queue until interrupted (a second interrupt quits at once). */
async function workerCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseOptions({
    args: joinNegativeValues(argv),
    allowPositionals: true,
    options: { queue: { type: 'string' }, concurrency: { type: 'string' }, name: { type: 'string' }, 'lock-ms': { type: 'string' } },
  });
  if (positionals.length > 0) throw new UsageError(`worker takes no positional arguments, got "${positionals[0]}"`);
  if (values.queue === undefined) throw new UsageError('worker needs --queue redis://HOST:PORT[/DB]');
  const { runWorker } = await import('../queue/queue-worker.ts');
  const ac = new AbortController();
  const onSignal = () => {
    if (ac.signal.aborted) process.exit(130);
    ac.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await runWorker(values.queue, {
      concurrency: integer('concurrency', values.concurrency, 1, MAX_CONCURRENCY),
      name: values.name,
      lockMs: integer('lock-ms', values['lock-ms'], 500),
      log: (line) => process.stderr.write(line + '\n'),
      signal: ac.signal,
    });
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
  // Stopped: whatever a connection still retries, do not linger.
  setTimeout(() => process.exit(), 1000).unref();
}

/** The default job: Gibbs on a 32×32 periodic Ising model at β = 0.4, checked against exact answers on a smaller grid. */
async function demoCommand(args: string[]): Promise<void> {
  // It takes no options: "demo --foo" ran the demo with exit 0.
  if (args.length > 0) throw new UsageError(`demo takes no arguments, got "${args[0]}" (try relaxmrf help demo)`);
  const engine = await loadEngine();
  const spec = 'ising:32x32,beta=0.4,h=0.05,periodic';
  const big = builtinModel(spec);
  const r = infer(engine, big, { method: 'gibbs', seed: 1, samples: 4000, burnin: 500, chains: 4, onProgress: progressReporter() });
  // ⟨σ_i⟩ = p(+1) − p(−1) per site, averaged; per-site errors are correlated, so quote the largest.
  let m = 0, worstSE = 0;
  r.marginals.forEach((p, v) => {
    m += (p[1] - p[0]) / big.n;
    worstSE = Math.max(worstSE, 2 * r.marginalStdErr![v][1]);
  });
  console.log(`relaxmrf ${version()} — ${spec}`);
  console.log(`Gibbs, 4 chains × 4000 sweeps: mean magnetisation ${m.toFixed(4)} (per-site standard errors ≤ ${worstSE.toFixed(4)})`);
  console.log(`  ${(Number(r.diagnostics.siteUpdatesPerSecond) / 1e6).toFixed(1)} M site updates/s in ${r.seconds.toFixed(2)} s`);

  // The same couplings on a 12×12 open grid, where exact elimination gives the truth.
  const small = builtinModel('ising:12x12,beta=0.4,h=0.05');
  const exact = infer(engine, small, { method: 'exact' });
  const g = infer(engine, small, { method: 'gibbs', seed: 2, samples: 4000, burnin: 500, chains: 4 });
  let worst = 0;
  g.marginals.forEach((p, v) => (worst = Math.max(worst, Math.abs(p[1] - exact.marginals[v][1]) / g.marginalStdErr![v][1])));
  console.log(`Check on ising:12x12,beta=0.4,h=0.05: exact log Z = ${exact.logZ!.toFixed(6)} (elimination, treewidth ${exact.diagnostics.treewidth});`);
  console.log(`  Gibbs marginals vs exact: largest error ${worst.toFixed(2)} standard errors over ${small.n} sites`);
}

function version(): string {
  return JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
}

export async function main(argv: string[]): Promise<number> {
  try {
    const [cmd, ...rest] = argv;
    if (cmd === undefined || cmd === '--help' || cmd === '-h') {
      console.log(USAGE);
      return cmd === undefined ? 2 : 0;
    }
    if (cmd === 'help' || rest.includes('--help') || rest.includes('-h')) {
      const topic = cmd === 'help' ? rest[0] : cmd;
      const text = commandHelp(USAGE, topic);
      if (text === null) throw new UsageError(`no help for "${topic}": the commands are ${COMMANDS.join(', ')}`);
      console.log(text);
      return 0;
    }
    if (cmd === '--version') {
      console.log(version());
      return 0;
    }
    if (cmd === 'infer') await inferCommand(rest);
    else if (cmd === 'learn') await learnCommand(joinNegativeValues(rest), integer);
    else if (cmd === 'demo') await demoCommand(rest);
    else if (cmd === 'worker') await workerCommand(rest);
    else throw new UsageError(`unknown command "${cmd}" (try --help)`);
    return 0;
  } catch (e) {
    if (e instanceof UsageError || e instanceof ArgsError || e instanceof LearnUsageError || e instanceof OutputError || e instanceof FormatError || e instanceof ModelError || isParseArgsError(e)) {
      process.stderr.write(`relaxmrf: ${oneLine((e as Error).message)}\n`);
      return 2;
    }
    // Interrupted before anything completed: no result, and not a refusal (it said exit 3).
    if (e instanceof CancelledError) {
      process.stderr.write(`relaxmrf: interrupted: ${oneLine(e.message)}\n`);
      return 130;
    }
    if (e instanceof EngineError) {
      process.stderr.write(`relaxmrf: ${oneLine(e.message)}\n`);
      return 3;
    }
    // An allocation past what this process can hold (10^9 AIS temperatures' schedule): refused like the
    // engine's own memory limits, in one line.
    if (e instanceof RangeError && /typed array length|array buffer allocation|invalid array length/i.test(e.message)) {
      process.stderr.write(`relaxmrf: the run needs more memory than this process can allocate (${oneLine(e.message)}): ask for fewer steps, runs, chains or samples\n`);
      return 3;
    }
    throw e;
  }
}

/** A message as one line (Node's argument parser writes some over three). */
function oneLine(message: string): string {
  return message.trim().replace(/\s*\n\s*/g, ' ');
}

function isParseArgsError(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return e instanceof TypeError && typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
}
