import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { submitConsent } from '../src/index.js';
import { mintToken, useEmulators } from './helpers/emulators.js';

/** HubSpot's wire format checked byte-level with plain HTTP: statuses, error bodies, paging, search. */

const ADA = '71000001';
const GRACE = '71000002';

const emu = useEmulators({ modules: ['hubspot'] });
let base: string;

beforeAll(() => {
  base = emu.urls.hubspot;
});

function tokenFor(userId: string, scopes?: string[]): string {
  return mintToken(emu, 'hubspot', userId, scopes);
}

async function call(
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; rawBody?: string } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let payload: string | undefined;
  if (opts.rawBody !== undefined || opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = opts.rawBody ?? JSON.stringify(opts.body);
  }
  const res = await fetch(`${base}${path}`, { method, headers, body: payload });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** HubSpot nests a JSON array of per-property problems inside the message text. */
function propertyProblems(message: unknown): Array<{ name: string; error: string; message: string }> {
  const text = String(message);
  const prefix = 'Property values were not valid: ';
  expect(text.startsWith(prefix)).toBe(true);
  return JSON.parse(text.slice(prefix.length));
}

describe('HubSpot CRM over HTTP', () => {
  it('creates with 201 and returns the full record shape; object type ids work as names', async () => {
    const token = tokenFor(ADA);
    const res = await call('POST', '/crm/v3/objects/0-1', {
      token,
      body: { properties: { email: 'hedy@example.com', firstname: 'Hedy', hs_lead_status: 'NEW' } },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^\d+$/),
      archived: false,
      properties: {
        email: 'hedy@example.com',
        firstname: 'Hedy',
        hs_lead_status: 'NEW',
        createdate: expect.any(String),
        lastmodifieddate: expect.any(String),
      },
    });
    expect(res.body.createdAt).toBe((res.body.properties as Record<string, string>).createdate);
    const fetched = await call('GET', `/crm/v3/objects/contacts/${res.body.id}`, { token });
    expect(fetched.status).toBe(200);
    expect(fetched.body.properties).toEqual({
      createdate: res.body.createdAt,
      email: 'hedy@example.com',
      firstname: 'Hedy',
      hs_object_id: res.body.id,
      lastmodifieddate: res.body.updatedAt,
      lastname: null,
    });
  });

  it('answers a duplicate contact email with 409 CONFLICT naming the existing id', async () => {
    const token = tokenFor(ADA);
    const first = await call('POST', '/crm/v3/objects/contacts', {
      token,
      body: { properties: { email: 'dup@example.com' } },
    });
    const second = await call('POST', '/crm/v3/objects/contacts', {
      token,
      body: { properties: { email: 'DUP@example.com' } },
    });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({
      status: 'error',
      message: `Contact already exists. Existing ID: ${first.body.id}`,
      category: 'CONFLICT',
      correlationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    const other = await call('POST', '/crm/v3/objects/contacts', {
      token,
      body: { properties: { email: 'other@example.com' } },
    });
    const clash = await call('PATCH', `/crm/v3/objects/contacts/${other.body.id}`, {
      token,
      body: { properties: { email: 'dup@example.com' } },
    });
    expect(clash.status).toBe(409);
    // Another portal has its own contacts: the same email is free there.
    const elsewhere = await call('POST', '/crm/v3/objects/contacts', {
      token: tokenFor(GRACE),
      body: { properties: { email: 'dup@example.com' } },
    });
    expect(elsewhere.status).toBe(201);
  });

  it('refuses unknown properties and invalid enumeration values with 400 VALIDATION_ERROR', async () => {
    const token = tokenFor(ADA);
    const res = await call('POST', '/crm/v3/objects/contacts', {
      token,
      body: { properties: { email: 'v@example.com', favourite_engine: 'analytical', hs_lead_status: 'HOT' } },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'error', category: 'VALIDATION_ERROR' });
    const problems = propertyProblems(res.body.message);
    expect(problems.map((p) => [p.name, p.error])).toEqual([
      ['favourite_engine', 'PROPERTY_DOESNT_EXIST'],
      ['hs_lead_status', 'INVALID_OPTION'],
    ]);
    expect(problems[0]!.message).toBe('Property "favourite_engine" does not exist');
    expect(problems[1]!.message).toContain('HOT was not one of the allowed options: [NEW, OPEN, IN_PROGRESS');
    expect(res.body.errors).toEqual([
      expect.objectContaining({
        code: 'PROPERTY_DOESNT_EXIST',
        context: { propertyName: ['favourite_engine'] },
      }),
      expect.objectContaining({ code: 'INVALID_OPTION', context: { propertyName: ['hs_lead_status'] } }),
    ]);
    // Nothing was created.
    const search = await call('POST', '/crm/v3/objects/contacts/search', {
      token,
      body: {
        filterGroups: [{ filters: [{ propertyName: 'email', operator: 'EQ', value: 'v@example.com' }] }],
      },
    });
    expect(search.body.total).toBe(0);
  });

  it('validates deal values: priority internal values, close dates in three spellings, the custom boolean', async () => {
    const token = tokenFor(ADA);
    const bad = await call('POST', '/crm/v3/objects/deals', {
      token,
      body: {
        properties: {
          dealname: 'X',
          hs_priority: 'HIGH',
          closedate: 'next week',
          good_deal: 'maybe',
          amount: 'lots',
        },
      },
    });
    expect(bad.status).toBe(400);
    expect(propertyProblems(bad.body.message).map((p) => p.name)).toEqual([
      'hs_priority',
      'closedate',
      'good_deal',
      'amount',
    ]);

    const epoch = Date.UTC(2025, 10, 30, 15, 0, 0);
    for (const [closedate, expected] of [
      [String(epoch), '2025-11-30T15:00:00.000Z'],
      ['2025-11-30', '2025-11-30T00:00:00.000Z'],
      ['2025-11-30T15:00:00Z', '2025-11-30T15:00:00.000Z'],
    ] as const) {
      const ok = await call('POST', '/crm/v3/objects/deals', {
        token,
        body: {
          properties: { dealname: 'Close date check', closedate, hs_priority: 'medium', good_deal: 'TRUE' },
        },
      });
      expect(ok.status).toBe(201);
      expect(ok.body.properties).toMatchObject({
        closedate: expected,
        hs_priority: 'medium',
        good_deal: 'true',
      });
    }
    const readOnly = await call('PATCH', '/crm/v3/objects/deals/100024', {
      token,
      body: { properties: { hs_object_id: '1' } },
    });
    expect(readOnly.status).toBe(400);
    expect(propertyProblems(readOnly.body.message)[0]!.error).toBe('READ_ONLY_VALUE');
  });

  it('answers unknown and foreign ids with 404 OBJECT_NOT_FOUND', async () => {
    const ada = tokenFor(ADA);
    const missing = await call('GET', '/crm/v3/objects/contacts/999999', { token: ada });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({
      status: 'error',
      message: 'Object not found.  objectId are usually numeric.',
      category: 'OBJECT_NOT_FOUND',
      context: { id: ['999999'] },
    });
    // 100009 is one of Ada's contacts; Grace's portal does not have it.
    expect((await call('GET', '/crm/v3/objects/contacts/100009', { token: ada })).status).toBe(200);
    expect((await call('GET', '/crm/v3/objects/contacts/100009', { token: tokenFor(GRACE) })).status).toBe(
      404,
    );
    expect(
      (await call('PATCH', '/crm/v3/objects/deals/999999', { token: ada, body: { properties: {} } })).status,
    ).toBe(404);
    expect((await call('DELETE', '/crm/v3/objects/deals/999999', { token: ada })).status).toBe(404);
  });

  it('archives with 204 and hides the record unless archived=true is asked for', async () => {
    const token = tokenFor(ADA);
    const del = await fetch(`${base}/crm/v3/objects/companies/100001`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(del.status).toBe(204);
    expect(await del.text()).toBe('');
    expect((await call('GET', '/crm/v3/objects/companies/100001', { token })).status).toBe(404);
    const archived = await call('GET', '/crm/v3/objects/companies/100001?archived=true', { token });
    expect(archived.body).toMatchObject({ archived: true, archivedAt: expect.any(String) });
    const list = await call('GET', '/crm/v3/objects/companies?limit=100', { token });
    expect((list.body.results as unknown[]).length).toBe(7);
  });

  it('refuses missing, unknown and expired tokens with 401 in HubSpot words', async () => {
    const none = await call('GET', '/crm/v3/objects/contacts');
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({
      status: 'error',
      category: 'INVALID_AUTHENTICATION',
      message: expect.stringMatching(/^Authentication credentials not found\./),
      correlationId: expect.any(String),
    });
    const unknown = await call('GET', '/crm/v3/objects/contacts', { token: 'CJnot-a-real-token' });
    expect(unknown.status).toBe(401);
    expect(unknown.body.category).toBe('INVALID_AUTHENTICATION');

    const token = tokenFor(ADA);
    emu.control.expireAccessTokens('hubspot', { userId: ADA });
    const expired = await call('GET', '/crm/v3/objects/contacts', { token });
    expect(expired.status).toBe(401);
    expect(expired.body).toMatchObject({
      category: 'EXPIRED_AUTHENTICATION',
      message: expect.stringMatching(/^The OAuth token used to make this call expired/),
    });
  });

  it('refuses a call outside the granted scopes with 403 MISSING_SCOPES', async () => {
    const token = tokenFor(ADA, ['oauth', 'crm.objects.contacts.read']);
    expect((await call('GET', '/crm/v3/objects/contacts', { token })).status).toBe(200);
    const deals = await call('GET', '/crm/v3/objects/deals', { token });
    expect(deals.status).toBe(403);
    expect(deals.body).toMatchObject({ category: 'MISSING_SCOPES' });
    expect(JSON.stringify(deals.body.errors)).toContain('crm.objects.deals.read');
    const write = await call('POST', '/crm/v3/objects/contacts', { token, body: { properties: {} } });
    expect(write.status).toBe(403);
  });

  it('pages the list by `after` and its absolute `link`, with requested properties only', async () => {
    const token = tokenFor(ADA);
    const seen: string[] = [];
    let path: string | undefined = '/crm/v3/objects/contacts?limit=4&properties=email,hs_lead_status';
    let pages = 0;
    while (path) {
      const res = await call('GET', path, { token });
      expect(res.status).toBe(200);
      pages += 1;
      const results = res.body.results as Array<{ id: string; properties: Record<string, string | null> }>;
      for (const r of results) {
        seen.push(r.id);
        expect(Object.keys(r.properties).sort()).toEqual([
          'createdate',
          'email',
          'hs_lead_status',
          'hs_object_id',
          'lastmodifieddate',
        ]);
      }
      const next = (res.body.paging as { next?: { after: string; link: string } } | undefined)?.next;
      if (next) {
        expect(next.link.startsWith(`${base}/crm/v3/objects/contacts?`)).toBe(true);
        expect(new URL(next.link).searchParams.get('after')).toBe(next.after);
        path = next.link.slice(base.length);
      } else {
        path = undefined;
      }
    }
    expect(pages).toBe(4);
    expect(seen).toHaveLength(15);
    expect(new Set(seen).size).toBe(15);
    expect(seen).toEqual([...seen].sort((a, b) => Number(a) - Number(b)));
  });

  it('searches with every operator family, free text, sorts and limits', async () => {
    const token = tokenFor(ADA);
    const search = async (body: unknown) => call('POST', '/crm/v3/objects/contacts/search', { token, body });
    const names = (res: { body: Record<string, unknown> }) =>
      (res.body.results as Array<{ properties: Record<string, string> }>).map((r) => r.properties.lastname);

    const domain = await search({
      filterGroups: [
        { filters: [{ propertyName: 'email', operator: 'CONTAINS_TOKEN', value: '*@ras.example' }] },
      ],
      properties: ['lastname'],
      sorts: [{ propertyName: 'lastname', direction: 'ASCENDING' }],
    });
    expect(names(domain)).toEqual(['Brewster', 'Faraday', 'Herschel', 'Herschel']);

    const text = await search({ query: 'herschel' });
    expect(text.body.total).toBe(2);

    const notIn = await search({
      filterGroups: [
        {
          filters: [
            { propertyName: 'hs_lead_status', operator: 'NOT_IN', values: ['NEW', 'OPEN', 'CONNECTED'] },
            { propertyName: 'lifecyclestage', operator: 'NEQ', value: 'other' },
          ],
        },
      ],
      limit: 100,
    });
    expect(notIn.body.total).toBe(7);

    const hasPhone = await search({
      filterGroups: [{ filters: [{ propertyName: 'mobilephone', operator: 'HAS_PROPERTY' }] }],
    });
    expect(hasPhone.body.total).toBe(0);
    const noPhone = await search({
      filterGroups: [{ filters: [{ propertyName: 'mobilephone', operator: 'NOT_HAS_PROPERTY' }] }],
      limit: 0,
    });
    expect(noPhone.body).toMatchObject({ total: 15, results: [] });

    const deals = await call('POST', '/crm/v3/objects/deals/search', {
      token,
      body: {
        filterGroups: [
          {
            filters: [
              {
                propertyName: 'closedate',
                operator: 'BETWEEN',
                value: '2025-06-01',
                highValue: String(Date.UTC(2025, 6, 31)),
              },
            ],
          },
        ],
        sorts: ['closedate'],
        properties: ['dealname', 'closedate'],
      },
    });
    expect(
      (deals.body.results as Array<{ properties: Record<string, string> }>).map((d) => d.properties.dealname),
    ).toEqual(['Astronomical tables engine', 'Engine maintenance contract']);

    const tooMany = await search({ limit: 201 });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.category).toBe('VALIDATION_ERROR');
    const badOperator = await search({
      filterGroups: [{ filters: [{ propertyName: 'email', operator: 'LIKE', value: 'x' }] }],
    });
    expect(badOperator.status).toBe(400);
  });

  it('answers malformed JSON and unknown routes in HubSpot shape', async () => {
    const token = tokenFor(ADA);
    const malformed = await call('POST', '/crm/v3/objects/contacts', { token, rawBody: '{"properties":' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ status: 'error', category: 'VALIDATION_ERROR' });
    const unknown = await call('GET', '/crm/v3/nothing-here', { token });
    expect(unknown.status).toBe(404);
    expect(unknown.body.status).toBe('error');
  });
});

describe('HubSpot OAuth over HTTP', () => {
  const clientId = 'hubspot-http-client';
  const clientSecret = 'hubspot-http-secret';
  const redirectUri = 'http://127.0.0.1:9/cb';

  async function install(userId: string): Promise<Record<string, unknown>> {
    emu.control.registerClient('hubspot', { clientId, clientSecret, redirectUris: [redirectUri] });
    const authorize = new URL(`${base}/oauth/authorize`);
    authorize.search = new URLSearchParams({
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: 'oauth crm.objects.contacts.read',
      state: 's1',
    }).toString();
    const location = new URL(await submitConsent(authorize.toString(), { userId, decision: 'allow' }));
    return token({
      grant_type: 'authorization_code',
      code: location.searchParams.get('code') ?? '',
      redirect_uri: redirectUri,
    });
  }

  async function token(
    fields: Record<string, string>,
  ): Promise<Record<string, unknown> & { httpStatus: number }> {
    const res = await fetch(`${base}/oauth/v1/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: clientId, client_secret: clientSecret, ...fields }).toString(),
    });
    return { httpStatus: res.status, ...((await res.json()) as Record<string, unknown>) };
  }

  it('issues HubSpot-shaped tokens and refuses a revoked refresh token with BAD_REFRESH_TOKEN', async () => {
    const issued = await install(ADA);
    expect(issued).toMatchObject({
      httpStatus: 200,
      token_type: 'bearer',
      expires_in: 1800,
      hub_id: 24000001,
    });
    const refreshToken = String(issued.refresh_token);

    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: refreshToken });
    expect(refreshed).toMatchObject({ httpStatus: 200, refresh_token: refreshToken });

    const revoke = await fetch(`${base}/oauth/v1/refresh-tokens/${refreshToken}`, { method: 'DELETE' });
    expect(revoke.status).toBe(204);
    const after = await token({ grant_type: 'refresh_token', refresh_token: refreshToken });
    expect(after).toMatchObject({
      httpStatus: 400,
      status: 'BAD_REFRESH_TOKEN',
      message: expect.any(String),
      correlationId: expect.any(String),
    });
    const info = await fetch(`${base}/oauth/v1/refresh-tokens/${refreshToken}`);
    expect(info.status).toBe(404);
  });

  it('refuses a grant revoked through the control API, a wrong secret, and an unknown grant type', async () => {
    const issued = await install(GRACE);
    emu.control.revokeGrants('hubspot', { userId: GRACE });
    const refused = await token({ grant_type: 'refresh_token', refresh_token: String(issued.refresh_token) });
    expect(refused).toMatchObject({ httpStatus: 400, status: 'BAD_REFRESH_TOKEN' });

    const wrongSecret = await fetch(`${base}/oauth/v1/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: 'x',
        client_id: clientId,
        client_secret: 'nope',
      }),
    });
    expect(wrongSecret.status).toBe(400);
    expect(await wrongSecret.json()).toMatchObject({
      status: 'BAD_CLIENT_SECRET',
      message: 'missing or invalid client secret',
    });
    const unknownClient = await fetch(`${base}/oauth/v1/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: 'x',
        client_id: 'no-such-client',
        client_secret: clientSecret,
      }),
    });
    expect(await unknownClient.json()).toMatchObject({
      status: 'BAD_CLIENT_ID',
      message: 'missing or unknown client id',
    });
    const noSecret = await fetch(`${base}/oauth/v1/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'x', client_id: clientId }),
    });
    expect(await noSecret.json()).toMatchObject({ status: 'BAD_CLIENT_SECRET' });

    const badGrant = await token({ grant_type: 'password' });
    expect(badGrant).toMatchObject({ httpStatus: 400, status: 'BAD_GRANT_TYPE' });
  });

  it('maps code-exchange failures onto HubSpot statuses: redirect mismatch, PKCE verifier, client id', async () => {
    emu.control.registerClient('hubspot', { clientId, clientSecret, redirectUris: [redirectUri] });
    const verifier = 'a'.repeat(43);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const authorize = new URL(`${base}/oauth/authorize`);
    authorize.search = new URLSearchParams({
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: 'oauth',
      state: 's2',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString();
    const code = async () =>
      new URL(await submitConsent(authorize.toString(), { userId: ADA, decision: 'allow' })).searchParams.get(
        'code',
      )!;

    const wrongRedirect = await token({
      grant_type: 'authorization_code',
      code: await code(),
      redirect_uri: 'http://127.0.0.1:9/other',
    });
    expect(wrongRedirect).toMatchObject({ httpStatus: 400, status: 'BAD_REDIRECT_URI' });
    const noVerifier = await token({
      grant_type: 'authorization_code',
      code: await code(),
      redirect_uri: redirectUri,
    });
    expect(noVerifier).toMatchObject({ httpStatus: 400, status: 'BAD_CODE_VERIFIER' });
    const withVerifier = await token({
      grant_type: 'authorization_code',
      code: await code(),
      redirect_uri: redirectUri,
      code_verifier: verifier,
    });
    expect(withVerifier).toMatchObject({ httpStatus: 200, token_type: 'bearer' });

    const noClient = await fetch(`${base}/oauth/v1/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'x' }),
    });
    expect(await noClient.json()).toMatchObject({ status: 'BAD_CLIENT_ID' });
    const unknownCode = await token({
      grant_type: 'authorization_code',
      code: 'na1-nope',
      redirect_uri: redirectUri,
    });
    expect(unknownCode).toMatchObject({
      httpStatus: 400,
      status: 'BAD_AUTH_CODE',
      message: 'missing or unknown auth code',
    });
  });

  it('authorizes without response_type, as HubSpot does, but refuses another response type', async () => {
    emu.control.registerClient('hubspot', { clientId, clientSecret, redirectUris: [redirectUri] });
    const authorize = (extra: Record<string, string>) =>
      `${base}/oauth/authorize?${new URLSearchParams({
        client_id: clientId,
        redirect_uri: redirectUri,
        scope: 'oauth',
        state: 's3',
        ...extra,
      })}`;
    const page = await fetch(authorize({}));
    expect(page.status).toBe(200);
    const location = new URL(await submitConsent(authorize({}), { userId: ADA, decision: 'allow' }));
    expect(location.searchParams.get('code')).toMatch(/^na1-/);
    const implicit = new URL(
      await submitConsent(authorize({ response_type: 'token' }), { userId: ADA, decision: 'allow' }),
    );
    expect(implicit.searchParams.get('error')).toBe('unsupported_response_type');
  });

  it('a replayed install code revokes the tokens issued from it', async () => {
    emu.control.registerClient('hubspot', { clientId, clientSecret, redirectUris: [redirectUri] });
    const authorize = `${base}/oauth/authorize?${new URLSearchParams({
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: 'oauth crm.objects.contacts.read',
      state: 's4',
    })}`;
    const code = new URL(await submitConsent(authorize, { userId: ADA, decision: 'allow' })).searchParams.get(
      'code',
    )!;
    const exchange = { grant_type: 'authorization_code', code, redirect_uri: redirectUri };
    const issued = await token(exchange);
    expect(issued.httpStatus).toBe(200);
    expect(await token(exchange)).toMatchObject({ httpStatus: 400, status: 'BAD_AUTH_CODE' });
    const crm = await call('GET', '/crm/v3/objects/contacts', { token: String(issued.access_token) });
    expect(crm.status).toBe(401);
    const refresh = await token({ grant_type: 'refresh_token', refresh_token: String(issued.refresh_token) });
    expect(refresh).toMatchObject({ httpStatus: 400, status: 'BAD_REFRESH_TOKEN' });
    expect((await fetch(`${base}/oauth/v1/refresh-tokens/${issued.refresh_token}`)).status).toBe(404);
  });

  it('describes tokens minted by the control API and words their expiry too', async () => {
    const minted = emu.control.issueToken('hubspot', { userId: GRACE, clientId });
    const access = await fetch(`${base}/oauth/v1/access-tokens/${minted.access_token}`);
    expect(await access.json()).toMatchObject({ user: 'grace.hopper@example.com', token_type: 'access' });
    const refresh = await fetch(`${base}/oauth/v1/refresh-tokens/${minted.refresh_token}`);
    expect(await refresh.json()).toMatchObject({ client_id: clientId, token_type: 'refresh' });
    emu.control.expireAccessTokens('hubspot', { userId: GRACE });
    const expired = await call('GET', '/crm/v3/objects/contacts', { token: minted.access_token });
    expect(expired.body).toMatchObject({
      category: 'EXPIRED_AUTHENTICATION',
      message: expect.stringMatching(/expired \d+ second\(s\) ago\.$/),
    });
    expect((await fetch(`${base}/oauth/v1/access-tokens/${minted.access_token}`)).status).toBe(404);
  });

  it('describes a live access token and reports the expiry of a dead one on CRM calls', async () => {
    const issued = await install(ADA);
    const info = await fetch(`${base}/oauth/v1/access-tokens/${issued.access_token}`);
    expect(info.status).toBe(200);
    expect(await info.json()).toMatchObject({
      user: 'ada.lovelace@example.com',
      hub_domain: 'analytical-engines.example.com',
      hub_id: 24000001,
      user_id: Number(ADA),
      scopes: ['oauth', 'crm.objects.contacts.read'],
      token_type: 'access',
    });
    emu.control.expireAccessTokens('hubspot', { clientId });
    const expired = await call('GET', '/crm/v3/objects/contacts', { token: String(issued.access_token) });
    expect(expired.body).toMatchObject({
      category: 'EXPIRED_AUTHENTICATION',
      message: expect.stringMatching(/expired \d+ second\(s\) ago\.$/),
      context: { 'expire time': [expect.any(String)] },
    });
  });
});
