import { createHash } from 'node:crypto';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { bodyFormat, PKCE_VALUE, readClientCredentials, stringParams } from './oauth-requests.js';
import { type AuthorizationCode, safeEqual } from './oauth-store.js';
import type { ModuleRuntime, OAuthHost } from './runtime.js';
import type {
  OAuthErrorCause,
  OAuthErrorKind,
  OAuthProfile,
  RegisteredClient,
  TokenErrorDetail,
  TokenIssue,
} from './types.js';

// The token endpoint: client authentication, then the authorization code or refresh token grant.

/** A body that does not parse (bad JSON, too large) still gets the provider's OAuth error shape. */
export function tokenBodyError(profile: OAuthProfile) {
  return (error: FastifyError, _req: FastifyRequest, reply: FastifyReply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) throw error;
    const { status: errorStatus, body } = profile.tokenError('invalid_request', error.message, {
      cause: 'malformed_body',
    });
    return reply.code(errorStatus).header('cache-control', 'no-store').send(body);
  };
}

/** Answers a token request: the client's credentials, then its grant, in the provider's words. */
export async function tokenRequest(
  runtime: ModuleRuntime,
  host: OAuthHost,
  req: FastifyRequest,
  reply: FastifyReply,
) {
  const { module, store, ctx } = runtime;
  const profile = module.oauth;
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
  const credentials = readClientCredentials(req, body, profile.clientAuth, profile.publicClients);
  if ('error' in credentials) {
    return fail('invalid_client', credentials.error, credentials.cause, { clientId: body.client_id });
  }
  const known = store.verifyClient(credentials.clientId, credentials.clientSecret);
  // A client of another server sharing the store (definitions) is unknown here.
  const verified =
    known.ok && profile.servesClient && !profile.servesClient(known.client)
      ? ({ ok: false, cause: 'unknown_client' } as const)
      : known;
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
  // A restart must know the tokens this answer hands out (a rotated refresh token above all).
  await host.persisted();
  return reply
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .send(profile.tokenResponse(issue, ctx));
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

/** A token request whose client is verified, and how to answer it with the provider's error. */
interface GrantRequest {
  runtime: ModuleRuntime;
  host: OAuthHost;
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
