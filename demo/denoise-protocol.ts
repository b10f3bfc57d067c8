// Messages between the denoising page (denoise.ts) and its worker (denoise-worker.ts).

export interface DenoiseRequest {
  type: 'start';
  width: number;
  height: number;
  /** The noisy image, row-major, ±1 per pixel (+1 = ink). */
  noisy: Int8Array;
  /** The flip probability the noise was made with (the likelihood's field is ½ log((1 − p)/p)). */
  flip: number;
  /** Ising prior coupling J between 4-neighbours. */
  coupling: number;
  seed: number;
  /** Stop after this many sweeps per chain. */
  maxSweeps: number;
}

export type ToDenoiseWorker = DenoiseRequest | { type: 'stop' };

export interface DenoiseFrame {
  type: 'frame';
  gen: number;
  /** Posterior marginals p(x_i = ink | noisy image), pooled over the chains. */
  marginals: Float64Array;
  /** Chain 0's current sample (0/1). */
  sample: Float64Array;
  sweeps: number;
  sweepsPerSecond: number;
  done: boolean;
}

export type FromDenoiseWorker = { type: 'hello' } | DenoiseFrame | { type: 'error'; message: string };
