import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { renderConsentPage, renderErrorPage } from './consent-page.js';
import type { EmulatorHost, ModuleRuntime } from './host.js';
import type { AuthorizationCode } from './oauth-store.js';
import type { EmulatorKey, Grant, OAuthErrorKind, RegisteredClient, TokenIssue } from './types.js';

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
  state: string;
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
  if (params.response_type !== 'code') {
    return params.response_type
      ? fail('unsupported_response_type', `Unsupported response_type: ${params.response_type}`)
      : fail('invalid_request', 'Missing required parameter: response_type');
  }
  if (!state) return fail('invalid_request', 'Missing required parameter: state');
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
  if (problem) return fail('invalid_request', problem);
  const scopes = (params.scope ?? '')
    .split(profile.scopeSeparator === ',' ? /[,\s]+/ : /\s+/)
    .filter((s) => s.length > 0);
  return {
    kind: 'ok',
    request: { client, redirectUri, state, scopes, codeChallenge, codeChallengeMethod, params },
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

function verifyPkce(code: AuthorizationCode, verifier: string | undefined): string | null {
  if (!code.codeChallenge) return null;
  if (!verifier) return 'Missing code verifier.';
  if (!PKCE_VALUE.test(verifier)) return 'Invalid code verifier.';
  const expected =
    code.codeChallengeMethod === 'S256'
      ? createHash('sha256').update(verifier).digest('base64url')
      : verifier;
  return safeEqual(expected, code.codeChallenge) ? null : 'Invalid code verifier.';
}

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
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
): ClientCredentials | { error: string } {
  const header = req.headers.authorization;
  if (header && /^Basic\s/i.test(header)) {
    if (!allowed.includes('client_secret_basic'))
      return { error: 'HTTP Basic client authentication is not supported' };
    const decoded = Buffer.from(header.replace(/^Basic\s+/i, ''), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return { error: 'Malformed HTTP Basic credentials' };
    try {
      return {
        clientId: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
        clientSecret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
      };
    } catch {
      return { clientId: decoded.slice(0, colon), clientSecret: decoded.slice(colon + 1) };
    }
  }
  if (body.client_secret !== undefined) {
    if (!allowed.includes('client_secret_post')) {
      return { error: 'Client credentials in the request body are not supported' };
    }
    if (!body.client_id) return { error: 'Missing required parameter: client_id' };
    return { clientId: body.client_id, clientSecret: body.client_secret };
  }
  return { error: 'Client authentication is required' };
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
    const { status: errorStatus, body } = profile.tokenError('invalid_request', error.message);
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
    });
    return reply.redirect(withQuery(request.redirectUri, { code: code.code, state: request.state }), 302);
  });

  app.post(profile.tokenPath, { errorHandler: tokenBodyError }, async (req, reply) => {
    const fail = (kind: OAuthErrorKind, description: string) => {
      const { status, body } = profile.tokenError(kind, description);
      return reply.code(status).header('cache-control', 'no-store').header('pragma', 'no-cache').send(body);
    };
    const format = bodyFormat(req);
    if (!format || !profile.tokenBodyFormats.includes(format)) {
      return fail('invalid_request', `Unsupported content type: ${req.headers['content-type'] ?? '(none)'}`);
    }
    const body = stringParams(req.body);
    const credentials = readClientCredentials(req, body, profile.clientAuth);
    if ('error' in credentials) return fail('invalid_client', credentials.error);
    const client = store.clients.get(credentials.clientId);
    if (!client || !safeEqual(client.clientSecret, credentials.clientSecret)) {
      return fail('invalid_client', 'The OAuth client was not found or its secret is wrong.');
    }

    let issue: TokenIssue;
    const grantType = body.grant_type;
    if (grantType === 'authorization_code') {
      if (!body.code) return fail('invalid_request', 'Missing required parameter: code');
      const code = store.codes.get(body.code);
      if (!code) return fail('invalid_grant', 'Malformed auth code.');
      if (code.used) return fail('invalid_grant', 'The authorization code has already been used.');
      if (code.expiresAt <= host.clock()) return fail('invalid_grant', 'The authorization code has expired.');
      if (code.clientId !== client.clientId) {
        return fail('invalid_grant', 'The authorization code was issued to another client.');
      }
      if (body.redirect_uri !== code.redirectUri) {
        return fail(
          'invalid_grant',
          'redirect_uri does not match the one used in the authorization request.',
        );
      }
      const pkceProblem = verifyPkce(code, body.code_verifier);
      if (pkceProblem) return fail('invalid_grant', pkceProblem);
      code.used = true;
      const grant = store.createGrant(client.clientId, code.userId, code.scopes);
      code.grantId = grant.id;
      issue = {
        grant,
        access: store.issueAccessToken(grant),
        refreshToken: grant.refreshToken,
        grantType: 'authorization_code',
      };
    } else if (grantType === 'refresh_token') {
      if (!body.refresh_token) return fail('invalid_request', 'Missing required parameter: refresh_token');
      if (profile.refreshTokens === 'none')
        return fail('unsupported_grant_type', 'Refresh tokens are not supported.');
      const grant: Grant | undefined = store.grantForRefreshToken(body.refresh_token);
      if (!grant || grant.revoked) return fail('invalid_grant', 'Token has been expired or revoked.');
      if (grant.clientId !== client.clientId) {
        return fail('invalid_grant', 'The refresh token was issued to another client.');
      }
      // 'static': the client keeps its refresh token; the profile may echo grant.refreshToken if the provider does.
      const refreshToken = profile.refreshTokens === 'rotate' ? store.setRefreshToken(grant) : undefined;
      issue = { grant, access: store.issueAccessToken(grant), refreshToken, grantType: 'refresh_token' };
    } else if (!grantType) {
      return fail('invalid_request', 'Missing required parameter: grant_type');
    } else {
      return fail('unsupported_grant_type', `Unsupported grant_type: ${grantType}`);
    }

    host.counters.countGrant(module.key, issue.grantType, client.clientId);
    return reply
      .header('cache-control', 'no-store')
      .header('pragma', 'no-cache')
      .send(profile.tokenResponse(issue, ctx));
  });
}
