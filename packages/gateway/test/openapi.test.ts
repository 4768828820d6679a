import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredRoutes } from '../src/http/openapi.js';
import { bodyAjv, queryAjv } from '../src/validation/validator.js';
import { BACKENDS } from './helpers/backends.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

describe('the OpenAPI document', () => {
  let t: TestGateway;
  let doc: { openapi: string; paths: Record<string, Record<string, unknown>> };

  beforeAll(async () => {
    t = await startTestGateway(BACKENDS[0]!);
    const res = await fetch(`${t.url}/openapi.json`);
    expect(res.status).toBe(200);
    doc = (await res.json()) as typeof doc;
  });

  afterAll(async () => {
    await t?.close();
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    await SwaggerParser.validate(structuredClone(doc) as never);
  });

  it('describes every route of Portico’s own, and none of the sandbox emulators', () => {
    const described = new Set(
      Object.entries(doc.paths).flatMap(([path, methods]) =>
        // OpenAPI's {id} is the router's :id, and its {*} the router's wildcard.
        Object.keys(methods).map(
          (m) => `${m.toUpperCase()} ${path.replace('{*}', '*').replace(/\{(\w+)\}/g, ':$1')}`,
        ),
      ),
    );
    const own = registeredRoutes(t.gateway.app).filter(
      (r) =>
        !r.url.startsWith('/sandbox') &&
        !r.url.startsWith('/docs') &&
        // The dashboard's static pages and files (its data comes from the documented /api/v1).
        !(r.url.startsWith('/dashboard') && r.method === 'GET') &&
        r.url !== '/openapi.json' &&
        r.method !== 'HEAD',
    );
    expect(own.length).toBeGreaterThan(20);
    const missing = own
      .filter((r) => !described.has(`${r.method} ${r.url}`))
      .map((r) => `${r.method} ${r.url}`);
    expect(missing).toEqual([]);
    expect([...described].filter((r) => r.split(' ')[1]!.startsWith('/sandbox/'))).toEqual([]);
  });

  it('has route schemas that all compile (they compile lazily at run time) and a gateway that says so', async () => {
    const parts: Array<[string, typeof bodyAjv]> = [
      ['body', bodyAjv],
      ['querystring', queryAjv],
      ['params', queryAjv],
      ['headers', queryAjv],
    ];
    let compiled = 0;
    for (const route of registeredRoutes(t.gateway.app)) {
      for (const [part, ajv] of parts) {
        const schema = route.schema?.[part];
        if (!schema) continue;
        expect(() => ajv.compile(schema as object), `${route.method} ${route.url} ${part}`).not.toThrow();
        compiled++;
      }
    }
    expect(compiled).toBeGreaterThan(30);
    // The gateway's own background pass after listening finds nothing to complain about either.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(t.logs.filter((l) => l.msg === 'a route schema does not compile')).toEqual([]);
  });

  it('is rendered at /docs from local assets', async () => {
    const page = await fetch(`${t.url}/docs/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toMatch(/swagger-ui/i);
    expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)[^"']*\.(js|css)/);
  });
});
