import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { freePort, startTestGateway, type TestGateway } from './helpers/gateway.js';

interface Family {
  name: string;
  type: string;
  metrics: Array<{
    labels?: Record<string, string>;
    value?: string;
    buckets?: Record<string, string>;
    count?: string;
  }>;
}

const METRICS_TOKEN = 'scrape-token-0123456789abcdef';

/** The value of one sample (or a histogram's count) whose labels include `labels`. */
function sample(families: Family[], name: string, labels: Record<string, string> = {}): number {
  const family = families.find((f) => f.name === name);
  if (!family) throw new Error(`no metric ${name}`);
  const matching = family.metrics.filter((m) =>
    Object.entries(labels).every(([k, v]) => m.labels?.[k] === v),
  );
  return matching.reduce((sum, m) => sum + Number(m.value ?? m.count ?? 0), 0);
}

describe.each(BACKENDS)('GET /metrics ($name)', (backend) => {
  let t: TestGateway;
  let metricsPort: number;

  let lastText = '';
  const scrape = async (): Promise<Family[]> => {
    const res = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    lastText = await res.text();
    return parsePrometheusTextFormat(lastText) as Family[];
  };
  // The parser folds labelled histograms into one sample, so their counts are read from the text.
  const histogramCount = (text: string, name: string, label: string) =>
    Number(new RegExp(`^${name}_count\\{${label}\\} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);

  beforeAll(async () => {
    metricsPort = await freePort();
    t = await startTestGateway(backend, {
      PORTICO_METRICS_TOKEN: METRICS_TOKEN,
      PORTICO_METRICS_PORT: String(metricsPort),
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers only a scraper holding the token, with a problem otherwise', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789', `Bearer ${await t.token()}`]) {
      const res = await fetch(`${t.url}/metrics`, { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(((await res.json()) as { code: string }).code).toBe('unauthenticated');
    }
  });

  it('parses as Prometheus text and reports every family an operator watches', async () => {
    const names = (await scrape()).map((f) => f.name);
    for (const name of [
      'portico_http_requests_total',
      'portico_http_request_duration_seconds',
      'portico_proxy_bytes_total',
      'portico_upstream_responses_total',
      'portico_token_refreshes_total',
      'portico_token_refresh_duration_seconds',
      'portico_credential_cache_lookups_total',
      'portico_connected_accounts',
      'portico_database_statements_total',
      'nodejs_eventloop_lag_seconds',
    ]) {
      expect(names).toContain(name);
    }
  });

  it('counts proxy traffic (fast path included), tool calls, the credential cache, refreshes and accounts', async () => {
    const { connection } = await sandboxAccount(t, { provider: 'notion', identifier: 'metrics-user' });
    const before = await scrape();
    const beforeText = lastText;
    const proxied = 20;
    for (let i = 0; i < proxied; i++) {
      const res = await t.api('/proxy/v1/users/me', {
        headers: { connection_name: connection, identifier: 'metrics-user' },
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const tool = await executeTool(t, { tool_name: 'notes_user_list', identifier: 'metrics-user' });
    expect(tool.status).toBe(200);
    // A refresh: expire the sandbox tokens, then call again.
    const expire = await t.api(`/api/v1/sandbox/connections/${connection}/expire-tokens`, { method: 'POST' });
    expect(expire.status).toBe(200);
    const again = await t.api('/proxy/v1/users/me', {
      headers: { connection_name: connection, identifier: 'metrics-user' },
    });
    expect(again.status).toBe(200);
    await again.arrayBuffer();

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) =>
      sample(after, name, labels) - sample(before, name, labels);
    expect(delta('portico_http_requests_total', { family: 'proxy', status_class: '2xx' })).toBe(proxied + 1);
    const histogramDelta = (name: string, label: string) =>
      histogramCount(lastText, name, label) - histogramCount(beforeText, name, label);
    expect(histogramDelta('portico_http_request_duration_seconds', 'family="proxy"')).toBe(proxied + 1);
    expect(
      delta('portico_http_requests_total', { family: 'tools', status_class: '2xx' }),
    ).toBeGreaterThanOrEqual(1);
    expect(delta('portico_proxy_bytes_total', { direction: 'out' })).toBeGreaterThan(proxied * 50);
    expect(
      delta('portico_upstream_responses_total', { provider: 'notion', status_class: '2xx' }),
    ).toBeGreaterThanOrEqual(proxied + 1);
    expect(delta('portico_upstream_responses_total', { provider: 'notion', status_class: '4xx' })).toBe(1);
    expect(delta('portico_token_refreshes_total', { provider: 'notion', outcome: 'ok' })).toBe(1);
    expect(histogramDelta('portico_token_refresh_duration_seconds', 'provider="notion"')).toBe(1);
    expect(delta('portico_credential_cache_lookups_total', { result: 'hit' })).toBeGreaterThanOrEqual(
      proxied - 1,
    );
    expect(sample(after, 'portico_connected_accounts', { status: 'ACTIVE' })).toBe(1);
  });

  it('counts the statements the store sends, labelled by the store alone', async () => {
    const store = backend.name === 'pglite' ? 'embedded' : 'postgres';
    const before = await scrape();
    const family = before.find((f) => f.name === 'portico_database_statements_total');
    expect(family?.type).toBe('COUNTER');
    expect(family?.metrics.map((m) => m.labels)).toEqual([{ store }]);
    for (let i = 0; i < 25; i++) await t.db.query('SELECT 1');
    await t.db.transaction(async (tx) => {
      await tx.query('SELECT 1');
      await tx.query('SELECT 2');
    });
    const after = await scrape();
    const delta =
      sample(after, 'portico_database_statements_total') -
      sample(before, 'portico_database_statements_total');
    // Background jobs and the scrape itself (the accounts gauge) run statements too.
    expect(delta).toBeGreaterThanOrEqual(25 + 4);
  });

  it('counts a transaction as its BEGIN, its statements and its COMMIT or ROLLBACK', async () => {
    const db = await backend.open();
    try {
      const before = db.statements();
      await db.query('SELECT 1');
      await db.transaction(async (tx) => {
        await tx.query('SELECT 1');
        await tx.query('SELECT 2');
      });
      expect(db.statements() - before).toBe(5);
      await expect(
        db.transaction(async (tx) => {
          await tx.query('SELECT 1');
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(db.statements() - before).toBe(8);
    } finally {
      await db.close();
    }
  });

  it('serves the same text without a token on PORTICO_METRICS_PORT, and nothing else there', async () => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(res.status).toBe(200);
    const families = parsePrometheusTextFormat(await res.text()) as Family[];
    expect(sample(families, 'portico_http_requests_total')).toBeGreaterThan(0);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/api/v1/connections`)).status).toBe(404);
  });
});
