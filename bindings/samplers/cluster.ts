// Swendsen–Wang and Wolff cluster moves (assembly/samplers/cluster.ts) for ferromagnetic Potts and
// Ising models with any fields. The model must be pairwise over variables of one cardinality q, every
// pairwise table of Potts form c + r(x_i) + s(x_j) + J·[x_i = x_j] with J ≥ 0 and finite entries;
// r and s move into the fields. A binary table always has this form, with
// J = (t₀₀ + t₁₁ − t₀₁ − t₁₀)/2 — so for binary models "ferromagnetic" means every such J ≥ 0.
//
// Where this applies (Martens & Sutskever 2010 §5.3 found SW slow on learned RBMs): the bonds only
// ever join agreeing variables over positive couplings, so models with couplings of both signs
// (frustrated models, learned RBMs and Boltzmann machines in general) are refused rather than
// sampled badly; strong fields also shrink the clusters' moves towards single-site ones.

import type { Engine, Arena } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { requirePairwise } from '../core/model.ts';
import { stateLayout, type StateLayout } from '../core/canonical.ts';
import { CancelledError, EngineError, ModelError, zeroModel } from '../core/errors.ts';
import { chainSeedWords } from '../core/seed.ts';
import { checkCount, checkOptionKeys, MAX_LOOP_COUNT } from '../core/options.ts';
import type { InferenceResult } from '../core/result.ts';
import { gibbsRun, type GibbsOptions } from './gibbs.ts';
import { batchMeansResult, DiscreteReducer, emitChains, range, type BatchSampler } from './chains.ts';
import { refuseZeroModel } from '../core/feasible.ts';
import { Issued } from './issued.ts';

export const SW_STREAM = 0x5357; // "SW"
export const WOLFF_STREAM = 0x574f; // "WO"
/** Chain id of the Wolff pilot run (never a user chain: chains are < 2^31). */
const PILOT_CHAIN = 0xffffffff;

/**
 * The move: 'sw' Swendsen–Wang (bonds drawn between agreeing neighbours, every cluster redrawn), 'wolff' (one
 * cluster grown from a random site and redrawn, clustersPerSweep a sweep), 'heatbath' (single-site heat-bath Gibbs
 * on the same form, for comparison).
 */
export type ClusterKind = 'sw' | 'wolff' | 'heatbath';
const KIND_CODE: Record<ClusterKind, number> = { sw: 0, wolff: 1, heatbath: 2 };

/** A ferromagnetic Potts model: fields h (n·q, variable-major) and couplings in both-triangle CSR. */
export interface PottsForm {
  /** Number of variables. */
  n: number;
  /** States per variable (q). */
  q: number;
  /** Fields h[v·q + k] (log-potential units). */
  h: Float64Array;
  /** CSR row starts (n + 1), both triangles. */
  rowPtr: Int32Array;
  /** CSR column indices. */
  col: Int32Array;
  /** Couplings J ≥ 0 per CSR entry: J·[x_i = x_j] (log-potential units). */
  J: Float64Array;
}

/** The model as a ferromagnetic Potts form, or a ModelError saying which coupling stops it. */
export function pottsForm(model: Model): PottsForm {
  const what = 'cluster moves (Swendsen–Wang, Wolff)';
  requirePairwise(model, what);
  const n = model.n, q = model.card[0];
  for (let v = 0; v < n; v++) if (model.card[v] !== q) throw new ModelError(`${what} need variables of one cardinality: variable 0 has ${q} states, variable ${v} has ${model.card[v]}`);
  if (q < 2) throw new ModelError(`${what} need at least 2 states per variable`);
  const zero = model.zeroReason();
  if (zero !== null) throw zeroModel(zero);
  // Flat reads throughout (no array per variable or pair: a 10⁶-site lattice took 3 s and 0.8 GB here).
  // Each variable's unary factors summed (one card per variable: row v at v·q).
  const h = model.unaryRows().values;
  const pairs = model.pairTables(), T = pairs.tables, E = pairs.i.length;
  const ei = pairs.i, ej = pairs.j, eJ = new Float64Array(E);
  const r = new Float64Array(q), s = new Float64Array(q);
  let o = 0; // the current pair's table
  const at = (k: number, l: number): number => T[o + k * q + l];
  for (let m = 0; m < E; m++) {
    const i = ei[m], j = ej[m];
    o = pairs.start[m];
    const name = (): string => `the coupling of variables ${i} and ${j}`;
    for (let e = o; e < o + q * q; e++) if (!Number.isFinite(T[e])) throw new ModelError(`${what} need finite potentials: ${name()} has a zero entry`);
    r.fill(0);
    s.fill(0);
    let J: number;
    if (q === 2) {
      J = (at(0, 0) + at(1, 1) - at(0, 1) - at(1, 0)) / 2;
      const c0 = at(0, 0) - J; // c with r(0) = s(0) = 0
      r[1] = at(1, 0) - c0;
      s[1] = at(0, 1) - c0;
      for (let k = 0; k < 2; k++) h[i * q + k] += r[k];
      for (let k = 0; k < 2; k++) h[j * q + k] += s[k];
    } else {
      // Gauge r(0) = s(1) = 0: off the diagonal t(k, l) = c + r(k) + s(l), c = t(0, 1).
      const c = at(0, 1);
      for (let l = 2; l < q; l++) s[l] = at(0, l) - at(0, 1);
      s[0] = at(1, 0) - at(1, 2) + s[2];
      for (let k = 2; k < q; k++) r[k] = at(k, 1) - at(0, 1);
      r[1] = at(1, 2) - at(0, 2);
      let scale = 1;
      for (let e = o; e < o + q * q; e++) scale = Math.max(scale, Math.abs(T[e]));
      const tol = 1e-9 * scale;
      J = at(0, 0) - (c + r[0] + s[0]);
      for (let k = 0; k < q; k++) {
        for (let l = 0; l < q; l++) {
          const fit = c + r[k] + s[l] + (k === l ? J : 0);
          if (Math.abs(at(k, l) - fit) > tol) throw new ModelError(`${what} need Potts couplings c + r(x_i) + s(x_j) + J·[x_i = x_j]: ${name()} is not of that form`);
        }
      }
      for (let k = 0; k < q; k++) {
        h[i * q + k] += r[k];
        h[j * q + k] += s[k];
      }
    }
    if (J < 0) throw new ModelError(`${what} need ferromagnetic couplings (J ≥ 0): ${name()} has J = ${+J.toPrecision(6)}; use --method gibbs or pt for couplings of mixed signs`);
    eJ[m] = J;
  }
  const rowPtr = new Int32Array(n + 1);
  for (let m = 0; m < E; m++) {
    rowPtr[ei[m] + 1]++;
    rowPtr[ej[m] + 1]++;
  }
  for (let v = 0; v < n; v++) rowPtr[v + 1] += rowPtr[v];
  const fill = rowPtr.slice(0, n), col = new Int32Array(2 * E), J = new Float64Array(2 * E);
  for (let m = 0; m < E; m++) {
    col[fill[ei[m]]] = ej[m];
    J[fill[ei[m]]++] = eJ[m];
    col[fill[ej[m]]] = ei[m];
    J[fill[ej[m]]++] = eJ[m];
  }
  return { n, q, h, rowPtr, col, J };
}

export interface ClusterState {
  readonly ptr: number;
  readonly chain: number;
}

/** One of the three moves on a bound Potts form; the BatchSampler shape, so chains.ts drives it. */
export class ClusterSampler implements BatchSampler<ClusterState> {
  private readonly issued = new Issued<ClusterState>();
  /** The model as a ferromagnetic Potts form. */
  readonly form: PottsForm;
  /** The states' layout (q per variable). */
  readonly layout: StateLayout;
  private readonly arena: Arena;
  private readonly header: number;

  /**
   * Binds the model's Potts form into `engine`'s memory (ModelError when the model is not a ferromagnetic Potts
   * model).
   * @param engine The engine whose memory holds the sampler.
   * @param kind The move.
   */
  constructor(readonly engine: Engine, model: Model, readonly kind: ClusterKind) {
    const f = (this.form = pottsForm(model));
    this.layout = stateLayout(new Int32Array(f.n).fill(f.q));
    const k = engine.kernels;
    engine.ensureFits(24 * f.n * f.q + 16 * f.col.length + 32 * f.n + 1024, `${kind} on ${f.n} variables`);
    const a = (this.arena = engine.arena());
    const h = a.allocF64(f.h), rowPtr = a.allocI32(f.rowPtr), col = a.allocI32(Math.max(1, f.col.length)), J = a.allocF64(Math.max(1, f.J.length)), P = a.allocF64(Math.max(1, f.J.length));
    a.f64(J, f.J.length).set(f.J);
    a.f64(P, f.J.length).set(f.J.map((x) => -Math.expm1(-x)));
    a.i32(col, f.col.length).set(f.col);
    this.header = a.alloc(k.clusterFormBytes());
    k.clusterFormInit(this.header, f.n, f.q, h, rowPtr, col, J, P);
  }

  /**
   * Wolff clusters per sweep: n / (mean cluster size), the mean taken on a pilot chain of its own
   * stream (seed, PILOT_CHAIN) after that chain has put 20·n sites through clusters (cluster sizes
   * from a random start are far below their equilibrium sizes), so every chain of a run uses the same
   * fixed number. 1 until set.
   */
  clustersPerSweep = 1;

  /** Sets clustersPerSweep from a Wolff pilot chain of stream (seed, PILOT_CHAIN); other moves do nothing. */
  calibrate(seed: number): void {
    if (this.kind !== 'wolff') return;
    const k = this.engine.kernels, n = this.form.n;
    const pilot = this.init(seed, PILOT_CHAIN);
    this.clustersPerSweep = 1;
    const chunk = Math.max(1, Math.ceil(n / 100));
    const visited = () => k.clusterVisited(this.header, pilot.ptr);
    for (let calls = 0; visited() < 20 * n && calls < 10000; calls++) this.step(pilot, chunk);
    const before = visited(), clusters = 50 + Math.ceil(n / 10);
    this.step(pilot, clusters);
    const mean = (visited() - before) / clusters;
    this.clustersPerSweep = Math.max(1, Math.round(n / Math.max(1, mean)));
  }

  /**
   * Moves until `perSite`·n sites have been updated: Wolff clusters in chunks until that many sites
   * were in one (its fixed clusters per sweep, sized for equilibrium, move little from a random
   * start), the other moves `perSite` sweeps.
   */
  burnInSites(state: ClusterState, perSite: number): void {
    if (this.kind !== 'wolff') {
      this.step(state, perSite);
      return;
    }
    const k = this.engine.kernels, target = k.clusterVisited(this.header, state.ptr) + perSite * this.form.n;
    for (let calls = 0; k.clusterVisited(this.header, state.ptr) < target && calls < 100000; calls++) this.step(state, 1);
  }

  /** A chain's state: every variable uniform over its q states, from stream (seed, chain). */
  init(seed: number, chain: number): ClusterState {
    if (this.arena.isDisposed) throw new EngineError('use after dispose(): this sampler has released its engine memory');
    const ptr = this.arena.alloc(this.engine.kernels.clusterStateBytes(this.header));
    const [lo, hi] = chainSeedWords(seed, chain);
    this.engine.call(`${this.kind} init`, (k) => {
      k.rngSeed(ptr, lo, hi, chain, this.kind === 'wolff' ? WOLFF_STREAM : SW_STREAM);
      k.clusterInit(this.header, ptr);
    });
    return this.issued.state({ ptr, chain });
  }

  /** `sweeps` moves; with acc the marginal terms are added; with trace / bondTrace (f64 per sweep) the magnetisation / agreement. */
  step(state: ClusterState, sweeps: number, acc = 0, trace = 0, bondTrace = 0): { changeRate: number } {
    checkCount('sweeps', sweeps, 1, MAX_LOOP_COUNT);
    if (this.arena.isDisposed) throw new EngineError('use after dispose(): this sampler has released its engine memory');
    this.issued.check(state, acc);
    const per = this.clustersPerSweep;
    const changed = this.engine.call(`${this.kind} step`, (k) => k.clusterStep(this.header, state.ptr, KIND_CODE[this.kind], sweeps, per, acc, trace, bondTrace));
    return { changeRate: changed / (sweeps * this.form.n) };
  }

  /** Magnetisation after each of `sweeps` moves (no accumulation), for autocorrelation times. */
  magnetisationTrace(state: ClusterState, sweeps: number): Float64Array {
    const buf = this.arena.alloc(8 * sweeps);
    this.step(state, sweeps, 0, buf);
    return this.arena.f64(buf, sweeps).slice();
  }

  /** Fraction of coupled pairs in the same state after each of `sweeps` moves (the energy of a uniform model). */
  agreementTrace(state: ClusterState, sweeps: number): Float64Array {
    const buf = this.arena.alloc(8 * sweeps);
    this.step(state, sweeps, 0, 0, buf);
    return this.arena.f64(buf, sweeps).slice();
  }

  /** The chain's current states, one per variable (copied). */
  configuration(state: ClusterState): Int32Array {
    this.issued.check(state);
    return this.arena.i32(this.engine.kernels.clusterStates(state.ptr) >>> 0, this.form.n).slice();
  }

  /** A zeroed f64 accumulator (n·q entries) in the sampler's memory; returns its address. */
  accumulator(): number {
    return this.issued.acc(this.arena.alloc(8 * this.form.n * this.form.q));
  }

  /** The accumulator's sums (copied), then zeroes it. */
  readAndClear(acc: number): Float64Array {
    const v = this.arena.f64(acc, this.form.n * this.form.q);
    const out = v.slice();
    v.fill(0);
    return out;
  }

  /** Frees the sampler's engine memory. */
  dispose(): void {
    this.arena.dispose();
  }
}

/** The options and defaults of Gibbs (seed, chains, samples, burnin, batches, onProgress, signal). */
export type ClusterOptions = GibbsOptions;

/**
 * Every option runCluster reads: it refuses any other, Gibbs's precision, scan and probabilityTable
 * too (the cluster moves have no such variants; they were ignored).
 */
export const CLUSTER_OPTION_KEYS: readonly string[] = ['seed', 'chains', 'samples', 'burnin', 'batches', 'onProgress', 'signal'];

/** Marginals by Swendsen–Wang (Rao–Blackwellised over the cluster relabelling) or Wolff (indicators), with batch-means errors. */
export function runCluster(engine: Engine, model: Model, kind: 'sw' | 'wolff', opts: ClusterOptions = {}): InferenceResult {
  checkOptionKeys(opts, CLUSTER_OPTION_KEYS);
  const run = gibbsRun(opts);
  refuseZeroModel(model, kind, engine);
  const t0 = performance.now();
  const sampler = new ClusterSampler(engine, model, kind);
  try {
    sampler.calibrate(run.seed);
    const red = new DiscreteReducer(sampler.layout, true);
    const total = run.chains * (run.samples + run.burnin);
    const chunk = Math.max(1, Math.floor(1e6 / Math.max(1, sampler.form.n)));
    let recordedChanges = 0, recordedSweeps = 0;
    // Wolff's fixed clusters per sweep are sized for equilibrium and move little from a random
    // start: each chain first puts 20·n sites through clusters, then runs its burn-in sweeps.
    const chains: BatchSampler<ClusterState> = {
      init: (seed, chain) => {
        const st = sampler.init(seed, chain);
        if (kind === 'wolff') sampler.burnInSites(st, 20);
        return st;
      },
      step: (st, sweeps, acc) => {
        const info = sampler.step(st, sweeps, acc);
        // The recorded sweeps' changes (acc set): burn-in after a random start changes many more.
        if (acc) (recordedChanges += info.changeRate * sweeps), (recordedSweeps += sweeps);
        return info;
      },
      accumulator: () => sampler.accumulator(),
      readAndClear: (acc) => sampler.readAndClear(acc),
    };
    const finished = emitChains(chains, { ...run, chains: range(run.chains), chunk, signal: opts.signal }, (c, e) => {
      red.add(e, c);
      if (e.kind === 'step') opts.onProgress?.({ phase: kind, done: red.done, total });
    });
    if (red.stats.batches === 0) throw new CancelledError(`${kind} was cancelled before the first batch completed: no estimate`);
    const seconds = (performance.now() - t0) / 1000;
    const r = batchMeansResult(kind, sampler.layout, red, run, { changeRate: red.changeRate, q: sampler.form.q, ...(kind === 'wolff' ? { clustersPerSweep: sampler.clustersPerSweep } : {}), estimator: kind === 'sw' ? 'rao-blackwellised' : 'indicators' }, seconds, !finished);
    const few = kind === 'wolff' && recordedSweeps > 0 ? fewChanges(recordedChanges / recordedSweeps, recordedSweeps / run.chains) : null;
    return few ? { ...r, warnings: [...(r.warnings ?? []), few] } : r;
  } finally {
    sampler.dispose();
  }
}

/** Wolff's marginals count states (indicators): below this many state changes per site and chain, their standard errors are unreliable. */
export const WOLFF_MIN_CHANGES = 100;

/**
 * The warning for a Wolff run whose sites changed state too seldom for its indicator marginals'
 * standard errors: in a field's ordered phase the field refuses the grown giant clusters, so a
 * sweep changes ≈ 0.3 % of sites and each site's minority visits are a few events per chain
 * (10×10 at β = 0.7, h = 0.05: 0.0008 ± 0.0005 against 0.0058, and in 16 of 20 seeds at the default
 * length some marginal 4–86 SE off, silently).
 */
function fewChanges(changeRate: number, sweepsPerChain: number): string | null {
  const perSite = changeRate * sweepsPerChain;
  if (!(perSite < WOLFF_MIN_CHANGES)) return null;
  return `Wolff: sites changed state ${perSite.toPrecision(2)} times per chain on average (change rate ${changeRate.toPrecision(2)} per sweep), fewer than ${WOLFF_MIN_CHANGES}: the field refuses most clusters, so each marginal counts few state changes and its standard error is unreliable; use method sw (Rao–Blackwellised marginals) or far more samples`;
}
