import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, ConfigError, loadConfig } from '../src/config.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration', () => {
  it('has working defaults for a newcomer', () => {
    const config = loadConfig({});
    expect(config.port).toBe(8080);
    expect(config.publicUrl).toBe('http://localhost:8080');
    expect(config.dataDir).toBe(path.resolve('.portico'));
    expect(config.databaseUrl).toBeUndefined();
    expect(config.logLevel).toBe('info');
    expect(config.accessTokenTtlSeconds).toBe(3600);
    // JSON bodies are held for a replay after a 401; file uploads stream.
    expect(config.proxyReplayLimitBytes).toBe(65_536);
    // On unless turned off (the test gateways turn it off; its own suites turn it back on).
    expect(config.rateGovernor).toBe(true);
  });

  it('binds loopback by default with the embedded database, every interface with PostgreSQL', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1');
    expect(loadConfig({ DATABASE_URL: 'postgres://db/portico' }).host).toBe('0.0.0.0');
    expect(loadConfig({ PORTICO_HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(loadConfig({ DATABASE_URL: 'postgres://db/portico', PORTICO_HOST: '10.0.0.5' }).host).toBe(
      '10.0.0.5',
    );
  });

  it('normalises the public URL', () => {
    expect(loadConfig({ PORTICO_PUBLIC_URL: 'https://portico.example.com/' }).publicUrl).toBe(
      'https://portico.example.com',
    );
  });

  it('names each bad variable and says what to do, all at once', () => {
    const problems = problemsOf({
      PORTICO_PORT: 'eighty',
      PORTICO_PUBLIC_URL: 'ftp://x',
      DATABASE_URL: 'mysql://db',
      PORTICO_LOG_LEVEL: 'loud',
      PORTICO_MASTER_KEY: 'c2hvcnQ=',
    });
    expect(problems).toHaveLength(5);
    expect(problems[0]).toMatch(/PORTICO_PORT="eighty" is not a whole number/);
    expect(problems.join('\n')).toMatch(/PORTICO_PUBLIC_URL="ftp:\/\/x" is not an absolute http\(s\) URL/);
    expect(problems.join('\n')).toMatch(/DATABASE_URL is not a postgres:\/\//);
    expect(problems.join('\n')).toMatch(/PORTICO_LOG_LEVEL="loud" is not a level; use one of fatal/);
    expect(problems.join('\n')).toMatch(/PORTICO_MASTER_KEY key #1 is not 32 bytes of base64; generate one/);
  });

  it('rejects out-of-range numbers', () => {
    expect(problemsOf({ PORTICO_PORT: '70000' })[0]).toMatch(
      /PORTICO_PORT=70000 is out of range; set it between 0 and 65535/,
    );
    expect(problemsOf({ PORTICO_ACCESS_TOKEN_TTL: '5' })[0]).toMatch(
      /PORTICO_ACCESS_TOKEN_TTL=5 is out of range/,
    );
    expect(problemsOf({ PORTICO_PROXY_REPLAY_LIMIT: '20000000' })[0]).toMatch(
      /PORTICO_PROXY_REPLAY_LIMIT=20000000 is out of range; set it between 0 and 16777216/,
    );
    expect(loadConfig({ PORTICO_PROXY_REPLAY_LIMIT: '0' }).proxyReplayLimitBytes).toBe(0);
  });

  it('does not echo a database password in its message', () => {
    const problems = problemsOf({ DATABASE_URL: 'mysql://user:hunter2@db' });
    expect(problems.join()).not.toContain('hunter2');
  });

  it('documents every variable in the configuration reference table', () => {
    const reference = readFileSync(
      new URL('../../../docs/reference/configuration.md', import.meta.url),
      'utf8',
    );
    for (const name of Object.keys(CONFIG_VARIABLES))
      expect(reference, name).toMatch(new RegExp(`\\| \`${name}\` +\\|`));
  });
});
