// Worker of the denoising page: the posterior of a binary image under an Ising prior given a noisy
// copy — p(x | y) ∝ exp(J Σ_{i~j} x_i x_j + h Σ_i y_i x_i), h = ½ log((1 − p)/p) for flips with
// probability p — sampled by Gibbs with four chains in short pieces, posting the running
// posterior marginals and a current sample.
import { loadEngine, isingLattice, GibbsSampler, type Engine } from '../bindings/browser.ts';
import type { DenoiseRequest, FromDenoiseWorker, ToDenoiseWorker } from './denoise-protocol.ts';

const scope = self as unknown as { postMessage(m: FromDenoiseWorker): void; onmessage: ((e: MessageEvent<ToDenoiseWorker>) => void) | null };
const enginePromise: Promise<Engine> = loadEngine(new URL('/release.wasm', self.location.href));
const CHAINS = 4;
let generation = 0;

async function run(req: DenoiseRequest, gen: number): Promise<void> {
  const engine = await enginePromise;
  const field = 0.5 * Math.log((1 - req.flip) / req.flip);
  const h = Float64Array.from(req.noisy, (y) => field * y);
  const model = isingLattice({ shape: [req.height, req.width], beta: 1, J: req.coupling, h });
  const sampler = new GibbsSampler(engine, model);
  try {
    const acc = sampler.accumulator();
    const states = Array.from({ length: CHAINS }, (_, c) => sampler.init(req.seed, c));
    const sums = new Float64Array(model.n);
    let sweeps = 0, len = 1;
    const t0 = performance.now();
    while (gen === generation) {
      const t = performance.now();
      for (const s of states) sampler.step(s, len, acc);
      const part = sampler.readAndClear(acc);
      for (let i = 0; i < model.n; i++) sums[i] += part[i];
      sweeps += len;
      const finished = sweeps >= req.maxSweeps;
      scope.postMessage({
        type: 'frame', gen, marginals: sums.map((s) => s / (sweeps * CHAINS)), sample: Float64Array.from(sampler.configuration(states[0])),
        sweeps, sweepsPerSecond: (sweeps * 1000) / (performance.now() - t0), done: finished,
      });
      if (finished) break;
      // Pieces of about 30 ms, never past the sweep budget.
      len = Math.max(1, Math.min(req.maxSweeps - sweeps, Math.round((len * 30) / Math.max(0.1, performance.now() - t))));
      await new Promise((ok) => setTimeout(ok, 0));
    }
  } finally {
    sampler.dispose();
  }
}

scope.onmessage = (e) => {
  const msg = e.data;
  if (msg.type === 'stop') generation++;
  else if (msg.type === 'start') {
    const gen = ++generation;
    run(msg, gen).catch((err) => scope.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) }));
  }
};
scope.postMessage({ type: 'hello' });
