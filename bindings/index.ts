// Node entry: the portable API plus loading the module and model files from disk.
export * from './api.ts';
export { loadEngine } from './core/wasm-node.ts';
export { loadModelFile } from './io/files.ts';
export { runParallel, inferAsync, autoWorkers, AUTO_WORKERS_MIN_UPDATES, AUTO_WORKERS_MIN_SWEEPS, AUTO_WORKERS_STARTUP_UPDATES, PARALLEL_METHODS, type ParallelMethod, type ParallelOptions } from './parallel/parallel.ts';
export { exactInferenceParallel, exactMAPParallel, exactSampleParallel } from './exact/exact-parallel.ts';
export { runAISParallel, autoAISWorkers, type AISParallelOptions } from './logz/ais-parallel.ts';
export { runQueued, type QueueOptions } from './queue/queue-client.ts';
