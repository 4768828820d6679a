import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ApproveInput, type McpOAuthService, OAuthError } from '../../auth/mcp-oauth.js';
import { renderPage } from '../../authorization/pages.js';
import type { OriginPolicy } from '../../mcp/origins.js';
import { toProblem } from '../errors.js';
import { browserAccess, preflightRoutes } from '../mcp-browser-access.js';

const PUBLIC = { security: [] };

const SettingsBody = Type.Object(
  {
    sign_in_url: Type.Union([Type.String({ minLength: 1, maxLength: 2048 }), Type.Null()], {
      description:
        'Where the authorization endpoint sends the browser (with mcp_auth_request_id, client_name and redirect_host) so the application signs its user in and approves; null turns MCP OAuth off for this environment.',
    }),
  },
  { additionalProperties: false },
);

const ApproveBody = Type.Object(
  {
    auth_request_id: Type.String({ minLength: 1, maxLength: 64, description: 'The mcp_auth_request_id.' }),
    identifier: Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'The signed-in end user the MCP client acts for.',
    }),
    connection_names: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        minItems: 1,
        maxItems: 50,
        uniqueItems: true,
        description: 'Only these connections (default: all).',
      }),
    ),
    tools: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
        minItems: 1,
        maxItems: 200,
        uniqueItems: true,
        description: 'Only these tools (default: all).',
      }),
    ),
  },
  { additionalProperties: false },
);

const DenyBody = Type.Object(
  { auth_request_id: Type.String({ minLength: 1, maxLength: 64, description: 'The mcp_auth_request_id.' }) },
  { additionalProperties: false },
);

/** The application's side of MCP OAuth (under /api/v1, gateway token required). */
export async function mcpOAuthApiRoutes(
  app: FastifyInstance,
  opts: { oauth: McpOAuthService },
): Promise<void> {
  const { oauth } = opts;
  app.get(
    '/mcp/oauth/settings',
    { schema: { summary: "This environment's MCP OAuth sign-in URL and the MCP URL its OAuth clients use" } },
    async (req) => oauth.settings(req.principal.environmentId),
  );
  app.put(
    '/mcp/oauth/settings',
    { schema: { summary: 'Set (or, with null, remove) the MCP OAuth sign-in URL', body: SettingsBody } },
    async (req) =>
      oauth.updateSettings(
        req.principal.environmentId,
        (req.body as { sign_in_url: string | null }).sign_in_url,
      ),
  );
  app.post(
    '/mcp/oauth/approve',
    {
      schema: {
        summary:
          'Approve an MCP authorization request for a signed-in end user; answers where to send the browser',
        body: ApproveBody,
      },
    },
    async (req, reply) =>
      reply
        .header('cache-control', 'no-store')
        .send(await oauth.approve(req.principal, req.body as ApproveInput)),
  );
  app.post(
    '/mcp/oauth/deny',
    {
      schema: {
        summary: 'Deny an MCP authorization request; answers where to send the browser',
        body: DenyBody,
      },
    },
    async (req) => oauth.deny(req.principal, (req.body as { auth_request_id: string }).auth_request_id),
  );
}

const AuthorizeQuery = Type.Object({
  response_type: Type.Optional(Type.String({ description: 'code' })),
  client_id: Type.Optional(
    Type.String({
      description: 'A registered client id, or the https URL of a client ID metadata document.',
    }),
  ),
  redirect_uri: Type.Optional(Type.String()),
  code_challenge: Type.Optional(Type.String({ description: 'PKCE, S256 only (required).' })),
  code_challenge_method: Type.Optional(Type.String({ description: 'S256' })),
  state: Type.Optional(Type.String()),
  scope: Type.Optional(Type.String({ description: 'mcp' })),
  resource: Type.Optional(Type.String({ description: 'RFC 8707: the MCP server URL.' })),
});

const TokenBody = Type.Object({
  grant_type: Type.String({ description: 'authorization_code or refresh_token' }),
  code: Type.Optional(Type.String()),
  redirect_uri: Type.Optional(Type.String()),
  code_verifier: Type.Optional(Type.String()),
  refresh_token: Type.Optional(Type.String()),
  resource: Type.Optional(Type.String()),
  client_id: Type.Optional(Type.String()),
  client_secret: Type.Optional(Type.String()),
});

const RevokeBody = Type.Object({
  token: Type.String(),
  token_type_hint: Type.Optional(Type.String()),
  client_id: Type.Optional(Type.String()),
  client_secret: Type.Optional(Type.String()),
});

const RegisterBody = Type.Object({
  redirect_uris: Type.Array(Type.String(), { description: 'https, or http on a loopback address; 1 to 10.' }),
  client_name: Type.Optional(Type.String()),
  token_endpoint_auth_method: Type.Optional(
    Type.String({ description: 'none, client_secret_post or client_secret_basic (the default).' }),
  ),
  grant_types: Type.Optional(Type.Array(Type.String())),
  response_types: Type.Optional(Type.Array(Type.String())),
  scope: Type.Optional(Type.String()),
});

const FORM = ['application/x-www-form-urlencoded'];

/**
 * The OAuth side of /mcp: protected resource metadata (RFC 9728), authorization server metadata
 * (RFC 8414), and the authorization server's endpoints under /mcp/oauth. Those endpoints answer
 * errors as OAuth clients expect them (RFC 6749 §5.2 JSON), not as problems.
 */
export async function mcpOAuthRoutes(
  app: FastifyInstance,
  opts: { oauth: McpOAuthService; origins: OriginPolicy },
): Promise<void> {
  const { oauth } = opts;
  // Browser-based MCP clients discover and get tokens across origins: CORS for allowed origins only.
  app.addHook('onRequest', browserAccess(opts.origins, { refuseForeign: false }));
  preflightRoutes(app, [
    '/.well-known/oauth-protected-resource',
    '/.well-known/oauth-protected-resource/mcp',
    '/.well-known/oauth-protected-resource/mcp/e/:environment_id',
    '/.well-known/oauth-authorization-server',
    '/mcp/oauth/register',
    '/mcp/oauth/token',
  ]);
  const resourceMetadata = (environmentId?: string) => async (_req: FastifyRequest, reply: FastifyReply) =>
    reply
      .header('cache-control', 'public, max-age=300')
      .send(await oauth.protectedResourceMetadata(environmentId));
  app.get(
    '/.well-known/oauth-protected-resource',
    { schema: { ...PUBLIC, summary: 'Protected resource metadata of /mcp (RFC 9728)' } },
    resourceMetadata(),
  );
  app.get(
    '/.well-known/oauth-protected-resource/mcp',
    { schema: { ...PUBLIC, summary: 'Protected resource metadata of /mcp (RFC 9728)' } },
    resourceMetadata(),
  );
  app.get<{ Params: { environment_id: string } }>(
    '/.well-known/oauth-protected-resource/mcp/e/:environment_id',
    {
      schema: {
        ...PUBLIC,
        summary: "Protected resource metadata of an environment's own MCP URL, /mcp/e/{environment_id}",
        params: Type.Object({ environment_id: Type.String({ maxLength: 64 }) }),
      },
    },
    (req, reply) => resourceMetadata(req.params.environment_id)(req, reply),
  );
  app.get(
    '/.well-known/oauth-authorization-server',
    { schema: { ...PUBLIC, summary: 'Authorization server metadata of MCP OAuth (RFC 8414)' } },
    async (_req, reply) =>
      reply.header('cache-control', 'public, max-age=300').send(oauth.authorizationServerMetadata()),
  );

  await app.register(async (endpoints) => {
    endpoints.setErrorHandler(answerOAuthError);
    endpoints.get(
      '/mcp/oauth/authorize',
      {
        schema: {
          ...PUBLIC,
          summary:
            "MCP OAuth authorization endpoint: redirects the browser to the application's sign-in URL; a request it refuses is answered with an error page (never a redirect to the client)",
          querystring: AuthorizeQuery,
        },
      },
      async (req, reply) => {
        let location: string;
        try {
          location = await oauth.authorize(req.query as Record<string, unknown>);
        } catch (error) {
          // A person's browser is here: it is told what is wrong, and stays (no redirect to the client).
          if (!(error instanceof OAuthError) || error.status >= 500) throw error;
          return reply
            .code(error.status)
            .header('cache-control', 'no-store')
            .type('text/html; charset=utf-8')
            .send(
              renderPage({
                status: error.status,
                title: 'This sign-in request cannot be used',
                message: `${error.description} Go back to the application that sent you here and connect again.`,
                outcome: 'error',
                code: error.error,
              }),
            );
        }
        return reply.header('cache-control', 'no-store').redirect(location, 302);
      },
    );
    endpoints.post(
      '/mcp/oauth/register',
      {
        bodyLimit: 16 * 1024,
        schema: {
          ...PUBLIC,
          summary: 'MCP OAuth dynamic client registration (RFC 7591)',
          body: RegisterBody,
        },
      },
      async (req, reply) =>
        reply
          .code(201)
          .header('cache-control', 'no-store')
          .send(await oauth.register(req.body, req.ip)),
    );
    endpoints.post(
      '/mcp/oauth/token',
      {
        bodyLimit: 16 * 1024,
        schema: {
          ...PUBLIC,
          summary: 'MCP OAuth token endpoint: authorization_code (PKCE) and refresh_token grants',
          consumes: FORM,
          body: TokenBody,
        },
      },
      async (req, reply) =>
        reply
          .headers({ 'cache-control': 'no-store', pragma: 'no-cache' })
          .send(await oauth.token(req.body as Record<string, unknown>, req.headers.authorization)),
    );
    endpoints.post(
      '/mcp/oauth/revoke',
      {
        bodyLimit: 16 * 1024,
        schema: {
          ...PUBLIC,
          summary: 'MCP OAuth token revocation (RFC 7009)',
          consumes: FORM,
          body: RevokeBody,
        },
      },
      async (req, reply) => {
        await oauth.revoke(req.body as Record<string, unknown>, req.headers.authorization);
        return reply.code(200).header('cache-control', 'no-store').send();
      },
    );
  });
}

/** Errors of the OAuth endpoints as RFC 6749 §5.2 JSON: `error` and `error_description`. */
function answerOAuthError(error: FastifyError, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  let oauthError: OAuthError;
  if (error instanceof OAuthError) {
    oauthError = error;
  } else {
    const problem = toProblem(error, req);
    if (problem.status >= 500) {
      if (problem.code === 'internal_error') req.log.error({ err: error }, 'unhandled error');
      oauthError =
        problem.code === 'service_unavailable'
          ? new OAuthError('temporarily_unavailable', problem.detail, 503)
          : new OAuthError('server_error', 'The authorization server failed unexpectedly; try again.', 500);
    } else {
      oauthError = new OAuthError('invalid_request', problem.detail, problem.status);
    }
  }
  return reply
    .code(oauthError.status)
    .headers({ ...oauthError.headers, 'cache-control': 'no-store' })
    .type('application/json')
    .send(oauthError.body());
}
