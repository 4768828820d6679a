import type { FastifyRequest } from 'fastify';
import type { OAuthErrorCause } from './types.js';

// Reading OAuth requests: their parameters, PKCE values and client credentials.

/** RFC 7636 §4.1: 43–128 characters of the unreserved set. */
export const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

/** Flattens a query or form body to single string values (first value wins, as providers do). */
export function stringParams(source: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!source || typeof source !== 'object') return out;
  for (const [name, value] of Object.entries(source as Record<string, unknown>)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === 'string') out[name] = first;
    else if (typeof first === 'number' || typeof first === 'boolean') out[name] = String(first);
  }
  return out;
}

/**
 * Parses HTTP Basic client credentials (RFC 6749 §2.3.1: form-urlencoded before base64). Undefined
 * when the header is not Basic or carries no colon.
 */
export function parseBasicCredentials(
  header: string | undefined,
): { clientId: string; clientSecret: string } | undefined {
  if (!header || !/^Basic\s/i.test(header)) return undefined;
  const decoded = Buffer.from(header.replace(/^Basic\s+/i, ''), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    return {
      clientId: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
      clientSecret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
    };
  } catch {
    return { clientId: decoded.slice(0, colon), clientSecret: decoded.slice(colon + 1) };
  }
}

interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

/** Client authentication per RFC 6749 §2.3.1: Basic credentials are form-urlencoded before base64. */
export function readClientCredentials(
  req: FastifyRequest,
  body: Record<string, string>,
  allowed: Array<'client_secret_basic' | 'client_secret_post'>,
  publicClients = false,
): ClientCredentials | { error: string; cause: OAuthErrorCause } {
  const header = req.headers.authorization;
  if (header && /^Basic\s/i.test(header)) {
    if (!allowed.includes('client_secret_basic'))
      return { error: 'HTTP Basic client authentication is not supported', cause: 'client_auth_method' };
    return (
      parseBasicCredentials(header) ?? {
        error: 'Malformed HTTP Basic credentials',
        cause: 'client_auth_method',
      }
    );
  }
  if (body.client_secret !== undefined) {
    if (!allowed.includes('client_secret_post')) {
      return {
        error: 'Client credentials in the request body are not supported',
        cause: 'client_auth_method',
      };
    }
    if (!body.client_id) return { error: 'Missing required parameter: client_id', cause: 'unknown_client' };
    return { clientId: body.client_id, clientSecret: body.client_secret };
  }
  // A public client names itself only; it is known only if it was registered without a secret.
  if (publicClients && body.client_id) return { clientId: body.client_id, clientSecret: '' };
  return { error: 'Client authentication is required', cause: 'client_auth_missing' };
}

export function bodyFormat(req: FastifyRequest): 'form' | 'json' | undefined {
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  if (type.startsWith('application/x-www-form-urlencoded')) return 'form';
  if (type.startsWith('application/json')) return 'json';
  return undefined;
}
