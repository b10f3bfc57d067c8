// Rewrites the README's CLI usage block (the fenced block without a language that starts with
// "usage:") from `relaxmrf --help`, so the two stay identical (test/readme.test.ts checks it).
// Run after changing the CLI's usage text: npm run readme:usage
import { readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// The TypeScript sources, not dist/ (which may be older than the change being documented).
const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', "const { main } = await import('./bindings/cli/cli.ts'); process.exitCode = await main(['--help']);"], { cwd: root, encoding: 'utf8' });
const help = r.status === 0 ? r.stdout.trimEnd() : '';
if (!help.startsWith('usage:')) throw new Error(`relaxmrf --help failed: ${r.stderr}`);
const path = `${root}README.md`;
const text = readFileSync(path, 'utf8');
const block = /^```\nusage:[\s\S]*?\n```$/m;
if (!block.test(text)) throw new Error('README.md has no usage block');
writeFileSync(path, text.replace(block, () => '```\n' + help + '\n```'));
