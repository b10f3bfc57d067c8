// Node worker of runParallel (parallel.ts): owns one engine instance and runs its share of the
// chains (chain-job.ts runJob), posting every event to the parent as it happens (so a cancelled
// run keeps what was done).
import { parentPort, workerData } from 'node:worker_threads';
import { loadEngine } from '../core/wasm-node.ts';
import { runJob, transferables, type WorkerJob, type WorkerMessage } from './chain-job.ts';

const port = parentPort;
if (!port) throw new Error('parallel-worker runs only as a worker thread (see parallel.ts)');

const post = (msg: WorkerMessage) => port.postMessage(msg, msg.type === 'event' ? transferables(msg.event) : []);

loadEngine()
  .then((engine) => runJob(engine, workerData as WorkerJob, post))
  .catch((e: unknown) => {
    const err = e instanceof Error ? e : new Error(String(e));
    post({ type: 'error', message: err.message, name: err.name });
  });
