// User seeds are integers in [0, 2^53); the generator's key is two 32-bit words.
import { ModelError } from './errors.ts';

export function seedWords(seed: number): [lo: number, hi: number] {
  if (!Number.isSafeInteger(seed) || seed < 0) throw new ModelError(`seed must be an integer in [0, 2^53), got ${seed}`);
  return [seed >>> 0, Math.floor(seed / 0x1_0000_0000) >>> 0];
}
