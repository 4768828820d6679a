import { createHash } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { renderConsentPage, renderErrorPage } from './consent-page.js';
import type { EmulatorHost, ModuleRuntime } from './host.js';
import { type AuthorizationCode, safeEqual } from './oauth-store.js';
import type {
  EmulatorKey,
  OAuthErrorCause,
  OAuthErrorKind,
  RegisteredClient,
  TokenErrorDetail,
  TokenIssue,
} from './types.js';

const PROVIDER_NAMES: Record<EmulatorKey, string> = {
  notion: 'Notion',
  google: 'Google',
  hubspot: 'HubSpot',
  microsoft: 'Microsoft',
};

/** RFC 7636 §4.1: 43–128 characters of the unreserved set. */
const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

interface AuthorizeRequest {
  client: RegisteredClient;
  redirectUri: string;
  state?: string;
  scopes: string[];
  codeChallenge?: string;
  codeChallengeMethod?: 'S256' | 'plain';
  params: Record<string, string>;
}

type AuthorizeCheck =
  | { kind: 'ok'; request: AuthorizeRequest }
  /** The redirect URI cannot be trusted: show an error page, never redirect. */
  | { kind: 'page'; error: string; description: string }
  | { kind: 'redirect'; location: string };

/** Adds query parameters to a redirect URI, keeping any query it already has. */
export function withQuery(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.append(name, value);
  }
  return url.toString();
}

/** Flattens a query or form body to single string values (first value wins, as providers do). */
function stringParams(source: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!source || typeof source !== 'object') return out;
  for (const [name, value] of Object.entries(source as Record<string, unknown>)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === 'string') out[name] = first;
    else if (typeof first === 'number' || typeof first === 'boolean') out[name] = String(first);
  }
  return out;
}

function checkAuthorize(runtime: ModuleRuntime, params: Record<string, string>): AuthorizeCheck {
  const { module, store } = runtime;
  const profile = module.oauth;
  const clientId = params.client_id;
  if (!clientId)
    return { kind: 'page', error: 'invalid_request', description: 'Missing required parameter: client_id' };
  const client = store.clients.get(clientId);
  if (!client)
    return {
      kind: 'page',
      error: 'invalid_client',
      description: `The OAuth client was not found: ${clientId}`,
    };
  const redirectUri = params.redirect_uri;
  if (!redirectUri) {
    return {
      kind: 'page',
      error: 'invalid_request',
      description: 'Missing required parameter: redirect_uri',
    };
  }
  if (!client.redirectUris.includes(redirectUri)) {
    return {
      kind: 'page',
      error: 'redirect_uri_mismatch',
      description: `The redirect URI ${redirectUri} is not registered for client ${clientId}`,
    };
  }
  // From here the redirect URI is trusted, so errors go back to the client (RFC 6749 §4.1.2.1).
  const state = params.state;
  const fail = (error: string, description: string): AuthorizeCheck => ({
    kind: 'redirect',
    location: withQuery(redirectUri, { error, error_description: description, state }),
  });
  if (params.response_type === undefined || params.response_type === '') {
    if (!profile.responseTypeOptional)
      return fail('invalid_request', 'Missing required parameter: response_type');
  } else if (params.response_type !== 'code') {
    return fail('unsupported_response_type', `Unsupported response_type: ${params.response_type}`);
  }
  if (!state && !profile.stateOptional) return fail('invalid_request', 'Missing required parameter: state');
  let codeChallenge: string | undefined;
  let codeChallengeMethod: 'S256' | 'plain' | undefined;
  if (profile.pkce === 'supported' && (params.code_challenge || params.code_challenge_method)) {
    if (!params.code_challenge) return fail('invalid_request', 'Missing required parameter: code_challenge');
    const method = params.code_challenge_method ?? 'plain';
    if (method !== 'S256' && method !== 'plain') {
      return fail('invalid_request', `Unsupported code_challenge_method: ${method}`);
    }
    if (!PKCE_VALUE.test(params.code_challenge)) return fail('invalid_request', 'Invalid code_challenge');
    codeChallenge = params.code_challenge;
    codeChallengeMethod = method;
  }
  const problem = profile.validateAuthorizeRequest?.(params) ?? null;
  if (typeof problem === 'string') return fail('invalid_request', problem);
  if (problem) return fail(problem.error, problem.description);
  const scopes = (params.scope ?? '')
    .split(profile.scopeSeparator === ',' ? /[,\s]+/ : /\s+/)
    .filter((s) => s.length > 0);
  return {
    kind: 'ok',
    request: {
      client,
      redirectUri,
      state: state || undefined,
      scopes,
      codeChallenge,
      codeChallengeMethod,
      params,
    },
  };
}

function sendAuthorizeFailure(
  reply: FastifyReply,
  key: EmulatorKey,
  check: Exclude<AuthorizeCheck, { kind: 'ok' }>,
): FastifyReply {
  if (check.kind === 'redirect') return reply.redirect(check.location, 302);
  return reply
    .code(400)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(renderErrorPage(PROVIDER_NAMES[key], check.error, check.description));
}

function verifyPkce(
  code: AuthorizationCode,
  verifier: string | undefined,
): { cause: 'pkce_missing' | 'pkce_mismatch'; description: string } | null {
  if (!code.codeChallenge) return null;
  if (!verifier) return { cause: 'pkce_missing', description: 'Missing code verifier.' };
  const invalid = { cause: 'pkce_mismatch', description: 'Invalid code verifier.' } as const;
  if (!PKCE_VALUE.test(verifier)) return invalid;
  const expected =
    code.codeChallengeMethod === 'S256'
      ? createHash('sha256').update(verifier).digest('base64url')
      : verifier;
  return safeEqual(expected, code.codeChallenge) ? null : invalid;
}

/** The consent form's own fields, which are not part of the client's authorize request. */
const CONSENT_FIELDS = new Set(['decision', 'user_id']);

/**
 * Parses HTTP Basic client credentials (RFC 6749 §2.3.1: form-urlencoded before base64). Undefined
 * when the header is not Basic or carries no colon.
 */
export function parseBasicCredentials(
  header: string | undefined,
): { clientId: string; clientSecret: string } | undefined {
  if (!header || !/^Basic\s/i.test(header)) return undefined;
  const decoded = Buffer.from(header.replace(/^Basic\s+/i, ''), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    return {
      clientId: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
      clientSecret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
    };
  } catch {
    return { clientId: decoded.slice(0, colon), clientSecret: decoded.slice(colon + 1) };
  }
}

interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

/** Client authentication per RFC 6749 §2.3.1: Basic credentials are form-urlencoded before base64. */
function readClientCredentials(
  req: FastifyRequest,
  body: Record<string, string>,
  allowed: Array<'client_secret_basic' | 'client_secret_post'>,
): ClientCredentials | { error: string; cause: OAuthErrorCause } {
  const header = req.headers.authorization;
  if (header && /^Basic\s/i.test(header)) {
    if (!allowed.includes('client_secret_basic'))
      return { error: 'HTTP Basic client authentication is not supported', cause: 'client_auth_method' };
    return (
      parseBasicCredentials(header) ?? {
        error: 'Malformed HTTP Basic credentials',
        cause: 'client_auth_method',
      }
    );
  }
  if (body.client_secret !== undefined) {
    if (!allowed.includes('client_secret_post')) {
      return {
        error: 'Client credentials in the request body are not supported',
        cause: 'client_auth_method',
      };
    }
    if (!body.client_id) return { error: 'Missing required parameter: client_id', cause: 'unknown_client' };
    return { clientId: body.client_id, clientSecret: body.client_secret };
  }
  return { error: 'Client authentication is required', cause: 'client_auth_missing' };
}

function bodyFormat(req: FastifyRequest): 'form' | 'json' | undefined {
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  if (type.startsWith('application/x-www-form-urlencoded')) return 'form';
  if (type.startsWith('application/json')) return 'json';
  return undefined;
}

/** The generic OAuth 2.0 authorization server, spelled the way the module's profile says. */
export function registerOAuthRoutes(app: FastifyInstance, runtime: ModuleRuntime, host: EmulatorHost): void {
  const { module, store, ctx } = runtime;
  const profile = module.oauth;

  // A body that does not parse (bad JSON, too large) still gets the provider's OAuth error shape.
  const tokenBodyError = (error: FastifyError, _req: FastifyRequest, reply: FastifyReply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) throw error;
    const { status: errorStatus, body } = profile.tokenError('invalid_request', error.message, {
      cause: 'malformed_body',
    });
    return reply.code(errorStatus).header('cache-control', 'no-store').send(body);
  };
  const consentBodyError = (error: FastifyError, _req: FastifyRequest, reply: FastifyReply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) throw error;
    return sendAuthorizeFailure(reply, module.key, {
      kind: 'page',
      error: 'invalid_request',
      description: error.message,
    });
  };

  app.get(profile.authorizePath, async (req, reply) => {
    const params = stringParams(req.query);
    const check = checkAuthorize(runtime, params);
    if (check.kind !== 'ok') return sendAuthorizeFailure(reply, module.key, check);
    const hint = params.login_hint?.toLowerCase();
    const hinted = hint
      ? module.users.find((u) => u.email.toLowerCase() === hint || u.id === params.login_hint)
      : undefined;
    const html = renderConsentPage({
      providerName: PROVIDER_NAMES[module.key],
      clientId: check.request.client.clientId,
      scopes: check.request.scopes,
      users: module.users,
      selectedUserId: hinted?.id,
      action: req.url.split('?')[0] ?? profile.authorizePath,
      params,
    });
    return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(html);
  });

  app.post(profile.authorizePath, { errorHandler: consentBodyError }, async (req, reply) => {
    const params = stringParams(req.body);
    const check = checkAuthorize(runtime, params);
    if (check.kind !== 'ok') return sendAuthorizeFailure(reply, module.key, check);
    const request = check.request;
    if (params.decision !== 'allow') {
      return reply.redirect(
        withQuery(request.redirectUri, {
          error: 'access_denied',
          error_description: 'The user denied access',
          state: request.state,
        }),
        302,
      );
    }
    const user = module.users.find((u) => u.id === params.user_id || u.email === params.user_id);
    if (!user) {
      return sendAuthorizeFailure(reply, module.key, {
        kind: 'page',
        error: 'invalid_request',
        description: `Unknown user: ${params.user_id ?? '(none chosen)'}`,
      });
    }
    const code = store.createCode({
      clientId: request.client.clientId,
      redirectUri: request.redirectUri,
      userId: user.id,
      scopes: request.scopes,
      codeChallenge: request.codeChallenge,
      codeChallengeMethod: request.codeChallengeMethod,
      authorizeParams: Object.fromEntries(
        Object.entries(params).filter(([name]) => !CONSENT_FIELDS.has(name)),
      ),
    });
    return reply.redirect(withQuery(request.redirectUri, { code: code.code, state: request.state }), 302);
  });

  app.post(profile.tokenPath, { errorHandler: tokenBodyError }, async (req, reply) => {
    let grantType: string | undefined;
    const fail = (
      kind: OAuthErrorKind,
      description: string,
      cause: OAuthErrorCause,
      extra: Omit<TokenErrorDetail, 'cause' | 'grantType'> = {},
    ) => {
      const { status, body } = profile.tokenError(kind, description, { cause, grantType, ...extra });
      return reply.code(status).header('cache-control', 'no-store').header('pragma', 'no-cache').send(body);
    };
    const missing = (parameter: string) =>
      fail('invalid_request', `Missing required parameter: ${parameter}`, 'missing_parameter', { parameter });
    const format = bodyFormat(req);
    if (!format || !profile.tokenBodyFormats.includes(format)) {
      return fail(
        'invalid_request',
        `Unsupported content type: ${req.headers['content-type'] ?? '(none)'}`,
        'unsupported_content_type',
      );
    }
    const body = stringParams(req.body);
    grantType = body.grant_type || undefined;
    const credentials = readClientCredentials(req, body, profile.clientAuth);
    if ('error' in credentials) {
      return fail('invalid_client', credentials.error, credentials.cause, { clientId: body.client_id });
    }
    const verified = store.verifyClient(credentials.clientId, credentials.clientSecret);
    if (!verified.ok) {
      return fail(
        'invalid_client',
        verified.cause === 'unknown_client'
          ? `The OAuth client was not found: ${credentials.clientId}`
          : 'The client secret is wrong.',
        verified.cause,
        { clientId: credentials.clientId },
      );
    }
    const client = verified.client;

    const grantRequest: GrantRequest = { runtime, host, client, body, fail, missing };
    let issue: TokenIssue | FastifyReply;
    if (grantType === 'authorization_code') issue = authorizationCodeGrant(grantRequest);
    else if (grantType === 'refresh_token') issue = refreshTokenGrant(grantRequest);
    else if (!grantType) return missing('grant_type');
    else {
      return fail('unsupported_grant_type', `Unsupported grant_type: ${grantType}`, 'unsupported_grant_type');
    }
    if (!isIssue(issue)) return issue;

    host.counters.countGrant(module.key, issue.grantType, client.clientId);
    return reply
      .header('cache-control', 'no-store')
      .header('pragma', 'no-cache')
      .send(profile.tokenResponse(issue, ctx));
  });
}

/** A token request whose client is verified, and how to answer it with the provider's error. */
interface GrantRequest {
  runtime: ModuleRuntime;
  host: EmulatorHost;
  client: RegisteredClient;
  body: Record<string, string>;
  fail(
    kind: OAuthErrorKind,
    description: string,
    cause: OAuthErrorCause,
    extra?: Omit<TokenErrorDetail, 'cause' | 'grantType'>,
  ): FastifyReply;
  missing(parameter: string): FastifyReply;
}

function isIssue(result: TokenIssue | FastifyReply): result is TokenIssue {
  return 'access' in result && 'grantType' in result;
}

/** RFC 6749 §4.1.3: a single-use code, for the client and redirect URI it was issued to (and PKCE). */
function authorizationCodeGrant({
  runtime,
  host,
  client,
  body,
  fail,
  missing,
}: GrantRequest): TokenIssue | FastifyReply {
  const { store } = runtime;
  const profile = runtime.module.oauth;
  if (!body.code) return missing('code');
  const code = store.codes.get(body.code);
  if (!code) return fail('invalid_grant', 'Malformed auth code.', 'code_unknown');
  if (code.used) {
    // RFC 6749 §4.1.2: a replayed code SHOULD revoke the tokens already issued from it.
    const issued = code.grantId ? store.grants.get(code.grantId) : undefined;
    if (issued && !issued.revoked) store.revokeGrant(issued);
    return fail('invalid_grant', 'The authorization code has already been used.', 'code_reused');
  }
  if (code.expiresAt <= host.clock()) {
    return fail('invalid_grant', 'The authorization code has expired.', 'code_expired');
  }
  if (code.clientId !== client.clientId) {
    return fail(
      'invalid_grant',
      'The authorization code was issued to another client.',
      'code_client_mismatch',
    );
  }
  if (body.redirect_uri !== code.redirectUri) {
    return fail(
      'invalid_grant',
      'redirect_uri does not match the one used in the authorization request.',
      'redirect_mismatch',
    );
  }
  const pkceProblem = verifyPkce(code, body.code_verifier);
  if (pkceProblem) return fail('invalid_grant', pkceProblem.description, pkceProblem.cause);
  code.used = true;
  const refreshToken =
    profile.refreshTokens !== 'none' &&
    (profile.issueRefreshToken?.({
      params: code.authorizeParams,
      scopes: code.scopes,
      liveGrants: store.liveGrants(client.clientId, code.userId),
    }) ??
      true);
  const grant = store.createGrant(client.clientId, code.userId, code.scopes, {
    refreshToken,
    authorizeParams: code.authorizeParams,
  });
  code.grantId = grant.id;
  return {
    grant,
    access: store.issueAccessToken(grant),
    refreshToken: grant.refreshToken,
    grantType: 'authorization_code',
  };
}

/** RFC 6749 §6: a live refresh token of this client; rotated when the provider rotates them. */
function refreshTokenGrant({
  runtime,
  client,
  body,
  fail,
  missing,
}: GrantRequest): TokenIssue | FastifyReply {
  const { store } = runtime;
  const profile = runtime.module.oauth;
  if (!body.refresh_token) return missing('refresh_token');
  if (profile.refreshTokens === 'none') {
    return fail('unsupported_grant_type', 'Refresh tokens are not supported.', 'refresh_unsupported');
  }
  const checked = store.checkRefreshToken(body.refresh_token);
  if (!checked.ok) return fail('invalid_grant', 'Token has been expired or revoked.', checked.cause);
  const grant = checked.grant;
  if (grant.clientId !== client.clientId) {
    return fail(
      'invalid_grant',
      'The refresh token was issued to another client.',
      'refresh_client_mismatch',
    );
  }
  // 'static': the client keeps its refresh token; the profile may echo grant.refreshToken if the provider does.
  const refreshToken = profile.refreshTokens === 'rotate' ? store.setRefreshToken(grant) : undefined;
  return { grant, access: store.issueAccessToken(grant), refreshToken, grantType: 'refresh_token' };
}
