import { readFileSync } from 'node:fs';
import type { FieldError } from '../errors/problem.js';
import { patternFault } from '../validation/linear-pattern.js';
import { bodyAjv, toFieldErrors } from '../validation/validator.js';
import { matches, readOne } from './json-paths.js';
import type { ProviderDefinition, ProviderErrorDescription, ProviderParameter } from './types.js';

/** The JSON Schema of a provider definition: one file, read by this module, the docs and editors. */
export const PROVIDER_SCHEMA_URL = new URL('../../providers/provider.schema.json', import.meta.url);
export const providerSchema = JSON.parse(readFileSync(PROVIDER_SCHEMA_URL, 'utf8')) as Record<
  string,
  unknown
>;
const validateSchema = bodyAjv.compile(providerSchema);

/** A definition as written: the JSON Schema's shape, after its defaults are applied. */
export interface DefinitionJson {
  key: string;
  display_name: string;
  category?: string;
  docs_url?: string;
  auth: {
    kind: 'oauth2' | 'api_key' | 'basic' | 'mcp';
    [field: string]: unknown;
  };
  api: {
    base_url: string;
    credential?: { in: 'header' | 'query'; name: string; value?: string };
    default_headers?: Record<string, string>;
    version_header?: string;
    path_rewrites?: ProviderDefinition['api']['pathRewrites'];
    rate_limits?: Array<{ requests: number; per_seconds: number; scope: 'account' | 'connection' }>;
    errors?: {
      message?: string[];
      rate_limited?: Array<{ path: string; equals: unknown[] }>;
      conflict?: Array<{ path: string; equals: unknown[] }>;
    };
  };
  parameters?: ProviderParameter[];
  user_info?: {
    url: string;
    method?: 'GET' | 'POST';
    id?: string;
    label?: string;
    ok?: { path: string; equals: Array<string | number | boolean> };
  };
  setup?: ProviderDefinition['setup'];
  tool_prefix?: string;
  sandbox?: { emulator?: 'notion' | 'google' | 'hubspot' | 'microsoft' };
  mcp?: { url: string; transport?: 'streamable_http' | 'sse'; checked?: string };
}

/** A validated JSON object, read without a type per field. */
// biome-ignore lint/suspicious/noExplicitAny: the schema validated this shape; the fields are copied one by one.
type Loose = Record<string, any>;

/**
 * Bounds on a definition, checked before anything else reads it (schema, patterns, compiling): a
 * definition is a caller's word, kept in memory by every replica and played by the sandbox. The
 * largest built-in definition is about 3.5 KB, with no string over 310 characters.
 */
export const DEFINITION_LIMITS = {
  /** Bytes of the definition as JSON. */
  maxBytes: 64 * 1024,
  /** Characters of any one string in it, property names included. */
  maxStringLength: 2048,
} as const;

/** A definition over DEFINITION_LIMITS.maxBytes (refused as 413 payload_too_large). */
export class DefinitionTooLargeError extends Error {
  constructor() {
    super(
      `A provider definition may be at most ${DEFINITION_LIMITS.maxBytes.toLocaleString('en')} bytes of JSON, and this one is larger (the largest built-in one is about 3,500); remove what the provider does not need, such as long help texts.`,
    );
    this.name = 'DefinitionTooLargeError';
  }
}

/**
 * The strings of a definition that are too long; throws DefinitionTooLargeError once its size as
 * JSON is over the limit, where the walk stops (a huge body costs no more than that much of it).
 */
function sizeFaults(input: unknown): FieldError[] {
  const errors: FieldError[] = [];
  const max = DEFINITION_LIMITS.maxStringLength;
  let bytes = 0;
  const text = (value: string, path: string, what: 'value' | 'property name') => {
    bytes += Buffer.byteLength(value) + 3;
    if (value.length > max && errors.length < 20)
      errors.push({
        path,
        message: `${what === 'value' ? 'is' : 'has a property name'} ${value.length.toLocaleString('en')} characters long; a definition's strings may have at most ${max.toLocaleString('en')}`,
      });
  };
  const walk = (value: unknown, path: string): void => {
    if (bytes > DEFINITION_LIMITS.maxBytes) return;
    if (typeof value === 'string') text(value, path, 'value');
    else if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) walk(item, `${path}/${i}`);
    } else if (value && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        const at = `${path}/${key.slice(0, 64).replaceAll('~', '~0').replaceAll('/', '~1')}`;
        text(key, at, 'property name');
        walk(item, at);
      }
    } else bytes += String(value).length + 1;
  };
  walk(input, '');
  if (bytes > DEFINITION_LIMITS.maxBytes) throw new DefinitionTooLargeError();
  return errors;
}

export class InvalidDefinitionError extends Error {
  constructor(readonly errors: FieldError[]) {
    super(errors.map((e) => `${e.path} ${e.message}`).join('; '));
    this.name = 'InvalidDefinitionError';
  }
}

/**
 * Validates a definition (sizes, the schema, then what a schema cannot say: placeholders that
 * name a parameter, patterns the linear-time engine runs) and compiles it. Throws
 * DefinitionTooLargeError, or InvalidDefinitionError naming every field at fault. `builtIn` definitions may name a dedicated emulator and a tool prefix.
 */
export function compileDefinition(input: unknown, opts: { builtIn: boolean }): ProviderDefinition {
  // Sizes first: nothing below reads a definition that is too large or has a string too long.
  const tooLong = sizeFaults(input);
  if (tooLong.length) throw new InvalidDefinitionError(tooLong);
  // Defaults are applied to a copy: the caller's object stays as written.
  const json = structuredClone(input) as DefinitionJson;
  if (!validateSchema(json)) throw new InvalidDefinitionError(toFieldErrors(validateSchema.errors));
  const errors = semanticErrors(json, opts.builtIn);
  if (errors.length) throw new InvalidDefinitionError(errors);
  return build(json, input as Record<string, unknown>, opts.builtIn);
}

/**
 * What the schema's prefix rule cannot see in a URL template: credentials before the host (with
 * them, http://localhost:@127.0.0.2/ starts like a loopback URL but is not one), and http to any
 * host but the loopback names the rule means. Placeholders are read as a plain name.
 */
function urlFault(template: string): string | undefined {
  let url: URL;
  try {
    url = new URL(
      template.replace(/^\{[a-z_]+\}/, 'https://placeholder.invalid').replace(/\{[a-z_]+\}/g, 'x'),
    );
  } catch {
    return 'is not an absolute URL';
  }
  if (
    url.username ||
    url.password ||
    template
      .replace(/^[a-z]+:\/\//, '')
      .split('/')[0]!
      .includes('@')
  )
    return 'must not carry credentials (user:password@) before its host';
  if (url.protocol === 'http:' && url.hostname !== 'localhost' && url.hostname !== '127.0.0.1')
    return 'may use http only on loopback (localhost or 127.0.0.1); use https';
  return undefined;
}

function semanticErrors(json: DefinitionJson, builtIn: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const params = json.parameters ?? [];
  const names = new Set(params.map((p) => p.name));
  const connectionNames = new Set(params.filter((p) => p.source === 'connection').map((p) => p.name));
  const placeholders = (
    path: string,
    url: string | undefined,
    allowed: Set<string>,
    extra: string[] = [],
  ) => {
    const fault = url === undefined ? undefined : urlFault(url);
    if (fault) errors.push({ path, message: fault });
    for (const [, name] of (url ?? '').matchAll(/\{([^}]*)\}/g)) {
      if (name !== undefined && !allowed.has(name) && !extra.includes(name))
        errors.push({
          path,
          message: `names {${name}}, which is not ${allowed === connectionNames ? 'a connection parameter (token parameters are known only after the token endpoint answered)' : 'a parameter'}; declare it under parameters or remove it`,
        });
    }
  };
  const auth = json.auth as Record<string, unknown>;
  if (auth.kind === 'oauth2') {
    placeholders('/auth/authorization_url', auth.authorization_url as string, connectionNames);
    placeholders('/auth/token_url', auth.token_url as string, connectionNames);
    const revocation = auth.revocation as { url?: string } | undefined;
    placeholders('/auth/revocation/url', revocation?.url, connectionNames, ['token', 'client_id']);
  }
  if ((auth.kind === 'mcp') !== (json.mcp !== undefined))
    errors.push(
      auth.kind === 'mcp'
        ? { path: '/mcp', message: "is required when auth.kind is mcp: give the server's url" }
        : { path: '/auth/kind', message: 'must be mcp for a remote MCP server (a definition with mcp)' },
    );
  placeholders('/mcp/url', json.mcp?.url, connectionNames);
  placeholders('/api/base_url', json.api.base_url, names);
  placeholders('/user_info/url', json.user_info?.url, names);
  const value = json.api.credential?.value ?? '{token}';
  if (!value.includes('{token}') && !value.includes('{basic}'))
    errors.push({ path: '/api/credential/value', message: 'must contain {token} or {basic}' });
  // Patterns run on a linear-time engine (validation/linear-pattern.ts): one it cannot run is refused here.
  const regex = (path: string, source: unknown) => {
    if (typeof source !== 'string') return;
    const fault = patternFault(source);
    if (fault) errors.push({ path, message: fault });
  };
  regex('/auth/pattern', auth.pattern);
  params.forEach((p, i) => {
    regex(`/parameters/${i}/pattern`, p.pattern);
    if (p.source === 'token' && !p.path)
      errors.push({ path: `/parameters/${i}/path`, message: 'is required for a token parameter' });
    if (params.findIndex((q) => q.name === p.name) !== i)
      errors.push({
        path: `/parameters/${i}/name`,
        message: `repeats "${p.name}"; name each parameter once`,
      });
  });
  if (!builtIn) {
    if (json.tool_prefix !== undefined)
      errors.push({ path: '/tool_prefix', message: 'is for built-in providers only; remove it' });
    if (json.sandbox?.emulator !== undefined)
      errors.push({
        path: '/sandbox/emulator',
        message:
          'is for built-in providers only; remove it (the definitions emulator plays custom providers)',
      });
  }
  return errors;
}

function build(json: DefinitionJson, source: Record<string, unknown>, builtIn: boolean): ProviderDefinition {
  // Shaped by the schema just checked; read field by field below.
  const auth = json.auth as Loose;
  const api = json.api;
  const credential = api.credential
    ? {
        in: api.credential.in,
        name: api.credential.name.toLowerCase(),
        value: api.credential.value ?? '{token}',
      }
    : {
        in: 'header' as const,
        name: 'authorization',
        value: auth.kind === 'basic' ? 'Basic {basic}' : 'Bearer {token}',
      };
  const definition: ProviderDefinition = {
    key: json.key,
    displayName: json.display_name,
    kind: json.category ?? 'Other',
    ...(json.docs_url ? { docsUrl: json.docs_url } : {}),
    builtIn,
    ...(json.tool_prefix ? { toolPrefix: json.tool_prefix } : {}),
    auth: auth.kind,
    api: {
      baseUrl: api.base_url,
      credential: credential.in === 'query' ? { ...credential, name: api.credential!.name } : credential,
      defaultHeaders: Object.fromEntries(
        Object.entries(api.default_headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]),
      ),
      pathRewrites: api.path_rewrites ?? [],
      ...(api.version_header ? { versionHeader: api.version_header.toLowerCase() } : {}),
      rateLimits: (api.rate_limits ?? []).map((l) => ({
        requests: l.requests,
        perSeconds: l.per_seconds,
        scope: l.scope,
      })),
      describeError: errorReader(api.errors ?? {}),
    },
    parameters: json.parameters ?? [],
    ...(json.user_info
      ? {
          userInfo: {
            url: json.user_info.url,
            method: json.user_info.method ?? 'GET',
            ...(json.user_info.id ? { id: json.user_info.id } : {}),
            ...(json.user_info.label ? { label: json.user_info.label } : {}),
            ...(json.user_info.ok ? { ok: json.user_info.ok } : {}),
          },
        }
      : {}),
    setup: {
      ...(json.setup?.console ? { console: json.setup.console } : {}),
      steps: json.setup?.steps ?? [],
      scopes: json.setup?.scopes ?? [],
    },
    // A remote MCP server is played by the MCP emulator, never from its definition.
    emulator: json.mcp ? 'mcp' : (json.sandbox?.emulator ?? 'definitions'),
    source: Object.freeze(structuredClone(source)),
  };
  if (auth.kind === 'mcp') {
    definition.auth = 'oauth2';
    definition.mcp = {
      url: json.mcp!.url,
      transport: json.mcp!.transport ?? 'streamable_http',
      registration: auth.registration ?? ['client_id_metadata_document', 'dynamic', 'pre_registered'],
    };
    definition.oauth = mcpOAuthFacts(auth);
  } else if (auth.kind === 'oauth2') {
    const response = auth.token_response ?? {};
    const refresh = auth.refresh ?? {};
    definition.oauth = {
      authorizeUrl: auth.authorization_url,
      tokenUrl: auth.token_url,
      ...(auth.revocation
        ? {
            revocation: {
              url: auth.revocation.url,
              style: auth.revocation.style ?? 'form',
              token: auth.revocation.token ?? 'access',
            },
          }
        : {}),
      clientAuth: auth.client_auth ?? 'client_secret_post',
      tokenBody: auth.token_body ?? 'form',
      pkce: auth.pkce ?? false,
      scopeSeparator: auth.scope_separator ?? ' ',
      scopeParameter: auth.scope_parameter ?? 'scope',
      defaultScopes: auth.default_scopes ?? [],
      requiredScopes: auth.required_scopes ?? [],
      extraAuthorizeParams: auth.authorization_params ?? {},
      tokenResponse: {
        accessToken: response.access_token ?? 'access_token',
        refreshToken: response.refresh_token ?? 'refresh_token',
        expiresIn: response.expires_in ?? 'expires_in',
        scope: response.scope ?? 'scope',
        tokenType: response.token_type === undefined ? 'token_type' : response.token_type,
      },
      refreshRotates: refresh.rotates ?? false,
      refreshMarginSeconds: refresh.margin_seconds ?? 300,
      ...(refresh.idle_days ? { refreshTokenIdleDays: refresh.idle_days } : {}),
      ...(auth.token_errors?.kinds ? { tokenErrorKinds: auth.token_errors.kinds } : {}),
      ...(auth.token_errors?.field ? { tokenErrorField: auth.token_errors.field } : {}),
      ...(response.token_fields?.length ? { tokenResponseTokenFields: response.token_fields } : {}),
      ...(auth.sandbox_token_ttl_seconds !== undefined
        ? { sandboxTokenTtlSeconds: auth.sandbox_token_ttl_seconds }
        : {}),
    };
  } else {
    definition.form = {
      label: auth.label ?? 'API key',
      usernameLabel: auth.username_label ?? 'User name',
      passwordLabel: auth.password_label ?? 'Password',
      ...(auth.help ? { help: auth.help } : {}),
      ...(auth.pattern ? { pattern: auth.pattern } : {}),
    };
  }
  return definition;
}

/**
 * The fixed OAuth facts of a remote MCP server: OAuth 2.1 as the MCP authorization specification
 * profiles it. Its endpoints are discovered per connection (connections keep them), so the
 * definition's URLs stay empty; PKCE S256 is always sent.
 */
function mcpOAuthFacts(auth: Loose): NonNullable<ProviderDefinition['oauth']> {
  return {
    authorizeUrl: '',
    tokenUrl: '',
    clientAuth: 'client_secret_post',
    tokenBody: 'form',
    pkce: true,
    scopeSeparator: ' ',
    scopeParameter: 'scope',
    defaultScopes: auth.default_scopes ?? [],
    requiredScopes: [],
    extraAuthorizeParams: {},
    tokenResponse: {
      accessToken: 'access_token',
      refreshToken: 'refresh_token',
      expiresIn: 'expires_in',
      scope: 'scope',
      tokenType: 'token_type',
    },
    refreshRotates: auth.refresh?.rotates ?? true,
    refreshMarginSeconds: auth.refresh?.margin_seconds ?? 300,
  };
}

/** The declared reading of error bodies: the first message found, and any rule that matches. */
function errorReader(spec: NonNullable<DefinitionJson['api']['errors']>) {
  const messagePaths = spec.message ?? ['error.message', 'message', 'error_description', 'error'];
  return (_status: number, body: unknown): ProviderErrorDescription => {
    if (!body || typeof body !== 'object') return {};
    const message = messagePaths.map((p) => readOne(body, p)).find((v) => typeof v === 'string');
    return {
      ...(typeof message === 'string' ? { message } : {}),
      rateLimited: (spec.rate_limited ?? []).some((m) => matches(body, m)),
      ...((spec.conflict ?? []).some((m) => matches(body, m)) ? { conflict: true } : {}),
    };
  };
}
