import type { NewAccountRefusal } from '../accounts/account-tokens.js';
import { Problem } from '../errors/problem.js';
import type { ClientStatusCache } from './client-status.js';
import { ALL_SCOPES, FULL_GRANT, type Grant, SCOPES, type Scope } from './scopes.js';

/**
 * The one place that decides what a caller may reach: the scopes of its grant and the connections
 * it is limited to. Every interface asks it (REST routes, the proxy and its fast path, the MCP
 * server, MCP tokens and MCP OAuth grants, gRPC), for names a request carries, for records found by
 * id and for lists, so a limit holds however a record is reached.
 *
 * - a name in a body, query, header or path: `requireConnection` (a 403 naming the allowed ones);
 * - a record found by id: `requireRecord` (out of reach answers as not found, so ids of other
 *   connections' records are not confirmed);
 * - a list: `listFilter` (the connections a store query must keep to, or null for all);
 * - a token or grant minted by a client: `narrowConnections` and `requireMintable` (never more
 *   than its client), `withinClient` when it is used (a client narrowed later narrows its tokens);
 * - a call for an end user with no account yet (a tool, the proxy, MCP, gRPC): `newAccountRefusal`
 *   (creating the account and handing out its authorization link is the `links` scope's).
 */

export type { Grant, Scope };

/** The grant of an authenticated caller: a dashboard session reaches everything its role reads. */
export function grantOfPrincipal(
  principal: { clientId: string; admin?: boolean },
  grants: Pick<ClientStatusCache, 'grantOf'>,
): Grant {
  return principal.admin ? FULL_GRANT : grants.grantOf(principal.clientId);
}
export { FULL_GRANT };

export function hasScope(grant: Grant, scope: Scope): boolean {
  return grant.scopes === null || grant.scopes.has(scope);
}

export function reachesConnection(grant: Grant, connectionName: string | null | undefined): boolean {
  return (
    grant.connectionNames === null ||
    (typeof connectionName === 'string' && grant.connectionNames.includes(connectionName))
  );
}

export function missingScope(scope: Scope, what: string): Problem {
  return new Problem(
    'insufficient_scope',
    `This client lacks the "${scope}" scope (${SCOPES[scope]}), which ${what} needs; use a client that has it, or create one with POST /api/v1/clients {"scopes": ["${scope}"]}.`,
    { extensions: { required_scope: scope } },
  );
}

export function connectionOutOfReach(connectionName: string | undefined, grant: Grant): Problem {
  return new Problem(
    'insufficient_scope',
    `This client may reach only the connections ${grant.connectionNames!.join(', ')}${connectionName ? `, not "${connectionName}"` : '; name one of them with connection_name'}.`,
    { extensions: { allowed_connections: grant.connectionNames } },
  );
}

/** Refuses a caller without `scope` ('all': every scope, for routes no table names). */
export function requireScope(grant: Grant, scope: Scope | 'all', what: string): void {
  if (grant.scopes === null) return;
  const missing =
    scope === 'all'
      ? ALL_SCOPES.find((s) => !hasScope(grant, s))
      : hasScope(grant, scope)
        ? undefined
        : scope;
  if (missing) throw missingScope(missing, what);
}

/** Refuses a connection named by the caller that its grant does not reach. */
export function requireConnection(grant: Grant, connectionName: string | undefined): void {
  if (!reachesConnection(grant, connectionName)) throw connectionOutOfReach(connectionName, grant);
}

/** Refuses a call the grant does not cover: the scope, then the connection it names (if limited). */
export function requireGrant(
  grant: Grant,
  scope: Scope,
  what: string,
  connectionName: string | undefined,
): void {
  requireScope(grant, scope, what);
  requireConnection(grant, connectionName);
}

/** The question a service asks of a record it finds inside its own transaction. */
export function reachOf(grant: Grant): (connectionName: string) => boolean {
  return (connectionName) => reachesConnection(grant, connectionName);
}

/**
 * A record found by id, if its connection is within reach; otherwise `notFound()` is thrown, the
 * same answer as for an id that does not exist.
 */
export function requireRecord<T extends { connection_name?: string | null }>(
  grant: Grant,
  record: T,
  notFound: () => Problem,
): T {
  if (!reachesConnection(grant, record.connection_name)) throw notFound();
  return record;
}

/**
 * The connections a list may show: null for all; otherwise the grant's (checked against the one
 * the caller filters by, if any, which must be among them).
 */
export function listFilter(grant: Grant, named?: string): readonly string[] | null {
  if (grant.connectionNames === null) return null;
  if (named !== undefined) requireConnection(grant, named);
  return grant.connectionNames;
}

/**
 * The connections a token minted by a client may reach: those it asks for, each within the
 * client's grant; when it asks for none, the client's own list (null: all).
 */
export function narrowConnections(grant: Grant, requested: readonly string[] | undefined): string[] | null {
  if (!requested?.length) return grant.connectionNames ? [...grant.connectionNames] : null;
  const outside = requested.find((name) => !reachesConnection(grant, name));
  if (outside !== undefined) {
    throw new Problem('insufficient_scope', connectionOutOfReach(outside, grant).detail, {
      errors: [
        {
          path: `/connection_names/${requested.indexOf(outside)}`,
          message: 'is outside this client’s connections',
        },
      ],
      extensions: { allowed_connections: grant.connectionNames },
    });
  }
  return [...requested];
}

/**
 * Refuses a client minting a token that runs tools (an MCP token, an MCP OAuth grant) without
 * holding `tools` itself: a token never does more than its client.
 */
export function requireMintable(grant: Grant, what: string): void {
  requireScope(grant, 'tools', what);
}

/**
 * A token's connections as they stand now: its own list within its minting client's current
 * grant (null: all). An empty list reaches nothing.
 */
export function withinClient(tokenConnections: readonly string[] | null, client: Grant): string[] | null {
  if (client.connectionNames === null) return tokenConnections ? [...tokenConnections] : null;
  if (tokenConnections === null) return [...client.connectionNames];
  return tokenConnections.filter((name) => client.connectionNames!.includes(name));
}

/**
 * What a call for an end user who has no account on a connection may do: with `links` (and the
 * connection within reach) the account is created PENDING_AUTH and the answer carries the link
 * that authorizes it; otherwise nothing is created and the refusal is the answer. Undefined: a
 * caller whose grant is whole, which may always create.
 */
export function newAccountRefusal(grant: Grant): NewAccountRefusal | undefined {
  if (grant.scopes === null && grant.connectionNames === null) return undefined;
  const refuse = (identifier: string, connectionName: string) => {
    if (!reachesConnection(grant, connectionName)) return connectionOutOfReach(connectionName, grant);
    return hasScope(grant, 'links') ? undefined : accountCreationRefused(identifier, connectionName);
  };
  return Object.assign(refuse, { within: listFilter(grant) });
}

function accountCreationRefused(identifier: string, connectionName: string): Problem {
  return new Problem(
    'account_not_found_links_required',
    `Identifier "${identifier}" has no account on connection "${connectionName}", and creating one (with the link that authorizes it) needs the "links" scope (${SCOPES.links}), which this client lacks; create the account with POST /api/v1/connected-accounts/authorization-link from a client that has it, or give this client the scope.`,
    { extensions: { required_scope: 'links', identifier, connection_name: connectionName } },
  );
}
