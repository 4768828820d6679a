import type {
  OAuthErrorCause,
  OAuthErrorKind,
  OAuthProfile,
  ProviderContext,
  RegisteredClient,
  TokenIssue,
} from '../../core/types.js';
import type { OAuthSpec, PlayedDefinition } from './definition.js';
import { parentPath, setPath } from './json-paths.js';

// The OAuth profile of each definition: the core's authorization server, spelled the way the
// definition says (paths, client authentication, body encoding, token response, error codes).

/** Tokens look like no real provider's, so a sandbox token is recognisable in logs. */
const TOKEN_PREFIX = { access: 'emu_at_', refresh: 'emu_rt_', code: 'emu_code_' };

/** RFC 6749 §5.2: 401 for a client that failed to authenticate, 400 otherwise. */
function rfcTokenError(kind: OAuthErrorKind, description: string): { status: number; body: unknown } {
  return {
    status: kind === 'invalid_client' ? 401 : 400,
    body: { error: kind, error_description: description },
  };
}

/**
 * The profile the store is created with (one store serves every definition). Its paths only
 * describe the layout: the module routes OAuth requests itself. Its refresh setting makes every
 * grant get a refresh token; each definition's profile says whether refreshing rotates it.
 */
export function baseProfile(ttlFor: OAuthProfile['accessTokenTtlFor']): OAuthProfile {
  return {
    authorizePath: '/{provider}/{authorization_url path}',
    tokenPath: '/{provider}/{token_url path}',
    clientAuth: ['client_secret_post', 'client_secret_basic'],
    tokenBodyFormats: ['form', 'json'],
    pkce: 'supported',
    scopeSeparator: ' ',
    accessTokenTtlSeconds: 3600,
    refreshTokens: 'static',
    accessTokenTtlFor: ttlFor,
    tokenResponse: (issue) => ({ access_token: issue.access.token, token_type: 'bearer' }),
    tokenError: rfcTokenError,
    tokenPrefix: TOKEN_PREFIX,
  };
}

/** Words in a provider's error codes that tell which failure each stands for (BAD_REFRESH_TOKEN, BAD_CLIENT_SECRET). */
function codeHints(cause: OAuthErrorCause): RegExp[] {
  if (cause === 'wrong_secret') return [/SECRET/i];
  if (cause === 'redirect_mismatch') return [/REDIRECT/i, /CODE/i];
  if (cause.startsWith('code_') || cause.startsWith('pkce_')) return [/CODE/i];
  if (cause.startsWith('refresh_')) return [/REFRESH/i];
  if (cause === 'unknown_client' || cause.startsWith('client_auth')) return [/CLIENT_?ID/i, /CLIENT/i];
  return [];
}

/** The definition's own code for a failure: one of its codes of the same kind, the best-named first. */
export function providerErrorCode(
  kinds: Record<string, 'invalid_grant' | 'invalid_client'>,
  kind: OAuthErrorKind,
  cause: OAuthErrorCause,
): string | undefined {
  const candidates = Object.keys(kinds).filter((code) => kinds[code] === kind);
  for (const hint of codeHints(cause)) {
    const named = candidates.find((code) => hint.test(code));
    if (named) return named;
  }
  return candidates[0];
}

function tokenErrorOf(auth: OAuthSpec): OAuthProfile['tokenError'] {
  const errors = auth.tokenErrors;
  if (!errors) return rfcTokenError;
  // Providers with their own error field (HubSpot's status) answer 400 whatever failed.
  return (kind, description, detail) => ({
    status: 400,
    body: {
      [errors.field]: providerErrorCode(errors.kinds, kind, detail.cause) ?? kind,
      message: description,
    },
  });
}

/** Where an origin that comes with the token (Salesforce's instance_url) points; the gateway maps any origin. */
export function instanceOrigin(key: string): string {
  return `https://${key}-instance.emulator.invalid`;
}

function tokenResponseOf(definition: PlayedDefinition, auth: OAuthSpec): OAuthProfile['tokenResponse'] {
  const paths = auth.tokenResponse;
  return (issue: TokenIssue, ctx: ProviderContext) => {
    const body: Record<string, unknown> = {};
    setPath(body, paths.accessToken, issue.access.token);
    // New on a code exchange and on rotation; a refresh that keeps the token sends none (RFC 6749 §6).
    if (issue.refreshToken) setPath(body, paths.refreshToken, issue.refreshToken);
    if (issue.access.expiresAt !== null) {
      setPath(body, paths.expiresIn, Math.max(0, Math.round((issue.access.expiresAt - ctx.clock()) / 1000)));
    }
    setPath(body, paths.scope, issue.grant.scopes.join(auth.scopeSeparator));
    if (paths.tokenType !== null) setPath(body, paths.tokenType, 'bearer');
    else {
      // Slack's user token: no bearer type at the top, the nested token says it is a user's.
      const parent = parentPath(paths.accessToken);
      if (parent) setPath(body, `${parent}.token_type`, 'user');
    }
    for (const path of definition.tokenParameters) setPath(body, path, instanceOrigin(definition.key));
    return body;
  };
}

/** The core's server for one OAuth definition; it serves only the clients registered for it. */
export function definitionProfile(
  definition: PlayedDefinition,
  auth: OAuthSpec,
  base: OAuthProfile,
): OAuthProfile {
  return {
    ...base,
    providerName: definition.displayName,
    authorizePath: auth.authorize.template,
    tokenPath: auth.token.template,
    clientAuth: [auth.clientAuth],
    tokenBodyFormats: [auth.tokenBody],
    pkce: auth.pkce ? 'required' : 'supported',
    scopeSeparator: auth.scopeSeparator,
    scopeParameter: auth.scopeParameter,
    refreshTokens: auth.rotates ? 'rotate' : 'static',
    // The gateway always sends state; a definition cannot say its provider requires it.
    stateOptional: true,
    servesClient: (client: RegisteredClient) => client.provider === definition.key,
    tokenResponse: tokenResponseOf(definition, auth),
    tokenError: tokenErrorOf(auth),
  };
}
