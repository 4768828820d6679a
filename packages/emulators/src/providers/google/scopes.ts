import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccessTokenRecord, EmulatedUser, ProviderContext } from '../../core/types.js';
import { sendGoogleAuthError } from './oauth.js';

const S = 'https://www.googleapis.com/auth/';

/** Scopes that let a token call each Google API, read-only and read-write. */
export const GOOGLE_API_SCOPES = {
  calendar: {
    read: [`${S}calendar`, `${S}calendar.readonly`, `${S}calendar.events`, `${S}calendar.events.readonly`],
    write: [`${S}calendar`, `${S}calendar.events`],
  },
  calendarList: {
    read: [`${S}calendar`, `${S}calendar.readonly`],
    write: [`${S}calendar`],
  },
  drive: {
    read: [
      `${S}drive`,
      `${S}drive.readonly`,
      `${S}drive.file`,
      `${S}drive.metadata`,
      `${S}drive.metadata.readonly`,
    ],
    /** Reading file bytes needs more than the metadata scopes. */
    content: [`${S}drive`, `${S}drive.readonly`, `${S}drive.file`],
    write: [`${S}drive`, `${S}drive.file`],
  },
  sheets: {
    read: [
      `${S}spreadsheets`,
      `${S}spreadsheets.readonly`,
      `${S}drive`,
      `${S}drive.readonly`,
      `${S}drive.file`,
    ],
    write: [`${S}spreadsheets`, `${S}drive`, `${S}drive.file`],
  },
  docs: {
    read: [`${S}documents`, `${S}documents.readonly`, `${S}drive`, `${S}drive.readonly`, `${S}drive.file`],
    write: [`${S}documents`, `${S}drive`, `${S}drive.file`],
  },
} as const;

export interface GoogleScopeCheck {
  /** Any one of these scopes suffices. */
  anyOf: readonly string[];
  /** 'legacy' (Calendar, Drive: `errors[]` with a reason) or 'modern' (Sheets, Docs: `status` and `details`). */
  style?: 'legacy' | 'modern';
  /** For the ErrorInfo detail, e.g. 'calendar-json.googleapis.com' and 'calendar.v3.Events.List'. */
  service?: string;
  method?: string;
}

/** The 403 Google answers when the token is valid but was not granted the API's scope. */
export function sendInsufficientScope(reply: FastifyReply, check: GoogleScopeCheck): FastifyReply {
  const message = 'Request had insufficient authentication scopes.';
  const error: Record<string, unknown> = { code: 403, message };
  if ((check.style ?? 'legacy') === 'legacy') {
    error.errors = [
      { message: 'Insufficient Permission', domain: 'global', reason: 'insufficientPermissions' },
    ];
  }
  error.status = 'PERMISSION_DENIED';
  error.details = [
    {
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT',
      domain: 'googleapis.com',
      metadata: { service: check.service ?? 'googleapis.com', method: check.method ?? '' },
    },
  ];
  return reply
    .code(403)
    .header(
      'www-authenticate',
      `Bearer realm="https://accounts.google.com/", error="insufficient_scope", scope="${check.anyOf.join(' ')}"`,
    )
    .type('application/json; charset=UTF-8')
    .send({ error });
}

/**
 * Authenticates a Google API request and checks its scope. On failure it has already answered
 * (401 or 403 in Google's shape) and returns null; the route just returns the reply.
 */
export function authorizeGoogle(
  ctx: ProviderContext,
  req: FastifyRequest,
  reply: FastifyReply,
  check: GoogleScopeCheck,
): { user: EmulatedUser; token: AccessTokenRecord } | null {
  const auth = ctx.authenticate(req);
  if (!auth.ok) {
    sendGoogleAuthError(reply, auth.reason);
    return null;
  }
  if (!auth.token.scopes.some((s) => check.anyOf.includes(s))) {
    sendInsufficientScope(reply, check);
    return null;
  }
  return { user: auth.user, token: auth.token };
}
