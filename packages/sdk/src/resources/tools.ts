import { InvalidInputError, PorticoError } from '../errors/errors.js';
import { PageList } from '../http/pages.js';
import type { Transport } from '../http/transport.js';
import {
  AUTHORIZE_TOOL,
  type AuthorizationSubject,
  type AuthorizeConnection,
  authorizationFromLink,
  authorizationRequired,
  authorizationText,
  authorizeDefinition,
  authorizeResultText,
} from '../tools/authorization.js';
import type { ToolContext, ToolFramework, ToolOutcome, ToolsForOptions } from '../tools/framework.js';
import { dataText, type ProblemContext, problemText } from '../tools/outcome.js';
import {
  CALL_TOOL_TOOL,
  callInput,
  callToolDefinition,
  SEARCH_TOOLS_TOOL,
  searchInput,
  searchOutcome,
  searchToolsDefinition,
} from '../tools/search.js';
import type {
  ConnectedAccount,
  Connection,
  JsonSchema,
  ProviderKey,
  ToolAnnotations,
  ToolDefinition,
  ToolMatch,
} from '../types.js';
import type { ConnectedAccounts } from './connected-accounts.js';
import { type Connections, segment } from './connections.js';
import type { Providers } from './providers.js';

/** Formats the gateway serves, besides the SDK's own `ToolDefinition` (`json_schema`). */
export type RawToolFormat = 'openai' | 'anthropic' | 'mcp';

export interface ExecuteToolInput {
  toolName: string;
  identifier: string;
  toolInput?: Record<string, unknown>;
  /** Needed only when the identifier has several accounts for the tool's provider. */
  connectionName?: string;
  schemaVersion?: string;
  toolVersion?: string;
  /** Sent to Notion as `Notion-Version`. */
  upstreamVersion?: string;
  /**
   * Runs a call a policy held (`ApprovalRequiredError.approvalId`) once a person approved it: the
   * approved input, once. Leave `toolInput` out, or send it unchanged.
   */
  approvalId?: string;
}

export interface ExecuteToolResult<T = unknown> {
  data: T;
  executionId: string;
}

interface RawTool {
  name: string;
  description: string;
  provider: ProviderKey;
  input_schema: JsonSchema;
  annotations: { read_only: boolean; destructive: boolean; idempotent: boolean };
  versions: string[];
  tags?: string[];
  score?: number;
}

/** Which tools a listing or a search keeps; every filter given must hold. */
export interface ToolFilters {
  provider?: ProviderKey;
  /** The tools of this connection: its provider's, or its remote MCP server's. */
  connection?: string;
  /** true: only tools that never change data; false: only those that may. */
  readOnly?: boolean;
  /** Tools with every one of these tags (see `ToolDefinition.tags`). */
  tags?: string[];
  /** Only this toolset's tools (`portico.toolsets`). */
  toolset?: string;
}

export interface SearchToolsOptions extends ToolFilters {
  /** Tools a page (1–200; default 20). */
  pageSize?: number;
}

function filterQuery(options: ToolFilters): Record<string, string | boolean | readonly string[] | undefined> {
  return {
    provider: options.provider,
    connection: options.connection,
    read_only: options.readOnly,
    tags: options.tags,
    toolset: options.toolset,
  };
}

function toDefinition(raw: RawTool): ToolDefinition {
  const annotations: ToolAnnotations = {
    readOnly: raw.annotations.read_only,
    destructive: raw.annotations.destructive,
    idempotent: raw.annotations.idempotent,
  };
  return {
    name: raw.name,
    description: raw.description,
    provider: raw.provider,
    inputSchema: raw.input_schema,
    annotations,
    versions: raw.versions,
    ...(raw.tags ? { tags: raw.tags } : {}),
  };
}

export class Tools {
  constructor(
    private readonly transport: Transport,
    private readonly accounts: ConnectedAccounts,
    private readonly connections: Connections,
    private readonly providers: Providers,
  ) {}

  /**
   * The catalog (every tool the filters keep) as `ToolDefinition`s, or in one of the LLM formats
   * the gateway serves.
   */
  list(options?: ToolFilters & { format?: 'json_schema' }): Promise<ToolDefinition[]>;
  list(options: ToolFilters & { format: RawToolFormat }): Promise<Record<string, unknown>[]>;
  async list(
    options: ToolFilters & { format?: 'json_schema' | RawToolFormat } = {},
  ): Promise<ToolDefinition[] | Record<string, unknown>[]> {
    const format = options.format ?? 'json_schema';
    const { data } = await this.transport.json<{ data: Record<string, unknown>[] }>({
      method: 'GET',
      path: '/api/v1/tools',
      query: { ...filterQuery(options), format },
    });
    return format === 'json_schema' ? data.map((t) => toDefinition(t as unknown as RawTool)) : data;
  }

  /**
   * The tools that fit a task described in plain words, best first, e.g.
   * `(await portico.tools.search('send an email to Ann')).data[0].name`: `await` it for the first
   * page (20 by default), or iterate it (`for await`) for every match, page after page.
   */
  search(query: string, options: SearchToolsOptions = {}): PageList<ToolMatch> {
    return new PageList(async (pageToken) => {
      const raw = await this.transport.json<{ data: RawTool[]; next_page_token: string | null }>({
        method: 'GET',
        path: '/api/v1/tools',
        query: { ...filterQuery(options), query, page_size: options.pageSize, page_token: pageToken },
      });
      return {
        data: raw.data.map((t) => ({ ...toDefinition(t), score: t.score ?? 0 })),
        nextPageToken: raw.next_page_token,
      };
    });
  }

  get(name: string, options?: { format?: 'json_schema' }): Promise<ToolDefinition>;
  get(name: string, options: { format: RawToolFormat }): Promise<Record<string, unknown>>;
  async get(
    name: string,
    options: { format?: 'json_schema' | RawToolFormat } = {},
  ): Promise<ToolDefinition | Record<string, unknown>> {
    const format = options.format ?? 'json_schema';
    const raw = await this.transport.json<Record<string, unknown>>({
      method: 'GET',
      path: `/api/v1/tools/${segment(name)}`,
      query: { format },
    });
    return format === 'json_schema' ? toDefinition(raw as unknown as RawTool) : raw;
  }

  async execute<T = unknown>(input: ExecuteToolInput): Promise<ExecuteToolResult<T>> {
    const raw = await this.transport.json<{ data: T; execution_id: string }>({
      method: 'POST',
      path: '/api/v1/tools/execute',
      json: {
        tool_name: input.toolName,
        identifier: input.identifier,
        connection_name: input.connectionName,
        // A retry of an approved call runs the approved input: nothing to send unless given.
        tool_input: input.toolInput ?? (input.approvalId ? undefined : {}),
        schema_version: input.schemaVersion,
        tool_version: input.toolVersion,
        upstream_version: input.upstreamVersion,
        approval_id: input.approvalId,
      },
    });
    return { data: raw.data, executionId: raw.execution_id };
  }

  /**
   * The end user's tools in a framework's own shape, e.g.
   * `await portico.tools.for(openaiChat, { identifier: 'user_42' })`: the tools of the providers
   * the user has connected (see `includeUnauthorized`, `connectedOnly`), and `portico_authorize`
   * for the model to hand the user a link to connect another account (see `authorizeTool`).
   */
  async for<T>(framework: ToolFramework<T>, options: ToolsForOptions): Promise<T> {
    const named = options.tools;
    const offerAuthorize = options.authorizeTool !== false && (!named || named.includes(AUTHORIZE_TOOL));
    const needsAccounts = options.connectedOnly !== false || offerAuthorize;
    const directory = new Directory(this.connections, this.providers);
    const [catalog, active] = await Promise.all([
      this.list(options.toolset ? { toolset: options.toolset } : {}),
      needsAccounts ? this.activeAccounts(options.identifier) : Promise.resolve([]),
      // Fetched alongside when they will be needed anyway.
      ...(offerAuthorize || options.includeUnauthorized ? [directory.connections(), directory.names()] : []),
    ]);
    directory.setCatalog(catalog);
    let tools = catalog;
    if (options.providers) tools = tools.filter((t) => options.providers!.includes(t.provider));
    if (named) tools = tools.filter((t) => named.includes(t.name));
    if (options.connectedOnly !== false) {
      const offered = new Set(active.map((a) => a.provider));
      if (options.includeUnauthorized) {
        for (const connection of await directory.connections()) offered.add(connection.provider);
      }
      tools = tools.filter((t) => offered.has(t.provider));
    }
    let authorizable: AuthorizeConnection[] | undefined;
    if (offerAuthorize) {
      // The connections whose tools the options allow: those the model could be asked to use.
      const providers = new Set(
        catalog
          .filter((t) => !options.providers || options.providers.includes(t.provider))
          .filter((t) => !named?.some((n) => n !== AUTHORIZE_TOOL) || named.includes(t.name))
          .map((t) => t.provider),
      );
      const connected = new Set(active.map((a) => a.connectionName));
      const names = await directory.names();
      authorizable = (await directory.connections())
        .filter((c) => providers.has(c.provider))
        .map((c) => ({
          name: c.name,
          provider: c.provider,
          providerName: names.get(c.provider) ?? c.provider,
          connected: connected.has(c.name),
        }));
      if (authorizable.length) tools = [...tools, authorizeDefinition(authorizable)];
      else authorizable = undefined;
    }
    const offered = new Map(tools.filter((t) => t.name !== AUTHORIZE_TOOL).map((t) => [t.name, t]));
    const context = this.runner(options.identifier, directory, authorizable, offered);
    if (options.mode === 'search') {
      const own = tools.filter((t) => t.name === AUTHORIZE_TOOL);
      return framework.build(
        [searchToolsDefinition, callToolDefinition, ...own],
        searchingContext(context, offered),
      );
    }
    return framework.build(tools, context);
  }

  /**
   * How adapters run the model's tool calls for one end user: a Portico problem becomes an error
   * outcome (with `authorization` and the link first in its text when the user must connect an
   * account), never a throw.
   */
  context(identifier: string): ToolContext {
    return this.runner(identifier, new Directory(this.connections, this.providers), undefined, undefined);
  }

  private async activeAccounts(identifier: string): Promise<ConnectedAccount[]> {
    return this.accounts.list({ identifier, status: 'ACTIVE', pageSize: 100 }).toArray();
  }

  private runner(
    identifier: string,
    directory: Directory,
    authorizable: AuthorizeConnection[] | undefined,
    offered: ReadonlyMap<string, ToolDefinition> | undefined,
  ): ToolContext {
    return {
      identifier,
      search: async (query, limit) => {
        // The gateway ranks the whole catalog; the tool set keeps to what its options offer.
        const tools: ToolDefinition[] = [];
        let total = 0;
        let pages = 0;
        for await (const page of this.search(query, { pageSize: SEARCH_PAGE_SIZE }).pages()) {
          for (const match of page.data) {
            if (offered && !offered.has(match.name)) continue;
            total++;
            if (tools.length < limit) tools.push(offered?.get(match.name) ?? match);
          }
          if (tools.length >= limit || ++pages >= SEARCH_PAGES) break;
        }
        return { tools, total };
      },
      run: async (toolName, toolInput): Promise<ToolOutcome> => {
        if (authorizable && toolName === AUTHORIZE_TOOL) {
          return this.authorize(identifier, authorizable, toolInput);
        }
        try {
          const { data, executionId } = await this.execute({
            toolName,
            identifier,
            toolInput: (toolInput ?? {}) as Record<string, unknown>,
          });
          return { ok: true, data, executionId, text: dataText(data) };
        } catch (error) {
          // A problem is the model's to correct; anything else (the network) is the application's.
          if (!(error instanceof PorticoError)) throw error;
          return this.failure(error, {
            identifier,
            toolName,
            directory,
            authorizable,
          });
        }
      },
    };
  }

  /** `portico_authorize`: a link for the user to connect the connection the model named. */
  private async authorize(
    identifier: string,
    authorizable: AuthorizeConnection[],
    toolInput: unknown,
  ): Promise<ToolOutcome> {
    const name = (toolInput as { connection_name?: unknown } | null)?.connection_name;
    const connection = authorizable.find((c) => c.name === name);
    if (!connection) {
      const error = new InvalidInputError(400, {
        code: 'invalid_input',
        title: 'Invalid input',
        detail: `connection_name must be one of: ${authorizable.map((c) => `${c.name} (${c.providerName})`).join(', ')}.`,
        errors: [{ path: '/connection_name', message: 'is not a connection portico_authorize offers' }],
      });
      return { ok: false, error, text: problemText(error) };
    }
    try {
      const link = await this.accounts.authorizationLink({ connectionName: connection.name, identifier });
      const authorization = authorizationFromLink(link, {
        connectionName: connection.name,
        provider: connection.provider,
        providerName: connection.providerName,
      });
      return { ok: true, authorization, text: authorizeResultText(authorization) };
    } catch (error) {
      if (!(error instanceof PorticoError)) throw error;
      return { ok: false, error, text: problemText(error, { identifier }) };
    }
  }

  /**
   * A failed call as the model reads it. An account the user must (re)connect gives the link to
   * show them: the gateway's own (`account_not_active`), or one made here when the gateway could
   * not choose the connection but only one serves the tool's provider.
   */
  private async failure(
    error: PorticoError,
    at: {
      identifier: string;
      toolName: string;
      directory: Directory;
      authorizable: AuthorizeConnection[] | undefined;
    },
  ): Promise<ToolOutcome> {
    const { identifier, toolName, directory } = at;
    if (error.code !== 'account_not_active' && error.code !== 'account_not_found') {
      return { ok: false, error, text: problemText(error, { identifier, toolName }) };
    }
    const subject: AuthorizationSubject = await directory
      .subject(toolName, error, this.accounts)
      .catch(() => ({}));
    const about: ProblemContext = { identifier, toolName, ...subject };
    const authorization = authorizationRequired(error, about);
    if (authorization) return { ok: false, error, text: problemText(error, about), authorization };
    if (error.code === 'account_not_found' && subject.provider) {
      const candidates = await directory.connectionsOf(subject.provider).catch(() => []);
      if (candidates.length === 1) {
        try {
          const link = await this.accounts.authorizationLink({
            connectionName: candidates[0]!.name,
            identifier,
          });
          const made = authorizationFromLink(link, { ...subject, connectionName: candidates[0]!.name });
          return {
            ok: false,
            error,
            text: authorizationText(made, { identifier, toolName }),
            authorization: made,
          };
        } catch {
          // The gateway's own problem says what to do.
        }
      }
      // Several connections serve the provider: the model chooses with portico_authorize.
      const choices = candidates.filter((c) => at.authorizable?.some((a) => a.name === c.name));
      if (candidates.length > 1 && choices.length) {
        const which = subject.providerName ?? subject.provider;
        return {
          ok: false,
          error,
          text: `Authorization required. ${toolName} cannot run: the user ("${identifier}") has not connected a ${which} account yet, and several connections serve ${which}: ${choices.map((c) => c.name).join(', ')}. Call ${AUTHORIZE_TOOL} with the connection_name to use (ask the user if it is unclear), then show the user the link it returns.`,
        };
      }
    }
    return { ok: false, error, text: problemText(error, about) };
  }
}

/** Matches a tool set's search reads per page, and pages at most, to fill its few answers. */
const SEARCH_PAGE_SIZE = 100;
const SEARCH_PAGES = 5;

/** A tool set in search mode: the two tools that find and call tools, over the tools it offers. */
function searchingContext(context: ToolContext, offered: ReadonlyMap<string, ToolDefinition>): ToolContext {
  return {
    ...context,
    run: async (toolName, toolInput) => {
      if (toolName === SEARCH_TOOLS_TOOL) {
        const input = searchInput(toolInput);
        if ('ok' in input) return input;
        const { tools, total } = await context.search(input.query, input.limit);
        return searchOutcome(tools, total);
      }
      if (toolName === CALL_TOOL_TOOL) {
        const call = callInput(toolInput, offered);
        if ('ok' in call) return call;
        return context.run(call.name, call.arguments);
      }
      return context.run(toolName, toolInput);
    },
  };
}

/**
 * The environment's connections and provider names, fetched at most once per tool set (and only
 * when needed): what turns "account not active" into "connect your Notion account".
 */
class Directory {
  private connectionList?: Promise<Connection[]>;
  private providerNames?: Promise<Map<ProviderKey, string>>;
  private toolProviders = new Map<string, ProviderKey>();

  constructor(
    private readonly connectionsResource: Connections,
    private readonly providersResource: Providers,
  ) {}

  setCatalog(tools: ToolDefinition[]): void {
    this.toolProviders = new Map(tools.map((t) => [t.name, t.provider]));
  }

  connections(): Promise<Connection[]> {
    if (!this.connectionList) {
      this.connectionList = this.connectionsResource.list({ pageSize: 100 }).toArray();
      // A failure is not kept: the next call asks again.
      this.connectionList.catch(() => {
        this.connectionList = undefined;
      });
    }
    return this.connectionList;
  }

  names(): Promise<Map<ProviderKey, string>> {
    if (!this.providerNames) {
      this.providerNames = this.providersResource
        .list()
        .then((providers) => new Map(providers.map((p) => [p.key, p.displayName])));
      this.providerNames.catch(() => {
        this.providerNames = undefined;
      });
    }
    return this.providerNames;
  }

  async connectionsOf(provider: ProviderKey): Promise<Connection[]> {
    return (await this.connections()).filter((c) => c.provider === provider);
  }

  /** The connection and provider a failed call was about, as far as they can be told. */
  async subject(
    toolName: string,
    error: PorticoError,
    accounts: ConnectedAccounts,
  ): Promise<AuthorizationSubject> {
    const problem = error.problem;
    let provider: ProviderKey | undefined =
      this.toolProviders.get(toolName) ??
      (typeof problem.provider === 'string' ? problem.provider : undefined);
    let connectionName = typeof problem.connection_name === 'string' ? problem.connection_name : undefined;
    if (!connectionName && provider) {
      const candidates = await this.connectionsOf(provider);
      if (candidates.length === 1) connectionName = candidates[0]!.name;
    }
    if (!connectionName && typeof problem.connected_account_id === 'string') {
      // Several connections serve the provider (or the tool is not in the catalog): ask the account.
      const account = await accounts.get(problem.connected_account_id).catch(() => undefined);
      connectionName = account?.connectionName;
      provider ??= account?.provider;
    }
    const providerName = provider ? (await this.names()).get(provider) : undefined;
    return { connectionName, provider, providerName };
  }
}
