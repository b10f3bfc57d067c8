// Node worker of runAISParallel (ais-parallel.ts): owns one engine instance and runs its pieces of
// the run with the given schedule, posting each piece's weights as it completes.
import { parentPort, workerData } from 'node:worker_threads';
import { loadEngine } from '../core/wasm-node.ts';
import { Model } from '../core/model.ts';
import { runAISPiece } from './ais-split.ts';
import type { AISWorkerJob, AISWorkerMessage } from './ais-parallel.ts';

const port = parentPort;
if (!port) throw new Error('ais-worker runs only as a worker thread (see ais-parallel.ts)');

const post = (m: AISWorkerMessage) => port.postMessage(m, m.type === 'piece' ? [m.result.logWeights.buffer as ArrayBuffer] : []);

loadEngine()
  .then((engine) => {
    const job = workerData as AISWorkerJob;
    const model = Model.fromData(job.model);
    for (const { index, piece } of job.pieces) post({ type: 'piece', index, result: runAISPiece(engine, model, job.opts, piece, job.schedule) });
    post({ type: 'finished' });
  })
  .catch((e: unknown) => {
    const err = e instanceof Error ? e : new Error(String(e));
    post({ type: 'error', message: err.message, name: err.name });
  });
