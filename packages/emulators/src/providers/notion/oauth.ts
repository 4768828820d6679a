import type { FastifyInstance } from 'fastify';
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

function basicClientId(header: string | undefined): string | null {
  if (!header?.startsWith('Basic ')) return null;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon > 0 ? decoded.slice(0, colon) : null;
}

/** Token revocation and introspection, which Notion serves next to its token endpoint. */
export function registerNotionOAuthExtras(app: FastifyInstance, ctx: ProviderContext): void {
  app.post('/v1/oauth/revoke', async (req, reply) => {
    if (!basicClientId(req.headers.authorization)) {
      return reply.code(401).send({
        error: 'invalid_client',
        error_description: 'Client authentication failed.',
        request_id: requestId(),
      });
    }
    const token = isRecord(req.body) ? req.body.token : undefined;
    if (typeof token !== 'string' || token === '') {
      return sendNotionError(
        reply,
        400,
        'validation_error',
        'body failed validation: body.token should be defined, instead was `undefined`.',
      );
    }
    ctx.revokeToken(token);
    return reply.code(200).send({ request_id: requestId() });
  });

  app.post('/v1/oauth/introspect', async (req, reply) => {
    if (!basicClientId(req.headers.authorization)) {
      return reply.code(401).send({
        error: 'invalid_client',
        error_description: 'Client authentication failed.',
        request_id: requestId(),
      });
    }
    const token = isRecord(req.body) ? req.body.token : undefined;
    if (typeof token !== 'string' || token === '') {
      return sendNotionError(
        reply,
        400,
        'validation_error',
        'body failed validation: body.token should be defined, instead was `undefined`.',
      );
    }
    const resolved = ctx.resolveAccessToken(token);
    // Notion has no scopes, so an active token reports none.
    return reply.code(200).send({ active: resolved.ok, request_id: requestId() });
  });
}
