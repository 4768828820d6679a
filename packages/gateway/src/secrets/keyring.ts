import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * AES-256-GCM sealing of stored secrets. A sealed value is
 * `v1.<key id>.<nonce>.<ciphertext>.<tag>` (base64url parts). The associated data binds the value
 * to its table, column and row, so a value copied into another row or column does not open.
 */
const VERSION = 'v1';
const NONCE_BYTES = 12;

export interface SealedLocation {
  table: string;
  column: string;
  rowId: string;
}

export class SecretOpenError extends Error {
  constructor(reason: string) {
    super(`sealed secret cannot be opened: ${reason}`);
    this.name = 'SecretOpenError';
  }
}

export class Keyring {
  readonly activeKeyId: string;
  private readonly keys: Map<string, Buffer>;

  /** `keys[0]` seals; every key opens. */
  constructor(keys: Buffer[]) {
    if (!keys.length) throw new Error('a keyring needs at least one key');
    this.keys = new Map();
    for (const key of keys) {
      if (key.length !== 32) throw new Error('master keys are 32 bytes');
      this.keys.set(keyId(key), key);
    }
    this.activeKeyId = keyId(keys[0]!);
  }

  static fromBase64List(list: string): Keyring {
    return new Keyring(list.split(',').map((k) => Buffer.from(k.trim(), 'base64')));
  }

  get keyIds(): string[] {
    return [...this.keys.keys()];
  }

  /** The raw key for a key id (for deriving other keys, e.g. the token signing key). */
  key(id: string = this.activeKeyId): Buffer | undefined {
    return this.keys.get(id);
  }

  seal(plaintext: string, at: SealedLocation): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.activeKeyId)!, nonce);
    cipher.setAAD(associatedData(at));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, this.activeKeyId, nonce, ciphertext, cipher.getAuthTag()]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  open(sealed: string, at: SealedLocation): string {
    const parts = sealed.split('.');
    if (parts.length !== 5 || parts[0] !== VERSION) throw new SecretOpenError('not a sealed value');
    const [, kid, nonce, ciphertext, tag] = parts as [string, string, string, string, string];
    const key = this.keys.get(kid);
    if (!key) throw new SecretOpenError(`key ${kid} is not in PORTICO_MASTER_KEY`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
      decipher.setAAD(associatedData(at));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([
        decipher.update(Buffer.from(ciphertext, 'base64url')),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new SecretOpenError('authentication failed (wrong key, or the value belongs to another row)');
    }
  }

  /** True when the value was sealed with a key other than the active one. */
  isStale(sealed: string): boolean {
    return sealed.split('.')[1] !== this.activeKeyId;
  }
}

function associatedData(at: SealedLocation): Buffer {
  return Buffer.from(`portico:${at.table}.${at.column}:${at.rowId}`, 'utf8');
}

export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('base64url').slice(0, 8);
}

export function generateMasterKey(): string {
  return randomBytes(32).toString('base64');
}

export const GENERATED_KEY_FILE = 'master.key';

export type KeyringSource = 'environment' | 'generated' | 'data_dir';

/**
 * The key ring from PORTICO_MASTER_KEY; for the embedded store without one, a key kept in the data
 * directory (created with mode 0600). PostgreSQL without a key is refused: replicas must share it.
 */
export async function loadKeyring(opts: {
  masterKeys: string | undefined;
  usesPostgres: boolean;
  dataDir: string;
}): Promise<{ keyring: Keyring; source: KeyringSource }> {
  if (opts.masterKeys) return { keyring: Keyring.fromBase64List(opts.masterKeys), source: 'environment' };
  if (opts.usesPostgres) {
    throw new MissingMasterKeyError(
      'PORTICO_MASTER_KEY is required when DATABASE_URL is set: every replica must share the key that seals stored secrets. Generate one with `openssl rand -base64 32` and set it on all replicas.',
    );
  }
  const file = path.join(opts.dataDir, GENERATED_KEY_FILE);
  try {
    const existing = (await readFile(file, 'utf8')).trim();
    return { keyring: Keyring.fromBase64List(existing), source: 'data_dir' };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(opts.dataDir, { recursive: true, mode: 0o700 });
  const key = generateMasterKey();
  await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  await chmod(file, 0o600);
  return { keyring: Keyring.fromBase64List(key), source: 'generated' };
}

export class MissingMasterKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MissingMasterKeyError';
  }
}
