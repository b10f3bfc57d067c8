// One entry point for every method; the CLI and the library both go through here.
import type { Engine } from './engine.ts';
import type { Model } from './model.ts';
import type { InferenceResult } from './result.ts';
import { exactInference, type ExactOptions } from './exact.ts';
import { runGibbs, type GibbsOptions } from './gibbs.ts';
import { runMeanField, type MeanFieldOptions } from './meanfield.ts';
import { runMFRP, type MFRPOptions } from './mfrp.ts';
import { runBlockGibbs, type BlockGibbsOptions } from './blockgibbs.ts';
import { ModelError } from './errors.ts';

export const METHODS = ['exact', 'gibbs', 'blockgibbs', 'mf', 'mfrp'] as const;
export type Method = (typeof METHODS)[number];

/** Options of every method, flat; each method reads the ones it knows (see each run* function). */
export type InferOptions = GibbsOptions & BlockGibbsOptions & MeanFieldOptions & MFRPOptions & { method?: Method; exact?: ExactOptions };

export function infer(engine: Engine, model: Model, opts: InferOptions = {}): InferenceResult {
  const method = opts.method ?? 'exact';
  switch (method) {
    case 'exact': {
      const r = exactInference(engine, model, opts.exact);
      return {
        method: 'exact',
        logZ: r.logZ,
        logZStdErr: null,
        logZKind: 'exact',
        marginals: r.marginals,
        marginalStdErr: null,
        diagnostics: { algorithm: r.method, treewidth: r.treewidth, maxTableEntries: r.maxTableEntries, ordering: r.ordering },
        seconds: r.seconds,
        partial: false,
      };
    }
    case 'gibbs':
      return runGibbs(engine, model, opts);
    case 'blockgibbs':
      return runBlockGibbs(engine, model, opts);
    case 'mf':
      return runMeanField(engine, model, opts);
    case 'mfrp':
      return runMFRP(engine, model, opts);
    default:
      throw new ModelError(`unknown method "${method}"; expected one of ${METHODS.join(', ')}`);
  }
}
