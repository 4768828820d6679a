import { createHash } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import type { ProviderClient } from '../../accounts/provider-client.js';
import type { Observation, TriggerType } from '../definition.js';
import { changesParam, epochOf } from './shared.js';

/** A Notion id, hyphenated or not. */
const notionId = (what: string) =>
  Type.String({
    pattern: '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$',
    description: what,
  });

interface NotionPage {
  id: string;
  created_time?: string;
  last_edited_time?: string;
  properties?: Record<string, unknown>;
  archived?: boolean;
  in_trash?: boolean;
  [field: string]: unknown;
}

interface NotionList<T> {
  results?: T[];
  has_more?: boolean;
  next_cursor?: string | null;
}

/**
 * Notion rounds last_edited_time down to the minute: each poll asks again from a minute before the
 * newest edit it saw, and a page's version is its time and its properties, so two edits within one
 * minute are two versions and a page listed again unchanged is nothing new.
 */
const MINUTE = 60_000;
const MAX_PAGES = 20;

/** When Notion says a page was created, at the end of its minute (an earlier one might be too early). */
function createdAtOf(time: unknown): number | undefined {
  const ms = epochOf(time);
  return ms === undefined ? undefined : ms + MINUTE - 1;
}

function pageVersion(page: NotionPage): string {
  return `${page.last_edited_time ?? ''} ${createHash('sha256')
    .update(JSON.stringify([page.properties ?? {}, page.archived ?? false, page.in_trash ?? false]))
    .digest('base64url')}`;
}

function observePage(page: NotionPage): Observation {
  const createdAt = createdAtOf(page.created_time);
  return {
    id: page.id,
    version: pageVersion(page),
    ...(createdAt === undefined ? {} : { createdAt }),
    item: page,
  };
}

const RowsConfig = Type.Object(
  {
    database_id: notionId('The database whose rows (pages) to watch.'),
    changes: changesParam(['created', 'updated']),
  },
  { additionalProperties: false },
);

/** Rows of a database created or changed, read with a query on last_edited_time. */
export const notesDatabaseRows: TriggerType<Static<typeof RowsConfig>> = {
  name: 'notes_database_rows',
  provider: 'notion',
  description:
    'A row (page) of a database was created or changed (properties, content, archived). The event carries the page.',
  config: RowsConfig,
  changes: ['created', 'updated'],
  mechanism: 'Database query filtered and sorted on last_edited_time (POST /v1/databases/{id}/query)',
  // page.created, page.properties_updated, …, of a page whose parent is the database.
  webhook: {
    route: 'notion',
    concerns: (config, event) =>
      eventType(event).startsWith('page.') && sameId(dataOf(event).parent?.id, config.database_id),
  },
  async baseline({ client, config }) {
    // Reading the database checks it is there and shared with the integration.
    await client.request({ method: 'GET', path: `/v1/databases/${encodeURIComponent(config.database_id)}` });
    return { cursor: { edited_after: Date.now() }, observations: [] };
  },
  async poll({ client, config }, cursor) {
    const after = typeof cursor.edited_after === 'number' ? cursor.edited_after : Date.now();
    const rows = await queryEditedSince(client, config.database_id, after - MINUTE);
    let newest = after;
    for (const row of rows) newest = Math.max(newest, epochOf(row.last_edited_time) ?? after);
    return { cursor: { edited_after: newest }, observations: rows.map(observePage) };
  },
};

async function queryEditedSince(
  client: ProviderClient,
  databaseId: string,
  since: number,
): Promise<NotionPage[]> {
  const rows: NotionPage[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const res = await client.request<NotionList<NotionPage>>({
      method: 'POST',
      path: `/v1/databases/${encodeURIComponent(databaseId)}/query`,
      json: {
        filter: {
          timestamp: 'last_edited_time',
          last_edited_time: { on_or_after: new Date(since).toISOString() },
        },
        sorts: [{ timestamp: 'last_edited_time', direction: 'ascending' }],
        page_size: 100,
        ...(cursor ? { start_cursor: cursor } : {}),
      },
    });
    rows.push(...(res.data.results ?? []));
    if (!res.data.has_more || !res.data.next_cursor) break;
    cursor = res.data.next_cursor;
  }
  return rows;
}

const PageConfig = Type.Object(
  {
    page_id: notionId('The page to watch.'),
    changes: changesParam(['updated']),
  },
  { additionalProperties: false },
);

/** One page changed: its properties, its content (Notion moves last_edited_time), archived. */
export const notesPage: TriggerType<Static<typeof PageConfig>> = {
  name: 'notes_page',
  provider: 'notion',
  description: 'A page was changed (properties, content, archived or restored). The event carries the page.',
  config: PageConfig,
  changes: ['updated'],
  mechanism: 'The page’s last_edited_time and properties (GET /v1/pages/{id})',
  webhook: {
    route: 'notion',
    concerns: (config, event) =>
      eventType(event).startsWith('page.') && sameId(entityOf(event).id, config.page_id),
  },
  async baseline({ client, config }) {
    const seen = observePage(await getPage(client, config.page_id));
    return { cursor: { version: seen.version }, observations: [seen] };
  },
  async poll({ client, config }, cursor) {
    const seen = observePage(await getPage(client, config.page_id));
    // Unchanged since the last poll: nothing to compare (the cheap, common case).
    if (seen.version === cursor.version) return { cursor, observations: [] };
    return { cursor: { version: seen.version }, observations: [seen] };
  },
};

async function getPage(client: ProviderClient, id: string): Promise<NotionPage> {
  return (await client.request<NotionPage>({ method: 'GET', path: `/v1/pages/${encodeURIComponent(id)}` }))
    .data;
}

const CommentsConfig = Type.Object(
  {
    page_id: notionId('The page (or block) whose comments to watch.'),
    changes: changesParam(['created']),
  },
  { additionalProperties: false },
);

interface NotionComment {
  id: string;
  created_time?: string;
  [field: string]: unknown;
}

/** Comments added to a page or block: its comment list compared with the one seen before. */
export const notesComments: TriggerType<Static<typeof CommentsConfig>> = {
  name: 'notes_comments',
  provider: 'notion',
  description:
    'A comment was added to a page or block (a new discussion or a reply). The event carries the comment.',
  config: CommentsConfig,
  changes: ['created'],
  mechanism: 'The block’s comments (GET /v1/comments?block_id=…) compared with those seen',
  // comment.created names the page in data.page_id (its parent block in data.parent).
  webhook: {
    route: 'notion',
    concerns: (config, event) =>
      eventType(event).startsWith('comment.') &&
      (sameId(dataOf(event).page_id, config.page_id) || sameId(dataOf(event).parent?.id, config.page_id)),
  },
  async baseline({ client, config }) {
    const comments = await listComments(client, config.page_id);
    return { cursor: { ids: idsDigest(comments) }, observations: comments.map(observeComment) };
  },
  async poll({ client, config }, cursor) {
    const comments = await listComments(client, config.page_id);
    const ids = idsDigest(comments);
    if (ids === cursor.ids) return { cursor, observations: [] };
    return { cursor: { ids }, observations: comments.map(observeComment) };
  },
};

/** The comments listed, in one short value: the same list twice is nothing new. */
function idsDigest(comments: NotionComment[]): string {
  return createHash('sha256')
    .update(comments.map((c) => c.id).join(','))
    .digest('base64url');
}

function observeComment(comment: NotionComment): Observation {
  // A comment is not edited through the API: seen once, it is known.
  return { id: comment.id, version: '1', item: comment };
}

async function listComments(client: ProviderClient, blockId: string): Promise<NotionComment[]> {
  const comments: NotionComment[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const res = await client.request<NotionList<NotionComment>>({
      method: 'GET',
      path: '/v1/comments',
      query: { block_id: blockId, page_size: 100, start_cursor: cursor },
    });
    comments.push(...(res.data.results ?? []));
    if (!res.data.has_more || !res.data.next_cursor) break;
    cursor = res.data.next_cursor;
  }
  return comments;
}

/** A webhook event's parts (Notion's shape: type, entity, data). */
const eventType = (event: Record<string, unknown>) => (typeof event.type === 'string' ? event.type : '');
const entityOf = (event: Record<string, unknown>) => (event.entity ?? {}) as { id?: unknown };
const dataOf = (event: Record<string, unknown>) =>
  (event.data ?? {}) as { parent?: { id?: unknown }; page_id?: unknown };

/** Notion ids with and without their dashes are the same id. */
function sameId(a: unknown, b: string): boolean {
  if (typeof a !== 'string') return false;
  return a.replaceAll('-', '').toLowerCase() === b.replaceAll('-', '').toLowerCase();
}
