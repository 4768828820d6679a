import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  generateMasterKey,
  Keyring,
  loadKeyring,
  MissingMasterKeyError,
  SecretOpenError,
} from '../src/secrets/keyring.js';

const at = { table: 'connections', column: 'client_secret', rowId: 'conn_a' };

describe('sealing', () => {
  it('round-trips and never contains the plaintext', () => {
    const ring = Keyring.fromBase64List(generateMasterKey());
    const sealed = ring.seal('s3cret-value', at);
    expect(sealed).not.toContain('s3cret');
    expect(sealed.startsWith(`v1.${ring.activeKeyId}.`)).toBe(true);
    expect(ring.open(sealed, at)).toBe('s3cret-value');
  });

  it('uses a fresh nonce per value', () => {
    const ring = Keyring.fromBase64List(generateMasterKey());
    expect(ring.seal('same', at)).not.toBe(ring.seal('same', at));
  });

  it('refuses a value moved to another row or column', () => {
    const ring = Keyring.fromBase64List(generateMasterKey());
    const sealed = ring.seal('value', at);
    expect(() => ring.open(sealed, { ...at, rowId: 'conn_b' })).toThrow(SecretOpenError);
    expect(() => ring.open(sealed, { ...at, column: 'client_id' })).toThrow(SecretOpenError);
  });

  it('refuses a tampered value and an unknown key', () => {
    const ring = Keyring.fromBase64List(generateMasterKey());
    const sealed = ring.seal('value', at);
    const parts = sealed.split('.');
    parts[3] = Buffer.from('x').toString('base64url');
    expect(() => ring.open(parts.join('.'), at)).toThrow(/authentication failed/);
    const other = Keyring.fromBase64List(generateMasterKey());
    expect(() => other.open(sealed, at)).toThrow(/is not in PORTICO_MASTER_KEY/);
  });

  it('opens with any key of the ring and seals with the first', () => {
    const oldKey = generateMasterKey();
    const newKey = generateMasterKey();
    const sealedOld = Keyring.fromBase64List(oldKey).seal('v', at);
    const ring = Keyring.fromBase64List(`${newKey},${oldKey}`);
    expect(ring.open(sealedOld, at)).toBe('v');
    expect(ring.isStale(sealedOld)).toBe(true);
    expect(ring.isStale(ring.seal('v', at))).toBe(false);
  });
});

describe('key ring loading', () => {
  it('generates a key file with mode 0600 for the embedded store, then reuses it', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'portico-keys-'));
    const first = await loadKeyring({ masterKeys: undefined, usesPostgres: false, dataDir: dir });
    expect(first.source).toBe('generated');
    const file = path.join(dir, 'master.key');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(Buffer.from((await readFile(file, 'utf8')).trim(), 'base64')).toHaveLength(32);
    const second = await loadKeyring({ masterKeys: undefined, usesPostgres: false, dataDir: dir });
    expect(second.source).toBe('data_dir');
    expect(second.keyring.activeKeyId).toBe(first.keyring.activeKeyId);
  });

  it('refuses PostgreSQL without a master key, saying how to make one', async () => {
    await expect(loadKeyring({ masterKeys: undefined, usesPostgres: true, dataDir: '/tmp' })).rejects.toThrow(
      MissingMasterKeyError,
    );
    await expect(loadKeyring({ masterKeys: undefined, usesPostgres: true, dataDir: '/tmp' })).rejects.toThrow(
      /PORTICO_MASTER_KEY is required when DATABASE_URL is set.*openssl rand -base64 32/,
    );
  });
});
