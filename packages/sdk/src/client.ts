import { GatewayTokenSource } from './auth/gateway-token.js';
import { InvalidPathError } from './errors/errors.js';
import { PorticoResponse } from './http/response.js';
import { type BodyInput, type QueryParams, Transport } from './http/transport.js';
import { Audit } from './resources/audit.js';
import {
  type AccountWithLink,
  type AuthorizationLinkInput,
  ConnectedAccounts,
  type VerifyUserInput,
  type VerifyUserResult,
} from './resources/connected-accounts.js';
import { Connections } from './resources/connections.js';
import { Executions } from './resources/executions.js';
import { Approvals, Policies } from './resources/guardrails.js';
import { McpTokens } from './resources/mcp-tokens.js';
import { Providers } from './resources/providers.js';
import { type ExecuteToolInput, type ExecuteToolResult, Tools } from './resources/tools.js';
import { Toolsets } from './resources/toolsets.js';
import { Triggers } from './resources/triggers.js';
import { Events, Webhooks } from './resources/webhooks.js';
import type { AuthorizationLinkResult } from './types.js';

export interface PorticoOptions {
  /** The gateway's URL (`PORTICO_ENV_URL`). */
  envUrl?: string;
  /** A gateway client's id (`PORTICO_CLIENT_ID`). */
  clientId?: string;
  /** A gateway client's secret (`PORTICO_CLIENT_SECRET`). */
  clientSecret?: string;
  /** Retries of a problem the gateway marks retryable (default 2). */
  maxRetries?: number;
  /** Longest wait before a retry, ms (default 10000); a longer Retry-After is thrown instead. */
  maxRetryDelayMs?: number;
  /** The fetch to use (default: the platform's). */
  fetch?: typeof fetch;
}

export interface RequestInput {
  connectionName: string;
  identifier: string;
  /** The provider path, e.g. `/v1/users/me` or `/drive/v3/files/ID?alt=media`. */
  path: string;
  method?: string;
  queryParams?: QueryParams;
  /** The body: bytes, text, a Blob, a stream (sent as it is read), a form, or an object sent as JSON. */
  formData?: BodyInput | Record<string, unknown>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** Environment variables where the platform has them (Node, Bun, Deno); nothing elsewhere. */
function environment(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const value = env?.[name];
  return value === '' ? undefined : value;
}

function required(value: string | undefined, option: string, variable: string): string {
  if (value === undefined) {
    throw new TypeError(`Portico: pass \`${option}\` or set ${variable}.`);
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** A client of one Portico gateway: the specification's operations and the API's resources. */
export class Portico {
  readonly envUrl: string;
  /** Named sets of tools, each with an MCP URL of its own. */
  readonly toolsets: Toolsets;
  readonly connections: Connections;
  readonly providers: Providers;
  readonly connectedAccounts: ConnectedAccounts;
  readonly tools: Tools;
  readonly executions: Executions;
  readonly mcpTokens: McpTokens;
  /** Which tools agents may call, with which inputs and how often; which calls wait for approval. */
  readonly policies: Policies;
  /** The calls policies hold for a person's decision. */
  readonly approvals: Approvals;
  readonly webhooks: Webhooks;
  readonly events: Events;
  /** Changes at a provider delivered as trigger.fired events, and each trigger's health. */
  readonly triggers: Triggers;
  /** The gateway's audit log: who changed what, when, from where. */
  readonly audit: Audit;
  private readonly transport: Transport;

  constructor(options: PorticoOptions = {}) {
    const envUrl = required(options.envUrl ?? environment('PORTICO_ENV_URL'), 'envUrl', 'PORTICO_ENV_URL');
    let parsed: URL;
    try {
      parsed = new URL(envUrl);
    } catch {
      throw new TypeError(
        `Portico: envUrl must be an absolute URL such as http://localhost:8080, not "${envUrl}".`,
      );
    }
    this.envUrl = parsed.href.replace(/\/+$/, '');
    const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    const tokens = new GatewayTokenSource({
      envUrl: this.envUrl,
      clientId: required(
        options.clientId ?? environment('PORTICO_CLIENT_ID'),
        'clientId',
        'PORTICO_CLIENT_ID',
      ),
      clientSecret: required(
        options.clientSecret ?? environment('PORTICO_CLIENT_SECRET'),
        'clientSecret',
        'PORTICO_CLIENT_SECRET',
      ),
      fetch: fetchImpl,
    });
    this.transport = new Transport(this.envUrl, tokens, fetchImpl, {
      maxRetries: options.maxRetries ?? 2,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 10_000,
    });
    this.connections = new Connections(this.transport);
    this.toolsets = new Toolsets(this.transport);
    this.providers = new Providers(this.transport);
    this.connectedAccounts = new ConnectedAccounts(this.transport);
    this.tools = new Tools(this.transport, this.connectedAccounts, this.connections, this.providers);
    this.executions = new Executions(this.transport);
    this.mcpTokens = new McpTokens(this.transport);
    this.policies = new Policies(this.transport);
    this.approvals = new Approvals(this.transport);
    this.webhooks = new Webhooks(this.transport);
    this.events = new Events(this.transport);
    this.triggers = new Triggers(this.transport);
    this.audit = new Audit(this.transport);
  }

  /** A link for the end user to authorize a connection (single use, expiring). */
  getAuthorizationLink(input: AuthorizationLinkInput): Promise<AuthorizationLinkResult> {
    return this.connectedAccounts.authorizationLink(input);
  }

  /** Confirms the user of a consent made with `userVerifyUrl`; the account then becomes ACTIVE. */
  verifyConnectedAccountUser(input: VerifyUserInput): Promise<VerifyUserResult> {
    return this.connectedAccounts.verify(input);
  }

  /** The end user's account on a connection, created if missing, with a link when it is not ACTIVE. */
  getOrCreateConnectedAccount(input: AuthorizationLinkInput): Promise<AccountWithLink> {
    return this.connectedAccounts.getOrCreate(input);
  }

  /** Runs a tool as the end user. */
  executeTool<T = unknown>(input: ExecuteToolInput): Promise<ExecuteToolResult<T>> {
    return this.tools.execute<T>(input);
  }

  /**
   * Calls the provider's API as the end user through the proxy. The provider's answer comes back
   * whatever its status (read it as JSON, text, bytes or a stream); the gateway's own problems
   * (no account, account not active, invalid path) are thrown as errors.
   */
  async request(input: RequestInput): Promise<PorticoResponse> {
    const path = input.path.startsWith('/') ? input.path : `/${input.path}`;
    const [pathname, inlineQuery] = splitQuery(path);
    refuseDotSegments(pathname);
    const headers = new Headers(input.headers);
    headers.set('connection_name', input.connectionName);
    headers.set('identifier', input.identifier);
    let body: BodyInput | undefined;
    if (isPlainObject(input.formData)) {
      body = JSON.stringify(input.formData);
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    } else {
      body = input.formData as BodyInput | undefined;
    }
    // A query written in the path and queryParams both count; repeated keys stay repeated.
    const search = new URLSearchParams(inlineQuery);
    for (const [key, value] of Object.entries(input.queryParams ?? {})) {
      if (value === undefined || value === null) continue;
      if (Array.isArray(value)) for (const item of value) search.append(key, item);
      else search.append(key, String(value));
    }
    const qs = search.toString();
    const res = await this.transport.send({
      method: (input.method ?? 'GET').toUpperCase(),
      path: `/proxy${pathname}${qs ? `?${qs}` : ''}`,
      headers,
      body,
      signal: input.signal,
      passThrough: true,
    });
    return new PorticoResponse(res);
  }
}

/**
 * URLs resolve `.` and `..` segments before sending, so `/../api/…` would leave the proxy without
 * the gateway ever seeing it; refused here as the gateway refuses them.
 */
function refuseDotSegments(pathname: string): void {
  const dot = pathname.split('/').some((segment) => /^(\.|%2e){1,2}$/i.test(segment));
  if (dot) {
    throw new InvalidPathError(400, {
      code: 'invalid_path',
      title: 'Invalid proxy path',
      detail: `The path "${pathname}" has a "." or ".." segment; name the provider resource without them.`,
    });
  }
}

function splitQuery(path: string): [string, string] {
  const at = path.indexOf('?');
  return at === -1 ? [path, ''] : [path.slice(0, at), path.slice(at + 1)];
}
