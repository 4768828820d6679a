import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CREDENTIAL_ENTRIES } from '../src/authorization/service.js';
import { CUSTOM_PROVIDERS_PER_ENVIRONMENT } from '../src/connections/providers.js';
import { DEFINITION_LIMITS } from '../src/providers/definition.js';
import { BACKENDS } from './helpers/backends.js';
import { browserCookie, createSandboxConnection, openLink } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * A definition is a caller's word: its strings, its size and how many an environment holds are
 * bounded, and its patterns run in linear time (validation/linear-pattern.ts). The hosted form
 * that checks a key with the definition's patterns and user-info request takes few entries a link.
 */
describe.each(BACKENDS)('bounded provider definitions on $name', (backend) => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway(backend);
  });
  afterAll(async () => {
    await t?.close();
  });
  const json = async (res: Response) => (await res.json()) as Record<string, unknown>;
  const define = (definition: Record<string, unknown>) =>
    t.api('/api/v1/providers', { method: 'POST', json: definition });
  const keys = (key: string, extra: Record<string, unknown> = {}) => ({
    key,
    display_name: key,
    auth: { kind: 'api_key' },
    api: { base_url: `https://api.${key.replaceAll('_', '-')}.example` },
    ...extra,
  });
  const customKeys = async () =>
    ((await json(await t.api('/api/v1/providers'))).data as Array<{ key: string; built_in: boolean }>)
      .filter((p) => !p.built_in)
      .map((p) => p.key);

  it('a nested-quantifier key pattern runs in linear time on the hosted form; backreferences are refused', async () => {
    const refused = await define(keys('backref_keys', { auth: { kind: 'api_key', pattern: '^(a)\\1$' } }));
    expect(refused.status).toBe(400);
    const problem = await json(refused);
    expect(problem.errors).toEqual([{ path: '/auth/pattern', message: expect.stringContaining('RE2') }]);

    expect(
      (await define(keys('nested_keys', { auth: { kind: 'api_key', pattern: '^(a+)+$' } }))).status,
    ).toBe(201);
    await createSandboxConnection(t, 'nested', 'nested_keys');
    const link = (await json(
      await t.api('/api/v1/connected-accounts/authorization-link', {
        method: 'POST',
        json: { connection_name: 'nested', identifier: 'user_1' },
      }),
    )) as { link: string };
    const form = await openLink(link.link);
    const html = await form.text();
    const state = html.match(/name="state" value="([^"]+)"/)![1]!;
    const action = html.match(/action="([^"]+)"/)![1]!;
    // 28 characters that almost match: a backtracking engine tries 2^27 ways (seconds, the whole
    // process stalled); RE2 answers at once, and the gateway keeps answering meanwhile.
    const started = performance.now();
    const [answer, health] = await Promise.all([
      fetch(new URL(action, t.url), {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: browserCookie(form) },
        body: new URLSearchParams({ state, api_key: `${'a'.repeat(27)}b` }).toString(),
      }),
      fetch(`${t.url}/health`).then(() => performance.now() - started),
    ]);
    const elapsed = performance.now() - started;
    expect(answer.status).toBe(400);
    expect(await answer.text()).toContain('does not look like');
    expect(elapsed).toBeLessThan(2000);
    expect(health).toBeLessThan(2000);
  });

  it(`one link's form takes ${MAX_CREDENTIAL_ENTRIES} refused entries, then the link is locked`, async () => {
    expect(
      (
        await define(
          keys('checked_keys', {
            api: { base_url: 'https://api.checked-keys.example/v1' },
            user_info: { url: 'https://api.checked-keys.example/v1/me' },
          }),
        )
      ).status,
    ).toBe(201);
    await createSandboxConnection(t, 'checked', 'checked_keys');
    const { link } = (await json(
      await t.api('/api/v1/connected-accounts/authorization-link', {
        method: 'POST',
        json: { connection_name: 'checked', identifier: 'user_2' },
      }),
    )) as { link: string };
    const form = await openLink(link);
    const html = await form.text();
    const state = html.match(/name="state" value="([^"]+)"/)![1]!;
    const action = html.match(/action="([^"]+)"/)![1]!;
    const cookie = browserCookie(form);
    const enter = (apiKey: string) =>
      fetch(new URL(action, t.url), {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ state, api_key: apiKey }).toString(),
      });
    // Each refused entry is a user-info request the sandbox's provider answers 401.
    for (let i = 1; i < MAX_CREDENTIAL_ENTRIES; i++) {
      const refused = await enter(`wrong-${i}`);
      expect(refused.status).toBe(400);
      expect(await refused.text()).toContain('did not accept');
    }
    const last = await enter(`wrong-${MAX_CREDENTIAL_ENTRIES}`);
    expect(last.status).toBe(429);
    expect(await last.text()).toContain('This link is locked');
    // Locked for good: even the right key, and the link itself, say so.
    const right = await enter('sandbox_key');
    expect(right.status).toBe(429);
    expect(await right.text()).toContain('This link is locked');
    const again = await openLink(link);
    expect(again.status).toBe(429);
    expect(await again.text()).toContain('This link is locked');
  });

  it('a definition over the size limit is refused with 413 before it is read, however many are sent', async () => {
    const before = await customKeys();
    const huge = 'x'.repeat(1_000_000);
    for (let round = 0; round < 60; round += 6) {
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          define(keys(`huge_${round + i}`, { docs_url: `https://docs.example/${huge}` })),
        ),
      );
      for (const answer of answers) {
        expect(answer.status).toBe(413);
        const problem = await json(answer);
        expect(problem.code).toBe('payload_too_large');
        expect(problem.detail).toContain(DEFINITION_LIMITS.maxBytes.toLocaleString('en'));
      }
    }
    expect(await customKeys()).toEqual(before);
    // A string over its own limit, in a definition small enough, names where it is.
    const long = await define(
      keys('long_keys', {
        api: { base_url: 'https://api.long.example', default_headers: { 'X-Long': 'y'.repeat(3000) } },
      }),
    );
    expect(long.status).toBe(400);
    expect((await json(long)).errors).toEqual([
      { path: '/api/default_headers/X-Long', message: expect.stringContaining('at most 2,048') },
    ]);
  });

  it(`an environment holds at most ${CUSTOM_PROVIDERS_PER_ENVIRONMENT} custom providers`, async () => {
    const held = (await customKeys()).length;
    for (let i = held; i < CUSTOM_PROVIDERS_PER_ENVIRONMENT; i += 10) {
      const answers = await Promise.all(
        Array.from({ length: Math.min(10, CUSTOM_PROVIDERS_PER_ENVIRONMENT - i) }, (_, j) =>
          define(keys(`many_${i + j}`)),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 201));
    }
    const over = await define(keys('one_too_many'));
    expect(over.status).toBe(409);
    expect(await json(over)).toMatchObject({
      code: 'limit_reached',
      limit: CUSTOM_PROVIDERS_PER_ENVIRONMENT,
    });
    expect((await t.api('/api/v1/providers/many_50', { method: 'DELETE' })).status).toBe(204);
    expect((await define(keys('one_too_many'))).status).toBe(201);
  });
});
