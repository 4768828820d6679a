import { type Logger, type LoggerOptions, pino } from 'pino';
import type { LogLevel } from './config.js';

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
