import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * Tool calls are served before Fastify when they can be (http/tool-calls/fast-path.ts). A client
 * limited to some connections always takes the route, so the two paths answer side by side here:
 * whatever the body, a caller must not be able to tell which one answered.
 */
describe.each(BACKENDS)('tool calls before and through the route ($name)', (backend) => {
  let t: TestGateway;
  let fast: string;
  let routed: string;

  beforeAll(async () => {
    t = await startTestGateway(backend, { PORTICO_BODY_TIMEOUT_MS: '1000' });
    await sandboxAccount(t, { provider: 'notion', identifier: 'fast-user', connection: 'notion' });
    fast = await t.token();
    const created = await t.api('/api/v1/clients', {
      method: 'POST',
      json: { name: 'limited', connection_names: ['notion'] },
    });
    expect(created.status).toBe(201);
    const client = (await created.json()) as { client_id: string; client_secret: string };
    const issued = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', ...client }),
    });
    routed = ((await issued.json()) as { access_token: string }).access_token;
    // Each token is known to the gateway from here on (the fast path serves known tokens only).
    for (const token of [fast, routed])
      expect((await t.api('/api/v1/tools?page_size=1', { token })).status).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
  });

  const call = (token: string, body: string, contentType = 'application/json') =>
    fetch(`${t.url}/api/v1/tools/execute`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
      body,
    });

  /** What a caller sees of an answer, minus what differs between any two answers. */
  const seen = async (res: Response) => {
    const body = (await res.json()) as Record<string, unknown>;
    delete body.execution_id;
    delete body.request_id;
    const extensions = body as { execution_id?: unknown };
    delete extensions.execution_id;
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      requestId: /^req_/.test(res.headers.get('x-request-id') ?? ''),
      body,
    };
  };

  it('answers a call the same on both paths, and records it', async () => {
    const body = JSON.stringify({ tool_name: 'notes_user_list', identifier: 'fast-user', tool_input: {} });
    const [a, b] = [await call(fast, body), await call(routed, body)];
    const [x, y] = [await seen(a.clone()), await seen(b.clone())];
    expect(x.status).toBe(200);
    expect(x.type).toBe('application/json; charset=utf-8');
    expect(x).toEqual(y);
    const id = ((await a.json()) as { execution_id: string }).execution_id;
    const record = await t.api(`/api/v1/executions/${id}`);
    expect(record.status).toBe(200);
    expect(await record.json()).toMatchObject({ tool_name: 'notes_user_list', status: 'success' });
    // The request line of a call served early is written as the route's would be.
    expect(
      t.logs.some((l) => l.path === '/api/v1/tools/execute' && l.status === 200 && l.method === 'POST'),
    ).toBe(true);
  });

  it.each([
    ['not JSON', '{"tool_name": '],
    ['a JSON array', '[]'],
    ['an unknown field', '{"tool_name":"notes_user_list","identifier":"fast-user","tool":"x"}'],
    ['a missing identifier', '{"tool_name":"notes_user_list"}'],
    ['a prototype key', '{"tool_name":"notes_user_list","identifier":"u","__proto__":{"x":1}}'],
    ['a NUL in a field', '{"tool_name":"notes_user_list","identifier":"a\\u0000b"}'],
    ['an unknown tool', '{"tool_name":"notes_no_such_tool","identifier":"fast-user"}'],
    ['an invalid tool input', '{"tool_name":"notes_page_get","identifier":"fast-user","tool_input":{}}'],
  ])('refuses %s with the same problem on both paths', async (_what, body) => {
    const [x, y] = [await seen(await call(fast, body)), await seen(await call(routed, body))];
    expect(x.status).toBeGreaterThanOrEqual(400);
    expect(x.status).toBeLessThan(500);
    expect(x.type).toBe('application/problem+json; charset=utf-8');
    expect(x.requestId).toBe(true);
    expect(x).toEqual(y);
  });

  it('takes a body sent in parts, and answers 408 to one that stops halfway', async () => {
    const body = JSON.stringify({ tool_name: 'notes_user_list', identifier: 'fast-user' });
    const { port } = new URL(t.url);
    const exchange = (parts: string[], waitMs: number) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1');
        let answer = '';
        socket.on('data', (d) => {
          answer += d;
        });
        socket.on('close', () => resolve(answer));
        socket.on('error', reject);
        socket.write(
          `POST /api/v1/tools/execute HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${fast}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
        );
        let i = 0;
        const next = () => {
          if (i < parts.length) socket.write(parts[i++]!);
          if (i < parts.length) setTimeout(next, waitMs);
        };
        setTimeout(next, waitMs);
      });
    const whole = await exchange([body.slice(0, 10), body.slice(10)], 50);
    expect(whole).toMatch(/^HTTP\/1\.1 200 /);
    const half = await exchange([body.slice(0, 10)], 50);
    expect(half).toMatch(/^HTTP\/1\.1 408 /);
    expect(half).toContain('request_timeout');
  });
});
