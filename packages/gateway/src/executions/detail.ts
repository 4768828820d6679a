/**
 * What an execution record keeps of a call's input and output: enough to debug it, never a secret
 * nor the data a provider returned.
 */

/** The input is kept up to about this many bytes of JSON; beyond, the rest is cut with a marker. */
export const INPUT_CAP_BYTES = 8 * 1024;
export const TRUNCATED = '…truncated';
export const MASKED = '[masked]';

/**
 * Key names that hold secrets, compared with separators and case removed ("API-Key", "api_key",
 * "apiKey" are one name). Prefix matches catch client_secret_value, access_token_v2 and the like.
 */
const SECRET_KEYS = [
  'password',
  'passwd',
  'passphrase',
  'secret',
  'token',
  'apikey',
  'authorization',
  'auth',
  'credential',
  'credentials',
  'privatekey',
  'cookie',
  'sessionid',
  'session',
  'signature',
  'pwd',
  'pass',
  'otp',
  'jwt',
  'key',
  'pin',
  'cvv',
  'cvc',
  'ssn',
];
const SECRET_PARTS = [
  'password',
  'secret',
  'token',
  'apikey',
  'credential',
  'privatekey',
  'clientkey',
  'signingkey',
  'accesskey',
  'sessionkey',
];

export function isSecretKey(key: string): boolean {
  const name = key.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (SECRET_KEYS.includes(name)) return true;
  // page_token / cursor-like keys are not secrets: a pagination token is the caller's own handle.
  if (name.endsWith('pagetoken') || name === 'nexttoken' || name === 'continuationtoken') return false;
  return SECRET_PARTS.some((part) => name.includes(part));
}

/** Values that are secrets whatever their key: bearer/basic credentials, JWTs, well-known key shapes. */
const SECRET_VALUE = [
  /^\s*(bearer|basic|token)\s+\S{6,}/i,
  /^eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*$/,
  /^(sk|pk|rk)_(live|test)_[A-Za-z0-9]{8,}/,
  /^(ghp|gho|ghu|ghs|ghr|github_pat|xox[abpors])[-_][A-Za-z0-9_-]{8,}/,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
];

export function isSecretValue(value: string): boolean {
  return SECRET_VALUE.some((pattern) => pattern.test(value));
}

/**
 * Secrets inside text (a message that quotes a header, a URL with a password), replaced where
 * they stand. Each pattern is linear: no nested quantifiers.
 */
const SECRETS_IN_TEXT: Array<[RegExp, string]> = [
  [/\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}/gi, `$1 ${MASKED}`],
  [/\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, MASKED],
  [/\b(sk|pk|rk)_(live|test)_[A-Za-z0-9]{8,}/g, MASKED],
  [/\bsk-[A-Za-z0-9_-]{16,}/g, MASKED],
  [/\b(AKIA|ASIA)[0-9A-Z]{16}\b/g, MASKED],
  [/\bAIza[0-9A-Za-z_-]{30,}/g, MASKED],
  [/\bglpat-[0-9A-Za-z_-]{16,}/g, MASKED],
  [/\bnpm_[0-9A-Za-z]{30,}/g, MASKED],
  [/\b(ghp|gho|ghu|ghs|ghr|github_pat|xox[abpors])[-_][A-Za-z0-9_-]{8,}/g, MASKED],
  // scheme://user:password@host: the password goes, the rest stays readable.
  [/([a-z][a-z0-9+.-]*:\/\/[^\s:@/]*:)[^\s@/]+@/gi, `$1${MASKED}@`],
];

export function maskSecretsIn(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRETS_IN_TEXT) out = out.replace(pattern, replacement);
  return out;
}

/**
 * The input as a record keeps it: secrets masked (by key name or by the look of the value), NUL
 * characters dropped (jsonb refuses them), and cut near INPUT_CAP_BYTES: strings longer than the
 * remaining room are shortened and, once the room is spent, further members and items are replaced
 * by one TRUNCATED marker. Walks the input once; never throws on odd values.
 */
export function recordedInput(input: unknown): unknown {
  const budget = { left: INPUT_CAP_BYTES };
  return copy(input, budget, 0);
}

function copy(value: unknown, budget: { left: number }, depth: number): unknown {
  if (value === null || typeof value === 'boolean') {
    budget.left -= 5;
    return value;
  }
  if (typeof value === 'number') {
    budget.left -= 8;
    return Number.isFinite(value) ? value : null;
  }
  if (typeof value === 'string') {
    if (isSecretValue(value)) {
      budget.left -= MASKED.length + 2;
      return MASKED;
    }
    const clean = maskSecretsIn(value.includes('\u0000') ? value.replaceAll('\u0000', '') : value);
    const room = Math.max(0, budget.left - 2);
    if (clean.length > room) {
      budget.left = 0;
      return `${clean.slice(0, room)}${TRUNCATED}`;
    }
    budget.left -= clean.length + 2;
    return clean;
  }
  if (depth > 32) return TRUNCATED;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    budget.left -= 2;
    for (const item of value) {
      if (budget.left <= 0) {
        out.push(TRUNCATED);
        break;
      }
      out.push(copy(item, budget, depth + 1));
      budget.left -= 1;
    }
    return out;
  }
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    budget.left -= 2;
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      const name = key.replaceAll('\u0000', '');
      if (budget.left <= 0) {
        out[TRUNCATED] = true;
        break;
      }
      budget.left -= name.length + 4;
      if (isSecretKey(name) && item !== null && item !== undefined && item !== '') {
        budget.left -= MASKED.length + 2;
        out[name] = MASKED;
      } else {
        out[name] = copy(item, budget, depth + 1);
      }
    }
    return out;
  }
  // undefined, functions, bigints: nothing JSON would keep.
  return null;
}

/** Keys that name the next page in the answers our tools return. */
const CURSOR_KEYS = ['next_cursor', 'next_page_token', 'nextPageToken', 'next_page', 'cursor', 'after'];

export interface OutputSummary {
  type: string;
  bytes: number;
  keys?: string[];
  /** The number of items of each top-level array ("" for an answer that is an array). */
  item_counts?: Record<string, number>;
  /** Whether the answer names a next page (a cursor, or has_more). */
  has_next_page?: boolean;
}

/**
 * What a record keeps of the tool's answer: its shape, never its content (a provider's data is the
 * end user's, and may be large). The byte size is that of its JSON: given by the engine, which
 * serializes the answer once for the reply (tools/engine.ts resultJson), or computed here.
 */
export function summarizeOutput(data: unknown, knownBytes?: number): OutputSummary {
  let bytes = knownBytes ?? 0;
  if (knownBytes === undefined) {
    try {
      bytes = Buffer.byteLength(JSON.stringify(data) ?? '');
    } catch {
      // A cycle or a BigInt: the reply would fail too, and say so.
    }
  }
  if (data === null || typeof data !== 'object') return { type: data === null ? 'null' : typeof data, bytes };
  if (Array.isArray(data)) return { type: 'array', bytes, item_counts: { '': data.length } };
  const record = data as Record<string, unknown>;
  const keys = Object.keys(record);
  const counts: Record<string, number> = {};
  for (const key of keys) {
    const value = record[key];
    if (Array.isArray(value)) counts[key] = value.length;
  }
  const summary: OutputSummary = { type: 'object', bytes, keys: keys.slice(0, 50) };
  if (Object.keys(counts).length) summary.item_counts = counts;
  const cursor = CURSOR_KEYS.find((key) => key in record);
  const more = record.has_more;
  summary.has_next_page =
    typeof more === 'boolean'
      ? more
      : cursor !== undefined && record[cursor] !== null && record[cursor] !== '';
  return summary;
}
