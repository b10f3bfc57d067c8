// User seeds are integers in [0, 2^53); the generator's key is two 32-bit words.
import { ModelError } from './errors.ts';

export function seedWords(seed: number): [lo: number, hi: number] {
  if (!Number.isSafeInteger(seed) || seed < 0) throw new ModelError(`seed must be an integer in [0, 2^53), got ${seed}`);
  return [seed >>> 0, Math.floor(seed / 0x1_0000_0000) >>> 0];
}

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32) for TypeScript-side choices such as tie-breaking; not the engine's generator. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A chain id, checked: an integer in [0, 2^32) (ids past it wrapped around, so chains 3 and 3 + 2^32 were one chain). */
export function checkChainId(chain: number): void {
  if (!Number.isInteger(chain) || chain < 0 || chain > 0xffff_ffff) throw new ModelError(`chain must be an integer in [0, 2^32), got ${chain}`);
}

/** seedWords, with the chain id checked (checkChainId). */
export function chainSeedWords(seed: number, chain: number): [lo: number, hi: number] {
  checkChainId(chain);
  return seedWords(seed);
}
