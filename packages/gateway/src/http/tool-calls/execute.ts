import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { preParsingHookHandler } from 'fastify';
import { type Grant, newAccountRefusal } from '../../auth/access.js';
import type { Caller } from '../../tools/engine.js';

/** POST /api/v1/tools/execute: the route (../routes/tools.ts) and its fast path (./fast-path.ts). */
export const EXECUTE_PATH = '/api/v1/tools/execute';

export const ExecuteBody = Type.Object(
  {
    tool_name: Type.String({ minLength: 1, maxLength: 100 }),
    identifier: Type.String({ minLength: 1, maxLength: 256 }),
    connection_name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    tool_input: Type.Optional(Type.Object({}, { additionalProperties: true })),
    schema_version: Type.Optional(Type.String({ maxLength: 20 })),
    tool_version: Type.Optional(Type.String({ maxLength: 20 })),
    upstream_version: Type.Optional(Type.String({ maxLength: 40 })),
    approval_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'Runs a call a policy held, once approved: the approved input, once.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** Who calls, as the engine records it and limits it. */
export function callerOf(principal: { clientId: string; admin?: boolean }, grant: Grant): Caller {
  return {
    id: principal.admin ? `admin:${principal.clientId}` : `client:${principal.clientId}`,
    connectionNames: grant.connectionNames,
    refuseNewAccount: newAccountRefusal(grant),
  };
}

/**
 * Bodies the fast path read but leaves to the route (one it would answer with an error): the route
 * parses them from here, so Fastify validates and words the error exactly as for any request.
 */
const held = new WeakMap<IncomingMessage, Buffer>();

export function holdBody(req: IncomingMessage, body: Buffer): void {
  held.set(req, body);
}

/** The route's preParsing hook: a held body stands in for the request stream already read. */
export const heldBodyFirst: preParsingHookHandler = (req, _reply, payload, done) => {
  const body = held.get(req.raw);
  if (body === undefined) {
    done(null, payload);
    return;
  }
  held.delete(req.raw);
  done(null, Readable.from([body], { objectMode: false }));
};
