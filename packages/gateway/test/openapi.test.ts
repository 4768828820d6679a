import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/errors/problem.js';
import { registeredRoutes } from '../src/http/openapi.js';
import { OPERATIONS } from '../src/http/openapi-operations.js';
import { bodyAjv, queryAjv } from '../src/validation/validator.js';
import { BACKENDS } from './helpers/backends.js';
import { createSandboxConnection, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const BIN = (name: string) => path.join(ROOT, 'node_modules', '.bin', name);

type Operation = {
  operationId?: string;
  tags?: string[];
  summary?: string;
  description?: string;
  security?: unknown[];
  parameters?: Array<{ name: string; in: string }>;
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string }; example?: unknown }> }>;
};

describe('the OpenAPI document', () => {
  let t: TestGateway;
  let doc: {
    openapi: string;
    info: Record<string, unknown>;
    servers?: Array<{ url: string }>;
    paths: Record<string, Record<string, Operation>>;
    components: Record<string, Record<string, unknown>>;
  };

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
        // OpenAPI's {id} is the router's :id, and the proxy's {path} the router's wildcard.
        Object.keys(methods).map(
          (m) =>
            `${m.toUpperCase()} ${path.replace('/proxy/{path}', '/proxy/*').replace(/\{(\w+)\}/g, ':$1')}`,
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
        r.method !== 'HEAD' &&
        // CORS preflights of /mcp and its OAuth documents (the proxy's OPTIONS is an operation).
        !(r.method === 'OPTIONS' && !r.url.startsWith('/proxy')),
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

  it('is rendered at /docs from local assets, under Portico’s own name and logo', async () => {
    const page = await fetch(`${t.url}/docs/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toMatch(/swagger-ui/i);
    expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)[^"']*\.(js|css)/);
    expect(html).toMatch(/<title>Portico API<\/title>/);
    const init = await (await fetch(`${t.url}/docs/static/swagger-initializer.js`)).text();
    // The top bar shows Portico's mark, not Swagger's.
    const logo = /img\.src = 'data:image\/svg\+xml;base64,([^']+)'/.exec(init)?.[1];
    expect(Buffer.from(logo ?? '', 'base64').toString()).toContain('>Portico</text>');
  });
});

describe('the OpenAPI document, complete', () => {
  let t: TestGateway;
  let doc: {
    openapi: string;
    info: Record<string, unknown>;
    servers?: Array<{ url: string }>;
    tags?: Array<{ name: string; description?: string }>;
    paths: Record<string, Record<string, Operation>>;
    components: Record<string, Record<string, unknown>>;
  };
  let work: string;
  const operations = () =>
    Object.entries(doc.paths).flatMap(([p, methods]) =>
      Object.entries(methods).map(([m, op]) => ({ key: `${m.toUpperCase()} ${p}`, op })),
    );

  beforeAll(async () => {
    t = await startTestGateway(BACKENDS[0]!);
    doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as typeof doc;
    work = await mkdtemp(path.join(tmpdir(), 'portico-openapi-'));
    await writeFile(path.join(work, 'openapi.json'), JSON.stringify(doc));
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('names, tags and describes every operation, with unique camelCase operationIds', () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(80);
    const incomplete = ops
      .filter(({ op }) => !op.operationId || !op.summary || !op.description || op.tags?.length !== 1)
      .map(({ key }) => key);
    expect(incomplete).toEqual([]);
    const ids = ops.map(({ op }) => op.operationId!);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z][a-zA-Z0-9]*$/);
    const tagNames = new Set(doc.tags?.map((tag) => tag.name));
    for (const { key, op } of ops) expect(tagNames.has(op.tags![0]!), key).toBe(true);
    // Stable ids: a client generated from an earlier document keeps its method names.
    expect(doc.paths['/api/v1/tools/execute']?.post?.operationId).toBe('executeTool');
    expect(doc.paths['/oauth/token']?.post?.operationId).toBe('createGatewayToken');
    // Every entry of the metadata table names a route that exists.
    const described = new Set(
      ops.map(({ key }) => key.replace('/proxy/{path}', '/proxy/*').replace(/\{(\w+)\}/g, ':$1')),
    );
    const stale = Object.keys(OPERATIONS).filter((k) => !described.has(k) && k !== 'GET /metrics');
    expect(stale).toEqual([]);
  });

  it('gives every operation a success response and its problem responses, with the shared Problem schema', () => {
    const problem = doc.components.schemas?.Problem as { properties: { code: { enum: string[] } } };
    expect(problem.properties.code.enum.sort()).toEqual(Object.keys(ERROR_CODES).sort());
    for (const { key, op } of operations()) {
      const statuses = Object.keys(op.responses);
      expect(
        statuses.some((s) => /^[23]/.test(s)),
        `${key} has a success response`,
      ).toBe(true);
      const problems = statuses.filter((s) => /^[45]/.test(s));
      expect(problems.length, `${key} lists its problems`).toBeGreaterThan(0);
      for (const s of problems) {
        const media = op.responses[s]?.content?.['application/problem+json'];
        expect(media?.schema?.$ref, `${key} ${s}`).toBe('#/components/schemas/Problem');
        expect((media?.example as { status?: number } | undefined)?.status).toBe(Number(s));
      }
    }
    const execute = doc.paths['/api/v1/tools/execute']!.post!;
    expect(JSON.stringify(execute.responses['404'])).toContain('unknown_tool');
    expect(execute.responses['200']?.content?.['application/json']?.schema).toBeDefined();
  });

  it('declares the media type of every success answer that has a body: HTML pages, streams, NDJSON', async () => {
    const media = (path: string, method: string, status: string) =>
      Object.keys(doc.paths[path]?.[method]?.responses[status]?.content ?? {});
    expect(media('/connect/{token}', 'get', '200')).toEqual(['text/html']);
    expect(media('/connect/{token}', 'post', '200')).toEqual(['text/html']);
    expect(media('/approvals/decide/{token}', 'get', '200')).toEqual(['text/html']);
    expect(media('/approvals/decide/{token}', 'post', '200')).toEqual(['text/html']);
    expect(media('/api/v1/audit/export', 'get', '200')).toEqual(['application/x-ndjson']);
    for (const mcp of ['/mcp', '/mcp/e/{environment_id}']) {
      expect(media(mcp, 'get', '200')).toEqual(['text/event-stream']);
      expect(media(mcp, 'post', '200')).toEqual(['application/json']);
      expect(doc.paths[mcp]?.post?.responses['202']).toBeDefined();
      expect(doc.paths[mcp]?.delete?.responses['204']).toBeDefined();
    }
    // Bodies without a media type: only the RFC 7009 revocation (an empty 200) and HEAD.
    const bare = operations().flatMap(({ key, op }) =>
      Object.entries(op.responses)
        .filter(([s, r]) => /^2/.test(s) && s !== '202' && s !== '204' && !r.content)
        .map(([s]) => `${key} ${s}`),
    );
    expect(bare).toEqual(['POST /mcp/oauth/revoke 200', 'HEAD /proxy/{path} 200']);

    // What the routes send matches.
    const exported = await t.api('/api/v1/audit/export');
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    await exported.body?.cancel();
    await createSandboxConnection(t, 'openapi-pages', 'notion');
    const link = await t.api('/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      json: { connection_name: 'openapi-pages', identifier: 'user_openapi_html' },
    });
    expect(link.status).toBe(201);
    const landing = await fetch(((await link.json()) as { link: string }).link);
    expect(landing.status).toBe(200);
    expect(landing.headers.get('content-type')).toMatch(/^text\/html/);
    const stream = new AbortController();
    const events = await fetch(`${t.url}/mcp`, {
      headers: {
        authorization: `Bearer ${await t.token()}`,
        identifier: 'user_42',
        accept: 'text/event-stream',
      },
      signal: stream.signal,
    });
    expect(events.status).toBe(200);
    expect(events.headers.get('content-type')).toMatch(/^text\/event-stream/);
    stream.abort();
  });

  it('describes the proxy with a named path parameter, servers, security schemes and the licence', () => {
    expect(Object.keys(doc.paths).filter((p) => p.includes('{*}'))).toEqual([]);
    const proxy = doc.paths['/proxy/{path}']!;
    expect(Object.keys(proxy).sort()).toEqual(['delete', 'get', 'head', 'options', 'patch', 'post', 'put']);
    expect(proxy.get!.parameters?.map((p) => `${p.in}:${p.name}`)).toEqual(
      expect.arrayContaining(['path:path', 'header:connection_name', 'header:identifier']),
    );
    expect(doc.servers?.length).toBeGreaterThan(0);
    const schemes = doc.components.securitySchemes as Record<string, Record<string, unknown>>;
    expect(schemes.gatewayClientCredentials).toMatchObject({
      type: 'oauth2',
      flows: { clientCredentials: { tokenUrl: '/oauth/token' } },
    });
    expect(doc.paths['/oauth/token']!.post!.security).toEqual([]);
    expect(doc.info).toMatchObject({ title: 'Portico', license: { identifier: 'Apache-2.0' } });
  });

  it('passes the standard linter (Redocly, recommended rules) with 0 errors', async () => {
    const out = path.join(work, 'lint.json');
    const result = await run(
      BIN('redocly'),
      [
        'lint',
        path.join(work, 'openapi.json'),
        '--config',
        path.join(ROOT, 'redocly.yaml'),
        '--format',
        'json',
      ],
      {
        cwd: work,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    ).catch((error: { stdout: string; stderr: string }) => error);
    await writeFile(out, result.stdout);
    const report = JSON.parse(result.stdout) as {
      totals: { errors: number; warnings: number };
      problems: Array<{
        ruleId: string;
        severity: string;
        message: string;
        location: Array<{ pointer: string }>;
      }>;
    };
    const errors = report.problems
      .filter((p) => p.severity === 'error')
      .map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
    expect(errors).toEqual([]);
    expect(report.totals.errors).toBe(0);
    // Warnings too, except "no 2XX response" where that is the truth: redirects (the browser's
    // OAuth hops, and GET / on to the dashboard).
    const noSuccess = (pointer = '') =>
      /connect~1\{token\}\/post|callback|authorize|^#\/paths\/~1\/get\//.test(pointer);
    const warnings = report.problems
      .filter((p) => !(p.ruleId === 'operation-2xx-response' && noSuccess(p.location[0]?.pointer)))
      .map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
    expect(warnings).toEqual([]);
    expect(report.totals.warnings).toBeLessThanOrEqual(8);
  }, 60_000);

  it('generates a TypeScript client (openapi-typescript + openapi-fetch) that type-checks and calls the sandbox', async () => {
    await sandboxAccount(t, { provider: 'notion', identifier: 'user_42', connection: 'notion-sandbox' });
    await symlink(path.join(ROOT, 'node_modules'), path.join(work, 'node_modules'), 'dir');
    await run(
      BIN('openapi-typescript'),
      [path.join(work, 'openapi.json'), '-o', path.join(work, 'api.d.ts')],
      {
        cwd: work,
      },
    );
    // What a user writes: every path, body and response below is typed by the generated file, so
    // a wrong field name or path fails the type check.
    await writeFile(
      path.join(work, 'client.ts'),
      `import createClient from 'openapi-fetch';
import type { paths } from './api.js';

const [baseUrl, clientId, clientSecret] = process.argv.slice(2) as [string, string, string];
const api = createClient<paths>({ baseUrl });
const token = await api.POST('/oauth/token', {
  body: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
  bodySerializer: (body) => JSON.stringify(body),
});
if (!token.data) throw new Error(JSON.stringify(token.error));
const accessToken: string = token.data.access_token;
const headers = { authorization: \`Bearer \${accessToken}\` };
const tools = await api.GET('/api/v1/tools', { params: { query: { provider: 'notion' } }, headers });
const names: string[] = (tools.data?.data ?? []).map((tool) => tool.name);
const result = await api.POST('/api/v1/tools/execute', {
  body: { tool_name: 'notes_data_fetch', identifier: 'user_42', tool_input: { query: 'roadmap' } },
  headers,
});
const missing = await api.GET('/api/v1/tools/{name}', { params: { path: { name: 'no_such_tool' } }, headers });
console.log(
  JSON.stringify({
    names,
    execution_id: result.data?.execution_id,
    error: result.error,
    missing: { status: missing.response.status, code: missing.error?.code },
  }),
);
`,
    );
    await writeFile(
      path.join(work, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          skipLibCheck: true,
          outDir: 'out',
          types: ['node'],
          typeRoots: [path.join(ROOT, 'node_modules', '@types')],
        },
        files: ['client.ts'],
      }),
    );
    await writeFile(path.join(work, 'package.json'), JSON.stringify({ type: 'module' }));
    await run(BIN('tsc'), ['-p', work], { cwd: work }).catch((error: { stdout: string }) => {
      throw new Error(`the generated client does not type-check:\n${error.stdout}`);
    });
    const { stdout } = await run(process.execPath, [
      path.join(work, 'out', 'client.js'),
      t.url,
      t.clientId,
      t.clientSecret,
    ]);
    const outcome = JSON.parse(stdout) as {
      names: string[];
      execution_id?: string;
      error?: unknown;
      missing: { status: number; code?: string };
    };
    expect(outcome.names).toContain('notes_data_fetch');
    expect(outcome.error).toBeUndefined();
    expect(outcome.execution_id).toMatch(/\w/);
    expect(outcome.missing).toEqual({ status: 404, code: 'unknown_tool' });
  }, 120_000);
});
