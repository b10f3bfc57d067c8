// Options given to a method that does not read them. infer checked keys against every method's
// together, so { method: 'mf', tolerance: 1e-12 } ran mean field with its default tol (BP's name
// for it) and { method: 'gibbs', trials: 3 } ignored an MFRP option; the run* functions checked no
// keys at all (runGibbs { sample: 100 } ran 2000 samples). Now each run* refuses what it does not
// read, and infer what neither the method nor the log Z estimate reads. The lists are held to the
// options types, and to what the code reads: every option object below is a Proxy that records each
// property name read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import { ModelBuilder, type Model } from '../bindings/core/model.ts';
import { ModelError } from '../bindings/core/errors.ts';
import { METHODS, METHOD_OPTION_KEYS, SHARED_OPTION_KEYS, infer, logZOptionKeys, relaxationFor, type InferOptions, type Method } from '../bindings/infer.ts';
import { GIBBS_OPTION_KEYS, runGibbs } from '../bindings/samplers/gibbs.ts';
import { runFactorGibbs } from '../bindings/samplers/factor-gibbs.ts';
import { TREE_GIBBS_OPTION_KEYS, runTreeGibbs } from '../bindings/samplers/treegibbs.ts';
import { BLOCK_GIBBS_OPTION_KEYS, runBlockGibbs } from '../bindings/samplers/blockgibbs.ts';
import { CONTINUOUS_RUN_OPTION_KEYS, DHMC_OPTION_KEYS, runDHMC } from '../bindings/samplers/dhmc.ts';
import { MALA_OPTION_KEYS, ULA_OPTION_KEYS, runMALA, runULA } from '../bindings/samplers/langevin.ts';
import { PT_OPTION_KEYS, runTempering } from '../bindings/samplers/tempering.ts';
import { CLUSTER_OPTION_KEYS, runCluster } from '../bindings/samplers/cluster.ts';
import { MEAN_FIELD_OPTION_KEYS, runMeanField } from '../bindings/variational/meanfield.ts';
import { MFRP_OPTION_KEYS, runMFRP, runMFRPDetailed } from '../bindings/variational/mfrp.ts';
import { BP_OPTION_KEYS, runBP } from '../bindings/variational/bp.ts';
import { TRW_OPTION_KEYS, runTRW, trwUpperBound } from '../bindings/variational/trw.ts';
import { BOUNDS_OPTION_KEYS, runBounds } from '../bindings/variational/bounds.ts';
import { MIRROR_LOGZ_OPTION_KEYS, ZHANG_LOGZ_OPTION_KEYS, runMirrorLogZ, runZhangLogZ } from '../bindings/logz/relaxed-logz.ts';
import { CHIB_OPTION_KEYS, runChibLogZ } from '../bindings/logz/chib.ts';
import { inferAsync, runParallel } from '../bindings/parallel/parallel.ts';
import { runQueued } from '../bindings/queue/queue-client.ts';
import { typeKeysIn } from './type-keys.ts';

const engine = await loadEngine();
const lattice = isingLattice({ shape: [3, 3], beta: 0.3, h: 0.1 });
// Factors of arity 3: the factor-graph kernels (Gibbs, mean field, BP, TRW, tempering).
const higher: Model = new ModelBuilder([2, 2, 2, 2])
  .addFactor([0, 1, 2], [1, 2, 3, 4, 5, 6, 7, 8].map(Math.log))
  .addFactor([1, 2, 3], [2, 1, 1, 3, 1, 2, 4, 1].map(Math.log))
  .build();
// The counts a log Z estimate takes from infer's options; the samplers' batches besides.
const counts = { seed: 2, chains: 2, samples: 20, burnin: 4 };
const short = { ...counts, batches: 4 };
// In one configuration of each run (refused where undeclared); the others leave them out, so the
// Proxy sees a run that reads them all the same.
const watched = { onProgress: () => {}, signal: new AbortController().signal };

/** `o` behind a Proxy that records every property name read of it (get, in, Object.keys and entries). */
function recording<T extends object>(o: T): { proxy: T; read: Set<string> } {
  const read = new Set<string>();
  const note = (k: string | symbol) => void (typeof k === 'string' && read.add(k));
  const proxy = new Proxy(o, {
    get: (t, k, r) => (note(k), Reflect.get(t, k, r)),
    has: (t, k) => (note(k), Reflect.has(t, k)),
    getOwnPropertyDescriptor: (t, k) => (note(k), Reflect.getOwnPropertyDescriptor(t, k)),
    ownKeys: (t) => {
      const keys = Reflect.ownKeys(t);
      keys.forEach(note);
      return keys;
    },
  });
  return { proxy, read };
}

type Options = Record<string, unknown>;
/** A ModelError whose message matches `re`. */
const refused = (re: RegExp) => (e: unknown) => e instanceof ModelError && re.test(e.message);
/** A run* function, its declared keys, and option objects that take its main paths. */
interface RunCase { name: string; keys: readonly string[]; run: (o: Options) => unknown; configs: Options[] }

const relaxation = () => relaxationFor(engine, lattice);
const continuous = [
  { ...short, ...watched, adaptMass: true, pairs: [[0, 1]], empirical: false, trace: [0, 1], traceBudget: 1000, targetAccept: 0.8 },
  { ...short, stepSize: 0.3, parametrisation: 'zhang', trace: 'none' },
];
const RUNS: RunCase[] = [
  { name: 'runGibbs', keys: GIBBS_OPTION_KEYS, run: (o) => runGibbs(engine, lattice, o), configs: [{ ...short, ...watched }, { ...short, precision: 'f32', scan: 'colored' }, { ...short, probabilityTable: 'on' }] },
  { name: 'runFactorGibbs', keys: GIBBS_OPTION_KEYS, run: (o) => runFactorGibbs(engine, higher, o), configs: [{ ...short, ...watched }, { ...short, precision: 'f64', scan: 'sequential', probabilityTable: 'off' }] },
  { name: 'runTreeGibbs', keys: TREE_GIBBS_OPTION_KEYS, run: (o) => runTreeGibbs(engine, lattice, o), configs: [{ ...short, ...watched }, { ...short, lanes: false, raoBlackwell: false, precision: 'f64' }] },
  { name: 'runBlockGibbs', keys: BLOCK_GIBBS_OPTION_KEYS, run: (o) => runBlockGibbs(engine, lattice, o), configs: [{ ...short, ...watched }, { ...short, shift: 'min-lambda-max', margin: 0.01, factor: 'dense-cholesky' }] },
  { name: 'runBlockGibbs (a relaxation)', keys: BLOCK_GIBBS_OPTION_KEYS, run: (o) => runBlockGibbs(engine, relaxation(), o), configs: [short] },
  { name: 'runDHMC', keys: DHMC_OPTION_KEYS, run: (o) => runDHMC(engine, relaxation(), o), configs: [...continuous, { ...short, leapfrogSteps: 2, integrator: 'leapfrog' }] },
  { name: 'runMALA', keys: MALA_OPTION_KEYS, run: (o) => runMALA(engine, relaxation(), o), configs: continuous },
  { name: 'runULA', keys: ULA_OPTION_KEYS, run: (o) => runULA(engine, relaxation(), o), configs: continuous },
  { name: 'runMeanField', keys: MEAN_FIELD_OPTION_KEYS, run: (o) => runMeanField(engine, lattice, o), configs: [{ ...watched }, { seed: 3, restarts: 2, orderedStarts: false, maxSweeps: 50, tol: 1e-6, budget: 1e6 }] },
  { name: 'runMeanField (factor graph)', keys: MEAN_FIELD_OPTION_KEYS, run: (o) => runMeanField(engine, higher, o), configs: [{}] },
  { name: 'runMFRP', keys: MFRP_OPTION_KEYS, run: (o) => runMFRP(engine, lattice, o), configs: [{ ...watched, trials: 2, maxConstraints: 2, minConstraints: 1, restarts: 2 }, { trials: 1, budgetFactor: 1, maxSweeps: 50, tol: 1e-6, budget: 1e6, orderedStarts: false, seed: 3 }] },
  { name: 'runMFRPDetailed', keys: MFRP_OPTION_KEYS, run: (o) => runMFRPDetailed(engine, lattice, o), configs: [{ trials: 1, maxConstraints: 1 }] },
  { name: 'runBP', keys: BP_OPTION_KEYS, run: (o) => runBP(engine, lattice, o), configs: [{ signal: watched.signal }, { damping: 0.5, schedule: 'residual', maxIterations: 50, tolerance: 1e-6 }] },
  { name: 'runBP (factor graph)', keys: BP_OPTION_KEYS, run: (o) => runBP(engine, higher, o), configs: [{ schedule: 'sequential' }] },
  { name: 'runTRW', keys: TRW_OPTION_KEYS, run: (o) => runTRW(engine, lattice, o), configs: [{ ...watched, trwTrees: 2, trwSteps: 1 }, { seed: 3, damping: 0.1, schedule: 'sequential', maxIterations: 100, tolerance: 1e-6 }] },
  { name: 'runTRW (factor graph)', keys: TRW_OPTION_KEYS, run: (o) => runTRW(engine, higher, o), configs: [{ trwTrees: 2, trwSteps: 1 }] },
  { name: 'trwUpperBound', keys: TRW_OPTION_KEYS, run: (o) => trwUpperBound(engine, lattice, o), configs: [{ ...watched, trwTrees: 2, trwSteps: 1 }] },
  { name: 'runBounds', keys: BOUNDS_OPTION_KEYS, run: (o) => runBounds(engine, lattice, o), configs: [{ ...watched, trwTrees: 2, trwSteps: 1, restarts: 2, maxSweeps: 50, tol: 1e-6 }, { seed: 2, budget: 1e6, orderedStarts: false, damping: 0.1, schedule: 'parallel', maxIterations: 100, tolerance: 1e-6 }] },
  { name: 'runBounds (factor graph)', keys: BOUNDS_OPTION_KEYS, run: (o) => runBounds(engine, higher, o), configs: [{ trwSteps: 1 }] },
  {
    name: 'runTempering', keys: PT_OPTION_KEYS, run: (o) => runTempering(engine, lattice, o),
    configs: [{ ...short, ...watched, replicas: 3 }, { ...short, ladder: [0, 0.5, 1], adaptLadder: false }, { ...short, betaMin: 0.1, replicas: 3, moves: 'hmc', leapfrogSteps: 2, relaxation: { shift: 'martens' } }],
  },
  { name: 'runTempering (factor graph)', keys: PT_OPTION_KEYS, run: (o) => runTempering(engine, higher, o), configs: [{ ...short, replicas: 3, moves: 'gibbs' }] },
  { name: 'runCluster sw', keys: CLUSTER_OPTION_KEYS, run: (o) => runCluster(engine, lattice, 'sw', o), configs: [{ ...short, ...watched }, short] },
  { name: 'runCluster wolff', keys: CLUSTER_OPTION_KEYS, run: (o) => runCluster(engine, lattice, 'wolff', o), configs: [short] },
  { name: 'runZhangLogZ', keys: ZHANG_LOGZ_OPTION_KEYS, run: (o) => runZhangLogZ(engine, lattice, o), configs: [{ ...short, ...watched, reference: 'zero', leapfrogSteps: 2, targetAccept: 0.8, relaxation: { shift: 'martens' } }, short] },
  { name: 'runMirrorLogZ', keys: MIRROR_LOGZ_OPTION_KEYS, run: (o) => runMirrorLogZ(engine, lattice, o), configs: [{ ...short, ...watched, covariance: 'diag', covarianceCap: 1.5 }, short] },
  { name: 'runChibLogZ', keys: CHIB_OPTION_KEYS, run: (o) => runChibLogZ(engine, lattice, o), configs: [{ ...short, ...watched, thin: 2 }, short] },
];

test('every run* function reads no option outside its declared list (each option object a Proxy recording the names read)', () => {
  for (const { name, keys, run, configs } of RUNS) {
    for (const config of configs) {
      const { proxy, read } = recording(config);
      run(proxy);
      for (const k of read) assert.ok(keys.includes(k), `${name} read "${k}", which its list lacks (${JSON.stringify(config)})`);
    }
  }
});

/** For each method, infer's options (with the model) that take its main paths, log Z estimates included. */
const INFER_CASES: Record<Method, [Model, InferOptions][]> = {
  exact: [[lattice, { exact: {}, ...watched }], [lattice, { logz: 'chib', ...counts }], [lattice, { exact: { method: 'bucket' }, logz: 'ais', seed: 3, ais: { runs: 2, steps: 10 } }]],
  gibbs: [[lattice, { ...short, ...watched, precision: 'f32', scan: 'colored' }], [lattice, { ...short, probabilityTable: 'on', logz: 'zhang', shift: 'martens', factor: 'dense-cholesky' }], [higher, short]],
  treegibbs: [[lattice, { ...short, ...watched }], [lattice, { ...short, lanes: false, raoBlackwell: false, logz: 'ais', ais: { runs: 2, steps: 10, transition: 'relaxed' }, shift: 'martens' }]],
  blockgibbs: [[lattice, { ...short, ...watched }], [lattice, { ...short, shift: 'min-lambda-max', margin: 0.01, factor: 'dense-cholesky' }]],
  dhmc: [[lattice, { ...short, ...watched, leapfrogSteps: 2, integrator: 'leapfrog', adaptMass: true, pairs: [[0, 1]], empirical: false, trace: [0], traceBudget: 1000, targetAccept: 0.8 }], [lattice, { ...short, stepSize: 0.3, parametrisation: 'zhang', shift: 'martens', margin: 0.01, factor: 'dense-eigen', logz: 'mirror' }]],
  mala: [[lattice, { ...short, ...watched, adaptMass: true, pairs: [[0, 1]], trace: 'none' }], [lattice, { ...short, parametrisation: 'zhang' }], [lattice, { ...short, stepSize: 0.3, shift: 'martens', margin: 0.01, factor: 'dense-cholesky' }]],
  mf: [[lattice, { ...watched }], [lattice, { seed: 3, restarts: 2, orderedStarts: false, maxSweeps: 50, tol: 1e-6, budget: 1e6 }], [higher, { logz: 'ais', ais: { runs: 2, steps: 10 } }], [lattice, { logz: 'ais', ais: { runs: 2, steps: 10, transition: 'hmc' }, shift: 'martens', factor: 'dense-cholesky' }]],
  mfrp: [[lattice, { ...watched, trials: 2, maxConstraints: 2, minConstraints: 1, restarts: 2 }], [lattice, { trials: 1, budgetFactor: 1, maxSweeps: 50, tol: 1e-6, budget: 1e6, orderedStarts: false, seed: 3 }]],
  bp: [[lattice, { ...watched }], [lattice, { damping: 0.5, schedule: 'residual', maxIterations: 50, tolerance: 1e-6, logz: 'chib', ...counts }], [higher, { schedule: 'sequential' }]],
  trw: [[lattice, { ...watched, trwTrees: 2, trwSteps: 1 }], [higher, { seed: 3, trwTrees: 2, trwSteps: 1, damping: 0.1, schedule: 'sequential', maxIterations: 100, tolerance: 1e-6 }]],
  bounds: [[lattice, { ...watched, trwTrees: 2, trwSteps: 1, restarts: 2, maxSweeps: 50, tol: 1e-6 }], [higher, { seed: 2, trwSteps: 1, budget: 1e6, orderedStarts: false, damping: 0.1, maxIterations: 100, tolerance: 1e-6 }]],
  pt: [
    [lattice, { ...short, ...watched, replicas: 3, betaMin: 0.1 }], [lattice, { ...short, ladder: [0, 0.5, 1], adaptLadder: false }], [higher, { ...short, replicas: 3 }],
    [lattice, { ...short, replicas: 3, moves: 'hmc', leapfrogSteps: 2, shift: 'martens', factor: 'dense-cholesky' }], [lattice, { ...short, replicas: 3, moves: 'hmc', relaxation: {} }],
  ],
  sw: [[lattice, { ...short, ...watched }], [lattice, { ...short, logz: 'chib' }]],
  wolff: [[lattice, short]],
};

test("infer reads, for every method, only that method's options, the shared ones and its log Z estimate's (Proxy)", () => {
  for (const method of METHODS) {
    for (const [model, config] of INFER_CASES[method]) {
      const { proxy, read } = recording({ method, ...config } as InferOptions);
      infer(engine, model, proxy);
      const taken = [...SHARED_OPTION_KEYS, ...METHOD_OPTION_KEYS[method], ...logZOptionKeys(config)];
      for (const k of read) assert.ok(taken.includes(k), `infer with method ${method} read "${k}", which its lists lack (${JSON.stringify(config)})`);
    }
  }
});

test("the run* functions' lists are their options types' keys, but for the options they would ignore", () => {
  // Gibbs's kernel variants: block Gibbs and the cluster moves have none (runCluster's options are GibbsOptions).
  const gibbsVariants = ['precision', 'scan', 'probabilityTable'];
  // Per file of bindings/: [options type, its list, the type's keys the run leaves out]. One options
  // type for both relaxed estimators: each reads its own of reference, covariance and covarianceCap.
  const lists: Record<string, [string, readonly string[], string[]?][]> = {
    'samplers/gibbs.ts': [['GibbsOptions', GIBBS_OPTION_KEYS]], 'samplers/treegibbs.ts': [['TreeGibbsOptions', TREE_GIBBS_OPTION_KEYS]],
    'samplers/blockgibbs.ts': [['BlockGibbsOptions', BLOCK_GIBBS_OPTION_KEYS, gibbsVariants]], 'samplers/cluster.ts': [['ClusterOptions', CLUSTER_OPTION_KEYS, gibbsVariants]],
    'samplers/dhmc.ts': [['ContinuousRunOptions', CONTINUOUS_RUN_OPTION_KEYS], ['DHMCOptions', DHMC_OPTION_KEYS]],
    'samplers/langevin.ts': [['MALAOptions', MALA_OPTION_KEYS], ['ULAOptions', ULA_OPTION_KEYS]], 'samplers/tempering.ts': [['PTOptions', PT_OPTION_KEYS]],
    'variational/meanfield.ts': [['MeanFieldOptions', MEAN_FIELD_OPTION_KEYS]], 'variational/mfrp.ts': [['MFRPOptions', MFRP_OPTION_KEYS]], 'variational/bp.ts': [['BPOptions', BP_OPTION_KEYS]],
    'variational/trw.ts': [['TRWOptions', TRW_OPTION_KEYS]], 'variational/bounds.ts': [['BoundsOptions', BOUNDS_OPTION_KEYS]], 'logz/chib.ts': [['ChibOptions', CHIB_OPTION_KEYS]],
    'logz/relaxed-logz.ts': [['RelaxedLogZOptions', ZHANG_LOGZ_OPTION_KEYS, ['covariance', 'covarianceCap']], ['RelaxedLogZOptions', MIRROR_LOGZ_OPTION_KEYS, ['reference']]],
  };
  const keysOf = typeKeysIn(Object.keys(lists).map((f) => `../bindings/${f}`));
  for (const [file, entries] of Object.entries(lists)) {
    for (const [type, list, leftOut = []] of entries) assert.deepEqual([...list].sort(), keysOf(`../bindings/${file}`, type).filter((k) => !leftOut.includes(k)), `${file}: ${type}`);
  }
});

test('every run* function refuses a misspelt option, naming the nearest', () => {
  const rel = relaxation();
  // [name, the call with an options object, the misspelt key and its value, the name it should suggest]
  const misspelt: [string, (o: object) => unknown, string, unknown, string][] = [
    ['runGibbs', (o) => runGibbs(engine, lattice, o as never), 'sample', 100, 'samples'],
    ['runFactorGibbs', (o) => runFactorGibbs(engine, higher, o as never), 'chain', 2, 'chains'],
    ['runTreeGibbs', (o) => runTreeGibbs(engine, lattice, o as never), 'raoBlackwel', false, 'raoBlackwell'],
    ['runBlockGibbs', (o) => runBlockGibbs(engine, lattice, o as never), 'burnn', 2, 'burnin'],
    ['runDHMC', (o) => runDHMC(engine, rel, o as never), 'leapfrogStep', 2, 'leapfrogSteps'],
    ['runMALA', (o) => runMALA(engine, rel, o as never), 'stepsize', 0.1, 'stepSize'],
    ['runULA', (o) => runULA(engine, rel, o as never), 'targetAcept', 0.5, 'targetAccept'],
    ['runMeanField', (o) => runMeanField(engine, lattice, o as never), 'restart', 2, 'restarts'],
    ['runMFRP', (o) => runMFRP(engine, lattice, o as never), 'trial', 2, 'trials'],
    ['runMFRPDetailed', (o) => runMFRPDetailed(engine, lattice, o as never), 'maxConstraint', 2, 'maxConstraints'],
    ['runBP', (o) => runBP(engine, lattice, o as never), 'dampin', 0.5, 'damping'],
    ['runTRW', (o) => runTRW(engine, lattice, o as never), 'trwStep', 2, 'trwSteps'],
    ['trwUpperBound', (o) => trwUpperBound(engine, lattice, o as never), 'trwTree', 2, 'trwTrees'],
    ['runBounds', (o) => runBounds(engine, lattice, o as never), 'maxSweep', 2, 'maxSweeps'],
    ['runTempering', (o) => runTempering(engine, lattice, o as never), 'replica', 4, 'replicas'],
    ['runCluster', (o) => runCluster(engine, lattice, 'sw', o as never), 'seeds', 2, 'seed'],
    ['runZhangLogZ', (o) => runZhangLogZ(engine, lattice, o as never), 'referance', 'mode', 'reference'],
    ['runMirrorLogZ', (o) => runMirrorLogZ(engine, lattice, o as never), 'covarianceCaps', 1, 'covarianceCap'],
    ['runChibLogZ', (o) => runChibLogZ(engine, lattice, o as never), 'thn', 2, 'thin'],
  ];
  for (const [name, run, key, value, near] of misspelt) assert.throws(() => run({ [key]: value }), refused(new RegExp(`unknown option "${key}" \\(did you mean "${near}"\\?\\)`)), name);
  // Another method's option, and one the function's kernels lack, are refused too (they were ignored).
  assert.throws(() => runMeanField(engine, lattice, { tolerance: 1e-12 } as never), refused(/^unknown option "tolerance" \(did you mean "tol"\?\)$/));
  assert.throws(() => runBP(engine, lattice, { tol: 1e-12 } as never), refused(/^unknown option "tol" \(did you mean "tolerance"\?\)$/));
  assert.throws(() => runCluster(engine, lattice, 'wolff', { precision: 'f32' }), refused(/^unknown option "precision"$/));
  assert.throws(() => runMALA(engine, rel, { leapfrogSteps: 3 } as never), refused(/^unknown option "leapfrogSteps"$/));
  assert.throws(() => runZhangLogZ(engine, lattice, { covariance: 'diag' }), refused(/^unknown option "covariance"$/));
});

test('for every method, infer refuses an option only other methods read, naming them', () => {
  const misplaced: [Method, Options, RegExp][] = [
    ['exact', { tol: 1e-6 }, /^option "tol" applies to methods mf, mfrp, bounds, not exact$/],
    ['gibbs', { trials: 3 }, /^option "trials" applies to method mfrp, not gibbs$/],
    ['treegibbs', { replicas: 4 }, /^option "replicas" applies to method pt, not treegibbs$/],
    ['blockgibbs', { precision: 'f32' }, /^option "precision" applies to methods gibbs, treegibbs, not blockgibbs$/],
    ['dhmc', { moves: 'hmc' }, /^option "moves" applies to method pt, not dhmc$/],
    ['mala', { leapfrogSteps: 3 }, /^option "leapfrogSteps" applies to methods dhmc, pt, not mala$/],
    ['mf', { tolerance: 1e-12 }, /^option "tolerance" applies to methods bp, trw, bounds, not mf \(did you mean "tol"\?\)$/],
    ['mfrp', { trwSteps: 2 }, /^option "trwSteps" applies to methods trw, bounds, not mfrp$/],
    ['bp', { restarts: 2 }, /^option "restarts" applies to methods mf, mfrp, bounds, not bp$/],
    ['trw', { trials: 2 }, /^option "trials" applies to method mfrp, not trw$/],
    ['bounds', { chains: 2 }, /^option "chains" applies to methods gibbs, treegibbs, blockgibbs, dhmc, mala, pt, sw, wolff and to logz zhang, mirror, chib, not bounds$/],
    ['pt', { lanes: false }, /^option "lanes" applies to method treegibbs, not pt$/],
    ['sw', { probabilityTable: 'off' }, /^option "probabilityTable" applies to methods gibbs, treegibbs, not sw$/],
    ['wolff', { raoBlackwell: false }, /^option "raoBlackwell" applies to method treegibbs, not wolff$/],
  ];
  assert.deepEqual(misplaced.map(([m]) => m).sort(), [...METHODS].sort(), 'every method');
  for (const [method, extra, re] of misplaced) {
    assert.throws(() => infer(engine, lattice, { method, ...extra } as InferOptions), refused(re), `${method}: ${JSON.stringify(extra)}`);
  }
  // What only the log Z estimate reads, without one; an estimator's option with another.
  // A seed is taken by every method (a comparison seeds them all), and not passed where unread (runBP refuses it).
  assert.equal(infer(engine, lattice, { method: 'bp', seed: 3 }).method, 'bp');
  assert.equal(infer(engine, lattice, { method: 'exact', seed: 3 }).method, 'exact');
  assert.throws(() => runBP(engine, lattice, { seed: 3 } as never), refused(/^unknown option "seed"/));
  assert.throws(() => infer(engine, lattice, { method: 'gibbs', ais: { runs: 4 } }), refused(/^option "ais" applies to logz ais, not gibbs$/));
  assert.throws(() => infer(engine, lattice, { method: 'mf', logz: 'chib', ais: { runs: 4 } }), refused(/^option "ais" applies to logz ais, not mf with logz chib$/));
  // AIS counts in runs and temperatures (ais.runs, ais.steps): chains were ignored (the CLI refuses --chains there too).
  assert.throws(() => infer(engine, lattice, { method: 'mf', logz: 'ais', chains: 8 }), refused(/^option "chains" applies to methods .* and to logz zhang, mirror, chib, not mf with logz ais$/));
  assert.throws(() => infer(engine, lattice, { method: 'gibbs', logz: 'ais', shift: 'martens' }), refused(/^option "shift" applies to methods blockgibbs, dhmc, mala, pt and to logz zhang, mirror, ais with ais.transition 'relaxed' or 'hmc', not gibbs with logz ais$/));
});

test('with logz, infer takes the options its estimator reads, whatever the method', () => {
  const quickAIS = { runs: 2, steps: 10 };
  const accepted: InferOptions[] = [
    { method: 'mf', logz: 'chib', seed: 4, chains: 2, samples: 20, burnin: 4 },
    { method: 'bp', logz: 'zhang', seed: 4, chains: 2, samples: 20, burnin: 4, shift: 'martens', factor: 'dense-cholesky' },
    { method: 'mf', logz: 'ais', seed: 4, ais: quickAIS },
    { method: 'trw', logz: 'ais', ais: { ...quickAIS, transition: 'relaxed' }, shift: 'martens' },
    { logz: 'mirror', samples: 20, chains: 2 },
  ];
  for (const opts of accepted) assert.equal(infer(engine, lattice, opts).logZKind, 'estimate', JSON.stringify(opts));
  // The seed reaches the estimate: another seed, another estimate.
  const a = infer(engine, lattice, { method: 'mf', logz: 'chib', seed: 4, samples: 20 }), b = infer(engine, lattice, { method: 'mf', logz: 'chib', seed: 5, samples: 20 });
  assert.notEqual(a.logZ, b.logZ);
});

test('inferAsync, runParallel and the queue client refuse as infer does, and pass each part of a run only its options', async () => {
  await assert.rejects(inferAsync(engine, lattice, { method: 'mf', tolerance: 1e-12, workers: 0 }), refused(/^option "tolerance" applies to methods bp, trw, bounds, not mf \(did you mean "tol"\?\)$/));
  await assert.rejects(runParallel(lattice, { method: 'gibbs', workers: 1, shift: 'martens' }), /option "shift" applies to methods blockgibbs, dhmc, mala, pt/);
  await assert.rejects(runParallel(lattice, { method: 'dhmc', workers: 1, probabilityTable: 'off' }), /option "probabilityTable" applies to methods gibbs, treegibbs, not dhmc/);
  // runParallel runs no estimate: a logz there was ignored.
  await assert.rejects(runParallel(lattice, { method: 'gibbs', workers: 1, logz: 'chib' } as never), /logz applies to infer and inferAsync/);
  // Refused before any connection is tried (nothing listens on port 1).
  await assert.rejects(runQueued(lattice, { method: 'gibbs', trials: 3 }, { connection: 'redis://127.0.0.1:1' }), /option "trials" applies to method mfrp, not gibbs/);
  await assert.rejects(runQueued(lattice, { tol: 1e-6 }, { connection: 'redis://127.0.0.1:1' }), /option "tol" applies to methods mf, mfrp, bounds, not gibbs/);
  // The method's run on workers gets its options without the estimate's (which it would refuse): the
  // chains without zhang's shift, exact inference before AIS on workers without AIS's seed.
  const chains = await inferAsync(engine, lattice, { method: 'gibbs', ...short, logz: 'zhang', shift: 'martens', workers: 2 });
  assert.equal(chains.diagnostics.workers, 2);
  assert.equal(chains.logZKind, 'estimate');
  const ais = await inferAsync(engine, lattice, { logz: 'ais', seed: 3, ais: { runs: 8, steps: 10 }, workers: 2 });
  assert.equal(ais.diagnostics['logz.workers'], 2);
  assert.equal(ais.diagnostics.methodLogZKind, 'exact');
});
