import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The suite's slowest files, slowest first (seconds alone on two cores, in a full run). A fresh
 * clone has no results cache, so Vitest would order files by size and could start a one-minute file
 * last, leaving one worker running it alone while the other sits idle. Starting these first lets
 * the two workers finish together. Update the list when a file becomes one of the slowest (the
 * reporter prints each file's duration); the rest of the files keep Vitest's own order.
 */
export const SLOWEST_FIRST = [
  'packages/gateway/test/docs-samples.test.ts', // 73
  'packages/gateway/test/triggers-crm-notes.test.ts', // 38
  'packages/gateway/test/proxy-processes.test.ts', // 36
  'packages/gateway/test/cli.test.ts', // 36
  'packages/gateway/test/rate-governor.test.ts', // 29
  'packages/gateway/test/triggers-replicas.test.ts', // 28
  'packages/gateway/test/triggers-google.test.ts', // 28
  'packages/gateway/test/cli-api.test.ts', // 27.5
  'packages/gateway/test/guess-throttle.test.ts', // 24.6
  'packages/gateway/test/triggers.test.ts', // 22
  'packages/gateway/test/webhooks-processes.test.ts', // 21.5
  'packages/gateway/test/packages.test.ts', // 21
  'packages/gateway/test/hardening.test.ts', // 19
];

export default class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const index = SLOWEST_FIRST.indexOf(relative(file.project.config.root, file.moduleId));
      return index === -1 ? SLOWEST_FIRST.length : index;
    };
    // Array.prototype.sort is stable: unlisted files keep the order Vitest gave them.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
