import type { PorticoError } from '../errors/errors.js';
import type { ToolDefinition } from '../types.js';
import type { AuthorizationRequired } from './authorization.js';

/**
 * What running one tool call through Portico gave: the data; the link `portico_authorize` made; or
 * the problem to show the model, with `authorization` when the user must first connect an account
 * (`text` then leads with the link and what to tell the user).
 */
export type ToolOutcome =
  | { ok: true; data: unknown; executionId: string; text: string; authorization?: undefined }
  | {
      ok: true;
      authorization: AuthorizationRequired;
      text: string;
      data?: undefined;
      executionId?: undefined;
    }
  | { ok: false; error: PorticoError; text: string; authorization?: AuthorizationRequired };

/** The end user's tools, as a framework adapter receives them. */
export interface ToolContext {
  identifier: string;
  /** Runs a tool for the end user; a Portico problem becomes an error outcome, never a throw. */
  run(toolName: string, toolInput: unknown): Promise<ToolOutcome>;
  /**
   * The tools of this tool set that fit a task in words, best first (the gateway's tool search,
   * kept to the tools the options offer): for adapters whose model searches tools itself.
   */
  search(query: string, limit: number): Promise<{ tools: ToolDefinition[]; total: number }>;
}

/**
 * An LLM framework's view of Portico's tools (`@portico/sdk/openai`, `/anthropic`, `/ai`,
 * `/langchain` each export some): it turns the tool definitions into that framework's own objects.
 */
export interface ToolFramework<T> {
  readonly name: string;
  build(tools: ToolDefinition[], context: ToolContext): T;
}

export interface ToolsForOptions {
  /** The end user whose accounts the tools act on. */
  identifier: string;
  /** Only these providers' tools. */
  providers?: string[];
  /** Only these tools. */
  tools?: string[];
  /** Only this toolset's tools (`portico.toolsets`); the other options narrow it further. */
  toolset?: string;
  /**
   * Only tools whose provider has an ACTIVE account for the identifier (default true); false
   * offers every tool of the catalog, and a call without an account answers the problem to the model.
   */
  connectedOnly?: boolean;
  /**
   * Also offer the tools of the environment's connections the identifier has not authorized yet
   * (never connected, pending, expired or disconnected); default false. Calling one answers the
   * model an authorization result (the link to show the user and what to say) instead of failing,
   * and the same tool runs once the user has connected.
   */
  includeUnauthorized?: boolean;
  /**
   * Offer `portico_authorize` (default true): a tool taking `connection_name` that answers the
   * model a link for the user to connect (or reconnect) an account. Left out when no connection of
   * the environment has tools, and when `tools` is given without naming it.
   */
  authorizeTool?: boolean;
  /**
   * `all` (default): every tool the options keep, as definitions. `search`: two tools instead,
   * `portico_search_tools` (the model describes a task in words and gets back the few tools that
   * fit, with their schemas) and `portico_call_tool` (it calls one of them by name), plus
   * `portico_authorize`: a handful of definitions whatever the size of the catalog.
   */
  mode?: 'all' | 'search';
}
