// What the samplers on the discrete model share (single-site Gibbs, tree-block Gibbs): the model
// bound into engine memory, and a chain's state there — its generator stream, then one byte per bit of
// the canonical form — which init draws uniformly and configuration / setConfiguration read and
// write as user states. Each subclass adds its step(state, sweeps, acc?) → info.

import type { Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { decode, type CanonicalForm } from '../core/canonical.ts';
import { BoundModel } from '../core/bound.ts';
import { EngineError, ModelError } from '../core/errors.ts';
import { chainSeedWords } from '../core/seed.ts';
import { Issued } from './issued.ts';

/** A discrete chain's state in WASM memory. */
export interface DiscreteChainState {
  /** Address of the chain's state in WASM memory: generator stream, then one byte per bit. */
  readonly ptr: number;
  /** The chain's id (its stream is (seed, chain)). */
  readonly chain: number;
}

/** What a step of a discrete sampler reports. */
export interface DiscreteStepInfo {
  /** Sweeps run. */
  sweeps: number;
  /** Fraction of variable updates that changed the variable's state. */
  changeRate: number;
}

/**
 * The samplers on the discrete model's canonical form (single-site and tree-block Gibbs): the model bound into
 * engine memory and the chains' states. Call dispose() when done.
 */
export abstract class DiscreteChainSampler {
  /** The model's canonical form bound into engine memory. */
  protected readonly bound: BoundModel;
  /** The states and accumulators this sampler issued (Issued). */
  protected readonly issued = new Issued<DiscreteChainState>();

  /**
   * `stream`: the sampler's tag within a chain, so different samplers never share draws.
   * @param engine The engine whose memory holds the sampler and its chains.
   */
  constructor(readonly engine: Engine, model: Model, private readonly stream: number, private readonly label: string, extraBytes = 0) {
    // Refused up front when the form, an accumulator and two chains' states cannot fit (and the
    // subclass's `extraBytes`).
    this.bound = BoundModel.fromModel(engine, model, label, (s) => 8 * s.nBits + 2 * (s.nBits + 256) + 8 * s.maxBlock + extraBytes);
  }

  /** The model's canonical form. */
  get form(): CanonicalForm {
    return this.bound.form;
  }

  /** The header address, after checking this sampler still owns its memory. */
  protected header(): number {
    if (this.bound.arena.isDisposed) throw new EngineError('use after dispose(): this sampler has released its engine memory');
    return this.bound.header;
  }

  /** A chain's state, drawn uniformly at random from its own stream (seed, chain). */
  init(seed: number, chain: number): DiscreteChainState {
    const header = this.header();
    const ptr = this.bound.arena.alloc(this.engine.kernels.gibbsStateBytes(header));
    const [lo, hi] = chainSeedWords(seed, chain);
    this.engine.call(`${this.label} init`, (k) => {
      k.rngSeed(ptr, lo, hi, chain, this.stream);
      k.gibbsInit(header, ptr);
    });
    return this.issued.state({ ptr, chain });
  }

  private bits(state: DiscreteChainState): Uint8Array {
    this.header();
    this.issued.check(state);
    return new Uint8Array(this.engine.kernels.memory.buffer, state.ptr + this.engine.kernels.rngStateBytes(), this.form.nBits);
  }

  /** Sets a chain's configuration (user states). */
  setConfiguration(state: DiscreteChainState, x: ArrayLike<number>): void {
    const f = this.form;
    if (x.length !== f.n) throw new ModelError(`a configuration has ${f.n} states, got ${x.length}`);
    for (let v = 0; v < f.n; v++) if (!(Number.isInteger(x[v]) && x[v] >= 0 && x[v] < f.card[v])) throw new ModelError(`state ${x[v]} of variable ${v} out of range`);
    const s = this.bits(state);
    s.fill(0);
    for (let v = 0; v < f.n; v++) {
      if (f.oneHot[v]) s[f.blockStart[v] + x[v]] = 1;
      else s[f.blockStart[v]] = x[v];
    }
  }

  /** Current configuration of a chain, as user states. */
  configuration(state: DiscreteChainState): Int32Array {
    const f = this.form;
    const s = this.bits(state);
    return decode(f, s);
  }

  /** A zeroed f64-per-bit accumulator in this sampler's memory. */
  accumulator(): number {
    return this.issued.acc(this.bound.arena.alloc(this.form.nBits * 8));
  }

  /** The accumulator's sums (copied), then zeroes it. */
  readAndClear(acc: number): Float64Array {
    const view = this.bound.arena.f64(acc, this.form.nBits);
    const out = view.slice();
    view.fill(0);
    return out;
  }

  /** Frees the sampler's engine memory (its chains' states included). */
  dispose(): void {
    this.bound.dispose();
  }
}
