import { submitConsent } from '@portico/emulators';
import { ScalekitClient } from '@scalekit-sdk/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Portico, VerificationFailedError } from '../../sdk/src/index.js';
import { BACKENDS } from './helpers/backends.js';
import { accountOf, browserCookie, createSandboxConnection, openLink } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

const GLOBAL = 'https://global.example.com';
const VERIFY_URL = `${GLOBAL}/verify`;

interface Consent {
  /** Where the callback sent the browser. */
  location: URL;
  accountId: string;
}

/** Plays the end user through the consent of `link`; returns where the callback sent the browser. */
async function consent(link: string, accountId: string): Promise<Consent> {
  const start = await openLink(link);
  expect(start.status).toBe(303);
  const callbackUrl = await submitConsent(start.headers.get('location')!, { decision: 'allow' });
  const done = await fetch(callbackUrl, { redirect: 'manual', headers: { cookie: browserCookie(start) } });
  expect(done.status).toBe(302);
  return { location: new URL(done.headers.get('location')!), accountId };
}

async function linkWithVerification(
  t: TestGateway,
  identifier: string,
  extra: Record<string, string> = {},
): Promise<Consent> {
  const res = await t.api('/api/v1/connected-accounts/authorization-link', {
    method: 'POST',
    json: { connection_name: 'notion-sandbox', identifier, user_verify_url: VERIFY_URL, ...extra },
  });
  expect(res.status).toBe(201);
  const { link, connected_account_id } = (await res.json()) as { link: string; connected_account_id: string };
  return consent(link, connected_account_id);
}

const verify = (t: TestGateway, body: unknown) =>
  t.api('/api/v1/connected-accounts/verify', { method: 'POST', json: body });

const proxyMe = (t: TestGateway, identifier: string) =>
  t.api('/proxy/v1/users/me', { headers: { connection_name: 'notion-sandbox', identifier } });

async function eventsOf(
  t: TestGateway,
  accountId: string,
): Promise<Array<{ type: string; data: Record<string, unknown> }>> {
  const res = await t.api('/api/v1/events?page_size=200');
  const { data } = (await res.json()) as { data: Array<{ type: string; data: Record<string, unknown> }> };
  return data.filter((e) => e.data.id === accountId);
}

describe.each(BACKENDS)('user verification before an account becomes ACTIVE ($name)', (backend) => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway(backend, { PORTICO_REDIRECT_URL_ALLOWLIST: GLOBAL });
    await createSandboxConnection(t, 'notion-sandbox', 'notion');
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('sends the browser to user_verify_url and keeps the account unusable until the application verifies', async () => {
    const { location, accountId } = await linkWithVerification(t, 'alice', {
      redirect_url: `${GLOBAL}/done`,
      state: 'xyz',
    });
    expect(`${location.origin}${location.pathname}`).toBe(VERIFY_URL);
    const authRequestId = location.searchParams.get('auth_request_id')!;
    expect(authRequestId).toMatch(/^areq_/);
    expect(location.searchParams.get('connected_account_id')).toBe(accountId);
    expect(location.searchParams.get('state')).toBe('xyz');

    // Consented but not verified: not ACTIVE, the tokens cannot be used, no authorized event.
    expect((await accountOf(t, accountId)).status).toBe('PENDING_AUTH');
    const early = await proxyMe(t, 'alice');
    expect(early.status).toBe(409);
    expect(((await early.json()) as { code: string }).code).toBe('account_not_active');
    expect((await eventsOf(t, accountId)).map((e) => e.type)).not.toContain('connected_account.authorized');
    // Held sealed, never as plaintext JSON.
    const [held] = await t.db.query<{ pending_tokens: string }>(
      'SELECT pending_tokens FROM authorization_requests WHERE id = $1',
      [authRequestId],
    );
    expect(held!.pending_tokens).toBeTruthy();
    expect(held!.pending_tokens).not.toContain('accessToken');

    const res = await verify(t, { auth_request_id: authRequestId, identifier: 'alice' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      connected_account: { id: string; status: string };
      redirect_url: string;
    };
    expect(body.connected_account).toMatchObject({ id: accountId, status: 'ACTIVE' });
    const next = new URL(body.redirect_url);
    expect(`${next.origin}${next.pathname}`).toBe(`${GLOBAL}/done`);
    expect(Object.fromEntries(next.searchParams)).toEqual({
      status: 'success',
      connected_account_id: accountId,
      state: 'xyz',
    });

    const me = await proxyMe(t, 'alice');
    expect(me.status).toBe(200);
    expect(((await me.json()) as { object: string }).object).toBe('user');
    expect(
      (await eventsOf(t, accountId)).filter((e) => e.type === 'connected_account.authorized'),
    ).toHaveLength(1);

    // A request verifies once.
    const again = await verify(t, { auth_request_id: authRequestId, identifier: 'alice' });
    expect(again.status).toBe(404);
    expect(((await again.json()) as { code: string }).code).toBe('verification_not_found');
  });

  it('refuses another identifier with 403, stores nothing and spends the request', async () => {
    const { location, accountId } = await linkWithVerification(t, 'bob');
    const authRequestId = location.searchParams.get('auth_request_id')!;
    const res = await verify(t, { auth_request_id: authRequestId, identifier: 'mallory' });
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await res.json()) as { code: string; detail: string; errors: Array<{ path: string }> };
    expect(problem.code).toBe('verification_failed');
    expect(problem.detail).toContain('new authorization link');
    expect(problem.errors[0]!.path).toBe('/identifier');

    expect((await accountOf(t, accountId)).status).toBe('PENDING_AUTH');
    expect((await proxyMe(t, 'bob')).status).toBe(409);
    const [row] = await t.db.query<{ pending_tokens: string | null }>(
      'SELECT pending_tokens FROM authorization_requests WHERE id = $1',
      [authRequestId],
    );
    expect(row!.pending_tokens).toBeNull();
    const events = await eventsOf(t, accountId);
    expect(events.map((e) => e.type)).not.toContain('connected_account.authorized');
    expect(
      events.find((e) => e.type === 'connected_account.authorization_failed')?.data.reason,
    ).toMatchObject({
      code: 'verification_failed',
    });
    // Even the right identifier cannot use a spent request.
    const late = await verify(t, { auth_request_id: authRequestId, identifier: 'bob' });
    expect(late.status).toBe(404);
    expect((await accountOf(t, accountId)).status).toBe('PENDING_AUTH');
  });

  it('refuses a verification after its window with 410 and stores nothing', async () => {
    const { location, accountId } = await linkWithVerification(t, 'carol');
    const authRequestId = location.searchParams.get('auth_request_id')!;
    await t.db.query(
      "UPDATE authorization_requests SET expires_at = now() - interval '1 second' WHERE id = $1",
      [authRequestId],
    );
    const res = await verify(t, { auth_request_id: authRequestId, identifier: 'carol' });
    expect(res.status).toBe(410);
    const problem = (await res.json()) as { code: string; detail: string };
    expect(problem.code).toBe('verification_expired');
    expect(problem.detail).toContain('PORTICO_AUTH_REQUEST_TTL');
    expect((await accountOf(t, accountId)).status).toBe('PENDING_AUTH');
    const [row] = await t.db.query<{ pending_tokens: string | null }>(
      'SELECT pending_tokens FROM authorization_requests WHERE id = $1',
      [authRequestId],
    );
    expect(row!.pending_tokens).toBeNull();
  });

  it('answers unknown requests and bad input with 4xx problems', async () => {
    const unknown = await verify(t, { auth_request_id: 'areq_doesnotexist', identifier: 'alice' });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { code: string }).code).toBe('verification_not_found');
    for (const body of [
      {},
      { auth_request_id: 'areq_x' },
      { auth_request_id: 'ca_x', identifier: 'alice' },
      { auth_request_id: 'areq_x', identifier: 'a\u0000b' },
      { auth_request_id: 'areq_x', identifier: 'alice', extra: 1 },
      { auth_request_id: 'areq_x', identifier: 42 },
    ]) {
      const res = await verify(t, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const problem = (await res.json()) as { code: string; detail: string };
      expect(problem.code).toBe('invalid_input');
      expect(problem.detail.length).toBeGreaterThan(10);
    }
    // A link without user_verify_url is not waiting for anyone: the flow is unchanged.
    const plain = await t.api('/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      json: { connection_name: 'notion-sandbox', identifier: 'dave' },
    });
    const { link, connected_account_id } = (await plain.json()) as {
      link: string;
      connected_account_id: string;
    };
    const start = await openLink(link);
    const callbackUrl = await submitConsent(start.headers.get('location')!, { decision: 'allow' });
    const done = await fetch(callbackUrl, { redirect: 'manual', headers: { cookie: browserCookie(start) } });
    expect(done.status).toBe(200);
    expect((await accountOf(t, connected_account_id)).status).toBe('ACTIVE');
  });

  it('serves VerifyConnectedAccountUser to the official Scalekit SDK', async () => {
    const sk = new ScalekitClient(t.url, t.clientId, t.clientSecret);
    const { link } = await sk.actions.getAuthorizationLink({
      connectionName: 'notion-sandbox',
      identifier: 'erin',
      userVerifyUrl: VERIFY_URL,
    });
    const created = await sk.actions.getConnectedAccount({
      connectionName: 'notion-sandbox',
      identifier: 'erin',
    });
    const { location } = await consent(link, created.connectedAccount!.id);
    const authRequestId = location.searchParams.get('auth_request_id')!;

    await expect(
      sk.actions.verifyConnectedAccountUser({ authRequestId: 'areq_unknown', identifier: 'erin' }),
    ).rejects.toMatchObject({ grpcStatus: 5, message: expect.stringContaining('areq_unknown') });
    const pending = await sk.actions.getConnectedAccount({
      connectionName: 'notion-sandbox',
      identifier: 'erin',
    });
    expect(pending.connectedAccount?.status).toBe(3); // PENDING_AUTH

    const verified = await sk.actions.verifyConnectedAccountUser({ authRequestId, identifier: 'erin' });
    expect(verified.postUserVerifyRedirectUrl).toBe('');
    const active = await sk.actions.getConnectedAccount({
      connectionName: 'notion-sandbox',
      identifier: 'erin',
    });
    expect(active.connectedAccount?.status).toBe(1); // ACTIVE

    const { link: second } = await sk.actions.getAuthorizationLink({
      connectionName: 'notion-sandbox',
      identifier: 'frank',
      userVerifyUrl: VERIFY_URL,
    });
    const other = await consent(second, '');
    await expect(
      sk.actions.verifyConnectedAccountUser({
        authRequestId: other.location.searchParams.get('auth_request_id')!,
        identifier: 'erin',
      }),
    ).rejects.toMatchObject({ grpcStatus: 7, message: expect.stringContaining('does not match') });
    const expiredConsent = await sk.actions.getAuthorizationLink({
      connectionName: 'notion-sandbox',
      identifier: 'ivan',
      userVerifyUrl: VERIFY_URL,
    });
    const late = (await consent(expiredConsent.link, '')).location.searchParams.get('auth_request_id')!;
    await t.db.query(
      "UPDATE authorization_requests SET expires_at = now() - interval '1 second' WHERE id = $1",
      [late],
    );
    const tooLate = await sk.actions
      .verifyConnectedAccountUser({ authRequestId: late, identifier: 'ivan' })
      .catch((e: unknown) => e);
    expect(tooLate).toMatchObject({ grpcStatus: 9 }); // FAILED_PRECONDITION
    const refused = await sk.actions.getConnectedAccount({
      connectionName: 'notion-sandbox',
      identifier: 'frank',
    });
    expect(refused.connectedAccount?.status).toBe(3);
  });

  it('verifies through the Portico SDK', async () => {
    const portico = new Portico({ envUrl: t.url, clientId: t.clientId, clientSecret: t.clientSecret });
    const link = await portico.getAuthorizationLink({
      connectionName: 'notion-sandbox',
      identifier: 'grace',
      userVerifyUrl: VERIFY_URL,
      redirectUrl: `${GLOBAL}/after`,
    });
    const { location } = await consent(link.link, link.connectedAccountId);
    const authRequestId = location.searchParams.get('auth_request_id')!;
    const wrong = await portico
      .verifyConnectedAccountUser({ authRequestId: 'areq_nothere', identifier: 'grace' })
      .catch((e: unknown) => e);
    expect((wrong as { code: string }).code).toBe('verification_not_found');
    const result = await portico.connectedAccounts.verify({ authRequestId, identifier: 'grace' });
    expect(result.connectedAccount).toMatchObject({ id: link.connectedAccountId, status: 'ACTIVE' });
    expect(result.redirectUrl).toMatch(new RegExp(`^${GLOBAL}/after\\?status=success`));

    const again = await portico.getAuthorizationLink({
      connectionName: 'notion-sandbox',
      identifier: 'heidi',
      userVerifyUrl: VERIFY_URL,
    });
    const other = await consent(again.link, again.connectedAccountId);
    const refused = await portico
      .verifyConnectedAccountUser({
        authRequestId: other.location.searchParams.get('auth_request_id')!,
        identifier: 'grace',
      })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(VerificationFailedError);
    expect((await portico.connectedAccounts.get(again.connectedAccountId)).status).toBe('PENDING_AUTH');
  });
});

describe.each(BACKENDS)('the per-environment redirect allow-list ($name)', (backend) => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway(backend, { PORTICO_REDIRECT_URL_ALLOWLIST: GLOBAL });
    await createSandboxConnection(t, 'notion-sandbox', 'notion');
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  const link = (json: Record<string, string>) =>
    t.api('/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      json: { connection_name: 'notion-sandbox', identifier: 'u', ...json },
    });
  const patch = (json: unknown) => t.api('/api/v1/environment', { method: 'PATCH', json });

  it('extends the global list with the environment’s own entries, stored and readable', async () => {
    const initial = await t.api('/api/v1/environment');
    expect(initial.status).toBe(200);
    expect(await initial.json()).toMatchObject({
      name: 'default',
      redirect_url_allowlist: [],
      global_redirect_url_allowlist: [GLOBAL],
    });
    expect((await link({ redirect_url: 'https://app.example.com/done' })).status).toBe(400);

    const set = await patch({
      redirect_url_allowlist: ['https://app.example.com/', 'https://other.example.com/oauth/'],
    });
    expect(set.status).toBe(200);
    expect(((await set.json()) as { redirect_url_allowlist: string[] }).redirect_url_allowlist).toEqual([
      'https://app.example.com',
      'https://other.example.com/oauth/',
    ]);
    // Read back from the store: a new gateway on the same store would see it too.
    const [row] = await t.db.query<{ redirect_url_allowlist: string[] }>(
      "SELECT redirect_url_allowlist FROM environments WHERE name = 'default'",
    );
    expect(row!.redirect_url_allowlist).toEqual([
      'https://app.example.com',
      'https://other.example.com/oauth/',
    ]);

    expect((await link({ redirect_url: 'https://app.example.com/done' })).status).toBe(201);
    expect((await link({ redirect_url: 'https://other.example.com/oauth/cb' })).status).toBe(201);
    expect((await link({ redirect_url: `${GLOBAL}/anything` })).status).toBe(201);
    expect((await link({ user_verify_url: 'https://app.example.com/verify' })).status).toBe(201);
    for (const [field, url] of [
      ['redirect_url', 'https://other.example.com/elsewhere'],
      ['redirect_url', 'https://app.example.com.evil.net/'],
      ['user_verify_url', 'https://evil.example.net/verify'],
    ] as const) {
      const res = await link({ [field]: url });
      expect(res.status, url).toBe(400);
      const problem = (await res.json()) as { code: string; detail: string; errors: Array<{ path: string }> };
      expect(problem.code).toBe('invalid_input');
      expect(problem.errors[0]!.path).toBe(`/${field}`);
      expect(problem.detail).toContain('https://app.example.com');
      expect(problem.detail).toContain('PATCH /api/v1/environment');
    }

    const cleared = await patch({ redirect_url_allowlist: [] });
    expect(((await cleared.json()) as { redirect_url_allowlist: string[] }).redirect_url_allowlist).toEqual(
      [],
    );
    expect((await link({ redirect_url: 'https://app.example.com/done' })).status).toBe(400);
  });

  it('refuses entries that are not http(s) places with a problem naming the entry', async () => {
    for (const [body, path] of [
      [{ redirect_url_allowlist: ['ftp://files.example.com'] }, '/redirect_url_allowlist/0'],
      [{ redirect_url_allowlist: ['https://ok.example.com', 'not a url'] }, '/redirect_url_allowlist/1'],
      [{ redirect_url_allowlist: ['https://app.example.com/?x=1'] }, '/redirect_url_allowlist/0'],
      [{ redirect_url_allowlist: ['https://a\u0000.example.com'] }, '/redirect_url_allowlist/0'],
      [{ redirect_url_allowlist: 'https://app.example.com' }, '/redirect_url_allowlist'],
      [
        { redirect_url_allowlist: Array.from({ length: 51 }, (_, i) => `https://h${i}.example.com`) },
        '/redirect_url_allowlist',
      ],
      // Nothing to change: the body must name the allow-list, the branding, or both.
      [{}, '/'],
      [{ redirect_url_allowlist: [], extra: true }, '/extra'],
    ] as const) {
      const res = await patch(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      const problem = (await res.json()) as { code: string; errors?: Array<{ path: string }> };
      expect(problem.code).toBe('invalid_input');
      expect(problem.errors?.[0]?.path, JSON.stringify(body).slice(0, 80)).toBe(path);
    }
    expect(
      ((await (await t.api('/api/v1/environment')).json()) as { redirect_url_allowlist: string[] })
        .redirect_url_allowlist,
    ).toEqual([]);
  });
});
