import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import SlowestFirst from './vitest.sequencer.js';
import { builtModulesExternal, testsRunTheBuild } from './vitest.shared.js';

export default defineConfig({
  plugins: [testsRunTheBuild()],
  test: {
    globalSetup: ['vitest.build.ts'],
    server: { deps: { external: builtModulesExternal } },
    include: ['packages/*/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is a worker per core but one: on two cores, one, which ran every file in a
    // row while most of them wait on what they drive (gateways, CLI processes, PostgreSQL,
    // Chromium). At least three files at a time keep two cores busy through those waits (the whole
    // suite on two cores: 997 s with two, 855 s with three); each still has its own process.
    maxWorkers: Math.max(3, availableParallelism() - 1),
    minWorkers: 1,
    // The slowest files start first, so that both workers end together (vitest.sequencer.ts).
    sequence: { sequencer: SlowestFirst },
    setupFiles: ['packages/gateway/test/helpers/no-leaked-listeners.ts'],
  },
});
