// Node: read the module from the package's build/ folder. Node-only; the browser path is wasm-browser.ts.
import { readFile } from 'node:fs/promises';
import { Engine } from './engine.ts';

let compiled: Promise<WebAssembly.Module> | null = null;

/** A new engine instance (each has its own memory); the module is compiled once per process. */
export async function loadEngine(wasmPath?: string | URL): Promise<Engine> {
  if (wasmPath !== undefined) return Engine.instantiate(await readFile(wasmPath));
  compiled ??= readFile(new URL('../../build/release.wasm', import.meta.url)).then(
    (bytes) => WebAssembly.compile(bytes),
    (e: NodeJS.ErrnoException) => {
      compiled = null;
      throw new Error(`cannot read build/release.wasm (${e.code ?? e.message}); run "npm run asbuild" first`);
    },
  );
  return Engine.instantiate(await compiled);
}
