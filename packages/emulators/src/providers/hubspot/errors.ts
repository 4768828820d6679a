import { randomUUID } from 'node:crypto';
import type { FastifyReply } from 'fastify';

/** HubSpot's API error body: every field but status/message/correlationId/category is optional. */
export interface HubSpotErrorBody {
  status: 'error';
  message: string;
  correlationId: string;
  category: string;
  subCategory?: string;
  context?: Record<string, string[]>;
  errors?: Array<{ message: string; code?: string; in?: string; context?: Record<string, string[]> }>;
  links?: Record<string, string>;
}

export function correlationId(): string {
  return randomUUID();
}

export function sendHubSpotError(
  reply: FastifyReply,
  httpStatus: number,
  category: string,
  message: string,
  extra: Partial<Omit<HubSpotErrorBody, 'status' | 'message' | 'category' | 'correlationId'>> = {},
): FastifyReply {
  const body: HubSpotErrorBody = {
    status: 'error',
    message,
    correlationId: correlationId(),
    ...extra,
    category,
  };
  return reply.code(httpStatus).header('content-type', 'application/json;charset=utf-8').send(body);
}

export const AUTH_NOT_FOUND_MESSAGE =
  'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview';

/** HubSpot words the age of an expired token in the largest whole unit. */
export function expiredAgo(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds} second(s)`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} minute(s)`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} hour(s)`;
  return `${Math.floor(hours / 24)} day(s)`;
}

export function sendObjectNotFound(reply: FastifyReply, id: string): FastifyReply {
  return sendHubSpotError(
    reply,
    404,
    'OBJECT_NOT_FOUND',
    'Object not found.  objectId are usually numeric.',
    {
      context: { id: [id] },
    },
  );
}

export function sendValidationError(
  reply: FastifyReply,
  message: string,
  extra: Partial<Omit<HubSpotErrorBody, 'status' | 'message' | 'category' | 'correlationId'>> = {},
): FastifyReply {
  return sendHubSpotError(reply, 400, 'VALIDATION_ERROR', message, extra);
}
