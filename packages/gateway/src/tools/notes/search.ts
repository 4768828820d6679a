import { Type } from '@sinclair/typebox';
import { defineTool } from '../types.js';
import { isVersionMismatch } from './data-sources.js';
import { plainText } from './rich-text.js';
import {
  listResult,
  PageSizeNumberSchema,
  PageSizeSchema,
  StartCursorSchema,
  stringEnum,
  wholePageSize,
} from './shared.js';

interface NotionObject {
  object?: string;
  id?: string;
  url?: string;
  parent?: unknown;
  title?: unknown;
  properties?: Record<string, { type?: string; title?: unknown }>;
  created_time?: string;
  last_edited_time?: string;
  archived?: boolean;
  icon?: unknown;
}

/** A search hit reduced to what an agent needs to pick it and act on it by id. */
function summarize(found: NotionObject): Record<string, unknown> {
  const title =
    found.object === 'database' || found.object === 'data_source'
      ? plainText(found.title)
      : plainText(Object.values(found.properties ?? {}).find((p) => p.type === 'title')?.title);
  return {
    object: found.object,
    id: found.id,
    title,
    url: found.url,
    parent: found.parent,
    icon: found.icon ?? null,
    created_time: found.created_time,
    last_edited_time: found.last_edited_time,
    archived: found.archived ?? false,
  };
}

export const notesDataFetch = defineTool({
  name: 'notes_data_fetch',
  provider: 'notion',
  description: `Search the Notion workspace for pages and databases shared with the integration, by title. Use it to find the id of a page or database by name. Without "query" it lists everything, most recently edited first. "object" limits results to pages or databases. Each result has object, id, title, url, parent and timestamps. Paginated: when has_more is true, call again with next_page merged into the input.
Example: {"query": "roadmap", "object": "page", "page_size": 10}`,
  input: Type.Object(
    {
      query: Type.Optional(
        Type.String({
          maxLength: 500,
          description: 'Text to find in titles (case-insensitive); omit to list all.',
        }),
      ),
      page_size: Type.Optional(PageSizeSchema),
      start_cursor: Type.Optional(StartCursorSchema),
      object: Type.Optional(stringEnum(['page', 'database'] as const, 'Only pages or only databases.')),
      sort_direction: Type.Optional(
        stringEnum(
          ['ascending', 'descending'] as const,
          'Order by last edit time (default descending: newest first).',
        ),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: { read_only: true, destructive: false, idempotent: true },
  async run(input, { client }) {
    const json = (value: string | undefined) => ({
      ...(input.query !== undefined ? { query: input.query } : {}),
      ...(value ? { filter: { property: 'object', value } } : {}),
      ...(input.sort_direction
        ? { sort: { timestamp: 'last_edited_time', direction: input.sort_direction } }
        : {}),
      ...(input.page_size !== undefined ? { page_size: input.page_size } : {}),
      ...(input.start_cursor !== undefined ? { start_cursor: input.start_cursor } : {}),
    });
    const search = (value: string | undefined) =>
      client.request<{ results?: NotionObject[] }>({ method: 'POST', path: '/v1/search', json: json(value) });
    let res: Awaited<ReturnType<typeof search>>;
    try {
      res = await search(input.object);
    } catch (error) {
      // From 2025-09-03 search finds data sources (a database's tables) where it found databases.
      if (input.object !== 'database' || !isVersionMismatch(error, /filter\.value/)) throw error;
      res = await search('data_source');
    }
    return listResult(res.data, (res.data.results ?? []).map(summarize));
  },
});

export const notesUserList = defineTool({
  name: 'notes_user_list',
  provider: 'notion',
  description: `List the users of the Notion workspace: people (with email when shared) and bots (integrations). Use the ids for "people" columns and mentions. "page_size" is at most 100 (a fraction is rounded down). Paginated: when has_more is true, call again with next_page merged into the input.
Example: {"page_size": 50}`,
  input: Type.Object(
    {
      page_size: Type.Optional(PageSizeNumberSchema),
      start_cursor: Type.Optional(StartCursorSchema),
    },
    { additionalProperties: false },
  ),
  annotations: { read_only: true, destructive: false, idempotent: true },
  async run(input, { client }) {
    const res = await client.request({
      method: 'GET',
      path: '/v1/users',
      query: { page_size: wholePageSize(input.page_size), start_cursor: input.start_cursor },
    });
    return listResult(res.data);
  },
});
