import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { OAuthErrorKind, OAuthProfile, ProviderContext, TokenIssue } from '../../core/types.js';
import { correlationId, sendHubSpotError } from './errors.js';
import type { GetState } from './http.js';
import { portalIdentityOf } from './users.js';

/** HubSpot access tokens live 30 minutes. */
export const HUBSPOT_ACCESS_TOKEN_TTL_SECONDS = 1800;

/**
 * The token endpoint's profile hook gets no state, so the routes leave their state getter here for it;
 * keyed by context so several emulator instances in one process stay apart.
 */
const stateByContext = new WeakMap<ProviderContext, GetState>();

export function rememberState(ctx: ProviderContext, getState: GetState): void {
  stateByContext.set(ctx, getState);
}

/** A stable app id per client id: HubSpot reports the numeric id of the app a token belongs to. */
export function appIdOf(clientId: string): number {
  return 1_000_000 + (createHash('sha256').update(clientId).digest().readUInt32BE(0) % 8_000_000);
}

interface HubSpotOAuthError {
  status: string;
  message: string;
}

/**
 * Maps the core's RFC 6749 error onto HubSpot's `status`. The core's description tells apart the
 * several causes RFC 6749 lumps into `invalid_grant` / `invalid_client`.
 */
export function hubspotOAuthError(kind: OAuthErrorKind, description: string): HubSpotOAuthError {
  const text = description.toLowerCase();
  const badClientId = { status: 'BAD_CLIENT_ID', message: 'missing or unknown client id' };
  const badSecret = { status: 'BAD_CLIENT_SECRET', message: 'missing or invalid client secret' };
  const badGrantType = {
    status: 'BAD_GRANT_TYPE',
    message: 'grant_type must be one of: authorization_code, refresh_token',
  };
  switch (kind) {
    case 'invalid_client':
    case 'unauthorized_client':
      // A secret that is wrong or missing is HubSpot's most common client failure; an unknown id is the other.
      return text.includes('secret') ? badSecret : badClientId;
    case 'unsupported_grant_type':
      return badGrantType;
    case 'invalid_scope':
      return { status: 'BAD_SCOPES', message: description || 'invalid scopes' };
    default:
      break;
  }
  if (text.includes('redirect')) {
    return {
      status: 'BAD_REDIRECT_URI',
      message: 'redirect_uri does not match the one of the authorization request',
    };
  }
  if (text.includes('verifier') || text.includes('pkce')) {
    return { status: 'BAD_CODE_VERIFIER', message: 'missing or invalid code verifier' };
  }
  if (text.includes('grant_type') || text.includes('grant type')) return badGrantType;
  if (text.includes('client_secret') || text.includes('client secret')) return badSecret;
  if (text.includes('client_id') || text.includes('client id')) return badClientId;
  if (text.includes('refresh') || (text.includes('token') && !text.includes('code'))) {
    return { status: 'BAD_REFRESH_TOKEN', message: 'refresh token is invalid, expired or revoked' };
  }
  if (text.includes('code')) return { status: 'BAD_AUTH_CODE', message: 'missing or unknown auth code' };
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
  validateAuthorizeRequest(params) {
    if (!params.scope || params.scope.trim() === '') return 'scope is required';
    return null;
  },
  tokenResponse(issue: TokenIssue, ctx: ProviderContext) {
    const refreshToken = issue.refreshToken ?? issue.grant.refreshToken;
    const state = stateByContext.get(ctx)?.();
    if (state) {
      state.accessTokens.set(issue.access.token, issue.access);
      if (refreshToken) state.refreshTokens.set(refreshToken, issue.grant);
    }
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
  tokenError(kind, description) {
    const { status, message } = hubspotOAuthError(kind, description);
    // Since 2026 HubSpot also sends the RFC 6749 fields next to its own.
    return {
      status: 400,
      body: { status, message, correlationId: correlationId(), error: kind, error_description: message },
    };
  },
  tokenPrefix: { access: 'CJ', refresh: 'na1-', code: 'na1-' },
};

/** The legacy v1 token-information endpoints. */
export function registerTokenInfoRoutes(
  app: FastifyInstance,
  ctx: ProviderContext,
  getState: GetState,
): void {
  app.get('/oauth/v1/access-tokens/:token', async (req, reply) => {
    const { token } = req.params as { token: string };
    // The core resolves bearer tokens only from a request, so ask it with one carrying this token.
    const probe = {
      headers: { authorization: `Bearer ${token}` },
      query: {},
      url: req.url,
    } as unknown as FastifyRequest;
    const result = ctx.authenticate(probe);
    if (!result.ok) {
      return sendHubSpotError(reply, 404, 'OBJECT_NOT_FOUND', 'access token is invalid, expired or revoked', {
        context: { token: [token] },
      });
    }
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
    const grant = getState().refreshTokens.get(token);
    if (!grant || grant.revoked || grant.refreshToken !== token) {
      return sendHubSpotError(
        reply,
        404,
        'OBJECT_NOT_FOUND',
        'refresh token is invalid, expired or revoked',
        {
          context: { token: [token] },
        },
      );
    }
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
    const grant = getState().refreshTokens.get(token);
    if (grant?.revoked || !ctx.revokeToken(token)) {
      return sendHubSpotError(
        reply,
        404,
        'OBJECT_NOT_FOUND',
        'refresh token is invalid, expired or revoked',
        {
          context: { token: [token] },
        },
      );
    }
    return reply.code(204).send();
  });
}
