import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { renderConsentPage, renderErrorPage } from './consent-page.js';
import { PKCE_VALUE, stringParams } from './oauth-requests.js';
import { tokenBodyError, tokenRequest } from './oauth-token.js';
import type { ModuleRuntime, OAuthHost } from './runtime.js';
import type { EmulatorKey, OAuthEndpoints, OAuthProfile, RegisteredClient } from './types.js';

const PROVIDER_NAMES: Record<EmulatorKey, string> = {
  notion: 'Notion',
  google: 'Google',
  hubspot: 'HubSpot',
  microsoft: 'Microsoft',
  definitions: 'Provider',
  mcp: 'Remote MCP server',
};

function providerName(runtime: ModuleRuntime): string {
  return runtime.module.oauth.providerName ?? PROVIDER_NAMES[runtime.module.key];
}

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

function checkAuthorize(runtime: ModuleRuntime, params: Record<string, string>): AuthorizeCheck {
  const { module, store } = runtime;
  const profile = module.oauth;
  const clientId = params.client_id;
  if (!clientId)
    return { kind: 'page', error: 'invalid_request', description: 'Missing required parameter: client_id' };
  const client = store.clients.get(clientId);
  if (!client || (profile.servesClient && !profile.servesClient(client)))
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
  const pkce = checkPkce(profile, params);
  if ('problem' in pkce) return fail('invalid_request', pkce.problem);
  const problem = profile.validateAuthorizeRequest?.(params) ?? null;
  if (typeof problem === 'string') return fail('invalid_request', problem);
  if (problem) return fail(problem.error, problem.description);
  const scopes = (params[profile.scopeParameter ?? 'scope'] ?? '')
    .split(profile.scopeSeparator === ',' ? /[,\s]+/ : /\s+/)
    .filter((s) => s.length > 0);
  return {
    kind: 'ok',
    request: { client, redirectUri, state: state || undefined, scopes, ...pkce, params },
  };
}

/** RFC 7636 §4.3: the challenge, when the client sends one (or must: 'required' takes S256 only). */
function checkPkce(
  profile: OAuthProfile,
  params: Record<string, string>,
): { problem: string } | Pick<AuthorizeRequest, 'codeChallenge' | 'codeChallengeMethod'> {
  const sent = Boolean(params.code_challenge || params.code_challenge_method);
  if (profile.pkce === 'unsupported' || (!sent && profile.pkce !== 'required')) return {};
  if (!params.code_challenge) return { problem: 'Missing required parameter: code_challenge' };
  const method = params.code_challenge_method ?? 'plain';
  if (method !== 'S256' && (method !== 'plain' || profile.pkce === 'required')) {
    return { problem: `Unsupported code_challenge_method: ${method}` };
  }
  if (!PKCE_VALUE.test(params.code_challenge)) return { problem: 'Invalid code_challenge' };
  return { codeChallenge: params.code_challenge, codeChallengeMethod: method };
}

function sendAuthorizeFailure(
  reply: FastifyReply,
  name: string,
  check: Exclude<AuthorizeCheck, { kind: 'ok' }>,
): FastifyReply {
  if (check.kind === 'redirect') return reply.redirect(check.location, 302);
  return reply
    .code(400)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(renderErrorPage(name, check.error, check.description));
}

/** The consent form's own fields, which are not part of the client's authorize request. */
const CONSENT_FIELDS = new Set(['decision', 'user_id']);

/** The generic OAuth 2.0 authorization server, spelled the way the module's profile says. */
export function registerOAuthRoutes(app: FastifyInstance, runtime: ModuleRuntime, host: OAuthHost): void {
  if (runtime.module.routesOAuthItself) return;
  const profile = runtime.module.oauth;
  app.get(profile.authorizePath, (req, reply) => consentPage(runtime, req, reply));
  app.post(profile.authorizePath, { errorHandler: consentBodyError(runtime) }, (req, reply) =>
    consentDecision(runtime, req, reply),
  );
  app.post(profile.tokenPath, { errorHandler: tokenBodyError(profile) }, (req, reply) =>
    tokenRequest(runtime, host, req, reply),
  );
}

/**
 * The same server as handlers, answering with another profile (ctx.serveOAuth): the module's
 * runtime with the profile swapped, sharing its store, users and counters.
 */
export function oauthEndpoints(
  runtime: ModuleRuntime,
  host: OAuthHost,
  profile: OAuthProfile,
): OAuthEndpoints {
  const swapped: ModuleRuntime = { ...runtime, module: { ...runtime.module, oauth: profile } };
  return {
    consentPage: (req, reply) => consentPage(swapped, req, reply),
    consentDecision: (req, reply) => consentDecision(swapped, req, reply),
    token: (req, reply) => tokenRequest(swapped, host, req, reply),
  };
}

/** A consent form that does not parse is shown as the authorize error page, never redirected. */
function consentBodyError(runtime: ModuleRuntime) {
  return (error: FastifyError, _req: FastifyRequest, reply: FastifyReply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) throw error;
    return sendAuthorizeFailure(reply, providerName(runtime), {
      kind: 'page',
      error: 'invalid_request',
      description: error.message,
    });
  };
}

/** A client the profile can learn (a client ID metadata document), registered before it is checked. */
async function learnClient(runtime: ModuleRuntime, clientId: string | undefined): Promise<void> {
  const { module, store } = runtime;
  if (!clientId || store.clients.has(clientId) || !module.oauth.resolveClient) return;
  const client = await module.oauth.resolveClient(clientId).catch(() => undefined);
  if (client) store.registerClient(client);
}

/** GET authorize: the consent page, with the user the login hint names chosen. */
async function consentPage(runtime: ModuleRuntime, req: FastifyRequest, reply: FastifyReply) {
  const { module } = runtime;
  const profile = module.oauth;
  const params = stringParams(req.query);
  await learnClient(runtime, params.client_id);
  const check = checkAuthorize(runtime, params);
  if (check.kind !== 'ok') return sendAuthorizeFailure(reply, providerName(runtime), check);
  const hint = params.login_hint?.toLowerCase();
  const hinted = hint
    ? module.users.find((u) => u.email.toLowerCase() === hint || u.id === params.login_hint)
    : undefined;
  const html = renderConsentPage({
    providerName: providerName(runtime),
    clientId: check.request.client.clientId,
    scopes: check.request.scopes,
    users: module.users,
    selectedUserId: hinted?.id,
    action: req.url.split('?')[0] ?? profile.authorizePath,
    params,
  });
  return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(html);
}

/** The consent form's answer: back to the client with a code, or with access_denied. */
async function consentDecision(runtime: ModuleRuntime, req: FastifyRequest, reply: FastifyReply) {
  const { module, store } = runtime;
  const params = stringParams(req.body);
  const check = checkAuthorize(runtime, params);
  if (check.kind !== 'ok') return sendAuthorizeFailure(reply, providerName(runtime), check);
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
    return sendAuthorizeFailure(reply, providerName(runtime), {
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
    authorizeParams: Object.fromEntries(Object.entries(params).filter(([name]) => !CONSENT_FIELDS.has(name))),
  });
  return reply.redirect(withQuery(request.redirectUri, { code: code.code, state: request.state }), 302);
}
