// Web Worker of runParallel in browsers (parallel-browser.ts): receives its job, loads its own engine
// (from the job's .wasm URL, or build/release.wasm beside the package's modules) and runs its share
// of the chains (chain-job.ts runJob), posting every event as it happens.
import { loadEngine } from '../core/wasm-browser.ts';
import { runJob, transferables, type WorkerJob, type WorkerMessage } from './chain-job.ts';

const scope = self as unknown as {
  postMessage(m: WorkerMessage, transfer: Transferable[]): void;
  onmessage: ((e: MessageEvent<WorkerJob>) => void) | null;
};

const post = (msg: WorkerMessage) => scope.postMessage(msg, msg.type === 'event' ? transferables(msg.event) : []);

scope.onmessage = (e) => {
  scope.onmessage = null;
  const job = e.data;
  loadEngine(job.wasm ?? undefined)
    .then((engine) => runJob(engine, job, post))
    .catch((err: unknown) => {
      const x = err instanceof Error ? err : new Error(String(err));
      post({ type: 'error', message: x.message, name: x.name });
    });
};
