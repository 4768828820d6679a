import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type {
  OAuthErrorKind,
  OAuthProfile,
  ProviderContext,
  TokenErrorDetail,
  TokenIssue,
} from '../../core/types.js';
import { correlationId, sendHubSpotError } from './errors.js';
import { portalIdentityOf } from './users.js';

/** HubSpot access tokens live 30 minutes. */
export const HUBSPOT_ACCESS_TOKEN_TTL_SECONDS = 1800;

/** A stable app id per client id: HubSpot reports the numeric id of the app a token belongs to. */
export function appIdOf(clientId: string): number {
  return 1_000_000 + (createHash('sha256').update(clientId).digest().readUInt32BE(0) % 8_000_000);
}

interface HubSpotOAuthError {
  status: string;
  message: string;
}

/** Maps the core's token-endpoint failure onto HubSpot's `status` and message. */
export function hubspotOAuthError(
  kind: OAuthErrorKind,
  description: string,
  detail: TokenErrorDetail,
): HubSpotOAuthError {
  const badClientId = { status: 'BAD_CLIENT_ID', message: 'missing or unknown client id' };
  const badSecret = { status: 'BAD_CLIENT_SECRET', message: 'missing or invalid client secret' };
  const badGrantType = {
    status: 'BAD_GRANT_TYPE',
    message: 'grant_type must be one of: authorization_code, refresh_token',
  };
  const badAuthCode = { status: 'BAD_AUTH_CODE', message: 'missing or unknown auth code' };
  const badRefreshToken = {
    status: 'BAD_REFRESH_TOKEN',
    message: 'refresh token is invalid, expired or revoked',
  };
  switch (detail.cause) {
    case 'unknown_client':
    case 'client_auth_method':
      return badClientId;
    case 'wrong_secret':
      return badSecret;
    case 'client_auth_missing':
      // A client id without a secret is a missing secret; nothing at all is a missing client id.
      return detail.clientId ? badSecret : badClientId;
    case 'unsupported_grant_type':
    case 'refresh_unsupported':
      return badGrantType;
    case 'missing_parameter':
      if (detail.parameter === 'grant_type') return badGrantType;
      if (detail.parameter === 'code') return badAuthCode;
      if (detail.parameter === 'refresh_token') return badRefreshToken;
      break;
    case 'code_unknown':
    case 'code_reused':
    case 'code_expired':
    case 'code_client_mismatch':
      return badAuthCode;
    case 'redirect_mismatch':
      return {
        status: 'BAD_REDIRECT_URI',
        message: 'redirect_uri does not match the one of the authorization request',
      };
    case 'pkce_missing':
    case 'pkce_mismatch':
      return { status: 'BAD_CODE_VERIFIER', message: 'missing or invalid code verifier' };
    case 'refresh_unknown':
    case 'refresh_revoked':
    case 'refresh_rotated':
    case 'refresh_client_mismatch':
      return badRefreshToken;
    default:
      break;
  }
  if (kind === 'invalid_scope') return { status: 'BAD_SCOPES', message: description || 'invalid scopes' };
  return { status: 'BAD_REQUEST', message: description || 'invalid request' };
}

export const hubspotOAuthProfile: OAuthProfile = {
  authorizePath: '/oauth/authorize',
  tokenPath: '/oauth/v1/token',
  clientAuth: ['client_secret_post'],
  tokenBodyFormats: ['form'],
  // HubSpot accepts PKCE (code_challenge on authorize, code_verifier on the token endpoint).
  pkce: 'supported',
  scopeSeparator: ' ',
  accessTokenTtlSeconds: HUBSPOT_ACCESS_TOKEN_TTL_SECONDS,
  // HubSpot answers a refresh with the same refresh token it issued at install.
  refreshTokens: 'static',
  // HubSpot's install URL has no response_type (the SDK's getAuthorizationUrl leaves it out).
  responseTypeOptional: true,
  validateAuthorizeRequest(params) {
    if (!params.scope || params.scope.trim() === '') return 'scope is required';
    return null;
  },
  tokenResponse(issue: TokenIssue, ctx: ProviderContext) {
    const refreshToken = issue.refreshToken ?? issue.grant.refreshToken;
    const expiresIn =
      issue.access.expiresAt === null
        ? HUBSPOT_ACCESS_TOKEN_TTL_SECONDS
        : Math.max(0, Math.round((issue.access.expiresAt - ctx.clock()) / 1000));
    const body: Record<string, unknown> = {
      token_type: 'bearer',
      refresh_token: refreshToken,
      access_token: issue.access.token,
      expires_in: expiresIn,
    };
    // Fields HubSpot added to the v1 token response (2026): harmless to older clients.
    body.hub_id = portalIdentityOf(issue.grant.userId).hubId;
    body.user_id = Number(issue.grant.userId);
    body.scopes = issue.grant.scopes;
    body.token_use = 'access_token';
    return body;
  },
  tokenError(kind, description, detail) {
    const { status, message } = hubspotOAuthError(kind, description, detail);
    // Since 2026 HubSpot also sends the RFC 6749 fields next to its own.
    return {
      status: 400,
      body: { status, message, correlationId: correlationId(), error: kind, error_description: message },
    };
  },
  tokenPrefix: { access: 'CJ', refresh: 'na1-', code: 'na1-' },
};

function sendTokenNotFound(reply: FastifyReply, kind: 'access' | 'refresh', token: string): FastifyReply {
  return sendHubSpotError(reply, 404, 'OBJECT_NOT_FOUND', `${kind} token is invalid, expired or revoked`, {
    context: { token: [token] },
  });
}

/** The legacy v1 token-information endpoints. */
export function registerTokenInfoRoutes(app: FastifyInstance, ctx: ProviderContext): void {
  app.get('/oauth/v1/access-tokens/:token', async (req, reply) => {
    const { token } = req.params as { token: string };
    const result = ctx.resolveAccessToken(token);
    if (!result.ok) return sendTokenNotFound(reply, 'access', token);
    const identity = portalIdentityOf(result.user.id);
    const expiresAt = result.token.expiresAt;
    return reply.send({
      token,
      user: result.user.email,
      hub_domain: identity.hubDomain,
      scopes: result.token.scopes,
      hub_id: identity.hubId,
      app_id: appIdOf(result.token.clientId),
      expires_in:
        expiresAt === null
          ? HUBSPOT_ACCESS_TOKEN_TTL_SECONDS
          : Math.max(0, Math.round((expiresAt - ctx.clock()) / 1000)),
      user_id: Number(result.user.id),
      token_type: 'access',
      is_private_distribution: false,
    });
  });

  app.get('/oauth/v1/refresh-tokens/:token', async (req, reply) => {
    const { token } = req.params as { token: string };
    const grant = ctx.grantForRefreshToken(token);
    if (!grant) return sendTokenNotFound(reply, 'refresh', token);
    const user = ctx.users.find((u) => u.id === grant.userId);
    const identity = portalIdentityOf(grant.userId);
    return reply.send({
      token,
      user: user?.email ?? '',
      hub_domain: identity.hubDomain,
      scopes: grant.scopes,
      hub_id: identity.hubId,
      client_id: grant.clientId,
      user_id: Number(grant.userId),
      token_type: 'refresh',
    });
  });

  app.delete('/oauth/v1/refresh-tokens/:token', async (req, reply) => {
    const { token } = req.params as { token: string };
    if (!ctx.grantForRefreshToken(token)) return sendTokenNotFound(reply, 'refresh', token);
    ctx.revokeToken(token);
    return reply.code(204).send();
  });
}
