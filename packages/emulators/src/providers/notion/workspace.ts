import type { BlockRequest } from './block-content.js';
import { NotionApiError, notFound, validationError } from './errors.js';
import { dataSourceIdFor, newId, parseId } from './ids.js';
import type { BlockRecord, DatabaseRecord, PageRecord, Parent, Workspace } from './model.js';
import { pageTitle } from './render.js';
import { type MentionResolver, plainText } from './rich-text.js';

type Record_ = BlockRecord | PageRecord | DatabaseRecord;

export function findPage(ws: Workspace, id: string): PageRecord {
  const page = ws.pages.get(id);
  if (!page) throw notFound('page', id);
  return page;
}

export function findDatabase(ws: Workspace, id: string): DatabaseRecord {
  const db = ws.databases.get(id);
  if (!db) throw notFound('database', id);
  return db;
}

/** The database whose (single) data source has this id; its schema and rows are the data source's. */
export function findDataSourceDatabase(ws: Workspace, dataSourceId: string): DatabaseRecord | undefined {
  for (const db of ws.databases.values()) if (dataSourceIdFor(db.id) === dataSourceId) return db;
  return undefined;
}

export function findDataSource(ws: Workspace, id: string): DatabaseRecord {
  const db = findDataSourceDatabase(ws, id);
  if (!db) throw notFound('data_source', id);
  return db;
}

/** Blocks, pages and databases share one id space under `/v1/blocks`. */
export function findBlockLike(ws: Workspace, id: string): Record_ {
  const found = ws.blocks.get(id) ?? ws.pages.get(id) ?? ws.databases.get(id);
  if (!found) throw notFound('block', id);
  return found;
}

/** The ordered children of a page or block; databases hold rows, not blocks. */
export function childIdsOf(ws: Workspace, id: string): string[] {
  const container = ws.blocks.get(id) ?? ws.pages.get(id);
  if (container) return container.childIds;
  if (ws.databases.has(id))
    throw validationError(`Block ${id} is a database; databases have rows, not children.`);
  throw notFound('block', id);
}

export function liveChildren(ws: Workspace, id: string): string[] {
  return childIdsOf(ws, id).filter((childId) => {
    const child = ws.blocks.get(childId) ?? ws.pages.get(childId) ?? ws.databases.get(childId);
    return child !== undefined && !child.inTrash;
  });
}

export function touch(record: Record_, actor: string, now: number): void {
  record.lastEditedTime = now;
  record.lastEditedBy = actor;
}

export function assertEditable(record: Record_, kind: 'block' | 'page' | 'database'): void {
  if (record.inTrash) {
    throw validationError(
      `Can't edit ${kind} that is archived. You must unarchive the ${kind} before editing.`,
    );
  }
}

function descendants(ws: Workspace, id: string): Record_[] {
  const out: Record_[] = [];
  const walk = (parentId: string) => {
    const container = ws.blocks.get(parentId) ?? ws.pages.get(parentId);
    for (const childId of container?.childIds ?? []) {
      const child = ws.blocks.get(childId) ?? ws.pages.get(childId) ?? ws.databases.get(childId);
      if (!child) continue;
      out.push(child);
      walk(childId);
    }
  };
  walk(id);
  return out;
}

/**
 * Moves an object and everything under it to or from the trash. Restoring brings back only what
 * went to the trash with it, not what had been deleted on its own before.
 */
export function setTrashed(
  ws: Workspace,
  record: Record_,
  inTrash: boolean,
  actor: string,
  now: number,
): void {
  if (record.inTrash === inTrash) return;
  record.inTrash = inTrash;
  record.trashedWith = undefined;
  touch(record, actor, now);
  for (const child of descendants(ws, record.id)) {
    if (inTrash && !child.inTrash) {
      child.inTrash = true;
      child.trashedWith = record.id;
    } else if (!inTrash && child.trashedWith === record.id) {
      child.inTrash = false;
      child.trashedWith = undefined;
    }
  }
}

/** Creates blocks (and their nested children) under a page or block, at `index` in its children. */
export function insertBlocks(
  ws: Workspace,
  parentId: string,
  requests: BlockRequest[],
  index: number,
  actor: string,
  now: number,
): BlockRecord[] {
  const siblings = childIdsOf(ws, parentId);
  const parent: Parent = ws.pages.has(parentId)
    ? { type: 'page_id', page_id: parentId }
    : { type: 'block_id', block_id: parentId };
  const created = requests.map((request) => {
    const block: BlockRecord = {
      id: newId(),
      parent,
      type: request.type,
      content: request.content,
      childIds: [],
      createdTime: now,
      lastEditedTime: now,
      createdBy: actor,
      lastEditedBy: actor,
      inTrash: false,
    };
    ws.blocks.set(block.id, block);
    if (request.children.length > 0) insertBlocks(ws, block.id, request.children, 0, actor, now);
    return block;
  });
  siblings.splice(index, 0, ...created.map((b) => b.id));
  return created;
}

/** Names mentions the way Notion renders them in `plain_text`. */
export function mentionResolver(ws: Workspace): MentionResolver {
  return (mention) => {
    const type = mention.type;
    const target = mention[String(type)] as Record<string, unknown> | undefined;
    const id = parseId(target?.id);
    if (type === 'user') {
      const member = ws.identity.members.find((m) => m.id === id);
      return member ? `@${member.name}` : '@Anonymous';
    }
    if (type === 'page' && id) {
      const page = ws.pages.get(id);
      return page ? plainText(pageTitle(ws, page)) || 'Untitled' : 'Untitled';
    }
    if (type === 'database' && id) {
      const db = ws.databases.get(id);
      return db ? plainText(db.title) || 'Untitled' : 'Untitled';
    }
    if (type === 'date' && typeof target?.start === 'string') return target.start;
    return 'Untitled';
  };
}

/** Parses an id from a path parameter, answering a malformed one as Notion does. */
export function pathId(raw: unknown, name: string): string {
  const id = parseId(raw);
  if (!id) {
    throw new NotionApiError(
      400,
      'validation_error',
      `path failed validation: path.${name} should be a valid uuid, instead was \`${JSON.stringify(raw)}\`.`,
    );
  }
  return id;
}
