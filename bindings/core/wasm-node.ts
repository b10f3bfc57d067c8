// Node: read the module from the package's build/ folder. Node-only; the browser path is wasm-browser.ts.
import { readFile } from 'node:fs/promises';
import { Engine } from './engine.ts';

let compiled: Promise<WebAssembly.Module> | null = null;

/**
 * A new engine instance (each has its own memory); the module is compiled once per process. Its
 * memory limit is lowered to RELAXMRF_WASM_LIMIT_MB when that is set — in every engine of the
 * process, worker threads' included: set only on the CLI's own engine, a run refused on this
 * thread ran on workers (an outcome that depended on --workers).
 */
export async function loadEngine(wasmPath?: string | URL): Promise<Engine> {
  if (wasmPath !== undefined) return withEnvLimit(await Engine.instantiate(await readFile(wasmPath)));
  compiled ??= readFile(new URL('../../build/release.wasm', import.meta.url)).then(
    (bytes) => WebAssembly.compile(bytes),
    (e: NodeJS.ErrnoException) => {
      compiled = null;
      throw new Error(`cannot read build/release.wasm (${e.code ?? e.message}); run "npm run asbuild" first`);
    },
  );
  return withEnvLimit(await Engine.instantiate(await compiled));
}

function withEnvLimit(engine: Engine): Engine {
  const limitMB = Number(process.env.RELAXMRF_WASM_LIMIT_MB);
  if (limitMB > 0) engine.memoryLimit = Math.min(engine.memoryLimit, limitMB * 2 ** 20);
  return engine;
}
