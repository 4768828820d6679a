/** The gateway's objects, with camelCase names. */

/**
 * A provider's key: a built-in one (these seven have Portico's typed tools; `portico.providers.list()`
 * names every built-in one) or one of the environment's custom providers.
 */
export type ProviderKey =
  | 'notion'
  | 'google_calendar'
  | 'google_drive'
  | 'google_sheets'
  | 'google_docs'
  | 'hubspot'
  | 'sharepoint'
  | (string & {});

export type AccountStatus = 'PENDING_AUTH' | 'ACTIVE' | 'EXPIRED' | 'DISCONNECTED';

export interface Connection {
  id: string;
  name: string;
  provider: ProviderKey;
  clientId: string;
  scopes: string[];
  /** The redirect URI to register at the provider. */
  redirectUri: string;
  sandbox: boolean;
  tenant: string | null;
  /** Values of the provider's connection parameters, e.g. `{ subdomain: 'acme' }`. */
  parameters: Record<string, string>;
  displayName: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface CreateConnectionInput {
  name: string;
  provider: ProviderKey;
  clientId?: string;
  clientSecret?: string;
  scopes?: string[];
  sandbox?: boolean;
  tenant?: string;
  /** Values of the provider's connection parameters (`Provider.parameters`), e.g. `{ subdomain: 'acme' }`. */
  parameters?: Record<string, string>;
  displayName?: string;
}

/** `parameters` given here are merged into the connection's. */
export type UpdateConnectionInput = Partial<
  Pick<
    CreateConnectionInput,
    'clientId' | 'clientSecret' | 'scopes' | 'tenant' | 'parameters' | 'displayName'
  >
>;

export interface ConnectedAccount {
  id: string;
  connectionName: string;
  provider: ProviderKey;
  identifier: string;
  /** Who the account is at the provider (a name or e-mail, from its user-info request), when known. */
  label: string | null;
  status: AccountStatus;
  statusReason: string | null;
  scopes: string[];
  tokenExpiresAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * An account made from a credential the application already holds: OAuth tokens, an API key, or a
 * user name and password, as the connection's provider takes them.
 */
export interface ImportAccountInput {
  connectionName: string;
  identifier: string;
  /** OAuth: the access token. */
  accessToken?: string;
  /** OAuth: the refresh token (the gateway refreshes with it). */
  refreshToken?: string;
  /** OAuth: when the access token expires (RFC 3339). */
  expiresAt?: string;
  /** OAuth: seconds until the access token expires. */
  expiresIn?: number;
  scopes?: string[];
  /** API-key providers: the key. */
  apiKey?: string;
  /** Basic-auth providers: the user name (no ":"). */
  username?: string;
  /** Basic-auth providers: the password. */
  password?: string;
  /** Provider facts kept with the account (e.g. Salesforce's instance_url), sent as given. */
  metadata?: Record<string, unknown>;
  /**
   * Check the credential with the provider's user-info request before storing it (default: true
   * when the provider has one); a refused one throws `CredentialsInvalidError`.
   */
  verify?: boolean;
}

export interface AuthorizationLinkResult {
  link: string;
  expiresAt: string;
  connectedAccountId: string;
}

export type ProviderAuth = 'oauth2' | 'api_key' | 'basic';

/**
 * A provider definition as JSON, with the gateway's snake_case field names (`key`, `display_name`,
 * `auth`, `api`…): see `packages/gateway/providers/provider.schema.json`.
 */
export type ProviderDefinition = { [field: string]: unknown };

/** A value a connection gives for its provider (a subdomain, a region), templated into its URLs. */
export interface ProviderParameter {
  name: string;
  label: string;
  description: string | null;
  /** Used when the connection gives none. */
  default: string | null;
  required: boolean;
}

/** What an operator does at the provider before a connection works (`{redirect_uri}` is the connection's). */
export interface ProviderSetup {
  console?: { name: string; url: string };
  steps: string[];
  scopes: Array<{ scope: string; description: string }>;
}

export interface Provider {
  key: ProviderKey;
  displayName: string;
  kind: string;
  /** Shipped with the gateway (false: one of the environment's custom providers). */
  builtIn: boolean;
  /** How an end user's credential is obtained. */
  auth: ProviderAuth;
  docsUrl: string | null;
  /** The prefix of the provider's typed tools; null for proxy-only providers. */
  toolPrefix: string | null;
  defaultScopes: string[];
  requiredScopes: string[];
  /** Whether connections take a `tenant`. */
  tenant: boolean;
  /** The connection parameters (`parameters` of a connection). */
  parameters: ProviderParameter[];
  setup: ProviderSetup;
}

/** One provider with the definition it was compiled from. */
export interface ProviderWithDefinition extends Provider {
  definition: ProviderDefinition;
}

/** A custom provider as its creation or replacement returns it. */
export interface CustomProvider extends ProviderWithDefinition {
  createdAt: string;
  updatedAt: string;
}

export interface ToolAnnotations {
  readOnly: boolean;
  destructive: boolean;
  idempotent: boolean;
}

/** A JSON Schema object (the tools' input schemas are plain JSON). */
export type JsonSchema = { [keyword: string]: unknown };

export interface ToolDefinition {
  name: string;
  description: string;
  provider: ProviderKey;
  inputSchema: JsonSchema;
  annotations: ToolAnnotations;
  versions: string[];
  /**
   * Where the tool comes from (`specification`, `compiled`, `remote-mcp`), what it does
   * (`read-only` or `writes`, `destructive`) and its provider's category (`calendar`, `e-mail`, …).
   */
  tags?: string[];
}

/** A tool a search found, with how well it fits the query (compare within one search only). */
export interface ToolMatch extends ToolDefinition {
  score: number;
}

export interface Execution {
  id: string;
  toolName: string;
  toolVersion: string | null;
  connectedAccountId: string | null;
  connectionName: string | null;
  identifier: string;
  status: 'success' | 'error';
  errorCode: string | null;
  upstreamCalls: number;
  durationMs: number;
  startedAt: string;
  finishedAt: string;
}

/** One execution with what it takes to debug the call (`executions.get`). */
export interface ExecutionDetail extends Execution {
  /** The problem the call answered with; null on success. */
  error: { code: string; detail: string | null; errors: Array<{ path: string; message: string }> } | null;
  /** The tool input as sent, values that look secret as "[masked]", cut near 8 KB ("…truncated"). */
  input: unknown;
  /** On success, the output's shape (never its content). */
  outputSummary: {
    type: string;
    bytes: number;
    keys?: string[];
    itemCounts?: Record<string, number>;
    hasNextPage?: boolean;
  } | null;
  /** The provider's last HTTP status. */
  upstreamStatus: number | null;
  /** Requests sent to the provider, retries included. */
  attempts: number | null;
  /** Whether an access token was refreshed during the call. */
  tokenRefreshed: boolean | null;
  /** Milliseconds per step (validationMs, credentialMs, policyMs, upstreamMs, totalMs). */
  timings: Record<string, number> | null;
  links: { account: string | null; connection: string | null };
}

export interface Page<T> {
  data: T[];
  nextPageToken: string | null;
}
