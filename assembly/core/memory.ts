// WASM memory owned by the TypeScript side: every buffer a kernel touches is allocated here before
// a run, so no kernel grows memory mid-run; kernels take pointers and lengths.

/** Allocates `bytes` (16-byte aligned); the caller frees it with `free`. */
export function alloc(bytes: usize): usize {
  const p = heap.alloc(bytes);
  memory.fill(p, 0, bytes);
  return p;
}

/** Allocates `bytes` (16-byte aligned) without zeroing them: for buffers the caller fills in full. */
export function allocUnzeroed(bytes: usize): usize {
  return heap.alloc(bytes);
}

export function free(ptr: usize): void {
  heap.free(ptr);
}
