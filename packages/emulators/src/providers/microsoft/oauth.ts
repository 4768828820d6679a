import { randomUUID } from 'node:crypto';
import type { OAuthErrorKind, OAuthProfile, TokenErrorDetail, TokenIssue } from '../../core/types.js';
import { findMicrosoftUser } from './users.js';

const GRAPH_RESOURCE = 'https://graph.microsoft.com/';
/** OpenID Connect scopes: answered by the identity platform itself, not granted on Graph. */
const OIDC_SCOPES = new Set(['openid', 'profile', 'email', 'offline_access']);

/**
 * What `https://graph.microsoft.com/.default` stands for: the permissions an app registration lists.
 * The emulator plays an app registered for everything the SharePoint emulator serves.
 */
export const DEFAULT_PERMISSIONS = ['User.Read', 'Sites.ReadWrite.All', 'Files.ReadWrite.All'];

/** `https://graph.microsoft.com/Files.Read` and `Files.Read` name the same permission. */
export function normalizeScope(scope: string): string {
  return scope.toLowerCase().startsWith(GRAPH_RESOURCE) ? scope.slice(GRAPH_RESOURCE.length) : scope;
}

export function hasScope(scopes: string[], wanted: string): boolean {
  const target = wanted.toLowerCase();
  return scopes.some((s) => normalizeScope(s).toLowerCase() === target);
}

/**
 * The `scope` a v2.0 token response reports: Graph permissions in short form, then the OIDC
 * scopes that were asked for. `offline_access` is never echoed, although it governs the refresh token.
 */
export function reportedScope(scopes: string[]): string {
  const graph: string[] = hasScope(scopes, '.default') ? [...DEFAULT_PERMISSIONS] : [];
  const seen = new Set<string>();
  for (const raw of scopes) {
    const scope = normalizeScope(raw);
    const key = scope.toLowerCase();
    if (seen.has(key) || OIDC_SCOPES.has(key) || key === '.default' || graph.includes(scope)) continue;
    seen.add(key);
    graph.push(scope);
  }
  const oidc = ['profile', 'openid', 'email'].filter((s) => hasScope(scopes, s));
  return [...graph, ...oidc].join(' ');
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** A token shaped like the identity platform's RS256 JWTs (the emulator does not sign them). */
function fakeJwt(payload: Record<string, unknown>): string {
  const header = { typ: 'JWT', alg: 'RS256', kid: 'portico-emulator' };
  return `${base64url(header)}.${base64url(payload)}.${Buffer.from(randomUUID()).toString('base64url')}`;
}

function idToken(issue: TokenIssue, nowSeconds: number): string | undefined {
  if (!hasScope(issue.grant.scopes, 'openid')) return undefined;
  const user = findMicrosoftUser(issue.grant.userId);
  const tenantId = user?.tenant.id ?? '9188040d-6c67-4c5b-b112-36a304b66dad';
  const claims: Record<string, unknown> = {
    aud: issue.grant.clientId,
    iss: `https://login.microsoftonline.com/${tenantId}/v2.0`,
    iat: nowSeconds,
    nbf: nowSeconds,
    exp: nowSeconds + 3600,
    oid: issue.grant.userId,
    sub: Buffer.from(`${issue.grant.userId}:${issue.grant.clientId}`).toString('base64url').slice(0, 43),
    tid: tenantId,
    ver: '2.0',
  };
  if (user && hasScope(issue.grant.scopes, 'profile')) {
    claims.name = user.name;
    claims.preferred_username = user.email;
  }
  if (user && hasScope(issue.grant.scopes, 'email')) claims.email = user.email;
  return fakeJwt(claims);
}

interface AadFailure {
  code: number;
  text: string;
  /** When the platform answers with another error code or status than the core's kind implies. */
  error?: string;
  status?: number;
}

const INVALID_CODE: AadFailure = {
  code: 70000,
  text: "The provided value for the input parameter 'code' is not valid.",
};
const INVALID_REFRESH_TOKEN: AadFailure = {
  code: 70000,
  text: "The provided value for the input parameter 'refresh_token' or 'assertion' is not valid.",
};

/** The AADSTS code and sentence the identity platform uses for each failure the core reports. */
function aadsts(kind: OAuthErrorKind, description: string, detail: TokenErrorDetail): AadFailure {
  switch (detail.cause) {
    case 'wrong_secret':
      return {
        code: 7000215,
        text: 'Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app.',
      };
    case 'unknown_client':
      return {
        code: 700016,
        text: `Application with identifier '${detail.clientId ?? ''}' was not found in the directory. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You may have sent your authentication request to the wrong tenant.`,
        error: 'unauthorized_client',
        status: 400,
      };
    case 'client_auth_missing':
    case 'client_auth_method':
      return {
        code: 7000218,
        text: "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.",
      };
    case 'code_reused':
      return {
        code: 54005,
        text: 'OAuth2 Authorization code was already redeemed, please retry with a new valid code or use an existing refresh token.',
      };
    case 'code_expired':
      return {
        code: 70008,
        text: 'The provided authorization code or refresh token has expired due to inactivity. Send a new interactive authorization request for this user and resource.',
      };
    case 'code_unknown':
    case 'code_client_mismatch':
      return INVALID_CODE;
    case 'pkce_missing':
    case 'pkce_mismatch':
      return {
        code: 501481,
        text: 'The Code_Verifier does not match the code_challenge supplied in the authorization request.',
      };
    case 'redirect_mismatch':
      return {
        code: 50011,
        text: 'The redirect URI specified in the request does not match the redirect URI used to obtain the authorization code.',
      };
    case 'refresh_revoked':
      return {
        code: 50173,
        text: 'The provided grant has expired due to it being revoked, a fresh auth token is needed. The user might have changed or reset their password.',
      };
    case 'refresh_unknown':
    case 'refresh_rotated':
    case 'refresh_client_mismatch':
      return INVALID_REFRESH_TOKEN;
    case 'unsupported_grant_type':
    case 'refresh_unsupported':
      return {
        code: 70003,
        text: `The app requested an unsupported grant type '${detail.grantType ?? ''}'.`,
      };
    case 'missing_parameter':
      return {
        code: 900144,
        text: `The request body must contain the following parameter: '${detail.parameter ?? ''}'.`,
      };
    case 'unsupported_content_type':
      // A JSON body looks like one without parameters, which is how the platform words it.
      return { code: 900144, text: "The request body must contain the following parameter: 'grant_type'." };
    default:
      break;
  }
  if (kind === 'invalid_scope') {
    return {
      code: 70011,
      text: `The provided value for the input parameter 'scope' is not valid. ${description}`,
    };
  }
  if (kind === 'unauthorized_client') return { code: 700016, text: description };
  return { code: 90014, text: description };
}

/** `2024-05-01 12:00:00Z`, the identity platform's timestamp format. */
function aadTimestamp(date: Date): string {
  return `${date.toISOString().slice(0, 19).replace('T', ' ')}Z`;
}

export const microsoftOAuthProfile: OAuthProfile = {
  // Fastify parameter: `common`, `organizations`, `consumers` or a tenant GUID all work, as at Microsoft.
  authorizePath: '/:tenant/oauth2/v2.0/authorize',
  tokenPath: '/:tenant/oauth2/v2.0/token',
  clientAuth: ['client_secret_post', 'client_secret_basic'],
  tokenBodyFormats: ['form'],
  pkce: 'supported',
  scopeSeparator: ' ',
  accessTokenTtlSeconds: 3599,
  refreshTokens: 'rotate',
  // Refresh tokens are only for clients that asked for offline_access.
  issueRefreshToken: ({ scopes }) => hasScope(scopes, 'offline_access'),
  tokenPrefix: {
    // Header and payload of a JWT, so the token has the three dot-separated parts Graph expects.
    access:
      'eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiIsImtpZCI6InBvcnRpY28tZW11bGF0b3IifQ.eyJhdWQiOiJodHRwczovL2dyYXBoLm1pY3Jvc29mdC5jb20iLCJpc3MiOiJwb3J0aWNvLWVtdWxhdG9yIn0.',
    refresh: '1.AXEA',
    code: '1.AXEA',
  },
  validateAuthorizeRequest(params) {
    const mode = params.response_mode;
    if (mode !== undefined && mode !== 'query' && mode !== 'form_post') {
      return `AADSTS900352: The provided value for the input parameter 'response_mode' is not valid: '${mode}'. Expected 'query' or 'form_post'.`;
    }
    if (mode === 'form_post') {
      return "AADSTS900352: response_mode 'form_post' is not emulated; use response_mode=query.";
    }
    if (!params.scope?.trim()) {
      return "AADSTS900144: The request body must contain the following parameter: 'scope'.";
    }
    return null;
  },
  tokenResponse(issue, ctx) {
    const now = ctx.clock();
    const expiresIn =
      issue.access.expiresAt === null ? 3599 : Math.max(0, Math.round((issue.access.expiresAt - now) / 1000));
    const body: Record<string, unknown> = {
      token_type: 'Bearer',
      scope: reportedScope(issue.grant.scopes),
      expires_in: expiresIn,
      ext_expires_in: expiresIn,
      access_token: issue.access.token,
    };
    // Control-API grants always hold a refresh token; the platform hands one out only for offline_access.
    if (issue.refreshToken && hasScope(issue.grant.scopes, 'offline_access'))
      body.refresh_token = issue.refreshToken;
    const id = idToken(issue, Math.floor(now / 1000));
    if (id) body.id_token = id;
    return body;
  },
  tokenError(kind, description, detail) {
    const { code, text, error, status } = aadsts(kind, description, detail);
    const traceId = randomUUID();
    const correlationId = randomUUID();
    const timestamp = aadTimestamp(new Date());
    return {
      status: status ?? (kind === 'invalid_client' ? 401 : 400),
      body: {
        error: error ?? kind,
        error_description: `AADSTS${code}: ${text}\r\nTrace ID: ${traceId}\r\nCorrelation ID: ${correlationId}\r\nTimestamp: ${timestamp}`,
        error_codes: [code],
        timestamp,
        trace_id: traceId,
        correlation_id: correlationId,
        error_uri: `https://login.microsoftonline.com/error?code=${code}`,
      },
    };
  },
};
