import type { Logger } from 'pino';
import type { AccountTokens } from '../../accounts/account-tokens.js';
import { ProviderClient } from '../../accounts/provider-client.js';
import type { RateGovernor } from '../../governor/governor.js';
import { accountsOfConnection } from '../../store/accounts.js';
import { type ConnectionRow, listConnections } from '../../store/connections.js';
import type { Database } from '../../store/db.js';
import type { UpstreamHttp } from '../../upstream/http.js';
import type { EnvironmentTools } from '../engine.js';
import type { ToolSource } from '../registry.js';
import type { AnyTool, ToolAnnotations } from '../types.js';
import { remoteToolNames } from './naming.js';
import { McpSessions, type RemoteToolSpec } from './session.js';

export interface RemoteMcpToolsDeps {
  db: Database;
  accountTokens: AccountTokens;
  http: UpstreamHttp;
  governor?: RateGovernor | undefined;
  logger: Logger;
  /** How long a connection's tool list is used before it is asked for again. */
  ttlMs?: number;
}

const DEFAULT_TTL_MS = 60_000;
const CONNECTIONS_SCANNED = 500;

interface Listing {
  at: number;
  tools: Map<string, AnyTool>;
  /** Some connection had no active account yet, or its server said its list changed: asked again at the next use. */
  incomplete: boolean;
}

/** One connection's tools as its server listed them to one of its accounts. */
interface ConnectionListing {
  at: number;
  environmentId: string;
  accountId: string;
  tools: AnyTool[];
}

/** Above the specification's tools (0) and compiled ones (100): a built-in name always wins. */
export const REMOTE_MCP_PRECEDENCE = 200;

/**
 * The tools of an environment's remote MCP servers, as Portico tools: one source of the tool
 * registry, whose tools each belong to one environment. Each connection to a remote MCP server
 * contributes its server's tools, named by `remoteToolNames`, with their input schemas and
 * annotations carried over, run through the tool engine like any other tool (validation, policies,
 * approvals, the governor, records). A server lists its tools to an authorized user only, so a
 * connection's tools are listed with one of its active accounts and appear once the first end user
 * has connected. Listing goes over the network, so the engine asks `prepare` before a listing (or a
 * name the registry does not know) and the registry reads the listings kept here; a connection's
 * listing is kept `ttlMs`, or until its server says `notifications/tools/list_changed`: then that
 * (connection, account)'s listing is dropped and listed again at once, and the registry told if
 * the tools differ (Portico's MCP endpoint then tells its clients in turn).
 */
export class RemoteMcpTools implements ToolSource, EnvironmentTools {
  readonly id = 'remote-mcp';
  readonly precedence = REMOTE_MCP_PRECEDENCE;
  private readonly listings = new Map<string, Listing>();
  private readonly connectionListings = new Map<string, ConnectionListing>();
  private readonly pending = new Map<string, Promise<Listing>>();
  private notify: (() => void) | undefined;
  readonly sessions = new McpSessions();

  constructor(private readonly deps: RemoteMcpToolsDeps) {}

  tools(): readonly AnyTool[] {
    return [...this.listings.values()].flatMap((listing) => [...listing.tools.values()]);
  }

  /** The double underscore is the naming rule's separator: other names are never a remote tool's. */
  mayServe(name: string): boolean {
    return name.includes('__');
  }

  watch(changed: () => void): void {
    this.notify = changed;
  }

  async prepare(environmentId: string, name?: string): Promise<void> {
    if (name !== undefined && !this.mayServe(name)) return;
    const before = this.listings.get(environmentId);
    const ttl = this.deps.ttlMs ?? DEFAULT_TTL_MS;
    // A name the listing lacks may be a tool the server added since: ask once more.
    const fresh = name !== undefined;
    if (before && !fresh && !before.incomplete && Date.now() - before.at < ttl) return;
    let pending = this.pending.get(environmentId);
    if (!pending) {
      pending = this.load(environmentId, fresh).finally(() => this.pending.delete(environmentId));
      this.pending.set(environmentId, pending);
    }
    const listing = await pending;
    const current = this.listings.get(environmentId);
    this.listings.set(environmentId, listing);
    if (!sameTools(current, listing)) this.notify?.();
  }

  /**
   * An account changed (authorized, disconnected, expired): every listing is asked again at its
   * next use, from the store, and a connection's server only when the account it listed with is
   * no longer its first active one (the kept per-connection listings stay).
   */
  accountsChanged(): void {
    for (const listing of this.listings.values()) listing.incomplete = true;
  }

  /** Forgets an environment's listing (a connection changed). */
  invalidate(environmentId: string): void {
    for (const [id, listing] of this.connectionListings)
      if (listing.environmentId === environmentId) this.connectionListings.delete(id);
    if (this.listings.delete(environmentId)) this.notify?.();
  }

  /**
   * A connection's server said its tool list changed: its listing is dropped and the
   * environment's listed again now, so the registry (and the MCP clients watching it) learn of new
   * tools without waiting for a listing. The old tools stay served meanwhile.
   */
  toolsChanged(connection: { id: string; environment_id: string }): void {
    const environmentId = connection.environment_id;
    // A listing under way may have asked before the change: dropped once it is in.
    const underWay = this.pending.get(environmentId)?.catch(() => undefined) ?? Promise.resolve();
    underWay
      .then(() => {
        this.connectionListings.delete(connection.id);
        const listing = this.listings.get(environmentId);
        if (listing) listing.incomplete = true;
        return this.prepare(environmentId);
      })
      .catch((error) =>
        this.deps.logger.warn(
          { err: error, environment_id: environmentId },
          'remote MCP tools could not be listed again',
        ),
      );
  }

  /**
   * What the environment's remote tools of these providers are now (their names), for a watcher
   * that compares it to tell its clients the list changed. Reads the kept listing only.
   */
  signature(environmentId: string, providers: ReadonlySet<string>): string {
    const listing = this.listings.get(environmentId);
    if (!listing) return '';
    return [...listing.tools.values()]
      .filter((tool) => providers.has(tool.provider))
      .map((tool) => tool.name)
      .sort()
      .join(',');
  }

  private async load(environmentId: string, fresh: boolean): Promise<Listing> {
    const connections = (
      await listConnections(this.deps.db, environmentId, { limit: CONNECTIONS_SCANNED })
    ).filter((c) => c.mcp_server);
    const tools = new Map<string, AnyTool>();
    const lists = await Promise.all(connections.map((c) => this.connectionTools(c, fresh)));
    for (const list of lists) for (const tool of list ?? []) tools.set(tool.name, tool);
    return { at: Date.now(), tools, incomplete: lists.includes(undefined) };
  }

  /** The connection's tools; undefined while none of its end users has connected. */
  private async connectionTools(connection: ConnectionRow, fresh: boolean): Promise<AnyTool[] | undefined> {
    const account = (await accountsOfConnection(this.deps.db, connection.id)).find(
      (a) => a.status === 'ACTIVE',
    );
    if (!account) {
      this.connectionListings.delete(connection.id);
      return undefined;
    }
    const kept = this.connectionListings.get(connection.id);
    const ttl = this.deps.ttlMs ?? DEFAULT_TTL_MS;
    if (!fresh && kept && kept.accountId === account.id && Date.now() - kept.at < ttl) return kept.tools;
    try {
      const credential = await this.deps.accountTokens.forRef({
        environmentId: connection.environment_id,
        connectionName: connection.name,
        identifier: account.identifier,
      });
      const client = new ProviderClient(credential, this.deps);
      const at = Date.now();
      const specs = await this.sessions.listTools(client, credential.accountId);
      const names = remoteToolNames(
        connection.name,
        specs.map((s) => s.name),
      );
      const tools = specs.map((spec) => this.toTool(connection, spec, names.get(spec.name)!));
      this.connectionListings.set(connection.id, {
        at,
        environmentId: connection.environment_id,
        accountId: account.id,
        tools,
      });
      return tools;
    } catch (error) {
      // One server down must not hide the others' tools; its own calls say what is wrong.
      this.deps.logger.warn(
        { err: error, connection: connection.name, environment_id: connection.environment_id },
        'remote MCP server tools could not be listed',
      );
      return [];
    }
  }

  private toTool(connection: ConnectionRow, spec: RemoteToolSpec, name: string): AnyTool {
    const sessions = this.sessions;
    const heard = { toolsChanged: () => this.toolsChanged(connection) };
    const label = spec.title ?? spec.annotations?.title;
    return {
      name,
      environmentId: connection.environment_id,
      description: `${spec.description ?? label ?? spec.name} (Tool "${spec.name}" of the remote MCP server of connection ${connection.name}.)`,
      provider: connection.provider,
      connection: connection.name,
      remoteName: spec.name,
      input: llmSafeSchema(spec.inputSchema) as never,
      annotations: annotationsOf(spec),
      async run(input, ctx) {
        return sessions.callTool(
          ctx.client,
          ctx.client.accountId,
          spec.name,
          input as Record<string, unknown>,
          heard,
        );
      },
    };
  }
}

/** Whether a new listing has the same tool definitions (then the registry need not rebuild). */
function sameTools(before: Listing | undefined, after: Listing): boolean {
  if (!before || before.tools.size !== after.tools.size) return !before && after.tools.size === 0;
  for (const [name, tool] of after.tools) {
    const old = before.tools.get(name);
    if (
      !old ||
      JSON.stringify(old.input) !== JSON.stringify(tool.input) ||
      old.description !== tool.description
    )
      return false;
  }
  return true;
}

/**
 * MCP's hints as Portico's annotations, with MCP's defaults: a tool is not read-only unless it says
 * so, and a tool that is not read-only is destructive unless it says otherwise (so approvals hold
 * it as they hold built-in destructive tools).
 */
export function annotationsOf(spec: RemoteToolSpec): ToolAnnotations {
  const hints = spec.annotations ?? {};
  const readOnly = hints.readOnlyHint === true;
  return {
    read_only: readOnly,
    destructive: !readOnly && hints.destructiveHint !== false,
    idempotent: readOnly || hints.idempotentHint === true,
  };
}

/**
 * A server's input schema as every LLM format takes it: an object schema at the top (OpenAI and
 * Anthropic refuse anything else), without `$schema` (Gemini refuses it).
 */
export function llmSafeSchema(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = schema ?? {};
  if (rest.type !== 'object') return { type: 'object', properties: {} };
  return { ...rest, properties: rest.properties ?? {} };
}
