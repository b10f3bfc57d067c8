// Web Worker of the demo: owns one engine (bindings/browser.ts, module fetched from /release.wasm)
// and samples a 2-D Ising lattice live with several chains side by side, posting the configuration,
// the running node marginals with batch-means standard errors, acceptance, ESS and R̂ of the
// magnetisation, and a log Z estimate by AIS that advances one run between batches. The page stays
// responsive because all of this runs here, in short pieces. Also answers one-shot 'run' requests
// through infer() (the browser test uses them to compare with Node bit for bit).
import { loadEngine, isingLattice, infer, runAIS, logMeanExp, toCanonical, ess, rankNormalizedRhat, GibbsSampler, BlockGibbsSampler, DHMCSampler, type Engine, type Model } from '../bindings/browser.ts';
import { relaxationFor } from '../bindings/infer.ts';
import { BatchMeans } from '../bindings/samplers/estimators.ts';
import { AIS_RUNS, LIVE_CHAINS, aisSteps, type LiveSpec, type LogZReadout, type RunSpec, type ToWorker, type FromWorker } from './protocol.ts';

const scope = self as unknown as { postMessage(m: FromWorker): void; onmessage: ((e: MessageEvent<ToWorker>) => void) | null };
const enginePromise: Promise<Engine> = loadEngine(new URL('/release.wasm', self.location.href));
let generation = 0;

/** Longest magnetisation trace kept per chain; past it the traces are thinned by 2. */
const TRACE_CAP = 4096;

function latticeModel(s: { size: number; beta: number; h: number; periodic: boolean }): Model {
  return isingLattice({ shape: [s.size, s.size], beta: s.beta, h: s.h, periodic: s.periodic });
}

/** One live chain of any of the three samplers, behind one shape. */
interface LiveChain {
  /** One sweep (Gibbs, block Gibbs) or transition (DHMC), accumulated into the chain's estimator. */
  advance(): { rate: number; accept: number };
  /** Per-bit sums of the estimator since the last call. */
  take(): Float64Array;
  /** What the canvas shows: the configuration (0/1) or, for DHMC, p(s = 1 | x). */
  picture(): ArrayLike<number>;
}

function startLive(engine: Engine, spec: LiveSpec, model: Model): { chains: LiveChain[]; dispose(): void } {
  const chains: LiveChain[] = [];
  if (spec.method === 'gibbs' || spec.method === 'blockgibbs') {
    const s = spec.method === 'gibbs' ? new GibbsSampler(engine, model) : new BlockGibbsSampler(engine, relaxationFor(engine, model));
    for (let c = 0; c < LIVE_CHAINS; c++) {
      const state = s.init(spec.seed, c);
      const acc = s.accumulator();
      chains.push({
        advance: () => ({ rate: s.step(state as never, 1, acc).changeRate, accept: 1 }),
        take: () => s.readAndClear(acc),
        picture: () => s.configuration(state as never),
      });
    }
    return { chains, dispose: () => s.dispose() };
  }
  const s = new DHMCSampler(engine, relaxationFor(engine, model));
  for (let c = 0; c < LIVE_CHAINS; c++) {
    const state = s.init(spec.seed, c);
    s.warmup(state, 300, { targetAccept: 0.9 });
    chains.push({
      advance: () => {
        const info = s.step(state, 1, { accumulate: true });
        return { rate: info.acceptRate, accept: info.acceptRate };
      },
      take: () => s.readAndClear(state).prob,
      picture: () => s.conditional(state),
    });
  }
  return { chains, dispose: () => s.dispose() };
}

/** Mean of 2p − 1 over the sites: the magnetisation of a configuration (or of π for DHMC). */
function magnetisation(p: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < p.length; i++) m += 2 * p[i] - 1;
  return m / p.length;
}

/** AIS one run at a time (run r from stream (seed, r)); the schedule comes from the first call. */
class PiecewiseAIS {
  private readonly weights: number[] = [];
  private schedule: Float64Array | null = null;
  private constant = 0;
  private transition = '';
  readonly steps: number;

  constructor(private readonly engine: Engine, private readonly model: Model, private readonly seed: number) {
    this.steps = aisSteps(model.n);
  }

  get done(): boolean {
    return this.weights.length >= AIS_RUNS;
  }

  step(): void {
    if (this.done) return;
    const r = runAIS(this.engine, this.model, { seed: this.seed, runs: 1, firstRun: this.weights.length, steps: this.steps, schedule: this.schedule ?? 'adaptive' });
    if (!this.schedule) {
      this.schedule = r.schedule;
      this.constant = r.diagnostics.logZ0 as number;
      this.transition = r.diagnostics.transition === 'tree' ? 'tree-block Gibbs' : 'single-site Gibbs';
    }
    this.weights.push(r.logWeights[0]);
  }

  readout(): LogZReadout | null {
    if (this.weights.length === 0) return null;
    const lme = logMeanExp(this.weights);
    // Same arithmetic as one runAIS call with every run.
    return { estimator: `AIS (${this.steps} temperatures, ${this.transition} transitions)`, value: lme.value + this.constant + toCanonical(this.model).logZOffset, stdErr: this.weights.length > 1 ? lme.stdErr : NaN, runs: this.weights.length, totalRuns: AIS_RUNS, logWeights: this.weights.slice() };
  }
}

async function live(spec: LiveSpec, gen: number): Promise<void> {
  const engine = await enginePromise;
  const model = latticeModel(spec);
  const run = startLive(engine, spec, model);
  const ais = new PiecewiseAIS(engine, model, spec.seed);
  try {
    const n = spec.size * spec.size;
    const stats = new BatchMeans(n);
    const traces = run.chains.map(() => [] as number[]);
    let thin = 1, calls = 0;
    // Batch length (sweeps per chain) adapts so that one round of batches takes about 40 ms.
    let len = 1, sweeps = 0, rateSum = 0, acceptSum = 0, draws = 0;
    const t0 = performance.now();
    while (gen === generation) {
      const t = performance.now();
      for (let i = 0; i < len; i++) {
        const record = calls++ % thin === 0;
        run.chains.forEach((c, k) => {
          const { rate, accept } = c.advance();
          rateSum += rate;
          acceptSum += accept;
          draws++;
          if (record) traces[k].push(magnetisation(c.picture()));
        });
      }
      for (const c of run.chains) stats.addBatch(c.take(), len);
      if (traces[0].length >= TRACE_CAP) {
        for (let k = 0; k < traces.length; k++) traces[k] = traces[k].filter((_, i) => i % 2 === 0);
        thin *= 2;
      }
      const ms = performance.now() - t;
      ais.step();
      sweeps += len;
      const se = stats.stdErr();
      let maxSE = 0;
      for (const x of se) if (Number.isFinite(x)) maxSE = Math.max(maxSE, x);
      const e = ess(traces), r = rankNormalizedRhat(traces);
      scope.postMessage({
        type: 'frame', gen, picture: Float64Array.from(run.chains[0].picture()), marginals: stats.mean(), stdErr: se,
        sweeps, batches: stats.batches, rate: rateSum / draws, maxStdErr: stats.batches >= 2 ? maxSE : null,
        sweepsPerSecond: (sweeps * 1000) / (performance.now() - t0),
        chains: run.chains.length, accept: acceptSum / draws, ess: Number.isFinite(e) ? e : null, rhat: Number.isFinite(r) ? r : null, traceThin: thin,
        logZ: ais.readout(),
      });
      if (stats.batches < 20 * LIVE_CHAINS) len = Math.max(1, Math.min(len * 2, Math.round((len * 40) / Math.max(ms, 0.1))));
      // Yield so that 'stop' and new settings are received.
      await new Promise((ok) => setTimeout(ok, 0));
    }
  } finally {
    run.dispose();
  }
}

async function runOnce(spec: RunSpec, id: number): Promise<void> {
  const engine = await enginePromise;
  const { size, beta, h, periodic, ...opts } = spec;
  const r = infer(engine, latticeModel({ size, beta, h, periodic }), opts);
  scope.postMessage({ type: 'result', id, marginals: r.marginals, marginalStdErr: r.marginalStdErr, diagnostics: r.diagnostics, logZ: r.logZ });
}

scope.onmessage = (e) => {
  const msg = e.data;
  const fail = (err: unknown) => scope.postMessage({ type: 'error', id: msg.type === 'run' ? msg.id : null, message: err instanceof Error ? err.message : String(err) });
  if (msg.type === 'start') {
    const gen = ++generation;
    live(msg.spec, gen).catch(fail);
  } else if (msg.type === 'stop') {
    generation++;
  } else if (msg.type === 'run') {
    runOnce(msg.spec, msg.id).catch(fail);
  }
};
scope.postMessage({ type: 'hello' });
