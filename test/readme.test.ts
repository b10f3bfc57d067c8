// Every code block in README.md is run, so the README cannot drift from the package:
// * ts: run as a module with `relaxmrf` resolved to the sources (bindings/index.ts), in a scratch
//   directory; it must exit 0 and print no NaN or undefined;
// * html: its module script is run the same way (the browser path itself is tested by
//   test/browser-dist.test.ts), after checking that every name it imports is exported by browser.ts;
// * sh: `npm X` / `npm run X` must name a script of package.json (or npm's own install/test/start),
//   and every `npx relaxmrf …` line is run by the CLI and must exit 0;
// * a block without a language that starts with "usage:" must be `relaxmrf --help`, verbatim.
// Any other kind of block fails the test, so no block goes unchecked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const BIN = join(ROOT, 'bin', 'relaxmrf.js');
const TSX = import.meta.resolve('tsx');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

interface Block {
  lang: string;
  code: string;
  line: number;
}

function blocks(md: string): Block[] {
  const out: Block[] = [];
  const lines = md.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]);
    out.push({ lang: open[1], code: body.join('\n'), line: start + 1 });
  }
  return out;
}

const all = blocks(README);
const scratch = mkdtempSync(join(tmpdir(), 'relaxmrf-readme-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));

/** Runs TypeScript module code with 'relaxmrf' imports pointed at the sources; paths relative to the checkout. */
function runModule(code: string, name: string): { code: number | null; out: string; err: string } {
  const src = code
    .replace(/from 'relaxmrf(?:\/browser)?'/g, `from ${JSON.stringify(pathToFileURL(join(ROOT, 'bindings', 'index.ts')).href)}`)
    .replace(/'((?:test\/fixtures|demo\/instances)\/[^']+)'/g, (_, p) => JSON.stringify(join(ROOT, p)));
  const file = join(scratch, `${name}.mts`); // an ES module wherever the scratch directory is
  writeFileSync(file, src);
  const r = spawnSync(process.execPath, ['--import', TSX, file], { cwd: scratch, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test('the README has code blocks of known kinds only', () => {
  assert.ok(all.length >= 10, `${all.length} blocks`);
  for (const b of all) assert.ok(['ts', 'sh', 'html', ''].includes(b.lang), `README line ${b.line}: unchecked block kind "${b.lang}"`);
  for (const b of all.filter((b) => b.lang === '')) assert.ok(b.code.startsWith('usage:'), `README line ${b.line}: a block without a language must be the CLI usage`);
});

for (const b of all.filter((b) => b.lang === 'ts')) {
  test(`README line ${b.line}: the TypeScript block runs`, () => {
    const r = runModule(b.code, `block-${b.line}`);
    assert.equal(r.code, 0, r.err);
    assert.ok(r.out.trim().length > 0 || /writeFileSync|dispose\(\)/.test(b.code), 'the block prints or writes something');
    assert.ok(!/\bNaN\b|\bundefined\b/.test(r.out), r.out);
  });
}

for (const b of all.filter((b) => b.lang === 'html')) {
  test(`README line ${b.line}: the HTML block's imports exist in browser.ts and its script runs`, async () => {
    const script = /<script type="module">([\s\S]*?)<\/script>/.exec(b.code)?.[1];
    assert.ok(script, 'a module script');
    const browser = await import('../bindings/browser.ts');
    const names = /import\s*\{([^}]*)\}\s*from/.exec(script)![1].split(',').map((s) => s.trim()).filter(Boolean);
    for (const n of names) assert.ok(n in browser, `${n} is not exported by the browser entry`);
    const code = script.replace(/from '[^']*dist\/browser\.js'/, "from 'relaxmrf'").replace(/^\s*(?:const|import)/gm, (m) => m.trimStart());
    const r = runModule(code + '\nconsole.log(r.marginals.length, p.marginals.length);', `html-${b.line}`);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out.trim(), '256 256');
  });
}

for (const b of all.filter((b) => b.lang === 'sh')) {
  test(`README line ${b.line}: the shell block's npm scripts exist and its relaxmrf commands run`, () => {
    for (const raw of b.code.split('\n')) {
      const line = raw.replace(/\s+#.*$/, '').trim();
      for (const cmd of line.split('&&').map((c) => c.trim()).filter(Boolean)) {
        const npm = /^npm (?:run )?([\w:-]+)/.exec(cmd);
        if (npm && cmd.startsWith('npm run ')) assert.ok(npm[1] in pkg.scripts, `"${cmd}": no such script`);
        else if (npm) assert.ok(['install', 'test', 'start', 'ci'].includes(npm[1]) && (npm[1] === 'install' || npm[1] === 'ci' || npm[1] in pkg.scripts), `"${cmd}"`);
        else if (cmd.startsWith('npx relaxmrf ')) {
          const args = cmd.slice('npx relaxmrf '.length).split(/\s+/);
          const r = spawnSync(process.execPath, [BIN, ...args], { cwd: scratch, encoding: 'utf8', timeout: 120_000 });
          assert.equal(r.status, 0, `${cmd}: ${r.stderr}`);
          assert.ok(!/\bNaN\b/.test(r.stdout), r.stdout);
        } else assert.fail(`README line ${b.line}: "${cmd}" is neither an npm script nor a relaxmrf command`);
      }
    }
  });
}

test('the API reference links name exported symbols (the pages `npm run docs` writes)', async () => {
  const api = await import('../bindings/index.ts');
  const links = [...README.matchAll(/\]\(docs\/api\/(functions|classes|interfaces|types|variables)\/(\w+)\.html\)/g)];
  assert.ok(links.length >= 5);
  for (const [, kind, name] of links) {
    // Types and interfaces leave no value behind; their names must still be exported (checked by tsc below).
    if (kind === 'functions' || kind === 'classes' || kind === 'variables') assert.ok(name in api, `${name} is not exported`);
  }
  const typeNames = links.filter(([, k]) => k === 'types' || k === 'interfaces').map(([, , n]) => n);
  const file = join(scratch, 'types-check.mts');
  writeFileSync(file, `import type { ${typeNames.join(', ')} } from ${JSON.stringify(join(ROOT, 'bindings', 'index.ts'))};\nexport type All = [${typeNames.join(', ')}];\n`);
  const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--allowImportingTsExtensions', '--strict', '--skipLibCheck', '--types', 'node', '--typeRoots', join(ROOT, 'node_modules', '@types'), file], { encoding: 'utf8' });
  assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
});

test('the usage block is `relaxmrf --help`, verbatim', () => {
  const usage = all.filter((b) => b.lang === '' && b.code.startsWith('usage:'));
  assert.equal(usage.length, 1);
  const r = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' });
  assert.equal(usage[0].code, r.stdout.trimEnd());
});
