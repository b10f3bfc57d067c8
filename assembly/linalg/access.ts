// Element access for the linear-algebra kernels: arrays are pointers into arena memory.

@inline export function ldf(p: usize, i: i32): f64 {
  return load<f64>(p + (<usize>i << 3));
}
@inline export function stf(p: usize, i: i32, v: f64): void {
  store<f64>(p + (<usize>i << 3), v);
}
@inline export function ldi(p: usize, i: i32): i32 {
  return load<i32>(p + (<usize>i << 2));
}
@inline export function sti(p: usize, i: i32, v: i32): void {
  store<i32>(p + (<usize>i << 2), v);
}
/** Address of entry (i, j) of a row-major f64 matrix with n columns. */
@inline export function at(p: usize, n: i32, i: i32, j: i32): usize {
  return p + ((<usize>i * <usize>n + <usize>j) << 3);
}
