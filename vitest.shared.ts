import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Plugin } from 'vite';

/**
 * Tests import the packages' sources by relative path (`../src/…`), but run the build: the same
 * JavaScript `npm start` runs, loaded by Node itself. Transforming each test file's ~400 source
 * modules through Vite cost about 15 s of CPU per gateway test file on two cores; Node loads the
 * built modules in under one. `vitest.build.ts` rebuilds first when a source is newer than its build.
 */
export function testsRunTheBuild(): Plugin {
  const testDir = /\/packages\/([^/]+)\/(test|chaos|bench)\//;
  return {
    name: 'portico-tests-run-the-build',
    enforce: 'pre',
    resolveId(id, importer) {
      if (!importer || !id.startsWith('.') || !id.includes('src/')) return null;
      const match = testDir.exec(importer);
      if (!match) return null;
      const target = resolve(dirname(importer), id);
      const packageRoot = importer.slice(0, match.index + `/packages/${match[1]}`.length);
      const source = `${packageRoot}/src/`;
      if (!target.startsWith(source)) return null;
      const built = `${packageRoot}/dist/${target.slice(source.length)}`.replace(/\.ts$/, '.js');
      return existsSync(built) ? built : null;
    },
  };
}

/** Built modules are loaded by Node, not transformed by Vite (see above). */
export const builtModulesExternal = [/\/packages\/[^/]+\/dist\//];

/** The newest modification time under a folder, in ms. */
export function newestUnder(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : statSync(path).mtimeMs);
  }
  return newest;
}
