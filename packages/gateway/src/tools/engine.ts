import { type Span, SpanKind } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { AccountTokens, Credential, NewAccountRefusal } from '../accounts/account-tokens.js';
import { ProviderClient } from '../accounts/provider-client.js';
import { Problem } from '../errors/problem.js';
import type { ExecutionService } from '../executions/service.js';
import type { RateGovernor } from '../governor/governor.js';
import { findBuiltInProvider } from '../providers/catalog.js';
import type { ExecutionRow } from '../store/executions.js';
import { newId } from '../store/ids.js';
import type { Tracing } from '../tracing/tracing.js';
import type { UpstreamHttp } from '../upstream/http.js';
import { closestName } from '../validation/closest-name.js';
import { unsafeInput } from '../validation/text-safety.js';
import { summarize, toFieldErrors } from '../validation/validator.js';
import { resolveAliases } from './aliases.js';
import { formatTool, type ToolFormat } from './formats.js';
import type { ToolRegistry } from './registry.js';
import { listTools, type ToolListing, type ToolQuery } from './search/listing.js';
import { ToolSearch } from './search/tool-search.js';
import type { AnyTool } from './types.js';
import { takeVersions, type Versions } from './versions.js';

export interface ExecuteRequest {
  tool_name: string;
  identifier: string;
  connection_name?: string;
  tool_input?: Record<string, unknown>;
  schema_version?: string;
  tool_version?: string;
  upstream_version?: string;
  /** Retries a call a policy held, once approved: it runs the approved input, once. */
  approval_id?: string;
}

/** Who asks (the gateway client, or the MCP token), recorded with any approval the call needs. */
export interface Caller {
  id: string;
  /** The only connections the caller may reach (a gateway client limited to some); absent: all. */
  connectionNames?: readonly string[] | null;
  /**
   * The answer for an end user with no account yet when the caller may not create one (it lacks
   * `links`: auth/access.ts `newAccountRefusal`); absent, the account is created and linked.
   */
  refuseNewAccount?: NewAccountRefusal | undefined;
}

export interface ApprovedCallRequest {
  approval_id: string;
  tool_name: string;
  identifier: string;
  connection_name?: string;
  tool_input?: Record<string, unknown>;
}

/** A call about to run: the tool, whose account, the validated input. */
export interface GuardedCall {
  environmentId: string;
  executionId: string;
  tool: AnyTool;
  connectionName: string;
  identifier: string;
  /** The input as the tool gets it (aliases resolved, validated). */
  input: Record<string, unknown>;
  /** The input as the caller sent it: what an approval holds, and replays. */
  rawInput: Record<string, unknown>;
  approvalId?: string | undefined;
  requestedBy?: string | undefined;
}

/**
 * The guardrails a call passes before it reaches the provider (guardrails/service.ts): policies,
 * budgets and approvals. Refusals and holds are thrown as problems.
 */
export interface ToolGuard {
  /** The input and connection an approval stands for, once the call matches it. */
  approvedInput(
    environmentId: string,
    request: ApprovedCallRequest,
  ): Promise<{ input: Record<string, unknown>; connectionName: string }>;
  admit(call: GuardedCall): Promise<void>;
}

export interface ExecuteResult {
  data: Record<string, unknown>;
  execution_id: string;
}

export interface ToolEngineDeps {
  executions: ExecutionService;
  logger: Logger;
  accountTokens: AccountTokens;
  http: UpstreamHttp;
  /** The one catalog of tools, of every source. */
  registry: ToolRegistry;
  guard?: ToolGuard;
  governor?: RateGovernor;
  /** Set only when tracing is on: each call is then a span, its credential step another. */
  tracing?: Tracing | undefined;
  /**
   * Brings an environment's own tools (its remote MCP servers', which are listed over the network)
   * into the registry before a listing or a lookup of a name the registry does not know.
   */
  environmentTools?: EnvironmentTools | undefined;
}

/** Fills the registry with an environment's own tools (tools/remote-mcp/source.ts). */
export interface EnvironmentTools {
  prepare(environmentId: string, name?: string): Promise<void>;
  /** What the environment's own tools of these providers are now, to compare (no network). */
  signature?(environmentId: string, providers: ReadonlySet<string>): string;
}

/**
 * Runs tools: validates input (schema compiled once, then the tool's own rules) before any upstream
 * call, resolves the end user's account, runs the tool with an authenticated provider client,
 * turns provider errors into problems, and records every execution.
 */
export class ToolEngine {
  /** The catalog's search index (rebuilt when the registry changes). */
  readonly search: ToolSearch;

  constructor(private readonly deps: ToolEngineDeps) {
    this.search = new ToolSearch(deps.registry);
  }

  get registry(): ToolRegistry {
    return this.deps.registry;
  }

  /**
   * Makes the environment's own tools current in the registry (asked before a listing; `name`: a
   * tool the registry does not know yet, which a remote server may have added since).
   */
  async prepare(environmentId: string, name?: string): Promise<void> {
    await this.deps.environmentTools?.prepare(environmentId, name);
  }

  /**
   * What the environment's own tools of these providers are as last listed: a watcher compares it
   * to tell MCP clients their list changed (a remote server's list_changed, heard and re-listed).
   */
  environmentToolsState(environmentId: string, providers: ReadonlySet<string>): string {
    return this.deps.environmentTools?.signature?.(environmentId, providers) ?? '';
  }

  list(filter: { provider?: string | undefined; environmentId?: string | undefined } = {}): AnyTool[] {
    return this.deps.registry.list(filter);
  }

  /**
   * The tools seen from the environment that fit the query (ranked by its words, if any) and its
   * filters, a page at a time; the environment's own tools are made current first.
   */
  async find(environmentId: string, query: Omit<ToolQuery, 'environmentId'>): Promise<ToolListing> {
    await this.prepare(environmentId);
    return listTools(this.search, { ...query, environmentId });
  }

  describe(
    name: string,
    format: ToolFormat = 'json_schema',
    environmentId?: string,
  ): Record<string, unknown> {
    return formatTool(this.lookup(name, environmentId), format);
  }

  private lookup(name: string, environmentId?: string): AnyTool {
    const tool = this.deps.registry.get(name, environmentId);
    if (!tool) {
      const names = this.deps.registry.names(environmentId);
      const closest = closestName(name, names);
      const prefix = name.split('_')[0];
      const similar = names.filter((n) => n.startsWith(`${prefix}_`)).slice(0, 20);
      throw new Problem(
        'unknown_tool',
        `No tool is named "${name}".${closest ? ` Did you mean "${closest}"?` : ''}${similar.length ? ` Tools with the same prefix: ${similar.join(', ')}.` : ''} List all tools with GET /api/v1/tools.`,
        closest ? { extensions: { did_you_mean: closest } } : {},
      );
    }
    return tool;
  }

  execute(environmentId: string, request: ExecuteRequest, caller?: Caller): Promise<ExecuteResult> {
    const tracing = this.deps.tracing;
    if (!tracing) return this.run(environmentId, request, caller);
    // Named as the GenAI conventions name a tool call; the outcome is set when it is recorded.
    return tracing.inSpan(
      `execute_tool ${request.tool_name}`,
      SpanKind.INTERNAL,
      { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': request.tool_name },
      (span) => this.run(environmentId, request, caller, span, tracing),
    );
  }

  private async run(
    environmentId: string,
    request: ExecuteRequest,
    caller?: Caller,
    span?: Span,
    tracing?: Tracing,
  ): Promise<ExecuteResult> {
    const executionId = newId('exec');
    const started = new Date();
    let credential: Credential | undefined;
    let client: ProviderClient | undefined;
    let versions: Versions = request;
    // Where the time went, by step, measured only at step boundaries (a few performance.now()).
    const timings: Record<string, number> = {};
    let mark = performance.now();
    const startedAt = mark;
    const lap = (step: string) => {
      const now = performance.now();
      timings[step] = Math.round((now - mark) * 100) / 100;
      mark = now;
    };
    const record = (
      status: 'success' | 'error',
      errorCode: string | null,
      detail: { problem?: Problem; data?: unknown; dataBytes?: number | undefined } = {},
    ) => {
      const finished = new Date();
      timings.total_ms = Math.round((performance.now() - startedAt) * 100) / 100;
      const row: ExecutionRow = {
        id: executionId,
        environment_id: environmentId,
        tool_name: request.tool_name,
        tool_version: versions.tool_version ?? null,
        account_id: credential?.accountId ?? null,
        connection_name: credential?.connectionName ?? request.connection_name ?? null,
        identifier: request.identifier,
        status,
        error_code: errorCode,
        upstream_calls: client?.calls ?? 0,
        duration_ms: finished.getTime() - started.getTime(),
        started_at: started,
        finished_at: finished,
        error_detail: detail.problem?.detail ?? (status === 'error' ? 'The tool failed unexpectedly.' : null),
        error_fields: detail.problem?.options.errors?.length ? detail.problem.options.errors : null,
        // Masked and summarized by the recorder, off the response path.
        raw_input: request.tool_input ?? {},
        ...(status === 'success' ? { raw_output: detail.data, raw_output_bytes: detail.dataBytes } : {}),
        upstream_status: client?.lastStatus ?? detail.problem?.options.upstream?.status ?? null,
        attempts: client?.attempts ?? 0,
        token_refreshed:
          (credential?.refreshedAt !== undefined && credential.refreshedAt >= started.getTime()) ||
          (client?.tokenRefreshed ?? false),
        timings,
      };
      this.deps.executions.record(row);
      span?.setAttributes({
        'portico.execution.id': executionId,
        'portico.tool.status': status,
        ...(row.connection_name ? { 'portico.connection.name': row.connection_name } : {}),
        ...(errorCode ? { 'error.type': errorCode } : {}),
        ...(row.upstream_status ? { 'portico.upstream.status_code': row.upstream_status } : {}),
      });
    };
    try {
      if (!this.deps.registry.get(request.tool_name, environmentId))
        await this.prepare(environmentId, request.tool_name);
      const tool = this.lookup(request.tool_name, environmentId);
      if (request.approval_id !== undefined) request = await this.approved(environmentId, request);
      const unsafe = unsafeInput(request.tool_input, '/tool_input');
      if (unsafe) {
        throw new Problem('invalid_input', summarize([unsafe], `The input of ${tool.name}`), {
          errors: [unsafe],
        });
      }
      // The tool may change its input; the record keeps what the caller sent. An empty input (most
      // list calls) needs no copy, and structuredClone costs a few microseconds even then.
      const given = request.tool_input ?? {};
      const input: Record<string, unknown> = isEmpty(given) ? {} : structuredClone(given);
      const taken = takeVersions(tool, input, request);
      if (taken.errors.length) {
        throw new Problem('invalid_input', summarize(taken.errors, `The input of ${tool.name}`), {
          errors: taken.errors,
        });
      }
      versions = taken.versions;
      if ('_parent' in input) {
        // The specification's invalid condition 5: the parent is computed, never taken from a caller.
        const errors = [{ path: '/tool_input/_parent', message: COMPUTED_PARENT }];
        throw new Problem('invalid_input', summarize(errors, `The input of ${tool.name}`), { errors });
      }
      for (const field of ['schema_version', 'tool_version'] as const) {
        const where = request[field] !== undefined ? `/${field}` : `/tool_input/${field}`;
        this.checkVersion(field, where, versions[field], tool.versions ?? ['1'], tool.name);
      }
      const versionHeader = findBuiltInProvider(tool.provider)?.api.versionHeader;
      const aliases = resolveAliases(tool, input);
      if (aliases.conflicts.length) {
        const errors = aliases.conflicts.map((e) => ({ ...e, path: `/tool_input${e.path}` }));
        throw new Problem('invalid_input', summarize(errors, `The input of ${tool.name}`), { errors });
      }
      const validate = this.deps.registry.validator(tool);
      if (!validate(input)) {
        const errors = toFieldErrors(validate.errors, '').map((e) => ({
          path: `/tool_input${aliases.callerPath(e.path)}`,
          message:
            e.message === 'is required' && e.path.lastIndexOf('/') === 0 ? MISSING_REQUIRED : e.message,
        }));
        throw new Problem(
          'invalid_input',
          `${summarize(errors, `The input of ${tool.name}`)} See GET /api/v1/tools/${tool.name} for the schema.`,
          { errors },
        );
      }
      const ruleErrors = tool.check?.(input as never) ?? [];
      if (ruleErrors.length) {
        const errors = ruleErrors.map((e) => ({
          ...e,
          path: `/tool_input${e.path === '/' ? '' : aliases.callerPath(e.path)}`,
        }));
        throw new Problem('invalid_input', summarize(errors, `The input of ${tool.name}`), { errors });
      }
      lap('validation_ms');
      credential = await (tracing
        ? tracing.inSpan(
            'portico.credential',
            SpanKind.INTERNAL,
            { 'portico.provider': tool.provider },
            async (step) => {
              const found = await this.resolveAccount(environmentId, request, tool, caller?.refuseNewAccount);
              step.setAttributes({
                'portico.account.id': found.accountId,
                'portico.connection.name': found.connectionName,
              });
              return found;
            },
          )
        : this.resolveAccount(environmentId, request, tool, caller?.refuseNewAccount));
      lap('credential_ms');
      if (caller?.connectionNames && !caller.connectionNames.includes(credential.connectionName)) {
        throw new Problem(
          'insufficient_scope',
          `This client may reach only the connections ${caller.connectionNames.join(', ')}, not "${credential.connectionName}"; name one of them with connection_name.`,
          { extensions: { allowed_connections: caller.connectionNames } },
        );
      }
      await this.deps.guard?.admit({
        environmentId,
        executionId,
        tool,
        connectionName: credential.connectionName,
        identifier: request.identifier,
        input,
        rawInput: request.tool_input ?? {},
        approvalId: request.approval_id,
        requestedBy: caller?.id,
      });
      lap('policy_ms');
      client = new ProviderClient(
        credential,
        { accountTokens: this.deps.accountTokens, http: this.deps.http, governor: this.deps.governor },
        versions.upstream_version && versionHeader ? { [versionHeader]: versions.upstream_version } : {},
      );
      let data: Record<string, unknown>;
      try {
        data = await tool.run(input as never, { client });
      } finally {
        lap('upstream_ms');
      }
      const result = { data, execution_id: executionId };
      const json = serialized(data);
      record('success', null, { data, dataBytes: json === undefined ? undefined : Buffer.byteLength(json) });
      if (json !== undefined) resultJsons.set(result, json);
      return result;
    } catch (error) {
      const problem = error instanceof Problem ? error : undefined;
      if (!problem)
        this.deps.logger.error(
          { err: error, tool: request.tool_name, execution_id: executionId },
          'tool failed',
        );
      record('error', problem?.code ?? 'internal_error', problem ? { problem } : {});
      if (problem) {
        problem.options.extensions = { ...problem.options.extensions, execution_id: executionId };
        throw problem;
      }
      throw new Problem(
        'internal_error',
        `The tool failed unexpectedly; report execution ${executionId} if it persists.`,
        {
          extensions: { execution_id: executionId },
        },
      );
    }
  }

  private checkVersion(
    field: string,
    path: string,
    value: string | undefined,
    known: string[],
    tool: string,
  ): void {
    if (value === undefined || known.includes(value)) return;
    throw new Problem(
      'invalid_input',
      `${field} "${value}" is not registered for ${tool}; known versions: ${known.join(', ')}. Omit it to use the current one.`,
      {
        errors: [{ path, message: `must be one of: ${known.join(', ')}` }],
      },
    );
  }

  /** The call an approval stands for: its approved input, on its connection. */
  private async approved(environmentId: string, request: ExecuteRequest): Promise<ExecuteRequest> {
    if (!this.deps.guard) {
      throw new Problem(
        'approval_not_found',
        'No policy holds calls here, so approval_id names nothing; leave it out.',
      );
    }
    const approved = await this.deps.guard.approvedInput(environmentId, {
      ...request,
      approval_id: request.approval_id!,
    });
    return { ...request, tool_input: approved.input, connection_name: approved.connectionName };
  }

  /** The account named by connection_name, or the identifier's single active account for the provider. */
  private async resolveAccount(
    environmentId: string,
    request: ExecuteRequest,
    tool: AnyTool,
    refuseNew: NewAccountRefusal | undefined,
  ): Promise<Credential> {
    if (tool.connection) {
      // A connection's own tool (a remote MCP server's) runs on that connection only.
      if (request.connection_name && request.connection_name !== tool.connection) {
        throw new Problem(
          'invalid_input',
          `${tool.name} is a tool of connection "${tool.connection}"; leave connection_name out or name that connection.`,
          { errors: [{ path: '/connection_name', message: `must be ${tool.connection} or absent` }] },
        );
      }
      return this.deps.accountTokens.forRef(
        {
          environmentId,
          connectionName: tool.connection,
          identifier: request.identifier,
        },
        refuseNew,
      );
    }
    if (request.connection_name) {
      const credential = await this.deps.accountTokens.forRef(
        {
          environmentId,
          connectionName: request.connection_name,
          identifier: request.identifier,
        },
        refuseNew,
      );
      if (credential.provider.key !== tool.provider) {
        throw new Problem(
          'invalid_input',
          `Connection "${request.connection_name}" is for ${credential.provider.key}, but ${tool.name} needs a ${tool.provider} connection.`,
          { errors: [{ path: '/connection_name', message: `must name a ${tool.provider} connection` }] },
        );
      }
      return credential;
    }
    return this.deps.accountTokens.forIdentity(environmentId, request.identifier, tool.provider, refuseNew);
  }
}

function isEmpty(value: object): boolean {
  for (const _ in value) return false;
  return true;
}

/** The JSON of each result's data, made once for both its record's summary and the reply. */
const resultJsons = new WeakMap<ExecuteResult, string>();

function serialized(data: unknown): string | undefined {
  try {
    return JSON.stringify(data);
  } catch {
    // A cycle or a BigInt: whoever replies fails on it too, and says so.
    return undefined;
  }
}

/** A result as the JSON of the HTTP reply, its data serialized only once (see resultJsons). */
export function resultJson(result: ExecuteResult): string {
  const data = resultJsons.get(result);
  return data === undefined
    ? JSON.stringify(result)
    : `{"data":${data},"execution_id":${JSON.stringify(result.execution_id)}}`;
}

const MISSING_REQUIRED =
  'is required (rule: a missing required parameter is invalid; this tool cannot run without it)';
const COMPUTED_PARENT =
  'must not be supplied (rule: "_parent" is computed by the gateway from database_id or parent_page_id and is never supplied by the caller); remove it';
