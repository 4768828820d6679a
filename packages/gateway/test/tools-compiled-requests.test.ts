import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv } from 'ajv';
import { beforeAll, describe, expect, it } from 'vitest';
import { compileSource, descriptionPath } from '../src/tools/compiled/build.js';
import { DESCRIPTIONS } from '../src/tools/compiled/descriptions.js';
import type { CompiledOperation, JsonSchema } from '../src/tools/compiled/operation.js';
import { buildRequest } from '../src/tools/compiled/request.js';
import { bodyAjv } from '../src/validation/validator.js';

// The independent validator: openapi-request-validator (kogosoftwarellc/open-api) checks each
// request against the provider's own description; Google's discovery documents are first turned
// into Swagger 2.0 by google-discovery-to-swagger (APIs.guru). Neither shares code with the compiler.
const require = createRequire(import.meta.url);
const OpenAPIRequestValidator = require('openapi-request-validator').default as new (
  args: Record<string, unknown>,
) => { validateRequest(request: Record<string, unknown>): { errors: unknown[] } | undefined };
const discoveryToSwagger = require('google-discovery-to-swagger') as { convert(doc: unknown): SourceDoc };

type SourceDoc = {
  basePath?: string;
  servers?: { url: string }[];
  paths: Record<
    string,
    Record<string, { operationId?: string; parameters?: unknown[]; requestBody?: unknown }>
  >;
  components?: { schemas?: Record<string, unknown> };
  definitions?: Record<string, unknown>;
};

/** A value the input schema accepts: what an agent would send at the least. */
function sample(schema: JsonSchema | undefined): unknown {
  if (!schema) return {};
  if (Array.isArray(schema.enum)) return schema.enum.find((v) => v !== null) ?? null;
  if (Array.isArray(schema.anyOf)) {
    const branch = (schema.anyOf as JsonSchema[]).find((b) => b.type !== 'null') ?? {};
    const { anyOf: _, ...base } = schema;
    const own = sample(branch);
    if (!Object.keys(base).length) return own;
    const merged = sample(base);
    return merged && typeof merged === 'object' && own && typeof own === 'object'
      ? {
          ...merged,
          ...(sample({
            ...branch,
            properties: { ...(base.properties as object), ...(branch.properties as object) },
          }) as object),
        }
      : own;
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return sampleString(schema);
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return true;
    case 'array': {
      const n = Number(schema.minItems ?? 0);
      return Array.from({ length: n }, () => sample(schema.items as JsonSchema));
    }
    case 'object':
    case undefined: {
      const out: Record<string, unknown> = {};
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      for (const key of (schema.required as string[] | undefined) ?? []) out[key] = sample(properties[key]);
      return out;
    }
    default:
      return null;
  }
}

/** Strings of the shapes parameters declare; the first the schema accepts is used. */
const STRINGS = [
  // Shaped as a UUID: a plain string to most parameters, and the id format Notion's declare.
  '4f2c3b1a-0d9e-4c8b-9a7f-1e2d3c4b5a69',
  '1.0.0',
  'QUJD',
  `sha256:${'a'.repeat(64)}`,
  'https://example.com/',
  'refs/heads/main',
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA',
  'a'.repeat(40),
  'abc',
  'a',
  '1',
];

function sampleString(schema: JsonSchema): string {
  if (schema.format === 'date-time') return '2026-01-02T03:04:05Z';
  if (schema.format === 'date') return '2026-01-02';
  if (schema.format === 'email') return 'someone@example.com';
  if (schema.format === 'uri') return 'https://example.com/';
  const fits = (s: string) =>
    (schema.pattern === undefined || new RegExp(schema.pattern as string, 'u').test(s)) &&
    s.length >= Number(schema.minLength ?? 0) &&
    s.length <= Number(schema.maxLength ?? Number.POSITIVE_INFINITY);
  return STRINGS.find(fits) ?? STRINGS[0]!;
}

function sampleInput(op: CompiledOperation): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  const properties = op.input.properties as Record<string, JsonSchema>;
  for (const key of (op.input.required as string[] | undefined) ?? []) input[key] = sample(properties[key]);
  // The optional query parameters too, where a scalar will do: they must land where the source says.
  for (const param of op.params) {
    if (param.required || param.in !== 'query') continue;
    const schema = properties[param.key]!;
    if (['string', 'integer', 'boolean'].includes(schema.type as string)) input[param.key] = sample(schema);
  }
  return input;
}

function deref(doc: SourceDoc, value: unknown): Record<string, unknown> {
  let node = value as Record<string, unknown>;
  while (node && typeof node.$ref === 'string') {
    node = (node.$ref as string)
      .slice(2)
      .split('/')
      .reduce<Record<string, unknown>>((at, part) => at[part] as Record<string, unknown>, doc as never);
  }
  return node;
}

/** The component schemas a value reaches (the validator compiles every schema it is given). */
function reachable(all: Record<string, unknown>, roots: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const visit = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')) {
        const name = value.slice('#/components/schemas/'.length);
        if (!(name in out) && name in all) {
          out[name] = all[name];
          visit(all[name]);
        }
      } else visit(value);
    }
  };
  roots.forEach(visit);
  return out;
}

function sourceDocument(format: string, path: string): SourceDoc {
  const raw = JSON.parse(readFileSync(path, 'utf8'));
  if (format === 'discovery') return discoveryToSwagger.convert(raw);
  // The validator's Ajv refuses OpenAPI 3.0's `nullable` beside no `type` (GitHub has a few): drop
  // it there; the samples never send null.
  const visit = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    const object = node as Record<string, unknown>;
    if (object.nullable === true && object.type === undefined) delete object.nullable;
    Object.values(object).forEach(visit);
  };
  visit(raw);
  return raw;
}

/**
 * The validator expands request-body schemas without stopping at cycles, and Graph's reach
 * themselves through anyOf (driveItem → listItem → driveItem): for Graph, the validator checks the
 * parameters and Ajv checks the body against the source's own schema, references and all.
 */
const AJV_BODIES = new Set(['sharepoint', 'outlook', 'microsoft_teams']);

/** One Ajv per source document, holding its components, so references resolve where they point. */
const sourceAjvs = new WeakMap<SourceDoc, Ajv>();

function sourceBodyErrors(doc: SourceDoc, requestBody: Record<string, unknown>, body: unknown): unknown {
  let ajv = sourceAjvs.get(doc);
  if (!ajv) {
    ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false });
    ajv.addSchema({ $id: 'source', components: doc.components }, 'source');
    sourceAjvs.set(doc, ajv);
  }
  const content = requestBody.content as Record<string, { schema?: unknown }>;
  const schema = Object.entries(content).find(([type]) => /json/.test(type))?.[1].schema ?? {};
  const rooted = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"source#/components/'));
  const check = ajv.compile(rooted);
  return check(body ?? {}) ? undefined : check.errors;
}

/** Operations per test: the validator compiles each operation's schemas, a few ms each. */
const CHUNK = 150;
const CHUNKS: Record<string, number> = { github: 9, sharepoint: 2, outlook: 2, microsoft_teams: 3 };

describe.each(DESCRIPTIONS.map((d) => [d.file, d] as const))('compiled tools of %s', (_file, source) => {
  let catalog: Awaited<ReturnType<typeof compileSource>>;
  let doc: SourceDoc;
  beforeAll(async () => {
    catalog = await compileSource(source);
    doc = sourceDocument(source.format, descriptionPath(source));
  });
  // Large descriptions (GitHub's 1,200 operations, Graph's deep schemas) in chunks, so no one test
  // runs long on a loaded machine.
  const chunks = CHUNKS[source.provider] ?? 1;
  it.each(Array.from({ length: chunks }, (_, i) => i))(
    'each request of chunk %i is valid against the source description',
    (chunk) => {
      const ops =
        chunks === 1 ? catalog.operations : catalog.operations.slice(chunk * CHUNK, (chunk + 1) * CHUNK);
      const byId = new Map<string, { path: string; method: string; op: Record<string, unknown> }>();
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(item)) {
          if (op && typeof op === 'object' && op.operationId) byId.set(op.operationId, { path, method, op });
        }
      }
      expect(catalog.operations.length).toBeGreaterThan(0);
      // The chunks cover every operation: a grown catalog needs more chunks, not fewer checks.
      expect(chunks === 1 || chunks * CHUNK >= catalog.operations.length).toBe(true);
      const failures: string[] = [];
      for (const op of ops) {
        const found = byId.get(op.operationId);
        if (!found) {
          failures.push(`${op.name}: no operation ${op.operationId} in the source`);
          continue;
        }
        const input = sampleInput(op);
        const validate = bodyAjv.compile(op.input);
        if (!validate(structuredClone(input))) {
          failures.push(`${op.name}: its own sample fails its schema: ${JSON.stringify(validate.errors)}`);
          continue;
        }
        const request = buildRequest(op, input);
        if (request.method.toLowerCase() !== found.method)
          failures.push(`${op.name}: method ${request.method}`);
        // Swagger 2.0 says the base path as `basePath`, OpenAPI 3 in its server URL (Graph's /v1.0).
        const basePath =
          doc.basePath ?? (doc.servers?.[0] ? new URL(doc.servers[0].url).pathname.replace(/\/$/, '') : '');
        const template = `${basePath}${found.path}`.replace(/\/+/g, '/').replace(/(.)\/$/, '$1');
        const names: string[] = [];
        // A path the source writes with a trailing slash (HubSpot's `/crm/v3/owners/`) is sent so.
        const pattern = new RegExp(
          `^${template.replace(/[.*?^$()|[\]\\]/g, '\\$&').replace(/\{\+?([^}]+)\}/g, (_m, name: string) => {
            names.push(name);
            return '([^/]+)';
          })}/?$`,
        );
        const match = pattern.exec(request.path);
        if (!match) {
          failures.push(`${op.name}: path ${request.path} is not ${template}`);
          continue;
        }
        // Path values arrive as text; the validator does not coerce, so numbers are given as numbers.
        const params = Object.fromEntries(
          names.map((n, i) => {
            const value = decodeURIComponent(match[i + 1]!);
            return [n, /^-?\d+$/.test(value) ? Number(value) : value];
          }),
        );
        const item = doc.paths[found.path]!;
        const parameters = [
          ...((item.parameters as unknown[]) ?? []),
          ...((found.op.parameters as unknown[]) ?? []),
        ].map((p) => deref(doc, p));
        const requestBody = found.op.requestBody ? deref(doc, found.op.requestBody) : undefined;
        const againstSource = (withBody: boolean) =>
          new OpenAPIRequestValidator({
            parameters,
            ...(withBody && requestBody ? { requestBody } : {}),
            ...(doc.components?.schemas
              ? { componentSchemas: reachable(doc.components.schemas, [withBody && requestBody, parameters]) }
              : {}),
            ...(doc.definitions ? { schemas: doc.definitions } : {}),
          }).validateRequest({
            headers: { 'content-type': 'application/json', ...request.headers },
            body: request.json ?? (parameters.some((p) => p.in === 'body') ? {} : undefined),
            params,
            query: request.query ?? {},
          });
        const bodyByAjv = requestBody !== undefined && AJV_BODIES.has(source.provider);
        const result = againstSource(!bodyByAjv);
        if (bodyByAjv) {
          const errors = sourceBodyErrors(doc, requestBody, request.json);
          if (errors) failures.push(`${op.name}: body ${JSON.stringify(errors).slice(0, 400)}`);
        }
        if (result?.errors?.length)
          failures.push(`${op.name}: ${JSON.stringify(result.errors).slice(0, 400)}`);
      }
      expect(failures).toEqual([]);
    },
  );

  it('compiles every operation of the description but those whose body is not JSON', () => {
    let count = 0;
    for (const item of Object.values(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (['get', 'post', 'put', 'patch', 'delete'].includes(method) && op?.operationId) count += 1;
      }
    }
    expect(catalog.operations.length + catalog.skipped.length).toBe(count);
    if (chunks > 1) expect(catalog.operations.length).toBeLessThanOrEqual(chunks * CHUNK);
  });
});
