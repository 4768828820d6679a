import type { FastifyInstance } from 'fastify';
import type { ProviderContext } from '../../../core/types.js';
import { type NotionCall, notionRoute } from '../api.js';
import { blockTypeKeys, parseBlockContent, parseBlockRequests } from '../block-content.js';
import { notFound, shapeError, validationError } from '../errors.js';
import { claimUploads } from '../files.js';
import { parseId } from '../ids.js';
import type { NotionState, Workspace } from '../model.js';
import { listBody, paginate, parsePageSize } from '../pagination.js';
import { renderBlockLike } from '../render.js';
import { isRecord, text } from '../rich-text.js';
import {
  assertEditable,
  childIdsOf,
  findBlockLike,
  insertBlocks,
  liveChildren,
  mentionResolver,
  pathId,
  setTrashed,
  touch,
} from '../workspace.js';

/** Block types that cannot hold children, so appending under them fails as in Notion. */
const LEAF_TYPES = new Set([
  'code',
  'divider',
  'bookmark',
  'embed',
  'equation',
  'image',
  'video',
  'file',
  'pdf',
  'audio',
  'breadcrumb',
  'table_of_contents',
]);

/** Reads `archived` / `in_trash` (synonyms under 2022-06-28); undefined when neither is given. */
export function trashFlag(body: Record<string, unknown>): boolean | undefined {
  const { archived, in_trash: inTrash } = body;
  if (archived !== undefined && typeof archived !== 'boolean')
    throw shapeError('body', 'archived', 'a boolean', archived);
  if (inTrash !== undefined && typeof inTrash !== 'boolean')
    throw shapeError('body', 'in_trash', 'a boolean', inTrash);
  if (archived !== undefined && inTrash !== undefined && archived !== inTrash) {
    throw validationError(
      'body failed validation: body.archived and body.in_trash must agree when both are given.',
    );
  }
  return (archived ?? inTrash) as boolean | undefined;
}

function render(ws: Workspace, id: string): Record<string, unknown> {
  const block = renderBlockLike(ws, id);
  if (!block) throw notFound('block', id);
  return block;
}

/**
 * Updates a block's content or trash state. The type keys in the body must name the block's own
 * type: Notion never changes a block's type in place.
 */
function updateBlock({ ws, params, body, botId, now }: NotionCall): Record<string, unknown> {
  const id = pathId(params.block_id, 'block_id');
  const record = findBlockLike(ws, id);
  const block = ws.blocks.get(id);
  const page = ws.pages.get(id);
  const actualType = block?.type ?? (page ? 'child_page' : 'child_database');
  const trash = trashFlag(body);
  const typeKeys = blockTypeKeys(body);
  if (typeof body.type === 'string' && body.type !== actualType) typeKeys.push(body.type);
  const mismatch = typeKeys.find((key) => key !== actualType);
  if (mismatch) {
    throw validationError(
      `Block type mismatch: block ${id} is a ${actualType} block, but the request updates it as ${mismatch}. A block's type cannot be changed; delete it and append a new one.`,
    );
  }
  if (record.inTrash && trash !== false) {
    throw validationError("Can't edit block that is archived. You must unarchive the block before editing.");
  }
  if (trash !== undefined) setTrashed(ws, record, trash, botId, now);
  const payload = body[actualType];
  if (payload !== undefined) {
    if (!isRecord(payload)) throw shapeError('body', actualType, 'an object', payload);
    if (payload.children !== undefined)
      throw shapeError('body', `${actualType}.children`, 'not present', payload.children);
    if (block) {
      const content = parseBlockContent(actualType, payload, actualType, mentionResolver(ws), block.content);
      claimUploads(ws, content, now);
      block.content = content;
    } else if (page && payload.title !== undefined) {
      if (typeof payload.title !== 'string')
        throw shapeError('body', 'child_page.title', 'a string', payload.title);
      page.values.set('title', [text(payload.title)]);
    }
    touch(record, botId, now);
  }
  return render(ws, id);
}

/** Appends children at the end, or just after the child `after` names. */
function appendChildren({ ws, params, body, botId, now }: NotionCall): Record<string, unknown> {
  const id = pathId(params.block_id, 'block_id');
  const parent = findBlockLike(ws, id);
  assertEditable(parent, 'block');
  const block = ws.blocks.get(id);
  if (block && LEAF_TYPES.has(block.type)) {
    throw validationError(`Block ${id} is a ${block.type} block, which cannot have children.`);
  }
  if (body.children === undefined) throw shapeError('body', 'children', 'defined', undefined);
  const requests = parseBlockRequests(body.children, 'children', mentionResolver(ws));
  claimUploads(ws, requests, now);
  const siblings = childIdsOf(ws, id);
  let index = siblings.length;
  if (body.after !== undefined) {
    const after = parseId(body.after);
    if (!after) throw shapeError('body', 'after', 'a valid uuid', body.after);
    const position = siblings.indexOf(after);
    if (position < 0)
      throw validationError(
        `Block ${after} is not a child of ${id}; \`after\` must name a child of the parent.`,
      );
    index = position + 1;
  }
  const created = insertBlocks(ws, id, requests, index, botId, now);
  touch(parent, botId, now);
  return listBody({ items: created.map((b) => render(ws, b.id)), nextCursor: null }, 'block');
}

export function registerBlockRoutes(
  app: FastifyInstance,
  ctx: ProviderContext,
  getState: () => NotionState,
): void {
  app.get(
    '/v1/blocks/:block_id',
    notionRoute(ctx, getState, ({ ws, params }) => render(ws, pathId(params.block_id, 'block_id'))),
  );

  app.patch('/v1/blocks/:block_id', notionRoute(ctx, getState, updateBlock));

  app.delete(
    '/v1/blocks/:block_id',
    notionRoute(ctx, getState, ({ ws, params, botId, now }) => {
      const id = pathId(params.block_id, 'block_id');
      const record = findBlockLike(ws, id);
      assertEditable(record, 'block');
      setTrashed(ws, record, true, botId, now);
      return render(ws, id);
    }),
  );

  app.get(
    '/v1/blocks/:block_id/children',
    notionRoute(ctx, getState, ({ ws, params, query }) => {
      const id = pathId(params.block_id, 'block_id');
      const pageSize = parsePageSize(query.page_size, 'query');
      findBlockLike(ws, id);
      const page = paginate(liveChildren(ws, id), (childId) => childId, query.start_cursor, pageSize);
      return listBody(
        { items: page.items.map((childId) => render(ws, childId)), nextCursor: page.nextCursor },
        'block',
      );
    }),
  );

  app.patch('/v1/blocks/:block_id/children', notionRoute(ctx, getState, appendChildren));
}
