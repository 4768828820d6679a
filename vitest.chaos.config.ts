import { readdirSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import { builtModulesExternal, testsRunTheBuild } from './vitest.shared.js';

const CHAOS = 'packages/gateway/chaos';

/**
 * Files that spend their time waiting (on restarts, refresh leases, heartbeats) rather than loading
 * the machine; two of them run at a time. Every other file runs alone: the floods load the machine
 * by themselves, and hanging-token-endpoint bounds other requests' p99 latency while it runs, which
 * a neighbour's load can push over. A new file runs alone until it is known to wait.
 */
const WAITING = ['kill-restart.chaos.test.ts', 'replica-cut.chaos.test.ts', 'third-party.chaos.test.ts'];
const ALONE = readdirSync(CHAOS)
  .filter((file) => file.endsWith('.chaos.test.ts') && !WAITING.includes(file))
  .sort();

/**
 * The chaos and abuse suite (npm run test:chaos): real gateway processes killed, cut from their
 * database and fed hostile traffic. The waiting files first, two at a time, then each flooding file
 * on its own (Vitest runs one `groupOrder` after another); each file has its own process.
 */
export default defineConfig({
  plugins: [testsRunTheBuild()],
  test: {
    globalSetup: ['vitest.build.ts'],
    server: { deps: { external: builtModulesExternal } },
    testTimeout: 300_000,
    hookTimeout: 180_000,
    pool: 'forks',
    maxWorkers: 2,
    minWorkers: 1,
    setupFiles: ['packages/gateway/test/helpers/no-leaked-listeners.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'chaos (waiting, two at a time)',
          include: WAITING.map((file) => `${CHAOS}/${file}`),
          sequence: { groupOrder: 0 },
        },
      },
      ...ALONE.map((file, i) => ({
        extends: true as const,
        test: {
          name: `chaos (alone) ${file.replace('.chaos.test.ts', '')}`,
          include: [`${CHAOS}/${file}`],
          sequence: { groupOrder: i + 1 },
        },
      })),
    ],
  },
});
