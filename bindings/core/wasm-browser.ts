// Browsers: fetch the same .wasm, located next to the package (or passed in by the caller).
import { Engine } from './engine.ts';

/**
 * An engine from the .wasm: by default fetched from `build/release.wasm` next to the package (the
 * URL is resolved against this module); or pass a URL, a Response or the bytes.
 */
export async function loadEngine(wasm: URL | string | Response | BufferSource = new URL('../../build/release.wasm', import.meta.url)): Promise<Engine> {
  if (typeof wasm === 'string' || wasm instanceof URL) wasm = await fetch(wasm);
  if (wasm instanceof Response) {
    if (!wasm.ok) throw new Error(`cannot fetch the engine: HTTP ${wasm.status} ${wasm.url}`);
    return Engine.instantiate(await WebAssembly.compileStreaming(wasm));
  }
  return Engine.instantiate(wasm);
}
