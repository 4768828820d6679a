import { randomFillSync } from 'node:crypto';

/** Prefixes say what an id names, so a misplaced id is obvious in logs and errors. */
export type IdPrefix =
  | 'env'
  | 'pts'
  | 'cli'
  | 'conn'
  | 'ca'
  | 'areq'
  | 'exec'
  | 'mcpt'
  | 'evt'
  | 'wh'
  | 'adm'
  // MCP OAuth: registered clients, authorization requests, grants.
  | 'mcpc'
  | 'mcpar'
  | 'mcpg'
  // Guardrails: policies and the approvals they hold calls for.
  | 'pol'
  | 'apr'
  // Audit log entries.
  | 'aud'
  // Trigger subscriptions.
  | 'trg'
  // Toolsets.
  | 'tls';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Random bytes drawn from the CSPRNG a page at a time and handed out in order, never twice: a
 * draw per id (randomBytes(44)) was 3 % of a tool call's CPU, most of it the call into OpenSSL.
 */
const POOL = Buffer.alloc(4096);
let poolOffset = POOL.length;

function randomByte(): number {
  if (poolOffset === POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  return POOL[poolOffset++]!;
}

/** Random base62 text; rejection sampling keeps every character equally likely. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out;
}

/** A prefixed random id with 131 bits of entropy, e.g. `conn_4fQ…`. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(22)}`;
}
