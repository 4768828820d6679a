import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { ScalekitClient, ScalekitToolException } from '@scalekit-sdk/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { authorize, createSandboxConnection } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { selfSigned } from './helpers/tls.js';

/** The protocol the gateway picks for a client offering `protocols`, verified against our certificate. */
function negotiate(url: string, ca: string, protocols: string[]): Promise<string | false> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port: Number(port), ca, ALPNProtocols: protocols }, () => {
      resolve(socket.alpnProtocol ?? false);
      socket.end();
    });
    socket.on('error', reject);
  });
}

describe.each(BACKENDS)('the official Scalekit Node SDK over TLS ($name)', (backend) => {
  let t: TestGateway;
  let dir: string;
  let cert: string;
  const trust = process.env.NODE_TLS_REJECT_UNAUTHORIZED;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'portico-tls-'));
    const { certPath, keyPath } = selfSigned(dir);
    cert = readFileSync(certPath, 'utf8');
    t = await startTestGateway(backend, {
      PORTICO_PUBLIC_URL: 'https://127.0.0.1:{port}',
      // A path for one, the PEM text for the other: both forms are accepted.
      PORTICO_TLS_CERT: certPath,
      PORTICO_TLS_KEY: readFileSync(keyPath, 'utf8'),
      PORTICO_SHUTDOWN_GRACE_MS: '1000',
    });
    // The SDK has no option for a private CA: this process trusts any certificate while it runs
    // (the certificate served is checked against ours below).
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
    await createSandboxConnection(t, 'notion-sandbox', 'notion');
  }, 60_000);
  afterAll(async () => {
    if (trust === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    else process.env.NODE_TLS_REJECT_UNAUTHORIZED = trust;
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves our certificate, HTTP/2 to gRPC clients and HTTP/1.1 to clients offering both', async () => {
    expect(t.url).toMatch(/^https:\/\//);
    expect(await negotiate(t.url, cert, ['h2'])).toBe('h2');
    expect(await negotiate(t.url, cert, ['h2', 'http/1.1'])).toBe('http/1.1');
    expect(await negotiate(t.url, cert, [])).toBe(false);
  });

  it('runs the SDK over TLS: gRPC on HTTP/2, the token and the proxy on HTTP/1.1', async () => {
    const sk = new ScalekitClient(t.url, t.clientId, t.clientSecret);
    const created = await sk.actions.getOrCreateConnectedAccount({
      connectionName: 'notion-sandbox',
      identifier: 'tls_user',
    });
    expect(created.connectedAccount).toMatchObject({ identifier: 'tls_user', status: 3 });
    const { link } = await sk.actions.getAuthorizationLink({
      connectionName: 'notion-sandbox',
      identifier: 'tls_user',
    });
    expect(link).toMatch(new RegExp(`^${t.url}/connect/`));
    expect((await sk.tools.listTools()).tools.length).toBe(t.gateway.engine.list().length);
    // Not authorized yet: the tool error and the proxy's problem arrive as such, over TLS.
    const tool = await sk.actions
      .executeTool({ toolName: 'notes_user_list', identifier: 'tls_user', toolInput: {} })
      .catch((e: unknown) => e);
    expect(tool).toBeInstanceOf(ScalekitToolException);
    expect(tool).toMatchObject({ toolErrorCode: 'account_not_active' });
    const proxied = await sk.actions
      .request({ connectionName: 'notion-sandbox', identifier: 'tls_user', path: '/v1/users/me' })
      .catch((e: unknown) => e);
    expect((proxied as { errDetails: { code: string } }).errDetails.code).toBe('account_not_active');

    // The consent completes over TLS (the code exchange reaches the built-in sandbox), and the
    // account then works through gRPC and the proxy.
    const consent = await authorize(t, { connection: 'notion-sandbox', identifier: 'tls_user' });
    expect(consent.callbackUrl).toMatch(new RegExp(`^${t.url}/sso/v1/oauth/`));
    expect(consent.response.status).toBe(200);
    expect(await consent.response.text()).toContain('data-outcome="success"');
    const active = await sk.actions.getConnectedAccount({
      connectionName: 'notion-sandbox',
      identifier: 'tls_user',
    });
    expect(active.connectedAccount).toMatchObject({ identifier: 'tls_user', status: 1 });
    const users = await sk.actions.executeTool({
      toolName: 'notes_user_list',
      identifier: 'tls_user',
      toolInput: {},
    });
    expect(users.executionId).toMatch(/^exec_/);
    expect(users.data).toBeDefined();
    const me = await sk.actions.request({
      connectionName: 'notion-sandbox',
      identifier: 'tls_user',
      path: '/v1/users/me',
    });
    expect(me.status).toBe(200);
    expect((me.data as { object: string }).object).toBe('user');
  });

  it('serves the built-in sandbox to the gateway on a loopback listener, never cleartext on the TLS port', async () => {
    const location = t.gateway.sandbox.location()!;
    expect(location.publicBase).toBe(`${t.url}/sandbox`);
    const internal = new URL(location.internalBase);
    expect(internal.protocol).toBe('http:');
    expect(internal.hostname).toBe('127.0.0.1');
    expect(internal.port).not.toBe(new URL(t.url).port);
    // Only the emulators are there: the API and the hosted pages are reached over TLS.
    expect((await fetch(`${internal.origin}/healthz`)).status).toBe(404);
    expect((await fetch(`${internal.origin}/api/v1/connections`)).status).toBe(404);
  });

  it('answers cleartext on the TLS port with a problem saying to use https', async () => {
    const res = await fetch(t.url.replace('https:', 'http:') + '/healthz');
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    const body = (await res.json()) as { code: string; detail: string };
    expect(body.code).toBe('tls_required');
    expect(body.detail).toContain('https://');
  });
});
