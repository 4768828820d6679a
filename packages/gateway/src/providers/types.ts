/**
 * The facts Portico needs about one provider, compiled from its JSON definition
 * (`packages/gateway/providers/*.json`, or an operator's custom provider). Nothing outside this
 * folder reads a definition's JSON; everything provider-specific is a field here.
 */
export interface ProviderDefinition {
  key: ProviderKey;
  displayName: string;
  /** What the specification calls this kind of provider. */
  kind: string;
  docsUrl?: string;
  /** Shipped with Portico (false: an operator's custom provider). */
  builtIn: boolean;
  /** Tool name prefix (`notes`, `calendar`…); undefined for proxy-only providers. */
  toolPrefix?: string;
  /** How an end user's credential is obtained. */
  auth: AuthKind;
  /** The OAuth facts; present exactly when `auth` is `oauth2`. */
  oauth?: OAuthFacts;
  /** The hosted form's wording, for `api_key` and `basic`. */
  form?: CredentialForm;
  api: {
    /** May hold `{parameter}` placeholders, filled per connection or per account. */
    baseUrl: string;
    /** How the credential travels on each request. */
    credential: { in: 'header' | 'query'; name: string; value: string };
    /** Headers every request carries unless the caller sets them. */
    defaultHeaders: Record<string, string>;
    /**
     * Proxy paths of the specification that differ from the provider's real layout, rewritten
     * before forwarding (first match wins).
     */
    pathRewrites: PathRewrite[];
    /** Header that carries the caller's `upstream_version` (Notion-Version), where the provider has one. */
    versionHeader?: string;
    /** The provider's documented request limits, kept by the rate governor. */
    rateLimits: RateLimit[];
    /** Reads the provider's own error body: its message, and whether it means "slow down". */
    describeError(status: number, body: unknown): ProviderErrorDescription;
  };
  /** Values the URLs are templated with. */
  parameters: ProviderParameter[];
  userInfo?: UserInfoRequest;
  setup: ProviderSetup;
  /** The emulator that plays this provider in sandbox mode ('definitions' plays it from the definition). */
  emulator: 'notion' | 'google' | 'hubspot' | 'microsoft' | 'definitions' | 'mcp';
  /** A remote MCP server: its tools are the connection's (auth is OAuth, discovered per connection). */
  mcp?: McpServerFacts;
  /** The definition as written (JSON), for the API, the docs and the definitions emulator. */
  source: Readonly<Record<string, unknown>>;
}

export interface McpServerFacts {
  /** The MCP endpoint, possibly with `{parameter}` placeholders filled per connection. */
  url: string;
  transport: 'streamable_http' | 'sse';
  /** The client registrations its authorization server takes, in Portico's order of preference. */
  registration: Array<'client_id_metadata_document' | 'dynamic' | 'pre_registered'>;
}

export type AuthKind = 'oauth2' | 'api_key' | 'basic';

/** `requests` in any window of `perSeconds`, shared by one account's calls or all of a connection's. */
export interface RateLimit {
  requests: number;
  perSeconds: number;
  scope: 'account' | 'connection';
}

export interface OAuthFacts {
  authorizeUrl: string;
  tokenUrl: string;
  /** How to revoke a grant, where the provider can. `{token}` in the URL is replaced by the token. */
  revocation?: {
    url: string;
    style:
      | 'form'
      | 'form_client'
      | 'basic_form'
      | 'basic_json'
      | 'delete'
      | 'basic_delete'
      | 'credential_post'
      | 'credential_delete';
    /** Which token revokes the whole grant. */
    token: 'access' | 'refresh';
  };
  /** How the token endpoint authenticates the client, and how its body is encoded. */
  clientAuth: 'client_secret_post' | 'client_secret_basic';
  tokenBody: 'form' | 'json';
  pkce: boolean;
  /** Joins scopes in the authorization request and splits the granted `scope` of a token response. */
  scopeSeparator: ' ' | ',';
  /** The authorization request parameter that carries scopes. */
  scopeParameter: string;
  /** Scopes a connection gets when it names none. */
  defaultScopes: string[];
  /** Scopes added to every authorization request (e.g. what yields a refresh token). */
  requiredScopes: string[];
  extraAuthorizeParams: Record<string, string>;
  /** Where each value sits in a token response (dotted paths). */
  tokenResponse: {
    accessToken: string;
    refreshToken: string;
    expiresIn: string;
    scope: string;
    /** null: the type is not checked. */
    tokenType: string | null;
  };
  /** True when every refresh returns a new refresh token and retires the old one. */
  refreshRotates: boolean;
  /** Refresh this long before the access token's expiry. */
  refreshMarginSeconds: number;
  /**
   * Days after which the provider expires a refresh token that was not used (Google: six months,
   * Microsoft: 90 days); accounts idle that long are refreshed in the background to keep them.
   */
  refreshTokenIdleDays?: number;
  /**
   * The provider's own token-endpoint error codes beyond RFC 6749's, by cause: `invalid_grant`
   * (the user must authorize again) or `invalid_client` (the connection's configuration).
   */
  tokenErrorKinds?: Record<string, 'invalid_grant' | 'invalid_client'>;
  /** The body field that names a token-endpoint error when RFC 6749's `error` is absent. */
  tokenErrorField?: string;
  /** Top-level token-response fields that describe the token, not the account (left out of metadata). */
  tokenResponseTokenFields?: string[];
  /** Access-token lifetime the sandbox gives (null: never expires). */
  sandboxTokenTtlSeconds?: number | null;
}

export interface CredentialForm {
  label: string;
  usernameLabel: string;
  passwordLabel: string;
  help?: string;
  /** A regular expression an API key must match. */
  pattern?: string;
}

/** A `{name}` placeholder of the URLs, and where its value comes from. */
export interface ProviderParameter {
  name: string;
  source: 'connection' | 'token';
  label?: string;
  description?: string;
  default?: string;
  pattern?: string;
  /** For `token`: the token response path. */
  path?: string;
  /** For `token`: the domains the URL it carries must stay within (the outbound guard checks it). */
  domains?: string[];
}

export interface UserInfoRequest {
  url: string;
  method: 'GET' | 'POST';
  id?: string;
  label?: string;
  ok?: { path: string; equals: Array<string | number | boolean> };
}

/**
 * What an operator does at the provider before a connection works, and the common scopes with what
 * they allow: shown by the dashboard next to the connection's redirect URI and in the docs.
 * `{redirect_uri}` in a step is replaced by the connection's redirect URI.
 */
export interface ProviderSetup {
  console?: { name: string; url: string };
  steps: string[];
  scopes: Array<{ scope: string; description: string }>;
}

/** A specification path the provider lays out otherwise. */
export interface PathRewrite {
  /** A path prefix, or with `exact` the whole path. */
  from: string;
  to: string;
  exact?: boolean;
  /** Query parameters the provider's path needs, added unless the caller gave them. */
  query?: Record<string, string>;
}

/** What a provider's error body says, in the terms Portico acts on. */
export interface ProviderErrorDescription {
  message?: string;
  /** "Slow down", whatever the status (Google answers some rate limits with 403). */
  rateLimited?: boolean;
  /**
   * The resource changed since the caller read it, where the provider says so without a 409 or 412
   * (Google: 400 with status FAILED_PRECONDITION when a write's required revision is stale).
   */
  conflict?: boolean;
}

/** A provider's key: a built-in one, or an operator's custom provider in its environment. */
export type ProviderKey = string;
