#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { PorticoConnectionError, PorticoError } from '@portico/sdk';
import { cliActor, recordAuditNow } from './audit/service.js';
import { bootstrapStore } from './auth/bootstrap.js';
import { createGatewayClient, type IssuedClient, listClients, revokeClient } from './auth/gateway-clients.js';
import { API_COMMANDS, runApiCommand, UsageError } from './cli/api-commands.js';
import { cliWording } from './cli/output.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { ADMINS_USAGE, adminsCommand, printAdmin } from './dashboard/admins-command.js';
import { Problem } from './errors/problem.js';
import type * as GatewayModule from './gateway.js';
import { missingNodeFlags } from './node-flags.js';
import { generateMasterKey, loadKeyring, MissingMasterKeyError } from './secrets/keyring.js';
import { rotateSecrets } from './secrets/rotate.js';
import { DataDirInUseError } from './store/data-dir-lock.js';

import type { Database } from './store/db.js';
import { migrate } from './store/migrate.js';

const ADMINS_WHILE_RUNNING =
  'While it runs, an admin signed in at /dashboard adds accounts on its Admins page; to reset a password, stop the gateway, run this command again, and start it.';

/**
 * The gateway's modules load only for the commands that start it or open its store: they are 0.6 s
 * of CPU a command for the running gateway's API (`connections list`) never needs.
 */
const gatewayModule = (): Promise<typeof GatewayModule> => import('./gateway.js');

const USAGE = `Usage: portico <command>

Operator commands (open the store; with the embedded database, stop the gateway first):
  start                         run the gateway (default)
  migrate                       apply database migrations
  keys generate                 print a new master key (base64, 32 bytes)
  keys rotate                   re-seal every stored secret with the first PORTICO_MASTER_KEY key
  clients create [--name N] [--scopes runtime|admin|scope,…] [--connections a,b]
                                create a gateway client and print its credentials once
  clients list                  list gateway clients
  clients revoke <client_id>    revoke a client; its tokens stop working at once
${ADMINS_USAGE}

Commands for a running gateway (its HTTP API: PORTICO_ENV_URL or --env-url, default
http://127.0.0.1:$PORTICO_PORT; PORTICO_CLIENT_ID and PORTICO_CLIENT_SECRET). Tables by default,
--json for scripts:
  connections list [--provider P]
  connections get <name>
  connections create --name N --provider P [--client-id ID --client-secret S] [--scopes a,b]
                     [--sandbox] [--tenant T] [--parameter name=value ...] [--display-name D]
  connections update <name> [--client-id ID] [--client-secret S] [--scopes a,b] [--tenant T]
                     [--parameter name=value ...] [--display-name D]
  connections delete <name>
  providers list                built-in and custom providers
  providers get <key> [--definition]   one provider (--definition: only its JSON definition)
  providers create --file def.json|-   a custom provider from a definition (provider.schema.json)
  providers replace <key> --file def.json|-
  providers delete <key>        a custom provider no connection uses
  accounts list [--connection C] [--identifier I] [--status ACTIVE|EXPIRED|PENDING_AUTH|DISCONNECTED]
  accounts get <ca_…>
  accounts delete <ca_…>        revoke at the provider and disconnect
  accounts verify <areq_…> <identifier>   confirm the user of a consent made with --user-verify-url
  accounts import --connection C --identifier I [--access-token T] [--refresh-token T]
                  [--expires-in S | --expires-at ISO] [--scopes a,b] [--api-key K]
                  [--username U --password P] [--no-verify]
                                an ACTIVE account from a credential you hold (a secret given as -
                                is read from stdin)
  link <connection> <identifier> [--redirect-url U] [--state S] [--user-verify-url U]
  tools list [--provider P] [--connection C] [--tags a,b] [--read-only true|false]
             [--format json_schema|openai|anthropic|mcp]
  tools search "<task in words>" [--limit N] [--provider P] [--connection C] [--tags a,b]
               [--read-only true|false]   the tools that fit the task best, best first
               (tools list and tools search take --toolset T too)
  toolsets list | get <name> | delete <name>
  toolsets create --name N [--tools a,b] [--patterns 'github_issues_*'] [--providers a,b]
                  [--connections a,b] [--tags a,b] [--description D] [--mcp-mode full|search]
  toolsets update <name> [same flags; an empty value clears one]
  tools get <name> [--format F]
  tools run <name> --identifier I [--connection C] [--input JSON|@file|-]
  remote-mcp try <url> [--identifier I] [--client-id ID [--client-secret S]] [--scopes a,b]
                 [--tool NAME [--input JSON|@file|-]] [--wait SECONDS] [--keep]
                                connect the gateway to a remote MCP server as an application
                                would (a provider, a connection, a link followed or printed for a
                                browser, awaited --wait, default 300), list its tools and call
                                one; removed afterwards unless --keep
  executions list [--tool T] [--identifier I] [--status success|error]
  executions get <exec_…>
  mcp-tokens create --identifier I [--connections a,b] [--tools x,y] [--expires-in SECONDS]
  mcp-tokens list [--identifier I]
  mcp-tokens revoke <mcpt_…>
  webhooks create --url U --events a,b|* [--description D]
  webhooks list | get <wh_…> | delete <wh_…> | rotate-secret <wh_…> | deliveries <wh_…>
  webhooks update <wh_…> [--url U] [--events a,b] [--description D] [--enabled true|false]
  webhooks retry <wh_…> <evt_…>
  events list [--type T] [--after evt_…]
  triggers types                  what can be watched at each provider
  triggers create --connection C --identifier I --type T [--config JSON|@file|-] [--interval SECONDS]
  triggers list [--connection C] [--identifier I] [--type T] [--state active|degraded|failing|paused]
  triggers get|pause|resume|delete <trg_…>
  policies list | get <name> | delete <name>
  policies create --file policy.json     (or - for stdin; the API's JSON, snake_case)
  policies replace <name> --file policy.json
  approvals list [--status pending|approved|denied|expired|used] [--identifier ID]
  approvals get <apr_…>
  approvals approve|deny <apr_…> [--reason R]
  audit list [--action A|prefix.] [--actor ID] [--actor-type client|admin|cli|link|system]
             [--resource-type T] [--resource-id ID] [--since ISO] [--until ISO]
  audit export [same filters] > audit.jsonl     every entry, one JSON object per line

Configuration comes from the environment (see docs/reference/configuration.md).`;

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printCredentials(
  client: IssuedClient,
  envUrl: string,
  out: NodeJS.WritableStream = process.stdout,
): void {
  out.write(
    [
      '',
      'Portico gateway client created. Store these now: the secret is shown only once.',
      `  client_id:     ${client.client_id}`,
      `  client_secret: ${client.client_secret}`,
      `  env_url:       ${envUrl}`,
      '',
    ].join('\n') + '\n',
  );
}

/** --scopes and --connections of `clients create`, comma-separated. */
function clientLimits(values: { scopes?: string; connections?: string }): {
  scopes?: string[];
  connection_names?: string[];
} {
  const list = (raw: string | undefined) =>
    raw
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const scopes = list(values.scopes);
  const connections = list(values.connections);
  return {
    ...(scopes?.length ? { scopes } : {}),
    ...(connections?.length ? { connection_names: connections } : {}),
  };
}

async function withStore<T>(config: Config, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await (await gatewayModule()).openStore(config);
  try {
    await migrate(db);
    const { client } = await bootstrapStore(db);
    if (client) printCredentials(client, config.publicUrl, process.stderr);
    return await fn(db);
  } finally {
    await db.close();
  }
}

async function defaultEnvironmentId(db: Database): Promise<string> {
  const { environment } = await bootstrapStore(db);
  return environment.id;
}

/** The port is taken: said in one line, naming the variable to change. */
class PortInUseError extends Error {}

async function start(config: Config): Promise<void> {
  const gateway = await (await gatewayModule()).createGateway(config);
  const stop = async (signal: string) => {
    gateway.logger.info({ signal }, 'shutting down');
    await gateway.close();
    gateway.logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
  let url: string;
  try {
    url = await gateway.listen();
  } catch (error) {
    await gateway.close();
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new PortInUseError(
        `Port ${config.port} on ${config.host} is already in use; stop the process that holds it or set PORTICO_PORT to a free port.`,
      );
    }
    throw error;
  }
  if (gateway.bootstrapClient) printCredentials(gateway.bootstrapClient, config.publicUrl);
  if (gateway.bootstrapAdmin) printAdmin(gateway.bootstrapAdmin);
  gateway.logger.info({ url, public_url: config.publicUrl, database: gateway.db.kind }, 'Portico is ready');
  const missing = missingNodeFlags();
  if (missing.length > 0) {
    gateway.logger.info(
      `Start node with ${missing.join(' ')} (or put them in NODE_OPTIONS): without them the proxy spends far more of its time collecting garbage (see docs/guides/deployment.md).`,
    );
  }
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      provider: { type: 'string' },
      'client-id': { type: 'string' },
      'client-secret': { type: 'string' },
      scopes: { type: 'string' },
      sandbox: { type: 'boolean' },
      tenant: { type: 'string' },
      'display-name': { type: 'string' },
      'env-url': { type: 'string' },
      json: { type: 'boolean' },
      format: { type: 'string' },
      identifier: { type: 'string' },
      connection: { type: 'string' },
      status: { type: 'string' },
      tool: { type: 'string' },
      input: { type: 'string' },
      'redirect-url': { type: 'string' },
      'user-verify-url': { type: 'string' },
      connections: { type: 'string' },
      tools: { type: 'string' },
      tags: { type: 'string' },
      toolset: { type: 'string' },
      patterns: { type: 'string' },
      providers: { type: 'string' },
      'mcp-mode': { type: 'string' },
      'read-only': { type: 'string' },
      limit: { type: 'string' },
      'expires-in': { type: 'string' },
      'expires-at': { type: 'string' },
      'access-token': { type: 'string' },
      'refresh-token': { type: 'string' },
      'api-key': { type: 'string' },
      username: { type: 'string' },
      password: { type: 'string' },
      'no-verify': { type: 'boolean' },
      keep: { type: 'boolean' },
      wait: { type: 'string' },
      parameter: { type: 'string', multiple: true },
      file: { type: 'string' },
      definition: { type: 'boolean' },
      url: { type: 'string' },
      events: { type: 'string' },
      description: { type: 'string' },
      enabled: { type: 'string' },
      type: { type: 'string' },
      after: { type: 'string' },
      state: { type: 'string' },
      config: { type: 'string' },
      interval: { type: 'string' },
      role: { type: 'string' },
      reason: { type: 'string' },
      action: { type: 'string' },
      actor: { type: 'string' },
      'actor-type': { type: 'string' },
      'resource-type': { type: 'string' },
      'resource-id': { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command = 'start', sub, arg] = positionals;
  if (values.help || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (command === 'keys' && sub === 'generate') {
    process.stdout.write(`${generateMasterKey()}\n`);
    return 0;
  }
  if (API_COMMANDS.has(command)) {
    return runApiCommand({ command, sub, args: positionals.slice(2), values, env: process.env });
  }
  const config = loadConfig();

  switch (`${command} ${sub ?? ''}`.trim()) {
    case 'start':
      await start(config);
      return -1;
    case 'migrate': {
      const db = await (await gatewayModule()).openStore(config);
      try {
        print(await migrate(db));
      } finally {
        await db.close();
      }
      return 0;
    }
    case 'keys rotate': {
      const { keyring } = await loadKeyring({
        masterKeys: config.masterKeys,
        usesPostgres: Boolean(config.databaseUrl),
        dataDir: config.dataDir,
      });
      return withStore(config, async (db) => {
        const result = await rotateSecrets(db, keyring);
        await recordAuditNow(db, {
          environmentId: await defaultEnvironmentId(db),
          ...cliActor(),
          action: 'keys.rotated',
          resourceType: 'keys',
          resourceId: keyring.activeKeyId,
          details: { resealed: result.resealed, already_current: result.alreadyCurrent },
        });
        print({
          active_key_id: keyring.activeKeyId,
          resealed: result.resealed,
          already_current: result.alreadyCurrent,
        });
        return 0;
      });
    }
    case 'clients create':
      return withStore(config, async (db) => {
        const environmentId = await defaultEnvironmentId(db);
        const client = await createGatewayClient(db, environmentId, values.name ?? 'cli', {
          ...clientLimits(values),
          created_by: 'cli',
        }).catch((error: unknown) => {
          // An unknown scope: the problem's detail lists the scopes and presets.
          throw error instanceof Problem ? new UsageError(error.detail, false) : error;
        });
        await recordAuditNow(db, {
          environmentId,
          ...cliActor(),
          action: 'client.created',
          resourceType: 'client',
          resourceId: client.client_id,
          details: { name: values.name ?? 'cli' },
        });
        printCredentials(client, config.publicUrl);
        return 0;
      });
    case 'clients list':
      return withStore(config, async (db) => {
        print({ data: await listClients(db) });
        return 0;
      });
    case 'clients revoke':
      if (!arg) throw new UsageError('clients revoke needs a client_id');
      return withStore(config, async (db) => {
        if (!(await revokeClient(db, arg))) throw new UsageError(`no active client ${arg}`);
        await recordAuditNow(db, {
          environmentId: await defaultEnvironmentId(db),
          ...cliActor(),
          action: 'client.revoked',
          resourceType: 'client',
          resourceId: arg,
        });
        print({ client_id: arg, revoked: true });
        return 0;
      });
    case 'admins create':
    case 'admins reset-password':
      return withStore(config, (db) =>
        adminsCommand(db, { sub, username: values.name ?? arg, role: values.role as string | undefined }),
      ).catch((error: unknown) => {
        // Admin accounts have no HTTP route a gateway client may use: say what works instead.
        if (!(error instanceof DataDirInUseError)) throw error;
        throw new DataDirInUseError(error.dataDir, error.pid, ADMINS_WHILE_RUNNING);
      });
    default:
      throw new UsageError(`unknown command "${positionals.join(' ')}"`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    if (
      error instanceof ConfigError ||
      error instanceof MissingMasterKeyError ||
      error instanceof DataDirInUseError ||
      error instanceof PortInUseError
    ) {
      process.stderr.write(`${error.message}\n`);
    } else if (error instanceof Problem) {
      process.stderr.write(`error (${error.code}): ${error.detail}\n`);
      for (const e of error.options.errors ?? []) process.stderr.write(`  ${e.path}: ${e.message}\n`);
    } else if (error instanceof PorticoError) {
      process.stderr.write(`error (${error.code}): ${cliWording(error.detail)}\n`);
      for (const e of error.errors) process.stderr.write(`  ${e.path}: ${e.message}\n`);
      if (error.authorizationLink)
        process.stderr.write(`  authorization link: ${error.authorizationLink.link}\n`);
    } else if (error instanceof PorticoConnectionError) {
      const cause = error.cause as { cause?: { code?: string }; message?: string } | undefined;
      process.stderr.write(
        `${error.message} (${cause?.cause?.code ?? cause?.message ?? 'network error'}). Is it running? Set PORTICO_ENV_URL or --env-url.\n`,
      );
    } else if (error instanceof UsageError && !error.showUsage) {
      process.stderr.write(`${error.message}\n`);
    } else if (
      error instanceof UsageError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      // The one line that says what went wrong stays in sight: the full usage is 70 lines.
      process.stderr.write(
        `${(error as Error).message}\nRun "portico help" to see every command and option.\n`,
      );
    } else {
      process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    }
    process.exitCode = error instanceof UsageError ? 2 : 1;
  },
);
