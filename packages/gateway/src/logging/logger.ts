import { type Logger, type LoggerOptions, pino } from 'pino';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Paths redacted at the logger, so no code path has to remember not to log a secret.
 * Wildcards cover nested bodies (`*.client_secret`) as well as request headers.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["set-cookie"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'authorization',
  'cookie',
  'client_secret',
  'clientSecret',
  'access_token',
  'accessToken',
  'refresh_token',
  'refreshToken',
  'password',
  'secret',
  'token',
  '*.client_secret',
  '*.clientSecret',
  '*.access_token',
  '*.accessToken',
  '*.refresh_token',
  '*.refreshToken',
  '*.password',
  '*.secret',
  '*.token',
  '*.authorization',
  '*.cookie',
];

export function loggerOptions(level: LogLevel): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { service: 'portico' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
}

export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  return destination ? pino(loggerOptions(level), destination) : pino(loggerOptions(level));
}

const CONNECT_PREFIX = '/connect/';

/**
 * A request's path as logs hold it: without the query string (which carries OAuth codes and
 * states), and without the link token of /connect/{token}, which grants a consent trip until used.
 */
export function loggedPath(url: string): string {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  return path.startsWith(CONNECT_PREFIX) ? `${CONNECT_PREFIX}…` : path;
}

/** The one line written per completed request: fields fixed by the code, none able to hold a secret. */
export interface RequestLine {
  request_id: string;
  method: string;
  /** Without the query string (which carries OAuth codes and states). */
  path: string;
  status: number;
  /** gRPC calls: the status name (HTTP status is 200 whatever the outcome). */
  grpc_status?: string;
  duration_ms: number;
}

/**
 * Writes request lines. They skip the redaction pass: their fields are primitives fixed by the
 * code, and the pass (wildcard paths walk every key) costs several times the line itself, which at
 * one line per proxied request was a third of the proxy's CPU. Everything else stays redacted.
 */
export function requestLineWriter(logger: Logger): { enabled(): boolean; write(line: RequestLine): void } {
  const plain = logger.child({}, { redact: { paths: [] } });
  return {
    enabled: () => plain.isLevelEnabled('info'),
    write: (line) => plain.info(line, 'request completed'),
  };
}

type LogArgs = [unknown, ...unknown[]];
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

/**
 * Fastify's per-request logger, made into a real pino child only when something is logged at an
 * enabled level. A child per request costs more than a proxied request's own work, and most
 * requests log one line at most (none below info).
 */
class DeferredChildLogger {
  #child: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Record<string, unknown>,
  ) {}

  get real(): Logger {
    this.#child ??= this.parent.child(this.bindings);
    return this.#child;
  }

  get level(): string {
    return (this.#child ?? this.parent).level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.#child ?? this.parent).isLevelEnabled(level);
  }

  child(bindings: Record<string, unknown>, options?: pino.ChildLoggerOptions): Logger {
    return this.real.child(bindings, options);
  }

  silent(): void {}
}
for (const level of LEVELS) {
  Object.defineProperty(DeferredChildLogger.prototype, level, {
    value(this: DeferredChildLogger, ...args: LogArgs) {
      if (this.isLevelEnabled(level)) (this.real[level] as (...a: LogArgs) => void)(...args);
    },
  });
}

/** Fastify's `childLoggerFactory`: a deferred child unless the route asks for its own level or serializers. */
export function deferredChildLogger(
  logger: Logger,
  bindings: Record<string, unknown>,
  options: pino.ChildLoggerOptions,
): Logger {
  if (options.level || options.serializers) return logger.child(bindings, options);
  return new DeferredChildLogger(logger, bindings) as unknown as Logger;
}
