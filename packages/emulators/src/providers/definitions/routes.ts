import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OAuthProfile, ProviderContext } from '../../core/types.js';
import { authenticateApi, echo, sendUnauthorized, userInfoBody } from './api.js';
import { parseOAuthBody } from './body.js';
import type { Catalog } from './catalog.js';
import type { OAuthSpec, PlayedDefinition } from './definition.js';
import type { DefinitionsState } from './keys.js';
import { revocationMethod, revoke } from './revocation.js';

// Every request under /definitions/{key}/ lands here: definitions arrive at run time, after the
// routes are fixed, so one wildcard route dispatches on the definition's own paths.

/** Provider APIs take uploads too; the gateway's body limit applies before this one. */
const BODY_LIMIT = 64 * 1024 * 1024;

export interface DefinitionRoutes {
  ctx: ProviderContext;
  getState: () => DefinitionsState;
  catalog: Catalog;
}

export function registerDefinitionRoutes(app: FastifyInstance, routes: DefinitionRoutes): void {
  // A child scope: the content-type parsers below must not reach the core's routes.
  app.register(async (scope) => {
    // Any content type, unparsed: a provider's API takes what it takes, and each endpoint reads
    // its body as its definition says (an echo shows malformed JSON as text instead of a 400).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_req, body, done) =>
      done(null, body),
    );
    const prefix = scope.prefix;
    const handler = (req: FastifyRequest, reply: FastifyReply) => answer(req, reply, routes, prefix);
    scope.all('/:provider', { bodyLimit: BODY_LIMIT }, handler);
    scope.all('/:provider/*', { bodyLimit: BODY_LIMIT }, handler);
  });
}

/** The provider's own path: what follows `{prefix}/{key}`, without the query, as sent (percent-encoded). */
function providerPath(req: FastifyRequest, prefix: string, key: string): string {
  const path = req.url.split('?')[0] ?? '/';
  const base = `${prefix}/${key}`;
  if (!path.startsWith(base)) return `/${(req.params as { '*'?: string })['*'] ?? ''}`;
  const rest = path.slice(base.length);
  return rest === '' ? '/' : rest;
}

function sendDefinitionNotFound(reply: FastifyReply, key: string): FastifyReply {
  return reply
    .code(404)
    .send({ error: { message: `No provider definition "${key}" is registered here.`, code: 'not_found' } });
}

async function answer(req: FastifyRequest, reply: FastifyReply, routes: DefinitionRoutes, prefix: string) {
  const key = (req.params as { provider: string }).provider;
  const entry = routes.catalog.get(key);
  if (!entry) return sendDefinitionNotFound(reply, key);
  const { definition, profile } = entry;
  const path = providerPath(req, prefix, key);
  if (profile && definition.auth.kind === 'oauth2') {
    const answered = oauthEndpoint(req, reply, {
      definition,
      auth: definition.auth,
      profile,
      path,
      ctx: routes.ctx,
    });
    if (answered) return answered;
  }
  const auth = authenticateApi(definition, req, routes.ctx, routes.getState());
  if (!auth.ok) return sendUnauthorized(reply, auth.reason, definition);
  const info = definition.userInfo;
  if (info && req.method === info.method && info.path.pattern.test(path)) {
    return reply.send(userInfoBody(info, auth.user));
  }
  return reply.send(echo(definition, req, path, auth.user));
}

interface OAuthRequest {
  definition: PlayedDefinition;
  auth: OAuthSpec;
  profile: OAuthProfile;
  path: string;
  ctx: ProviderContext;
}

/** The definition's authorize, token and revocation endpoints; undefined when the request is for none. */
function oauthEndpoint(
  req: FastifyRequest,
  reply: FastifyReply,
  { definition, auth, profile, path, ctx }: OAuthRequest,
): Promise<FastifyReply> | FastifyReply | undefined {
  if (auth.authorize.pattern.test(path) && (req.method === 'GET' || req.method === 'POST')) {
    const endpoints = ctx.serveOAuth(profile);
    if (req.method === 'GET') return endpoints.consentPage(req, reply);
    parseOAuthBody(req);
    return endpoints.consentDecision(req, reply);
  }
  if (auth.token.pattern.test(path) && req.method === 'POST') {
    if (parseOAuthBody(req)) return ctx.serveOAuth(profile).token(req, reply);
    const { status, body } = profile.tokenError('invalid_request', 'The request body is not valid JSON.', {
      cause: 'malformed_body',
    });
    return reply.code(status).header('cache-control', 'no-store').send(body);
  }
  const revocation = auth.revocation;
  if (revocation && req.method === revocationMethod(revocation.style)) {
    const match = revocation.path.pattern.exec(path);
    if (match) return revoke(req, reply, definition, revocation, match.groups ?? {}, ctx);
  }
  return undefined;
}
