// `relaxmrf learn DATA.csv --out MODEL.uai`: learns a Boltzmann machine from binary data
// (bindings/learn/learn.ts), writes it as UAI MARKOV (visible units first in column order, then the
// hidden units) and reports per-epoch statistics and the log-likelihood per sample.

import { readFile } from 'node:fs/promises';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadEngine } from '../core/wasm-node.ts';
import { EngineError, FormatError } from '../core/errors.ts';
import { readCSV } from '../io/csv.ts';
import { writeUAI } from '../io/formats.ts';
import { learn, LEARN_SAMPLERS, type LearnOptions } from '../learn/learn.ts';
import { MACHINE_KINDS } from '../learn/machine.ts';
import { LIKELIHOOD_DEFAULTS, type LogLikelihood } from '../learn/likelihood.ts';
import { writeJSON } from './json-stream.ts';
import { unwritablePath, writeOutput } from './output-files.ts';
import { MAX_CHAINS } from '../core/options.ts';
import { decimalNumber, parseOptions } from './args.ts';

export const LEARN_USAGE = `  relaxmrf learn DATA.csv --out MODEL.uai [--model boltzmann|rbm|srbm|potts] [--hidden H] [--states K]
                       [--method pcd|cd] [--cd-steps K] [--sampler gibbs|tree|blockgibbs|dhmc] [--particles P] [--batch B]
                       [--epochs E] [--learning-rate η] [--schedule linear|constant] [--weight-decay λ]
                       [--momentum μ] [--visible-rate f] [--max-weight M] [--seed S]
                       [--shift-epsilon ε] [--leapfrog-steps L] [--step-size h] [--equivalent-rbm]
                       [--test TEST.csv] [--ais-runs R] [--ais-steps T] [--no-evaluate] [--json]
      DATA: CSV of 0/1 (potts: 0…K−1), one sample a row (optional header). Log-likelihood per sample of the
      training (and test) data: exact for ≤ 2^20 visible configurations (binary: ≤ 20 units), else AIS from the base-rate model;
      --no-evaluate skips it (AIS on a 3-unit, 255-state Potts machine took minutes).
      blockgibbs / dhmc: particles through Gaussian units on the visible–visible couplings (potts: one per one-hot bit),
      W_vv + αI = M Mᵀ re-factored every update with α = (1 + ε)·max(0, −λ_min) (--shift-epsilon, default 0.01);
      dhmc: --leapfrog-steps (default 5), --step-size (initial; adapted to 0.9 acceptance).
      --equivalent-rbm (boltzmann, srbm): learn W_vv = F Fᵀ through the weights F of nV Gaussian units.
      Defaults: --model boltzmann, --method pcd (--cd-steps 1), --sampler gibbs, --particles 100, --batch 100,
      --epochs 20, --learning-rate 0.05 (--schedule linear), --weight-decay 0, --momentum 0, --visible-rate 1,
      --max-weight 1000, --seed 1; the likelihood by AIS: --ais-runs 100, --ais-steps 2000. Another sampler's
      or machine's options are refused (--step-size without dhmc, --visible-rate and --step-size with rbm, --particles with cd,
      --ais-runs with an exact likelihood or --no-evaluate, --test with --no-evaluate).`;

export class LearnUsageError extends Error {}

/** Whether two paths name one file: the same path, or (both existing) the same device and inode (links). */
function sameFile(a: string, b: string): boolean {
  if (resolve(a) === resolve(b)) return true;
  try {
    const sa = statSync(a, { throwIfNoEntry: false }), sb = statSync(b, { throwIfNoEntry: false });
    return sa !== undefined && sb !== undefined && sa.dev === sb.dev && sa.ino === sb.ino;
  } catch {
    return false;
  }
}

async function loadCSV(path: string, maxState: number) {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new FormatError(path, null, `cannot read the file: ${(e as Error).message}`);
  }
  return readCSV(text, path, maxState);
}

export async function learnCommand(argv: string[], integer: (n: string, v: string | undefined, min: number, max?: number) => number | undefined): Promise<number> {
  const { values, positionals } = parseOptions({
    args: argv,
    allowPositionals: true,
    options: {
      model: { type: 'string' }, hidden: { type: 'string' }, states: { type: 'string' }, method: { type: 'string' }, 'cd-steps': { type: 'string' },
      sampler: { type: 'string' }, particles: { type: 'string' }, batch: { type: 'string' }, epochs: { type: 'string' },
      'learning-rate': { type: 'string' }, schedule: { type: 'string' }, 'weight-decay': { type: 'string' },
      momentum: { type: 'string' }, 'visible-rate': { type: 'string' }, 'max-weight': { type: 'string' },
      seed: { type: 'string' }, out: { type: 'string' }, test: { type: 'string' }, 'ais-runs': { type: 'string' },
      'ais-steps': { type: 'string' }, json: { type: 'boolean' }, 'shift-epsilon': { type: 'string' }, 'leapfrog-steps': { type: 'string' },
      'step-size': { type: 'string' }, 'equivalent-rbm': { type: 'boolean' }, 'no-evaluate': { type: 'boolean' },
    },
  });
  if (positionals.length !== 1) throw new LearnUsageError('learn takes exactly one DATA.csv');
  if (!values.out) throw new LearnUsageError('learn needs --out MODEL.uai');
  // Before training: its result is written only at the end.
  const outProblem = unwritablePath(values.out);
  if (outProblem) throw new LearnUsageError(`--out ${values.out}: ${outProblem}`);
  // The model replaced the data it was learned from, at the end of the run.
  for (const [what, path] of [['the training data', positionals[0]], ['the --test data', values.test]] as const) {
    if (path !== undefined && sameFile(values.out, path)) throw new LearnUsageError(`--out ${values.out} is ${what} (${path}): the model would overwrite it`);
  }
  const model = values.model ?? 'boltzmann';
  if (!(MACHINE_KINDS as readonly string[]).includes(model)) throw new LearnUsageError(`--model must be one of ${MACHINE_KINDS.join(', ')}, got "${model}"`);
  if (values.method !== undefined && values.method !== 'pcd' && values.method !== 'cd') throw new LearnUsageError(`--method must be pcd or cd, got "${values.method}"`);
  if (values.sampler !== undefined && !(LEARN_SAMPLERS as readonly string[]).includes(values.sampler)) {
    throw new LearnUsageError(`--sampler ${values.sampler} is not available for learning (available: ${LEARN_SAMPLERS.join(', ')})`);
  }
  if (values.schedule !== undefined && values.schedule !== 'linear' && values.schedule !== 'constant') throw new LearnUsageError(`--schedule must be linear or constant, got "${values.schedule}"`);
  const num = (name: string, v: string | undefined, positive = false): number | undefined => {
    if (v === undefined) return undefined;
    const x = decimalNumber(v);
    if (v.trim() === '' || !Number.isFinite(x) || x < 0 || (positive && x === 0)) throw new LearnUsageError(`--${name} must be a number ${positive ? '> 0' : '≥ 0'}, got "${v}"`);
    return x;
  };
  const visibleOnly = model === 'boltzmann' || model === 'potts';
  if (!visibleOnly && values.hidden === undefined) throw new LearnUsageError(`--model ${model} needs --hidden H`);
  if (visibleOnly && values.hidden !== undefined) throw new LearnUsageError('--hidden applies to rbm and srbm');
  if (model !== 'potts' && values.states !== undefined) throw new LearnUsageError('--states applies to --model potts');
  // Another sampler's or machine's options, refused rather than ignored (the JSON's settings echoed them as if used).
  const sampler = values.sampler ?? 'gibbs';
  const dhmcOnly = (['leapfrog-steps', 'step-size'] as const).filter((k) => values[k] !== undefined);
  if (dhmcOnly.length > 0 && sampler !== 'dhmc') throw new LearnUsageError(`${dhmcOnly.map((k) => `--${k}`).join(' and ')} ${dhmcOnly.length > 1 ? 'apply' : 'applies'} to --sampler dhmc, not ${sampler}`);
  if (values['shift-epsilon'] !== undefined && sampler !== 'blockgibbs' && sampler !== 'dhmc') throw new LearnUsageError(`--shift-epsilon applies to --sampler blockgibbs or dhmc (the Gaussian units' shift), not ${sampler}`);
  if (values.particles !== undefined && values.method === 'cd') throw new LearnUsageError('--particles applies to --method pcd (persistent particles); cd runs one chain per minibatch row (--batch)');
  if (values.test !== undefined && values['no-evaluate']) throw new LearnUsageError('--test applies to the log-likelihood, which --no-evaluate skips');
  const gaussianOnly = (['leapfrog-steps', 'step-size', 'shift-epsilon'] as const).filter((k) => values[k] !== undefined);
  if (model === 'rbm' && gaussianOnly.length > 0) throw new LearnUsageError(`${gaussianOnly.map((k) => `--${k}`).join(' and ')} ${gaussianOnly.length > 1 ? 'apply' : 'applies'} to the Gaussian layer of machines with visible–visible couplings (boltzmann, srbm, potts); an rbm's samplers are its block Gibbs`);
  if (values['visible-rate'] !== undefined && model === 'rbm') throw new LearnUsageError('--visible-rate applies to machines with visible–visible couplings (boltzmann, srbm, potts), not rbm');
  const states = integer('states', values.states, 2);
  if (states !== undefined && states > 255) throw new LearnUsageError(`--states must be at most 255, got ${states}`);
  // Binary machines take 0/1 values; Potts units 0…K−1 (K from --states, else the data's largest value + 1).
  const maxState = model === 'potts' ? (states ?? 256) - 1 : 1;
  const opts: LearnOptions = {
    model: model as LearnOptions['model'],
    hidden: integer('hidden', values.hidden, 1, MAX_CHAINS),
    states,
    method: values.method as LearnOptions['method'],
    cdSteps: integer('cd-steps', values['cd-steps'], 1),
    sampler: values.sampler as LearnOptions['sampler'],
    particles: integer('particles', values.particles, 1, MAX_CHAINS),
    batch: integer('batch', values.batch, 1),
    epochs: integer('epochs', values.epochs, 0),
    learningRate: num('learning-rate', values['learning-rate']),
    schedule: values.schedule as LearnOptions['schedule'],
    weightDecay: num('weight-decay', values['weight-decay']),
    momentum: num('momentum', values.momentum),
    visibleRate: num('visible-rate', values['visible-rate']),
    maxWeight: num('max-weight', values['max-weight'], true),
    seed: integer('seed', values.seed, 0, Number.MAX_SAFE_INTEGER),
    shiftEpsilon: num('shift-epsilon', values['shift-epsilon']),
    leapfrogSteps: integer('leapfrog-steps', values['leapfrog-steps'], 1),
    stepSize: num('step-size', values['step-size'], true),
    equivalentRBM: values['equivalent-rbm'],
    evaluate: values['no-evaluate'] ? false : undefined,
    likelihood: values['ais-runs'] === undefined && values['ais-steps'] === undefined ? undefined : { runs: integer('ais-runs', values['ais-runs'], 2), steps: integer('ais-steps', values['ais-steps'], 2) },
  };
  if (opts.likelihood && values['no-evaluate']) throw new LearnUsageError('--ais-runs and --ais-steps apply to the log-likelihood, which --no-evaluate skips');
  const data = await loadCSV(positionals[0], maxState);
  const test = values.test ? await loadCSV(values.test, maxState) : undefined;
  if (test && test.cols !== data.cols) throw new FormatError(values.test!, null, `${test.cols} columns, but ${positionals[0]} has ${data.cols}`);
  // Columns are matched by position: a test file headed b,a against a,b was scored with its columns swapped.
  if (test?.header && data.header && test.header.some((name, i) => name !== data.header![i])) {
    throw new FormatError(values.test!, null, `header "${test.header.join(',')}" differs from ${positionals[0]}'s "${data.header.join(',')}" (columns are matched by position: reorder them, or give the same names)`);
  }
  if (model === 'potts' && states === undefined) {
    let top = 1;
    for (const d of test ? [data, test] : [data]) for (const x of d.values) top = Math.max(top, x);
    opts.states = top + 1;
  }
  // The likelihood is exact up to 2^20 visible configurations (logLikelihood's 'auto'): AIS's options would be ignored.
  const bits = data.cols * Math.log2(model === 'potts' ? opts.states! : 2);
  if (opts.likelihood && bits <= LIKELIHOOD_DEFAULTS.maxExactVisible) throw new LearnUsageError(`--ais-runs and --ais-steps apply when the log-likelihood is estimated by AIS (more than 2^${LIKELIHOOD_DEFAULTS.maxExactVisible} visible configurations); with ${data.cols} ${model === 'potts' ? `${opts.states}-state` : 'binary'} columns it is exact`);
  const engine = await loadEngine();
  const r = learn(engine, data, { ...opts, test });
  // The model is always the last good one: on divergence, the parameters before the failing epoch.
  // Made before the report (a model UAI cannot hold is refused before anything is printed), written
  // after it: a failed write lost the report.
  const uai = writeUAI(r.model);
  // As infer: the result stands, each caveat one line on stderr and in --json's warnings: the data's
  // (a log-likelihood without maximum), then the log Z's, which the test data share.
  const warnings = [...r.warnings, ...(r.train?.warnings ?? []).map((w) => `the log-likelihood's log Z (AIS): ${w}`)];
  for (const w of warnings) process.stderr.write(`relaxmrf: warning: ${w}\n`);
  if (values.json) {
    writeJSON({
      data: { file: positionals[0], rows: data.rows, columns: data.cols, header: data.header },
      test: test ? { file: values.test, rows: test.rows } : null,
      settings: r.settings,
      model: { out: values.out, variables: r.model.n, visible: r.params.nVisible, hidden: r.params.nHidden, states: r.params.states, couplings: r.params.pairs.length / 2 },
      epochs: r.epochs,
      diverged: r.diverged,
      trainLogLikelihood: r.train ?? null,
      testLogLikelihood: r.test ?? null,
      warnings,
      seconds: r.seconds,
    }, (chunk) => process.stdout.write(chunk));
    process.stdout.write('\n');
  } else {
    const ll = (name: string, l?: LogLikelihood) =>
      l ? `${name.padEnd(10)}${l.value.toFixed(5)} nats/sample${l.method === 'ais' ? ` ± ${l.stdErr.toPrecision(2)} (AIS)` : ' (exact)'}${Number.isFinite(l.sampleStdErr) ? `, ±${l.sampleStdErr.toPrecision(2)} over samples` : ' (one sample: no spread over samples)'}\n` : '';
    const last = r.epochs.at(-1);
    process.stdout.write(
      `data      ${positionals[0]}: ${data.rows} samples × ${data.cols} columns\n` +
        `model     ${model}${r.params.nHidden ? ` with ${r.params.nHidden} hidden units` : ''} → ${values.out}\n` +
        `epochs    ${r.epochs.length}${last ? ` (last: gradient rms ${last.gradientRms.toPrecision(3)}, max |θ| ${last.maxAbsParameter.toPrecision(3)})` : ''}\n` +
        ll('train', r.train) + ll('test', r.test) + `seconds   ${r.seconds.toFixed(3)}\n`,
    );
  }
  await writeOutput('--out', values.out, uai, '; the report above is complete', true);
  if (r.diverged) throw new EngineError(r.diverged);
  return 0;
}
