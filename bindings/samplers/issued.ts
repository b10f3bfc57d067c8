// What a sampler handed out — its chains' states and its accumulators — so that anything else is
// refused before the engine writes through its pointer: another sampler's state stepped here
// overwrote that sampler's chains, and a stray accumulator address wrote into any memory.
import { ModelError } from '../core/errors.ts';

/** The chain states and accumulators one sampler issued. */
export class Issued<S extends object> {
  private readonly states = new WeakSet<S>();
  private readonly accs = new Set<number>();

  /** Records and returns a state this sampler's init made. */
  state(s: S): S {
    this.states.add(s);
    return s;
  }

  /** Records and returns an accumulator this sampler allocated. */
  acc(ptr: number): number {
    this.accs.add(ptr);
    return ptr;
  }

  /** Throws unless `s` (and `acc`, when not 0) came from this sampler. */
  check(s: S, acc = 0): void {
    if (!this.states.has(s)) throw new ModelError("this chain state was not made by this sampler's init (it is another sampler's, or a copy): stepping it would write into memory this sampler does not own");
    if (acc !== 0 && !this.accs.has(acc)) throw new ModelError(`accumulator ${acc} was not made by this sampler's accumulator()`);
  }
}
