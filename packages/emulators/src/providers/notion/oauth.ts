import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseBasicCredentials } from '../../core/oauth-requests.js';
import type { OAuthProfile, ProviderContext } from '../../core/types.js';
import { requestId, sendNotionError } from './errors.js';
import { isRecord } from './rich-text.js';
import { botIdFor, notionUserById, renderPerson, workspaceOf } from './users.js';

/**
 * Notion's OAuth server: `owner=user` on authorize, HTTP Basic + JSON at the token endpoint, no
 * scopes, no PKCE, no `expires_in`, and refresh tokens that rotate on use.
 */
export const notionOAuthProfile: OAuthProfile = {
  authorizePath: '/v1/oauth/authorize',
  tokenPath: '/v1/oauth/token',
  clientAuth: ['client_secret_basic'],
  tokenBodyFormats: ['json'],
  pkce: 'unsupported',
  scopeSeparator: ' ',
  accessTokenTtlSeconds: null,
  refreshTokens: 'rotate',
  // Notion's authorization URL does not need a `state` (the integration settings page's URL has none).
  stateOptional: true,
  validateAuthorizeRequest(params) {
    if (params.owner !== 'user') return 'owner must be "user".';
    return null;
  },
  tokenResponse(issue, ctx) {
    const user = notionUserById(issue.grant.userId);
    const workspace = user ? workspaceOf(user) : null;
    const body: Record<string, unknown> = {
      access_token: issue.access.token,
      token_type: 'bearer',
      bot_id: botIdFor(issue.grant.userId, issue.grant.clientId),
      workspace_name: workspace?.name ?? null,
      workspace_icon: workspace?.icon ?? null,
      workspace_id: workspace?.id ?? null,
      owner: {
        type: 'user',
        user: user
          ? renderPerson({ id: user.id, name: user.name, email: user.email, avatarUrl: null })
          : { object: 'user', id: issue.grant.userId },
      },
      duplicated_template_id: null,
      request_id: requestId(),
    };
    if (issue.refreshToken !== undefined) body.refresh_token = issue.refreshToken;
    // Only instances configured with a TTL say when the token dies; Notion itself never does.
    if (issue.access.expiresAt !== null) {
      body.expires_in = Math.max(0, Math.round((issue.access.expiresAt - ctx.clock()) / 1000));
    }
    return body;
  },
  tokenError(kind, description) {
    return {
      status: kind === 'invalid_client' ? 401 : 400,
      body: { error: kind, error_description: description, request_id: requestId() },
    };
  },
  tokenPrefix: { access: 'ntn_', refresh: 'nrt_', code: 'ncd_' },
};

/**
 * Checks the request's HTTP Basic client credentials as the token endpoint does; answers 401
 * `invalid_client` itself (returning false) when they are missing, malformed or wrong.
 */
function authenticateClient(req: FastifyRequest, reply: FastifyReply, ctx: ProviderContext): boolean {
  const credentials = parseBasicCredentials(req.headers.authorization);
  if (credentials && ctx.verifyClient(credentials.clientId, credentials.clientSecret).ok) return true;
  void reply.code(401).send({
    error: 'invalid_client',
    error_description: 'Client authentication failed.',
    request_id: requestId(),
  });
  return false;
}

function tokenOf(body: unknown): string | undefined {
  const token = isRecord(body) ? body.token : undefined;
  return typeof token === 'string' && token !== '' ? token : undefined;
}

function sendMissingToken(reply: FastifyReply): FastifyReply {
  return sendNotionError(
    reply,
    400,
    'validation_error',
    'body failed validation: body.token should be defined, instead was `undefined`.',
  );
}

/** Token revocation and introspection, which Notion serves next to its token endpoint (Basic client auth). */
export function registerNotionOAuthExtras(app: FastifyInstance, ctx: ProviderContext): void {
  app.post('/v1/oauth/revoke', async (req, reply) => {
    if (!authenticateClient(req, reply, ctx)) return reply;
    const token = tokenOf(req.body);
    if (!token) return sendMissingToken(reply);
    ctx.revokeToken(token);
    return reply.code(200).send({ request_id: requestId() });
  });

  app.post('/v1/oauth/introspect', async (req, reply) => {
    if (!authenticateClient(req, reply, ctx)) return reply;
    const token = tokenOf(req.body);
    if (!token) return sendMissingToken(reply);
    const resolved = ctx.resolveAccessToken(token);
    // Notion has no scopes, so an active token reports none.
    return reply.code(200).send({ active: resolved.ok, request_id: requestId() });
  });
}
