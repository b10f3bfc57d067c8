import { Philox, PHILOX_BYTES, rngInit, philoxBlockInto, next32, uniform, uniform32, normal } from '../core/rng';

function newStream(): Philox {
  return changetype<Philox>(heap.alloc(PHILOX_BYTES));
}

function block(c0: u32, c1: u32, c2: u32, c3: u32, k0: u32, k1: u32): StaticArray<u32> {
  const r = newStream();
  philoxBlockInto(r, c0, c1, c2, c3, k0, k1);
  const out = new StaticArray<u32>(4);
  out[0] = r.out0;
  out[1] = r.out1;
  out[2] = r.out2;
  out[3] = r.out3;
  heap.free(changetype<usize>(r));
  return out;
}

describe('Philox4x32-10 known answers (Random123 kat_vectors)', () => {
  it('zero counter, zero key', () => {
    const o = block(0, 0, 0, 0, 0, 0);
    expect(o[0]).toBe(0x6627e8d5);
    expect(o[1]).toBe(0xe169c58d);
    expect(o[2]).toBe(0xbc57ac4c);
    expect(o[3]).toBe(0x9b00dbd8);
  });
  it('all-ones counter and key', () => {
    const o = block(0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff);
    expect(o[0]).toBe(0x408f276d);
    expect(o[1]).toBe(0x41c83b0e);
    expect(o[2]).toBe(0xa20bc7c6);
    expect(o[3]).toBe(0x6d5451fd);
  });
  it('digits of pi', () => {
    const o = block(0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0);
    expect(o[0]).toBe(0xd16cfe09);
    expect(o[1]).toBe(0x94fdcceb);
    expect(o[2]).toBe(0x5001e420);
    expect(o[3]).toBe(0x24126ea1);
  });
});

describe('streams', () => {
  it('a stream yields its blocks in counter order', () => {
    const r = newStream();
    rngInit(r, 7, 9, 3, 1);
    const first = next32(r);
    for (let i = 0; i < 3; i++) next32(r);
    const fifth = next32(r);
    expect(first).toBe(block(0, 0, 3, 1, 7, 9)[0]);
    expect(fifth).toBe(block(1, 0, 3, 1, 7, 9)[0]);
  });
  it('the block counter carries into its high word', () => {
    const r = newStream();
    rngInit(r, 1, 2, 0, 0);
    r.ctr0 = 0xffffffff;
    for (let i = 0; i < 4; i++) next32(r);
    expect(r.ctr0).toBe(0);
    expect(r.ctr1).toBe(1);
    expect(next32(r)).toBe(block(0, 1, 0, 0, 1, 2)[0]);
  });
  it('the same seed gives the same bits; chains differ', () => {
    const a = newStream(), b = newStream(), c = newStream();
    rngInit(a, 42, 0, 0, 0);
    rngInit(b, 42, 0, 0, 0);
    rngInit(c, 42, 0, 1, 0);
    let same = true, differ = 0;
    for (let i = 0; i < 1000; i++) {
      const x = next32(a);
      if (x != next32(b)) same = false;
      if (x != next32(c)) differ++;
    }
    expect(same).toBe(true);
    expect(differ).toBeGreaterThan(990);
  });
});

describe('distributions', () => {
  it('uniforms lie in (0, 1) with mean 1/2 and variance 1/12', () => {
    const r = newStream();
    rngInit(r, 1234, 0, 0, 0);
    const n = 200000;
    let s = 0.0, s2 = 0.0, lo = 1.0, hi = 0.0;
    for (let i = 0; i < n; i++) {
      const u = (i & 1) ? uniform(r) : uniform32(r);
      s += u;
      s2 += u * u;
      if (u < lo) lo = u;
      if (u > hi) hi = u;
    }
    const mean = s / n;
    const variance = s2 / n - mean * mean;
    expect(lo).toBeGreaterThan(0.0);
    expect(hi).toBeLessThan(1.0);
    // Standard error of the mean is sqrt(1/12/n) = 6.5e-4; 5 SE.
    expect(Math.abs(mean - 0.5)).toBeLessThan(5 * 6.5e-4);
    // SE of the variance estimate is about sqrt(1/180/n) = 1.7e-4; 5 SE.
    expect(Math.abs(variance - 1.0 / 12.0)).toBeLessThan(5 * 1.7e-4);
  });
  it('normals have mean 0, variance 1, kurtosis 3', () => {
    const r = newStream();
    rngInit(r, 99, 5, 2, 0);
    const n = 200000;
    let s = 0.0, s2 = 0.0, s4 = 0.0;
    for (let i = 0; i < n; i++) {
      const z = normal(r);
      s += z;
      s2 += z * z;
      s4 += z * z * z * z;
    }
    // SEs: mean 1/sqrt(n) = 2.2e-3, variance sqrt(2/n) = 3.2e-3, fourth moment sqrt(96/n) = 2.2e-2.
    expect(Math.abs(s / n)).toBeLessThan(5 * 2.2e-3);
    expect(Math.abs(s2 / n - 1.0)).toBeLessThan(5 * 3.2e-3);
    expect(Math.abs(s4 / n - 3.0)).toBeLessThan(5 * 2.2e-2);
  });
});
