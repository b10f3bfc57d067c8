// Loads and stores of the i-th i32 / f64 behind a pointer: the kernels' array access.

// @ts-ignore: decorator
@inline export function ldi(p: usize, i: i32): i32 {
  return load<i32>(p + (<usize>i << 2));
}
// @ts-ignore: decorator
@inline export function sti(p: usize, i: i32, v: i32): void {
  store<i32>(p + (<usize>i << 2), v);
}
// @ts-ignore: decorator
@inline export function ldf(p: usize, i: i32): f64 {
  return load<f64>(p + (<usize>i << 3));
}
// @ts-ignore: decorator
@inline export function stf(p: usize, i: i32, v: f64): void {
  store<f64>(p + (<usize>i << 3), v);
}
