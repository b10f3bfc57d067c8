// A factor table given over a scope in the caller's order, laid out over the sorted scope
// (ModelBuilder stores every table last-variable-fastest over its sorted scope).

export function isIdentity(perm: number[]): boolean {
  return perm.every((p, q) => p === q);
}

/**
 * Adds `src` (last-fastest over `scope` in the caller's order) into dst[at …] laid out
 * last-fastest over the sorted scope; perm[q] is the caller's position of sorted variable q.
 */
export function permuteAdd(src: ArrayLike<number>, card: Int32Array, scope: ArrayLike<number>, perm: number[], dst: Float64Array, at: number): void {
  const k = perm.length;
  if (isIdentity(perm)) {
    for (let e = 0; e < src.length; e++) dst[at + e] += src[e];
    return;
  }
  // Stride in the caller's layout of each caller position.
  const callerStride = new Array<number>(k);
  let s = 1;
  for (let p = k - 1; p >= 0; p--) {
    callerStride[p] = s;
    s *= card[scope[p]];
  }
  const K = perm.map((p) => card[scope[p]]);
  const strideOfSorted = perm.map((p) => callerStride[p]);
  const digit = new Array<number>(k).fill(0);
  let srcIdx = 0;
  for (let e = 0; e < s; e++) {
    dst[at + e] += src[srcIdx];
    // Advance the sorted-order counter (last fastest) and the matching caller index.
    for (let q = k - 1; q >= 0; q--) {
      if (++digit[q] < K[q]) {
        srcIdx += strideOfSorted[q];
        break;
      }
      srcIdx -= (K[q] - 1) * strideOfSorted[q];
      digit[q] = 0;
    }
  }
}
