// The tarball `npm pack` makes, installed as a user would: into an empty project with production
// dependencies only (no tsx, no TypeScript), then the installed CLI, an import by name from an
// .mjs file, and a user's .ts file type-checked against the shipped declarations (nodenext).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadEngine, isingLattice, exactInference } from '../bindings/index.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const built = existsSync(resolve(ROOT, 'dist/index.js')) && existsSync(resolve(ROOT, 'build/release.wasm'));
if (!built && process.env.CI) throw new Error('dist/ or build/ is missing: npm test builds them first');
const skip = built ? false : 'dist/ not built: run "npm run build:js" (npm test does)';
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
// A user's shell: under `npm test`, PATH starts with node_modules/.bin, where a dev dependency
// (as-pect → glob-promise → npm-install-peers) puts an npm 6 that has no --pack-destination.
const PATH = (process.env.PATH ?? '').split(':').filter((d) => !d.includes('node_modules/.bin')).join(':');
const plainEnv = { ...process.env, PATH, NODE_OPTIONS: '' };

test('npm pack: the tarball installs into an empty project and runs without dev dependencies', { skip, timeout: 180_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'relaxmrf-pack-'));
  try {
    // The build is current (npm test built it): skip prepare.
    const packed = JSON.parse(execFileSync(NPM, ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8', env: plainEnv }))[0];
    const files: string[] = packed.files.map((f: { path: string }) => f.path);
    assert.ok(files.includes('build/release.wasm') && files.includes('dist/index.js') && files.includes('dist/cli/cli.js') && files.includes('bin/relaxmrf.js'));
    assert.ok(files.includes('dist/parallel/parallel-worker.js') && files.includes('dist/index.d.ts'));
    const stray = files.filter((f) => /^(test|bench|demo|scripts)\/|__tests__|\.tmp$|\.log$|^build\/debug/.test(f));
    assert.deepEqual(stray, [], 'tests, benches or build leftovers in the tarball');
    assert.ok(packed.size < 2_000_000, `tarball is ${packed.size} bytes`);

    const project = join(dir, 'user');
    execFileSync('mkdir', ['-p', project]);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'user', version: '1.0.0', private: true, type: 'module' }));
    execFileSync(NPM, ['install', '--omit=dev', '--no-audit', '--no-fund', '--ignore-scripts', join(dir, packed.filename)], { cwd: project, encoding: 'utf8', env: plainEnv });
    const installed = readdirSync(join(project, 'node_modules'));
    assert.ok(!installed.includes('tsx') && !installed.includes('typescript'), `installed: ${installed.join(' ')}`);

    // The installed CLI on plain node.
    const cli = JSON.parse(execFileSync(join(project, 'node_modules/.bin/relaxmrf'), ['infer', 'ising:3x4,beta=0.35,h=0.1', '--json'], { cwd: project, encoding: 'utf8', env: plainEnv }));
    const exact = exactInference(await loadEngine(), isingLattice({ shape: [3, 4], beta: 0.35, h: 0.1 }));
    assert.equal(cli.method, 'exact');
    assert.ok(Math.abs(cli.logZ - exact.logZ) < 1e-12, `${cli.logZ} vs ${exact.logZ}`);
    // --version, help, and --plot (the plot module is part of the compiled package).
    const bin = join(project, 'node_modules/.bin/relaxmrf');
    assert.equal(execFileSync(bin, ['--version'], { cwd: project, encoding: 'utf8', env: plainEnv }).trim(), JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version);
    assert.match(execFileSync(bin, ['help', 'infer'], { cwd: project, encoding: 'utf8', env: plainEnv }), /^relaxmrf infer: /);
    execFileSync(bin, ['infer', 'ising:3x4,beta=0.35', '--plot', 'm.svg'], { cwd: project, encoding: 'utf8', env: plainEnv });
    assert.match(readFileSync(join(project, 'm.svg'), 'utf8'), /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);

    // Imported by name from an .mjs file.
    writeFileSync(join(project, 'use.mjs'), `
      import { loadEngine, isingLattice, infer } from 'relaxmrf';
      const engine = await loadEngine();
      const r = infer(engine, isingLattice({ shape: [3, 4], beta: 0.35, h: 0.1 }), { method: 'gibbs', seed: 1, samples: 200 });
      console.log(JSON.stringify({ n: r.marginals.length, finite: r.marginals.every((m) => Array.from(m).every(Number.isFinite)) }));
    `);
    assert.deepEqual(JSON.parse(execFileSync(process.execPath, ['use.mjs'], { cwd: project, encoding: 'utf8', env: plainEnv })), { n: 12, finite: true });

    // A user's TypeScript type-checked against the shipped declarations (the compiler comes from
    // this checkout: the user project has none). A deliberate type error must be reported.
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, types: [], lib: ['es2022', 'dom'] }, files: ['user.ts'] }));
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const good = `import { loadEngine, isingLattice, infer, type InferenceResult } from 'relaxmrf';
const engine = await loadEngine();
const r: InferenceResult = infer(engine, isingLattice({ shape: [4, 4], beta: 0.4 }), { method: 'mf' });
const z: number | null = r.logZ;
export { z };
`;
    writeFileSync(join(project, 'user.ts'), good);
    execFileSync(process.execPath, [tsc, '-p', project], { cwd: project, encoding: 'utf8', env: plainEnv });
    writeFileSync(join(project, 'user.ts'), good.replace("{ method: 'mf' }", "{ method: 'nope' }"));
    assert.throws(() => execFileSync(process.execPath, [tsc, '-p', project], { cwd: project, encoding: 'utf8', env: plainEnv, stdio: 'pipe' }), (e: { stdout?: string }) => /nope/.test(String(e.stdout)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
