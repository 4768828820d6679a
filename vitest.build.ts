import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { newestUnder } from './vitest.shared.js';

/**
 * Global setup: tests run the build (vitest.shared.ts), so a source newer than its package's build
 * would test stale code. Build once before any file starts, and only when something changed.
 */
export default function buildIfStale(): void {
  const stale = ['emulators', 'sdk', 'gateway'].some((name) => {
    const info = `packages/${name}/tsconfig.tsbuildinfo`;
    return !existsSync(info) || newestUnder(`packages/${name}/src`) > statSync(info).mtimeMs;
  });
  if (stale) execFileSync('npm', ['run', 'build'], { stdio: 'inherit' });
}
