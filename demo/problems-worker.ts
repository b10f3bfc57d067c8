// Worker of the problems page: parses the model, runs exact inference when the engine accepts it,
// then each chosen method at doubling budgets within its time allowance, posting every run's log Z
// and marginal errors against exact as it finishes.
import { loadEngine, readUAI, readFG, infer, runAIS, EngineError, type Engine, type Model, type InferenceResult } from '../bindings/browser.ts';
import type { FromProblemWorker, ProblemMethod, SolveRequest, ToProblemWorker } from './problems-protocol.ts';

const scope = self as unknown as { postMessage(m: FromProblemWorker): void; onmessage: ((e: MessageEvent<ToProblemWorker>) => void) | null };
const enginePromise: Promise<Engine> = loadEngine(new URL('/release.wasm', self.location.href));
let generation = 0;

function errors(r: InferenceResult, exact: Float64Array[] | null): { max: number | null; mean: number | null } {
  if (!exact) return { max: null, mean: null };
  let max = 0, sum = 0;
  r.marginals.forEach((row, v) => {
    let worst = 0;
    for (let k = 0; k < row.length; k++) worst = Math.max(worst, Math.abs(row[k] - exact[v][k]));
    max = Math.max(max, worst);
    sum += worst;
  });
  return { max, mean: sum / r.marginals.length };
}

/** One run of `method` at budget level `b` (0, 1, 2, …: twice the work each time). */
function runAt(engine: Engine, model: Model, method: ProblemMethod, b: number, seed: number): { budget: number; r: { logZ: number | null; logZStdErr: number | null; logZKind: string | null; seconds: number; marginals: Float64Array[] | null } } {
  if (method === 'ais') {
    const steps = 50 * 2 ** b;
    const r = runAIS(engine, model, { seed, runs: 16, steps });
    return { budget: steps, r: { logZ: r.logZ, logZStdErr: r.logZStdErr, logZKind: 'estimate', seconds: r.seconds, marginals: null } };
  }
  if (method === 'mf') {
    const restarts = 2 ** b;
    const r = infer(engine, model, { method: 'mf', seed, restarts });
    return { budget: restarts, r };
  }
  const samples = 100 * 2 ** b;
  const r = infer(engine, model, { method, seed, chains: 4, samples, burnin: Math.min(500, samples) });
  return { budget: samples, r };
}

async function solve(req: SolveRequest, gen: number): Promise<void> {
  const engine = await enginePromise;
  const model = req.format === 'fg' ? readFG(req.text, req.name) : readUAI(req.text, req.name);
  scope.postMessage({ type: 'model', name: req.name, n: model.n, factors: model.nFactors, maxArity: model.maxArity });
  let exact: Float64Array[] | null = null;
  try {
    const t = performance.now();
    const r = infer(engine, model, { method: 'exact' });
    exact = r.marginals;
    scope.postMessage({ type: 'exact', logZ: r.logZ, seconds: (performance.now() - t) / 1000, refused: null });
  } catch (e) {
    if (!(e instanceof EngineError)) throw e;
    scope.postMessage({ type: 'exact', logZ: null, seconds: 0, refused: e.message });
  }
  for (const method of req.methods) {
    let spent = 0, last = 0;
    for (let b = 0; b < 20 && gen === generation; b++) {
      // The next run costs about twice the last one: stop before it would pass the allowance.
      if (b > 0 && spent + 2 * last > req.seconds) break;
      let run;
      try {
        run = runAt(engine, model, method, b, req.seed);
      } catch (e) {
        // A method that does not take this model (e.g. the relaxation on factors of arity 3).
        scope.postMessage({ type: 'error', message: `${method}: ${(e as Error).message}` });
        break;
      }
      const { r, budget } = run;
      spent += r.seconds;
      last = r.seconds;
      const err = r.marginals ? errors(r as InferenceResult, exact) : { max: null, mean: null };
      scope.postMessage({ type: 'point', method, budget, seconds: r.seconds, logZ: r.logZ, logZStdErr: r.logZStdErr, logZKind: r.logZKind, maxMarginalError: err.max, meanMarginalError: err.mean });
      if (method === 'mf' && b >= 3) break;
      await new Promise((ok) => setTimeout(ok, 0)); // let 'stop' in
    }
  }
  scope.postMessage({ type: 'done', stopped: gen !== generation });
}

scope.onmessage = (e) => {
  const msg = e.data;
  if (msg.type === 'stop') generation++;
  else if (msg.type === 'solve') {
    const gen = ++generation;
    solve(msg, gen).catch((err) => scope.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) }));
  }
};
scope.postMessage({ type: 'hello' });
