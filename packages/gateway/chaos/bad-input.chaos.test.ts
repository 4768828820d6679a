import { type RunningEmulators, startEmulators } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../test/helpers/backends.js';
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
      if (res.status >= 500) {
        failures.push(`${method} ${url.slice(0, 80)} → ${res.status} ${text.slice(0, 160)}`);
      } else if (
        res.status >= 400 &&
        !html &&
        // A provider's own refusal is relayed as the provider wrote it.
        !(url.startsWith('/proxy') && !problem) &&
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
});
