import { request } from 'node:http';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { type EmulatorControl, emulatorsPlugin, startEmulators, submitConsent } from '../src/index.js';
import { authorizeUrl, CLIENT, testModule, tokenRequest } from './core-fixtures.js';

/** fetch() may not set Host, so this goes through node:http to play a request that came via a proxy. */
function getJson(url: string, headers: Record<string, string>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('mounting the emulators inside another app', () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function mount(options: { mountPrefix?: string; control?: boolean } = {}) {
    app = Fastify();
    let control: EmulatorControl | undefined;
    // Like the gateway: the host app parses forms itself.
    await app.register(formbody);
    app.get('/health', async () => ({ ok: true }));
    await app.register(emulatorsPlugin, {
      prefix: '/sandbox',
      modules: [testModule()],
      ...options,
      onControl: (c) => {
        control = c;
      },
    });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    return { address, control: control! };
  }

  it('serves everything under the host prefix and derives publicBase from it', async () => {
    const { address, control } = await mount();
    const base = `${address}/sandbox/notion`;
    expect(await getJson(`${base}/v1/base`, { host: 'gateway.example:8443' })).toEqual({
      base: 'http://gateway.example:8443/sandbox/notion',
    });
    const forwarded = await getJson(`${base}/v1/base`, {
      host: 'internal:80',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'portico.example.com',
    });
    expect(forwarded).toEqual({ base: 'https://portico.example.com/sandbox/notion' });

    // OAuth and control work under the prefix; counters and faults speak of paths within the emulator root.
    expect(
      (
        await fetch(`${address}/sandbox/_emulator/clients`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            emulator: 'notion',
            client_id: CLIENT.clientId,
            client_secret: CLIENT.clientSecret,
            redirect_uris: CLIENT.redirectUris,
          }),
        })
      ).status,
    ).toBe(201);
    const location = new URL(await submitConsent(authorizeUrl(base, {}), { decision: 'allow' }));
    const tokens = await tokenRequest(base, {
      grant_type: 'authorization_code',
      code: location.searchParams.get('code')!,
      redirect_uri: CLIENT.redirectUris[0]!,
    });
    expect(tokens.status).toBe(200);
    control.addFault({ path: '^/notion/v1/users/me$', status: 418 });
    expect((await fetch(`${base}/v1/users/me`)).status).toBe(418);
    expect(control.counters().requests).toMatchObject({
      'GET /notion/oauth/authorize': 1,
      'POST /notion/oauth/token': 1,
      'GET /notion/v1/users/me': 1,
    });
    // The host app's own routes are untouched.
    expect(await (await fetch(`${address}/health`)).json()).toEqual({ ok: true });
  });

  it('uses an explicit mountPrefix for external URLs and can leave the control API out', async () => {
    const { address } = await mount({ mountPrefix: '/public/sandbox', control: false });
    expect(await getJson(`${address}/sandbox/notion/v1/base`, { host: 'edge.example' })).toEqual({
      base: 'http://edge.example/public/sandbox/notion',
    });
    expect((await fetch(`${address}/sandbox/_emulator/counters`)).status).toBe(404);
  });

  it('startEmulators reports its URLs per emulator', async () => {
    const emu = await startEmulators({
      modules: [testModule(), testModule({ key: 'hubspot', prefix: '/crm' })],
    });
    try {
      expect(emu.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(emu.urls).toEqual({ notion: `${emu.url}/notion`, hubspot: `${emu.url}/crm` });
      const res = await fetch(`${emu.urls.hubspot}/v1/base`);
      expect(await res.json()).toEqual({ base: emu.urls.hubspot });
    } finally {
      await emu.close();
    }
  });
});
