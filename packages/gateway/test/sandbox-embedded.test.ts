import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

// The embedded emulators start at the first request that needs them, which waits for them and is
// then served as any other.
describe('embedded sandbox emulators', () => {
  const backend = BACKENDS[0]!;
  let t: TestGateway;
  let controlAtListen: unknown;

  beforeAll(async () => {
    t = await startTestGateway(backend, {}, { awaitSandbox: false });
    controlAtListen = t.gateway.sandbox.control;
  });

  afterAll(async () => {
    await t?.close();
  });

  it('the gateway answers without its emulators, and the first sandbox request starts them', async () => {
    expect(controlAtListen).toBeUndefined();
    const res = await fetch(`${t.url}/sandbox/notion/v1/users/me`, {
      headers: { 'x-request-id': 'sandbox-first-call' },
    });
    // Notion's own wire format, from the emulator.
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ object: 'error', status: 401, code: 'unauthorized' });
    expect(res.headers.get('x-request-id')).toBe('sandbox-first-call');
    expect(t.gateway.sandbox.control).toBeDefined();
  });

  it('logs and counts each sandbox request once, as the gateway does its own', async () => {
    const counted = async () => {
      const { body } = await t.gateway.metrics.text();
      const line = /portico_http_requests_total\{family="other",status_class="4xx"\} (\d+)/.exec(body);
      return Number(line?.[1]);
    };
    const before = await counted();
    expect(before).toBeGreaterThanOrEqual(0);
    await fetch(`${t.url}/sandbox/notion/v1/users/me`, { headers: { 'x-request-id': 'sandbox-logged' } });
    await expect
      .poll(() => t.logs.filter((l) => l.request_id === 'sandbox-logged' && l.msg === 'request completed'))
      .toEqual([expect.objectContaining({ method: 'GET', status: 401 })]);
    expect(await counted()).toBe(before + 1);
  });

  it('passes request bodies through to the emulators unread', async () => {
    t.gateway.sandbox.control!.registerClient('notion', {
      clientId: 'body-check',
      clientSecret: 'body-check-secret',
      redirectUris: ['http://127.0.0.1/cb'],
    });
    const res = await fetch(`${t.url}/sandbox/notion/v1/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from('body-check:body-check-secret').toString('base64')}`,
      },
      body: JSON.stringify({
        grant_type: 'authorization_code',
        code: 'no-such-code',
        redirect_uri: 'http://127.0.0.1/cb',
      }),
    });
    // The emulator read the body: it judged the code it names, which it never issued.
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('answers a path no emulator serves as the gateway would, in problem+json', async () => {
    for (const path of ['/sandbox/nowhere', '/sandbox']) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(await res.json()).toMatchObject({ code: 'not_found', request_id: expect.any(String) });
    }
  });
});
