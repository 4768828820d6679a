import { PorticoError } from '../errors/errors.js';
import type { Transport } from '../http/transport.js';
import type { ToolContext, ToolFramework, ToolOutcome, ToolsForOptions } from '../tools/framework.js';
import { dataText, problemText } from '../tools/outcome.js';
import type { ConnectedAccount, JsonSchema, ProviderKey, ToolAnnotations, ToolDefinition } from '../types.js';
import type { ConnectedAccounts } from './connected-accounts.js';
import { segment } from './connections.js';

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
  };
}

export class Tools {
  constructor(
    private readonly transport: Transport,
    private readonly accounts: ConnectedAccounts,
  ) {}

  /** The catalog as `ToolDefinition`s, or in one of the LLM formats the gateway serves. */
  list(options?: { provider?: ProviderKey; format?: 'json_schema' }): Promise<ToolDefinition[]>;
  list(options: { provider?: ProviderKey; format: RawToolFormat }): Promise<Record<string, unknown>[]>;
  async list(
    options: { provider?: ProviderKey; format?: 'json_schema' | RawToolFormat } = {},
  ): Promise<ToolDefinition[] | Record<string, unknown>[]> {
    const format = options.format ?? 'json_schema';
    const { data } = await this.transport.json<{ data: Record<string, unknown>[] }>({
      method: 'GET',
      path: '/api/v1/tools',
      query: { provider: options.provider, format },
    });
    return format === 'json_schema' ? data.map((t) => toDefinition(t as unknown as RawTool)) : data;
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
        tool_input: input.toolInput ?? {},
        schema_version: input.schemaVersion,
        tool_version: input.toolVersion,
        upstream_version: input.upstreamVersion,
      },
    });
    return { data: raw.data, executionId: raw.execution_id };
  }

  /**
   * The end user's tools in a framework's own shape, e.g.
   * `await portico.tools.for(openaiChat, { identifier: 'user_42' })`.
   */
  async for<T>(framework: ToolFramework<T>, options: ToolsForOptions): Promise<T> {
    let tools = await this.list();
    if (options.providers) tools = tools.filter((t) => options.providers!.includes(t.provider));
    if (options.tools) tools = tools.filter((t) => options.tools!.includes(t.name));
    if (options.connectedOnly !== false) {
      const connected = new Set<string>();
      const accounts = this.accounts.list({
        identifier: options.identifier,
        status: 'ACTIVE',
        pageSize: 100,
      });
      for await (const account of accounts as AsyncIterable<ConnectedAccount>)
        connected.add(account.provider);
      tools = tools.filter((t) => connected.has(t.provider));
    }
    return framework.build(tools, this.context(options.identifier));
  }

  /** How adapters run the model's tool calls for one end user. */
  context(identifier: string): ToolContext {
    return {
      identifier,
      run: async (toolName, toolInput): Promise<ToolOutcome> => {
        try {
          const { data, executionId } = await this.execute({
            toolName,
            identifier,
            toolInput: (toolInput ?? {}) as Record<string, unknown>,
          });
          return { ok: true, data, executionId, text: dataText(data) };
        } catch (error) {
          // A problem is the model's to correct; anything else (the network) is the application's.
          if (error instanceof PorticoError) return { ok: false, error, text: problemText(error) };
          throw error;
        }
      },
    };
  }
}
