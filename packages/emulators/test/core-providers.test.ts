import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EMULATOR_KEYS,
  type EmulatorKey,
  type RunningEmulators,
  startEmulators,
  submitConsent,
} from '../src/index.js';

const REDIRECT = 'http://localhost:7777/callback';

/**
 * Per provider: an authorize URL the real provider would accept, and how it answers an unknown path
 * (Notion and Graph say 400 "invalid URL / version", as the real services do).
 */
const PROVIDERS: Record<
  EmulatorKey,
  { authorize: (base: string) => string; notFoundStatus: number; notFound: (body: unknown) => void }
> = {
  notion: {
    authorize: (base) => `${base}/v1/oauth/authorize?owner=user`,
    notFoundStatus: 400,
    notFound: (body) =>
      expect(body).toMatchObject({ object: 'error', status: 400, code: 'invalid_request_url' }),
  },
  google: {
    authorize: (base) =>
      `${base}/o/oauth2/v2/auth?access_type=offline&prompt=consent&scope=${encodeURIComponent('https://www.googleapis.com/auth/drive')}`,
    notFoundStatus: 404,
    notFound: (body) => expect(body).toMatchObject({ error: { code: 404 } }),
  },
  hubspot: {
    authorize: (base) =>
      `${base}/oauth/authorize?scope=${encodeURIComponent('crm.objects.contacts.read oauth')}`,
    notFoundStatus: 404,
    notFound: (body) => expect(body).toMatchObject({ status: 'error', message: expect.any(String) }),
  },
  microsoft: {
    authorize: (base) =>
      `${base}/common/oauth2/v2.0/authorize?response_mode=query&scope=${encodeURIComponent('offline_access Files.Read')}`,
    notFoundStatus: 400,
    notFound: (body) =>
      expect(body).toMatchObject({ error: { code: 'BadRequest', message: expect.any(String) } }),
  },
  // Plays the definition registered below; a path naming no definition is a 404.
  definitions: {
    authorize: (base) => `${base}/acme/oauth/authorize?scope=read`,
    notFoundStatus: 404,
    notFound: (body) => expect(body).toMatchObject({ error: { code: 'not_found' } }),
  },
  // PKCE S256 and the resource indicator are required, as the MCP authorization specification says.
  mcp: {
    authorize: (base) =>
      `${base}/oauth/authorize?scope=notes%3Aread&code_challenge=${'E'.repeat(43)}&code_challenge_method=S256&resource=${encodeURIComponent(`${base}/dcr/mcp`)}`,
    notFoundStatus: 404,
    notFound: (body) => expect(body).toMatchObject({ error: 'not_found' }),
  },
};

describe('every provider emulator hosted together', () => {
  let emu: RunningEmulators;
  beforeAll(async () => {
    emu = await startEmulators();
    emu.control.registerDefinition({
      key: 'acme',
      display_name: 'Acme',
      auth: {
        kind: 'oauth2',
        authorization_url: 'https://acme.example/oauth/authorize',
        token_url: 'https://acme.example/oauth/token',
      },
      api: { base_url: 'https://api.acme.example' },
    });
    for (const key of EMULATOR_KEYS) {
      emu.control.registerClient(key, {
        clientId: `${key}-client`,
        clientSecret: 's3cret',
        redirectUris: [REDIRECT],
        ...(key === 'definitions' ? { provider: 'acme' } : {}),
      });
    }
  });
  afterAll(() => emu.close());

  it('hosts every provider under its own prefix', () => {
    expect(Object.keys(emu.urls).sort()).toEqual([...EMULATOR_KEYS].sort());
    for (const key of EMULATOR_KEYS) expect(emu.urls[key]).toBe(`${emu.url}/${key}`);
  });

  for (const key of EMULATOR_KEYS) {
    describe(key, () => {
      const authorizeUrl = () => {
        const url = new URL(PROVIDERS[key].authorize(emu.urls[key]));
        url.searchParams.set('client_id', `${key}-client`);
        url.searchParams.set('redirect_uri', REDIRECT);
        url.searchParams.set('response_type', 'code');
        url.searchParams.set('state', 'xyz');
        return url.toString();
      };

      it("answers an unknown route in the provider's not-found shape", async () => {
        const res = await fetch(`${emu.urls[key]}/no/such/route`);
        expect(res.status).toBe(PROVIDERS[key].notFoundStatus);
        PROVIDERS[key].notFound(await res.json());
      });

      it('renders the consent page and completes the grant', async () => {
        const page = await fetch(authorizeUrl());
        expect(page.status).toBe(200);
        const html = await page.text();
        expect(html).toContain(`${key}-client`);
        for (const user of emu.control.users(key)) expect(html).toContain(user.name);
        const location = new URL(await submitConsent(authorizeUrl(), { decision: 'allow' }));
        expect(location.searchParams.get('state')).toBe('xyz');
        expect(location.searchParams.get('code')).toBeTruthy();
      });
    });
  }
});
