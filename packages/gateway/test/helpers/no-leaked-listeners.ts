import { afterAll } from 'vitest';

/**
 * Every test file fails when Node warned that listeners piled up on one emitter during it: that
 * warning is how a per-request listener on a long-lived socket or client shows itself, and the
 * suite is meant to run without warnings.
 */
const warnings: string[] = [];
process.on('warning', (warning) => {
  if (warning.name === 'MaxListenersExceededWarning') warnings.push(warning.stack ?? warning.message);
});

afterAll(() => {
  if (warnings.length) {
    throw new Error(
      `${warnings.length} MaxListenersExceededWarning(s) in this file:\n${warnings.slice(0, 3).join('\n\n')}`,
    );
  }
});
