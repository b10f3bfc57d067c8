// Browser entry: the portable API plus fetching the module and parallel chains on Web Workers.
export * from './api.ts';
export { loadEngine } from './wasm-browser.ts';
export { runParallel, PARALLEL_METHODS, type ParallelMethod, type BrowserParallelOptions } from './parallel-browser.ts';
export type { ParallelOptions } from './parallel-job.ts';
