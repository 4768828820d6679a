import { spawnSync } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generateMasterKey } from '../src/secrets/keyring.js';
import { openDatabase } from '../src/store/db.js';
import { MIGRATIONS } from '../src/store/migrations.js';
import { POSTGRES_URL, postgresAvailable, uniqueSchema } from './helpers/backends.js';
import { runCli, startCli } from './helpers/process.js';
import { gatewayToken } from './helpers/token.js';

const CREDENTIALS = /client_id:\s+(cli_\w+)\n\s+client_secret:\s+(pcs_\w+)\n\s+env_url:\s+(\S+)/;

async function dataDirEnv() {
  return { PORTICO_DATA_DIR: await mkdtemp(path.join(tmpdir(), 'portico-cli-')) };
}

describe('portico start', () => {
  it('prints the first client once, serves with it, and never prints it again', async () => {
    const env = await dataDirEnv();
    const first = await startCli(env);
    const match = CREDENTIALS.exec(first.stdout());
    expect(match, first.stdout()).not.toBeNull();
    const [, clientId, clientSecret] = match!;
    const token = await gatewayToken(first.url, clientId!, clientSecret!);
    const res = await fetch(`${first.url}/api/v1/connections`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    // The secret appears exactly once, in the credentials block, not in any log line.
    expect(first.stdout().split(clientSecret!).length - 1).toBe(1);

    const second = await startCli(env);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expect(second.stdout()).not.toMatch(CREDENTIALS);
    expect(second.stdout()).not.toContain(clientSecret);
  });

  it('finishes in-flight requests on SIGTERM, then refuses new ones and exits 0', async () => {
    const running = await startCli(await dataDirEnv());
    const [, clientId, clientSecret] = CREDENTIALS.exec(running.stdout())!;
    const body = JSON.stringify({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
    });
    const { port } = new URL(running.url);
    // A request whose body is still arriving when the signal comes.
    const inflight = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          path: '/oauth/token',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.on('data', (d) => {
            text += d;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 10));
      setTimeout(() => {
        running.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(10)), 500);
      }, 200);
    });
    const done = await inflight;
    expect(done.status).toBe(200);
    expect(JSON.parse(done.body)).toMatchObject({ token_type: 'Bearer' });
    expect(await running.exited).toBe(0);
    await expect(fetch(`${running.url}/healthz`)).rejects.toThrow();
    expect(running.stdout()).toContain('"msg":"stopped"');
  });

  it('refuses store-opening commands while a gateway holds the embedded store, and works again once it stops', async () => {
    const env = await dataDirEnv();
    const running = await startCli(env);
    try {
      const refused = runCli(['clients', 'create', '--name', 'lost-write'], env);
      expect(refused.status).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toMatch(/in use by another Portico process \(pid \d+\)/);
      expect(refused.stderr).not.toMatch(/client_secret/);
      expect(runCli(['clients', 'list'], env).status).toBe(1);
      // Admin accounts have no gateway-client route: the refusal names the dashboard's Admins page.
      const admins = runCli(['admins', 'create', '--name', 'while-running'], env);
      expect(admins.status).toBe(1);
      expect(admins.stderr).toMatch(/in use by another Portico process/);
      expect(admins.stderr).toMatch(/signed in at \/dashboard adds accounts on its Admins page/);
      expect(admins.stdout).not.toMatch(/password/);
      // A second gateway on the same directory is refused the same way.
      const second = runCli(['start'], env);
      expect(second.status).toBe(1);
      expect(second.stderr).toMatch(/in use by another Portico process/);
    } finally {
      running.child.kill('SIGTERM');
      await running.exited;
    }
    const created = runCli(['clients', 'create', '--name', 'after-stop'], env);
    expect(created.status, created.stderr).toBe(0);
    const restarted = await startCli(env);
    try {
      const [, id, secret] = CREDENTIALS.exec(created.stdout)!;
      // What the CLI reported is really there: the restarted gateway accepts it.
      expect(await gatewayToken(restarted.url, id!, secret!)).toBeTruthy();
    } finally {
      restarted.child.kill('SIGTERM');
      await restarted.exited;
    }
  }, 60_000);

  it('exits non-zero with one line naming the port when it is taken', async () => {
    const blocker = http.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const result = runCli(['start'], {
        ...(await dataDirEnv()),
        PORTICO_PORT: String(port),
        PORTICO_HOST: '127.0.0.1',
      });
      expect(result.status).toBe(1);
      expect(result.stderr.trim()).toBe(
        `Port ${port} on 127.0.0.1 is already in use; stop the process that holds it or set PORTICO_PORT to a free port.`,
      );
    } finally {
      blocker.close();
    }
  });

  it('runs as `npx portico` in the repository after npm ci', () => {
    const root = fileURLToPath(new URL('../../../', import.meta.url));
    const result = spawnSync('npx', ['--no-install', 'portico', 'keys', 'generate'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status, result.stderr).toBe(0);
    expect(Buffer.from(result.stdout.trim(), 'base64')).toHaveLength(32);
  });

  it('refuses to start on PostgreSQL without a master key, saying why', () => {
    const result = runCli(['start'], { DATABASE_URL: POSTGRES_URL });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/PORTICO_MASTER_KEY is required when DATABASE_URL is set/);
  });

  it('refuses a bad configuration with every problem listed', () => {
    const result = runCli(['start'], { PORTICO_PORT: '-1', PORTICO_LOG_LEVEL: 'chatty' });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      /Invalid configuration:\n {2}- PORTICO_PORT="-1"[^\n]*\n {2}- PORTICO_LOG_LEVEL="chatty"/,
    );
  });
});

describe('portico commands', () => {
  it('manages clients: create, list, revoke', async () => {
    const env = await dataDirEnv();
    const created = runCli(['clients', 'create', '--name', 'agent-app'], env);
    expect(created.status, created.stderr).toBe(0);
    const [, clientId] = CREDENTIALS.exec(created.stdout)!;
    const listed = JSON.parse(runCli(['clients', 'list'], env).stdout) as {
      data: { client_id: string; name: string; revoked_at: string | null }[];
    };
    expect(listed.data.map((c) => c.name).sort()).toEqual(['agent-app', 'default']);
    expect(JSON.stringify(listed)).not.toContain('pcs_');
    expect(runCli(['clients', 'revoke', clientId!], env).status).toBe(0);
    const after = JSON.parse(runCli(['clients', 'list'], env).stdout) as typeof listed;
    expect(after.data.find((c) => c.client_id === clientId)!.revoked_at).not.toBeNull();
    const again = runCli(['clients', 'revoke', clientId!], env);
    expect(again.status).toBe(2);
    expect(again.stderr).toMatch(/no active client/);
  });

  it('manages connections through a running embedded gateway, and what it reports persists', async () => {
    const env = await dataDirEnv();
    const running = await startCli(env);
    try {
      const [, clientId, clientSecret] = CREDENTIALS.exec(running.stdout())!;
      const api = {
        ...env,
        PORTICO_ENV_URL: running.url,
        PORTICO_CLIENT_ID: clientId!,
        PORTICO_CLIENT_SECRET: clientSecret!,
      };
      const created = runCli(
        [
          'connections',
          'create',
          '--name',
          'crm',
          '--provider',
          'hubspot',
          '--client-id',
          'hid',
          '--client-secret',
          'hsecret',
        ],
        api,
      );
      expect(created.status, created.stderr).toBe(0);
      expect(created.stdout).toMatch(/^name:\s+crm$/m);
      expect(created.stdout).not.toContain('hsecret');
      running.child.kill('SIGTERM');
      await running.exited;
      const restarted = await startCli(env);
      try {
        const again = runCli(['connections', 'get', 'crm', '--json'], {
          ...api,
          PORTICO_ENV_URL: restarted.url,
        });
        expect(again.status, again.stderr).toBe(0);
        expect(JSON.parse(again.stdout)).toMatchObject({
          name: 'crm',
          provider: 'hubspot',
          client_id: 'hid',
        });
      } finally {
        restarted.child.kill('SIGTERM');
        await restarted.exited;
      }
    } finally {
      running.child.kill('SIGTERM');
      await running.exited;
    }
  });

  it('rotates keys: secrets sealed under the old key open with the new key alone', async () => {
    const env = await dataDirEnv();
    const oldKey = generateMasterKey();
    const newKey = generateMasterKey();
    // A sealed secret to re-seal: a connection made through a gateway running on the old key.
    const running = await startCli({ ...env, PORTICO_MASTER_KEY: oldKey });
    const [, clientId, clientSecret] = CREDENTIALS.exec(running.stdout())!;
    const created = runCli(
      [
        'connections',
        'create',
        '--name',
        'n',
        '--provider',
        'notion',
        '--client-id',
        'i',
        '--client-secret',
        's',
      ],
      {
        PORTICO_ENV_URL: running.url,
        PORTICO_CLIENT_ID: clientId!,
        PORTICO_CLIENT_SECRET: clientSecret!,
      },
    );
    running.child.kill('SIGTERM');
    await running.exited;
    expect(created.status, created.stderr).toBe(0);
    const rotated = runCli(['keys', 'rotate'], { ...env, PORTICO_MASTER_KEY: `${newKey},${oldKey}` });
    expect(rotated.status, rotated.stderr).toBe(0);
    expect(JSON.parse(rotated.stdout)).toMatchObject({ resealed: 1, already_current: 0 });
    const withNewOnly = runCli(['keys', 'rotate'], { ...env, PORTICO_MASTER_KEY: newKey });
    expect(JSON.parse(withNewOnly.stdout)).toMatchObject({ resealed: 0, already_current: 1 });
  });

  it.runIf(postgresAvailable)('migrates a PostgreSQL database', async () => {
    const schema = uniqueSchema();
    const db = await openDatabase({ url: POSTGRES_URL, schema });
    await db.close();
    const url = `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const env = { DATABASE_URL: url, PORTICO_MASTER_KEY: generateMasterKey() };
    const first = runCli(['migrate'], env);
    expect(first.status, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ applied: MIGRATIONS.map((m) => m.version) });
    expect(JSON.parse(runCli(['migrate'], env).stdout)).toMatchObject({ applied: [] });
  });

  it('an unknown command says so in one line and where the usage is, not the whole usage', () => {
    const result = runCli(['frobnicate'], {});
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      'unknown command "frobnicate"\nRun "portico help" to see every command and option.\n',
    );
    const help = runCli(['help'], {});
    expect(help.stdout + help.stderr).toMatch(/Usage: portico/);
  });
});
