import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccessTokenRecord, AuthFailure, ProviderContext } from '../../core/types.js';
import { AUTH_NOT_FOUND_MESSAGE, expiredAgo, sendHubSpotError } from './errors.js';
import { withinRateLimit } from './rate-limit.js';
import type { HubSpotState, Portal } from './store.js';

export type GetState = () => HubSpotState;

export interface Caller {
  portal: Portal;
  token: AccessTokenRecord;
}

export function sendHubSpotAuthError(
  reply: FastifyReply,
  reason: AuthFailure,
  expiredAt?: number,
  now = Date.now(),
): FastifyReply {
  if (reason === 'expired') {
    const ago = expiredAt === undefined ? '' : ` ${expiredAgo(now - expiredAt)} ago`;
    return sendHubSpotError(
      reply,
      401,
      'EXPIRED_AUTHENTICATION',
      `The OAuth token used to make this call expired${ago}.`,
      expiredAt === undefined ? {} : { context: { 'expire time': [new Date(expiredAt).toISOString()] } },
    );
  }
  return sendHubSpotError(reply, 401, 'INVALID_AUTHENTICATION', AUTH_NOT_FOUND_MESSAGE);
}

/**
 * Authenticates a CRM request and resolves the caller's portal; answers the failure itself
 * (returning undefined) in HubSpot's words.
 */
export function authenticateCaller(
  req: FastifyRequest,
  reply: FastifyReply,
  ctx: ProviderContext,
  getState: GetState,
): Caller | undefined {
  const result = ctx.authenticate(req);
  if (!result.ok) {
    sendHubSpotAuthError(reply, result.reason, result.expiredAt, ctx.clock());
    return undefined;
  }
  const portal = getState().portals.get(result.user.id);
  if (!portal) {
    sendHubSpotAuthError(reply, 'unknown');
    return undefined;
  }
  if (!withinRateLimit(portal, reply, ctx.clock())) return undefined;
  return { portal, token: result.token };
}

/**
 * Refuses a call whose token lacks every one of the accepted scopes. Tokens that carry no CRM scope
 * at all (minted by tests without scopes) are treated as unrestricted, so scope checks only bite
 * when a client really asked for a narrower set.
 */
export function requireScopes(reply: FastifyReply, caller: Caller, accepted: string[]): boolean {
  const scopes = caller.token.scopes;
  if (!scopes.some((s) => s.startsWith('crm.'))) return true;
  if (accepted.some((s) => scopes.includes(s))) return true;
  sendHubSpotError(
    reply,
    403,
    'MISSING_SCOPES',
    "This app hasn't been granted all required scopes to make this call. Read more about required scopes here: https://developers.hubspot.com/scopes.",
    {
      errors: [
        {
          message: 'One or more of the following scopes are required.',
          context: { requiredGranularScopes: accepted },
        },
      ],
      links: { scopes: 'https://developers.hubspot.com/scopes' },
    },
  );
  return false;
}

/** Query values may repeat (`properties=a&properties=b`) or be comma-separated (`properties=a,b`). */
export function listParam(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  const parts = (Array.isArray(value) ? value : [value])
    .filter((v): v is string => typeof v === 'string')
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v.length > 0);
  return parts;
}

export function singleParam(value: unknown): string | undefined {
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : undefined;
  return typeof value === 'string' ? value : undefined;
}

export function booleanParam(value: unknown): boolean {
  return singleParam(value)?.toLowerCase() === 'true';
}

export type Query = Record<string, unknown>;
