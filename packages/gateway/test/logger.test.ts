import { describe, expect, it } from 'vitest';
import type { LogLevel } from '../src/config.js';
import { createLogger, deferredChildLogger, requestLineWriter } from '../src/logging/logger.js';

function capture(level: LogLevel) {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger(level, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe('per-request logger (deferred child)', () => {
  it('writes nothing below the level and binds the request id to what it writes', () => {
    const { logger, lines } = capture('warn');
    const log = deferredChildLogger(logger, { request_id: 'req_1' }, {});
    log.info({ path: '/proxy/v1/users/me' }, 'request completed');
    log.debug('detail');
    expect(lines).toHaveLength(0);
    log.warn({ status: 502 }, 'upstream trouble');
    log.error(new Error('boom'));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ request_id: 'req_1', status: 502, msg: 'upstream trouble', level: 40 });
    expect(lines[1]).toMatchObject({ request_id: 'req_1', level: 50, err: { message: 'boom' } });
  });

  it('follows the parent level, keeps redaction, and makes children with both bindings', () => {
    const { logger, lines } = capture('info');
    const log = deferredChildLogger(logger, { request_id: 'req_2' }, {});
    expect(log.level).toBe('info');
    expect(log.isLevelEnabled('debug')).toBe(false);
    log.info({ access_token: 'secret-token-value' }, 'hello');
    log.child({ tool: 'notes_search' }).info('from a child');
    log.level = 'error';
    log.warn('now hidden');
    expect(lines.map((l) => l.msg)).toEqual(['hello', 'from a child']);
    expect(JSON.stringify(lines)).not.toContain('secret-token-value');
    expect(lines[1]).toMatchObject({ request_id: 'req_2', tool: 'notes_search' });
  });

  it('is a plain pino child when the route sets its own level', () => {
    const { logger, lines } = capture('warn');
    const log = deferredChildLogger(logger, { request_id: 'req_3' }, { level: 'debug' });
    log.debug('route-level debug');
    expect(lines).toMatchObject([{ request_id: 'req_3', msg: 'route-level debug' }]);
  });
});

describe('request lines', () => {
  const line = {
    request_id: 'req_9',
    method: 'GET',
    path: '/proxy/v1/users/me',
    status: 200,
    duration_ms: 0.42,
  };

  it('writes one line per request with its id, at info', () => {
    const { logger, lines } = capture('info');
    const writer = requestLineWriter(logger);
    expect(writer.enabled()).toBe(true);
    writer.write(line);
    expect(lines).toMatchObject([{ ...line, level: 30, service: 'portico', msg: 'request completed' }]);
  });

  it('is off below info, and leaves the main logger redacting', () => {
    const quiet = capture('warn');
    expect(requestLineWriter(quiet.logger).enabled()).toBe(false);
    const { logger, lines } = capture('info');
    requestLineWriter(logger);
    logger.info({ access_token: 'still-secret' }, 'x');
    expect(JSON.stringify(lines)).not.toContain('still-secret');
  });
});
