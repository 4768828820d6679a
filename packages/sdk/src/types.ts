/** The gateway's objects, with camelCase names. */

export type ProviderKey =
  | 'notion'
  | 'google_calendar'
  | 'google_drive'
  | 'google_sheets'
  | 'google_docs'
  | 'hubspot'
  | 'sharepoint';

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
  displayName?: string;
}

export type UpdateConnectionInput = Partial<
  Pick<CreateConnectionInput, 'clientId' | 'clientSecret' | 'scopes' | 'tenant' | 'displayName'>
>;

export interface ConnectedAccount {
  id: string;
  connectionName: string;
  provider: ProviderKey;
  identifier: string;
  status: AccountStatus;
  statusReason: string | null;
  scopes: string[];
  tokenExpiresAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface AuthorizationLinkResult {
  link: string;
  expiresAt: string;
  connectedAccountId: string;
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

export interface Page<T> {
  data: T[];
  nextPageToken: string | null;
}
