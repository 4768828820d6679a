import { hashToken } from '../authorization/links.js';
import type { ConnectionService } from '../connections/service.js';
import { Problem } from '../errors/problem.js';
import type { Database, Queryable } from '../store/db.js';
import { newId, randomBase62 } from '../store/ids.js';
import {
  findUsableMcpToken,
  insertMcpToken,
  listMcpTokens,
  type McpTokenRow,
  revokeMcpToken,
  touchMcpToken,
} from '../store/mcp-tokens.js';
import type { ToolEngine } from '../tools/engine.js';
import {
  FULL_GRANT,
  type Grant,
  grantOfPrincipal,
  hasScope,
  narrowConnections,
  requireMintable,
  withinClient,
} from './access.js';
import type { ClientStatusCache } from './client-status.js';

/** Minted tokens start with this, so the /mcp route tells them from gateway access tokens. */
export const MCP_TOKEN_PREFIX = 'pmt_';

/** What one MCP session may reach: one end user's accounts, optionally fewer connections and tools. */
export interface McpScope {
  environmentId: string;
  identifier: string;
  /** null: every connection of the environment. */
  connectionNames: string[] | null;
  /** null: every tool. */
  tools: string[] | null;
  /**
   * The grant of whoever minted it as it stands now (a dashboard admin's is whole): its scopes say
   * whether the session may create accounts and authorization links (`links`).
   */
  grant: Grant;
}

export interface MintInput {
  identifier: string;
  connection_names?: string[];
  tools?: string[];
  /** Seconds; default DEFAULT_TTL_SECONDS. */
  expires_in?: number;
}

export interface McpTokenView {
  id: string;
  identifier: string;
  connection_names: string[] | null;
  tools: string[] | null;
  url: string;
  expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

export const DEFAULT_TTL_SECONDS = 30 * 24 * 3600;

export interface McpTokenDeps {
  db: Database;
  clients: ClientStatusCache;
  connections: ConnectionService;
  engine: ToolEngine;
  publicUrl: string;
}

/**
 * Per-user MCP tokens: an application mints one for an end user's MCP client (a desktop agent), so
 * the client never holds the application's own credentials and reaches only that user's accounts.
 */
export class McpTokenService {
  constructor(private readonly deps: McpTokenDeps) {}

  get url(): string {
    return `${this.deps.publicUrl}/mcp`;
  }

  async mint(
    principal: { environmentId: string; clientId: string; admin?: boolean },
    input: MintInput,
  ): Promise<McpTokenView & { token: string }> {
    const scoped = this.withinMinter(principal, input, 'minting an MCP token');
    await this.checkScope(principal.environmentId, scoped);
    return this.issue(principal, scoped);
  }

  /**
   * What a client may put in a token it mints (or an MCP OAuth grant it approves): never more than
   * itself, so it needs `tools` and its connections bound the token's (auth/access.ts).
   */
  withinMinter<T extends { connection_names?: string[] }>(
    principal: { clientId: string; admin?: boolean },
    input: T,
    what: string,
  ): T {
    const grant = grantOfPrincipal(principal, this.deps.clients);
    requireMintable(grant, what);
    const connectionNames = narrowConnections(grant, input.connection_names);
    const { connection_names: _, ...rest } = input;
    return (connectionNames ? { ...rest, connection_names: connectionNames } : rest) as T;
  }

  /** Refuses connection names the environment lacks and tool names the engine does not know. */
  async checkScope(
    environmentId: string,
    input: { connection_names?: string[] | undefined; tools?: string[] | undefined },
  ): Promise<void> {
    for (const [i, name] of (input.connection_names ?? []).entries()) {
      await this.deps.connections.get(environmentId, name).catch((error: unknown) => {
        if (error instanceof Problem && error.code === 'connection_not_found') {
          throw new Problem('invalid_input', `connection_names[${i}]: ${error.detail}`, {
            errors: [{ path: `/connection_names/${i}`, message: `no connection is named "${name}"` }],
          });
        }
        throw error;
      });
    }
    const known = new Set(this.deps.engine.list().map((t) => t.name));
    const unknown = (input.tools ?? []).map((name, i) => ({ name, i })).filter((t) => !known.has(t.name));
    if (unknown.length) {
      throw new Problem(
        'invalid_input',
        `Unknown tool names: ${unknown.map((t) => t.name).join(', ')}. List the tools with GET /api/v1/tools.`,
        { errors: unknown.map((t) => ({ path: `/tools/${t.i}`, message: `no tool is named "${t.name}"` })) },
      );
    }
  }

  /**
   * A token whose scope was checked before (by `mint`, or when an MCP OAuth grant was approved),
   * written with `db` (a transaction of the caller's, or the store).
   */
  async issue(
    principal: { environmentId: string; clientId: string },
    input: MintInput,
    db: Queryable = this.deps.db,
  ): Promise<McpTokenView & { token: string }> {
    const token = `${MCP_TOKEN_PREFIX}${randomBase62(43)}`;
    const row = await insertMcpToken(db, {
      id: newId('mcpt'),
      environment_id: principal.environmentId,
      client_id: principal.clientId,
      identifier: input.identifier,
      token_hash: hashToken(token),
      connection_names: input.connection_names ?? null,
      tools: input.tools ?? null,
      expires_at: new Date(Date.now() + (input.expires_in ?? DEFAULT_TTL_SECONDS) * 1000),
    });
    return { ...this.view(row), token };
  }

  async list(
    environmentId: string,
    query: { identifier?: string; page_size?: number; page_token?: string },
  ): Promise<{ data: McpTokenView[]; next_page_token: string | null }> {
    const limit = query.page_size ?? 50;
    const rows = await listMcpTokens(this.deps.db, environmentId, {
      ...(query.identifier ? { identifier: query.identifier } : {}),
      ...(query.page_token ? { after: Buffer.from(query.page_token, 'base64url').toString('utf8') } : {}),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return {
      data: page.map((r) => this.view(r)),
      next_page_token: rows.length > limit ? Buffer.from(page.at(-1)!.id).toString('base64url') : null,
    };
  }

  async revoke(environmentId: string, id: string): Promise<void> {
    if (!(await revokeMcpToken(this.deps.db, environmentId, id))) {
      throw new Problem(
        'mcp_token_not_found',
        `No live MCP token has id ${id}; list them with GET /api/v1/mcp/tokens.`,
      );
    }
  }

  /** The scope of a live token whose minting client is not revoked; undefined otherwise. */
  async authenticate(token: string): Promise<McpScope | undefined> {
    const row = await findUsableMcpToken(this.deps.db, hashToken(token));
    if (!row) return undefined;
    // A token minted by a gateway client dies with it; one minted from the dashboard has no client.
    let connectionNames = row.connection_names;
    let grant = FULL_GRANT;
    if (row.client_id.startsWith('cli_')) {
      if (!(await this.deps.clients.isActive(row.client_id))) return undefined;
      // The minting client as it stands now bounds the token: narrowed or stripped of tools since, so is it.
      const client = this.deps.clients.grantOf(row.client_id);
      if (!hasScope(client, 'tools')) return undefined;
      connectionNames = withinClient(row.connection_names, client);
      grant = client;
    }
    await touchMcpToken(this.deps.db, row.id);
    return {
      environmentId: row.environment_id,
      identifier: row.identifier,
      connectionNames,
      tools: row.tools,
      grant,
    };
  }

  private view(row: McpTokenRow): McpTokenView {
    return {
      id: row.id,
      identifier: row.identifier,
      connection_names: row.connection_names,
      tools: row.tools,
      url: this.url,
      expires_at: row.expires_at?.toISOString() ?? null,
      last_used_at: row.last_used_at?.toISOString() ?? null,
      created_at: row.created_at.toISOString(),
    };
  }
}
