import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WRONG_ANSWER_DELAY_MS } from '../src/auth/failure-throttle.js';
import { BACKENDS } from './helpers/backends.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { fetchFrom, postToken } from './helpers/token.js';

/**
 * Throttles that slow guessing of a client secret or an admin password must never refuse the right
 * one: otherwise whoever knows a client id (or a username) can lock the application (or the
 * operator) out. A third party here fails from other loopback addresses and from the owner's own.
 */
const APP = '127.0.0.1';
const timed = async (request: () => Promise<Response>) => {
  const began = Date.now();
  const res = await request();
  return { res, ms: Date.now() - began };
};

describe.each(BACKENDS)('throttled guessing on $name', (backend) => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway(backend, {}, { awaitSandbox: false });
  });
  afterAll(async () => {
    await t?.close();
  });

  const token = (clientSecret: string, from: string, clientId = t.clientId) =>
    postToken(
      t.url,
      { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
      { from },
    );
  const signIn = (username: string, password: string, from: string) =>
    fetchFrom(from, `${t.url}/api/v1/admin/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password }),
    });

  it('POST /oauth/token: wrong secrets from elsewhere and from the application’s own address never keep out the right one', async () => {
    for (const from of ['127.0.0.2', APP]) {
      // At once: from the second address on, each wrong answer is held back a second.
      const wrong = await Promise.all(Array.from({ length: 10 }, () => token('pcs_guess', from)));
      expect(wrong.map((r) => r.status)).toEqual(Array(10).fill(401));
      const { res: limited, ms } = await timed(() => token('pcs_guess', from));
      const problem = (await limited.json()) as Record<string, unknown>;
      expect(limited.status, JSON.stringify(problem)).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(problem).toMatchObject({ code: 'rate_limited', error: 'slow_down', retryable: true });
      expect(problem.detail).toMatch(/right one is accepted/);
      expect(ms).toBeGreaterThanOrEqual(WRONG_ANSWER_DELAY_MS - 50);

      const { res: right, ms: rightMs } = await timed(() => token(t.clientSecret, from));
      expect(right.status).toBe(200);
      expect(right.headers.get('cache-control')).toBe('no-store');
      expect((await right.json()) as Record<string, unknown>).toHaveProperty('access_token');
      // Only wrong answers are held back.
      expect(rightMs).toBeLessThan(WRONG_ANSWER_DELAY_MS);
    }
    // A fresh address is not throttled, but the client id has failed too often overall: a wrong
    // secret is still a plain 401, held back; the right one is not.
    const { res: spread, ms } = await timed(() => token('pcs_guess', '127.0.0.3'));
    expect(spread.status).toBe(401);
    expect(((await spread.json()) as { code: string }).code).toBe('invalid_client');
    expect(ms).toBeGreaterThanOrEqual(WRONG_ANSWER_DELAY_MS - 50);
    expect((await token(t.clientSecret, '127.0.0.3')).status).toBe(200);
  });

  it('POST /oauth/token: fifty failures from one address throttle its wrong secrets for any client id', async () => {
    const from = '127.0.0.4';
    // Fifty distinct unknown ids: no id fails twice, so only the address's count grows.
    for (let i = 0; i < 50; i++) expect((await token('pcs_guess', from, `cli_unknown${i}`)).status).toBe(401);
    expect((await token('pcs_guess', from, 'cli_another')).status).toBe(429);
    expect((await token(t.clientSecret, from)).status).toBe(200);
  });

  it('dashboard sign-in: five wrong passwords lock the account, yet the right one always signs in', async () => {
    const { username, password } = t.gateway.bootstrapAdmin!;
    const third = '127.0.0.5';
    for (let i = 0; i < 5; i++) {
      const res = await signIn(username, 'not-the-password', third);
      expect(res.status, `attempt ${i + 1}`).toBe(401);
      expect(((await res.json()) as { code: string }).code).toBe('invalid_credentials');
    }
    // Locked after five (README): wrong passwords from anywhere are answered 429, held back.
    for (const from of [third, APP]) {
      const { res, ms } = await timed(() => signIn(username, 'not-the-password', from));
      const problem = (await res.json()) as { code: string; detail: string };
      expect(res.status, JSON.stringify(problem)).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(problem.code).toBe('rate_limited');
      expect(problem.detail).toMatch(/right password signs in/);
      expect(ms).toBeGreaterThanOrEqual(WRONG_ANSWER_DELAY_MS - 50);
    }
    // The operator, at their own address or at the guesser's, signs in all the same.
    for (const from of [APP, third]) {
      const res = await signIn(username, password, from);
      expect(res.status, await res.clone().text()).toBe(201);
      expect(res.headers.get('set-cookie')).toMatch(/^portico_session=/);
    }
    // A success ends the lock: the next wrong password is a plain 401 again.
    expect((await signIn(username, 'not-the-password', APP)).status).toBe(401);
  });

  it('dashboard sign-in: thirty failures from one address throttle its wrong passwords, not the right one', async () => {
    const { username, password } = t.gateway.bootstrapAdmin!;
    const from = '127.0.0.6';
    // Unknown usernames: no account lock is involved, only the address's count.
    const wrong = await Promise.all(
      Array.from({ length: 30 }, (_, i) => signIn(`nobody${i}`, 'not-the-password', from)),
    );
    expect(wrong.map((r) => r.status)).toEqual(Array(30).fill(401));
    const limited = await signIn('nobody', 'not-the-password', from);
    expect(limited.status).toBe(429);
    expect(((await limited.json()) as { detail: string }).detail).toMatch(/from this address/);
    expect((await signIn(username, password, from)).status).toBe(201);
  });

  it('dashboard sign-in: a right password from the address does not clear its count of failures', async () => {
    const { username, password } = t.gateway.bootstrapAdmin!;
    const from = '127.0.0.12';
    const fail = (n: number, offset: number) =>
      Promise.all(
        Array.from({ length: n }, (_, i) => signIn(`guess${offset + i}`, 'not-the-password', from)),
      );
    expect((await fail(8, 0)).map((r) => r.status)).toEqual(Array(8).fill(401));
    // Someone with an account of their own signs in between guesses at the others'.
    expect((await signIn(username, password, from)).status).toBe(201);
    expect((await fail(22, 8)).map((r) => r.status)).toEqual(Array(22).fill(401));
    // Thirty failures in all: the address is throttled, as documented.
    const limited = await signIn('guess30', 'not-the-password', from);
    expect(limited.status).toBe(429);
    expect(((await limited.json()) as { detail: string }).detail).toMatch(/from this address/);
  });
});
