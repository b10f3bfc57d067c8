// Starting a worker thread on one of the package's modules, from the built package or from the
// sources under tsx (used by runParallel's Node host and by the queue worker). Kept out of
// parallel.ts so that its declarations do not need Node's types.
import { Worker } from 'node:worker_threads';

/**
 * Starts the worker module `name` beside `base` (the caller's import.meta.url): name.js in the
 * built package (dist/), or name.ts when running from the sources under tsx — worker threads on
 * Node 20 do not inherit the parent's --import loader hooks, so that worker registers tsx's hooks
 * itself first. The parent's flags are not passed on (e.g. --input-type, which is an error in a worker).
 */
export function startWorkerModule(base: string, name: string, workerData?: unknown): Worker {
  const fromSources = base.endsWith('.ts');
  const script = new URL(`./${name}${fromSources ? '.ts' : '.js'}`, base);
  if (!fromSources) return new Worker(script, { execArgv: [], workerData });
  const api = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(api)}).then(({ register }) => { register(); return import(${JSON.stringify(script.href)}); })`;
  return new Worker(boot, { eval: true, execArgv: [], workerData });
}
