import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  type ListToolsResult,
  RequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { AccountView } from '../accounts/schemas.js';
import type { AccountService } from '../accounts/service.js';
import { newAccountRefusal, requireScope } from '../auth/access.js';
import type { McpScope } from '../auth/mcp-tokens.js';
import type { AuthorizationService } from '../authorization/service.js';
import type { ConnectionService } from '../connections/service.js';
import { Problem } from '../errors/problem.js';
import { findBuiltInProvider, getProvider } from '../providers/catalog.js';
import type { ConnectionRow } from '../store/connections.js';
import type { ExecuteRequest, ToolEngine } from '../tools/engine.js';
import type { AnyTool } from '../tools/types.js';
import { ProtocolError } from './jsonrpc.js';
import {
  CALL_TOOL,
  CALL_TOOL_TOOL,
  callInput,
  type McpMode,
  SEARCH_TOOLS,
  SEARCH_TOOLS_TOOL,
  searchInput,
  searchResult,
} from './meta-tools.js';
import { DEFAULT_PAGE_SIZE, page } from './pagination.js';
import { modelFacingTool, TOOL_OUTPUT_SCHEMA } from './tool-definitions.js';

/** The one tool that is not a provider tool: it lets an agent ask its user to connect an account. */
export const AUTHORIZE_TOOL = 'portico_authorize';
/** Runs a call a policy held, once a person approved it (the MCP form of `approval_id`). */
export const RUN_APPROVED_TOOL = 'portico_run_approved';

export interface McpServerDeps {
  engine: ToolEngine;
  accounts: AccountService;
  connections: ConnectionService;
  authorization: AuthorizationService;
  logger: Logger;
  version: string;
  /** Most tools one tools/list page carries (PORTICO_MCP_PAGE_SIZE). */
  pageSize?: number;
}

/**
 * tools/call as the v1 SDK routes it, with params left to callToolParams: registered with the
 * strict schema, a malformed call fails that schema's parse first and answers -32603 (internal
 * error) instead of the -32602 (invalid params) the specification names.
 */
const CallToolRoute = RequestSchema.extend({ method: CallToolRequestSchema.shape.method });

/** What one MCP URL serves besides the user: a toolset's tools only, and how it offers them. */
export interface McpSession {
  /** Default: the toolset's mcp_mode, else full. */
  mode?: McpMode | undefined;
  toolset?: McpToolset | undefined;
}

export interface McpToolset {
  name: string;
  mode: McpMode;
  accept: (tool: AnyTool) => boolean;
  /** Changes with the toolset's definition (bound into search page tokens). */
  acceptKey: string;
}

/**
 * What one MCP server instance answers, whichever SDK (and so protocol era) carries it: the
 * server's identity and instructions, tools/list and tools/call. Errors a handler throws are
 * ProtocolErrors (code, message, data), which both SDKs answer as they are.
 */
export interface McpHandlers {
  info: { name: string; version: string };
  instructions: string;
  listTools(cursor: string | undefined): Promise<ListToolsResult>;
  callTool(params: unknown): Promise<CallToolResult>;
}

export function mcpHandlers(
  deps: McpServerDeps,
  scope: McpScope,
  requestId: string,
  session: McpSession = {},
): McpHandlers {
  const searching = (session.mode ?? session.toolset?.mode ?? 'full') === 'search';
  const view = new ScopeView(deps, scope, session.toolset);

  const run = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> => {
    const caller = { id: `mcp:${scope.identifier}`, refuseNewAccount: newAccountRefusal(scope.grant) };
    const call =
      name === RUN_APPROVED_TOOL
        ? approvedCall(view, scope.identifier, args)
        : await toolCall(view, scope.identifier, name, args);
    const result = await deps.engine.execute(scope.environmentId, call, caller);
    return {
      content: [{ type: 'text', text: JSON.stringify(result.data) }],
      structuredContent: { ...result.data, execution_id: result.execution_id },
    };
  };

  return {
    info: { name: 'portico', version: deps.version },
    instructions: `Tools act in third-party apps as the end user "${scope.identifier}".${searching ? ` Find the tool for a task with ${SEARCH_TOOLS_TOOL} (describe the task in words), then call it with ${CALL_TOOL_TOOL}.` : ''} If a tool answers account_not_found or account_not_active, call ${AUTHORIZE_TOOL} (or open the authorization_link in the error) and ask the user to open the link. If a tool answers approval_required, a person must approve the call first; once they have, call ${RUN_APPROVED_TOOL} with the approval_id and the tool's name.`,

    async listTools(cursor) {
      const own = [authorizeTool(await view.connections()), RUN_APPROVED];
      // Portico's own tools first, so a client that reads only the first page can still connect accounts.
      const all = searching
        ? [...own, SEARCH_TOOLS, CALL_TOOL]
        : [...own, ...(await view.offered()).map((t) => modelFacingTool(t))];
      const { items, nextCursor } = page(all, cursor, deps.pageSize ?? DEFAULT_PAGE_SIZE);
      return { tools: items, ...(nextCursor ? { nextCursor } : {}) };
    },

    async callTool(params) {
      const { name, arguments: args = {} } = callToolParams(params);
      const meta = name === SEARCH_TOOLS_TOOL || name === CALL_TOOL_TOOL;
      if (meta && !searching) {
        throw new ProtocolError(
          ErrorCode.InvalidParams,
          `Unknown tool: ${name}. It is offered in search mode (?mode=search); call tools/list for the tools this server offers.`,
          { code: 'unknown_tool' },
        );
      }
      if (!meta && name !== AUTHORIZE_TOOL && name !== RUN_APPROVED_TOOL) {
        await deps.engine.prepare(scope.environmentId, name);
        refuseUnknownTool(deps.engine, name, scope.environmentId);
      }
      try {
        if (name === AUTHORIZE_TOOL) return await authorize(deps, view, args);
        if (name === SEARCH_TOOLS_TOOL) return await searchTools(deps, view, args);
        if (name === CALL_TOOL_TOOL) {
          const target = callInput(args);
          // Through the call tool a name no tool has is the model's to correct, not a protocol error.
          await deps.engine.prepare(scope.environmentId, target.name);
          deps.engine.describe(target.name, 'json_schema', scope.environmentId);
          return await run(target.name, target.arguments);
        }
        return await run(name, args);
      } catch (error) {
        // A failed tool is a result the model reads and corrects its call from, not a protocol error.
        const problem =
          error instanceof Problem
            ? error
            : new Problem('internal_error', 'The tool failed unexpectedly; try again.', { cause: error });
        if (!(error instanceof Problem))
          deps.logger.error({ err: error, tool: name }, 'MCP tool call failed');
        return { isError: true, content: [{ type: 'text', text: problemText(problem, requestId) }] };
      }
    },
  };
}

/**
 * One end user's MCP server for the 2025-era revisions (2025-11-25 and older), on the v1 SDK: the
 * tools of the providers they have connected (within the scope's connections and tools), each
 * call run by the tool engine as that user. Built per HTTP request (the transport is stateless),
 * so a revoked token or a new account shows on the next request.
 */
export function createMcpServer(
  deps: McpServerDeps,
  scope: McpScope,
  requestId: string,
  session: McpSession = {},
): Server {
  const handlers = mcpHandlers(deps, scope, requestId, session);
  const server = new Server(handlers.info, {
    capabilities: { tools: { listChanged: true } },
    instructions: handlers.instructions,
  });
  server.setRequestHandler(ListToolsRequestSchema, (request) => handlers.listTools(request.params?.cursor));
  server.setRequestHandler(CallToolRoute, (request) => handlers.callTool(request.params));
  return server;
}

/**
 * tools/call's params checked here rather than by an SDK, so both eras answer a malformed call
 * alike: -32602 (invalid params), naming what to send.
 */
function callToolParams(params: unknown): CallToolParams {
  const { name, arguments: args } = (params ?? {}) as { name?: unknown; arguments?: unknown };
  const isObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);
  if (typeof name !== 'string' || (args !== undefined && !isObject(args))) {
    throw new ProtocolError(
      ErrorCode.InvalidParams,
      'Invalid params: tools/call takes {"name": "<a tool from tools/list>", "arguments": {…}} (arguments an object, or left out).',
    );
  }
  return { name, ...(args === undefined ? {} : { arguments: args as Record<string, unknown> }) };
}

/** portico_search_tools: the tools this session offers that fit the words, best first. */
async function searchTools(
  deps: McpServerDeps,
  view: ScopeView,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const { query, limit } = searchInput(args);
  const providers = await view.activeProviders();
  const listing = await deps.engine.find(view.scope.environmentId, {
    query,
    pageSize: limit,
    accept: (tool) => providers.has(tool.provider) && view.allowsTool(tool.name),
    acceptKey: `mcp:${view.toolset?.acceptKey ?? ''}:${[...providers].sort().join(',')}`,
  });
  const { text, structured } = searchResult(listing, providers.size === 0);
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

type CallToolParams = { name: string; arguments?: Record<string, unknown> };

/**
 * A tool no server offers is a protocol error (-32602, as the specification's example has it), not
 * a failed call: nothing ran, so nothing is recorded. The suggestion travels in the error's data.
 */
function refuseUnknownTool(engine: ToolEngine, name: string, environmentId: string): void {
  try {
    engine.describe(name, 'json_schema', environmentId);
  } catch (error) {
    if (!(error instanceof Problem) || error.code !== 'unknown_tool') throw error;
    const suggestion = error.options.extensions?.did_you_mean;
    throw new ProtocolError(
      ErrorCode.InvalidParams,
      `Unknown tool: ${name}.${suggestion ? ` Did you mean "${String(suggestion)}"?` : ''} Call tools/list for the tools this server offers.`,
      { code: 'unknown_tool', ...(suggestion ? { did_you_mean: suggestion } : {}) },
    );
  }
}

/** The problem as the model reads it: code and detail first, then what it needs to fix the call. */
function problemText(problem: Problem, requestId: string): string {
  const { type: _type, title: _title, status: _status, ...body } = problem.toBody(requestId);
  return JSON.stringify(body);
}

const RUN_APPROVED: Tool = {
  name: RUN_APPROVED_TOOL,
  description:
    'Run a call that answered approval_required, once a person has approved it: it runs exactly the approved input, once. Until then it answers approval_pending; a denied or expired approval never runs.',
  inputSchema: {
    type: 'object',
    properties: {
      approval_id: { type: 'string', description: 'The approval_id the held call answered with.' },
      tool_name: { type: 'string', description: 'The tool the held call named.' },
    },
    required: ['approval_id', 'tool_name'],
    additionalProperties: false,
  },
  outputSchema: TOOL_OUTPUT_SCHEMA,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
};

async function toolCall(
  view: ScopeView,
  identifier: string,
  name: string,
  args: Record<string, unknown>,
): Promise<ExecuteRequest> {
  const connectionName = await view.connectionFor(name);
  return {
    tool_name: name,
    identifier,
    tool_input: args,
    ...(connectionName ? { connection_name: connectionName } : {}),
  };
}

function approvedCall(view: ScopeView, identifier: string, args: Record<string, unknown>): ExecuteRequest {
  const { approval_id: approvalId, tool_name: toolName } = args;
  if (typeof approvalId !== 'string' || typeof toolName !== 'string' || !view.allowsTool(toolName)) {
    throw new Problem(
      'invalid_input',
      `${RUN_APPROVED_TOOL} takes {"approval_id": "apr_…", "tool_name": "<a tool this token may call>"}.`,
      {
        errors: [
          { path: '/approval_id', message: 'must be the approval_id of a held call, with its tool_name' },
        ],
      },
    );
  }
  return { tool_name: toolName, identifier, approval_id: approvalId };
}

const AUTHORIZE_OUTPUT_SCHEMA: NonNullable<Tool['outputSchema']> = {
  type: 'object',
  properties: {
    link: { type: 'string', description: 'The URL the user opens to connect their account.' },
    expires_at: { type: 'string', description: 'When the link stops working (RFC 3339).' },
  },
  required: ['link', 'expires_at'],
  additionalProperties: true,
};

function authorizeTool(connections: ConnectionRow[]): Tool {
  const names = connections.map((c) => c.name);
  return {
    name: AUTHORIZE_TOOL,
    description: `Get a link the user opens to connect (or reconnect) one of their accounts, when a tool answers account_not_found or account_not_active. Connections: ${connections.map((c) => `${c.name} (${findBuiltInProvider(c.provider)?.displayName ?? c.provider})`).join(', ') || 'none configured'}. Show the link to the user; tools for that account appear once they have finished.`,
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
    outputSchema: AUTHORIZE_OUTPUT_SCHEMA,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  };
}

async function authorize(
  deps: McpServerDeps,
  view: ScopeView,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  // A link for the user's account is what the `links` scope grants, here as over REST.
  requireScope(view.scope.grant, 'links', AUTHORIZE_TOOL);
  const name = args.connection_name;
  const allowed = await view.connections();
  if (typeof name !== 'string' || !allowed.some((c) => c.name === name)) {
    throw new Problem(
      'invalid_input',
      `connection_name must be one of: ${allowed.map((c) => c.name).join(', ') || '(no connection is configured)'}.`,
      { errors: [{ path: '/connection_name', message: 'not an allowed connection' }] },
    );
  }
  const link = await deps.authorization.createLink(view.scope.environmentId, {
    connection_name: name,
    identifier: view.scope.identifier,
  });
  return {
    content: [
      {
        type: 'text',
        text: `Ask the user to open ${link.link} to connect their account (connection "${name}"); the link works once and expires at ${link.expires_at}.`,
      },
    ],
    structuredContent: { ...link },
  };
}

/** The end user's connections and accounts as the scope lets this session see them. */
class ScopeView {
  private connectionList?: Promise<ConnectionRow[]>;
  private accountList?: Promise<AccountView[]>;

  constructor(
    private readonly deps: McpServerDeps,
    readonly scope: McpScope,
    readonly toolset?: McpToolset | undefined,
  ) {}

  /** Within the token's tools and the URL's toolset (a name no tool has is the engine's to answer). */
  allowsTool(name: string): boolean {
    if (this.scope.tools && !this.scope.tools.includes(name)) return false;
    return this.inToolset(name);
  }

  private inToolset(name: string): boolean {
    if (!this.toolset) return true;
    const tool = this.deps.engine.registry.get(name, this.scope.environmentId);
    return !tool || this.toolset.accept(tool);
  }

  /** The providers of the user's active accounts, within the scope. */
  async activeProviders(): Promise<Set<string>> {
    return new Set((await this.activeAccounts()).map((a) => a.provider));
  }

  /** The provider tools this session offers: its connected providers', within the scope's tools. */
  async offered(): Promise<AnyTool[]> {
    const providers = await this.activeProviders();
    // The environment's own tools (its remote MCP servers') are made current before the listing.
    await this.deps.engine.prepare(this.scope.environmentId);
    return this.deps.engine
      .list({ environmentId: this.scope.environmentId })
      .filter((t) => providers.has(t.provider) && this.allowsTool(t.name));
  }

  private allowsConnection(name: string): boolean {
    return !this.scope.connectionNames || this.scope.connectionNames.includes(name);
  }

  /** Connections that have tools, within the scope. */
  connections(): Promise<ConnectionRow[]> {
    this.connectionList ??= (async () => {
      const rows: ConnectionRow[] = [];
      let pageToken: string | undefined;
      do {
        const page = await this.deps.connections.list(this.scope.environmentId, {
          page_size: 100,
          ...(pageToken ? { page_token: pageToken } : {}),
        });
        rows.push(...page.rows);
        pageToken = page.nextPageToken ?? undefined;
      } while (pageToken);
      return rows.filter((c) => this.allowsConnection(c.name) && findBuiltInProvider(c.provider)?.toolPrefix);
    })();
    return this.connectionList;
  }

  activeAccounts(): Promise<AccountView[]> {
    this.accountList ??= (async () => {
      const rows: AccountView[] = [];
      let pageToken: string | undefined;
      do {
        const page = await this.deps.accounts.list(this.scope.environmentId, {
          identifier: this.scope.identifier,
          status: 'ACTIVE',
          page_size: 100,
          ...(pageToken ? { page_token: pageToken } : {}),
        });
        rows.push(...page.data);
        pageToken = page.next_page_token ?? undefined;
      } while (pageToken);
      return rows.filter((a) => this.allowsConnection(a.connection_name));
    })();
    return this.accountList;
  }

  /**
   * The connection a call must use when the scope names connections (so the engine cannot pick
   * an account outside it); undefined lets the engine resolve the user's single account.
   */
  async connectionFor(toolName: string): Promise<string | undefined> {
    if (!this.inToolset(toolName)) {
      throw new Problem(
        'tool_not_allowed',
        `${toolName} is not in the toolset "${this.toolset!.name}" this MCP URL serves; use one of the tools listed by tools/list.`,
      );
    }
    if (!this.allowsTool(toolName)) {
      throw new Problem(
        'tool_not_allowed',
        `This MCP token does not allow ${toolName}; use one of the tools listed by tools/list.`,
      );
    }
    if (!this.scope.connectionNames) return undefined;
    const tool = this.deps.engine
      .list({ environmentId: this.scope.environmentId })
      .find((t) => t.name === toolName);
    if (!tool) return undefined; // the engine answers unknown_tool with suggestions
    const candidates = (await this.connections()).filter((c) => c.provider === tool.provider);
    if (!candidates.length) {
      throw new Problem(
        'tool_not_allowed',
        `This MCP token reaches no ${getProvider(tool.provider).displayName} connection, so ${toolName} cannot run; use one of the tools listed by tools/list.`,
      );
    }
    if (candidates.length === 1) return candidates[0]!.name;
    const active = (await this.activeAccounts()).filter((a) => a.provider === tool.provider);
    if (active.length === 1) return active[0]!.connection_name;
    if (!active.length) return candidates[0]!.name; // the engine answers with a link to authorize
    throw new Problem(
      'ambiguous_account',
      `Several connected accounts can run ${toolName}: ${active.map((a) => a.connection_name).join(', ')}. Mint a token limited to one of these connections.`,
    );
  }
}

/**
 * What a scope's tool list depends on: the providers of its user's active accounts, and the tools
 * their remote MCP servers list now. An open event stream compares it to tell its client the list
 * changed.
 */
export async function toolListState(deps: McpServerDeps, scope: McpScope): Promise<string> {
  const accounts = await new ScopeView(deps, scope).activeAccounts();
  const providers = new Set(accounts.map((a) => a.provider));
  const remote = deps.engine.environmentToolsState(scope.environmentId, providers);
  return `${[...providers].sort().join(',')}|${remote}`;
}
