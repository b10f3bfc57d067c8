// Zhang, Sutton, Storkey & Ghahramani (NeurIPS 2012) §5, synthetic grids: `npm run bench:zhang` (full,
// ~10 min) or BENCH_QUICK=1 / --quick (under a minute). Writes bench/results/zhang.json ("quick" says
// which mode wrote it; a quick run does not replace a full run's file: it writes to the temp directory).
//
// Models (the paper's text, §5): 10×10 open grids over s ∈ {0,1}, log p(s) = aᵀs + ½ sᵀWs,
//   w_ij ~ c₂·N(0, 4) per grid bond;
//   'standard':   a_i ~ c₁·N(0, 4);
//   'frustrated': a_i ~ c₁·N(Σ_j w_ij, 4)   (j over the grid neighbours of i).
// N(μ, 4) is read as variance 4 (sd 2), the usual N(mean, variance): w_ij = 2c₂z, a_i = c₁(Σ_j w_ij + 2z).
// The paper evaluates 36 random graphs (one per cell of its c₁ × c₂ heat maps) without printing the
// axis values; we use a 6 × 6 table of our choosing (CFG below), several grids per cell, fixed seeds.
//
// Samplers, all at the SAME wall-clock budget per grid (CFG.budget seconds, split evenly over
// CFG.chains independent chains; the first sixth of each chain's share is burn-in / warm-up, the rest
// is kept; the paper keeps 10000 of 12000 samples):
//   gibbs   sequential single-site Gibbs on p(s) (GibbsSampler). Its estimate is Rao–Blackwellised: the
//           mean over sweeps of p(s_i = 1 | s_−i) at each update (the paper used empirical frequencies,
//           which can only be worse).
//   bgibbs  block Gibbs on p(x, s) (Martens & Sutskever 2010; BlockGibbsSampler), RB estimate E[π(x)].
//   dhmc    DHMC as in the paper: HMC on p(x) with A = I (our 'zhang' parametrisation), 5 leapfrog steps,
//           step size by dual averaging to a mean acceptance of 0.9 during warm-up, RB estimate E[π(x)].
//   dhmc1   the same DHMC (A = I) with a larger shift, d = max(0, −λ_min(W)) + 1 (see below).
//   dhmc-w  the same HMC in the whitened parametrisation (x | s ~ N(Mᵀs, I), identity mass): the
//           library's default, shown for comparison.
// Relaxation for bgibbs/dhmc/dhmc-w: buildRelaxation defaults (Martens' shift d = −λ_min(W) + 10⁻³ρ,
// sparse Cholesky factor). The paper does not say which D its experiments used. With A = I the
// Gaussian part of p(x_I) has covariance W + D, whose smallest eigenvalue is Martens' margin (≈ 10⁻²
// here) and largest ≈ 2|λ_min|: the leapfrog step is limited by the narrow direction and five steps
// barely move along the wide ones, so 'dhmc' mixes slowly for a reason unrelated to the discrete model;
// 'dhmc1' shows the same sampler with W + D conditioned ~100× better. One-off setup (relaxations,
// sampler construction, DHMC's A = I mass factor) is not in the budget; it is a few ms on these models
// and is reported.
//
// Equal samples (`--equal-samples`, the paper's own protocol as printed): instead of equal wall
// clock, every sampler gets 10 runs (chains) of 10 000 kept iterations after 2 000 of burn-in (DHMC:
// the burn-in is its dual-averaging warm-up); the MSE is then also taken per run and averaged
// (`mseRunMean`), as a run is the paper's unit, beside the pooled estimate's. Writes
// bench/results/zhang-samples.json. Use BENCH_ZHANG_C1/C2/GRIDS to choose the cells (it costs about
// 10 s per grid).
//
// Accuracy: MSE of the node marginals p(s_i = 1) against exact elimination (bindings/exact.ts), mean
// over the grids of a cell. Efficiency (Martens & Sutskever §5.2): effective samples per second,
//   ESS/s = (ESS per iteration) × (kept iterations per second of the timed run),
// where ESS per iteration is Stan's multi-chain ESS (bindings/diagnostics.ts `ess`) of each node's
// Rao–Blackwellised trace (per iteration: Gibbs p(s_i = 1 | s_−i) as the sweep updates i; bgibbs and
// DHMC π_i(x)) over a post-burn-in segment of ≤ CFG.traceCap iterations per chain (DHMC: the first
// kept iterations of the timed run, traced in WASM; Gibbs and block Gibbs: a continuation of the same
// chains one iteration per call, untimed), divided by its length. Reported per grid as the median over
// nodes. Because the RB traces of different samplers have different per-draw variances, we also report
// the indicator-equivalent ESS: p_i(1 − p_i) / MCSE_i², the number of independent exact draws of s_i
// that would give the same standard error (MCSE² = var(trace)/ESS) — the figure to compare across
// samplers. ESS from a short segment overstates the ESS of a chain that has not yet explored (see the
// MSE table for what actually happened); cells where some node's split-R̂ over the segments exceeds 1.1
// are marked †, but chains stuck in the same mode pass that test too.

import { writeFileSync } from 'node:fs';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import type { Engine } from '../bindings/core/engine.ts';
import type { Model } from '../bindings/core/model.ts';
import { exactInference } from '../bindings/exact/exact.ts';
import { GibbsSampler } from '../bindings/samplers/gibbs.ts';
import { BlockGibbsSampler } from '../bindings/samplers/blockgibbs.ts';
import type { BatchSampler } from '../bindings/samplers/chains.ts';
import { DHMCSampler } from '../bindings/samplers/dhmc.ts';
import { buildRelaxation, type Relaxation } from '../bindings/relax/relaxation.ts';
import { ess, splitRhat } from '../bindings/samplers/diagnostics.ts';
import { cpuModel, QUICK, resultsPath, wasmFacts } from './common.ts';
import { zhangGrid as zhangGridOf } from './zhang-grids.ts';

const WASM_PATH = process.env.BENCH_WASM || undefined;

const CFG = QUICK
  ? { c1: [0.5, 1, 2], c2: [0.5, 1, 2], grids: 1, budget: 0.1, chains: 2, traceCap: 1000 }
  : { c1: [0.25, 0.5, 1, 2, 4, 6], c2: [0.25, 0.5, 1, 2, 4, 6], grids: 2, budget: 0.5, chains: 4, traceCap: 4000 };
// Overrides for exploring: BENCH_ZHANG_C1=0.5,1 BENCH_ZHANG_C2=… BENCH_ZHANG_GRIDS=… BENCH_ZHANG_BUDGET=seconds.
const envList = (v: string | undefined) => (v ? v.split(',').map(Number).filter((x) => Number.isFinite(x) && x >= 0) : null);
CFG.c1 = envList(process.env.BENCH_ZHANG_C1) ?? CFG.c1;
CFG.c2 = envList(process.env.BENCH_ZHANG_C2) ?? CFG.c2;
if (Number(process.env.BENCH_ZHANG_GRIDS) >= 1) CFG.grids = Math.floor(Number(process.env.BENCH_ZHANG_GRIDS));
if (Number(process.env.BENCH_ZHANG_BUDGET) > 0) CFG.budget = Number(process.env.BENCH_ZHANG_BUDGET);
/** Equal samples instead of equal time: runs × (burn + kept) iterations per sampler and grid. */
const EQUAL_SAMPLES = process.argv.includes('--equal-samples') ? { runs: 10, burn: 2000, kept: 10000 } : null;
if (EQUAL_SAMPLES) CFG.chains = EQUAL_SAMPLES.runs;
const SIDE = 10;
const SEED = 20121203;
const LEAPFROG_STEPS = 5;
const TARGET_ACCEPT = 0.9;
const BURN_FRACTION = 1 / 6;
const TYPES = ['standard', 'frustrated'] as const;
type GridType = (typeof TYPES)[number];

// ---------------------------------------------------------------------------------------------
// Models

const zhangGrid = (type: GridType, c1: number, c2: number, seed: number): Model => zhangGridOf(type, c1, c2, seed, SIDE);


// ---------------------------------------------------------------------------------------------
// Samplers behind one interface (an "iteration" is a Gibbs sweep, a block Gibbs sweep, or one HMC
// transition of 5 leapfrog steps).

interface Runner {
  /** A new chain. */
  init(chain: number): unknown;
  /** `iters` iterations; with `accumulate`, RB marginals are summed (DHMC also records its trace). */
  advance(h: unknown, iters: number, accumulate: boolean): void;
  /** Burn-in / warm-up for about `seconds` (default: time-sliced advance without accumulation). */
  burnIn?(h: unknown, seconds: number): number;
  /** Burn-in / warm-up of exactly `iters` iterations (default: advance without accumulation). */
  burnInIterations?(h: unknown, iters: number): void;
  /** Σ RB marginals per bit since the last read (then cleared). */
  read(h: unknown): Float64Array;
  /** Per bit, an RB trace of `len` post-burn-in iterations (after the timed run). */
  trace(h: unknown, len: number): Float64Array[];
  /** Diagnostics of a chain after its run (acceptance, step size, …). */
  info?(h: unknown): Record<string, number>;
  release(h: unknown): void;
  dispose(): void;
}

const now = () => performance.now() / 1000;

/** Time-sliced advance for about `seconds`, calls of ≈ `tau` seconds; returns iterations done. */
function advanceFor(run: Runner, h: unknown, seconds: number, accumulate: boolean, state: { chunk: number; rate: number }): number {
  const t0 = now();
  const tau = Math.min(0.005, Math.max(seconds / 40, 2e-4));
  let done = 0;
  for (;;) {
    const left = seconds - (now() - t0);
    if (left <= 0 && done > 0) break;
    let k = state.chunk;
    if (state.rate > 0) k = Math.max(1, Math.min(k, Math.round(state.rate * Math.max(left, 0))));
    const t = now();
    run.advance(h, k, accumulate);
    const dt = now() - t;
    done += k;
    if (dt > 0) {
      state.rate = k / dt;
      state.chunk = Math.max(1, Math.round(state.rate * tau));
    } else state.chunk *= 2;
  }
  return done;
}

/** A runner over a sampler on p(s) or p(x, s) whose accumulator collects per-bit RB probabilities. */
function batchRunner<S>(s: BatchSampler<S> & { form: { nBits: number }; dispose(): void }, seed: number): Runner {
  const acc = new Map<unknown, number>();
  return {
    init(c) {
      const st = s.init(seed, c);
      acc.set(st, s.accumulator());
      return st;
    },
    advance(h, it, a) {
      s.step(h as S, it, a ? acc.get(h)! : 0);
    },
    read: (h) => s.readAndClear(acc.get(h)!),
    trace(h, len) {
      const n = s.form.nBits, p = acc.get(h)!;
      const out = Array.from({ length: n }, () => new Float64Array(len));
      s.readAndClear(p);
      for (let t = 0; t < len; t++) {
        s.step(h as S, 1, p);
        const v = s.readAndClear(p);
        for (let i = 0; i < n; i++) out[i][t] = v[i];
      }
      return out;
    },
    release() {},
    dispose: () => s.dispose(),
  };
}

function dhmcRunner(engine: Engine, rel: Relaxation, seed: number, parametrisation: 'zhang' | 'whitened', traceCap: number): Runner {
  const n = rel.form.nBits;
  const s = new DHMCSampler(engine, rel, {
    parametrisation,
    leapfrogSteps: LEAPFROG_STEPS,
    traceCodes: Int32Array.from({ length: n }, (_, i) => i),
    traceCapacity: traceCap,
  });
  type St = ReturnType<typeof s.init>;
  const stats = new Map<unknown, { it: number; acc: number; div: number; warmDiv: number; eps: number; warmIters: number }>();
  return {
    init(c) {
      const st = s.init(seed, c);
      stats.set(st, { it: 0, acc: 0, div: 0, warmDiv: 0, eps: NaN, warmIters: 0 });
      return st;
    },
    advance(h, it, a) {
      const info = s.step(h as St, it, { accumulate: a, trace: a });
      if (a) {
        const q = stats.get(h)!;
        q.it += info.iterations;
        q.acc += info.acceptRate * info.iterations;
        q.div += info.divergences;
      }
    },
    burnInIterations(h, iters) {
      const wu = s.warmup(h as St, iters, { targetAccept: TARGET_ACCEPT });
      const q = stats.get(h)!;
      q.warmDiv = wu.divergences;
      q.eps = wu.stepSize;
      q.warmIters = iters;
    },
    burnIn(h, seconds) {
      // Dual averaging is one warm-up call of a fixed length: time a few transitions at the heuristic's
      // first step size (they are burn-in too), then size the warm-up to fill the rest of the share.
      const t0 = now();
      const pilot = 4;
      s.step(h as St, pilot);
      const per = (now() - t0) / pilot;
      const iters = Math.max(20, Math.round((seconds - (now() - t0)) / per));
      const wu = s.warmup(h as St, iters, { targetAccept: TARGET_ACCEPT });
      const q = stats.get(h)!;
      q.warmDiv = wu.divergences;
      q.eps = wu.stepSize;
      q.warmIters = iters + pilot;
      return iters + pilot;
    },
    read: (h) => s.readAndClear(h as St).prob,
    trace(h) {
      return s.trace(h as St);
    },
    info(h) {
      const q = stats.get(h)!;
      return { acceptRate: q.it ? q.acc / q.it : NaN, divergences: q.div, warmupDivergences: q.warmDiv, stepSize: q.eps, warmupIterations: q.warmIters };
    },
    release: (h) => s.release(h as St),
    dispose: () => s.dispose(),
  };
}

// ---------------------------------------------------------------------------------------------
// One method on one grid.

interface MethodResult {
  mse: number;
  /** MSE of each chain's (run's) own estimate, averaged over the chains. */
  mseRunMean: number;
  maxAbsError: number;
  keptIterations: number;
  burnIterations: number;
  keptSeconds: number;
  sampleSeconds: number;
  setupSeconds: number;
  iterationsPerSecond: number;
  tracedIterationsPerChain: number;
  essPerIterationMedian: number | null;
  /** Largest split-R̂ over the nodes' traced segments (NaN-free nodes only). */
  maxRhat: number | null;
  essPerSecondMedian: number | null;
  eqEssPerSecondMedian: number | null;
  chains: Record<string, number>[];
  error?: string;
}

function median(xs: number[]): number {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

function runMethod(make: () => Runner, exact: Float64Array, budget: number, chains: number, traceCap: number, tracedInRun: boolean, fixed: { burn: number; kept: number } | null = null): MethodResult {
  const tSetup = now();
  const run = make();
  const setupSeconds = now() - tSetup;
  const n = exact.length;
  try {
    const sums = new Float64Array(n);
    let kept = 0, burn = 0, keptSeconds = 0, sampleSeconds = 0;
    const traces: Float64Array[][] = Array.from({ length: n }, () => []);
    const chainInfo: Record<string, number>[] = [];
    const share = budget / chains;
    let runMse = 0;
    for (let c = 0; c < chains; c++) {
      const t0 = now();
      const h = run.init(c);
      const st = { chunk: 1, rate: 0 };
      let k: number;
      if (fixed) {
        if (run.burnInIterations) run.burnInIterations(h, fixed.burn);
        else run.advance(h, fixed.burn, false);
        burn += fixed.burn;
      } else {
        const burnSeconds = share * BURN_FRACTION - (now() - t0);
        burn += run.burnIn ? run.burnIn(h, burnSeconds) : advanceFor(run, h, burnSeconds, false, st);
      }
      const tk = now();
      if (fixed) {
        // In slices, so that DHMC's in-run trace and the accumulators see the same iterations as in time mode.
        for (let left = fixed.kept; left > 0; left -= Math.min(left, 1000)) run.advance(h, Math.min(left, 1000), true);
        k = fixed.kept;
      } else k = advanceFor(run, h, Math.max(share - (tk - t0), 0), true, st);
      const t1 = now();
      keptSeconds += t1 - tk;
      sampleSeconds += t1 - t0;
      kept += k;
      const v = run.read(h);
      let cse = 0;
      for (let i = 0; i < n; i++) {
        sums[i] += v[i];
        cse += (v[i] / k - exact[i]) ** 2;
      }
      runMse += cse / n / chains;
      const len = Math.min(traceCap, k);
      const tr = run.trace(h, len);
      for (let i = 0; i < n; i++) traces[i].push(tr[i].subarray(0, tracedInRun ? Math.min(len, tr[i].length) : len));
      chainInfo.push({ kept: k, seconds: t1 - t0, ...(run.info ? run.info(h) : {}) });
      run.release(h);
    }
    let se = 0, maxAbs = 0;
    for (let i = 0; i < n; i++) {
      const d = sums[i] / kept - exact[i];
      se += d * d;
      maxAbs = Math.max(maxAbs, Math.abs(d));
    }
    // ESS per iteration from the traced segments (common length over chains).
    const N = Math.min(...traces[0].map((t) => t.length));
    const rate = kept / keptSeconds;
    const perIt: number[] = [], eqPerIt: number[] = [];
    let maxRhat = -Infinity;
    if (N >= 8) {
      for (let i = 0; i < n; i++) {
        const ch = traces[i].map((t) => t.subarray(0, N));
        const rh = splitRhat(ch);
        if (Number.isFinite(rh)) maxRhat = Math.max(maxRhat, rh);
        const e = ess(ch);
        if (!Number.isFinite(e)) continue;
        perIt.push(e / (chains * N));
        let mu = 0, m2 = 0;
        for (const t of ch) for (const x of t) mu += x;
        mu /= chains * N;
        for (const t of ch) for (const x of t) m2 += (x - mu) ** 2;
        const v = m2 / (chains * N - 1);
        const p = exact[i];
        if (v > 0 && p > 1e-9 && p < 1 - 1e-9) eqPerIt.push((p * (1 - p) * e) / v / (chains * N));
      }
    }
    const essIt = perIt.length ? median(perIt) : null;
    const eqIt = eqPerIt.length ? median(eqPerIt) : null;
    return {
      mse: se / n,
      mseRunMean: runMse,
      maxAbsError: maxAbs,
      keptIterations: kept,
      burnIterations: burn,
      keptSeconds,
      sampleSeconds,
      setupSeconds,
      iterationsPerSecond: rate,
      tracedIterationsPerChain: N,
      essPerIterationMedian: essIt,
      maxRhat: maxRhat === -Infinity ? null : maxRhat,
      essPerSecondMedian: essIt === null ? null : essIt * rate,
      eqEssPerSecondMedian: eqIt === null ? null : eqIt * rate,
      chains: chainInfo,
    };
  } finally {
    run.dispose();
  }
}

// ---------------------------------------------------------------------------------------------

const METHODS = ['gibbs', 'bgibbs', 'dhmc', 'dhmc1', 'dhmc-w'] as const;
type Method = (typeof METHODS)[number];
const SHORT: Record<Method, string> = { gibbs: 'G', bgibbs: 'BG', dhmc: 'D', dhmc1: 'D1', 'dhmc-w': 'Dw' };
/** The larger shift of 'dhmc1': d = max(0, −λ_min(W)) + DHMC1_MARGIN on every bit. */
const DHMC1_MARGIN = 1;

interface GridRecord {
  type: GridType;
  c1: number;
  c2: number;
  grid: number;
  seed: number;
  exactSeconds: number;
  lambdaMinW: number;
  lambdaMaxWD: number;
  lambdaMinWD: number;
  /** λ_max(W + D) with dhmc1's shift. */
  lambdaMaxWD1: number;
  logConcave: boolean;
  relaxationSeconds: number;
  methods: Partial<Record<Method, MethodResult | { error: string }>>;
}


const fmtE = (x: number | null | undefined, d = 1) => (x == null || !Number.isFinite(x) ? '—' : x.toExponential(d).replace('e+', 'e'));
const geo = (xs: number[]) => {
  const f = xs.filter((x) => x > 0 && Number.isFinite(x));
  return f.length ? Math.exp(f.reduce((s, x) => s + Math.log(x), 0) / f.length) : NaN;
};

async function main() {
  const tAll = now();
  const methods: Method[] = [...METHODS];
  console.log(
    `Zhang et al. 2012 §5 grids${QUICK ? ' (quick)' : ''}: node ${process.version}, ${cpuModel() ?? 'cpu unknown'}\n` +
      `  ${SIDE}×${SIDE}, c₁ ∈ {${CFG.c1.join(', ')}}, c₂ ∈ {${CFG.c2.join(', ')}}, ${CFG.grids} grid(s) per cell and type; ` +
      (EQUAL_SAMPLES
        ? `equal samples: ${EQUAL_SAMPLES.runs} runs of ${EQUAL_SAMPLES.kept} iterations after ${EQUAL_SAMPLES.burn} burn-in per method per grid`
        : `${CFG.budget} s per method per grid over ${CFG.chains} chains (burn-in ${Math.round(BURN_FRACTION * 100)} %)`) + `; methods ${methods.join(', ')}`,
  );
  const engine = await loadEngine(WASM_PATH);

  const makeRunner = (m: Method, model: Model, rel: Relaxation, rel1: Relaxation, seed: number): (() => Runner) => {
    if (m === 'gibbs') return () => batchRunner(new GibbsSampler(engine, model), seed);
    if (m === 'bgibbs') return () => batchRunner(new BlockGibbsSampler(engine, rel), seed);
    if (m === 'dhmc1') return () => dhmcRunner(engine, rel1, seed, 'zhang', CFG.traceCap);
    return () => dhmcRunner(engine, rel, seed, m === 'dhmc' ? 'zhang' : 'whitened', CFG.traceCap);
  };
  const shifted = (model: Model, rel: Relaxation) => buildRelaxation(engine, model, { shift: new Float64Array(rel.form.nBits).fill(Math.max(0, -rel.lambdaMin) + DHMC1_MARGIN) });

  // Warm-up pass (V8 tiers WASM functions up after first use): every method once on one grid, discarded.
  {
    const model = zhangGrid('standard', 1, 1, SEED - 1);
    const ex = exactInference(engine, model).marginals.map((p) => p[1]);
    const rel = buildRelaxation(engine, model);
    const rel1 = shifted(model, rel);
    for (const m of methods) {
      try {
        runMethod(makeRunner(m, model, rel, rel1, SEED - 1), Float64Array.from(ex), Math.min(0.2, CFG.budget), 2, 200, m.startsWith('dhmc'));
      } catch {
        /* reported on the real grids */
      }
    }
  }

  const records: GridRecord[] = [];
  let rot = 0;
  for (const type of TYPES) {
    for (let i1 = 0; i1 < CFG.c1.length; i1++) {
      for (let i2 = 0; i2 < CFG.c2.length; i2++) {
        for (let g = 0; g < CFG.grids; g++) {
          const c1 = CFG.c1[i1], c2 = CFG.c2[i2];
          const seed = SEED + 100000 * TYPES.indexOf(type) + 1000 * i1 + 10 * i2 + g;
          const model = zhangGrid(type, c1, c2, seed);
          const t = now();
          const exact = Float64Array.from(exactInference(engine, model).marginals, (p) => p[1]);
          const exactSeconds = now() - t;
          const tr = now();
          const rel = buildRelaxation(engine, model);
          const relaxationSeconds = now() - tr;
          const rel1 = shifted(model, rel);
          const rec: GridRecord = {
            type, c1, c2, grid: g, seed, exactSeconds,
            lambdaMinW: rel.lambdaMin, lambdaMaxWD: rel.lambdaMaxWD, lambdaMinWD: rel.lambdaMinWD, lambdaMaxWD1: rel1.lambdaMaxWD, logConcave: rel.logConcave, relaxationSeconds,
            methods: {},
          };
          // Rotate the order of the methods from grid to grid (machine noise spreads evenly).
          const order = methods.map((_, q) => methods[(q + rot) % methods.length]);
          rot++;
          for (const m of order) {
            try {
              rec.methods[m] = runMethod(makeRunner(m, model, rel, rel1, seed), exact, CFG.budget, CFG.chains, CFG.traceCap, m.startsWith('dhmc'), EQUAL_SAMPLES);
            } catch (e) {
              rec.methods[m] = { error: String(e instanceof Error ? e.message : e).split('\n')[0] };
            }
          }
          records.push(rec);
          const line = methods
            .map((m) => {
              const r = rec.methods[m]!;
              if ('error' in r && r.error) return `${SHORT[m]} ERROR`;
              const q = r as MethodResult;
              return `${SHORT[m]} ${fmtE(q.mse)} (${q.keptIterations} it)`;
            })
            .join('  ');
          process.stdout.write(`  ${type.padEnd(10)} c₁=${c1} c₂=${c2} #${g}: λmax(W+D) ${rel.lambdaMaxWD.toFixed(1)}  MSE ${line}\n`);
        }
      }
    }
  }

  // ---- Tables.
  const ok = (r: MethodResult | { error: string } | undefined): r is MethodResult => !!r && !('error' in r && r.error);
  const cell = (type: GridType, c1: number, c2: number) => records.filter((r) => r.type === type && r.c1 === c1 && r.c2 === c2);
  const tables: Record<string, unknown> = {};
  const summary: Record<string, unknown> = {};
  /** '†' when a grid of the cell has a node whose traced segments give split-R̂ > 1.1 for this method. */
  const flag = (rs: GridRecord[], m: Method) => (rs.some((r) => { const q = r.methods[m]; return !ok(q) || q.maxRhat === null || q.maxRhat > 1.1; }) ? '†' : '');
  const printTable = (title: string, type: GridType, value: (rs: GridRecord[], m: Method) => number, fmt: (x: number) => string, better: 'low' | 'high', flagged = false) => {
    console.log(`\n${title}`);
    console.log(`| c₁ \\ c₂ | ${CFG.c2.join(' | ')} |`);
    console.log(`|---|${CFG.c2.map(() => '---|').join('')}`);
    const grid: Record<string, Record<string, Record<string, number>>> = {};
    for (const c1 of CFG.c1) {
      const row: string[] = [];
      grid[c1] = {};
      for (const c2 of CFG.c2) {
        const rs = cell(type, c1, c2);
        const vals = methods.map((m) => value(rs, m));
        const finite = vals.filter((v) => Number.isFinite(v));
        const best = finite.length ? (better === 'low' ? Math.min(...finite) : Math.max(...finite)) : NaN;
        grid[c1][c2] = Object.fromEntries(methods.map((m, q) => [m, vals[q]]));
        row.push(methods.map((m, q) => `${SHORT[m]} ${vals[q] === best ? `**${fmt(vals[q])}**` : fmt(vals[q])}${flagged ? flag(rs, m) : ''}`).join(' · '));
      }
      console.log(`| ${c1} | ${row.join(' | ')} |`);
    }
    return grid;
  };
  const meanOver = (rs: GridRecord[], m: Method, f: (q: MethodResult) => number | null) => {
    const xs = rs.map((r) => r.methods[m]).filter(ok).map((q) => f(q));
    if (!xs.length || xs.some((x) => x === null || !Number.isFinite(x))) return NaN;
    return (xs as number[]).reduce((s, x) => s + x, 0) / xs.length;
  };
  const geoOver = (rs: GridRecord[], m: Method, f: (q: MethodResult) => number | null) => geo(rs.map((r) => r.methods[m]).filter(ok).map((q) => f(q) ?? NaN));
  for (const type of TYPES) {
    tables[type] = {
      ...(EQUAL_SAMPLES ? { mseRunMean: printTable(`${type} grids: MSE of one run's estimate (mean over the ${EQUAL_SAMPLES.runs} runs and the grids of a cell); best in bold`, type, (rs, m) => meanOver(rs, m, (q) => q.mseRunMean), (x) => fmtE(x), 'low') } : {}),
      mse: printTable(`${type} grids: mean MSE of node marginals (over ${CFG.grids} grid(s) per cell); best in bold. G = Gibbs p(s), BG = block Gibbs p(x,s), D = DHMC (A = I), D1 = DHMC (A = I, d = −λmin + 1), Dw = DHMC whitened`, type, (rs, m) => meanOver(rs, m, (q) => q.mse), (x) => fmtE(x), 'low'),
      eqEssPerSecond: printTable(`${type} grids: indicator-equivalent ESS per second, median over nodes (geometric mean over grids); best in bold; † = some node's split-R̂ > 1.1 (ESS not trustworthy)`, type, (rs, m) => geoOver(rs, m, (q) => q.eqEssPerSecondMedian), (x) => fmtE(x), 'high', true),
      essPerSecond: printTable(`${type} grids: ESS per second of the RB traces, median over nodes (geometric mean over grids); best in bold; † as above`, type, (rs, m) => geoOver(rs, m, (q) => q.essPerSecondMedian), (x) => fmtE(x), 'high', true),
    };
    const rs = records.filter((r) => r.type === type);
    const wins: Record<string, number> = Object.fromEntries(methods.map((m) => [m, 0]));
    for (const c1 of CFG.c1) for (const c2 of CFG.c2) {
      const cs = cell(type, c1, c2);
      let bestM: Method | null = null, bestV = Infinity;
      for (const m of methods) {
        const v = meanOver(cs, m, (q) => q.mse);
        if (v < bestV) (bestV = v), (bestM = m);
      }
      if (bestM) wins[bestM]++;
    }
    const per = Object.fromEntries(
      methods.map((m) => {
        const qs = rs.map((r) => r.methods[m]).filter(ok);
        const acc = qs.flatMap((q) => q.chains.map((c) => c.acceptRate)).filter((x) => Number.isFinite(x));
        return [m, {
          geoMeanMse: geo(qs.map((q) => q.mse)),
          geoMeanMseRunMean: geo(qs.map((q) => q.mseRunMean)),
          medianSampleSeconds: median(qs.map((q) => q.sampleSeconds)),
          medianMse: median(qs.map((q) => q.mse)),
          cellsBest: wins[m],
          medianIterationsPerSecond: median(qs.map((q) => q.iterationsPerSecond)),
          medianEqEssPerSecond: median(qs.map((q) => q.eqEssPerSecondMedian ?? NaN)),
          meanAcceptRate: acc.length ? acc.reduce((s, x) => s + x, 0) / acc.length : null,
          divergences: qs.reduce((s, q) => s + q.chains.reduce((t, c) => t + (c.divergences ?? 0), 0), 0),
          failures: rs.length - qs.length,
        }];
      }),
    );
    summary[type] = per;
    console.log(`\n${type}: over all ${rs.length} grids`);
    for (const m of methods) {
      const p = per[m] as Record<string, number | null>;
      console.log(
        `  ${m.padEnd(7)} MSE geo-mean ${fmtE(p.geoMeanMse as number)} (one run: ${fmtE(p.geoMeanMseRunMean as number)}), median ${fmtE(p.medianMse as number)}; ${(p.medianSampleSeconds as number).toFixed(2)} s per grid; best in ${p.cellsBest}/${CFG.c1.length * CFG.c2.length} cells; ` +
          `${fmtE(p.medianIterationsPerSecond as number, 2)} it/s; eq. ESS/s ${fmtE(p.medianEqEssPerSecond as number)}` +
          (m.startsWith('dhmc') ? `; mean acceptance ${p.meanAcceptRate === null ? '—' : (p.meanAcceptRate as number).toFixed(3)}, divergences ${p.divergences}` : '') +
          (p.failures ? `; FAILED on ${p.failures} grids` : ''),
      );
    }
  }

  const result = {
    quick: QUICK,
    date: new Date().toISOString(),
    machine: { node: process.version, cpu: cpuModel(), platform: `${process.platform} ${process.arch}` },
    wasm: wasmFacts(WASM_PATH),
    config: {
      ...CFG,
      side: SIDE,
      seed: SEED,
      leapfrogSteps: LEAPFROG_STEPS,
      targetAccept: TARGET_ACCEPT,
      burnFraction: BURN_FRACTION,
      equalSamples: EQUAL_SAMPLES,
      methods,
      parameterisation: "w_ij = c2·2·z (N(0,4) read as variance 4), a_i = c1·(2z) standard, c1·(Σ_j w_ij + 2z) frustrated; boltzmann({a, edges}) on s ∈ {0,1}",
      relaxation: "buildRelaxation defaults (Martens' shift, sparse Cholesky) for bgibbs, dhmc, dhmc-w; dhmc1: user shift d = max(0, -lambdaMin(W)) + 1",
      dhmc1Margin: DHMC1_MARGIN,
      essDefinition: 'ESS/s = (multi-chain ESS of the node RB traces over a post-burn-in segment / segment iterations) × kept iterations per second; eq. ESS = p(1-p)/MCSE²',
      notes: null,
    },
    tables,
    summary,
    grids: records,
    seconds: now() - tAll,
  };
  const out = resultsPath(EQUAL_SAMPLES ? 'zhang-samples.json' : 'zhang.json');
  writeFileSync(out, JSON.stringify(result, null, 1) + '\n');
  console.log(`\nwrote ${out} (${result.seconds.toFixed(1)} s)`);
}

await main();
