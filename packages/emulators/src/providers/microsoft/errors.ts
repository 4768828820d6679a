import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthFailure } from '../../core/types.js';

/** Graph's JSON content type, as graph.microsoft.com sends it. */
export const GRAPH_JSON =
  'application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=false;charset=utf-8';

function firstHeader(req: FastifyRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Graph answers every request with a `request-id` and echoes the caller's `client-request-id`
 * (or makes one up); errors repeat both in `innerError`, which support asks for.
 */
export function requestIds(req: FastifyRequest): { requestId: string; clientRequestId: string } {
  const ids = req as FastifyRequest & { graphIds?: { requestId: string; clientRequestId: string } };
  if (!ids.graphIds) {
    ids.graphIds = {
      requestId: randomUUID(),
      clientRequestId: firstHeader(req, 'client-request-id') ?? randomUUID(),
    };
  }
  return ids.graphIds;
}

export function stampGraphHeaders(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { requestId, clientRequestId } = requestIds(req);
  return reply
    .header('request-id', requestId)
    .header('client-request-id', clientRequestId)
    .header(
      'x-ms-ags-diagnostic',
      JSON.stringify({
        ServerInfo: { DataCenter: 'Emulator', Slice: 'E', Ring: '0', ScaleUnit: '000', RoleInstance: 'EMU' },
      }),
    );
}

/** `{error:{code,message,innerError:{date,request-id,client-request-id}}}` — Graph's error body. */
export function graphErrorBody(
  req: FastifyRequest,
  code: string,
  message: string,
): { error: Record<string, unknown> } {
  const { requestId, clientRequestId } = requestIds(req);
  return {
    error: {
      code,
      message,
      innerError: {
        date: new Date().toISOString().slice(0, 19),
        'request-id': requestId,
        'client-request-id': clientRequestId,
      },
    },
  };
}

export function sendGraphError(
  req: FastifyRequest,
  reply: FastifyReply,
  status: number,
  code: string,
  message: string,
): FastifyReply {
  return stampGraphHeaders(req, reply)
    .code(status)
    .type(GRAPH_JSON)
    .send(graphErrorBody(req, code, message));
}

export const itemNotFound = (
  req: FastifyRequest,
  reply: FastifyReply,
  message = 'The resource could not be found.',
) => sendGraphError(req, reply, 404, 'itemNotFound', message);

export const invalidRequest = (req: FastifyRequest, reply: FastifyReply, message: string) =>
  sendGraphError(req, reply, 400, 'invalidRequest', message);

/** Graph's OData router refuses a path segment it does not know with 400, not 404. */
export const unknownSegment = (req: FastifyRequest, reply: FastifyReply, segment: string) =>
  sendGraphError(req, reply, 400, 'BadRequest', `Resource not found for the segment '${segment}'.`);

export const methodNotAllowed = (req: FastifyRequest, reply: FastifyReply) =>
  sendGraphError(
    req,
    reply,
    405,
    'Request_BadRequest',
    'Specified HTTP method is not allowed for the request target.',
  );

const IDX14100 =
  "IDX14100: JWT is not well formed, there are no dots (.).\nThe token needs to be in JWS or JWE Compact Serialization Format. (JWS): 'EncodedHeader.EndcodedPayload.EncodedSignature'. (JWE): 'EncodedProtectedHeader.EncodedEncryptedKey.EncodedInitializationVector.EncodedCiphertext.EncodedAuthenticationTag'.";

function authMessage(req: FastifyRequest, reason: AuthFailure): string {
  switch (reason) {
    case 'missing':
      return 'Access token is empty.';
    case 'expired':
      return 'Access token has expired or is not yet valid.';
    case 'revoked':
      // What Graph says to a token issued before revokeSignInSessions (continuous access evaluation).
      return 'Continuous access evaluation resulted in challenge with result: InteractionRequired and code: TokenIssuedBeforeRevocationTimestamp';
    default: {
      const header = firstHeader(req, 'authorization') ?? '';
      const token = header.replace(/^\S+\s*/, '');
      return token.includes('.') ? 'Access token validation failure.' : IDX14100;
    }
  }
}

/** 401 InvalidAuthenticationToken with the `WWW-Authenticate` challenge Graph sends. */
export function sendGraphAuthError(reply: FastifyReply, reason: AuthFailure): FastifyReply {
  const req = reply.request;
  return sendGraphError(
    req,
    reply.header('www-authenticate', graphChallenge(reason)),
    401,
    'InvalidAuthenticationToken',
    authMessage(req, reason),
  );
}

function graphChallenge(reason: AuthFailure): string {
  const base =
    'Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize", client_id="00000003-0000-0000-c000-000000000000"';
  return reason === 'revoked' ? `${base}, error="insufficient_claims"` : base;
}
