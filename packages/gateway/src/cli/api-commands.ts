import { readFile } from 'node:fs/promises';
import {
  type AccountStatus,
  type Approval,
  type ApprovalStatus,
  type AuditEntry,
  type AuditFilters,
  type ConnectedAccount,
  type Connection,
  type Execution,
  type ImportAccountInput,
  type McpToken,
  type Policy,
  type PolicyInput,
  Portico,
  type PorticoEvent,
  type Provider,
  type ProviderDefinition,
  type ProviderKey,
  type ToolDefinition,
  type ToolFilters,
  type ToolMatch,
  type Toolset,
  type ToolsetChange,
  type ToolsetSelectors,
  type Trigger,
  type TriggerType,
  type Webhook,
  type WebhookDelivery,
} from '@portico/sdk';
import { type Column, printFields, printJson, printTable, snakeKeys } from './output.js';
import { tryRemoteMcpServer } from './remote-mcp-try.js';

/**
 * Commands that act on a running gateway through its HTTP API (with the SDK), so they work while
 * the embedded gateway holds its store and never write around it.
 */
export const API_COMMANDS = new Set([
  'connections',
  'providers',
  'accounts',
  'link',
  'tools',
  'executions',
  'mcp-tokens',
  'webhooks',
  'events',
  'triggers',
  'audit',
  'policies',
  'approvals',
  'toolsets',
  'remote-mcp',
]);

export interface ApiArgs {
  command: string;
  sub: string | undefined;
  args: string[];
  values: Record<string, string | boolean | string[] | undefined>;
  env: NodeJS.ProcessEnv;
}

/**
 * A usage mistake, exit code 2: printed with the usage text, unless the message alone says what to
 * do (a missing credential is not a misspelt command, and 40 lines of usage would bury it).
 */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly showUsage = true,
  ) {
    super(message);
  }
}

export function gatewayClient(values: ApiArgs['values'], env: NodeJS.ProcessEnv): Portico {
  const envUrl =
    (values['env-url'] as string | undefined) ??
    env.PORTICO_ENV_URL ??
    `http://127.0.0.1:${env.PORTICO_PORT ?? '8080'}`;
  const clientId = env.PORTICO_CLIENT_ID;
  const clientSecret = env.PORTICO_CLIENT_SECRET;
  if (!clientId || !clientSecret) {
    throw new UsageError(
      'Set PORTICO_CLIENT_ID and PORTICO_CLIENT_SECRET to a gateway client (printed at the first start, or made with `portico clients create` while the gateway is stopped).',
      false,
    );
  }
  return new Portico({ envUrl, clientId, clientSecret });
}

const CONNECTION_COLUMNS: Column<Connection>[] = [
  { header: 'NAME', value: (c) => c.name },
  { header: 'PROVIDER', value: (c) => c.provider },
  { header: 'SANDBOX', value: (c) => (c.sandbox ? 'yes' : 'no') },
  { header: 'SCOPES', value: (c) => c.scopes, max: 40 },
  { header: 'REDIRECT URI', value: (c) => c.redirectUri },
];

const PROVIDER_COLUMNS: Column<Provider>[] = [
  { header: 'KEY', value: (p) => p.key },
  { header: 'NAME', value: (p) => p.displayName, max: 30 },
  { header: 'AUTH', value: (p) => p.auth },
  { header: 'BUILT-IN', value: (p) => (p.builtIn ? 'yes' : 'no') },
  { header: 'PARAMETERS', value: (p) => p.parameters.map((x) => x.name), max: 30 },
  { header: 'DEFAULT SCOPES', value: (p) => p.defaultScopes, max: 40 },
];

const ACCOUNT_COLUMNS: Column<ConnectedAccount>[] = [
  { header: 'ID', value: (a) => a.id },
  { header: 'CONNECTION', value: (a) => a.connectionName },
  { header: 'IDENTIFIER', value: (a) => a.identifier, max: 40 },
  { header: 'STATUS', value: (a) => a.status },
  { header: 'LAST USED', value: (a) => a.lastUsedAt },
];

const TOOL_COLUMNS: Column<ToolDefinition>[] = [
  { header: 'NAME', value: (t) => t.name },
  { header: 'PROVIDER', value: (t) => t.provider },
  {
    header: 'KIND',
    value: (t) => (t.annotations.readOnly ? 'read' : t.annotations.destructive ? 'destructive' : 'write'),
  },
  { header: 'DESCRIPTION', value: (t) => t.description.split(/(?<=\.)\s/)[0], max: 80 },
];

const MATCH_COLUMNS: Column<ToolMatch>[] = [
  { header: 'NAME', value: (t) => t.name },
  { header: 'SCORE', value: (t) => t.score.toFixed(1) },
  ...TOOL_COLUMNS.slice(1),
];

const TOOLSET_COLUMNS: Column<Toolset>[] = [
  { header: 'NAME', value: (t) => t.name },
  { header: 'TOOLS', value: (t) => t.tools ?? '', max: 30 },
  { header: 'PATTERNS', value: (t) => t.patterns ?? '', max: 24 },
  { header: 'PROVIDERS', value: (t) => t.providers ?? '', max: 24 },
  { header: 'CONNECTIONS', value: (t) => t.connections ?? '', max: 24 },
  { header: 'TAGS', value: (t) => t.tags ?? '', max: 24 },
  { header: 'MCP', value: (t) => t.mcpMode },
  { header: 'MCP URL', value: (t) => t.mcpUrl },
];

/**
 * A toolset's selectors from --tools, --patterns, --providers, --connections, --tags (comma
 * separated), --description and --mcp-mode; in an update an empty value clears the field.
 */
function toolsetSelectors(values: ApiArgs['values'], update: boolean): ToolsetChange {
  const out: Record<string, unknown> = {};
  for (const [flag, key] of [
    ['tools', 'tools'],
    ['patterns', 'patterns'],
    ['providers', 'providers'],
    ['connections', 'connections'],
    ['tags', 'tags'],
  ] as const) {
    const raw = str(values, flag);
    if (raw === undefined) continue;
    const items = list(values, flag) ?? [];
    out[key] = items.length ? items : update ? null : undefined;
  }
  const description = str(values, 'description');
  if (description !== undefined) out.description = description === '' && update ? null : description;
  const mode = str(values, 'mcp-mode');
  if (mode !== undefined) {
    if (mode !== 'full' && mode !== 'search') throw new UsageError('--mcp-mode takes full or search');
    out.mcpMode = mode;
  }
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as ToolsetChange;
}

/** --provider, --connection, --tags a,b and --read-only true|false of the tool listings. */
function toolFilters(values: ApiArgs['values']): ToolFilters {
  const readOnly = str(values, 'read-only');
  if (readOnly !== undefined && readOnly !== 'true' && readOnly !== 'false') {
    throw new UsageError('--read-only takes true or false');
  }
  const provider = str(values, 'provider') as ProviderKey | undefined;
  const connection = str(values, 'connection');
  const tags = list(values, 'tags');
  const toolset = str(values, 'toolset');
  return {
    ...(toolset ? { toolset } : {}),
    ...(provider ? { provider } : {}),
    ...(connection ? { connection } : {}),
    ...(tags ? { tags } : {}),
    ...(readOnly !== undefined ? { readOnly: readOnly === 'true' } : {}),
  };
}

const EXECUTION_COLUMNS: Column<Execution>[] = [
  { header: 'ID', value: (e) => e.id },
  { header: 'TOOL', value: (e) => e.toolName },
  { header: 'IDENTIFIER', value: (e) => e.identifier, max: 30 },
  { header: 'STATUS', value: (e) => e.status },
  { header: 'ERROR', value: (e) => e.errorCode },
  { header: 'MS', value: (e) => e.durationMs },
  { header: 'STARTED', value: (e) => e.startedAt },
];

const AUDIT_COLUMNS: Column<AuditEntry>[] = [
  { header: 'AT', value: (e) => e.at },
  { header: 'ACTOR', value: (e) => `${e.actorType}:${e.actorId}`, max: 40 },
  { header: 'ACTION', value: (e) => e.action },
  {
    header: 'RESOURCE',
    value: (e) => (e.resourceId ? `${e.resourceType}:${e.resourceId}` : e.resourceType),
    max: 50,
  },
  { header: 'IP', value: (e) => e.ip },
  { header: 'STATUS', value: (e) => e.statusCode },
];

const POLICY_COLUMNS: Column<Policy>[] = [
  { header: 'NAME', value: (p) => p.name },
  { header: 'CONNECTION', value: (p) => p.connectionName ?? '*' },
  { header: 'IDENTIFIER', value: (p) => p.identifier ?? '*', max: 30 },
  { header: 'ALLOW', value: (p) => p.allowTools ?? '*', max: 30 },
  { header: 'DENY', value: (p) => p.denyTools ?? [], max: 30 },
  { header: 'APPROVAL', value: (p) => p.approvalTools, max: 30 },
  { header: 'ENABLED', value: (p) => (p.enabled ? 'yes' : 'no') },
];

const APPROVAL_COLUMNS: Column<Approval>[] = [
  { header: 'ID', value: (a) => a.id },
  { header: 'STATUS', value: (a) => a.status },
  { header: 'TOOL', value: (a) => a.toolName },
  { header: 'IDENTIFIER', value: (a) => a.identifier, max: 30 },
  { header: 'POLICY', value: (a) => a.policy },
  { header: 'EXPIRES', value: (a) => a.expiresAt },
];

/** A policy as the API spells it: its constraints and budget are Portico's fields, not user data. */
const policyView = (policy: Policy) => ({
  ...policy,
  ...(policy.constraints ? { constraints: policy.constraints.map((c) => snakeKeys(c)) } : {}),
  ...(policy.budget ? { budget: snakeKeys(policy.budget) } : {}),
});

/** A policy as the API takes it (snake_case, as in the guides): the SDK sends keys snake_cased. */
const policyFile = async (values: ApiArgs['values'], command: string) =>
  (await jsonObjectFile(
    values,
    command,
    'a policy (see docs/guides/guardrails.md)',
  )) as unknown as PolicyInput;

/** The audit filters the flags name (`--action connection.` is a prefix). */
function auditFilters(values: ApiArgs['values']): AuditFilters {
  const actorType = str(values, 'actor-type') as AuditFilters['actorType'];
  const pairs: Array<[keyof AuditFilters, string | undefined]> = [
    ['action', str(values, 'action')],
    ['actorId', str(values, 'actor')],
    ['actorType', actorType],
    ['resourceType', str(values, 'resource-type')],
    ['resourceId', str(values, 'resource-id')],
    ['since', str(values, 'since')],
    ['until', str(values, 'until')],
  ];
  return Object.fromEntries(pairs.filter(([, v]) => v !== undefined)) as AuditFilters;
}

const MCP_TOKEN_COLUMNS: Column<McpToken>[] = [
  { header: 'ID', value: (t) => t.id },
  { header: 'IDENTIFIER', value: (t) => t.identifier, max: 30 },
  { header: 'CONNECTIONS', value: (t) => t.connectionNames ?? 'all', max: 30 },
  { header: 'TOOLS', value: (t) => t.tools ?? 'all', max: 40 },
  { header: 'EXPIRES', value: (t) => t.expiresAt },
];

const WEBHOOK_COLUMNS: Column<Webhook>[] = [
  { header: 'ID', value: (w) => w.id },
  { header: 'URL', value: (w) => w.url, max: 50 },
  { header: 'EVENTS', value: (w) => w.events, max: 50 },
  {
    header: 'ENABLED',
    value: (w) => (w.enabled ? 'yes' : `no${w.disabledReason ? ` (${w.disabledReason})` : ''}`),
  },
];

const DELIVERY_COLUMNS: Column<WebhookDelivery>[] = [
  { header: 'EVENT', value: (d) => d.eventId },
  { header: 'ATTEMPT', value: (d) => d.attempt },
  { header: 'HTTP', value: (d) => d.statusCode },
  { header: 'DELIVERY', value: (d) => d.deliveryStatus },
  { header: 'MS', value: (d) => d.durationMs },
  { header: 'ERROR', value: (d) => d.error, max: 60 },
];

const TRIGGER_COLUMNS: Column<Trigger>[] = [
  { header: 'ID', value: (t) => t.id },
  { header: 'TYPE', value: (t) => t.triggerType },
  { header: 'CONNECTION', value: (t) => t.connectionName },
  { header: 'IDENTIFIER', value: (t) => t.identifier, max: 30 },
  { header: 'STATE', value: (t) => (t.pauseReason ? `${t.state} (${t.pauseReason})` : t.state) },
  { header: 'LAST SUCCESS', value: (t) => t.lastSuccessAt },
  { header: 'LAST ERROR', value: (t) => t.lastError, max: 50 },
];

const TRIGGER_TYPE_COLUMNS: Column<TriggerType>[] = [
  { header: 'NAME', value: (t) => t.name },
  { header: 'PROVIDER', value: (t) => t.provider },
  { header: 'CHANGES', value: (t) => t.changes, max: 40 },
  { header: 'HOW', value: (t) => t.mechanism, max: 60 },
];

const EVENT_COLUMNS: Column<PorticoEvent>[] = [
  { header: 'ID', value: (e) => e.id },
  { header: 'TYPE', value: (e) => e.type },
  { header: 'CREATED', value: (e) => e.createdAt },
  { header: 'SUBJECT', value: (e) => e.data.id ?? e.data.name, max: 40 },
];

function list(values: ApiArgs['values'], name: string): string[] | undefined {
  const raw = values[name];
  if (typeof raw !== 'string') return undefined;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function str(values: ApiArgs['values'], name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

function needArg(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(what);
  return value;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `--parameter name=value`, repeatable: a connection's values for its provider's parameters. */
function parameters(values: ApiArgs['values']): Record<string, string> | undefined {
  const raw = values.parameter;
  if (raw === undefined || typeof raw === 'boolean') return undefined;
  const out: Record<string, string> = {};
  for (const pair of Array.isArray(raw) ? raw : [raw]) {
    const at = pair.indexOf('=');
    if (at < 1) throw new UsageError(`--parameter takes name=value (e.g. subdomain=acme), not "${pair}"`);
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}

/** `--file` of `providers create|replace`: a provider definition (JSON) in a file, or `-` for standard input. */
/** The JSON object --file names (or stdin for -): a provider definition, a policy. */
async function jsonObjectFile(
  values: ApiArgs['values'],
  command: string,
  what: string,
): Promise<Record<string, unknown>> {
  const file = needArg(str(values, 'file'), `${command} needs --file with ${what} (JSON), or - for stdin`);
  const text =
    file === '-'
      ? await readStdin()
      : await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
          throw new UsageError(`--file ${file}: cannot read the file (${error.code ?? error.message}).`);
        });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--file ${file} is not valid JSON (${(error as Error).message}).`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new UsageError(`--file ${file} must hold a JSON object: ${what}.`);
  }
  return parsed as Record<string, unknown>;
}

const definitionFile = async (values: ApiArgs['values'], command: string) =>
  (await jsonObjectFile(
    values,
    command,
    'a provider definition (packages/gateway/providers/provider.schema.json)',
  )) as unknown as ProviderDefinition;

/** What `providers …` shows people: the provider without its (long) definition. */
function providerSummary({ definition: _, ...provider }: Provider & { definition?: unknown }) {
  return {
    ...provider,
    parameters: provider.parameters.map((p) => `${p.name}${p.required ? '' : ` (default ${p.default})`}`),
    setup: provider.setup.console?.url ?? null,
  };
}

/** The credential of `accounts import`; `-` for a secret reads it from standard input (once). */
async function importInput(values: ApiArgs['values']): Promise<ImportAccountInput> {
  const secrets = ['access-token', 'refresh-token', 'api-key', 'password'] as const;
  const fromStdin = secrets.filter((name) => str(values, name) === '-');
  if (fromStdin.length > 1) {
    throw new UsageError(
      `only one secret can come from standard input (${fromStdin.map((n) => `--${n} -`).join(', ')})`,
    );
  }
  const stdin = fromStdin.length ? (await readStdin()).replace(/\r?\n$/, '') : undefined;
  const secret = (name: (typeof secrets)[number]) => (str(values, name) === '-' ? stdin : str(values, name));
  const expiresIn = str(values, 'expires-in');
  const expiresAt = str(values, 'expires-at');
  if (expiresIn !== undefined && expiresAt !== undefined) {
    throw new UsageError('accounts import takes --expires-in or --expires-at, not both');
  }
  if (expiresIn !== undefined && !/^\d+$/.test(expiresIn)) {
    throw new UsageError(`--expires-in is a number of seconds, not "${expiresIn}"`);
  }
  const scopes = list(values, 'scopes');
  const [accessToken, refreshToken, apiKey, password] = secrets.map(secret);
  const username = str(values, 'username');
  return {
    connectionName: needArg(str(values, 'connection'), 'accounts import needs --connection'),
    identifier: needArg(str(values, 'identifier'), 'accounts import needs --identifier'),
    ...(accessToken !== undefined ? { accessToken } : {}),
    ...(refreshToken !== undefined ? { refreshToken } : {}),
    ...(expiresAt !== undefined ? { expiresAt } : {}),
    ...(expiresIn !== undefined ? { expiresIn: Number(expiresIn) } : {}),
    ...(scopes ? { scopes } : {}),
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(username !== undefined ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(values['no-verify'] === true ? { verify: false } : {}),
  };
}

/** `--input` (or another flag's value) as JSON text, `@file` or `-` (standard input). */
function seconds(raw: string, flag: string): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0)
    throw new UsageError(`${flag} takes whole seconds, not "${raw}".`);
  return value;
}

async function toolInput(raw: string | undefined, flag = '--input'): Promise<Record<string, unknown>> {
  if (raw === undefined) return {};
  let text = raw;
  if (raw === '-') {
    text = await readStdin();
  } else if (raw.startsWith('@')) {
    text = await readFile(raw.slice(1), 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(`${flag} ${raw}: cannot read the file (${error.code ?? error.message}).`);
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `${flag} is not valid JSON (${(error as Error).message}); pass an object such as '{"page_size": 10}'.`,
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new UsageError(`${flag} must be a JSON object such as '{"page_size": 10}'.`);
  }
  return parsed as Record<string, unknown>;
}

export async function runApiCommand({ command, sub, args, values, env }: ApiArgs): Promise<number> {
  const portico = gatewayClient(values, env);
  const asJson = values.json === true;
  const show = <T extends object>(rows: T[], columns: Column<T>[]) =>
    asJson ? printJson({ data: rows.map(snakeKeys) }) : printTable(rows, columns);
  const showOne = (value: object) => (asJson ? printJson(snakeKeys(value)) : printFields(snakeKeys(value)));

  switch (command === 'link' ? 'link' : `${command} ${sub ?? ''}`.trim()) {
    case 'connections list': {
      const provider = str(values, 'provider') as ProviderKey | undefined;
      show(await portico.connections.list(provider ? { provider } : {}).toArray(), CONNECTION_COLUMNS);
      return 0;
    }
    case 'connections get':
      showOne(await portico.connections.get(needArg(args[0], 'connections get needs a connection name')));
      return 0;
    case 'connections create': {
      const scopes = list(values, 'scopes');
      const params = parameters(values);
      showOne(
        await portico.connections.create({
          name: needArg(str(values, 'name'), 'connections create needs --name'),
          provider: needArg(str(values, 'provider'), 'connections create needs --provider') as ProviderKey,
          ...(str(values, 'client-id') ? { clientId: str(values, 'client-id')! } : {}),
          ...(str(values, 'client-secret') ? { clientSecret: str(values, 'client-secret')! } : {}),
          ...(scopes ? { scopes } : {}),
          ...(values.sandbox ? { sandbox: true } : {}),
          ...(str(values, 'tenant') ? { tenant: str(values, 'tenant')! } : {}),
          ...(params ? { parameters: params } : {}),
          ...(str(values, 'display-name') ? { displayName: str(values, 'display-name')! } : {}),
        }),
      );
      return 0;
    }
    case 'connections update': {
      const scopes = list(values, 'scopes');
      const params = parameters(values);
      showOne(
        await portico.connections.update(needArg(args[0], 'connections update needs a connection name'), {
          ...(str(values, 'client-id') ? { clientId: str(values, 'client-id')! } : {}),
          ...(str(values, 'client-secret') ? { clientSecret: str(values, 'client-secret')! } : {}),
          ...(scopes ? { scopes } : {}),
          ...(str(values, 'tenant') ? { tenant: str(values, 'tenant')! } : {}),
          ...(params ? { parameters: params } : {}),
          ...(str(values, 'display-name') ? { displayName: str(values, 'display-name')! } : {}),
        }),
      );
      return 0;
    }
    case 'connections delete': {
      const name = needArg(args[0], 'connections delete needs a connection name');
      await portico.connections.delete(name);
      showOne({ name, deleted: true });
      return 0;
    }
    case 'providers list': {
      const providers = await portico.providers.list();
      show(providers, PROVIDER_COLUMNS);
      return 0;
    }
    case 'providers get': {
      const provider = await portico.providers.get(needArg(args[0], 'providers get needs a provider key'));
      if (values.definition === true) printJson(provider.definition);
      else if (asJson) printJson(snakeKeys(provider));
      else printFields(providerSummary(provider));
      return 0;
    }
    case 'providers create': {
      const created = await portico.providers.create(await definitionFile(values, 'providers create'));
      if (asJson) printJson(snakeKeys(created));
      else printFields(providerSummary(created));
      return 0;
    }
    case 'providers replace': {
      const key = needArg(args[0], 'providers replace needs a provider key');
      const replaced = await portico.providers.replace(
        key,
        await definitionFile(values, 'providers replace'),
      );
      if (asJson) printJson(snakeKeys(replaced));
      else printFields(providerSummary(replaced));
      return 0;
    }
    case 'providers delete': {
      const key = needArg(args[0], 'providers delete needs a provider key');
      await portico.providers.delete(key);
      showOne({ key, deleted: true });
      return 0;
    }
    case 'accounts import':
      showOne(await portico.connectedAccounts.import(await importInput(values)));
      return 0;
    case 'accounts list': {
      const status = str(values, 'status') as AccountStatus | undefined;
      const accounts = portico.connectedAccounts.list({
        ...(str(values, 'connection') ? { connectionName: str(values, 'connection')! } : {}),
        ...(str(values, 'identifier') ? { identifier: str(values, 'identifier')! } : {}),
        ...(status ? { status } : {}),
      });
      show(await accounts.toArray(), ACCOUNT_COLUMNS);
      return 0;
    }
    case 'accounts get':
      showOne(
        await portico.connectedAccounts.get(needArg(args[0], 'accounts get needs an account id (ca_…)')),
      );
      return 0;
    case 'accounts delete':
      showOne(
        await portico.connectedAccounts.delete(
          needArg(args[0], 'accounts delete needs an account id (ca_…)'),
        ),
      );
      return 0;
    case 'accounts verify': {
      const result = await portico.connectedAccounts.verify({
        authRequestId: needArg(args[0], 'accounts verify needs the auth_request_id (areq_…)'),
        identifier: needArg(args[1], 'accounts verify needs the identifier of the signed-in user'),
      });
      if (asJson) printJson(snakeKeys(result));
      else showOne({ ...result.connectedAccount, redirectUrl: result.redirectUrl });
      return 0;
    }
    case 'link': {
      const [connectionName, identifier] = [sub, args[0]];
      if (!connectionName || !identifier) throw new UsageError('link needs CONNECTION IDENTIFIER');
      const link = await portico.getAuthorizationLink({
        connectionName,
        identifier,
        ...(str(values, 'redirect-url') ? { redirectUrl: str(values, 'redirect-url')! } : {}),
        ...(str(values, 'state') ? { state: str(values, 'state')! } : {}),
        ...(str(values, 'user-verify-url') ? { userVerifyUrl: str(values, 'user-verify-url')! } : {}),
      });
      if (asJson) printJson(snakeKeys(link));
      else
        process.stdout.write(
          `${link.link}\n(works once; expires ${link.expiresAt}; account ${link.connectedAccountId})\n`,
        );
      return 0;
    }
    case 'tools list': {
      const filters = toolFilters(values);
      const format = str(values, 'format');
      if (format && format !== 'json_schema') {
        // An LLM format is for pasting into code: always JSON, and exactly the array the LLM API
        // takes (its `tools` parameter), with no envelope to unwrap.
        printJson(await portico.tools.list({ ...filters, format: format as 'openai' }));
      } else {
        show(await portico.tools.list(filters), TOOL_COLUMNS);
      }
      return 0;
    }
    case 'tools search': {
      const words = args.join(' ').trim();
      if (!words)
        throw new UsageError('tools search needs the task in words, e.g. tools search "send an email"');
      const limit = str(values, 'limit');
      const pageSize = limit === undefined ? 10 : Number(limit);
      if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 200) {
        throw new UsageError('--limit must be a whole number from 1 to 200');
      }
      const { data } = await portico.tools.search(words, { ...toolFilters(values), pageSize });
      show(data, MATCH_COLUMNS);
      return 0;
    }
    case 'tools get': {
      const name = needArg(args[0], 'tools get needs a tool name');
      const format = str(values, 'format');
      printJson(
        format && format !== 'json_schema'
          ? await portico.tools.get(name, { format: format as 'openai' })
          : await portico.tools.get(name),
      );
      return 0;
    }
    case 'remote-mcp try': {
      const url = needArg(args[0], 'remote-mcp try needs the MCP server URL');
      const scopes = list(values, 'scopes');
      return tryRemoteMcpServer(portico, {
        url,
        identifier: str(values, 'identifier') ?? 'try@portico.local',
        clientId: str(values, 'client-id'),
        clientSecret: str(values, 'client-secret'),
        scopes,
        tool: str(values, 'tool'),
        input: str(values, 'input') ? await toolInput(str(values, 'input')) : undefined,
        keep: values.keep === true,
        json: asJson,
        ...(str(values, 'wait') ? { waitMs: seconds(str(values, 'wait')!, '--wait') * 1000 } : {}),
      });
    }
    case 'tools run': {
      const toolName = needArg(args[0], 'tools run needs a tool name');
      const result = await portico.executeTool({
        toolName,
        identifier: needArg(str(values, 'identifier'), 'tools run needs --identifier'),
        toolInput: await toolInput(str(values, 'input')),
        ...(str(values, 'connection') ? { connectionName: str(values, 'connection')! } : {}),
      });
      printJson(asJson ? snakeKeys(result) : result.data);
      if (!asJson) process.stderr.write(`execution ${result.executionId}\n`);
      return 0;
    }
    case 'executions list': {
      const status = str(values, 'status') as 'success' | 'error' | undefined;
      const executions = portico.executions.list({
        ...(str(values, 'tool') ? { toolName: str(values, 'tool')! } : {}),
        ...(str(values, 'identifier') ? { identifier: str(values, 'identifier')! } : {}),
        ...(status ? { status } : {}),
        pageSize: 100,
      });
      show((await executions).data, EXECUTION_COLUMNS);
      return 0;
    }
    case 'executions get':
      showOne(
        await portico.executions.get(needArg(args[0], 'executions get needs an execution id (exec_…)')),
      );
      return 0;
    case 'mcp-tokens create': {
      const connectionNames = list(values, 'connections');
      const tools = list(values, 'tools');
      const expiresIn = str(values, 'expires-in');
      const minted = await portico.mcpTokens.create({
        identifier: needArg(str(values, 'identifier'), 'mcp-tokens create needs --identifier'),
        ...(connectionNames ? { connectionNames } : {}),
        ...(tools ? { tools } : {}),
        ...(expiresIn ? { expiresIn: Number(expiresIn) } : {}),
      });
      showOne(minted);
      if (!asJson) process.stderr.write("The token is shown only now: give it to the user's MCP client.\n");
      return 0;
    }
    case 'mcp-tokens list': {
      const identifier = str(values, 'identifier');
      show(await portico.mcpTokens.list(identifier ? { identifier } : {}).toArray(), MCP_TOKEN_COLUMNS);
      return 0;
    }
    case 'mcp-tokens revoke': {
      const id = needArg(args[0], 'mcp-tokens revoke needs a token id (mcpt_…)');
      await portico.mcpTokens.revoke(id);
      showOne({ id, revoked: true });
      return 0;
    }
    case 'webhooks create': {
      const description = str(values, 'description');
      showOne(
        await portico.webhooks.create({
          url: needArg(str(values, 'url'), 'webhooks create needs --url'),
          events: needArg(
            list(values, 'events')?.join(','),
            'webhooks create needs --events (e.g. "*")',
          ).split(','),
          ...(description ? { description } : {}),
        }),
      );
      if (!asJson)
        process.stderr.write('The signing secret is shown only now: store it with the receiver.\n');
      return 0;
    }
    case 'webhooks list':
      show(await portico.webhooks.list().toArray(), WEBHOOK_COLUMNS);
      return 0;
    case 'webhooks get':
      showOne(await portico.webhooks.get(needArg(args[0], 'webhooks get needs an endpoint id (wh_…)')));
      return 0;
    case 'webhooks update': {
      const events = list(values, 'events');
      const enabled = str(values, 'enabled');
      if (enabled !== undefined && enabled !== 'true' && enabled !== 'false') {
        throw new UsageError('--enabled is true or false');
      }
      showOne(
        await portico.webhooks.update(needArg(args[0], 'webhooks update needs an endpoint id (wh_…)'), {
          ...(str(values, 'url') ? { url: str(values, 'url')! } : {}),
          ...(events ? { events } : {}),
          ...(str(values, 'description') !== undefined ? { description: str(values, 'description')! } : {}),
          ...(enabled !== undefined ? { enabled: enabled === 'true' } : {}),
        }),
      );
      return 0;
    }
    case 'webhooks delete': {
      const id = needArg(args[0], 'webhooks delete needs an endpoint id (wh_…)');
      await portico.webhooks.delete(id);
      showOne({ id, deleted: true });
      return 0;
    }
    case 'webhooks rotate-secret':
      showOne(
        await portico.webhooks.rotateSecret(
          needArg(args[0], 'webhooks rotate-secret needs an endpoint id (wh_…)'),
        ),
      );
      return 0;
    case 'webhooks deliveries': {
      const id = needArg(args[0], 'webhooks deliveries needs an endpoint id (wh_…)');
      show((await portico.webhooks.deliveries(id, { pageSize: 100 })).data, DELIVERY_COLUMNS);
      return 0;
    }
    case 'webhooks retry':
      showOne(
        await portico.webhooks.retry(
          needArg(args[0], 'webhooks retry needs an endpoint id and an event id'),
          needArg(args[1], 'webhooks retry needs an endpoint id and an event id'),
        ),
      );
      return 0;
    case 'events list': {
      const type = str(values, 'type');
      const after = str(values, 'after');
      const page = await portico.events.list({
        ...(type ? { type } : {}),
        ...(after ? { after } : {}),
        pageSize: 200,
      });
      show(page.data, EVENT_COLUMNS);
      return 0;
    }
    case 'triggers types':
      show(await portico.triggers.types(), TRIGGER_TYPE_COLUMNS);
      return 0;
    case 'triggers create': {
      const interval = str(values, 'interval');
      if (interval !== undefined && !/^\d+$/.test(interval))
        throw new UsageError('--interval is a number of seconds');
      showOne(
        await portico.triggers.create({
          connectionName: needArg(str(values, 'connection'), 'triggers create needs --connection'),
          identifier: needArg(str(values, 'identifier'), 'triggers create needs --identifier'),
          triggerType: needArg(
            str(values, 'type'),
            'triggers create needs --type (see `portico triggers types`)',
          ),
          config: await toolInput(str(values, 'config'), '--config'),
          ...(interval !== undefined ? { intervalSeconds: Number(interval) } : {}),
        }),
      );
      return 0;
    }
    case 'triggers list': {
      const filters = {
        connectionName: str(values, 'connection'),
        identifier: str(values, 'identifier'),
        triggerType: str(values, 'type'),
        state: str(values, 'state') as Trigger['state'] | undefined,
      };
      show(
        await portico.triggers
          .list(Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined)))
          .toArray(),
        TRIGGER_COLUMNS,
      );
      return 0;
    }
    case 'triggers get':
      showOne(await portico.triggers.get(needArg(args[0], 'triggers get needs a trigger id (trg_…)')));
      return 0;
    case 'triggers pause':
      showOne(await portico.triggers.pause(needArg(args[0], 'triggers pause needs a trigger id (trg_…)')));
      return 0;
    case 'triggers resume':
      showOne(await portico.triggers.resume(needArg(args[0], 'triggers resume needs a trigger id (trg_…)')));
      return 0;
    case 'triggers delete': {
      const id = needArg(args[0], 'triggers delete needs a trigger id (trg_…)');
      await portico.triggers.delete(id);
      showOne({ id, deleted: true });
      return 0;
    }
    case 'audit list': {
      const page = await portico.audit.list({ ...auditFilters(values), pageSize: 200 });
      show(page.data, AUDIT_COLUMNS);
      return 0;
    }
    case 'audit export': {
      // JSON lines as the gateway writes them (snake_case), one entry per line, for files and jq.
      for await (const entry of portico.audit.export(auditFilters(values))) {
        process.stdout.write(`${JSON.stringify(snakeKeys(entry))}\n`);
      }
      return 0;
    }
    case 'toolsets list':
      show(await portico.toolsets.list({ pageSize: 100 }).toArray(), TOOLSET_COLUMNS);
      return 0;
    case 'toolsets get':
      showOne(await portico.toolsets.get(needArg(args[0], 'toolsets get needs a toolset name')));
      return 0;
    case 'toolsets create': {
      const name = needArg(str(values, 'name') ?? args[0], 'toolsets create needs --name N');
      showOne(
        await portico.toolsets.create({ name, ...(toolsetSelectors(values, false) as ToolsetSelectors) }),
      );
      return 0;
    }
    case 'toolsets update': {
      const name = needArg(args[0], 'toolsets update needs a toolset name');
      const change = toolsetSelectors(values, true);
      if (!Object.keys(change).length) {
        throw new UsageError(
          'toolsets update needs a change: --tools, --patterns, --providers, --connections, --tags, --description or --mcp-mode',
        );
      }
      showOne(await portico.toolsets.update(name, change));
      return 0;
    }
    case 'toolsets delete':
      await portico.toolsets.delete(needArg(args[0], 'toolsets delete needs a toolset name'));
      process.stdout.write('deleted\n');
      return 0;
    case 'policies list':
      show(await portico.policies.list(), POLICY_COLUMNS);
      return 0;
    case 'policies get':
      showOne(policyView(await portico.policies.get(needArg(args[0], 'policies get needs a policy name'))));
      return 0;
    case 'policies create':
      showOne(policyView(await portico.policies.create(await policyFile(values, 'policies create'))));
      return 0;
    case 'policies replace': {
      const name = needArg(args[0], 'policies replace needs a policy name');
      showOne(
        policyView(
          await portico.policies.replace({ ...(await policyFile(values, 'policies replace')), name }),
        ),
      );
      return 0;
    }
    case 'policies delete':
      await portico.policies.delete(needArg(args[0], 'policies delete needs a policy name'));
      return 0;
    case 'approvals list': {
      const status = str(values, 'status') as ApprovalStatus | undefined;
      const identifier = str(values, 'identifier');
      const page = await portico.approvals
        .list({ ...(status ? { status } : {}), ...(identifier ? { identifier } : {}), pageSize: 200 })
        .toArray();
      show(page, APPROVAL_COLUMNS);
      return 0;
    }
    case 'approvals get':
      showOne(await portico.approvals.get(needArg(args[0], 'approvals get needs an approval id (apr_…)')));
      return 0;
    case 'approvals approve':
    case 'approvals deny': {
      const id = needArg(args[0], `approvals ${sub} needs an approval id (apr_…)`);
      const reason = str(values, 'reason');
      showOne(
        sub === 'approve'
          ? await portico.approvals.approve(id, reason)
          : await portico.approvals.deny(id, reason),
      );
      return 0;
    }
    default:
      throw new UsageError(`unknown command "${[command, sub, ...args].filter(Boolean).join(' ')}"`);
  }
}
