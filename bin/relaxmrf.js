#!/usr/bin/env node
// Runs the compiled CLI (dist/, built by `npm run build:js`, which `prepare` runs on install).
// In a source checkout without dist/, falls back to the TypeScript sources through tsx, a
// development dependency.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/cli/cli.js', import.meta.url);
let main;
if (existsSync(compiled)) {
  ({ main } = await import(compiled.href));
} else {
  const { register } = await import('tsx/esm/api').catch(() => {
    console.error('relaxmrf: dist/ is not built and tsx is not installed: run "npm run build:js"');
    process.exit(2);
  });
  register();
  ({ main } = await import('../bindings/cli/cli.ts'));
}
// A reader that stops early (`relaxmrf … --json | head`) closes the pipe: stop quietly with the
// status a Unix tool killed by SIGPIPE has (128 + 13), not with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e) => {
    if (e.code === 'EPIPE') process.exit(141);
    throw e;
  });
}
process.exitCode = await main(process.argv.slice(2));
// Done: once the output is flushed, no handle may keep the process (a queued run whose Redis paused
// past the lost limit printed its error, returned 3 and stayed on, BullMQ's connections retrying).
process.stdout.write('', () => process.stderr.write('', () => setTimeout(() => process.exit(), 1000).unref()));
