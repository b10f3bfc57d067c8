// `relaxmrf help [command]` and `relaxmrf COMMAND --help`: each command's part of the usage text
// (cut from the one usage string, so the two cannot disagree) with a description and examples.

const ABOUT: Record<string, { what: string; examples: string[] }> = {
  infer: {
    what: 'Marginals p(x_i = k) and, where the method gives one, log Z (exact, an estimate ± standard error, or a bound) of one model.',
    examples: [
      'relaxmrf infer ising:12x12,beta=0.4 --json                    exact marginals and log Z',
      'relaxmrf infer model.uai --method gibbs --chains 4 --seed 1    sampled marginals ± standard errors',
      'relaxmrf infer ising:32x32,beta=0.4 --method mf                a lower bound on log Z',
      'relaxmrf infer ising:16x16,beta=0.4 --method gibbs --logz ais --plot marginals.svg',
    ],
  },
  learn: {
    what: 'Fits a Boltzmann machine, RBM, semi-restricted RBM or Potts model to the rows of a CSV file by PCD or CD-k and writes it as UAI MARKOV (visible units first, then hidden).',
    examples: [
      'relaxmrf learn data.csv --model rbm --hidden 16 --epochs 20 --out rbm.uai --json',
      'relaxmrf learn train.csv --test test.csv --method cd --cd-steps 5 --out bm.uai',
      'relaxmrf learn digits.csv --model srbm --hidden 50 --sampler blockgibbs --visible-rate 0.1 --out srbm.uai',
    ],
  },
  worker: {
    what: 'Serves jobs from a Redis job queue (BullMQ) on compute threads until interrupted: the chains, AIS runs, slices and whole runs that `relaxmrf infer … --queue URL` sends.',
    examples: [
      'relaxmrf worker --queue redis://127.0.0.1:6379                 one compute thread per core',
      'relaxmrf worker --queue redis://queue.example:6379/2 --concurrency 4 --name node-7',
    ],
  },
  demo: {
    what: 'The default job (npm start): Gibbs on a 32×32 periodic Ising model, checked against exact inference on a 12×12 grid. No options.',
    examples: ['relaxmrf demo'],
  },
  help: {
    what: 'Usage of every command, or of one.',
    examples: ['relaxmrf help', 'relaxmrf help infer'],
  },
};

export const COMMANDS = Object.keys(ABOUT);

/** The help text for `topic` (undefined: all commands), or null when there is no such command. */
export function commandHelp(usage: string, topic: string | undefined): string | null {
  if (topic === undefined) return `${usage}\n\ncommands: ${COMMANDS.join(', ')} ("relaxmrf help COMMAND" for one)`;
  const about = ABOUT[topic];
  if (!about) return null;
  const lines = usage.split('\n');
  // The command's block: from its "  relaxmrf COMMAND" line to the next "  relaxmrf " line; then
  // the paragraphs after the usage lines (what MODEL can be) when they mention the command's arguments
  // (learn's MODEL.uai is its output file, not a MODEL).
  const start = lines.findIndex((l) => l.startsWith(`  relaxmrf ${topic}`));
  const block: string[] = [];
  if (start >= 0) {
    block.push(lines[start]);
    for (let i = start + 1; i < lines.length && lines[i].startsWith('   ') && !lines[i].startsWith('  relaxmrf '); i++) block.push(lines[i]);
  }
  const blank = lines.indexOf('');
  const notes = blank >= 0 && block.some((l) => /\bMODEL\b(?!\.)/.test(l)) ? lines.slice(blank + 1) : [];
  return [`relaxmrf ${topic}: ${about.what}`, '', 'usage:', ...block, ...(notes.length ? ['', ...notes] : []), '', 'examples:', ...about.examples.map((e) => `  ${e}`)].join('\n');
}
