import type { FastifyRequest } from 'fastify';
import type { CredentialSpec } from './definition.js';

// Reading an API request's credential where the definition's api.credential puts it.

export type CredentialRead =
  | { ok: true; token: string }
  /** A `{basic}` credential, base64-decoded: `user:password`, or a bare API key (the gateway encodes a key alone). */
  | { ok: true; basic: string }
  | { ok: false; reason: 'missing' | 'malformed' };

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function rawValue(spec: CredentialSpec, req: FastifyRequest): string | undefined {
  if (spec.in === 'header') return first(req.headers[spec.name]);
  const query = req.query as Record<string, string | string[] | undefined>;
  return first(query[spec.name]);
}

/** RFC 7617: user:password (the password may contain colons, the user name may not). */
export function splitBasic(decoded: string): { user: string; password: string } | undefined {
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * The credential, with the template's prefix (e.g. `Bearer `, matched case-insensitively as
 * authentication schemes are) and suffix removed.
 */
export function readCredential(spec: CredentialSpec, req: FastifyRequest): CredentialRead {
  const raw = rawValue(spec, req)?.trim();
  if (!raw) return { ok: false, reason: 'missing' };
  const prefix = spec.prefix.trimStart();
  if (raw.length < prefix.length + spec.suffix.length) return { ok: false, reason: 'malformed' };
  if (raw.slice(0, prefix.length).toLowerCase() !== prefix.toLowerCase() || !raw.endsWith(spec.suffix)) {
    return { ok: false, reason: 'malformed' };
  }
  const value = raw.slice(prefix.length, raw.length - spec.suffix.length).trim();
  if (value === '' || /\s/.test(value)) return { ok: false, reason: 'malformed' };
  if (spec.placeholder === 'token') return { ok: true, token: value };
  const basic = Buffer.from(value, 'base64').toString('utf8');
  return basic ? { ok: true, basic } : { ok: false, reason: 'malformed' };
}

/** Whether a refused request should be told the Bearer way (RFC 6750 §3). */
export function isBearer(spec: CredentialSpec): boolean {
  return spec.in === 'header' && spec.name === 'authorization' && /^bearer\s/i.test(spec.prefix);
}
