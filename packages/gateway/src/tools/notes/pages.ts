import { Type } from '@sinclair/typebox';
import type { FieldError } from '../../errors/problem.js';
import { defineTool } from '../types.js';
import { blockList, checkBlocks } from './block-content.js';
import { databaseSchema, rowParent } from './data-sources.js';
import { idSegment, normalizeId, notionId } from './ids.js';
import {
  allNotionForm,
  CHILD_PAGE_COLUMNS,
  columnsOf,
  type PropertyValues,
  PropertyValuesSchema,
  toNotionProperties,
} from './properties.js';
import { richText } from './rich-text.js';
import {
  CoverSchema,
  createPage,
  exactlyOne,
  IconSchema,
  NullableCoverSchema,
  NullableIconSchema,
  toCover,
  toIcon,
  withoutRequestId,
} from './shared.js';

/** Rule 4 of the specification (invalid conditions 1 and 2), quoted in refusals. */
const ONE_PARENT_RULE = 'notes_page_create takes database_id or parent_page_id, never both';
const ROW_PROPERTIES_RULE = 'when database_id is given, properties is required';

const TitleSchema = Type.String({
  maxLength: 2000,
  description: 'Shortcut for a child page\'s title (plain text): the same as "properties": {"title": "…"}.',
});

/** Rule 4's rules, and the convenience "title" given once and only for a child page. */
function checkPageCreate(input: {
  database_id?: string;
  parent_page_id?: string;
  properties?: PropertyValues;
  title?: string;
}): FieldError[] {
  const errors = exactlyOne(input, 'database_id', 'parent_page_id', ONE_PARENT_RULE);
  if (input.database_id !== undefined && input.properties === undefined) {
    errors.push({
      path: '/properties',
      message: `"properties" is required with "database_id" (rule: ${ROW_PROPERTIES_RULE}).`,
    });
  }
  if (input.database_id !== undefined && input.title !== undefined) {
    errors.push({
      path: '/title',
      message:
        '"title" is only for child pages (rule: a database row\'s title is its title column, keyed "title" in "properties"); put it in "properties" instead.',
    });
  }
  if (
    input.parent_page_id !== undefined &&
    input.title !== undefined &&
    input.properties?.title !== undefined
  ) {
    errors.push({
      path: '/title',
      message: 'gives the page title a second time beside "properties.title"; give it once.',
    });
  }
  return errors;
}

/**
 * A child page's properties: its title, from "properties.title" or the "title" shortcut (plain text
 * converted). Other keys are sent as given: a child page has only a title, and Notion refuses them.
 */
function childPageProperties(input: {
  properties?: PropertyValues;
  title?: string;
}): Record<string, unknown> {
  const { title, ...others } = input.properties ?? {};
  const given = title ?? input.title;
  return {
    ...others,
    ...(given !== undefined ? toNotionProperties({ title: given }, CHILD_PAGE_COLUMNS) : {}),
  };
}

export const notesPageCreate = defineTool({
  name: 'notes_page_create',
  provider: 'notion',
  description: `Create a Notion page: a database row ("database_id" + "properties") or a child page ("parent_page_id"; "properties" optional). Rule 4: exactly one of "database_id" or "parent_page_id"; "properties" is required with "database_id". Values take provider shapes keyed by exact column name, the title column keyed "title": {"title": {"title": [{"text": {"content": "…"}}]}}; plain values are converted by column type. A child page has only a title ("title" is a plain-text shortcut for it). Optional "child_blocks" ({type, text, language?}), "icon" ({"type": "emoji", "emoji": "📝"} or {"type": "external", "external": {"url": "…"}}) and "cover" (external only). "_parent" is computed; never supply it. Returns the page (id, url).
Alias: "blocks" for "child_blocks".
Example: {"parent_page_id": "6042b18c-8264-48b6-99d8-01794faa2b55", "properties": {"title": {"title": [{"text": {"content": "Meeting"}}]}}, "icon": {"type": "emoji", "emoji": "📝"}, "child_blocks": [{"type": "heading_2", "text": "Agenda"}]}`,
  input: Type.Object(
    {
      database_id: Type.Optional(
        notionId(
          'Create the page as a row of this database (rule 4).',
          '39fbdf12-08c0-4b0b-95e8-06be30a24a4a',
        ),
      ),
      parent_page_id: Type.Optional(notionId('Create the page under this page (rule 4).')),
      properties: Type.Optional(PropertyValuesSchema),
      child_blocks: Type.Optional(
        blockList(
          'Content of the new page: blocks {type, text, language?} as notes_page_content_append takes them (1-100).',
        ),
      ),
      icon: Type.Optional(IconSchema),
      cover: Type.Optional(CoverSchema),
      title: Type.Optional(TitleSchema),
    },
    { additionalProperties: false },
  ),
  aliases: { blocks: { to: 'child_blocks' } },
  annotations: { read_only: false, destructive: false, idempotent: false },
  check: (input) => [...checkPageCreate(input), ...checkBlocks(input.child_blocks, 'child_blocks')],
  async run(input, { client }) {
    if (input.database_id === undefined) {
      const parent = { type: 'page_id', page_id: normalizeId(input.parent_page_id!) };
      return createPage(client, parent, childPageProperties(input), input);
    }
    const databaseId = normalizeId(input.database_id);
    const values = input.properties ?? {};
    if (allNotionForm(values)) return createPage(client, rowParent(databaseId, null), values, input);
    // From 2025-09-03 the schema and rows are the database's data source's.
    const schema = await databaseSchema(client, databaseId);
    const properties = toNotionProperties(values, schema.columns);
    return createPage(client, rowParent(databaseId, schema.dataSourceId), properties, input);
  },
});

export const notesPageGet = defineTool({
  name: 'notes_page_get',
  provider: 'notion',
  description: `Get a Notion page (or database row): its properties (column values), parent, icon, cover, url, archived state and timestamps. Not its content: read that with notes_page_content_get. "filter_properties" limits the properties returned to the given property ids.
Example: {"page_id": "https://www.notion.so/Analytical-Engine-Notes-9adbce3c958d4ca18679b7b8efbfb488"}`,
  input: Type.Object(
    {
      page_id: notionId('The page to get.'),
      filter_properties: Type.Optional(
        Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
          minItems: 1,
          maxItems: 100,
          description: 'Only return these properties (property ids, e.g. "title").',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: { read_only: true, destructive: false, idempotent: true },
  async run(input, { client }) {
    const res = await client.request({
      method: 'GET',
      path: `/v1/pages/${idSegment(input.page_id)}`,
      query: { filter_properties: input.filter_properties },
    });
    return withoutRequestId(res.data);
  },
});

export const notesPageUpdate = defineTool({
  name: 'notes_page_update',
  provider: 'notion',
  description: `Update a Notion page or database row ("page_id"): archive it ("archived": true moves it to the trash with its content; false restores it), change column values ("properties": only the columns given change; provider value shapes keyed by exact column name, the title column keyed "title"; plain values are converted by column type), "icon" ({"type": "emoji", "emoji": "✅"} or {"type": "external", "external": {"url": "…"}}; null removes it) or "cover" ({"type": "external", "external": {"url": "…"}}; null removes it). An emoji or image URL string is accepted for icon and cover too; "title" (plain text) is a shortcut for the title. Rule: give at least one change. Returns the updated page.
Example: {"page_id": "9adbce3c-958d-4ca1-8679-b7b8efbfb488", "properties": {"Status": {"status": {"name": "Done"}}, "Estimate": {"number": 5}}, "icon": {"type": "emoji", "emoji": "✅"}}`,
  input: Type.Object(
    {
      page_id: notionId('The page to update.'),
      archived: Type.Optional(
        Type.Boolean({ description: 'true archives (trashes) the page; false restores it from the trash.' }),
      ),
      properties: Type.Optional(PropertyValuesSchema),
      icon: Type.Optional(NullableIconSchema),
      cover: Type.Optional(NullableCoverSchema),
      title: Type.Optional(
        Type.String({ minLength: 1, maxLength: 2000, description: 'Shortcut: the new title (plain text).' }),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: { read_only: false, destructive: true, idempotent: true },
  check(input) {
    const changes = ['archived', 'properties', 'icon', 'cover', 'title'].filter(
      (k) => (input as Record<string, unknown>)[k] !== undefined,
    );
    return changes.length
      ? []
      : [
          {
            path: '/',
            message:
              'Provide at least one of "archived", "properties", "icon", "cover" or "title" (rule: an update must change something).',
          },
        ];
  },
  async run(input, { client }) {
    const path = `/v1/pages/${idSegment(input.page_id)}`;
    let properties: Record<string, unknown> | undefined;
    if (input.properties !== undefined) {
      if (allNotionForm(input.properties)) {
        properties = { ...input.properties };
      } else {
        const page = await client.request<{ properties?: unknown }>({ method: 'GET', path });
        properties = toNotionProperties(input.properties, columnsOf(page.data.properties));
      }
    }
    if (input.title !== undefined) properties = { ...properties, title: { title: richText(input.title) } };
    const res = await client.request({
      method: 'PATCH',
      path,
      json: {
        ...(properties ? { properties } : {}),
        ...(input.icon !== undefined ? { icon: toIcon(input.icon) } : {}),
        ...(input.cover !== undefined ? { cover: toCover(input.cover) } : {}),
        ...(input.archived !== undefined ? { archived: input.archived } : {}),
      },
    });
    return withoutRequestId(res.data);
  },
});
