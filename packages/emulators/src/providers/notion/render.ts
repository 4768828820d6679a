import { renderMediaContent } from './files.js';
import { compactId, dataSourceIdFor } from './ids.js';
import type { BlockRecord, CommentRecord, DatabaseRecord, PageRecord, Parent, Workspace } from './model.js';
import { renderPropertyEntry, renderSchemaProperty } from './properties.js';
import { plainText, type RichText } from './rich-text.js';
import { notionTime } from './time.js';
import { usesDataSources } from './versions.js';

export function partialUser(id: string): { object: 'user'; id: string } {
  return { object: 'user', id };
}

export function pageTitle(ws: Workspace, page: PageRecord): RichText[] {
  const titleId = page.parent.type === 'database_id' ? titlePropertyId(ws, page.parent.database_id) : 'title';
  const value = page.values.get(titleId);
  return Array.isArray(value) ? (value as RichText[]) : [];
}

function titlePropertyId(ws: Workspace, databaseId: string): string {
  return ws.databases.get(databaseId)?.schema.find((p) => p.type === 'title')?.id ?? 'title';
}

export function notionUrl(title: string, id: string): string {
  const slug = title
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return `https://www.notion.so/${slug ? `${slug}-` : ''}${compactId(id)}`;
}

function tracked(record: BlockRecord | PageRecord | DatabaseRecord) {
  return {
    id: record.id,
    created_time: notionTime(record.createdTime),
    last_edited_time: notionTime(record.lastEditedTime),
    created_by: partialUser(record.createdBy),
    last_edited_by: partialUser(record.lastEditedBy),
  };
}

/**
 * The `filter_properties` query parameter (given once or repeated) as the property ids it names. An
 * id is matched as sent and percent-decoded once more, as Notion returns some ids URL-encoded
 * (`%3AUPp`) and clients send them either way; a malformed escape is kept as sent.
 */
export function filterPropertyIds(raw: string | string[] | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  return (Array.isArray(raw) ? raw : [raw]).flatMap((id) => {
    try {
      const decoded = decodeURIComponent(id);
      return decoded === id ? [id] : [id, decoded];
    } catch {
      return [id];
    }
  });
}

/** A parent as the caller's API version names it: database rows live in a data source from 2025-09-03. */
export function renderParent(parent: Parent, version?: string): Record<string, unknown> {
  if (parent.type !== 'database_id' || !usesDataSources(version)) return parent;
  return {
    type: 'data_source_id',
    data_source_id: dataSourceIdFor(parent.database_id),
    database_id: parent.database_id,
  };
}

/**
 * `filterIds` limits the returned properties (the `filter_properties` query parameter); `version`
 * is the caller's Notion-Version, which decides how a database parent reads.
 */
export function renderPage(
  ws: Workspace,
  page: PageRecord,
  filterIds?: string[],
  version?: string,
): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  if (page.parent.type === 'database_id') {
    const db = ws.databases.get(page.parent.database_id);
    for (const schema of db?.schema ?? []) {
      if (filterIds && !filterIds.includes(schema.id)) continue;
      properties[schema.name] = renderPropertyEntry(ws, page, schema);
    }
  } else if (!filterIds || filterIds.includes('title')) {
    properties.title = { id: 'title', type: 'title', title: page.values.get('title') ?? [] };
  }
  const { id, created_time, last_edited_time, created_by, last_edited_by } = tracked(page);
  return {
    object: 'page',
    id,
    created_time,
    last_edited_time,
    created_by,
    last_edited_by,
    cover: page.cover,
    icon: page.icon,
    parent: renderParent(page.parent, version),
    archived: page.inTrash,
    in_trash: page.inTrash,
    properties,
    url: notionUrl(plainText(pageTitle(ws, page)), page.id),
    public_url: null,
  };
}

/** From 2025-09-03 a database is a container: its schema and rows belong to its data source. */
export function renderDatabase(db: DatabaseRecord, version?: string): Record<string, unknown> {
  if (usesDataSources(version)) return renderDatabaseContainer(db);
  const properties: Record<string, unknown> = {};
  for (const schema of db.schema) properties[schema.name] = renderSchemaProperty(schema);
  return {
    object: 'database',
    ...tracked(db),
    title: db.title,
    description: db.description,
    icon: db.icon,
    cover: db.cover,
    properties,
    parent: db.parent,
    url: notionUrl('', db.id),
    public_url: null,
    archived: db.inTrash,
    in_trash: db.inTrash,
    is_inline: db.isInline,
  };
}

function renderDatabaseContainer(db: DatabaseRecord): Record<string, unknown> {
  return {
    object: 'database',
    ...tracked(db),
    title: db.title,
    description: db.description,
    icon: db.icon,
    cover: db.cover,
    parent: db.parent,
    is_inline: db.isInline,
    is_locked: false,
    in_trash: db.inTrash,
    archived: db.inTrash,
    data_sources: [{ id: dataSourceIdFor(db.id), name: plainText(db.title) }],
    url: notionUrl('', db.id),
    public_url: null,
  };
}

/** The single data source of a database (2025-09-03): the schema, parented by its database. */
export function renderDataSource(db: DatabaseRecord): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const schema of db.schema) properties[schema.name] = renderSchemaProperty(schema, true);
  return {
    object: 'data_source',
    ...tracked(db),
    id: dataSourceIdFor(db.id),
    title: db.title,
    description: db.description,
    icon: db.icon,
    cover: db.cover,
    properties,
    parent: { type: 'database_id', database_id: db.id },
    database_parent: db.parent,
    is_inline: db.isInline,
    archived: db.inTrash,
    in_trash: db.inTrash,
    url: notionUrl('', db.id),
    public_url: null,
  };
}

function hasLiveChildren(ws: Workspace, childIds: string[]): boolean {
  return childIds.some((id) => {
    const child = ws.blocks.get(id) ?? ws.pages.get(id) ?? ws.databases.get(id);
    return child !== undefined && !child.inTrash;
  });
}

/**
 * Any id under `/v1/blocks` may name a block, a page (a `child_page` block) or a database (a
 * `child_database` block), as in Notion where pages and databases are blocks too.
 */
export function renderBlockLike(ws: Workspace, id: string): Record<string, unknown> | null {
  const block = ws.blocks.get(id);
  if (block) return renderBlock(ws, block);
  const page = ws.pages.get(id);
  if (page) {
    return blockEnvelope(ws, page, 'child_page', { title: plainText(pageTitle(ws, page)) }, page.childIds);
  }
  const db = ws.databases.get(id);
  if (db) return blockEnvelope(ws, db, 'child_database', { title: plainText(db.title) }, []);
  return null;
}

export function renderBlock(ws: Workspace, block: BlockRecord): Record<string, unknown> {
  return blockEnvelope(ws, block, block.type, block.content, block.childIds);
}

function blockEnvelope(
  ws: Workspace,
  record: BlockRecord | PageRecord | DatabaseRecord,
  type: string,
  content: Record<string, unknown>,
  childIds: string[],
): Record<string, unknown> {
  return {
    object: 'block',
    ...tracked(record),
    parent: record.parent,
    has_children: hasLiveChildren(ws, childIds),
    archived: record.inTrash,
    in_trash: record.inTrash,
    type,
    [type]: renderMediaContent(ws, content),
  };
}

export function renderComment(comment: CommentRecord): Record<string, unknown> {
  return {
    object: 'comment',
    id: comment.id,
    parent: comment.parent,
    discussion_id: comment.discussionId,
    created_time: notionTime(comment.createdTime),
    last_edited_time: notionTime(comment.lastEditedTime),
    created_by: partialUser(comment.createdBy),
    rich_text: comment.richText,
    display_name: comment.displayName,
  };
}
