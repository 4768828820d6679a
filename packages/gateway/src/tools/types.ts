import type { Static, TSchema } from '@sinclair/typebox';
import type { ProviderClient } from '../accounts/provider-client.js';
import type { FieldError } from '../errors/problem.js';
import type { ProviderKey } from '../providers/catalog.js';

export interface ToolAnnotations {
  /** Reads only; never changes provider data. */
  read_only: boolean;
  /** May delete or overwrite data the user cares about. */
  destructive: boolean;
  /** Repeating the same call has no further effect. */
  idempotent: boolean;
}

/** What a tool's `run` gets: an authenticated provider client, never a token or the database. */
export interface ToolContext {
  client: ProviderClient;
}

export interface ToolDefinition<S extends TSchema = TSchema> {
  /** Exactly the specification's name, e.g. `notes_page_create`. */
  name: string;
  /**
   * Written for an LLM: what it does, when to use it, the rules it enforces, and an example input.
   */
  description: string;
  provider: ProviderKey;
  /**
   * A tool of one connection (a remote MCP server's): its calls use that connection's account of
   * the identifier, whatever connection_name says.
   */
  connection?: string;
  /** The remote MCP server's own name of the tool, where it is one. */
  remoteName?: string;
  input: S;
  /**
   * Set by a source that serves one environment only (a remote MCP server behind that
   * environment's connection): the tool is seen there and nowhere else.
   */
  environmentId?: string;
  annotations: ToolAnnotations;
  /**
   * Portico's own earlier names for parameters the specification names otherwise, each mapped to
   * the specification's name (and, where the shape differs, how the value converts). The engine
   * rewrites them before validation, so schemas, `check` and `run` see only the specification's
   * names; a call that gives both with different values is refused.
   */
  aliases?: Record<string, ParameterAlias>;
  /** Registered schema/implementation versions; the last is current. Default ['1']. */
  versions?: string[];
  /**
   * Rules a JSON Schema cannot say (one of two fields, …). Runs after schema validation and before
   * any upstream call; each error's message quotes the rule.
   */
  check?(input: Static<S>): FieldError[];
  /** Calls the provider; returns the tool's `data` (always an object). */
  run(input: Static<S>, ctx: ToolContext): Promise<Record<string, unknown>>;
}

export interface ParameterAlias {
  /** The specification's parameter name. */
  to: string;
  /** Converts the alias's value into the specification parameter's shape (default: as it is). */
  convert?(value: unknown): unknown;
}

/** Keeps the input type of `run` tied to the schema. */
export function defineTool<S extends TSchema>(definition: ToolDefinition<S>): ToolDefinition<S> {
  return definition;
}

/** The tool list of a family, erased to the common type for the registry. */
export type AnyTool = ToolDefinition<TSchema>;
