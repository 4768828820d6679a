import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { EmulatedUser, ProviderContext } from '../../core/types.js';
import { NotionApiError, requestId, sendNotionError } from './errors.js';
import type { NotionState, Workspace } from './model.js';
import { isRecord } from './rich-text.js';
import { botIdFor } from './users.js';
import { KNOWN_VERSIONS } from './versions.js';

/** What a Notion API handler works with: the caller's workspace and bot identity. */
export interface NotionCall {
  req: FastifyRequest;
  ws: Workspace;
  owner: EmulatedUser;
  /** The integration's bot user in this workspace: the actor of every change made through the API. */
  botId: string;
  now: number;
  version: string;
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

export type NotionHandler = (call: NotionCall) => Record<string, unknown> | Promise<Record<string, unknown>>;

export function sendUnauthorized(reply: FastifyReply): FastifyReply {
  return sendNotionError(reply, 401, 'unauthorized', 'API token is invalid.');
}

/**
 * Wraps an API handler with what every Notion call goes through: bearer auth, the required
 * `Notion-Version` header, Notion's error shape, and a `request_id` on every answer.
 */
export function notionRoute(
  ctx: ProviderContext,
  getState: () => NotionState,
  handler: NotionHandler,
): RouteHandlerMethod {
  return async (req, reply) => {
    const auth = ctx.authenticate(req);
    if (!auth.ok) return sendUnauthorized(reply);
    const version = req.headers['notion-version'];
    if (typeof version !== 'string' || version === '') {
      return sendNotionError(
        reply,
        400,
        'missing_version',
        'Notion-Version header failed validation: Notion-Version header should be defined, instead was `undefined`.',
      );
    }
    if (!KNOWN_VERSIONS.has(version)) {
      return sendNotionError(
        reply,
        400,
        'validation_error',
        `Notion-Version header failed validation: Notion-Version header should be a valid version like \`"2022-06-28"\`, instead was \`${JSON.stringify(version)}\`.`,
      );
    }
    const ws = getState().workspaces.get(auth.user.id);
    if (!ws) return sendUnauthorized(reply);
    const botId = botIdFor(auth.user.id, auth.token.clientId);
    ws.bots.add(botId);
    if (req.body !== undefined && req.body !== null && !isRecord(req.body)) {
      return sendNotionError(reply, 400, 'invalid_json', 'Error parsing JSON body.');
    }
    try {
      const result = await handler({
        req,
        ws,
        owner: auth.user,
        botId,
        now: ctx.clock(),
        version,
        params: (req.params ?? {}) as Record<string, string>,
        query: (req.query ?? {}) as Record<string, string | string[] | undefined>,
        body: (req.body ?? {}) as Record<string, unknown>,
      });
      return reply.code(200).send({ ...result, request_id: requestId() });
    } catch (error) {
      if (error instanceof NotionApiError)
        return sendNotionError(reply, error.status, error.code, error.message);
      throw error;
    }
  };
}
