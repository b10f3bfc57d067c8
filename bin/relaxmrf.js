#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../bindings/cli/cli.ts');
process.exitCode = await main(process.argv.slice(2));
