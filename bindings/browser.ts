// Browser entry: the portable API plus fetching the module and parallel chains on Web Workers.
export * from './api.ts';
export { loadEngine } from './core/wasm-browser.ts';
export { runParallel, PARALLEL_METHODS, type ParallelMethod, type BrowserParallelOptions } from './parallel/parallel-browser.ts';
export type { ParallelOptions } from './parallel/parallel-job.ts';
