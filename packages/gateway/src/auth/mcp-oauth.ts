import { createHash, timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import { hashToken } from '../authorization/links.js';
import { Problem } from '../errors/problem.js';
import type { Database, Queryable } from '../store/db.js';
import { newId, randomBase62 } from '../store/ids.js';
import {
  findMcpOAuthClient,
  insertMcpOAuthClient,
  pruneUnusedMcpOAuthClients,
  touchMcpOAuthClient,
} from '../store/mcp-oauth-clients.js';
import {
  findMcpOAuthGrant,
  insertMcpOAuthGrant,
  type McpOAuthGrantRow,
  pruneMcpOAuthGrants,
  revokeMcpOAuthGrant,
} from '../store/mcp-oauth-grants.js';
import {
  accessTokenIdsOfGrant,
  findMcpOAuthRefreshToken,
  findMcpOAuthRefreshTokenByAccessToken,
  insertMcpOAuthRefreshToken,
  lockMcpOAuthRefreshToken,
  pruneMcpOAuthRefreshTokens,
  rotateMcpOAuthRefreshToken,
} from '../store/mcp-oauth-refresh-tokens.js';
import {
  approveMcpOAuthRequest,
  denyMcpOAuthRequest,
  findMcpOAuthRequest,
  insertMcpOAuthRequest,
  lockMcpOAuthRequestByCode,
  pruneMcpOAuthRequests,
  useMcpOAuthCode,
} from '../store/mcp-oauth-requests.js';
import {
  deleteMcpOAuthSettings,
  findMcpOAuthSettings,
  listMcpOAuthSettings,
  upsertMcpOAuthSettings,
} from '../store/mcp-oauth-settings.js';
import { findUsableMcpToken, revokeMcpTokensByIds } from '../store/mcp-tokens.js';
import type { ClientStatusCache } from './client-status.js';
import { FailureThrottle } from './failure-throttle.js';
import {
  ClientMetadataDocuments,
  isMetadataDocumentClientId,
  MAX_CLIENT_NAME_LENGTH,
  MAX_REDIRECT_URIS,
  MAX_URI_LENGTH,
  type McpOAuthClient,
  OAuthError,
  redirectUriFault,
  redirectUriRegistered,
} from './mcp-client-metadata.js';
import type { McpTokenService } from './mcp-tokens.js';

export { OAuthError } from './mcp-client-metadata.js';

/** The one scope: the MCP server, as far as the application's approval reaches. */
export const MCP_SCOPE = 'mcp';
/** Time the application has to sign its user in and approve or deny. */
export const AUTH_REQUEST_TTL_MS = 10 * 60_000;
/** Time a client has to exchange its authorization code. */
export const CODE_TTL_MS = 5 * 60_000;
export const ACCESS_TOKEN_TTL_SECONDS = 3600;
/** Each refresh token lasts this long unused; using it gives the next one. */
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3600_000;

const CODE_PREFIX = 'pmc_';
const REFRESH_PREFIX = 'pmr_';
const CLIENT_SECRET_PREFIX = 'pmcs_';
const CLIENT_ID_PREFIX = 'mcpc_';
const AUTH_METHODS = ['none', 'client_secret_post', 'client_secret_basic'] as const;
const GRANT_TYPES = ['authorization_code', 'refresh_token'];
const PKCE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const PKCE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
const MAX_STATE_LENGTH = 2048;
const PRUNE_EVERY_MS = 10 * 60_000;

export interface McpOAuthDeps {
  db: Database;
  logger: Logger;
  clients: ClientStatusCache;
  tokens: McpTokenService;
  publicUrl: string;
  /** Client ID metadata documents may be on http and on private addresses (local development, tests). */
  allowPrivateClientMetadata: boolean;
}

export interface McpOAuthSettingsView {
  sign_in_url: string | null;
  /** The URL MCP clients of this environment connect to with OAuth (null while no sign-in URL is set). */
  mcp_url: string | null;
}

export interface ApproveInput {
  auth_request_id: string;
  identifier: string;
  connection_names?: string[];
  tools?: string[];
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

type Params = Record<string, unknown>;

/**
 * OAuth for MCP clients (the MCP authorization specification): Portico is the authorization server
 * of its own /mcp. Clients register (RFC 7591) or name a client ID metadata document; the
 * authorization endpoint sends the browser to the application's sign-in URL, and the application,
 * having signed its user in, approves (naming the end user's identifier) or denies over the API.
 * Access tokens are per-user MCP tokens (McpTokenService) for one hour; refresh tokens rotate, and
 * a refresh token or code used twice revokes everything its grant issued.
 *
 * Which environment a request is for: its `resource` /mcp/e/{environment_id}, or, for /mcp (or no
 * resource), the one environment that has a sign-in URL set, when exactly one has.
 */
export class McpOAuthService {
  private readonly documents: ClientMetadataDocuments;
  // Registration is open to anyone: at most 30 clients an address registers in ten minutes.
  private readonly registrations = new FailureThrottle(30, 10 * 60_000);
  private lastPrune = 0;

  constructor(private readonly deps: McpOAuthDeps) {
    this.documents = new ClientMetadataDocuments({ allowPrivate: deps.allowPrivateClientMetadata });
  }

  get issuer(): string {
    return this.deps.publicUrl;
  }

  /** The MCP resource: /mcp, or an environment's own /mcp/e/{id}. */
  resourceUrl(environmentId?: string): string {
    return `${this.deps.publicUrl}/mcp${environmentId ? `/e/${environmentId}` : ''}`;
  }

  resourceMetadataUrl(environmentId?: string): string {
    return `${this.deps.publicUrl}/.well-known/oauth-protected-resource/mcp${environmentId ? `/e/${environmentId}` : ''}`;
  }

  /** RFC 9728 metadata of /mcp, or of an environment's own resource (which needs its sign-in URL). */
  async protectedResourceMetadata(environmentId?: string): Promise<Record<string, unknown>> {
    if (environmentId && !(await findMcpOAuthSettings(this.deps.db, environmentId))) {
      throw new Problem(
        'not_found',
        `No environment ${environmentId} serves MCP OAuth: set its sign-in URL with PUT /api/v1/mcp/oauth/settings.`,
      );
    }
    return {
      resource: this.resourceUrl(environmentId),
      authorization_servers: [this.issuer],
      bearer_methods_supported: ['header'],
      scopes_supported: [MCP_SCOPE],
      resource_name: 'Portico',
    };
  }

  /** RFC 8414 metadata. */
  authorizationServerMetadata(): Record<string, unknown> {
    const base = this.deps.publicUrl;
    return {
      issuer: this.issuer,
      authorization_endpoint: `${base}/mcp/oauth/authorize`,
      token_endpoint: `${base}/mcp/oauth/token`,
      registration_endpoint: `${base}/mcp/oauth/register`,
      revocation_endpoint: `${base}/mcp/oauth/revoke`,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: GRANT_TYPES,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: [...AUTH_METHODS],
      revocation_endpoint_auth_methods_supported: [...AUTH_METHODS],
      client_id_metadata_document_supported: true,
      scopes_supported: [MCP_SCOPE],
      authorization_response_iss_parameter_supported: true,
    };
  }

  // ---- the application's side (under /api/v1) ----

  async settings(environmentId: string): Promise<McpOAuthSettingsView> {
    const row = await findMcpOAuthSettings(this.deps.db, environmentId);
    return {
      sign_in_url: row?.sign_in_url ?? null,
      mcp_url: row ? await this.mcpUrlOf(environmentId) : null,
    };
  }

  async updateSettings(environmentId: string, signInUrl: string | null): Promise<McpOAuthSettingsView> {
    if (signInUrl === null) {
      await deleteMcpOAuthSettings(this.deps.db, environmentId);
    } else {
      const fault = signInUrlFault(signInUrl);
      if (fault) {
        throw new Problem(
          'invalid_input',
          `sign_in_url ${fault}: give the absolute http(s) URL where your application signs its user in for an MCP client, e.g. https://app.example.com/mcp/sign-in.`,
          { errors: [{ path: '/sign_in_url', message: fault }] },
        );
      }
      await upsertMcpOAuthSettings(this.deps.db, environmentId, signInUrl);
    }
    return this.settings(environmentId);
  }

  /** The MCP URL OAuth clients of this environment use: /mcp when it is the only one with a sign-in URL. */
  private async mcpUrlOf(environmentId: string): Promise<string> {
    const configured = await listMcpOAuthSettings(this.deps.db, 2);
    return configured.length === 1 && configured[0]!.environment_id === environmentId
      ? this.resourceUrl()
      : this.resourceUrl(environmentId);
  }

  async approve(
    principal: { environmentId: string; clientId: string; admin?: boolean },
    approval: ApproveInput,
  ): Promise<{ redirect_url: string }> {
    // The grant never reaches more than the client approving it (and its tokens are bound again when used).
    const input = this.deps.tokens.withinMinter(principal, approval, 'approving an MCP authorization');
    await this.deps.tokens.checkScope(principal.environmentId, input);
    const code = `${CODE_PREFIX}${randomBase62(43)}`;
    const row = await approveMcpOAuthRequest(this.deps.db, principal.environmentId, input.auth_request_id, {
      identifier: input.identifier,
      connection_names: input.connection_names ?? null,
      tools: input.tools ?? null,
      approved_by: principal.clientId,
      code_hash: hashToken(code),
      code_expires_at: new Date(Date.now() + CODE_TTL_MS),
    });
    if (!row) throw await this.unusableRequest(principal.environmentId, input.auth_request_id);
    return {
      redirect_url: withParams(row.redirect_uri, { code, state: row.state, iss: this.issuer }),
    };
  }

  async deny(principal: { environmentId: string }, authRequestId: string): Promise<{ redirect_url: string }> {
    const row = await denyMcpOAuthRequest(this.deps.db, principal.environmentId, authRequestId);
    if (!row) throw await this.unusableRequest(principal.environmentId, authRequestId);
    return {
      redirect_url: withParams(row.redirect_uri, {
        error: 'access_denied',
        error_description: 'The user or the application refused the authorization.',
        state: row.state,
        iss: this.issuer,
      }),
    };
  }

  private async unusableRequest(environmentId: string, id: string): Promise<Problem> {
    const row = await findMcpOAuthRequest(this.deps.db, environmentId, id);
    if (!row) {
      return new Problem(
        'mcp_auth_request_not_found',
        `No MCP authorization request ${id} in this environment; use the mcp_auth_request_id your sign-in URL received.`,
      );
    }
    if (row.status !== 'pending') {
      return new Problem(
        'mcp_auth_request_used',
        `MCP authorization request ${id} was already ${row.status}; the MCP client must start a new authorization.`,
      );
    }
    return new Problem(
      'mcp_auth_request_expired',
      `MCP authorization request ${id} expired (requests last ${AUTH_REQUEST_TTL_MS / 60_000} minutes); the MCP client must start a new authorization.`,
    );
  }

  // ---- the OAuth endpoints ----

  /** RFC 7591 dynamic registration. */
  async register(body: unknown, address: string): Promise<Record<string, unknown>> {
    const wait = this.registrations.retryAfterMs(address);
    if (wait > 0) {
      throw new OAuthError(
        'temporarily_unavailable',
        `Too many clients were registered from this address; try again in ${Math.ceil(wait / 1000)} s.`,
        429,
        { 'retry-after': String(Math.ceil(wait / 1000)) },
      );
    }
    const bad = (description: string) => new OAuthError('invalid_client_metadata', description);
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw bad('Send the client metadata as a JSON object.');
    const metadata = body as Params;
    const uris = metadata.redirect_uris;
    if (!Array.isArray(uris) || !uris.length || uris.length > MAX_REDIRECT_URIS) {
      throw new OAuthError(
        'invalid_redirect_uri',
        `redirect_uris must list 1 to ${MAX_REDIRECT_URIS} redirect URIs.`,
      );
    }
    for (const [i, uri] of uris.entries()) {
      const fault = redirectUriFault(uri);
      if (fault) throw new OAuthError('invalid_redirect_uri', `redirect_uris[${i}] ${fault}.`);
    }
    const method = metadata.token_endpoint_auth_method ?? 'client_secret_basic';
    if (!AUTH_METHODS.includes(method as (typeof AUTH_METHODS)[number])) {
      throw bad(`token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}.`);
    }
    const grantTypes = metadata.grant_types ?? GRANT_TYPES;
    if (!stringList(grantTypes) || grantTypes.some((g) => !GRANT_TYPES.includes(g))) {
      throw bad(`grant_types may hold only ${GRANT_TYPES.join(' and ')}.`);
    }
    const responseTypes = metadata.response_types ?? ['code'];
    if (!stringList(responseTypes) || responseTypes.some((r) => r !== 'code')) {
      throw bad('response_types may hold only "code".');
    }
    const echoed: Params = {
      redirect_uris: uris,
      token_endpoint_auth_method: method,
      grant_types: grantTypes,
      response_types: responseTypes,
    };
    const text = (field: string, max: number) => {
      const value = metadata[field];
      if (value === undefined) return;
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we refuse
      if (typeof value !== 'string' || value.length > max || /[\u0000-\u001f\u007f]/.test(value))
        throw bad(`${field} must be text of at most ${max} characters.`);
      echoed[field] = value;
    };
    text('client_name', MAX_CLIENT_NAME_LENGTH);
    text('scope', 1000);
    text('software_id', 200);
    text('software_version', 200);
    for (const field of ['client_uri', 'logo_uri', 'tos_uri', 'policy_uri']) {
      text(field, MAX_URI_LENGTH);
      if (echoed[field] !== undefined && !/^https?:\/\//i.test(echoed[field] as string))
        throw bad(`${field} must be an http(s) URL.`);
    }
    if (metadata.contacts !== undefined) {
      if (
        !stringList(metadata.contacts) ||
        metadata.contacts.length > 10 ||
        metadata.contacts.some((c) => c.length > 320)
      )
        throw bad('contacts must list at most 10 addresses.');
      echoed.contacts = metadata.contacts;
    }

    this.registrations.fail(address);
    this.prune();
    const id = `${CLIENT_ID_PREFIX}${randomBase62(22)}`;
    const secret = method === 'none' ? undefined : `${CLIENT_SECRET_PREFIX}${randomBase62(43)}`;
    const row = await insertMcpOAuthClient(this.deps.db, {
      id,
      secret_hash: secret ? hashToken(secret) : null,
      client_name: (echoed.client_name as string | undefined) ?? null,
      redirect_uris: uris as string[],
      token_endpoint_auth_method: method as string,
      metadata: echoed,
    });
    return {
      client_id: id,
      client_id_issued_at: Math.floor(row.created_at.getTime() / 1000),
      ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
      ...echoed,
    };
  }

  /**
   * The authorization endpoint: checks the request, keeps it, and answers where the browser goes
   * next (the application's sign-in URL, or the client's redirect URI with an error). A request
   * whose client or redirect URI cannot be trusted is refused without a redirect (an OAuthError).
   */
  async authorize(query: Params): Promise<string> {
    const clientId = single(query, 'client_id');
    if (!clientId) throw new OAuthError('invalid_request', 'client_id is required, once.');
    const client = await this.client(clientId);
    const redirectUri = single(query, 'redirect_uri');
    if (!redirectUri) throw new OAuthError('invalid_request', 'redirect_uri is required, once.');
    if (!redirectUriRegistered(client.redirectUris, redirectUri)) {
      throw new OAuthError('invalid_request', 'redirect_uri is not one of the redirect URIs of this client.');
    }
    // Every client here registered itself (or is described by a document anyone may host), so its
    // redirect URI is nobody's guarantee: a mistake in the request is answered here, as a page,
    // never by sending the browser there (an open redirect, RFC 9700 §4.11.2). Only a request the
    // application has seen and decided goes back to the client.
    const rawState = query.state;
    const state = typeof rawState === 'string' && rawState.length <= MAX_STATE_LENGTH ? rawState : null;
    const fail = (error: string, description: string): never => {
      throw new OAuthError(error, description);
    };
    if (rawState !== undefined && state === null)
      return fail('invalid_request', `state must be given once, at most ${MAX_STATE_LENGTH} characters.`);
    const responseType = single(query, 'response_type');
    if (responseType !== 'code') {
      return responseType
        ? fail('unsupported_response_type', 'Only response_type=code is supported.')
        : fail('invalid_request', 'response_type=code is required.');
    }
    const challenge = single(query, 'code_challenge');
    if (!challenge) return fail('invalid_request', 'code_challenge is required (PKCE with S256).');
    if (single(query, 'code_challenge_method') !== 'S256')
      return fail('invalid_request', 'code_challenge_method must be S256.');
    if (!PKCE_CHALLENGE.test(challenge))
      return fail(
        'invalid_request',
        'code_challenge must be the 43-character base64url SHA-256 of the verifier.',
      );
    const resource = query.resource === undefined ? undefined : normalizeResource(single(query, 'resource'));
    if (query.resource !== undefined && !resource)
      return fail('invalid_target', 'resource must be given once, as the MCP server URL.');
    const target = await this.environmentFor(resource);
    if (typeof target === 'string') return fail('invalid_target', target);

    this.prune();
    const row = await insertMcpOAuthRequest(this.deps.db, {
      id: newId('mcpar'),
      environment_id: target.environmentId,
      client_id: client.clientId,
      redirect_uri: redirectUri,
      state,
      code_challenge: challenge,
      resource: target.resource,
      expires_at: new Date(Date.now() + AUTH_REQUEST_TTL_MS),
    });
    return withParams(target.signInUrl, {
      mcp_auth_request_id: row.id,
      client_name: client.clientName ?? client.clientId,
      redirect_host: new URL(redirectUri).host,
    });
  }

  /**
   * The environment a resource is for, or why there is none: /mcp/e/{id} is that environment (with
   * a sign-in URL); /mcp, or no resource, is the one environment that has a sign-in URL.
   */
  private async environmentFor(
    resource: string | undefined,
  ): Promise<{ environmentId: string; signInUrl: string; resource: string } | string> {
    const own = `${this.resourceUrl()}/e/`;
    if (resource?.startsWith(own)) {
      const environmentId = resource.slice(own.length);
      const settings = /^[A-Za-z0-9_]{1,64}$/.test(environmentId)
        ? await findMcpOAuthSettings(this.deps.db, environmentId)
        : undefined;
      if (!settings) return `${resource} is not an MCP server of this gateway that accepts OAuth.`;
      return { environmentId, signInUrl: settings.sign_in_url, resource };
    }
    if (resource !== undefined && resource !== this.resourceUrl()) {
      return `resource must be this gateway's MCP server, ${this.resourceUrl()}.`;
    }
    const configured = await listMcpOAuthSettings(this.deps.db, 2);
    if (configured.length !== 1) {
      return configured.length
        ? `Several environments accept MCP OAuth here: connect to your environment's own MCP URL, ${this.resourceUrl()}/e/{environment_id}.`
        : 'No application has enabled OAuth for MCP clients on this gateway (PUT /api/v1/mcp/oauth/settings).';
    }
    return {
      environmentId: configured[0]!.environment_id,
      signInUrl: configured[0]!.sign_in_url,
      resource: this.resourceUrl(),
    };
  }

  /** A registered client, or the one a client ID metadata document describes. */
  private async client(clientId: string): Promise<McpOAuthClient> {
    if (isMetadataDocumentClientId(clientId)) return this.documents.client(clientId);
    const row = clientId.startsWith(CLIENT_ID_PREFIX)
      ? await findMcpOAuthClient(this.deps.db, clientId)
      : undefined;
    if (!row) {
      throw new OAuthError(
        'invalid_client',
        'client_id is not a registered client (register at the registration_endpoint, or use an https URL of a client ID metadata document).',
      );
    }
    return {
      clientId: row.id,
      clientName: row.client_name,
      redirectUris: row.redirect_uris,
      authMethod: row.token_endpoint_auth_method,
      kind: 'registered',
    };
  }

  /** The token endpoint: authorization_code (with PKCE) and refresh_token. */
  async token(body: Params, authorization: string | undefined): Promise<TokenResponse> {
    const grantType = single(body, 'grant_type');
    if (!grantType) throw new OAuthError('invalid_request', 'grant_type is required.');
    if (!GRANT_TYPES.includes(grantType)) {
      throw new OAuthError(
        'unsupported_grant_type',
        'grant_type must be authorization_code or refresh_token (gateway clients use POST /oauth/token).',
      );
    }
    const clientId = await this.authenticateClient(body, authorization);
    this.prune();
    const tokens =
      grantType === 'authorization_code'
        ? await this.exchangeCode(body, clientId)
        : await this.refresh(body, clientId);
    if (clientId.startsWith(CLIENT_ID_PREFIX)) await touchMcpOAuthClient(this.deps.db, clientId);
    return tokens;
  }

  private async exchangeCode(body: Params, clientId: string): Promise<TokenResponse> {
    const code = required(body, 'code');
    const redirectUri = required(body, 'redirect_uri');
    const verifier = required(body, 'code_verifier');
    const resource = normalizeResource(optional(body, 'resource'));
    if (!PKCE_VERIFIER.test(verifier)) {
      throw new OAuthError(
        'invalid_request',
        'code_verifier must be 43 to 128 unreserved characters (RFC 7636).',
      );
    }
    const outcome = await this.deps.db.transaction(async (tx): Promise<TokenResponse | OAuthError> => {
      const row = await lockMcpOAuthRequestByCode(tx, hashToken(code));
      if (!row || row.client_id !== clientId) return invalidGrant('The authorization code is unknown.');
      if (row.code_used_at) {
        // A code presented twice was seen by someone else: what it gave is taken back.
        if (row.grant_id) await this.revokeGrant(tx, row.grant_id);
        return invalidGrant('The authorization code was already used; the tokens issued for it are revoked.');
      }
      if (!row.code_expires_at || row.code_expires_at.getTime() <= Date.now())
        return invalidGrant('The authorization code expired; authorize again.');
      if (row.redirect_uri !== redirectUri)
        return invalidGrant('redirect_uri is not the one of the authorization request.');
      if (pkceChallenge(verifier) !== row.code_challenge)
        return invalidGrant('code_verifier does not match the code_challenge of the authorization request.');
      if (resource !== undefined && resource !== row.resource)
        return new OAuthError('invalid_target', `resource must be ${row.resource}, as authorized.`);
      const grant = await insertMcpOAuthGrant(tx, {
        id: newId('mcpg'),
        environment_id: row.environment_id,
        client_id: row.client_id,
        identifier: row.identifier!,
        connection_names: row.connection_names,
        tools: row.tools,
        resource: row.resource,
        approved_by: row.approved_by!,
      });
      await useMcpOAuthCode(tx, row.id, grant.id);
      return this.issueTokens(tx, grant);
    });
    if (outcome instanceof OAuthError) throw outcome;
    return outcome;
  }

  private async refresh(body: Params, clientId: string): Promise<TokenResponse> {
    const refreshToken = required(body, 'refresh_token');
    const resource = normalizeResource(optional(body, 'resource'));
    // A grant lives no longer than the application client that approved it (checked outside the
    // transaction: the embedded store runs one statement at a time).
    const known = await findMcpOAuthRefreshToken(this.deps.db, hashToken(refreshToken));
    const knownGrant = known ? await findMcpOAuthGrant(this.deps.db, known.grant_id) : undefined;
    if (
      knownGrant?.client_id === clientId &&
      !knownGrant.revoked_at &&
      knownGrant.approved_by.startsWith('cli_') &&
      !(await this.deps.clients.isActive(knownGrant.approved_by))
    ) {
      await this.revokeGrant(this.deps.db, knownGrant.id);
      throw invalidGrant('The application client that approved this grant was revoked; authorize again.');
    }
    const outcome = await this.deps.db.transaction(async (tx): Promise<TokenResponse | OAuthError> => {
      const token = await lockMcpOAuthRefreshToken(tx, hashToken(refreshToken));
      const grant = token ? await findMcpOAuthGrant(tx, token.grant_id) : undefined;
      if (!token || !grant || grant.client_id !== clientId)
        return invalidGrant('The refresh token is unknown.');
      if (grant.revoked_at) return invalidGrant('The refresh token was revoked; authorize again.');
      if (token.rotated_at) {
        // An old refresh token came back: whoever holds the family, it ends here.
        await this.revokeGrant(tx, grant.id);
        return invalidGrant('The refresh token was already used; every token of this grant is revoked.');
      }
      if (token.expires_at.getTime() <= Date.now())
        return invalidGrant('The refresh token expired; authorize again.');
      if (resource !== undefined && resource !== grant.resource)
        return new OAuthError('invalid_target', `resource must be ${grant.resource}, as authorized.`);
      // The pair is replaced: the access token issued beside this refresh token ends with it (clients
      // refresh once it expired or was refused), so a grant has one live access token at a time.
      await rotateMcpOAuthRefreshToken(tx, token.token_hash);
      await revokeMcpTokensByIds(tx, [token.access_token_id]);
      return this.issueTokens(tx, grant);
    });
    if (outcome instanceof OAuthError) throw outcome;
    return outcome;
  }

  /** RFC 7009: a refresh token ends its grant; an access token ends itself. Unknown tokens are fine. */
  async revoke(body: Params, authorization: string | undefined): Promise<void> {
    const clientId = await this.authenticateClient(body, authorization);
    const token = required(body, 'token');
    const hash = hashToken(token);
    if (token.startsWith(REFRESH_PREFIX)) {
      const row = await findMcpOAuthRefreshToken(this.deps.db, hash);
      const grant = row ? await findMcpOAuthGrant(this.deps.db, row.grant_id) : undefined;
      if (grant?.client_id === clientId) await this.revokeGrant(this.deps.db, grant.id);
      return;
    }
    const access = await findUsableMcpToken(this.deps.db, hash);
    const issued = access ? await findMcpOAuthRefreshTokenByAccessToken(this.deps.db, access.id) : undefined;
    const grant = issued ? await findMcpOAuthGrant(this.deps.db, issued.grant_id) : undefined;
    if (access && grant?.client_id === clientId) await revokeMcpTokensByIds(this.deps.db, [access.id]);
  }

  private async issueTokens(tx: Queryable, grant: McpOAuthGrantRow): Promise<TokenResponse> {
    const access = await this.deps.tokens.issue(
      { environmentId: grant.environment_id, clientId: grant.approved_by },
      {
        identifier: grant.identifier,
        ...(grant.connection_names ? { connection_names: grant.connection_names } : {}),
        ...(grant.tools ? { tools: grant.tools } : {}),
        expires_in: ACCESS_TOKEN_TTL_SECONDS,
      },
      tx,
    );
    const refreshToken = `${REFRESH_PREFIX}${randomBase62(43)}`;
    await insertMcpOAuthRefreshToken(tx, {
      token_hash: hashToken(refreshToken),
      grant_id: grant.id,
      access_token_id: access.id,
      expires_at: new Date(Date.now() + REFRESH_TOKEN_TTL_MS),
    });
    return {
      access_token: access.token,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
      refresh_token: refreshToken,
      scope: MCP_SCOPE,
    };
  }

  private async revokeGrant(db: Queryable, grantId: string): Promise<void> {
    await revokeMcpOAuthGrant(db, grantId);
    await revokeMcpTokensByIds(db, await accessTokenIdsOfGrant(db, grantId));
  }

  /**
   * The client of a token or revocation request, authenticated as it registered: a secret in the
   * Authorization header (client_secret_basic) or the body (client_secret_post); a public client
   * (and a metadata document's) names itself with client_id.
   */
  private async authenticateClient(body: Params, authorization: string | undefined): Promise<string> {
    let basic: { id: string; secret: string } | undefined;
    if (authorization && /^basic\s/i.test(authorization)) {
      const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0)
        throw new OAuthError('invalid_request', 'The Basic credentials must be client_id:client_secret.');
      try {
        basic = {
          id: decodeURIComponent(decoded.slice(0, colon).replaceAll('+', ' ')),
          secret: decodeURIComponent(decoded.slice(colon + 1).replaceAll('+', ' ')),
        };
      } catch {
        throw new OAuthError('invalid_request', 'The Basic credentials are not form-encoded.');
      }
    }
    const bodyId = optional(body, 'client_id');
    const bodySecret = optional(body, 'client_secret');
    if (basic && bodySecret !== undefined)
      throw new OAuthError(
        'invalid_request',
        'Authenticate the client one way: the Basic header or client_secret, not both.',
      );
    if (basic && bodyId !== undefined && bodyId !== basic.id)
      throw new OAuthError('invalid_request', 'client_id in the body is not the one of the Basic header.');
    const clientId = basic?.id ?? bodyId;
    const secret = basic?.secret ?? bodySecret;
    const refused = (description: string) =>
      new OAuthError(
        'invalid_client',
        description,
        401,
        basic ? { 'www-authenticate': 'Basic realm="portico"' } : {},
      );
    if (!clientId) throw refused('Name the client: client_id in the body, or the Basic header.');
    if (isMetadataDocumentClientId(clientId)) return clientId;
    const row = clientId.startsWith(CLIENT_ID_PREFIX)
      ? await findMcpOAuthClient(this.deps.db, clientId)
      : undefined;
    if (!row) throw refused('client_id is not a registered client.');
    if (row.secret_hash) {
      if (secret === undefined || !sameHash(hashToken(secret), row.secret_hash))
        throw refused('The client secret is missing or wrong.');
    }
    return row.id;
  }

  /** Forgets expired requests, unused clients and finished grants, at most every ten minutes. */
  private prune(): void {
    if (Date.now() - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = Date.now();
    const { db } = this.deps;
    void (async () => {
      await pruneMcpOAuthRequests(db, 24);
      await pruneUnusedMcpOAuthClients(db, 1);
      await pruneMcpOAuthRefreshTokens(db, 1);
      await pruneMcpOAuthGrants(db, 1);
    })().catch((err: unknown) => this.deps.logger.warn({ err }, 'MCP OAuth pruning failed'));
  }
}

function invalidGrant(description: string): OAuthError {
  return new OAuthError('invalid_grant', description);
}

/** A parameter given at most once: its text, undefined when absent; given twice, an OAuthError. */
function optional(params: Params, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string')
    throw new OAuthError('invalid_request', `${name} must be given once, as text.`);
  return value;
}

function required(params: Params, name: string): string {
  const value = optional(params, name);
  if (value === undefined) throw new OAuthError('invalid_request', `${name} is required.`);
  return value;
}

/** A query parameter's text when given exactly once; undefined otherwise (absent, empty or repeated). */
function single(params: Params, name: string): string | undefined {
  const value = params[name];
  return typeof value === 'string' && value ? value : undefined;
}

/** A resource indicator as compared: one trailing slash makes no difference. */
function normalizeResource(resource: string | undefined): string | undefined {
  return resource?.endsWith('/') ? resource.slice(0, -1) : resource;
}

function stringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.length <= 10 && value.every((v) => typeof v === 'string');
}

/** base64url(SHA-256(verifier)), the S256 code challenge (RFC 7636 §4.2). */
function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

/** `url` with these query parameters added (null and undefined left out). */
function withParams(url: string, params: Record<string, string | null | undefined>): string {
  const target = new URL(url);
  for (const [name, value] of Object.entries(params)) {
    if (value !== null && value !== undefined) target.searchParams.append(name, value);
  }
  return target.toString();
}

/** What is wrong with a sign-in URL, or undefined: an absolute http(s) URL with a host, no credentials. */
function signInUrlFault(value: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we refuse
  if (/[\u0000-\u0020\u007f-\u009f]/.test(value)) return 'must not contain spaces or control characters';
  if (!/^https?:\/\/[^/\\?#]/i.test(value))
    return 'must be an absolute URL starting with http:// or https://';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be a valid URL';
  }
  if (!url.hostname) return 'must have a host';
  if (url.username || url.password) return 'must not contain a user name or password';
  if (url.hash || value.includes('#')) return 'must not have a fragment';
  return undefined;
}
