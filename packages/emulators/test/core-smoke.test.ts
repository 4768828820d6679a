import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningEmulators, startEmulators, submitConsent } from '../src/index.js';
import { authorizeUrl, CLIENT, testModule, tokenRequest } from './core-fixtures.js';

describe('emulator core: the basic flow', () => {
  let emu: RunningEmulators;
  beforeAll(async () => {
    emu = await startEmulators({ modules: [testModule()] });
    emu.control.registerClient('notion', CLIENT);
  });
  afterAll(() => emu.close());

  it('runs consent, code exchange and an authenticated API call', async () => {
    const base = emu.urls.notion;
    const location = new URL(
      await submitConsent(authorizeUrl(base, { scope: 'read write' }), {
        decision: 'allow',
        userId: 'user-grace',
      }),
    );
    expect(location.searchParams.get('state')).toBe('st-1');
    const code = location.searchParams.get('code')!;
    const token = await tokenRequest(base, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: CLIENT.redirectUris[0]!,
    });
    expect(token.status).toBe(200);
    const me = await fetch(`${base}/v1/users/me`, {
      headers: { authorization: `Bearer ${token.body.access_token}` },
    });
    expect(await me.json()).toEqual({ id: 'user-grace', name: 'Grace Hopper', scopes: ['read', 'write'] });
  });

  it('issues tokens in process', async () => {
    const issued = emu.control.issueToken('notion', { userId: 'ada@example.com' });
    const me = await fetch(`${emu.urls.notion}/v1/users/me`, {
      headers: { authorization: `Bearer ${issued.access_token}` },
    });
    expect(((await me.json()) as { id: string }).id).toBe('user-ada');
  });
});
