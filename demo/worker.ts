// Web Worker of the demo: owns one engine (bindings/browser.ts, module fetched from /release.wasm)
// and samples a 2-D Ising lattice live, one chain, posting the configuration, the running node
// marginals and their batch-means standard errors after every batch. Also answers one-shot 'run'
// requests through infer() (the browser test uses them to compare with Node bit for bit).
import { loadEngine, isingLattice, infer, GibbsSampler, BlockGibbsSampler, DHMCSampler, type Engine, type Model } from '../bindings/browser.ts';
import { relaxationFor } from '../bindings/infer.ts';
import { BatchMeans } from '../bindings/estimators.ts';
import type { LiveSpec, RunSpec, ToWorker, FromWorker } from './protocol.ts';

const scope = self as unknown as { postMessage(m: FromWorker): void; onmessage: ((e: MessageEvent<ToWorker>) => void) | null };
const enginePromise: Promise<Engine> = loadEngine(new URL('/release.wasm', self.location.href));
let generation = 0;

function latticeModel(s: { size: number; beta: number; h: number; periodic: boolean }): Model {
  return isingLattice({ shape: [s.size, s.size], beta: s.beta, h: s.h, periodic: s.periodic });
}

/** One live chain of any of the three samplers, behind one shape. */
interface Live {
  /** Runs `len` sweeps/iterations; returns the per-bit sums of the estimator and the change/accept rate. */
  batch(len: number): { sums: Float64Array; rate: number };
  /** What the canvas shows: the configuration (0/1) or, for DHMC, p(s = 1 | x). */
  picture(): ArrayLike<number>;
  dispose(): void;
}

function startLive(engine: Engine, spec: LiveSpec): Live {
  const model = latticeModel(spec);
  if (spec.method === 'gibbs' || spec.method === 'blockgibbs') {
    const s = spec.method === 'gibbs' ? new GibbsSampler(engine, model) : new BlockGibbsSampler(engine, relaxationFor(engine, model));
    const state = s.init(spec.seed, 0);
    const acc = s.accumulator();
    return {
      batch(len) {
        const info = s.step(state as never, len, acc);
        return { sums: s.readAndClear(acc), rate: info.changeRate };
      },
      picture: () => s.configuration(state as never),
      dispose: () => s.dispose(),
    };
  }
  const s = new DHMCSampler(engine, relaxationFor(engine, model));
  const state = s.init(spec.seed, 0);
  s.warmup(state, 300, { targetAccept: 0.9 });
  return {
    batch(len) {
      const info = s.step(state, len, { accumulate: true });
      return { sums: s.readAndClear(state).prob, rate: info.acceptRate };
    },
    picture: () => s.conditional(state),
    dispose: () => s.dispose(),
  };
}

async function live(spec: LiveSpec, gen: number): Promise<void> {
  const engine = await enginePromise;
  const chain = startLive(engine, spec);
  try {
    const n = spec.size * spec.size;
    const stats = new BatchMeans(n);
    // Batch length adapts so that one batch takes about 40 ms of sampling.
    let len = 1, sweeps = 0, rateSum = 0;
    const t0 = performance.now();
    while (gen === generation) {
      const t = performance.now();
      const { sums, rate } = chain.batch(len);
      const ms = performance.now() - t;
      stats.addBatch(sums, len);
      sweeps += len;
      rateSum += rate * len;
      const se = stats.stdErr();
      let maxSE = 0;
      for (const x of se) if (Number.isFinite(x)) maxSE = Math.max(maxSE, x);
      scope.postMessage({
        type: 'frame', gen, picture: Float64Array.from(chain.picture()), marginals: stats.mean(), stdErr: se,
        sweeps, batches: stats.batches, rate: rateSum / sweeps, maxStdErr: stats.batches >= 2 ? maxSE : null,
        sweepsPerSecond: (sweeps * 1000) / (performance.now() - t0),
      });
      if (stats.batches < 20) len = Math.max(1, Math.min(len * 2, Math.round((len * 40) / Math.max(ms, 0.1))));
      // Yield so that 'stop' and new settings are received.
      await new Promise((ok) => setTimeout(ok, 0));
    }
  } finally {
    chain.dispose();
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
