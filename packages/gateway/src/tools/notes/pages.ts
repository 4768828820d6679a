import { Type } from '@sinclair/typebox';
import type { FieldError } from '../../errors/problem.js';
import { defineTool } from '../types.js';
import { BlockInputSchema, checkBlock } from './block-content.js';
import { idSegment, normalizeId, notionId } from './ids.js';
import {
  allNotionForm,
  columnsOf,
  databaseColumns,
  PropertyValuesSchema,
  toNotionProperties,
} from './properties.js';
import { richText } from './rich-text.js';
import {
  CoverSchema,
  createPage,
  exactlyOne,
  IconSchema,
  toCover,
  toIcon,
  withoutRequestId,
} from './shared.js';

const TitleSchema = Type.String({ maxLength: 2000, description: 'The page title (plain text).' });

export const notesPageCreate = defineTool({
  name: 'notes_page_create',
  provider: 'notion',
  description: `Create a Notion page: either a row in a database ("database_id" with "properties", column values keyed by column name; plain values are converted by column type) or a child page under another page ("parent_page_id" with "title"). Rules: exactly one of "database_id" or "parent_page_id"; "properties" is required with "database_id" and not allowed with "parent_page_id" (a child page has only a title, so use "title"); "title" is only for child pages (a row's title is its title column); "_parent" is computed by the gateway and refused. Optional content "blocks" ({type, text, language?}), "icon" (an emoji or an image URL) and "cover" (an image URL). Returns the page with its id and url.
Example: {"parent_page_id": "6042b18c-8264-48b6-99d8-01794faa2b55", "title": "Meeting 2025-02-03", "icon": "📝", "blocks": [{"type": "heading_2", "text": "Agenda"}, {"type": "bulleted_list_item", "text": "Budget"}]}`,
  input: Type.Object(
    {
      database_id: Type.Optional(
        notionId('Create the page as a row of this database.', '39fbdf12-08c0-4b0b-95e8-06be30a24a4a'),
      ),
      parent_page_id: Type.Optional(notionId('Create the page under this page.')),
      title: Type.Optional(TitleSchema),
      properties: Type.Optional(PropertyValuesSchema),
      blocks: Type.Optional(
        Type.Array(BlockInputSchema, {
          minItems: 1,
          maxItems: 100,
          description: 'Content of the new page: blocks {type, text, language?} (1-100).',
        }),
      ),
      icon: Type.Optional(IconSchema),
      cover: Type.Optional(CoverSchema),
      _parent: Type.Optional(
        Type.Unknown({
          readOnly: true,
          description: 'Computed by the gateway from database_id or parent_page_id; never supply it.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: { read_only: false, destructive: false, idempotent: false },
  check(input) {
    const errors: FieldError[] = [
      ...exactlyOne(
        input,
        'database_id',
        'parent_page_id',
        'a page is created either in a database or under a page',
      ),
    ];
    if (input._parent !== undefined) {
      errors.push({
        path: '/_parent',
        message:
          '"_parent" is computed by the gateway and must not be supplied (rule: the parent is given by "database_id" or "parent_page_id"); remove it.',
      });
    }
    if (input.database_id !== undefined && input.properties === undefined) {
      errors.push({
        path: '/properties',
        message:
          '"properties" is required with "database_id" (rule: a database row is created with its column values).',
      });
    }
    if (input.database_id !== undefined && input.title !== undefined) {
      errors.push({
        path: '/title',
        message:
          '"title" is only for child pages (rule: a database row\'s title is its title column); put it in "properties" instead.',
      });
    }
    if (input.parent_page_id !== undefined && input.properties !== undefined) {
      errors.push({
        path: '/properties',
        message:
          '"properties" is only for database rows (rule: a page under a page has only a title); use "title".',
      });
    }
    errors.push(...(input.blocks ?? []).flatMap((block, i) => checkBlock(block, `/blocks/${i}`)));
    return errors;
  },
  async run(input, { client }) {
    let parent: Record<string, unknown>;
    let properties: Record<string, unknown>;
    if (input.database_id !== undefined) {
      const databaseId = normalizeId(input.database_id);
      parent = { type: 'database_id', database_id: databaseId };
      const values = input.properties ?? {};
      properties = allNotionForm(values)
        ? values
        : toNotionProperties(values, await databaseColumns(client, databaseId));
    } else {
      parent = { type: 'page_id', page_id: normalizeId(input.parent_page_id!) };
      properties = input.title !== undefined ? { title: { title: richText(input.title) } } : {};
    }
    return createPage(client, parent, properties, input);
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
  description: `Update a Notion page or database row: change column values ("properties": only the columns given change; plain values are converted by column type), its "title", "icon" (an emoji or image URL; null removes it), "cover" (an image URL; null removes it), or archive it ("archived": true moves it to the trash with its content) and restore it ("archived": false). Rule: give at least one change. Returns the updated page.
Example: {"page_id": "9adbce3c-958d-4ca1-8679-b7b8efbfb488", "properties": {"Status": "Done", "Estimate": 5}, "icon": "✅"}`,
  input: Type.Object(
    {
      page_id: notionId('The page to update.'),
      title: Type.Optional(
        Type.String({ minLength: 1, maxLength: 2000, description: 'New title (plain text).' }),
      ),
      properties: Type.Optional(PropertyValuesSchema),
      icon: Type.Optional(Type.Union([IconSchema, Type.Null()], { description: IconSchema.description })),
      cover: Type.Optional(Type.Union([CoverSchema, Type.Null()], { description: CoverSchema.description })),
      archived: Type.Optional(
        Type.Boolean({ description: 'true archives (trashes) the page; false restores it from the trash.' }),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: { read_only: false, destructive: true, idempotent: true },
  check(input) {
    const changes = ['title', 'properties', 'icon', 'cover', 'archived'].filter(
      (k) => (input as Record<string, unknown>)[k] !== undefined,
    );
    return changes.length
      ? []
      : [
          {
            path: '/',
            message:
              'Provide at least one of "title", "properties", "icon", "cover" or "archived" (rule: an update must change something).',
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
