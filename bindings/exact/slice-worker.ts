// Node worker of exactInferenceParallel and exactSampleParallel / exactMAPParallel (exact-parallel.ts):
// one engine, the model, and a sliced bucket-elimination plan; posts each slice's log Z and
// marginals as it is done, or, for a decoding job, answers each batch of decoding tasks it is sent.
import { parentPort, workerData } from 'node:worker_threads';
import { loadEngine } from '../core/wasm-node.ts';
import { Model } from '../core/model.ts';
import { SliceRunner } from './slicing.ts';
import type { DecodeBatch, SliceJob, SliceMessage } from './exact-parallel.ts';

const port = parentPort;
if (!port) throw new Error('slice-worker runs only as a worker thread (see exact-parallel.ts)');
const post = (m: SliceMessage): void => port.postMessage(m);
const postError = (e: unknown): void => {
  const err = e instanceof Error ? e : new Error(String(e));
  post({ type: 'error', message: err.message, name: err.name });
};

const job = workerData as SliceJob;
const ready = loadEngine().then((engine) => new SliceRunner(engine, Model.fromData(job.model), job.spec));
if (job.decode) {
  const { mode, seed } = job.decode;
  // Batches answered in the order they come (the parent sends the next only after this one's end).
  port.on('message', (b: DecodeBatch) => {
    ready
      .then((runner) => {
        for (const { index, task } of b.tasks) post({ type: 'decoded', index, outcome: runner.decodeTask(task, mode, seed) });
        post({ type: 'batch-done' });
      })
      .catch(postError);
  });
} else {
  ready
    .then((runner) => {
      for (const s of job.slices) post({ type: 'slice', outcome: runner.run(s) });
      post({ type: 'finished' });
    })
    .catch(postError);
}
