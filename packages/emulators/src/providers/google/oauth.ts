import { createSign, generateKeyPairSync, type KeyPairKeyObjectResult } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type {
  AuthFailure,
  AuthorizeProblem,
  Grant,
  OAuthErrorKind,
  OAuthProfile,
  ProviderContext,
  TokenIssue,
} from '../../core/types.js';
import { googleUserById } from './users.js';

const SCOPE_BASE = 'https://www.googleapis.com/auth/';

/** Scopes Google accepts for the APIs this emulator serves (plus the OpenID Connect ones). */
export const GOOGLE_SCOPES: ReadonlySet<string> = new Set([
  'openid',
  'email',
  'profile',
  'https://www.googleapis.com/auth/userinfo.email',
  'https://www.googleapis.com/auth/userinfo.profile',
  ...[
    'calendar',
    'calendar.readonly',
    'calendar.events',
    'calendar.events.readonly',
    'drive',
    'drive.readonly',
    'drive.file',
    'drive.metadata',
    'drive.metadata.readonly',
    'spreadsheets',
    'spreadsheets.readonly',
    'documents',
    'documents.readonly',
  ].map((s) => SCOPE_BASE + s),
]);

/**
 * Checks a space-separated `scope` parameter; returns why it is refused (a missing scope is
 * `invalid_request`, an unknown one `invalid_scope`, as at Google), or null.
 */
export function checkGoogleScopeParam(scope: string | undefined): AuthorizeProblem | null {
  const scopes = (scope ?? '').split(' ').filter(Boolean);
  if (scopes.length === 0) return 'Missing required parameter: scope';
  const unknown = scopes.filter((s) => !GOOGLE_SCOPES.has(s));
  if (unknown.length > 0) {
    return {
      error: 'invalid_scope',
      description: `Some requested scopes were invalid. {invalid=[${unknown.join(', ')}]}`,
    };
  }
  return null;
}

/**
 * Google hands out a refresh token only for `access_type=offline`, and only the first time the user
 * consents to the client; after that only when `prompt` includes `consent` (the earlier refresh token
 * keeps working either way). Revoking the access makes the next consent the first again.
 */
export function googleIssuesRefreshToken(
  params: Readonly<Record<string, string>>,
  liveGrants: Grant[],
): boolean {
  if (params.access_type !== 'offline') return false;
  const forcedConsent = (params.prompt ?? '').split(' ').includes('consent');
  return forcedConsent || !liveGrants.some((grant) => grant.refreshToken !== undefined);
}

/**
 * The RSA key that signs ID tokens; one per process, published at /oauth2/v3/certs so a client
 * can verify ID tokens exactly as it would Google's. Made at first use: generating it takes a
 * tenth of a second or more, which every gateway start with the sandbox would otherwise pay.
 */
let rsaKey: KeyPairKeyObjectResult | undefined;
const signingKey = () => (rsaKey ??= generateKeyPairSync('rsa', { modulusLength: 2048 }));
const SIGNING_KID = 'portico-emulator-1';

function base64url(data: string | Buffer): string {
  return Buffer.from(data).toString('base64url');
}

function idToken(issue: TokenIssue, nowMs: number): string | undefined {
  const user = googleUserById(issue.grant.userId);
  if (!user) return undefined;
  const iat = Math.floor(nowMs / 1000);
  const header = { alg: 'RS256', kid: SIGNING_KID, typ: 'JWT' };
  const claims: Record<string, unknown> = {
    iss: 'https://accounts.google.com',
    azp: issue.grant.clientId,
    aud: issue.grant.clientId,
    sub: user.id,
    iat,
    exp: iat + 3599,
  };
  if (issue.access.scopes.includes('email') || issue.access.scopes.includes(`${SCOPE_BASE}userinfo.email`)) {
    claims.email = user.email;
    claims.email_verified = true;
  }
  if (
    issue.access.scopes.includes('profile') ||
    issue.access.scopes.includes(`${SCOPE_BASE}userinfo.profile`)
  ) {
    claims.name = user.name;
    const [given, ...family] = user.name.split(' ');
    claims.given_name = given;
    claims.family_name = family.join(' ');
  }
  const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  const signature = createSign('RSA-SHA256').update(input).sign(signingKey().privateKey);
  return `${input}.${base64url(signature)}`;
}

const TOKEN_ERROR_STATUS: Record<OAuthErrorKind, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
};

/** Google's token endpoint speaks in fixed phrases rather than explaining the failure. */
const TOKEN_ERROR_DESCRIPTION: Partial<Record<OAuthErrorKind, string>> = {
  invalid_grant: 'Bad Request',
  invalid_client: 'The OAuth client was not found.',
  unauthorized_client: 'Unauthorized',
};

export const googleOAuthProfile: OAuthProfile = {
  authorizePath: '/o/oauth2/v2/auth',
  tokenPath: '/token',
  clientAuth: ['client_secret_post', 'client_secret_basic'],
  tokenBodyFormats: ['form', 'json'],
  pkce: 'supported',
  scopeSeparator: ' ',
  accessTokenTtlSeconds: 3599,
  refreshTokens: 'static',
  validateAuthorizeRequest(params) {
    return checkGoogleScopeParam(params.scope);
  },
  issueRefreshToken: ({ params, liveGrants }) => googleIssuesRefreshToken(params, liveGrants),
  tokenResponse(issue, ctx) {
    const expiresIn =
      issue.access.expiresAt === null
        ? 3599
        : Math.max(0, Math.round((issue.access.expiresAt - ctx.clock()) / 1000));
    const body: Record<string, unknown> = {
      access_token: issue.access.token,
      expires_in: expiresIn,
      scope: issue.access.scopes.join(' '),
      token_type: 'Bearer',
    };
    if (issue.refreshToken && issue.grantType === 'authorization_code')
      body.refresh_token = issue.refreshToken;
    if (issue.access.scopes.includes('openid')) {
      const token = idToken(issue, ctx.clock());
      if (token) body.id_token = token;
    }
    return body;
  },
  tokenError(kind, description, detail) {
    // A known client with a wrong secret is "Unauthorized"; an unknown one "not found".
    const fixed =
      detail.cause === 'wrong_secret' ? 'Unauthorized' : (TOKEN_ERROR_DESCRIPTION[kind] ?? description);
    return { status: TOKEN_ERROR_STATUS[kind], body: { error: kind, error_description: fixed } };
  },
  tokenPrefix: { access: 'ya29.', refresh: '1//', code: '4/' },
};

const AUTH_HELP = 'See https://developers.google.com/identity/sign-in/web/devconsole-project.';

/** The 401 Calendar and Drive answer for a missing or refused bearer token. */
export function sendGoogleAuthError(reply: FastifyReply, reason: AuthFailure): FastifyReply {
  const missing = reason === 'missing';
  const message = missing
    ? `Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. ${AUTH_HELP}`
    : `Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. ${AUTH_HELP}`;
  return reply
    .code(401)
    .header(
      'www-authenticate',
      missing
        ? 'Bearer realm="https://accounts.google.com/"'
        : 'Bearer realm="https://accounts.google.com/", error="invalid_token"',
    )
    .type('application/json; charset=UTF-8')
    .send({
      error: {
        code: 401,
        message,
        errors: [
          {
            message: missing ? 'Login Required.' : 'Invalid Credentials',
            domain: 'global',
            reason: missing ? 'required' : 'authError',
            location: 'Authorization',
            locationType: 'header',
          },
        ],
        status: 'UNAUTHENTICATED',
      },
    });
}

function tokenFrom(req: FastifyRequest): string | undefined {
  const query = req.query as Record<string, string | undefined>;
  const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
  const fromBody = typeof body.token === 'string' ? body.token : undefined;
  return query.token ?? fromBody;
}

/** Runs `ctx.authenticate` on a token that arrived outside the Authorization header. */
function authenticateToken(ctx: ProviderContext, req: FastifyRequest, token: string) {
  const shadow = Object.create(req) as FastifyRequest;
  Object.defineProperty(shadow, 'headers', { value: { ...req.headers, authorization: `Bearer ${token}` } });
  return ctx.authenticate(shadow);
}

/** Revocation, token introspection, user info and signing keys: the Google OAuth endpoints outside the core. */
export function registerGoogleOAuthRoutes(app: FastifyInstance, ctx: ProviderContext): void {
  app.post('/revoke', async (req, reply) => {
    const token = tokenFrom(req);
    if (!token) {
      return reply.code(400).send({ error: 'invalid_request', error_description: 'Bad Request' });
    }
    // An access token of an already revoked grant is still on file; Google refuses it all the same.
    const known = authenticateToken(ctx, req, token);
    if ((!known.ok && known.reason === 'revoked') || !ctx.revokeToken(token)) {
      return reply.code(400).send({ error: 'invalid_token', error_description: 'Token expired or revoked' });
    }
    return reply.code(200).type('application/json; charset=utf-8').send({});
  });

  const tokenInfo = async (req: FastifyRequest, reply: FastifyReply) => {
    const query = req.query as Record<string, string | undefined>;
    const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
    const header = req.headers.authorization;
    const token =
      query.access_token ??
      (typeof body.access_token === 'string' ? body.access_token : undefined) ??
      (header?.startsWith('Bearer ') ? header.slice(7) : undefined);
    const auth = token ? authenticateToken(ctx, req, token) : null;
    if (!auth?.ok) {
      return reply.code(400).send({ error: 'invalid_token', error_description: 'Invalid Value' });
    }
    const { token: record, user } = auth;
    const expiresIn =
      record.expiresAt === null ? 3599 : Math.max(0, Math.floor((record.expiresAt - ctx.clock()) / 1000));
    const info: Record<string, string> = {
      azp: record.clientId,
      aud: record.clientId,
      sub: user.id,
      scope: record.scopes.join(' '),
      exp: String(Math.floor(ctx.clock() / 1000) + expiresIn),
      expires_in: String(expiresIn),
    };
    if (record.scopes.includes('email') || record.scopes.includes(`${SCOPE_BASE}userinfo.email`)) {
      info.email = user.email;
      info.email_verified = 'true';
    }
    return reply.send(info);
  };
  app.get('/tokeninfo', tokenInfo);
  app.post('/tokeninfo', tokenInfo);
  app.get('/oauth2/v3/tokeninfo', tokenInfo);
  app.post('/oauth2/v3/tokeninfo', tokenInfo);

  app.get('/oauth2/v3/userinfo', async (req, reply) => {
    const auth = ctx.authenticate(req);
    if (!auth.ok) return sendGoogleAuthError(reply, auth.reason);
    const { user, token } = auth;
    const info: Record<string, unknown> = { sub: user.id };
    if (token.scopes.includes('profile') || token.scopes.includes(`${SCOPE_BASE}userinfo.profile`)) {
      const [given, ...family] = user.name.split(' ');
      Object.assign(info, { name: user.name, given_name: given, family_name: family.join(' ') });
    }
    if (token.scopes.includes('email') || token.scopes.includes(`${SCOPE_BASE}userinfo.email`)) {
      Object.assign(info, { email: user.email, email_verified: true });
    }
    return reply.send(info);
  });

  app.get('/oauth2/v3/certs', async (_req, reply) => {
    const jwk = signingKey().publicKey.export({ format: 'jwk' });
    return reply.send({ keys: [{ ...jwk, kid: SIGNING_KID, alg: 'RS256', use: 'sig' }] });
  });
  app.get('/oauth2/v1/certs', async (_req, reply) => {
    const pem = signingKey().publicKey.export({ format: 'pem', type: 'spki' }).toString();
    return reply.send({ [SIGNING_KID]: pem });
  });
}
