import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RunningEmulators, startEmulators, submitConsent } from '../src/index.js';
import { authorizeUrl, CLIENT, pkcePair, testModule } from './core-fixtures.js';

describe('OAuth authorize endpoint and consent page', () => {
  let emu: RunningEmulators;
  let base: string;
  beforeAll(async () => {
    emu = await startEmulators({
      modules: [
        testModule({
          validateAuthorizeRequest: (p) => (p.owner && p.owner !== 'user' ? 'owner must be user' : null),
        }),
        testModule({ key: 'hubspot', pkce: 'unsupported' }),
        testModule({
          key: 'google',
          responseTypeOptional: true,
          stateOptional: true,
          validateAuthorizeRequest: (p) =>
            p.scope === 'unknown' ? { error: 'invalid_scope', description: 'Unknown scope: unknown' } : null,
        }),
      ],
    });
    base = emu.urls.notion;
  });
  beforeEach(() => {
    emu.control.reset({ clients: true });
    emu.control.registerClient('notion', CLIENT);
    emu.control.registerClient('hubspot', CLIENT);
    emu.control.registerClient('google', CLIENT);
  });
  afterAll(() => emu.close());

  it('renders a consent form with the client, scopes, users and the request carried along', async () => {
    const res = await fetch(
      authorizeUrl(base, { scope: 'pages.read pages.write', login_hint: 'grace@example.com' }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain('<code id="client-id">client-1</code>');
    expect(html).toContain('<code>pages.read</code>');
    expect(html).toContain('<code>pages.write</code>');
    expect(html).toMatch(/<form method="post" action="\/notion\/oauth\/authorize">/);
    expect(html).toMatch(/name="user_id" value="user-grace" checked/);
    expect(html).not.toMatch(/value="user-ada" checked/);
    expect(html).toContain('<input type="hidden" name="state" value="st-1">');
    expect(html).toContain('name="decision" value="allow"');
    expect(html).toContain('name="decision" value="deny"');
  });

  it('escapes request values in the page', async () => {
    const res = await fetch(authorizeUrl(base, { state: '"><script>x</script>' }));
    const html = await res.text();
    expect(html).not.toContain('<script>x</script>');
    expect(html).toContain('value="&quot;&gt;&lt;script&gt;x&lt;/script&gt;"');
  });

  it('shows an error page and never redirects for an unknown client', async () => {
    const res = await fetch(authorizeUrl(base, { client_id: 'nobody' }), { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('invalid_client');
  });

  it('shows an error page and never redirects for an unregistered redirect_uri', async () => {
    for (const redirect of ['http://evil.example/callback', 'http://localhost:9999/callback/', undefined]) {
      const res = await fetch(authorizeUrl(base, { redirect_uri: redirect }), { redirect: 'manual' });
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
    }
  });

  it('redirects errors back to the client once the redirect URI is trusted', async () => {
    const bad = await fetch(authorizeUrl(base, { response_type: 'token' }), { redirect: 'manual' });
    expect(bad.status).toBe(302);
    const location = new URL(bad.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(CLIENT.redirectUris[0]);
    expect(location.searchParams.get('error')).toBe('unsupported_response_type');
    expect(location.searchParams.get('state')).toBe('st-1');
    expect(location.searchParams.get('error_description')).toBeTruthy();

    const noState = await fetch(authorizeUrl(base, { state: undefined }), { redirect: 'manual' });
    expect(new URL(noState.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');

    const provider = await fetch(authorizeUrl(base, { owner: 'workspace' }), { redirect: 'manual' });
    const providerLocation = new URL(provider.headers.get('location')!);
    expect(providerLocation.searchParams.get('error')).toBe('invalid_request');
    expect(providerLocation.searchParams.get('error_description')).toBe('owner must be user');
  });

  it('validates PKCE parameters when present', async () => {
    const method = await fetch(
      authorizeUrl(base, { code_challenge: pkcePair().challenge, code_challenge_method: 'S512' }),
      {
        redirect: 'manual',
      },
    );
    expect(new URL(method.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
    const short = await fetch(authorizeUrl(base, { code_challenge: 'abc', code_challenge_method: 'S256' }), {
      redirect: 'manual',
    });
    expect(new URL(short.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
    const good = await fetch(
      authorizeUrl(base, { code_challenge: pkcePair().challenge, code_challenge_method: 'S256' }),
    );
    expect(good.status).toBe(200);
  });

  it('allow redirects with a code and the state; deny with access_denied', async () => {
    const allowed = new URL(await submitConsent(authorizeUrl(base, {}), { decision: 'allow' }));
    expect(allowed.searchParams.get('code')).toMatch(/^code_/);
    expect(allowed.searchParams.get('state')).toBe('st-1');
    expect(allowed.searchParams.get('error')).toBeNull();

    const denied = new URL(await submitConsent(authorizeUrl(base, {}), { decision: 'deny' }));
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('state')).toBe('st-1');
    expect(denied.searchParams.get('code')).toBeNull();
  });

  it('keeps a query already present on the redirect URI', async () => {
    emu.control.registerClient('notion', { ...CLIENT, redirectUris: ['http://localhost:9999/cb?tenant=7'] });
    const location = new URL(
      await submitConsent(authorizeUrl(base, { redirect_uri: 'http://localhost:9999/cb?tenant=7' }), {
        decision: 'allow',
      }),
    );
    expect(location.searchParams.get('tenant')).toBe('7');
    expect(location.searchParams.get('code')).toBeTruthy();
  });

  it('re-validates the POST: a tampered redirect_uri or an unknown user gets no code', async () => {
    const tampered = await fetch(`${base}/oauth/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: CLIENT.clientId,
        redirect_uri: 'http://evil.example/cb',
        response_type: 'code',
        state: 's',
        user_id: 'user-ada',
        decision: 'allow',
      }).toString(),
      redirect: 'manual',
    });
    expect(tampered.status).toBe(400);
    expect(tampered.headers.get('location')).toBeNull();

    const ghost = await fetch(`${base}/oauth/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: CLIENT.clientId,
        redirect_uri: CLIENT.redirectUris[0]!,
        response_type: 'code',
        state: 's',
        user_id: 'user-nobody',
        decision: 'allow',
      }).toString(),
      redirect: 'manual',
    });
    expect(ghost.status).toBe(400);
    expect(ghost.headers.get('location')).toBeNull();
  });

  it('ignores PKCE parameters where the provider does not support PKCE', async () => {
    const res = await fetch(
      authorizeUrl(emu.urls.hubspot, { code_challenge: 'x', code_challenge_method: 'S999' }),
    );
    expect(res.status).toBe(200);
  });

  it('takes a request without response_type where the profile says it is optional, but no other type', async () => {
    const strict = await fetch(authorizeUrl(base, { response_type: undefined }), { redirect: 'manual' });
    const strictLocation = new URL(strict.headers.get('location')!);
    expect(strictLocation.searchParams.get('error')).toBe('invalid_request');
    expect(strictLocation.searchParams.get('error_description')).toContain('response_type');

    const lenient = new URL(
      await submitConsent(authorizeUrl(emu.urls.google, { response_type: undefined }), { decision: 'allow' }),
    );
    expect(lenient.searchParams.get('code')).toMatch(/^code_/);
    expect(lenient.searchParams.get('state')).toBe('st-1');

    const token = await fetch(authorizeUrl(emu.urls.google, { response_type: 'token' }), {
      redirect: 'manual',
    });
    expect(new URL(token.headers.get('location')!).searchParams.get('error')).toBe(
      'unsupported_response_type',
    );
  });

  it('takes a request without state where the profile says it is optional, and redirects without one', async () => {
    const strict = await fetch(authorizeUrl(base, { state: undefined }), { redirect: 'manual' });
    expect(new URL(strict.headers.get('location')!).searchParams.get('error_description')).toContain('state');

    const allowed = new URL(
      await submitConsent(authorizeUrl(emu.urls.google, { state: undefined }), { decision: 'allow' }),
    );
    expect(allowed.searchParams.get('code')).toMatch(/^code_/);
    expect(allowed.searchParams.has('state')).toBe(false);
    const denied = new URL(
      await submitConsent(authorizeUrl(emu.urls.google, { state: undefined }), { decision: 'deny' }),
    );
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.has('state')).toBe(false);
  });

  it('redirects a provider check back with the error code the profile names', async () => {
    const res = await fetch(authorizeUrl(emu.urls.google, { scope: 'unknown' }), { redirect: 'manual' });
    const location = new URL(res.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('invalid_scope');
    expect(location.searchParams.get('error_description')).toBe('Unknown scope: unknown');
    expect(location.searchParams.get('state')).toBe('st-1');
  });
});
