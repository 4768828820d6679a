import { type RunningEmulators, startEmulators } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../test/helpers/backends.js';
import { openLink } from '../test/helpers/flow.js';
import { paddedJson, uploadBody } from '../test/helpers/uploads.js';
import { freshStore, GatewayProcess, printFigures, type StoreKind } from './helpers/processes.js';

/**
 * The bad-input sweep of test/bad-input-sweep.test.ts, against a gateway process on each store and
 * wider: every operation of /openapi.json (the proxy included), every parameter and body field,
 * fed NUL, unpaired surrogates, 1 MB strings, deep nesting, wrong types and unknown fields, alone
 * and beside otherwise valid fields, as JSON and as a form. Every answer is below 500 and every
 * refusal a problem with a code; the process is alive at the end.
 */
const MB = 'x'.repeat(1024 * 1024);
const nested = (depth: number): unknown => {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
};
const TEXT = ['\u0000', 'a\u0000b', '\ud800', 'x\udfff', MB, 'x'.repeat(20_000), '../../etc/passwd', ' '];
const VALUES: unknown[] = [...TEXT, -1, 1e308, true, null, [], {}, [MB], nested(100), nested(1000)];
const STORES: StoreKind[] = ['pglite', ...(postgresAvailable ? (['postgres'] as const) : [])];

function urlPart(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return '%ED%A0%80';
  }
}

describe.each(STORES)('hostile input on every route of a gateway process on %s', (store) => {
  let emulators: RunningEmulators;
  let gw: GatewayProcess;

  beforeAll(async () => {
    emulators = await startEmulators();
    const { env } = await freshStore(store);
    gw = await GatewayProcess.launch({ ...env, PORTICO_SANDBOX_URL: emulators.url });
    await gw.remote.sandboxAccount('notion', 'notion', 'sweep');
  }, 120_000);

  afterAll(async () => {
    await gw?.stop();
    await emulators?.close();
  });

  it('answers 4xx with a problem code, never 5xx', async () => {
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<string, { parameters?: Array<{ in: string; name: string }>; requestBody?: unknown }>
      >;
    };
    const bearer = await gw.remote.bearer();
    const failures: string[] = [];
    const counts = { requests: 0, refused: 0, accepted: 0 };
    const send = async (
      method: string,
      url: string,
      body?: string,
      headers: Record<string, string> = {},
    ): Promise<void> => {
      counts.requests++;
      const res = await fetch(`${gw.url}${url}`, {
        method,
        headers: {
          authorization: `Bearer ${bearer}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        ...(body === undefined ? {} : { body }),
      }).catch((error: Error) => error);
      if (res instanceof Error) {
        failures.push(`${method} ${url.slice(0, 80)}: ${res.message}`);
        return;
      }
      const text = await res.text();
      if (res.status < 400) counts.accepted++;
      else counts.refused++;
      const problem = res.headers.get('content-type')?.includes('application/problem+json');
      const html = res.headers.get('content-type')?.includes('text/html');
      if (html && !unframeable(res)) {
        failures.push(`${method} ${url.slice(0, 80)} → an HTML page another site may frame`);
      }
      if (res.status >= 500) {
        failures.push(`${method} ${url.slice(0, 80)} → ${res.status} ${text.slice(0, 160)}`);
      } else if (
        res.status >= 400 &&
        !html &&
        // A provider's own refusal is relayed as the provider wrote it.
        !(url.startsWith('/proxy') && !problem) &&
        // MCP OAuth's endpoints answer as OAuth clients expect: RFC 6749 §5.2 JSON with an error code.
        !(url.startsWith('/mcp/oauth/') && /^\{"error":"\w+"/.test(text)) &&
        !(problem && /"code":"\w+"/.test(text)) &&
        res.status !== 431 &&
        res.status !== 414
      ) {
        failures.push(
          `${method} ${url.slice(0, 80)} → ${res.status} without a problem code: ${text.slice(0, 120)}`,
        );
      }
    };
    const fill = (path: string, replace: Record<string, string> = {}) =>
      path.replace(/\{(\w+)\}/g, (_, name: string) => replace[name] ?? 'sweep');

    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [lower, op] of Object.entries(methods)) {
        const method = lower.toUpperCase();
        if (path.startsWith('/proxy')) continue;
        for (const p of op.parameters ?? []) {
          for (const value of [...TEXT, '-1', '1e309', '[]']) {
            if (p.in === 'path') await send(method, fill(path, { [p.name]: urlPart(value) }));
            if (p.in === 'query') await send(method, `${fill(path)}?${p.name}=${urlPart(value)}`);
          }
        }
        const schema = (
          op.requestBody as {
            content?: Record<string, { schema?: { properties?: Record<string, unknown> } }>;
          }
        )?.content?.['application/json']?.schema;
        const fields = Object.keys(schema?.properties ?? {});
        if (!fields.length) continue;
        const url = fill(path);
        for (const raw of [
          '{',
          '[]',
          '"x"',
          'null',
          // Deeper than any stringifier here would go: built as text.
          `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`,
          JSON.stringify({ [MB]: 1 }),
        ]) {
          await send(method, url, raw);
        }
        // Each field hostile, beside every other field given a plausible value, plus an unknown field.
        const plausible = Object.fromEntries(fields.map((f) => [f, 'sweep']));
        for (const field of fields) {
          for (const value of VALUES) {
            await send(method, url, JSON.stringify({ [field]: value }));
            await send(method, url, JSON.stringify({ ...plausible, [field]: value }));
          }
        }
        await send(
          method,
          url,
          JSON.stringify({ ...plausible, colour: 'blue', __proto__x: { polluted: true } }),
        );
        await send(method, url, new URLSearchParams({ [fields[0]!]: '\u0000' }).toString(), {
          'content-type': 'application/x-www-form-urlencoded',
        });
      }
    }
    // The proxy: hostile routing headers and targets (what reaches the provider is the provider's business).
    for (const value of ['x'.repeat(20_000), '../sweep', ' ', 'sweep\t']) {
      await send('GET', '/proxy/v1/users/me', undefined, { connection_name: value, identifier: 'sweep' });
      await send('GET', '/proxy/v1/users/me', undefined, { connection_name: 'notion', identifier: value });
    }
    for (const target of [
      '/proxy/%00',
      '/proxy/..%2f..%2fetc',
      `/proxy/${'a'.repeat(10_000)}`,
      '/proxy/%ED%A0%80',
    ]) {
      await send('GET', target, undefined, { connection_name: 'notion', identifier: 'sweep' });
    }
    const alive = (await fetch(`${gw.url}/readyz`)).status;

    printFigures(`hostile input on every route, ${store}`, [
      {
        store,
        requests: counts.requests,
        refused_4xx: counts.refused,
        accepted: counts.accepted,
        failures: failures.length,
        ready_after: alive,
      },
    ]);
    expect(failures.slice(0, 20)).toEqual([]);
    expect(alive).toBe(200);
  }, 600_000);

  it("relays the provider's 413 to 2 MB uploads it refuses early, never a 503", async () => {
    await expectEarlyRefusalsRelayed(gw, `standalone emulators, ${store}`);
  });

  it("serves no HTML page (its own, or the emulators' consent page) another site may frame", async () => {
    await expectNoFramablePage(gw);
  });
});

/** The same with the emulators embedded in the gateway (no PORTICO_SANDBOX_URL), as a new installation runs. */
describe.each(STORES)(
  'early refusals and HTML pages of a gateway process with its own sandbox on %s',
  (store) => {
    let gw: GatewayProcess;

    beforeAll(async () => {
      const { env } = await freshStore(store);
      gw = await GatewayProcess.launch(env);
      await gw.remote.sandboxAccount('notion', 'notion', 'sweep');
    }, 120_000);

    afterAll(async () => {
      await gw?.stop();
    });

    it("relays the provider's 413 to 2 MB uploads it refuses early, never a 503", async () => {
      await expectEarlyRefusalsRelayed(gw, `embedded sandbox, ${store}`);
    });

    it('serves no HTML page (its own, or the sandbox consent page) another site may frame', async () => {
      await expectNoFramablePage(gw);
    });
  },
);

/** An HTML answer no other site may frame (clickjacking), with a policy of its own. */
function unframeable(res: Response): boolean {
  const policy = res.headers.get('content-security-policy') ?? '';
  return (
    res.headers.get('x-frame-options') === 'DENY' &&
    policy.includes("frame-ancestors 'none'") &&
    policy.includes("default-src 'none'")
  );
}

const UPLOAD_ROUNDS = 15;

/**
 * 2 MB uploads to Notion's sandbox, which refuses bodies over 1 MiB before reading them and closes
 * the connection: announced and chunked, again and again. Each is answered with Notion's own 413,
 * never with a retryable 503 "write EPIPE" (the upstream socket reset under the rest of the body).
 */
async function expectEarlyRefusalsRelayed(gw: GatewayProcess, label: string): Promise<void> {
  const bearer = await gw.remote.bearer();
  const body = paddedJson(2 * 1024 * 1024);
  const answers: Record<string, number> = {};
  for (let i = 0; i < UPLOAD_ROUNDS; i++) {
    for (const chunked of [false, true]) {
      const res = await fetch(`${gw.url}/proxy/v1/pages`, {
        method: 'POST',
        ...uploadBody(body, chunked),
        headers: {
          authorization: `Bearer ${bearer}`,
          'content-type': 'application/json',
          connection_name: 'notion',
          identifier: 'sweep',
        },
      }).catch((error: Error) => error);
      const answer =
        res instanceof Error
          ? `failed: ${res.message}`
          : `${res.status} ${(await res.text()).includes('"validation_error"') ? "Notion's" : 'another'}`;
      answers[answer] = (answers[answer] ?? 0) + 1;
    }
  }
  printFigures(`2 MB uploads the provider refuses early, ${label}`, [
    { uploads: UPLOAD_ROUNDS * 2, ...answers },
  ]);
  expect(answers).toEqual({ "413 Notion's": UPLOAD_ROUNDS * 2 });
}

/**
 * Every kind of HTML page the gateway serves, as a browser would reach it: the API documentation,
 * the dashboard, the hosted flow's pages (an unusable link, a failed callback) and the sandbox's
 * consent and error pages the link leads to.
 */
async function expectNoFramablePage(gw: GatewayProcess): Promise<void> {
  const created = await gw.remote.api('/api/v1/connected-accounts/authorization-link', {
    method: 'POST',
    json: { connection_name: 'notion', identifier: 'framed' },
  });
  const { link } = (await created.json()) as { link: string };
  const consent = new URL((await openLink(link)).headers.get('location')!);
  const refused = new URL(consent);
  refused.searchParams.set('client_id', 'nobody');
  const { id } = (await (await gw.remote.api('/api/v1/connections/notion')).json()) as { id: string };
  const pages = [
    `${gw.url}/docs`,
    `${gw.url}/docs/`,
    `${gw.url}/dashboard`,
    `${gw.url}/dashboard/`,
    `${gw.url}/connect/lnk_not-a-real-token`,
    `${gw.url}/sso/v1/oauth/${id}/callback?code=x&state=forged`,
    consent.href,
    refused.href,
  ];
  const framable: string[] = [];
  for (const url of pages) {
    const res = await fetch(url);
    if (!res.headers.get('content-type')?.startsWith('text/html') || !unframeable(res)) {
      framable.push(
        `${url} → ${res.status} ${res.headers.get('content-type')} x-frame-options=${res.headers.get('x-frame-options')} csp=${res.headers.get('content-security-policy')}`,
      );
    }
  }
  expect(framable).toEqual([]);
}
