// Matrix addressing for the linear-algebra kernels (element access is core/access.ts).

/** Address of entry (i, j) of a row-major f64 matrix with n columns. */
// @ts-ignore: decorator
@inline export function at(p: usize, n: i32, i: i32, j: i32): usize {
  return p + ((<usize>i * <usize>n + <usize>j) << 3);
}
