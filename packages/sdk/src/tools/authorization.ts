import { PorticoError } from '../errors/errors.js';
import type { AccountStatus, ProviderKey, ToolDefinition } from '../types.js';

/**
 * The tool that is not a provider's: it gives the model a link for the user to connect (or
 * reconnect) an account. The MCP server offers the same tool under the same name.
 */
export const AUTHORIZE_TOOL = 'portico_authorize';

/**
 * The end user must connect (or reconnect) an account before a tool can run: the link to show
 * them, and what the model should say.
 */
export interface AuthorizationRequired {
  /** The link the user opens (single use, expiring). */
  link: string;
  expiresAt: string | undefined;
  /** The connection the link authorizes, when known. */
  connectionName: string | undefined;
  provider: ProviderKey | undefined;
  /** The provider's display name (e.g. `Notion`), when known. */
  providerName: string | undefined;
  /** The account's status (`PENDING_AUTH` for a user who never connected), when known. */
  accountStatus: AccountStatus | undefined;
  connectedAccountId: string | undefined;
  /**
   * What to tell the user, e.g. "Ask the user to open this link to connect their Notion account;
   * tools for it become available once they have."
   */
  instruction: string;
}

/** What the SDK knows about the account an error is about (the problem itself names none of it). */
export interface AuthorizationSubject {
  connectionName?: string | undefined;
  provider?: ProviderKey | undefined;
  providerName?: string | undefined;
}

const STATUSES: ReadonlySet<string> = new Set(['PENDING_AUTH', 'ACTIVE', 'EXPIRED', 'DISCONNECTED']);

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** "their Notion account" / "their account on connection crm" / "their account". */
function accountPhrase(subject: AuthorizationSubject): string {
  if (subject.providerName) return `their ${subject.providerName} account`;
  if (subject.connectionName) return `their account (connection "${subject.connectionName}")`;
  return 'their account';
}

export function authorizationInstruction(subject: AuthorizationSubject): string {
  return `Ask the user to open this link to connect ${accountPhrase(subject)}; tools for it become available once they have.`;
}

/**
 * The authorization an error asks for: an `account_not_active` problem (from `executeTool`,
 * `request` or a framework tool) carries a fresh link for the user; `undefined` for any other
 * error. `subject` fills in what the SDK knows and the problem does not say (connection, provider).
 *
 * ```ts
 * try { await portico.executeTool({ ... }) }
 * catch (error) {
 *   const auth = authorizationRequired(error);
 *   if (auth) return showUser(auth.link);
 *   throw error;
 * }
 * ```
 */
export function authorizationRequired(
  error: unknown,
  subject: AuthorizationSubject = {},
): AuthorizationRequired | undefined {
  if (!(error instanceof PorticoError) || !error.authorizationLink) return undefined;
  const problem = error.problem;
  const status = text(problem.account_status);
  const about: AuthorizationSubject = {
    connectionName: subject.connectionName ?? text(problem.connection_name),
    provider: subject.provider ?? text(problem.provider),
    providerName: subject.providerName,
  };
  return {
    link: error.authorizationLink.link,
    expiresAt: error.authorizationLink.expiresAt,
    connectionName: about.connectionName,
    provider: about.provider,
    providerName: about.providerName,
    accountStatus: status && STATUSES.has(status) ? (status as AccountStatus) : undefined,
    connectedAccountId: text(problem.connected_account_id),
    instruction: authorizationInstruction(about),
  };
}

/** The authorization a fresh link asks for (`portico_authorize`, or a link the SDK made for a tool call). */
export function authorizationFromLink(
  link: { link: string; expiresAt: string; connectedAccountId: string },
  subject: AuthorizationSubject,
): AuthorizationRequired {
  return {
    link: link.link,
    expiresAt: link.expiresAt,
    connectionName: subject.connectionName,
    provider: subject.provider,
    providerName: subject.providerName,
    accountStatus: undefined,
    connectedAccountId: link.connectedAccountId,
    instruction: authorizationInstruction(subject),
  };
}

/** What the model reads from `portico_authorize`: what to tell the user, and the link. */
export function authorizeResultText(authorization: AuthorizationRequired): string {
  return [
    authorization.instruction,
    `Link: ${authorization.link}`,
    `The link works once${authorization.expiresAt ? ` and expires at ${authorization.expiresAt}` : ''}.`,
  ].join('\n');
}

/**
 * The text a model reads when a tool needs the user to connect an account first: why, what to
 * say, and the link on its own line.
 */
export function authorizationText(
  authorization: AuthorizationRequired,
  options: { identifier?: string; toolName?: string } = {},
): string {
  const account = authorization.providerName
    ? `${authorization.providerName} account`
    : 'account for this tool';
  const where = authorization.connectionName ? ` (connection "${authorization.connectionName}")` : '';
  const who = options.identifier ? `The user ("${options.identifier}")` : 'The user';
  const why =
    authorization.accountStatus === 'EXPIRED'
      ? `${who} must reconnect their ${account}${where}: its authorization expired.`
      : authorization.accountStatus === 'DISCONNECTED'
        ? `${who} must reconnect their ${account}${where}: it was disconnected.`
        : `${who} has not connected their ${account}${where} yet.`;
  const lines = [
    `Authorization required. ${options.toolName ? `${options.toolName} cannot run: ${why[0]!.toLowerCase()}${why.slice(1)}` : why}`,
    authorization.instruction,
    `Link: ${authorization.link}`,
    `The link works once${authorization.expiresAt ? ` and expires at ${authorization.expiresAt}` : ''}.${options.toolName ? ` Once the user has connected, call ${options.toolName} again.` : ''}`,
  ];
  return lines.join('\n');
}

export interface AuthorizeConnection {
  name: string;
  provider: ProviderKey;
  /** The provider's display name. */
  providerName: string;
  /** The end user already has an ACTIVE account on it. */
  connected: boolean;
}

/** The `portico_authorize` tool for these connections (as the MCP server describes it). */
export function authorizeDefinition(connections: AuthorizeConnection[]): ToolDefinition {
  const names = connections.map((c) => c.name);
  const listed = connections
    .map((c) => `${c.name} (${c.providerName}${c.connected ? ', connected' : ''})`)
    .join(', ');
  return {
    name: AUTHORIZE_TOOL,
    description: `Get a link the user opens to connect (or reconnect) one of their accounts, when the user asks to connect an app or a tool answers that an account must be connected first (account_not_found, account_not_active). Show the link to the user; tools for that account become available once they have finished. Connections: ${listed || 'none configured'}.`,
    provider: 'portico',
    inputSchema: {
      type: 'object',
      properties: {
        connection_name: {
          type: 'string',
          description: 'The connection to authorize.',
          ...(names.length ? { enum: names } : {}),
        },
      },
      required: ['connection_name'],
      additionalProperties: false,
    },
    annotations: { readOnly: false, destructive: false, idempotent: false },
    versions: [],
  };
}
