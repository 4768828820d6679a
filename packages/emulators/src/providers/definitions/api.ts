import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthFailure, EmulatedUser, ProviderContext } from '../../core/types.js';
import { echoBody } from './body.js';
import { type CredentialRead, isBearer, readCredential, splitBasic } from './credentials.js';
import type { PlayedDefinition, UserInfoSpec } from './definition.js';
import { setPath } from './json-paths.js';
import { acceptsApiKey, acceptsBasicPassword, type DefinitionsState, keyRecord } from './keys.js';

// The provider's API as the definitions emulator plays it: every path answers, once the request
// carries a credential the definition's auth accepts. The user_info request answers in the
// definition's shape; any other request is echoed, so tests see what the gateway sent.

type ApiAuth = { ok: true; user: EmulatedUser } | { ok: false; reason: AuthFailure };

const FAILURE_MESSAGES: Record<AuthFailure, string> = {
  missing: 'No credential was sent.',
  malformed: 'The credential is not in the form this API takes.',
  unknown: 'The credential is not valid.',
  expired: 'The access token has expired.',
  revoked: 'The credential has been revoked.',
};

/** 401 in one generic shape; Bearer APIs say why in WWW-Authenticate too (RFC 6750 §3.1). */
export function sendUnauthorized(
  reply: FastifyReply,
  reason: AuthFailure,
  definition?: PlayedDefinition,
): FastifyReply {
  const message = FAILURE_MESSAGES[reason];
  if (!definition || isBearer(definition.credential)) {
    // A request without credentials gets no error code (RFC 6750 §3.1).
    reply.header(
      'www-authenticate',
      reason === 'missing' ? 'Bearer' : `Bearer error="invalid_token", error_description="${message}"`,
    );
  } else if (definition.credential.placeholder === 'basic') {
    reply.header('www-authenticate', `Basic realm="${definition.displayName.replace(/"/g, "'")}"`);
  }
  return reply.code(401).send({ error: { message, code: 'unauthorized' } });
}

function oauthUser(definition: PlayedDefinition, read: CredentialRead, ctx: ProviderContext): ApiAuth {
  if (!read.ok) return read;
  if (!('token' in read)) return { ok: false, reason: 'malformed' };
  const resolved = ctx.resolveAccessToken(read.token);
  if (!resolved.ok) return { ok: false, reason: resolved.reason };
  // A token of another definition's client is no token here.
  if (ctx.client(resolved.token.clientId)?.provider !== definition.key)
    return { ok: false, reason: 'unknown' };
  return { ok: true, user: resolved.user };
}

/** An API key sent as Basic: alone, or as the user name (Stripe's `key:`), or as the password. */
function apiKeyOfBasic(decoded: string): string {
  const basic = splitBasic(decoded);
  return basic ? basic.user || basic.password : decoded;
}

/** API keys and Basic passwords: accepted by rule (keys.ts), refused once revoked. */
function keyUser(definition: PlayedDefinition, read: CredentialRead, state: DefinitionsState): ApiAuth {
  if (!read.ok) return read;
  let key: string;
  let userName: string | undefined;
  if (definition.auth.kind === 'basic') {
    const basic = 'basic' in read ? splitBasic(read.basic) : undefined;
    if (!basic) return { ok: false, reason: 'malformed' };
    if (!acceptsBasicPassword(basic.password)) return { ok: false, reason: 'unknown' };
    [key, userName] = [basic.password, basic.user];
  } else if (definition.auth.kind === 'api_key') {
    key = 'token' in read ? read.token : apiKeyOfBasic(read.basic);
    if (!acceptsApiKey(definition.auth, key)) return { ok: false, reason: 'unknown' };
  } else {
    return { ok: false, reason: 'unknown' };
  }
  const record = keyRecord(state, definition.key, key, userName);
  return record.revoked ? { ok: false, reason: 'revoked' } : { ok: true, user: record.user };
}

export function authenticateApi(
  definition: PlayedDefinition,
  req: FastifyRequest,
  ctx: ProviderContext,
  state: DefinitionsState,
): ApiAuth {
  const read = readCredential(definition.credential, req);
  return definition.auth.kind === 'oauth2'
    ? oauthUser(definition, read, ctx)
    : keyUser(definition, read, state);
}

/** The user_info answer: the user's id and e-mail where the definition reads them, and its ok match. */
export function userInfoBody(info: UserInfoSpec, user: EmulatedUser): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (info.ok) setPath(body, info.ok.path, info.ok.value);
  if (info.id) setPath(body, info.id, user.id);
  if (info.label) setPath(body, info.label, user.email);
  return body;
}

/** The request as received, without its credential. */
export function echo(
  definition: PlayedDefinition,
  req: FastifyRequest,
  path: string,
  user: EmulatedUser,
): Record<string, unknown> {
  const { credential } = definition;
  const headers = { ...req.headers };
  const query = { ...(req.query as Record<string, unknown>) };
  if (credential.in === 'header') delete headers[credential.name];
  else delete query[credential.name];
  return {
    ok: true,
    provider: definition.key,
    method: req.method,
    path,
    query,
    headers,
    body: echoBody(req),
    user: { id: user.id, name: user.name, email: user.email },
  };
}
