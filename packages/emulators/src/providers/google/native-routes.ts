import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ProviderContext } from '../../core/types.js';
import { applyFieldMask } from './field-mask.js';
import { authorizeGoogle } from './scopes.js';
import type { DriveFile } from './shared.js';

/**
 * Route scaffolding shared by the Google APIs whose documents are native Drive files (Sheets,
 * Docs): scope checks named by RPC, lookup through Drive, and field-masked replies.
 */

/** The query string of a request. */
export function query(req: FastifyRequest): URLSearchParams {
  const q = req.url.indexOf('?');
  return new URLSearchParams(q >= 0 ? req.url.slice(q + 1) : '');
}

/** Authorizes one RPC of a service (`${rpcPrefix}.${method}`), against its read or write scopes. */
export function rpcAuthorizer(
  ctx: ProviderContext,
  scopes: { read: readonly string[]; write: readonly string[] },
  service: string,
  rpcPrefix: string,
) {
  return (req: FastifyRequest, reply: FastifyReply, write: boolean, method: string) =>
    authorizeGoogle(ctx, req, reply, {
      anyOf: write ? scopes.write : scopes.read,
      style: 'modern',
      service,
      method: `${rpcPrefix}.${method}`,
    });
}

/**
 * The user's model of a native file, provided its Drive file still exists with `mimeType` (Drive
 * owns existence and title). One created through Drive (files.create with the native mime type)
 * has no model yet and starts as `blank`.
 */
export function lookupNative<T extends { title: string }>(
  drive: Map<string, DriveFile>,
  models: Map<string, T>,
  mimeType: string,
  id: string,
  blank: (id: string, name: string) => T,
): T | null {
  const file = drive.get(id);
  if (!file || file.mimeType !== mimeType) return null;
  let model = models.get(id);
  if (!model) {
    model = blank(id, file.name);
    models.set(id, model);
  }
  model.title = file.name;
  return model;
}

/** Replies 200 with `body` cut to the request's `fields` mask, or `invalid(message)` for a bad mask. */
export function sendMasked(
  req: FastifyRequest,
  reply: FastifyReply,
  body: unknown,
  invalid: (message: string) => FastifyReply,
): FastifyReply {
  const fields = query(req).get('fields') ?? undefined;
  const shaped = applyFieldMask(body, fields);
  if (shaped === null) return invalid(`Invalid field selection ${fields}`);
  return reply.code(200).type('application/json; charset=UTF-8').send(shaped);
}
