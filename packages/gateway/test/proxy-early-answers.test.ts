import type { EmulatorControl } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { paddedJson, uploadBody } from './helpers/uploads.js';

const MB = 1024 * 1024;

/**
 * A provider that refuses an upload before reading it (the sandbox emulators answer 413 to a body
 * over their 1 MiB limit and close the connection at once) is answered as it answered: its 413,
 * not a retryable 503 "write EPIPE", and not sent again. The replay limit is raised to 3 MiB so
 * that a 2 MB body is held (and an idempotent PUT with it could be retried) while 4 MB streams.
 */
describe.each(BACKENDS)('early answers to proxied uploads on $name', (backend) => {
  let t: TestGateway;
  let control: EmulatorControl;
  const ID = 'early-user';
  const conn: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestGateway(backend, { PORTICO_PROXY_REPLAY_LIMIT: String(3 * MB) });
    control = t.gateway.sandbox.control!;
    for (const provider of ['notion', 'google_calendar']) {
      conn[provider] = (await sandboxAccount(t, { provider, identifier: ID })).connection;
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  const requests = () => Object.values(control.counters().requests).reduce((a, b) => a + b, 0);
  it.each([
    { kind: 'a held 2 MB body', bytes: 2 * MB, chunked: false },
    { kind: 'a streamed 4 MB body', bytes: 4 * MB, chunked: false },
    { kind: 'a chunked 2 MB body of unannounced length', bytes: 2 * MB, chunked: true },
  ])("relays the provider's 413 to $kind, on the full path and the fast path", async ({ bytes, chunked }) => {
    // The first upload of the suite takes the full path (account not cached yet), later ones the fast path.
    for (let i = 0; i < 3; i++) {
      const before = requests();
      const res = await t.api('/proxy/v1/pages', {
        method: 'POST',
        ...uploadBody(paddedJson(bytes), chunked),
        headers: {
          'content-type': 'application/json',
          'x-request-id': `early-${bytes}-${chunked}-${i}`,
          connection_name: conn.notion!,
          identifier: ID,
        },
      });
      expect(res.status).toBe(413);
      // Notion's own answer, as Notion wrote it: no problem+json of the gateway's.
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('x-request-id')).toBe(`early-${bytes}-${chunked}-${i}`);
      expect(await res.json()).toMatchObject({ object: 'error', status: 413, code: 'validation_error' });
      expect(requests() - before).toBe(1);
    }
    expect(t.logs.filter((l) => l.code === 'upstream_unavailable')).toEqual([]);
  });

  it('never sends an idempotent PUT again after an early answer, though its body is held', async () => {
    const before = requests();
    const res = await t.api('/proxy/calendar/v3/calendars/primary/events/early', {
      method: 'PUT',
      body: paddedJson(2 * MB),
      headers: { 'content-type': 'application/json', connection_name: conn.google_calendar!, identifier: ID },
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ status: 413, code: 'payload_too_large' });
    expect(requests() - before).toBe(1);
  });

  it('keeps serving on the same connections afterwards', async () => {
    const small = await t.api('/proxy/v1/pages', {
      method: 'POST',
      body: JSON.stringify({ parent: { page_id: 'nope' }, properties: {} }),
      headers: { 'content-type': 'application/json', connection_name: conn.notion!, identifier: ID },
    });
    expect(small.status).toBeLessThan(500);
    const me = await t.api('/proxy/v1/users/me', {
      headers: { connection_name: conn.notion!, identifier: ID },
    });
    expect(me.status).toBe(200);
  });
});
