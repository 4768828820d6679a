import { defineConfig } from 'vitest/config';
import { builtModulesExternal, testsRunTheBuild } from './vitest.shared.js';

/**
 * The chaos and abuse suite (npm run test:chaos): real gateway processes killed, cut from their
 * database and fed hostile traffic. One file at a time: each one loads the machine on its own.
 */
export default defineConfig({
  plugins: [testsRunTheBuild()],
  test: {
    globalSetup: ['vitest.build.ts'],
    server: { deps: { external: builtModulesExternal } },
    include: ['packages/gateway/chaos/**/*.chaos.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 180_000,
    pool: 'forks',
    setupFiles: ['packages/gateway/test/helpers/no-leaked-listeners.ts'],
    fileParallelism: false,
  },
});
