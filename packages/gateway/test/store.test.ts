import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bootstrapStore } from '../src/auth/bootstrap.js';
import { ProviderCatalogService } from '../src/connections/providers.js';
import { ConnectionService } from '../src/connections/service.js';
import { generateMasterKey, Keyring, SecretOpenError } from '../src/secrets/keyring.js';
import { rotateSecrets } from '../src/secrets/rotate.js';
import { type Database, openDatabase } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { MIGRATIONS } from '../src/store/migrations.js';
import { STORE_TEMPLATE } from '../src/store/template.js';
import { BACKENDS, POSTGRES_URL, uniqueSchema } from './helpers/backends.js';

const SECRET = 'plaintext-client-secret-7f3a9c';

describe.each(BACKENDS)('store on $name', (backend) => {
  const opened: Database[] = [];
  const open = async () => {
    const db = await backend.open();
    opened.push(db);
    return db;
  };
  afterAll(async () => {
    await Promise.all(opened.map((db) => db.close()));
  });

  it('applies migrations once and is idempotent', async () => {
    const db = await open();
    const first = await migrate(db);
    expect(first.applied).toEqual(MIGRATIONS.map((m) => m.version));
    const second = await migrate(db);
    expect(second.applied).toEqual([]);
    expect(second.current).toBe(MIGRATIONS.at(-1)!.version);
    const tables = await db.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1`,
    );
    expect(tables.map((t) => t.table_name)).toEqual(
      expect.arrayContaining(['environments', 'gateway_clients', 'connections', 'schema_migrations']),
    );
  });

  it('bootstraps the default environment and one client exactly once', async () => {
    const db = await open();
    await migrate(db);
    const results = await Promise.all([bootstrapStore(db), bootstrapStore(db), bootstrapStore(db)]);
    expect(results.filter((r) => r.client)).toHaveLength(1);
    expect(new Set(results.map((r) => r.environment.id)).size).toBe(1);
    expect(results[0]!.environment.id).toMatch(/^env_[0-9A-Za-z]{22}$/);
    const clients = await db.query('SELECT * FROM gateway_clients');
    expect(clients).toHaveLength(1);
  });

  it('rolls back a failed transaction', async () => {
    const db = await open();
    await migrate(db);
    await expect(
      db.transaction(async (tx) => {
        await tx.query(`INSERT INTO environments (id, name) VALUES ('env_x', 'x')`);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await db.query(`SELECT * FROM environments WHERE id = 'env_x'`)).toEqual([]);
  });

  it('stores client secrets sealed and bound to their row', async () => {
    const db = await open();
    await migrate(db);
    const { environment } = await bootstrapStore(db);
    const keyring = Keyring.fromBase64List(generateMasterKey());
    const service = new ConnectionService({
      providers: new ProviderCatalogService({ db }),
      db,
      keyring,
      publicUrl: 'http://localhost:8080',
    });
    const a = await service.create(environment.id, {
      name: 'a',
      provider: 'hubspot',
      client_id: 'id-a',
      client_secret: SECRET,
    });
    const b = await service.create(environment.id, {
      name: 'b',
      provider: 'hubspot',
      client_id: 'id-b',
      client_secret: 'other',
    });
    expect(a.id).toMatch(/^conn_/);
    expect(a.client_secret).not.toContain(SECRET);
    expect(service.clientSecret(a)).toBe(SECRET);
    // An attacker with write access copies A's sealed secret into B: it must not open as B's.
    await db.query('UPDATE connections SET client_secret = $1 WHERE id = $2', [a.client_secret, b.id]);
    const tampered = (await db.query<typeof b>('SELECT * FROM connections WHERE id = $1', [b.id]))[0]!;
    expect(() => service.clientSecret(tampered)).toThrow(SecretOpenError);
  });

  it('rotates every sealed secret to the active key without losing one', async () => {
    const db = await open();
    await migrate(db);
    const { environment } = await bootstrapStore(db);
    const oldKey = generateMasterKey();
    const oldRing = Keyring.fromBase64List(oldKey);
    const service = new ConnectionService({
      providers: new ProviderCatalogService({ db }),
      db,
      keyring: oldRing,
      publicUrl: 'http://x',
    });
    for (let i = 0; i < 5; i++) {
      await service.create(environment.id, {
        name: `c${i}`,
        provider: 'notion',
        client_id: `id${i}`,
        client_secret: `secret-${i}`,
      });
    }
    const newKey = generateMasterKey();
    const ring = Keyring.fromBase64List(`${newKey},${oldKey}`);
    expect(await rotateSecrets(db, ring)).toEqual({ resealed: 5, alreadyCurrent: 0 });
    expect(await rotateSecrets(db, ring)).toEqual({ resealed: 0, alreadyCurrent: 5 });
    // The old key can now be dropped from the ring.
    const onlyNew = new ConnectionService({
      providers: new ProviderCatalogService({ db }),
      db,
      keyring: Keyring.fromBase64List(newKey),
      publicUrl: 'http://x',
    });
    for (let i = 0; i < 5; i++) {
      expect(onlyNew.clientSecret(await onlyNew.get(environment.id, `c${i}`))).toBe(`secret-${i}`);
    }
  });
});

describe('embedded store on disk', () => {
  it('starts a new store from the build’s template: each gets its own ids and secrets, and reopens', async () => {
    // npm test builds first, and the build makes the template.
    expect(existsSync(STORE_TEMPLATE)).toBe(true);
    const made = [];
    for (const name of ['a', 'b']) {
      const dir = path.join(await mkdtemp(path.join(tmpdir(), 'portico-data-')), name);
      const db = await openDatabase({ dataDir: dir });
      // The template databases are left out of the template: they were most of its files.
      const databases = await db.query<{ datname: string }>('SELECT datname FROM pg_database');
      expect(databases.map((row) => row.datname)).toEqual(['postgres']);
      await migrate(db);
      const { environment, client } = await bootstrapStore(db);
      expect(client?.client_secret).toBeTruthy();
      await db.close();
      made.push({ dir, environment: environment.id, client: client!.client_id });
    }
    expect(made[0]!.environment).not.toBe(made[1]!.environment);
    expect(made[0]!.client).not.toBe(made[1]!.client);
    const again = await openDatabase({ dataDir: made[0]!.dir });
    const rows = await again.query<{ id: string }>('SELECT id FROM gateway_clients');
    expect(rows.map((r) => r.id)).toEqual([made[0]!.client]);
    await again.close();
  });

  it('keeps no plaintext client secret anywhere in the data directory', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'portico-data-'));
    const db = await openDatabase({ dataDir: path.join(dir, 'db') });
    await migrate(db);
    const { environment } = await bootstrapStore(db);
    const service = new ConnectionService({
      providers: new ProviderCatalogService({ db }),
      db,
      keyring: Keyring.fromBase64List(generateMasterKey()),
      publicUrl: 'http://x',
    });
    await service.create(environment.id, {
      name: 'n',
      provider: 'notion',
      client_id: 'cid',
      client_secret: SECRET,
    });
    await db.query('CHECKPOINT');
    await db.close();
    const files = await listFiles(dir);
    expect(files.length).toBeGreaterThan(10);
    let scanned = 0;
    for (const file of files) {
      const bytes = await readFile(file);
      scanned += bytes.length;
      expect(bytes.includes(Buffer.from(SECRET)), file).toBe(false);
    }
    expect(scanned).toBeGreaterThan(1_000_000);
  });
});

describe.runIf(BACKENDS.some((b) => b.name === 'postgres'))('PostgreSQL specifics', () => {
  it('keeps no plaintext client secret in a pg_dump', async () => {
    const schema = uniqueSchema();
    const db = await openDatabase({ url: POSTGRES_URL, schema });
    try {
      await migrate(db);
      const { environment } = await bootstrapStore(db);
      const keyring = Keyring.fromBase64List(generateMasterKey());
      const service = new ConnectionService({
        providers: new ProviderCatalogService({ db }),
        db,
        keyring,
        publicUrl: 'http://x',
      });
      await service.create(environment.id, {
        name: 'n',
        provider: 'notion',
        client_id: 'cid',
        client_secret: SECRET,
      });
      const dump = execFileSync('pg_dump', ['--schema', schema, '--data-only', POSTGRES_URL], {
        encoding: 'utf8',
      });
      expect(dump).toContain('cid');
      expect(dump).not.toContain(SECRET);
    } finally {
      await db.close();
    }
  });

  it('serialises concurrent migrations from two replicas', async () => {
    const schema = uniqueSchema();
    const a = await openDatabase({ url: POSTGRES_URL, schema });
    const b = await openDatabase({ url: POSTGRES_URL, schema });
    try {
      const results = await Promise.all([migrate(a), migrate(b)]);
      expect(results.flatMap((r) => r.applied).sort((x, y) => x - y)).toEqual(
        MIGRATIONS.map((m) => m.version),
      );
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir)) {
    const full = path.join(dir, entry);
    if ((await stat(full)).isDirectory()) out.push(...(await listFiles(full)));
    else out.push(full);
  }
  return out;
}
