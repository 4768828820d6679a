import type { FastifyReply } from 'fastify';
import { type GraphCall, metadata, sendJson } from './call.js';

/** The signed-in user as `GET /v1.0/me` returns it (default property set). */
export function sendMe(call: GraphCall): FastifyReply {
  const user = call.tenant.user;
  return sendJson(call, 200, {
    '@odata.context': metadata(call, 'users/$entity'),
    businessPhones: [],
    displayName: user.name,
    givenName: user.givenName,
    jobTitle: user.jobTitle,
    mail: user.email,
    mobilePhone: null,
    officeLocation: user.officeLocation,
    preferredLanguage: 'en-US',
    surname: user.surname,
    userPrincipalName: user.email,
    id: user.id,
  });
}

/**
 * `POST /v1.0/me/revokeSignInSessions`: invalidates every refresh token the user has been issued, for
 * every application (not only the caller's), so each next refresh fails with invalid_grant
 * (AADSTS50173) and the user must sign in again. The emulator also refuses the access tokens at once.
 */
export function revokeSignInSessions(call: GraphCall): FastifyReply {
  call.ctx.revokeGrants({ userId: call.token.userId });
  return sendJson(call, 200, { '@odata.context': metadata(call, 'Edm.Boolean'), value: true });
}
