// Browser entry: the portable API plus fetching the module.
export * from './api.ts';
export { loadEngine } from './wasm-browser.ts';
