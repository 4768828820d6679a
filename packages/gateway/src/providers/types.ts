/** The facts Portico needs about one provider. Everything provider-specific lives in these files. */
export interface ProviderDefinition {
  key: ProviderKey;
  displayName: string;
  /** What the specification calls this kind of provider. */
  kind: string;
  /** Tool name prefix (`notes`, `calendar`…); undefined for proxy-only providers. */
  toolPrefix?: string;
  oauth: {
    authorizeUrl: string;
    tokenUrl: string;
    /** How to revoke a grant, where the provider can. `{token}` in the URL is replaced by the token. */
    revocation?: {
      url: string;
      /** form: POST token=… (RFC 7009); basic_json: POST {token} with client Basic auth; delete: DELETE the URL. */
      style: 'form' | 'basic_json' | 'delete';
      /** Which token revokes the whole grant. */
      token: 'access' | 'refresh';
    };
    /** How the token endpoint authenticates the client and encodes its body. */
    tokenRequest: 'basic_json' | 'form_post';
    pkce: boolean;
    /** Joins scopes in the authorization request and splits the granted `scope` of a token response. */
    scopeSeparator: ' ' | ',';
    /** Scopes a connection gets when it names none. */
    defaultScopes: string[];
    /** Scopes added to every authorization request (e.g. what yields a refresh token). */
    requiredScopes: string[];
    extraAuthorizeParams: Record<string, string>;
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
     * Where the sign-in URLs name a directory (`{tenant}` in authorizeUrl and tokenUrl) and which one
     * a connection uses unless it says otherwise.
     */
    tenant?: { default: string };
    /**
     * The provider's own token-endpoint error codes beyond RFC 6749's, by cause: `invalid_grant`
     * (the user must authorize again) or `invalid_client` (the connection's configuration).
     */
    tokenErrorKinds?: Record<string, 'invalid_grant' | 'invalid_client'>;
    /**
     * The body field that names a token-endpoint error when RFC 6749's `error` is absent (HubSpot
     * answers `{status: "BAD_REFRESH_TOKEN", message}`).
     */
    tokenErrorField?: string;
    /**
     * The provider's own token-response fields that describe the token rather than the account, left
     * out of the account's metadata like `expires_in` (Microsoft: `ext_expires_in`).
     */
    tokenResponseTokenFields?: string[];
  };
  api: {
    baseUrl: string;
    /** Headers every request carries unless the caller sets them. */
    defaultHeaders: Record<string, string>;
    /**
     * Proxy paths of the specification that differ from the provider's real layout, rewritten
     * before forwarding (first match wins).
     */
    pathRewrites: PathRewrite[];
    /** Header that carries the caller's `upstream_version` (Notion-Version), where the provider has one. */
    versionHeader?: string;
    /** Reads the provider's own error body: its message, and whether it means "slow down". */
    describeError(status: number, body: unknown): ProviderErrorDescription;
  };
  /** The emulator (in packages/emulators) that plays this provider in sandbox mode. */
  emulator: 'notion' | 'google' | 'hubspot' | 'microsoft';
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

export const PROVIDER_KEYS = [
  'notion',
  'google_calendar',
  'google_drive',
  'google_sheets',
  'google_docs',
  'hubspot',
  'sharepoint',
] as const;

export type ProviderKey = (typeof PROVIDER_KEYS)[number];
