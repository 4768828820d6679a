import type { PorticoError } from '../errors/errors.js';
import type { ToolDefinition } from '../types.js';

/** What running one tool call through Portico gave: the data, or the problem to show the model. */
export type ToolOutcome =
  | { ok: true; data: unknown; executionId: string; text: string }
  | { ok: false; error: PorticoError; text: string };

/** The end user's tools, as a framework adapter receives them. */
export interface ToolContext {
  identifier: string;
  /** Runs a tool for the end user; a Portico problem becomes an error outcome, never a throw. */
  run(toolName: string, toolInput: unknown): Promise<ToolOutcome>;
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
  /**
   * Only tools whose provider has an ACTIVE account for the identifier (default true); false
   * offers every tool, and a call without an account answers the problem to the model.
   */
  connectedOnly?: boolean;
}
