// Reading a provider definition (the JSON Portico describes providers with; schema in
// packages/gateway/providers/provider.schema.json) into what the emulator plays: paths to answer,
// and how each endpoint is spelled. The gateway validates definitions against the schema; this
// checks only what the emulator relies on, so a broken definition is refused at registration
// instead of failing a request later.

import { RE2JS } from 're2js';

/** A definition the emulator cannot play; the control API answers 400 with its message. */
export class DefinitionError extends Error {}

export type RevocationStyle =
  | 'form'
  | 'form_client'
  | 'basic_form'
  | 'basic_json'
  | 'delete'
  | 'basic_delete'
  | 'credential_post'
  | 'credential_delete';

/** A URL of the definition reduced to its path; `{placeholders}` match any one segment. */
export interface PathTemplate {
  /** The path as written, e.g. '/{tenant}/oauth2/v2.0/token'. */
  template: string;
  pattern: RegExp;
}

export interface OAuthSpec {
  kind: 'oauth2';
  authorize: PathTemplate;
  token: PathTemplate;
  pkce: boolean;
  scopeParameter: string;
  scopeSeparator: ' ' | ',';
  clientAuth: 'client_secret_post' | 'client_secret_basic';
  tokenBody: 'form' | 'json';
  /** Where the token response keeps each value; tokenType null: no bearer type at the top. */
  tokenResponse: {
    accessToken: string;
    refreshToken: string;
    expiresIn: string;
    scope: string;
    tokenType: string | null;
  };
  tokenErrors?: { field: string; kinds: Record<string, 'invalid_grant' | 'invalid_client'> };
  rotates: boolean;
  revocation?: { path: PathTemplate; style: RevocationStyle; token: 'access' | 'refresh' };
  /** Access-token lifetime in the sandbox; null = never expires. */
  ttlSeconds: number | null;
}

export interface ApiKeySpec {
  kind: 'api_key';
  /** The definition's key format, run in linear time. */
  pattern?: { test(key: string): boolean };
}

export interface BasicSpec {
  kind: 'basic';
}

/** Where an API request carries its credential: `{prefix}{token or basic}{suffix}` in a header or query parameter. */
export interface CredentialSpec {
  in: 'header' | 'query';
  /** Header names lower-case (as Node gives them); query names as written. */
  name: string;
  prefix: string;
  suffix: string;
  /** {token}: the access token or API key; {basic}: base64(user:password). */
  placeholder: 'token' | 'basic';
}

export interface UserInfoSpec {
  path: PathTemplate;
  method: string;
  id?: string;
  label?: string;
  ok?: { path: string; value: string | number | boolean };
}

/** A definition as the emulator plays it. */
export interface PlayedDefinition {
  key: string;
  displayName: string;
  auth: OAuthSpec | ApiKeySpec | BasicSpec;
  credential: CredentialSpec;
  userInfo?: UserInfoSpec;
  /** Token-response paths of `source: token` parameters (e.g. Salesforce's instance_url). */
  tokenParameters: string[];
}

type Json = Record<string, unknown>;

const KEY = /^[a-z][a-z0-9_]{1,47}$/;
const PATH = /^[A-Za-z0-9_$-]+(\[\*\])?(\.[A-Za-z0-9_$-]+(\[\*\])?)*$/;
const DEFAULT_TTL_SECONDS = 3600;

function object(value: unknown, where: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new DefinitionError(`${where} must be an object`);
  }
  return value as Json;
}

function optionalObject(value: unknown, where: string): Json {
  return value === undefined || value === null ? {} : object(value, where);
}

function text(source: Json, name: string, where: string, fallback?: string): string {
  const value = source[name] ?? fallback;
  if (typeof value !== 'string' || value === '')
    throw new DefinitionError(`${where}.${name} must be a string`);
  return value;
}

function oneOf<T extends string>(
  source: Json,
  name: string,
  where: string,
  allowed: readonly T[],
  fallback: T,
): T {
  const value = source[name] ?? fallback;
  if (!allowed.includes(value as T)) {
    throw new DefinitionError(
      `${where}.${name} must be one of: ${allowed.map((a) => JSON.stringify(a)).join(', ')}`,
    );
  }
  return value as T;
}

function jsonPath(source: Json, name: string, where: string, fallback: string): string {
  const value = text(source, name, where, fallback);
  if (!PATH.test(value)) throw new DefinitionError(`${where}.${name} is not a dotted path: ${value}`);
  return value;
}

function regexSource(source: string): string {
  return source.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
}

/**
 * The path of a URL template: the origin (or a leading `{placeholder}` standing for one, e.g.
 * `{instance_url}/services/data`) and any query removed, since the gateway maps every origin of a
 * definition to `{root}/definitions/{key}`.
 */
export function templatePath(url: string): string {
  const rest = url.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/, '').replace(/^\{[a-z_]+\}/, '');
  const path = rest.split(/[?#]/)[0] ?? '';
  return path.startsWith('/') ? path : `/${path}`;
}

/** Compiles a URL template's path; each placeholder matches one segment and is captured by name. */
export function pathTemplate(url: string): PathTemplate {
  const template = templatePath(url);
  const seen = new Set<string>();
  const body = template
    .split(/(\{[a-z_]+\})/)
    .map((part) => {
      const placeholder = /^\{([a-z_]+)\}$/.exec(part)?.[1];
      if (!placeholder) return regexSource(part);
      if (seen.has(placeholder)) return '[^/]+';
      seen.add(placeholder);
      return `(?<${placeholder}>[^/]+)`;
    })
    .join('');
  // A trailing slash is tolerated either way, as most providers' routers do.
  return { template, pattern: new RegExp(`^${body.replace(/\/$/, '')}/?$`) };
}

function tokenResponseOf(auth: Json, where: string): OAuthSpec['tokenResponse'] {
  const paths = optionalObject(auth.token_response, `${where}.token_response`);
  const at = `${where}.token_response`;
  return {
    accessToken: jsonPath(paths, 'access_token', at, 'access_token'),
    refreshToken: jsonPath(paths, 'refresh_token', at, 'refresh_token'),
    expiresIn: jsonPath(paths, 'expires_in', at, 'expires_in'),
    scope: jsonPath(paths, 'scope', at, 'scope'),
    tokenType: paths.token_type === null ? null : jsonPath(paths, 'token_type', at, 'token_type'),
  };
}

function tokenErrorsOf(auth: Json): OAuthSpec['tokenErrors'] {
  const errors = optionalObject(auth.token_errors, 'auth.token_errors');
  if (errors.field === undefined) return undefined;
  const kinds = optionalObject(errors.kinds, 'auth.token_errors.kinds');
  for (const [code, kind] of Object.entries(kinds)) {
    if (kind !== 'invalid_grant' && kind !== 'invalid_client') {
      throw new DefinitionError(`auth.token_errors.kinds.${code} must be invalid_grant or invalid_client`);
    }
  }
  return {
    field: text(errors, 'field', 'auth.token_errors'),
    kinds: kinds as Record<string, 'invalid_grant' | 'invalid_client'>,
  };
}

function revocationOf(auth: Json): OAuthSpec['revocation'] {
  if (auth.revocation === undefined) return undefined;
  const revocation = object(auth.revocation, 'auth.revocation');
  const where = 'auth.revocation';
  return {
    path: pathTemplate(text(revocation, 'url', where)),
    style: oneOf(
      revocation,
      'style',
      where,
      [
        'form',
        'form_client',
        'basic_form',
        'basic_json',
        'delete',
        'basic_delete',
        'credential_post',
        'credential_delete',
      ],
      'form',
    ),
    token: oneOf(revocation, 'token', where, ['access', 'refresh'], 'access'),
  };
}

function ttlOf(auth: Json): number | null {
  const ttl = auth.sandbox_token_ttl_seconds;
  if (ttl === undefined) return DEFAULT_TTL_SECONDS;
  if (ttl === null) return null;
  if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 0) {
    throw new DefinitionError('auth.sandbox_token_ttl_seconds must be a non-negative integer or null');
  }
  return ttl;
}

function oauthOf(auth: Json): OAuthSpec {
  const scopeParameter = text(auth, 'scope_parameter', 'auth', 'scope');
  if (!/^[a-z_]+$/.test(scopeParameter))
    throw new DefinitionError('auth.scope_parameter must be lower-case letters');
  return {
    kind: 'oauth2',
    authorize: pathTemplate(text(auth, 'authorization_url', 'auth')),
    token: pathTemplate(text(auth, 'token_url', 'auth')),
    pkce: auth.pkce === true,
    scopeParameter,
    scopeSeparator: oneOf(auth, 'scope_separator', 'auth', [' ', ','], ' '),
    clientAuth: oneOf(
      auth,
      'client_auth',
      'auth',
      ['client_secret_post', 'client_secret_basic'],
      'client_secret_post',
    ),
    tokenBody: oneOf(auth, 'token_body', 'auth', ['form', 'json'], 'form'),
    tokenResponse: tokenResponseOf(auth, 'auth'),
    tokenErrors: tokenErrorsOf(auth),
    rotates: optionalObject(auth.refresh, 'auth.refresh').rotates === true,
    revocation: revocationOf(auth),
    ttlSeconds: ttlOf(auth),
  };
}

function authOf(value: unknown): PlayedDefinition['auth'] {
  const auth = object(value, 'auth');
  const kind = oneOf(auth, 'kind', 'auth', ['oauth2', 'api_key', 'basic'], 'oauth2');
  if (kind === 'oauth2') return oauthOf(auth);
  if (kind === 'basic') return { kind };
  if (auth.pattern === undefined) return { kind };
  const source = text(auth, 'pattern', 'auth');
  // A definition's pattern runs on RE2 (linear time), as the gateway's form checks the key: with
  // JavaScript's backtracking RegExp, `^(a+)+$` and a 28-character key would stall the process.
  if (source.length > 500) throw new DefinitionError('auth.pattern must be at most 500 characters');
  try {
    const pattern = RE2JS.compile(source);
    return { kind, pattern: { test: (key: string) => key.length <= 4096 && pattern.test(key) } };
  } catch {
    throw new DefinitionError('auth.pattern must be a regular expression in RE2 syntax');
  }
}

function credentialOf(api: Json, kind: PlayedDefinition['auth']['kind']): CredentialSpec {
  if (api.credential === undefined) {
    return kind === 'basic'
      ? { in: 'header', name: 'authorization', prefix: 'Basic ', suffix: '', placeholder: 'basic' }
      : { in: 'header', name: 'authorization', prefix: 'Bearer ', suffix: '', placeholder: 'token' };
  }
  const credential = object(api.credential, 'api.credential');
  const where = 'api.credential';
  const place = oneOf(credential, 'in', where, ['header', 'query'], 'header');
  const name = text(credential, 'name', where);
  const value = text(credential, 'value', where, '{token}');
  const match = /\{(token|basic)\}/.exec(value);
  if (!match) throw new DefinitionError('api.credential.value must contain {token} or {basic}');
  return {
    in: place,
    name: place === 'header' ? name.toLowerCase() : name,
    prefix: value.slice(0, match.index),
    suffix: value.slice(match.index + match[0].length),
    placeholder: match[1] as 'token' | 'basic',
  };
}

function userInfoOf(value: unknown): UserInfoSpec | undefined {
  if (value === undefined) return undefined;
  const info = object(value, 'user_info');
  const where = 'user_info';
  const spec: UserInfoSpec = {
    path: pathTemplate(text(info, 'url', where)),
    method: oneOf(info, 'method', where, ['GET', 'POST'], 'GET'),
  };
  if (info.id !== undefined) spec.id = jsonPath(info, 'id', where, 'id');
  if (info.label !== undefined) spec.label = jsonPath(info, 'label', where, 'label');
  if (info.ok !== undefined) {
    const ok = object(info.ok, 'user_info.ok');
    const equals = ok.equals;
    if (!Array.isArray(equals) || !['string', 'number', 'boolean'].includes(typeof equals[0])) {
      throw new DefinitionError(
        'user_info.ok.equals must be a non-empty array of strings, numbers or booleans',
      );
    }
    spec.ok = {
      path: jsonPath(ok, 'path', 'user_info.ok', ''),
      value: equals[0] as string | number | boolean,
    };
  }
  return spec;
}

function tokenParametersOf(value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new DefinitionError('parameters must be an array');
  return value
    .map((item, i) => object(item, `parameters[${i}]`))
    .filter((parameter) => parameter.source === 'token')
    .map((parameter) => jsonPath(parameter, 'path', 'parameters[]', text(parameter, 'name', 'parameters[]')));
}

/** Reads a definition (as registered through the control API) into what the emulator plays. */
export function readDefinition(value: unknown): PlayedDefinition {
  const definition = object(value, 'the definition');
  const key = definition.key;
  if (typeof key !== 'string' || !KEY.test(key)) {
    throw new DefinitionError(
      'key must be 2-48 lower-case letters, digits or underscores, starting with a letter',
    );
  }
  const auth = authOf(definition.auth);
  const api = object(definition.api, 'api');
  text(api, 'base_url', 'api');
  return {
    key,
    displayName: text(definition, 'display_name', 'the definition', key),
    auth,
    credential: credentialOf(api, auth.kind),
    userInfo: userInfoOf(definition.user_info),
    tokenParameters: tokenParametersOf(definition.parameters),
  };
}
