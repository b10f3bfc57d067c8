// Node worker of exactInferenceParallel (exact-parallel.ts): one engine, the model, and a list of
// slices of a sliced bucket-elimination plan; posts each slice's log Z and marginals as it is done.
import { parentPort, workerData } from 'node:worker_threads';
import { loadEngine } from '../core/wasm-node.ts';
import { Model } from '../core/model.ts';
import { SliceRunner } from './slicing.ts';
import type { SliceJob, SliceMessage } from './exact-parallel.ts';

const port = parentPort;
if (!port) throw new Error('slice-worker runs only as a worker thread (see exact-parallel.ts)');
const post = (m: SliceMessage): void => port.postMessage(m);

loadEngine()
  .then((engine) => {
    const job = workerData as SliceJob;
    const model = Model.fromData(job.model);
    const runner = new SliceRunner(engine, model, job.spec);
    for (const s of job.slices) post({ type: 'slice', outcome: runner.run(s) });
    post({ type: 'finished' });
  })
  .catch((e: unknown) => {
    const err = e instanceof Error ? e : new Error(String(e));
    post({ type: 'error', message: err.message, name: err.name });
  });
