#!/usr/bin/env node
// The `portico` command: a committed entry point (npm links it at install time, before anything is
// built) that runs the compiled CLI, or says how to build it.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('Portico is not built yet: run `npm run build` in the repository first.\n');
  process.exit(1);
}
await import(cli.href);
