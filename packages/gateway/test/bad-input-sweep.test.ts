import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * Every operation of the OpenAPI document, every parameter and body field, fed hostile values: NUL,
 * unpaired surrogates, a 1 MB string, deep nesting, the wrong type, unknown fields. Whatever the
 * route, the answer is a 4xx (a problem with a code, except the browser pages) — never a 5xx.
 */
const MB = 'x'.repeat(1024 * 1024);
const nested = (depth: number): unknown => {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
};
const HOSTILE_TEXT = ['\u0000', 'a\u0000b', '\ud800', 'x\udfff', MB, '../../etc/passwd', '%00', ' '];
const HOSTILE_VALUES: unknown[] = [...HOSTILE_TEXT, 12, true, null, [], {}, nested(300), [nested(100)]];

/** A value as a URL part; a lone surrogate cannot be UTF-8, so it goes as its raw (invalid) bytes. */
function urlPart(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return '%ED%A0%80';
  }
}

interface Operation {
  method: string;
  path: string;
  parameters: Array<{ in: string; name: string }>;
  bodyFields: string[];
}

describe.each(BACKENDS)('hostile input on every route on $name', (backend) => {
  let t: TestGateway;
  let operations: Operation[];

  beforeAll(async () => {
    t = await startTestGateway(backend);
    await sandboxAccount(t, { provider: 'notion', identifier: 'sweep' });
    const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { parameters?: Operation['parameters']; requestBody?: unknown }>>;
    };
    operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        // The proxy forwards whatever it gets to the provider (its own suite covers it); the
        // sandbox reset is no input at all.
        .filter(([, op]) => op && !path.startsWith('/proxy'))
        .map(([method, op]) => {
          const schema = (
            op.requestBody as {
              content?: Record<string, { schema?: { properties?: Record<string, unknown> } }>;
            }
          )?.content?.['application/json']?.schema;
          return {
            method: method.toUpperCase(),
            path,
            parameters: op.parameters ?? [],
            bodyFields: Object.keys(schema?.properties ?? {}),
          };
        }),
    );
  });

  afterAll(async () => {
    await t?.close();
  });

  async function expectRefusedOrFine(method: string, url: string, body?: unknown) {
    const token = await t.token().catch(() => undefined);
    const res = await fetch(`${t.url}${url}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    expect(res.status, `${method} ${url.slice(0, 120)} → ${res.status} ${text.slice(0, 200)}`).toBeLessThan(
      500,
    );
    const problem = res.headers.get('content-type')?.includes('application/problem+json');
    // The authorization endpoint is a page a person's browser opens: a request it refuses there
    // gets an error page, never a redirect to a redirect URI any client may have registered.
    const errorPage =
      url.startsWith('/mcp/oauth/authorize') && res.headers.get('content-type')?.includes('text/html');
    if (res.status >= 400 && url.startsWith('/mcp/oauth/') && !problem && !errorPage) {
      // MCP OAuth's endpoints answer as OAuth clients expect (RFC 6749 §5.2), not with problems
      // (what the HTTP parser refuses before any route, such as oversized headers, still is one).
      expect(res.headers.get('content-type'), `${method} ${url.slice(0, 80)}`).toContain('application/json');
      expect(typeof (JSON.parse(text) as { error?: unknown }).error).toBe('string');
    } else if (res.status >= 400 && !res.headers.get('content-type')?.includes('text/html')) {
      expect(res.headers.get('content-type'), `${method} ${url.slice(0, 80)}`).toContain(
        'application/problem+json',
      );
      expect(typeof (JSON.parse(text) as { code?: unknown }).code).toBe('string');
    }
  }

  const fill = (path: string, replace: Record<string, string> = {}) =>
    path.replace(/\{(\w+)\}/g, (_, name: string) => replace[name] ?? 'sweep-value');

  it('answers hostile path parameters with 4xx', async () => {
    for (const op of operations) {
      for (const param of op.parameters.filter((p) => p.in === 'path')) {
        for (const value of HOSTILE_TEXT) {
          await expectRefusedOrFine(op.method, fill(op.path, { [param.name]: urlPart(value) }));
        }
      }
    }
  });

  it('answers hostile query parameters with 4xx', async () => {
    for (const op of operations) {
      for (const param of op.parameters.filter((p) => p.in === 'query')) {
        for (const value of [...HOSTILE_TEXT, '-1', '1e309', 'true']) {
          await expectRefusedOrFine(op.method, `${fill(op.path)}?${param.name}=${urlPart(value)}`);
        }
      }
    }
  });

  it('answers hostile bodies and body fields with 4xx', async () => {
    for (const op of operations.filter((o) => o.bodyFields.length)) {
      const url = fill(op.path);
      for (const raw of ['{', '[]', '"text"', '1', 'null', '{"a":1}', JSON.stringify(nested(2000))]) {
        await expectRefusedOrFine(op.method, url, raw);
      }
      for (const field of op.bodyFields) {
        for (const value of HOSTILE_VALUES) {
          await expectRefusedOrFine(op.method, url, { [field]: value });
        }
      }
    }
  });
});
