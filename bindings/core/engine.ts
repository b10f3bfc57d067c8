// One engine instance = one instantiated WASM module. This file imports nothing Node-only: callers
// hand it the module bytes (Node reads the file, a browser fetches it; see wasm-node.ts, wasm-browser.ts).
//
// Memory ownership (after hash-wasm's WASMInterface): the TypeScript side allocates every buffer a
// kernel uses before the kernel runs, builds typed-array views from the *current* memory.buffer on
// each access (growth detaches old views), copies results out with slice(), and frees on dispose().
//
// Instantiation is plain WebAssembly.instantiate: the module imports only env.abort and exports only
// numeric functions and its memory (no runtime, no optional arguments), so the AssemblyScript loader
// would add nothing, and leaving it out keeps the browser path free of bare specifiers.

import { EngineError } from './errors.ts';

/** The raw kernel exports; each algorithm's binding declares the functions it uses. */
export type Kernels = Record<string, (...args: number[]) => number> & { memory: WebAssembly.Memory };

/** wasm32's address space: 65 536 pages of 64 KiB. */
export const WASM_MAX_BYTES = 2 ** 32;
/** The AssemblyScript allocator's largest block (2^30 bytes less its header). */
export const WASM_MAX_BLOCK = 2 ** 30 - 16;

export function formatBytes(b: number): string {
  if (b >= 2 ** 30) return `${(b / 2 ** 30).toFixed(2)} GiB`;
  if (b >= 2 ** 20) return `${(b / 2 ** 20).toFixed(1)} MiB`;
  return `${(b / 1024).toFixed(1)} KiB`;
}

/**
 * One instantiated WASM module with its own memory (at most 4 GiB). Get one with `loadEngine()`;
 * every inference call takes it first. Not shared between threads: each worker has its own.
 */
export class Engine {
  /** The module's exports (kernels over pointers into `memory`): internal, for the bindings. */
  readonly kernels: Kernels;
  /**
   * Bytes of WASM memory this engine may hand out (4 GiB, less what the module's own data needs).
   * Lower it to make big jobs refuse early (tests, or hosts that share memory).
   */
  memoryLimit = WASM_MAX_BYTES - 2 ** 24;
  /** Bytes of live arena allocations (rounded as allocated). */
  bytesInUse = 0;

  private constructor(kernels: Kernels) {
    this.kernels = kernels;
  }

  /** An engine from the module's bytes or a compiled module (`loadEngine` fetches or reads them for you). */
  static async instantiate(source: BufferSource | WebAssembly.Module): Promise<Engine> {
    const mod = source instanceof WebAssembly.Module ? source : await WebAssembly.compile(source);
    lastModule = mod;
    const imports = engineImports();
    return new Engine(imports.bind(await WebAssembly.instantiate(mod, imports.object)));
  }

  /** An engine from a compiled module, synchronously (browsers allow it on the main thread for modules up to 8 MB). */
  static instantiateSync(mod: WebAssembly.Module): Engine {
    const imports = engineImports();
    return new Engine(imports.bind(new WebAssembly.Instance(mod, imports.object)));
  }

  /** Runs a kernel call, turning traps into EngineError with a readable message. */
  call<T>(what: string, fn: (k: Kernels) => T): T {
    try {
      return fn(this.kernels);
    } catch (e) {
      if (e instanceof EngineError) throw e;
      if (e instanceof WebAssembly.RuntimeError || e instanceof RangeError) {
        throw new EngineError(`${what}: ${e.message}`);
      }
      throw e;
    }
  }

  /**
   * Refuses up front, before anything is allocated, a job that needs `bytes` more of WASM memory
   * than the limit leaves (an EngineError naming what it would need).
   */
  ensureFits(bytes: number, what: string, largestBlock = 0): void {
    if (largestBlock > WASM_MAX_BLOCK) {
      throw new EngineError(`${what} needs one block of ${formatBytes(largestBlock)} in WASM memory, past the engine's largest block of ${formatBytes(WASM_MAX_BLOCK)}`);
    }
    if (this.bytesInUse + bytes > this.memoryLimit) {
      const inUse = this.bytesInUse > 0 ? ` (${formatBytes(this.bytesInUse)} already in use)` : '';
      throw new EngineError(`${what} needs ${formatBytes(bytes)} of WASM memory, past the engine's limit of ${formatBytes(this.memoryLimit)}${inUse}`);
    }
  }

  /** A new arena: a set of allocations freed together. */
  arena(): Arena {
    return new Arena(this);
  }

  /** Current size of the WASM memory in bytes (it only grows). */
  get memoryBytes(): number {
    return this.kernels.memory.buffer.byteLength;
  }
}

/** The imports every instance gets; `bind` hands them the instance (abort reads its memory). */
function engineImports(): { object: WebAssembly.Imports; bind(instance: WebAssembly.Instance): Kernels } {
  let exports: Kernels | null = null;
  const object = {
    env: {
      // Surfaces an AssemblyScript abort() as a readable message naming the source location.
      abort(msgPtr: number, filePtr: number, line: number, col: number) {
        const mem = exports!.memory;
        const file = readString(mem, filePtr);
        throw new EngineError(`engine aborted: ${readString(mem, msgPtr)}${file ? ` (${file}:${line}:${col})` : ''}`);
      },
      seed: () => {
        throw new EngineError('engine asked for an unseeded random number (Math.random in a kernel)');
      },
    },
  };
  return {
    object,
    bind(instance) {
      exports = instance.exports as unknown as Kernels;
      return exports;
    },
  };
}

/** The module the last Engine.instantiate compiled or was given (plannerEngine instantiates it again). */
let lastModule: WebAssembly.Module | null = null;
let planner: Engine | null = null;

/**
 * The engine the planners run their kernels on (the contraction-tree search): an instance of its
 * own, so planning never grows or moves a caller's engine memory. Instantiated synchronously (the
 * module is small enough for a browser's main thread) from the module the last loadEngine compiled;
 * in Node, when none was loaded yet, from build/release.wasm, read synchronously.
 */
export function plannerEngine(): Engine {
  if (planner) return planner;
  let mod = plannerModule ?? lastModule;
  if (!mod) {
    const fs = (globalThis as { process?: { getBuiltinModule?: (id: string) => { readFileSync(u: URL): Uint8Array<ArrayBuffer> } | undefined } }).process?.getBuiltinModule?.('node:fs');
    if (!fs) throw new EngineError('planning an elimination order runs on the engine: load one first (await loadEngine())');
    mod = new WebAssembly.Module(fs.readFileSync(new URL('../../build/release.wasm', import.meta.url)));
  }
  plannerModule = mod;
  planner = Engine.instantiateSync(mod);
  return planner;
}

/** The module the planner instance was made from: a released planner is made again from it (compiled once). */
let plannerModule: WebAssembly.Module | null = null;

/**
 * Planner memory kept from one plan to the next. WASM memory only grows, so an instance a large
 * plan grew past this (a 300×300 grid's orderings take 64 MB) is dropped when the plan is done
 * (releasePlannerMemory), for the garbage collector to free, and the next plan instantiates another
 * from the same compiled module (≈ 0.5 ms; V8's compiled code belongs to the module, so nothing is
 * compiled again). The planners' results never depend on the instance.
 */
export const PLANNER_KEEP_BYTES = 2 ** 25;

/** Drops the planner instance when its memory passed PLANNER_KEEP_BYTES and nothing is allocated in it (exactInference and the bucket plans call it when done). */
export function releasePlannerMemory(): void {
  if (planner && planner.memoryBytes > PLANNER_KEEP_BYTES && planner.bytesInUse === 0) planner = null;
}

/** Allocations that live and die together (one model's run). Use after dispose() throws. */
export class Arena {
  private ptrs: number[] = [];
  private sizes: number[] = [];
  private disposed = false;

  constructor(
    /** The engine whose memory the arena allocates from. */
    readonly engine: Engine,
  ) {}

  private live(): Kernels {
    if (this.disposed) throw new EngineError('use after dispose(): this object has released its engine memory');
    return this.engine.kernels;
  }

  /** Zeroed bytes (or, with zeroed = false, whatever memory held: for buffers filled in full); returns the pointer. */
  alloc(bytes: number, zeroed = true): number {
    const k = this.live();
    if (!(bytes >= 0)) throw new EngineError(`cannot allocate ${bytes} bytes in WASM memory`);
    const size = Math.max(16, Math.ceil(bytes / 16) * 16);
    const engine = this.engine;
    if (engine.bytesInUse + size > engine.memoryLimit) {
      throw new EngineError(`out of WASM memory allocating ${formatBytes(size)}: ${formatBytes(engine.bytesInUse)} in use, limit ${formatBytes(engine.memoryLimit)}`);
    }
    let p: number;
    try {
      p = (zeroed ? k.alloc(size) : k.allocUnzeroed(size)) >>> 0;
    } catch (e) {
      // The allocator traps when memory cannot grow (the process or the browser said no).
      throw new EngineError(`out of WASM memory allocating ${formatBytes(size)} (engine memory ${formatBytes(engine.memoryBytes)}, ${formatBytes(engine.bytesInUse)} in use): ${(e as Error).message}`);
    }
    if (p === 0) throw new EngineError(`out of WASM memory allocating ${bytes} bytes`);
    this.ptrs.push(p);
    this.sizes.push(size);
    engine.bytesInUse += size;
    return p;
  }

  /** `values.length` doubles (copied in) or `values` zeroed doubles; returns the byte pointer. */
  allocF64(values: ArrayLike<number> | number): number {
    const len = typeof values === 'number' ? values : values.length;
    const p = this.alloc(len * 8);
    if (typeof values !== 'number') this.f64(p, len).set(values);
    return p;
  }

  /** `values.length` 32-bit integers (copied in) or `values` zeroed ones; returns the byte pointer. */
  allocI32(values: ArrayLike<number> | number): number {
    const len = typeof values === 'number' ? values : values.length;
    const p = this.alloc(len * 4);
    if (typeof values !== 'number') this.i32(p, len).set(values);
    return p;
  }

  /** Views built on the current buffer: valid until the next allocation. */
  f64(ptr: number, len: number): Float64Array {
    return new Float64Array(this.live().memory.buffer, ptr, len);
  }
  /** An Int32Array view of `len` entries at byte pointer `ptr` (valid until the next allocation). */
  i32(ptr: number, len: number): Int32Array {
    return new Int32Array(this.live().memory.buffer, ptr, len);
  }
  /** A Uint32Array view of `len` entries at byte pointer `ptr` (valid until the next allocation). */
  u32(ptr: number, len: number): Uint32Array {
    return new Uint32Array(this.live().memory.buffer, ptr, len);
  }

  /** Copies out (the view may be invalidated by later growth). */
  readF64(ptr: number, len: number): Float64Array {
    return this.f64(ptr, len).slice();
  }

  /** True after `dispose()`. */
  get isDisposed(): boolean {
    return this.disposed;
  }

  /** Frees every allocation of the arena; later use throws an EngineError. Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    const k = this.engine.kernels;
    for (const p of this.ptrs) k.free(p);
    for (const b of this.sizes) this.engine.bytesInUse -= b;
    this.ptrs = [];
    this.sizes = [];
    this.disposed = true;
  }
}

function readString(mem: WebAssembly.Memory, ptr: number): string {
  if (!ptr) return '';
  const u32 = new Uint32Array(mem.buffer);
  const byteLen = u32[(ptr - 4) >>> 2];
  const u16 = new Uint16Array(mem.buffer, ptr, byteLen >>> 1);
  let s = '';
  for (let i = 0; i < u16.length; i += 1024) s += String.fromCharCode(...u16.subarray(i, i + 1024));
  return s;
}
