// The library's entry points called as a user would, with input the CLI never produces: unknown
// option names, wrong types, plain arrays for typed ones. Each was answered silently (a default run,
// a value read as 0) or with a TypeError from deep inside; each now gets one clear ModelError or
// FormatError.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { AIS_OPTION_KEYS, EXACT_OPTION_KEYS, INFER_OPTION_KEYS, infer } from '../bindings/infer.ts';
import { Model, ModelBuilder } from '../bindings/core/model.ts';
import { denseIsing, ising, isingLattice, pottsLattice } from '../bindings/core/builders.ts';
import { applyEvidence, readFG, readUAI } from '../bindings/io/formats.ts';
import { exactInference, exactSample } from '../bindings/exact/exact.ts';
import { learn } from '../bindings/learn/learn.ts';
import { logLikelihood } from '../bindings/learn/likelihood.ts';
import { FormatError, ModelError } from '../bindings/core/errors.ts';
import { typeKeysIn } from './type-keys.ts';

const engine = await loadEngine();
const small = ising({ n: 3, couplings: [[0, 1, 0.5], [1, 2, -0.3]], h: 0.1 });

/** The property names of an exported type, as the TypeScript compiler resolves it. */
const typeKeys = (file: string, name: string) => typeKeysIn([file])(file, name);

test("infer's lists of known options are the options' types, key for key", () => {
  assert.deepEqual([...INFER_OPTION_KEYS].sort(), typeKeys('../bindings/infer.ts', 'InferOptions'));
  assert.deepEqual([...EXACT_OPTION_KEYS].sort(), typeKeys('../bindings/exact/exact.ts', 'ExactOptions'));
  const ais = typeKeys('../bindings/infer.ts', 'InferOptions'); // ais is Pick<AISOptions, …>: its keys are checked in use below
  assert.ok(ais.includes('ais'));
  for (const k of AIS_OPTION_KEYS) assert.doesNotThrow(() => infer(engine, small, { method: 'exact', logz: 'ais', ais: { [k]: k === 'transition' ? 'gibbs' : k === 'precision' ? 'f64' : k === 'lanes' ? true : 2 } as never }), k);
});

test('infer refuses unknown options (with the nearest name), a non-object, and an onProgress that is not a function', async () => {
  const unknown: [Record<string, unknown>, RegExp][] = [
    [{ method: 'gibbs', sample: 10 }, /unknown option "sample" \(did you mean "samples"\?\)/],
    [{ methd: 'gibbs' }, /unknown option "methd" \(did you mean "method"\?\)/],
    [{ method: 'bp', maxIter: 1 }, /unknown option "maxIter"/],
    [{ method: 'pt', betas: [0, 1] }, /unknown option "betas"/],
    [{ exact: { ordering: ['minfill'] } }, /unknown exact option "ordering" \(did you mean "orderings"\?\)/],
    [{ method: 'exact', logz: 'ais', ais: { run: 5 } }, /unknown ais option "run" \(did you mean "runs"\?\)/],
    [{ method: 'gibbs', onProgress: true }, /onProgress must be a function, got boolean/],
  ];
  for (const [opts, re] of unknown) assert.throws(() => infer(engine, small, opts as never), (e: unknown) => e instanceof ModelError && re.test((e as Error).message), JSON.stringify(opts));
  assert.throws(() => infer(engine, small, null as never), /options must be an object, got null/);
  assert.throws(() => infer(engine, small, 'gibbs' as never), /options must be an object, got string/);
  // An option given as undefined is no option (the CLI passes its unset ones so).
  assert.doesNotThrow(() => infer(engine, small, { method: 'exact', unsetByCaller: undefined } as never));
  const { inferAsync, runParallel } = await import('../bindings/parallel/parallel.ts');
  await assert.rejects(inferAsync(engine, small, { method: 'gibbs', workers: 0, sample: 10 } as never), /unknown option "sample"/);
  await assert.rejects(runParallel(small, { method: 'gibbs', workers: 2, chain: 2 } as never), /unknown option "chain" \(did you mean "chains"\?\)/);
});

test("the log Z estimator's options are refused before the method runs: factor 'fft' with an estimator that builds its own relaxation (refused after the sampling), an unknown estimator", () => {
  const lattice = isingLattice({ shape: [8, 8], beta: 0.3, periodic: true });
  let progressed = false;
  const onProgress = () => void (progressed = true);
  for (const logz of ['zhang', 'mirror'] as const) {
    assert.throws(() => infer(engine, lattice, { method: 'dhmc', factor: 'fft', logz, onProgress }), (e: unknown) => e instanceof ModelError && /factor 'fft' is the samplers'/.test((e as Error).message));
  }
  assert.throws(() => infer(engine, lattice, { method: 'dhmc', factor: 'fft', logz: 'ais', ais: { transition: 'hmc' }, onProgress }), /factor 'fft' is the samplers'/);
  assert.throws(() => infer(engine, lattice, { method: 'gibbs', logz: 'bogus' as never, onProgress }), /unknown log Z estimator "bogus"/);
  assert.equal(progressed, false, 'refused before any sampling');
});

test('readers, evidence and exact samples: wrong argument types get one clear line', () => {
  assert.throws(() => readUAI(Buffer.from('MARKOV\n1\n2\n0\n') as never), (e: unknown) => e instanceof FormatError && /a Buffer \(read the file with 'utf8'\)/.test((e as Error).message));
  assert.throws(() => readFG(undefined as never), (e: unknown) => e instanceof FormatError && /got undefined/.test((e as Error).message));
  assert.throws(() => applyEvidence(small, { 0: 1 } as never), /evidence must be a Map/);
  assert.throws(() => applyEvidence(small, new Map([['0', 1]]) as never), /"0" → 1 must map a variable number to a state number/);
  assert.throws(() => applyEvidence(small, new Map([[0, '1']]) as never), /0 → "1" must map/);
  assert.throws(() => exactSample(engine, small, undefined as never), /exact samples need options with their count/);
  assert.throws(() => infer(engine, small, { exact: { orderings: 'minfill' as never } }), /orderings must be a list of ordering heuristics/);
});

test('builders and Model.fromData check what they take: counts, types, sums past the double range', () => {
  const bad: [() => unknown, RegExp][] = [
    [() => ising({ n: '3' as never, couplings: [] }), /n must be an integer ≥ 1, got "3"/],
    [() => ising({ n: 2.5, couplings: [] }), /n must be an integer ≥ 1, got 2.5/],
    [() => ising({ n: 2 } as never), /couplings must be a list of \[i, j, J\] triples/],
    [() => ising({ n: 2, couplings: [[0, 1, '1' as never]] }), /coupling \(0, 1\) is "1", not a finite number/],
    [() => isingLattice({ shape: [3], J: '1' as never }), /J is "1", not a finite number/],
    [() => pottsLattice({ shape: [3], q: 3, beta: NaN }), /beta is NaN, not a finite number/],
    [() => new ModelBuilder([2]).addUnary(0, null as never), /unary factor on variable 0: the table must be an array of log-potentials, got null/],
    // Finite inputs whose sum leaves the double range: +∞ (exact inference answered NaN), a constant of +∞.
    [() => new ModelBuilder([2, 2]).addPairwise(0, 1, [1e308, 0, 0, 0]).addPairwise(0, 1, [1e308, 0, 0, 0]).build(), /summed table has Infinity at entry 0/],
    [() => new ModelBuilder([2]).addConstant(1e308).addConstant(1e308).build(), /constant factors sum to \+Infinity/],
    // Finite factors on different scopes whose largest entries sum past the range (exact inference said Z = 0 or NaN).
    [() => new ModelBuilder([2, 2]).addFactor([0], [1e308, 0]).addFactor([0, 1], [1e308, 1e308, 0, 0]).build(), /largest log-potentials sum past the double range/],
    // … also beside a constant that brings the total back in range: the kernels sum the factors first (bucket elimination said NaN, the junction tree +∞).
    [() => new ModelBuilder([2, 2]).addUnary(0, [1e308, 1e308]).addPairwise(0, 1, [1e308, 1e308, 1e308, 1e308]).addConstant(-1.5e308).build(), /largest log-potentials sum past the double range/],
    [() => new ModelBuilder([2, 2]).addUnary(0, [-1e308, -1e308]).addPairwise(0, 1, [-1e308, -1e308, -1e308, -1e308]).addConstant(-1e308).build(), /the largest log-potential, .* leaves the double range/],
    // Shared tables: a scope of another size (a smaller one let a later one read past the table), and the cache keyed by shape too.
    [() => { const b = new ModelBuilder([2, 2, 3]); return b.addSharedFactor([0, 1, 2], b.shareTable(new Array(8).fill(0))); }, /shared table 0 does not fit the scope \(0 1 2\): it has 8 entries, the scope's table 12/],
    [() => new ModelBuilder([2, 2, 2]).addSharedFactor([0, 1, 2], 3), /no table was shared at that id/],
    // Model.fromData: a decreasing scopeStart (arity −1, log Z 4.947 against 4.133) and a lattice of another size.
    [() => Model.fromData({ card: Int32Array.of(2, 2, 2), scopeStart: Int32Array.of(0, 2, 1, 2), scopeVars: Int32Array.of(0, 1), tableStart: Int32Array.of(0, 4, 6), tables: new Float64Array(8), logConst: 0, lattice: null }), /model data: scopeStart decreases at factor 1 \(2 then 1\)/],
    [() => Model.fromData({ ...small.toData(), lattice: { shape: [5, 5], periodic: false } }), /a lattice of shape 5×5 does not lay out 3 variables/],
    [() => Model.fromData({ ...small.toData(), logConst: NaN }), /the constant log-potential is NaN/],
    // A factor of no variables: exact inference, TRW and mean field dropped it (TRW's "upper bound" 5 nats below log Z).
    [() => Model.fromData({ ...small.toData(), tableStart: Int32Array.of(...small.toData().tableStart, small.toData().tables.length), scopeStart: Int32Array.of(...small.toData().scopeStart, small.toData().scopeVars.length), tables: Float64Array.of(...small.toData().tables, 5) }), /factor \d+ has no variables: put a constant log-potential in logConst/],
    [() => Model.fromData({ ...small.toData(), logConst: Infinity }), /the constant log-potential is Infinity/],
    [() => Model.fromData({ ...small.toData(), card: Float64Array.of(2.5, 2, 2) as never }), /variable 0 has cardinality 2.5/],
    [() => Model.fromData({ ...small.toData(), card: [2, 2, 2] as never }), /card must be an Int32Array/],
  ];
  for (const [f, re] of bad) assert.throws(f, (e: unknown) => e instanceof ModelError && re.test((e as Error).message), re.source);
  // A matrix as typed-array rows reads as rows (it was taken for a flat matrix of two entries).
  const m = denseIsing({ J: [Float64Array.of(0, 0.5), Float64Array.of(0.5, 0)] });
  assert.equal(m.n, 2);
  assert.equal(m.countPairs(), 1);
});

test('learning data: every value an integer state (0.5, NaN and −1 in a plain array were read as 0, 0 and 255)', () => {
  const rows = 8, cols = 3;
  const values = Uint8Array.from({ length: rows * cols }, (_, i) => (i * 7) % 2);
  const params = learn(engine, { rows, cols, values }, { model: 'rbm', hidden: 2, epochs: 1, seed: 1 }).params;
  for (const x of [0.5, NaN, -1]) {
    const v = Array.from(values, (y, i) => (i === 4 ? x : y));
    assert.throws(() => learn(engine, { rows, cols, values: v as never }, { model: 'rbm', hidden: 2, epochs: 1 }), new RegExp(`data row 2, column 2: ${x} is not a state`));
    assert.throws(() => logLikelihood(engine, params, { rows, cols, values: v as never }), new RegExp(`data row 2, column 2: ${x} is not a state in 0…1`));
  }
  assert.throws(() => learn(engine, { rows: 1.5, cols, values: values.subarray(0, 3) as never }, { model: 'rbm', hidden: 2, epochs: 1 }), /rows and cols must be integers/);
});

test('the builders, runAIS and the exact entry points refuse misspelt options (isingLattice { bet: 0.2 } built β = 1: log Z 12.809 against 6.483; runAIS { run: 4 } ran 32), and a signal that is not an AbortSignal is refused everywhere (a TypeError from deep inside, or ignored)', async () => {
  const { AIS_RUN_OPTION_KEYS, runAIS } = await import('../bindings/logz/logz.ts');
  assert.deepEqual([...AIS_RUN_OPTION_KEYS].sort(), typeKeys('../bindings/logz/logz.ts', 'AISOptions'));
  const { boltzmann, rbm } = await import('../bindings/core/builders.ts');
  const { exactInference, exactMAP } = await import('../bindings/exact/exact.ts');
  const { exactInferenceParallel } = await import('../bindings/exact/exact-parallel.ts');
  const { runAISParallel } = await import('../bindings/logz/ais-parallel.ts');
  const { inferAsync, runParallel } = await import('../bindings/parallel/parallel.ts');
  const refused: [() => unknown, RegExp][] = [
    [() => isingLattice({ shape: [3, 3], bet: 0.2 } as never), /unknown isingLattice option "bet" \(did you mean "beta"\?\)/],
    [() => pottsLattice({ shape: [3, 3], q: 3, periodc: true } as never), /unknown pottsLattice option "periodc"/],
    [() => ising({ n: 2, coupling: [] } as never), /unknown ising option "coupling"/],
    [() => rbm({} as never), /rbm needs visibleBias/],
    [() => boltzmann({ W: [[0]] } as never), /boltzmann needs a/],
    [() => runAIS(engine, small, { run: 4 } as never), /unknown option "run" \(did you mean "runs"\?\)/],
    [() => exactInference(engine, small, { maxMemroy: 4 } as never), /unknown exact option "maxMemroy"/],
    [() => exactMAP(engine, small, { count: 2 } as never), /unknown exactMAP option "count"/],
    [() => exactSample(engine, small, { count: 2, sed: 3 } as never), /unknown exactSample option "sed" \(did you mean "seed"\?\)/],
    [() => infer(engine, small, { method: 'gibbs', signal: 'x' as never }), /signal must be an AbortSignal, got string/],
    // AIS with HMC moves ran in f64 whatever precision said.
    [() => runAIS(engine, small, { transition: 'hmc', precision: 'f32' }), /AIS precision 'f32' runs in the lanes kernels only/],
    [() => runAIS(engine, small, { transition: 'hmc', precision: 'f16' as never }), /AIS precision must be f64 or f32, got "f16"/],
    // DHMC's trace: null threw "tr is not iterable", 'x' was read letter by letter. null is refused for every option.
    [() => infer(engine, small, { method: 'dhmc', trace: null as never }), /^option "trace" is null: leave it out \(or undefined\) for its default$/],
    [() => infer(engine, small, { method: 'mala', trace: 'x' as never }), /trace must be .* got "x"/],
  ];
  for (const [f, re] of refused) assert.throws(f, (e: unknown) => e instanceof ModelError && re.test((e as Error).message), re.source);
  for (const p of [runParallel(small, { method: 'gibbs', signal: {} as never }), runAISParallel(engine, small, { signal: 5 as never }), inferAsync(engine, small, { method: 'gibbs', workers: 2, signal: 'x' as never }), exactInferenceParallel(engine, small, { signal: 'x' as never })]) {
    await assert.rejects(p, (e: unknown) => e instanceof ModelError && /signal must be an AbortSignal/.test((e as Error).message));
  }
});

test('plotMarginals refuses a state no variable has (every mark was drawn at NaN) and a reference with fewer rows than the plot (a TypeError)', async () => {
  const { plotMarginals } = await import('../bindings/plot/marginals.ts');
  const r = infer(engine, small, { method: 'exact' });
  assert.throws(() => plotMarginals(r, { state: 5 }), /plotMarginals: no variable has state 5 \(the states are 0…1\)/);
  assert.throws(() => plotMarginals(r, { reference: [[0.5, 0.5]] }), /the reference has 1 rows, the plot 3 variables/);
  assert.doesNotMatch(plotMarginals(r, { state: 0 }), /NaN/);
});

test('null is refused as an option value everywhere, in one message naming the option (exact maxMemory: null ran the default, read with ??; others were refused, each in its own words)', () => {
  const isNull = (name: string) => new RegExp(`option "${name}" is null: leave it out \\(or undefined\\) for its default$`);
  const data = { rows: 2, cols: 2, values: Uint8Array.of(0, 1, 1, 0) };
  const cases: [string, () => unknown][] = [
    ['maxMemory', () => exactInference(engine, small, { maxMemory: null as never })],
    ['samples', () => infer(engine, small, { method: 'gibbs', samples: null as never })],
    ['damping', () => infer(engine, small, { method: 'bp', damping: null as never })],
    ['seed', () => infer(engine, small, { method: 'mf', seed: null as never })],
    ['seed', () => exactSample(engine, small, { count: 2, seed: null as never })],
    ['beta', () => isingLattice({ shape: [3, 3], beta: null as never })],
    ['epochs', () => learn(engine, data, { epochs: null as never, evaluate: false })],
  ];
  for (const [name, run] of cases) assert.throws(run, (e: unknown) => e instanceof ModelError && isNull(name).test((e as Error).message), name);
});
