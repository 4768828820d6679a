import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/store/db.js';
import { POSTGRES_URL, postgresAvailable } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { freePort, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';

/**
 * Portico behind PgBouncer in transaction mode (Debian's package), the way production pools its
 * connections: every statement through the pooler, only the LISTEN on a direct connection.
 */
const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((p) => existsSync(p));
if (!PGBOUNCER && process.env.CI === 'true') {
  throw new Error('pgbouncer is required when CI=true (apt-get install pgbouncer); .ci/run installs it.');
}

async function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!PGBOUNCER || !postgresAvailable)('behind PgBouncer in transaction mode', () => {
  const direct = new URL(POSTGRES_URL);
  const database = `portico_pgb_${Date.now().toString(36)}`;
  let dir: string;
  let bouncer: ChildProcess;
  let bouncerLog = '';
  let pooledUrl: string;
  let directUrl: string;
  let t: TestGateway;
  let receiver: Receiver;

  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    await admin(`CREATE DATABASE ${database}`);
    dir = await mkdtemp(join(tmpdir(), 'portico-pgbouncer-'));
    const port = await freePort();
    await writeFile(
      join(dir, 'pgbouncer.ini'),
      `[databases]
${database} = host=${direct.hostname} port=${direct.port || 5432} user=${direct.username || 'postgres'} dbname=${database}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = any
pool_mode = transaction
default_pool_size = 5
max_client_conn = 200
ignore_startup_parameters = extra_float_digits
admin_users = postgres
stats_users = postgres
`,
    );
    await chmod(dir, 0o755);
    // PgBouncer refuses to run as root; it drops to another user when told to.
    const asRoot = process.getuid?.() === 0;
    bouncer = spawn(PGBOUNCER!, [...(asRoot ? ['-u', 'nobody'] : []), join(dir, 'pgbouncer.ini')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    bouncer.stdout!.on('data', (d) => (bouncerLog += d));
    bouncer.stderr!.on('data', (d) => (bouncerLog += d));
    await waitForPort(port);
    pooledUrl = `postgres://${direct.username || 'postgres'}@127.0.0.1:${port}/${database}`;
    const directDb = new URL(POSTGRES_URL);
    directDb.pathname = `/${database}`;
    directUrl = directDb.toString();
    t = await startTestGateway(
      {
        name: 'postgres',
        open: () => openDatabase({ url: pooledUrl, listenUrl: directUrl, poolSize: 10 }),
      },
      { PORTICO_WEBHOOK_ALLOW_PRIVATE: 'true', PORTICO_WEBHOOK_RETRY_SCHEDULE: '50ms,50ms' },
    );
    receiver = await startReceiver();
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    bouncer?.kill('SIGTERM');
    if (dir) await rm(dir, { recursive: true, force: true });
    await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {});
  });

  it('authorizes, calls tools, proxies, refreshes and delivers webhooks through the pooler', async () => {
    const hook = await t.api('/api/v1/webhooks', {
      method: 'POST',
      json: { url: receiver.url, events: ['*'] },
    });
    expect(hook.status).toBe(201);
    const { connection, accountId } = await sandboxAccount(t, { provider: 'notion', identifier: 'pgb-user' });
    const tool = await executeTool(t, { tool_name: 'notes_user_list', identifier: 'pgb-user' });
    expect(tool.status).toBe(200);
    const proxied = await t.api('/proxy/v1/users/me', {
      headers: { connection_name: connection, identifier: 'pgb-user' },
    });
    expect(proxied.status).toBe(200);
    // A refresh: its lease and token swap are transactions through the pooler.
    const before = await t.gateway.accountTokens.forAccount(accountId);
    await t.db.query(`UPDATE connected_accounts SET token_expires_at = now() WHERE id = $1`, [accountId]);
    await t.gateway.accountTokens.invalidate(accountId);
    const after = await t.gateway.accountTokens.forAccount(accountId);
    expect(after.accessToken).not.toBe(before.accessToken);
    const executions = await t.api('/api/v1/executions?identifier=pgb-user');
    expect(((await executions.json()) as { data: unknown[] }).data).toHaveLength(1);
    await receiver.waitFor((r) => r.length >= 1, 15_000);
    expect(receiver.received.length).toBeGreaterThanOrEqual(1);
    // The statements really went through PgBouncer, in transactions it pooled: it counts them.
    const console = new pg.Client({
      connectionString: `postgres://postgres@127.0.0.1:${new URL(pooledUrl).port}/pgbouncer`,
    });
    await console.connect();
    try {
      const rows = (await console.query('SHOW STATS')).rows as Array<{
        database: string;
        total_xact_count: string;
      }>;
      expect(Number(rows.find((r) => r.database === database)?.total_xact_count)).toBeGreaterThan(10);
    } finally {
      await console.end();
    }
  }, 60_000);

  it('keeps replicas in step over the direct listening connection', async () => {
    expect(t.db.listening()).toBe(true);
    const heard: string[] = [];
    await t.db.listen('portico_pgbouncer_test', (payload) => heard.push(payload));
    await t.db.notify('portico_pgbouncer_test', 'hello');
    const deadline = Date.now() + 5000;
    while (!heard.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(heard).toEqual(['hello']);
  });

  it('refuses a listening URL that is not PostgreSQL, and one without DATABASE_URL', () => {
    expect(() => loadConfig({ DATABASE_URL: pooledUrl, DATABASE_LISTEN_URL: 'mysql://db' })).toThrow(
      /DATABASE_LISTEN_URL is not a postgres/,
    );
    expect(() => loadConfig({ DATABASE_LISTEN_URL: directUrl })).toThrow(/without DATABASE_URL/);
  });
});
