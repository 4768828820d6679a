import type { Queryable } from './db.js';

/**
 * One MCP OAuth authorization request: `pending` until the application approves or denies it. An
 * approved one holds the hash of its authorization code and what was granted; once the code is
 * exchanged, `grant_id` names the grant it became.
 */
export interface McpOAuthRequestRow {
  id: string;
  environment_id: string;
  client_id: string;
  redirect_uri: string;
  state: string | null;
  code_challenge: string;
  resource: string;
  status: 'pending' | 'approved' | 'denied';
  expires_at: Date;
  identifier: string | null;
  connection_names: string[] | null;
  tools: string[] | null;
  approved_by: string | null;
  code_hash: string | null;
  code_expires_at: Date | null;
  code_used_at: Date | null;
  grant_id: string | null;
  created_at: Date;
}

export async function insertMcpOAuthRequest(
  db: Queryable,
  row: Pick<
    McpOAuthRequestRow,
    | 'id'
    | 'environment_id'
    | 'client_id'
    | 'redirect_uri'
    | 'state'
    | 'code_challenge'
    | 'resource'
    | 'expires_at'
  >,
): Promise<McpOAuthRequestRow> {
  const rows = await db.query<McpOAuthRequestRow>(
    `INSERT INTO mcp_oauth_requests (id, environment_id, client_id, redirect_uri, state, code_challenge, resource, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
    [
      row.id,
      row.environment_id,
      row.client_id,
      row.redirect_uri,
      row.state,
      row.code_challenge,
      row.resource,
      row.expires_at,
    ],
  );
  return rows[0]!;
}

export async function findMcpOAuthRequest(
  db: Queryable,
  environmentId: string,
  id: string,
): Promise<McpOAuthRequestRow | undefined> {
  const rows = await db.query<McpOAuthRequestRow>(
    'SELECT * FROM mcp_oauth_requests WHERE id = $1 AND environment_id = $2',
    [id, environmentId],
  );
  return rows[0];
}

/** Approves a pending, unexpired request once; undefined when it is not one. */
export async function approveMcpOAuthRequest(
  db: Queryable,
  environmentId: string,
  id: string,
  approval: {
    identifier: string;
    connection_names: string[] | null;
    tools: string[] | null;
    approved_by: string;
    code_hash: string;
    code_expires_at: Date;
  },
): Promise<McpOAuthRequestRow | undefined> {
  const rows = await db.query<McpOAuthRequestRow>(
    `UPDATE mcp_oauth_requests
     SET status = 'approved', identifier = $3, connection_names = $4, tools = $5, approved_by = $6,
         code_hash = $7, code_expires_at = $8
     WHERE id = $1 AND environment_id = $2 AND status = 'pending' AND expires_at > now()
     RETURNING *`,
    [
      id,
      environmentId,
      approval.identifier,
      approval.connection_names,
      approval.tools,
      approval.approved_by,
      approval.code_hash,
      approval.code_expires_at,
    ],
  );
  return rows[0];
}

/** Denies a pending, unexpired request once; undefined when it is not one. */
export async function denyMcpOAuthRequest(
  db: Queryable,
  environmentId: string,
  id: string,
): Promise<McpOAuthRequestRow | undefined> {
  const rows = await db.query<McpOAuthRequestRow>(
    `UPDATE mcp_oauth_requests SET status = 'denied'
     WHERE id = $1 AND environment_id = $2 AND status = 'pending' AND expires_at > now()
     RETURNING *`,
    [id, environmentId],
  );
  return rows[0];
}

/** The approved request holding this code, locked for the exchange (inside a transaction). */
export async function lockMcpOAuthRequestByCode(
  tx: Queryable,
  codeHash: string,
): Promise<McpOAuthRequestRow | undefined> {
  const rows = await tx.query<McpOAuthRequestRow>(
    `SELECT * FROM mcp_oauth_requests WHERE code_hash = $1 AND status = 'approved' FOR UPDATE`,
    [codeHash],
  );
  return rows[0];
}

/** Marks the code used and records the grant it became. */
export async function useMcpOAuthCode(tx: Queryable, id: string, grantId: string): Promise<void> {
  await tx.query('UPDATE mcp_oauth_requests SET code_used_at = now(), grant_id = $2 WHERE id = $1', [
    id,
    grantId,
  ]);
}

/** Forgets requests older than `hours` (their codes expired long before). */
export async function pruneMcpOAuthRequests(db: Queryable, hours: number): Promise<void> {
  await db.query('DELETE FROM mcp_oauth_requests WHERE created_at < now() - make_interval(hours => $1)', [
    hours,
  ]);
}
