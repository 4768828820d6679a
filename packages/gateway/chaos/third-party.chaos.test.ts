import { type RunningEmulators, startEmulators, submitConsent } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/gateway.js';
import { postgresAvailable } from '../test/helpers/backends.js';
import { browserCookie, openLink } from '../test/helpers/flow.js';
import { fetchFrom, postToken } from '../test/helpers/token.js';
import {
  freshStore,
  GatewayProcess,
  percentile,
  printFigures,
  type StoreKind,
  sleep,
} from './helpers/processes.js';

/**
 * What a third party can do with what it may know (a client id, a username) or send (a link
 * request), against a gateway process on each store:
 * - guess secrets and passwords from twenty other addresses and from the application's own, while
 *   the application keeps asking for tokens: it must get every one, and the operator must still sign in;
 * - make links whose redirect_url passes a JSON-schema `uri` but is no URL (and find links already
 *   stored with such values, or whose allow-list was tightened since): never a 500, at creation or
 *   at the callback after consent.
 * Other addresses are other loopback addresses (127.0.0.10, …), which the gateway sees as other callers.
 */
const STORES: StoreKind[] = ['pglite', ...(postgresAvailable ? (['postgres'] as const) : [])];
const APP = '127.0.0.1';
const GUESSERS = Array.from({ length: 20 }, (_, i) => `127.0.0.${10 + i}`);
const ROUNDS = 15;
const NOT_URLS = [
  'https://a%2fb.example/',
  'https://app.example.com%40evil.example/',
  'http://x:99999/',
  // Decodes to another host than the one written.
  'https://%65vil.example/',
];
const ALLOWED = 'https://app.example.com';

describe.each(STORES)('a third party against a gateway process on %s', (store) => {
  let emulators: RunningEmulators;
  let gw: GatewayProcess;
  let env: Record<string, string>;

  beforeAll(async () => {
    emulators = await startEmulators();
    ({ env } = await freshStore(store));
    gw = await GatewayProcess.launch({ ...env, PORTICO_SANDBOX_URL: emulators.url });
    const created = await gw.remote.api('/api/v1/connections', {
      method: 'POST',
      json: { name: 'notion', provider: 'notion', sandbox: true },
    });
    expect(created.status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await gw?.stop();
    await emulators?.close();
  });

  it('cannot lock the application out of /oauth/token, nor the operator out of the dashboard', async () => {
    const app = (await (
      await gw.remote.api('/api/v1/clients', { method: 'POST', json: { name: 'victim' } })
    ).json()) as { client_id: string; client_secret: string };
    const token = (secret: string, from: string) =>
      postToken(
        gw.url,
        { grant_type: 'client_credentials', client_id: app.client_id, client_secret: secret },
        { from },
      );
    const answers = new Map<number, number>();
    let without429RetryAfter = 0;
    const guess = async (from: string) => {
      const res = await token(`pcs_guess${Math.random().toString(36).slice(2)}`, from);
      await res.arrayBuffer();
      answers.set(res.status, (answers.get(res.status) ?? 0) + 1);
      if (res.status === 429 && !(Number(res.headers.get('retry-after')) > 0)) without429RetryAfter++;
    };

    // Every guesser at once, round after round, the application's own address among them...
    let attacking = true;
    const attack = (async () => {
      for (let round = 0; round < ROUNDS; round++) await Promise.all([...GUESSERS, APP].map(guess));
      attacking = false;
    })();
    // ...while the application asks for its token as usual.
    const app200: number[] = [];
    const appOther: string[] = [];
    while (attacking) {
      const began = Date.now();
      const res = await token(app.client_secret, APP);
      await res.arrayBuffer();
      if (res.status === 200) app200.push(Date.now() - began);
      else appOther.push(String(res.status));
      await sleep(100);
    }
    await attack;
    // Afterwards too, from its own address and from a guesser's.
    const after = await Promise.all([APP, GUESSERS[0]!].map((from) => token(app.client_secret, from)));

    // The dashboard: a guesser fails on the first admin from another address and from the
    // operator's, past the lock; the operator signs in all the same.
    const password = /password:\s+(\S+)/.exec(gw.output())?.[1];
    expect(password, 'the first start prints the admin password').toBeTruthy();
    const signIn = (pass: string, from: string) =>
      fetchFrom(from, `${gw.url}/api/v1/admin/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password: pass }),
      });
    const wrongSignIns: number[] = [];
    for (const from of [...Array(8).fill(GUESSERS[1]), ...Array(4).fill(APP)] as string[])
      wrongSignIns.push((await signIn('not-the-password', from)).status);
    const operator = await Promise.all([APP, GUESSERS[1]!].map((from) => signIn(password!, from)));

    printFigures(`third party guessing, ${store}`, [
      {
        store,
        guesses: [...answers.values()].reduce((a, b) => a + b, 0),
        ...Object.fromEntries([...answers].map(([status, n]) => [`answered_${status}`, n])),
        app_tokens: app200.length,
        app_refused: appOther.length,
        app_p50_ms: percentile(app200, 50),
        app_max_ms: Math.max(...app200),
        wrong_sign_ins: wrongSignIns.join(' '),
        operator_sign_ins: operator.map((r) => r.status).join(' '),
      },
    ]);
    expect(appOther).toEqual([]);
    expect(app200.length).toBeGreaterThan(0);
    expect(after.map((r) => r.status)).toEqual([200, 200]);
    expect([...answers.keys()].sort()).toEqual([401, 429]);
    expect(without429RetryAfter).toBe(0);
    // Five wrong passwords lock the account: the sixth and later wrong ones are 429.
    expect(wrongSignIns).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
    expect(operator.map((r) => r.status)).toEqual([201, 201]);
  }, 180_000);

  it('never answers 500 for a redirect_url that is not a URL, at link creation or at the callback after consent', async () => {
    const allowOnly = async (entries: string[]) =>
      expect(
        (
          await gw.remote.api('/api/v1/environment', {
            method: 'PATCH',
            json: { redirect_url_allowlist: entries },
          })
        ).status,
      ).toBe(200);
    const createLink = (identifier: string, json: Record<string, string>) =>
      gw.remote.api('/api/v1/connected-accounts/authorization-link', {
        method: 'POST',
        json: { connection_name: 'notion', identifier, ...json },
      });
    const consent = async (link: string) => {
      const start = await openLink(link);
      const callback = await submitConsent(start.headers.get('location')!, { decision: 'allow' });
      return fetch(callback, { redirect: 'manual', headers: { cookie: browserCookie(start) } });
    };
    const rows: Array<Record<string, string | number>> = [];
    const failures: string[] = [];

    // At creation, with no allow-list and with one.
    let n = 0;
    for (const allowlist of [[], [ALLOWED]]) {
      await allowOnly(allowlist);
      for (const url of NOT_URLS) {
        for (const field of ['redirect_url', 'user_verify_url']) {
          const res = await createLink(`made-${n++}`, { [field]: url });
          const body = (await res.json()) as {
            code?: string;
            errors?: Array<{ path: string }>;
            link?: string;
          };
          let callback = '-';
          // Should one get through, the callback after consent must not fail either.
          if (res.status === 201) callback = String((await consent(body.link!)).status);
          rows.push({
            case: `create, ${allowlist.length ? 'allow-list' : 'no allow-list'}`,
            field,
            url,
            status: res.status,
            callback,
          });
          if (res.status !== 400 || body.code !== 'invalid_input' || body.errors?.[0]?.path !== `/${field}`)
            failures.push(`${field} ${url}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
          if (Number(callback) >= 500) failures.push(`${field} ${url}: callback ${callback}`);
        }
      }
    }

    // At the callback: links stored with such a redirect_url (as a gateway before the check would
    // have stored them) and a link whose redirect_url the allow-list no longer allows.
    const made: Array<{ url: string; link: string; connected_account_id: string }> = [];
    for (const [i, url] of [...NOT_URLS, `${ALLOWED}/done`].entries()) {
      const res = await createLink(`stored-${i}`, { redirect_url: `${ALLOWED}/done` });
      expect(res.status).toBe(201);
      made.push({ url, ...((await res.json()) as { link: string; connected_account_id: string }) });
    }
    await gw.stop();
    const db = await openStore(loadConfig(env));
    try {
      for (const m of made)
        await db.query('UPDATE authorization_links SET redirect_url = $1 WHERE account_id = $2', [
          m.url,
          m.connected_account_id,
        ]);
    } finally {
      await db.close();
    }
    await gw.start();
    await allowOnly(['https://elsewhere.example.com']);
    for (const m of made) {
      const done = await consent(m.link);
      const html = await done.text();
      const account = (await (
        await gw.remote.api(`/api/v1/connected-accounts/${m.connected_account_id}`)
      ).json()) as {
        status: string;
      };
      rows.push({
        case: 'callback',
        field: 'redirect_url',
        url: m.url,
        status: done.status,
        account: account.status,
      });
      if (done.status !== 200 || !html.includes('data-outcome="success"') || done.headers.get('location'))
        failures.push(`callback for ${m.url}: ${done.status} ${html.slice(0, 200)}`);
      if (account.status !== 'ACTIVE') failures.push(`callback for ${m.url}: account ${account.status}`);
    }
    await allowOnly([]);

    printFigures(`redirect URLs that are not URLs, ${store}`, rows);
    expect(failures).toEqual([]);
  }, 180_000);
});
