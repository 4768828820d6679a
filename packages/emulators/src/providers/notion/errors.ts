import { randomUUID } from 'node:crypto';
import type { FastifyReply } from 'fastify';

/** Notion's error codes (the `code` field of an error body). */
export type NotionErrorCode =
  | 'invalid_json'
  | 'invalid_request_url'
  | 'invalid_request'
  | 'invalid_grant'
  | 'missing_version'
  | 'validation_error'
  | 'unauthorized'
  | 'restricted_resource'
  | 'object_not_found'
  | 'conflict_error'
  | 'rate_limited'
  | 'internal_server_error'
  | 'service_unavailable';

/** Thrown by route code; the route wrapper answers it in Notion's error shape. */
export class NotionApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: NotionErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'NotionApiError';
  }
}

export function requestId(): string {
  return randomUUID();
}

export function sendNotionError(
  reply: FastifyReply,
  status: number,
  code: NotionErrorCode,
  message: string,
): FastifyReply {
  return reply.code(status).send({ object: 'error', status, code, message, request_id: requestId() });
}

export function validationError(message: string): NotionApiError {
  return new NotionApiError(400, 'validation_error', message);
}

export type NotionObjectKind =
  | 'page'
  | 'block'
  | 'database'
  | 'data_source'
  | 'user'
  | 'comment'
  | 'discussion';

export function notFound(kind: NotionObjectKind, id: string): NotionApiError {
  const sharing =
    kind === 'user' ? '' : ' Make sure the relevant pages and databases are shared with your integration.';
  return new NotionApiError(404, 'object_not_found', `Could not find ${kind} with ID: ${id}.${sharing}`);
}

/** Notion describes schema failures as `<where> failed validation: <path> should be …, instead was `…`.` */
export function shapeError(
  where: 'body' | 'path' | 'query',
  path: string,
  expectation: string,
  actual: unknown,
): NotionApiError {
  return validationError(
    `${where} failed validation: ${where}.${path} should be ${expectation}, instead was \`${JSON.stringify(actual)}\`.`,
  );
}
