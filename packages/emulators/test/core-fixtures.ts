import { createHash, randomBytes } from 'node:crypto';
import type { EmulatorKey, EmulatorModule, OAuthProfile } from '../src/index.js';

/** State of the test emulator: a list the routes can append to, to prove reset re-seeds. */
export interface TestState {
  items: string[];
}

export interface TestModuleOptions {
  key?: EmulatorKey;
  prefix?: string;
  refreshTokens?: OAuthProfile['refreshTokens'];
  clientAuth?: OAuthProfile['clientAuth'];
  tokenBodyFormats?: OAuthProfile['tokenBodyFormats'];
  pkce?: OAuthProfile['pkce'];
  accessTokenTtlSeconds?: number | null;
  validateAuthorizeRequest?: OAuthProfile['validateAuthorizeRequest'];
  responseTypeOptional?: boolean;
  stateOptional?: boolean;
  issueRefreshToken?: OAuthProfile['issueRefreshToken'];
}

export const TEST_USERS = [
  { id: 'user-ada', name: 'Ada Lovelace', email: 'ada@example.com' },
  { id: 'user-grace', name: 'Grace Hopper', email: 'grace@example.com' },
];

/** A small provider used to test the core without depending on the real provider modules. */
export function testModule(opts: TestModuleOptions = {}): EmulatorModule<TestState> {
  const key = opts.key ?? 'notion';
  const mod: EmulatorModule<TestState> = {
    key,
    prefix: opts.prefix ?? `/${key}`,
    users: TEST_USERS,
    oauth: {
      authorizePath: '/oauth/authorize',
      tokenPath: '/oauth/token',
      clientAuth: opts.clientAuth ?? ['client_secret_basic', 'client_secret_post'],
      tokenBodyFormats: opts.tokenBodyFormats ?? ['form', 'json'],
      pkce: opts.pkce ?? 'supported',
      scopeSeparator: ' ',
      accessTokenTtlSeconds: opts.accessTokenTtlSeconds === undefined ? 3600 : opts.accessTokenTtlSeconds,
      refreshTokens: opts.refreshTokens ?? 'rotate',
      validateAuthorizeRequest: opts.validateAuthorizeRequest,
      responseTypeOptional: opts.responseTypeOptional,
      stateOptional: opts.stateOptional,
      issueRefreshToken: opts.issueRefreshToken,
      tokenResponse(issue) {
        const body: Record<string, unknown> = {
          access_token: issue.access.token,
          token_type: 'Bearer',
          scope: issue.grant.scopes.join(' '),
          user_id: issue.grant.userId,
        };
        if (issue.access.expiresAt !== null) {
          body.expires_in = Math.round((issue.access.expiresAt - Date.now()) / 1000);
        }
        if (issue.refreshToken) body.refresh_token = issue.refreshToken;
        if (issue.grant.authorizeParams) body.authorize_params = issue.grant.authorizeParams;
        return body;
      },
      tokenError(kind, description, detail) {
        return {
          status: kind === 'invalid_client' ? 401 : 400,
          // `cause` and the rest of the detail are the test module's own fields, for asserting the core's detail.
          body: { error: kind, error_description: description, ...detail },
        };
      },
      tokenPrefix: { access: 'at_', refresh: 'rt_', code: 'code_' },
    },
    createState: () => ({ items: ['seeded'] }),
    registerRoutes(app, ctx, getState) {
      app.get('/v1/users/me', async (req, reply) => {
        const auth = ctx.authenticate(req);
        if (!auth.ok) return mod.sendAuthError(reply, auth.reason);
        return { id: auth.user.id, name: auth.user.name, scopes: auth.token.scopes };
      });
      app.get('/v1/items', async (req, reply) => {
        const auth = ctx.authenticate(req);
        if (!auth.ok) return mod.sendAuthError(reply, auth.reason);
        return { items: getState().items };
      });
      app.post('/v1/items', async (req, reply) => {
        const auth = ctx.authenticate(req);
        if (!auth.ok) return mod.sendAuthError(reply, auth.reason);
        getState().items.push(String((req.body as { name?: unknown }).name));
        return reply.code(201).send({ items: getState().items });
      });
      app.get('/v1/tokeninfo/:token', async (req) => {
        const { token } = req.params as { token: string };
        const access = ctx.resolveAccessToken(token);
        const grant = ctx.grantForRefreshToken(token);
        return {
          access: access.ok ? access.user.id : access.reason,
          refresh_grant_user: grant?.userId ?? null,
          ...(!access.ok && access.expiredAt !== undefined ? { expired_at: access.expiredAt } : {}),
        };
      });
      app.get('/v1/base', async (req) => ({ base: ctx.publicBase(req) }));
      app.post('/v1/revoke', async (req) => ({
        revoked: ctx.revokeToken(String((req.body as { token?: unknown }).token)),
      }));
      app.post('/v1/revoke-user', async (req) => ({
        revoked: ctx.revokeGrants({ userId: String((req.body as { user_id?: unknown }).user_id) }),
      }));
      app.post('/v1/verify-client', async (req) => {
        const { client_id, client_secret } = req.body as { client_id: string; client_secret: string };
        const result = ctx.verifyClient(client_id, client_secret);
        return result.ok ? { ok: true, client_id: result.client.clientId } : result;
      });
    },
    sendAuthError: (reply, reason) => reply.code(401).send({ object: 'error', code: 'unauthorized', reason }),
    sendNotFound: (reply, req) =>
      reply
        .code(404)
        .send({ object: 'error', code: 'object_not_found', message: `no route ${req.method} ${req.url}` }),
  };
  return mod;
}

export const CLIENT = {
  clientId: 'client-1',
  clientSecret: 'secret-1',
  redirectUris: ['http://localhost:9999/callback'],
};

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function authorizeUrl(base: string, params: Record<string, string | undefined>): string {
  const url = new URL(`${base}/oauth/authorize`);
  const defaults = {
    client_id: CLIENT.clientId,
    redirect_uri: CLIENT.redirectUris[0],
    response_type: 'code',
    state: 'st-1',
  };
  for (const [name, value] of Object.entries({ ...defaults, ...params })) {
    if (value !== undefined) url.searchParams.set(name, value);
  }
  return url.toString();
}

export function basic(id: string, secret: string): string {
  return 'Basic ' + Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64');
}

export async function tokenRequest(
  base: string,
  params: Record<string, string>,
  opts: { auth?: 'basic' | 'body'; json?: boolean; secret?: string } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = {};
  const fields = { ...params };
  const secret = opts.secret ?? CLIENT.clientSecret;
  if ((opts.auth ?? 'body') === 'basic') headers.authorization = basic(CLIENT.clientId, secret);
  else Object.assign(fields, { client_id: CLIENT.clientId, client_secret: secret });
  headers['content-type'] = opts.json ? 'application/json' : 'application/x-www-form-urlencoded';
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers,
    body: opts.json ? JSON.stringify(fields) : new URLSearchParams(fields).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
