import type { FastifyInstance } from 'fastify';
import type { ProviderContext } from '../../../core/types.js';
import { type NotionCall, notionRoute } from '../api.js';
import { notFound, shapeError, validationError } from '../errors.js';
import { newId, parseId } from '../ids.js';
import type { CommentRecord, NotionState } from '../model.js';
import { listBody, paginate, parsePageSize } from '../pagination.js';
import { renderComment } from '../render.js';
import { isRecord, parseRichText } from '../rich-text.js';
import { BOT_NAME } from '../users.js';
import { findBlockLike, mentionResolver, pathId } from '../workspace.js';

function createComment(call: NotionCall): Record<string, unknown> {
  const { ws, body, botId, now } = call;
  const hasParent = body.parent !== undefined;
  const hasDiscussion = body.discussion_id !== undefined;
  if (hasParent === hasDiscussion) {
    throw validationError(
      'body failed validation. Fix one:\nbody.parent should be defined, instead was `undefined`.\nbody.discussion_id should be defined, instead was `undefined`.',
    );
  }
  if (body.rich_text === undefined) throw shapeError('body', 'rich_text', 'defined', undefined);
  const richText = parseRichText(body.rich_text, 'rich_text', mentionResolver(ws));
  let parent: CommentRecord['parent'];
  let discussionId: string;
  if (hasDiscussion) {
    const id = parseId(body.discussion_id);
    if (!id) throw shapeError('body', 'discussion_id', 'a valid uuid', body.discussion_id);
    const thread = ws.comments.find((c) => c.discussionId === id);
    if (!thread) throw notFound('discussion', id);
    parent = thread.parent;
    discussionId = id;
  } else {
    if (!isRecord(body.parent)) throw shapeError('body', 'parent', 'an object', body.parent);
    const pageId = body.parent.page_id !== undefined ? parseId(body.parent.page_id) : null;
    const blockId = body.parent.block_id !== undefined ? parseId(body.parent.block_id) : null;
    if (pageId) {
      if (!ws.pages.has(pageId)) throw notFound('page', pageId);
      parent = { type: 'page_id', page_id: pageId };
    } else if (blockId) {
      findBlockLike(ws, blockId);
      parent = { type: 'block_id', block_id: blockId };
    } else {
      throw shapeError('body', 'parent.page_id', 'a valid uuid', body.parent.page_id);
    }
    discussionId = newId();
  }
  const comment: CommentRecord = {
    id: newId(),
    parent,
    discussionId,
    createdTime: now,
    lastEditedTime: now,
    createdBy: botId,
    richText,
    displayName: { type: 'integration', resolved_name: BOT_NAME },
  };
  ws.comments.push(comment);
  return renderComment(comment);
}

function listComments(call: NotionCall): Record<string, unknown> {
  const { ws, query } = call;
  if (query.block_id === undefined) throw shapeError('query', 'block_id', 'defined', undefined);
  const id = parseId(query.block_id);
  if (!id) throw shapeError('query', 'block_id', 'a valid uuid', query.block_id);
  findBlockLike(ws, id);
  const pageSize = parsePageSize(query.page_size, 'query');
  const onTarget = ws.comments.filter(
    (c) => (c.parent.type === 'page_id' ? c.parent.page_id : c.parent.block_id) === id,
  );
  const page = paginate(onTarget, (c) => c.id, query.start_cursor, pageSize);
  return listBody({ items: page.items.map(renderComment), nextCursor: page.nextCursor }, 'comment');
}

/** `GET /v1/comments/{comment_id}`: one comment by its id alone, whatever page or block it is on. */
function retrieveComment(call: NotionCall): Record<string, unknown> {
  const id = pathId(call.params.comment_id, 'comment_id');
  const comment = call.ws.comments.find((c) => c.id === id);
  if (!comment) throw notFound('comment', id);
  return renderComment(comment);
}

export function registerCommentRoutes(
  app: FastifyInstance,
  ctx: ProviderContext,
  getState: () => NotionState,
): void {
  app.post('/v1/comments', notionRoute(ctx, getState, createComment));
  app.get('/v1/comments', notionRoute(ctx, getState, listComments));
  app.get('/v1/comments/:comment_id', notionRoute(ctx, getState, retrieveComment));
}
