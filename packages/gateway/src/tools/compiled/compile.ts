import {
  annotationsFor,
  type CompiledOperation,
  type CompiledParameter,
  describeOperation,
  HTTP_METHODS,
  type HttpMethod,
  type JsonSchema,
  parameterNote,
  prefixedAction,
  toolName,
} from './operation.js';
import { convertSchema, newBudget, type SchemaDialect, schemaName } from './schema.js';

/** What the compiler is told of the provider the description is for. */
export interface ProviderFacts {
  key: string;
  displayName: string;
  /** The provider's API base (its definition's `api.base_url`): every path is under it. */
  baseUrl: string;
  /** Headers the provider's definition sends itself (lower case): not parameters of a tool. */
  ownHeaders: string[];
  /** The API version header, when the provider has one: set to the description's version. */
  versionHeader?: string | undefined;
  /** Curated lines for the most-used operations, by tool name. */
  curated?: Record<string, string>;
}

/** How one description's tools are named, beside the provider's facts. */
export interface NamingOptions {
  /**
   * The words every tool of the description starts with after the provider's key, for a provider
   * described in several documents whose operationIds do not say which (HubSpot's `contacts`).
   */
  prefix?: string | undefined;
  /** Names already given by the provider's other descriptions: a clash is numbered. */
  taken?: Set<string>;
}

export interface CompileResult {
  operations: CompiledOperation[];
  skipped: { operationId: string; reason: string }[];
}

/** Reserved input names: the body goes under `body`. */
const BODY = 'body';

function finish(
  facts: ProviderFacts,
  base: Omit<CompiledOperation, 'description' | 'annotations' | 'input'>,
  words: string[],
  paramSchemas: Map<string, JsonSchema>,
  bodySchema: JsonSchema | undefined,
  bodyType: string | undefined,
  action?: string,
): CompiledOperation {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const param of base.params) {
    properties[param.key] = { ...paramSchemas.get(param.key), description: parameterNote(param) };
    if (param.required) required.push(param.key);
  }
  if (base.body) {
    properties[BODY] = {
      ...(bodySchema ?? {}),
      description: `the JSON request body${bodyType ? `, a ${bodyType}` : ''}`,
    };
    if (base.body.required) required.push(BODY);
  }
  return {
    ...base,
    input: {
      type: 'object',
      properties,
      ...(required.length ? { required } : {}),
      additionalProperties: false,
    },
    description: describeOperation(
      base,
      facts.displayName,
      words,
      bodyType,
      facts.curated?.[base.name],
      action,
    ),
    annotations: annotationsFor(base.method, base.name),
  };
}

/** Makes names unique within a provider: a clash keeps the first and numbers the others. */
function uniqueName(name: string, taken: Set<string>): string {
  let candidate = name;
  for (let i = 2; taken.has(candidate); i++) candidate = toolName('', `${name}_${i}`).slice(1);
  taken.add(candidate);
  return candidate;
}

function pathPrefix(facts: ProviderFacts, server: string): string {
  const base = new URL(facts.baseUrl);
  const url = new URL(server);
  if (url.origin !== base.origin) {
    throw new Error(
      `${facts.key}: the description's server ${server} is not the provider's base ${facts.baseUrl}`,
    );
  }
  return url.pathname.replace(/\/+$/, '');
}

// ---------------------------------------------------------------------------------------------
// OpenAPI 3.0 and 3.1

type OpenApiDocument = {
  openapi: string;
  info: { version: string };
  servers?: { url: string }[];
  paths: Record<string, Record<string, unknown>>;
  components?: Record<string, Record<string, JsonSchema>>;
};

function openApiDialect(doc: OpenApiDocument): SchemaDialect & { deref<T>(value: T): T } {
  const lookup = (ref: string): JsonSchema | undefined => {
    if (!ref.startsWith('#/')) return undefined;
    let node: unknown = doc;
    for (const part of ref.slice(2).split('/')) {
      node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    return node as JsonSchema | undefined;
  };
  return {
    resolve(schema) {
      const ref = schema.$ref;
      if (typeof ref !== 'string') return undefined;
      const target = lookup(ref);
      return target ? { name: ref.split('/').at(-1)!, schema: target } : { name: ref, schema: {} };
    },
    deref<T>(value: T): T {
      let current = value as unknown;
      for (let i = 0; i < 8 && current && typeof (current as JsonSchema).$ref === 'string'; i++) {
        current = lookup((current as JsonSchema).$ref as string);
      }
      return current as T;
    },
  };
}

interface OpenApiParameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: JsonSchema;
}

/**
 * A parameter's name as an input key: OData's `$top` as `top`, Graph's `site-id` as `site_id`
 * (keys an agent types, and that every LLM API accepts); the request still sends the real name.
 */
function inputKey(name: string): string {
  return name.replace(/^\$/, '').replace(/[^A-Za-z0-9_]+/g, '_') || name;
}

/** Graph's generator makes clashing operationIds unique with a hash (`delta-90ce`): not words. */
const GENERATED_SUFFIX = /-(?=[0-9a-f]*[0-9])[0-9a-f]{4}$/;

/**
 * The words of an operationId. Graph's are dotted navigation paths that name each entity twice,
 * plural then singular (`drives.drive.items.driveItem.delta-90ce`): the singular and the hash
 * are dropped, so the tool is `…_drives_items_delta`.
 */
function operationWords(operationId: string): string[] {
  const segments = operationId.replace(GENERATED_SUFFIX, '').split('.');
  const kept = segments.filter((segment, i) => {
    const previous = segments[i - 1]?.toLowerCase().replace(/s$/, '');
    return !(previous && i < segments.length - 1 && segment.toLowerCase().endsWith(previous));
  });
  return kept
    .join('.')
    .split(/[^a-zA-Z0-9]+/)
    .filter(Boolean);
}

/** HubSpot's operationIds: `<method>-<path>_<name>`, e.g. `get-/crm/v3/objects/contacts/{contactId}_getById`. */
const PATH_OPERATION_ID = /^[a-z]+-\/.*_([A-Za-z0-9]+)$/;

/** API groups whose name says nothing of the operation: the tool leaves them out. */
const PLAIN_GROUPS = new Set(['basic', 'core']);

/**
 * The words of an operation in a description that has a prefix: the prefix, the operation's group
 * (its first tag, e.g. HubSpot's `Batch`) and its own name (the operationId's last part, e.g.
 * `getById`). The group is left out when it is plain (`Basic`), when the prefix already says it
 * (`Owners` under `owners`) or when the name does (`Search` of `doSearch`); the generated client's
 * `do` (`doSearch`) is not a word. So: `contacts_get_by_id`, `contacts_batch_create`,
 * `contacts_search`, `properties_groups_get_all`.
 */
function prefixedWords(
  prefix: string,
  operationId: string,
  tag: string | undefined,
): { words: string[]; action: string } {
  const own = PATH_OPERATION_ID.exec(operationId)?.[1] ?? operationId;
  const name = snakeWords([own]).filter((w, i) => !(i === 0 && w === 'do'));
  const prefixWords = prefix.split('_');
  const group = tag ? snakeWords([tag.replace(/\s+/g, '')]) : [];
  const groupSaid =
    group.length === 0 ||
    PLAIN_GROUPS.has(group.join('_')) ||
    group.join('_') === prefixWords.join('_') ||
    group.every((w) => name.includes(w));
  const kept = groupSaid ? [] : group;
  return {
    words: [...prefixWords, ...kept, ...name],
    action: prefixedAction(
      prefixWords.map((w) => (/^v\d+$/.test(w) ? `(${w})` : w)),
      kept,
      name,
    ),
  };
}

/** One tool per operation of an OpenAPI 3.x description. */
export function compileOpenApi(
  doc: OpenApiDocument,
  facts: ProviderFacts,
  naming: NamingOptions = {},
): CompileResult {
  if (!/^3\./.test(doc.openapi)) throw new Error(`${facts.key}: not an OpenAPI 3 description`);
  const dialect = openApiDialect(doc);
  const prefix = pathPrefix(facts, doc.servers?.[0]?.url ?? facts.baseUrl);
  const operations: CompiledOperation[] = [];
  const skipped: CompileResult['skipped'] = [];
  const taken = naming.taken ?? new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) {
    const shared = (item.parameters as OpenApiParameter[] | undefined) ?? [];
    for (const method of HTTP_METHODS) {
      const op = item[method.toLowerCase()] as
        | { operationId?: string; tags?: string[]; parameters?: OpenApiParameter[]; requestBody?: unknown }
        | undefined;
      if (!op) continue;
      const operationId = op.operationId ?? `${method} ${path}`;
      const byKey = new Map<string, OpenApiParameter>();
      for (const raw of [...shared, ...(op.parameters ?? [])]) {
        const param = dialect.deref(raw);
        if (param && ['path', 'query', 'header'].includes(param.in))
          byKey.set(`${param.in}:${param.name}`, param);
      }
      const headers: Record<string, string> = {};
      const params: CompiledParameter[] = [];
      const paramSchemas = new Map<string, JsonSchema>();
      const budget = newBudget(dialect);
      for (const param of byKey.values()) {
        const lower = param.name.toLowerCase();
        if (param.in === 'header' && facts.versionHeader === lower) {
          // The description is of one API version: its calls say so.
          const fixed = param.schema?.default ?? (param.schema?.enum as unknown[] | undefined)?.[0];
          if (typeof fixed === 'string') headers[lower] = fixed;
          continue;
        }
        if (param.in === 'header' && facts.ownHeaders.includes(lower)) continue;
        let key = inputKey(param.name);
        if (key === BODY || params.some((p) => p.key === key)) key = `${param.in}_${key}`;
        params.push({
          key,
          name: param.name,
          in: param.in as CompiledParameter['in'],
          required: param.in === 'path' || param.required === true,
        });
        paramSchemas.set(key, convertSchema(param.schema, budget));
      }
      let body: CompiledOperation['body'];
      let bodySchema: JsonSchema | undefined;
      let bodyType: string | undefined;
      const requestBody = dialect.deref(op.requestBody) as
        | { required?: boolean; content?: Record<string, { schema?: JsonSchema }> }
        | undefined;
      if (requestBody?.content) {
        const json = Object.entries(requestBody.content).find(([type]) => /json/.test(type));
        if (!json) {
          skipped.push({
            operationId,
            reason: `its body is ${Object.keys(requestBody.content).join(', ')}, not JSON`,
          });
          continue;
        }
        body = { required: requestBody.required === true };
        bodyType = schemaName(json[1].schema, dialect);
        bodySchema = convertSchema(json[1].schema, budget);
      }
      const prefixed = naming.prefix ? prefixedWords(naming.prefix, operationId, op.tags?.[0]) : undefined;
      const words = prefixed?.words ?? operationWords(operationId);
      const name = uniqueName(toolName(facts.key, words.join('_')), taken);
      operations.push(
        finish(
          facts,
          {
            name,
            provider: facts.key,
            operationId,
            method,
            path: `${prefix}${path}`,
            params,
            ...(body ? { body } : {}),
            ...(Object.keys(headers).length ? { headers } : {}),
          },
          snakeWords(words),
          paramSchemas,
          bodySchema,
          bodyType,
          prefixed?.action,
        ),
      );
    }
  }
  return { operations, skipped };
}

// ---------------------------------------------------------------------------------------------
// Google's discovery format

type DiscoveryParameter = JsonSchema & { location?: string; required?: boolean };
type DiscoveryMethod = {
  id: string;
  path: string;
  httpMethod: string;
  parameters?: Record<string, DiscoveryParameter>;
  parameterOrder?: string[];
  request?: JsonSchema;
};
type DiscoveryResource = {
  methods?: Record<string, DiscoveryMethod>;
  resources?: Record<string, DiscoveryResource>;
};
type DiscoveryDocument = DiscoveryResource & {
  kind: string;
  version: string;
  revision?: string;
  rootUrl: string;
  servicePath: string;
  schemas?: Record<string, JsonSchema>;
  parameters?: Record<string, DiscoveryParameter>;
};

function* methodsOf(resource: DiscoveryResource): Generator<DiscoveryMethod> {
  for (const method of Object.values(resource.methods ?? {})) yield method;
  for (const child of Object.values(resource.resources ?? {})) yield* methodsOf(child);
}

/** One tool per method of a Google discovery document. */
export function compileDiscovery(doc: DiscoveryDocument, facts: ProviderFacts): CompileResult {
  if (doc.kind !== 'discovery#restDescription') throw new Error(`${facts.key}: not a discovery document`);
  const schemas = doc.schemas ?? {};
  const dialect: SchemaDialect = {
    resolve(schema) {
      const ref = schema.$ref;
      if (typeof ref !== 'string') return undefined;
      return { name: ref, schema: schemas[ref] ?? {} };
    },
  };
  const prefix = `${pathPrefix(facts, doc.rootUrl)}/${doc.servicePath}`.replace(/\/+$/, '');
  const operations: CompiledOperation[] = [];
  const taken = new Set<string>();
  for (const method of methodsOf(doc)) {
    const verb = method.httpMethod.toUpperCase() as HttpMethod;
    if (!HTTP_METHODS.includes(verb)) continue;
    const budget = newBudget(dialect);
    const params: CompiledParameter[] = [];
    const paramSchemas = new Map<string, JsonSchema>();
    const order = [
      ...(method.parameterOrder ?? []),
      ...Object.keys(method.parameters ?? {}).filter((n) => !(method.parameterOrder ?? []).includes(n)),
    ];
    // Of the parameters every method takes, only `fields` is kept: some methods answer nothing
    // useful without it (Drive's about.get), and it is structure, not transport.
    const shared = doc.parameters?.fields ? { fields: doc.parameters.fields } : {};
    for (const name of [...order, ...Object.keys(shared).filter((n) => !order.includes(n))]) {
      const param = method.parameters?.[name] ?? shared[name as 'fields'];
      if (!param || (param.location !== 'path' && param.location !== 'query')) continue;
      const key = name === BODY ? `${param.location}_${name}` : name;
      const reserved = method.path.includes(`{+${name}}`);
      params.push({
        key,
        name,
        in: param.location,
        required: param.location === 'path' || param.required === true,
        ...(reserved ? { reserved } : {}),
      });
      const schema = convertSchema(param, budget);
      // Discovery says a repeated query parameter with `repeated`; the request sends each value.
      paramSchemas.set(
        key,
        param.repeated === true ? { anyOf: [schema, { type: 'array', items: schema }] } : schema,
      );
    }
    const words = method.id.split('.').slice(1);
    const name = uniqueName(toolName(facts.key, words.join('_')), taken);
    operations.push(
      finish(
        facts,
        {
          name,
          provider: facts.key,
          operationId: method.id,
          method: verb,
          path: `${prefix}/${method.path.replace(/\{\+/g, '{')}`,
          params,
          ...(method.request ? { body: { required: true } } : {}),
        },
        snakeWords(words),
        paramSchemas,
        method.request ? convertSchema(method.request, budget) : undefined,
        method.request ? schemaName(method.request, dialect) : undefined,
      ),
    );
  }
  return { operations, skipped: [] };
}

function snakeWords(words: string[]): string[] {
  return words.flatMap((w) =>
    w
      .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
      .toLowerCase()
      .split('_')
      .filter(Boolean),
  );
}
