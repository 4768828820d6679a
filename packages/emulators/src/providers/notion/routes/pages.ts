import type { FastifyInstance } from 'fastify';
import type { ProviderContext } from '../../../core/types.js';
import { type NotionCall, notionRoute } from '../api.js';
import { parseBlockRequests } from '../block-content.js';
import { NotionApiError, shapeError, validationError } from '../errors.js';
import { claimUploads } from '../files.js';
import { newId, parseId } from '../ids.js';
import type {
  Cover,
  Icon,
  NotionState,
  PageRecord,
  Parent,
  PropertySchema,
  PropertyValue,
  Workspace,
} from '../model.js';
import { listBody, paginate, parsePageSize } from '../pagination.js';
import { emptyValue, parsePropertyValue, renderValue } from '../properties.js';
import { filterPropertyIds, renderPage } from '../render.js';
import { isRecord, type RichText } from '../rich-text.js';
import {
  assertEditable,
  findDatabase,
  findDataSource,
  findPage,
  insertBlocks,
  mentionResolver,
  pathId,
  setTrashed,
  touch,
} from '../workspace.js';
import { trashFlag } from './blocks.js';

/** A page under a page has just a title; this stands in for a database schema. */
const PAGE_TITLE_SCHEMA: PropertySchema = {
  id: 'title',
  name: 'title',
  type: 'title',
  config: {},
  description: null,
};

/** Property types whose items Notion pages through (`GET /v1/pages/{id}/properties/{property_id}`). */
const LIST_PROPERTY_TYPES = new Set(['title', 'rich_text', 'people', 'relation']);

export function parseIcon(raw: unknown, path = 'icon'): Icon | null {
  if (raw === null) return null;
  if (!isRecord(raw)) throw shapeError('body', path, 'an object or `null`', raw);
  if (typeof raw.emoji === 'string' && (raw.type === undefined || raw.type === 'emoji')) {
    return { type: 'emoji', emoji: raw.emoji };
  }
  if (
    isRecord(raw.external) &&
    typeof raw.external.url === 'string' &&
    (raw.type === undefined || raw.type === 'external')
  ) {
    return { type: 'external', external: { url: raw.external.url } };
  }
  throw validationError(
    `body failed validation: body.${path} should be an emoji \`{"emoji": "…"}\` or an external file \`{"external": {"url": "…"}}\`, instead was \`${JSON.stringify(raw)}\`.`,
  );
}

export function parseCover(raw: unknown, path = 'cover'): Cover | null {
  if (raw === null) return null;
  if (isRecord(raw) && isRecord(raw.external) && typeof raw.external.url === 'string') {
    return { type: 'external', external: { url: raw.external.url } };
  }
  throw shapeError('body', path, 'an external file `{"external": {"url": "…"}}` or `null`', raw);
}

function schemaOf(ws: Workspace, page: PageRecord): PropertySchema[] {
  if (page.parent.type !== 'database_id') return [PAGE_TITLE_SCHEMA];
  return ws.databases.get(page.parent.database_id)?.schema ?? [];
}

function findSchema(schemas: PropertySchema[], key: string): PropertySchema | undefined {
  return (
    schemas.find((s) => s.name === key || s.id === key) ??
    (key === 'title' ? schemas.find((s) => s.type === 'title') : undefined)
  );
}

/** Applies a `properties` object of a create or update; unknown names fail like Notion's. */
function applyProperties(
  ws: Workspace,
  schemas: PropertySchema[],
  raw: unknown,
  values: Map<string, PropertyValue>,
): void {
  if (raw === undefined) return;
  if (!isRecord(raw)) throw shapeError('body', 'properties', 'an object', raw);
  const resolve = mentionResolver(ws);
  for (const [key, value] of Object.entries(raw)) {
    const schema = findSchema(schemas, key);
    if (!schema) throw validationError(`${key} is not a property that exists.`);
    values.set(schema.id, parsePropertyValue(ws, schema, value, key, resolve));
  }
}

function parseParent(ws: Workspace, raw: unknown): Parent {
  if (raw === undefined) throw shapeError('body', 'parent', 'defined', undefined);
  if (!isRecord(raw)) throw shapeError('body', 'parent', 'an object', raw);
  // 2025-09-03: rows go into a data source; each database's single data source holds its rows.
  if (raw.data_source_id !== undefined && (raw.type === undefined || raw.type === 'data_source_id')) {
    const id = parseId(raw.data_source_id);
    if (!id) throw shapeError('body', 'parent.data_source_id', 'a valid uuid', raw.data_source_id);
    const db = findDataSource(ws, id);
    assertEditable(db, 'database');
    return { type: 'database_id', database_id: db.id };
  }
  if (raw.database_id !== undefined && (raw.type === undefined || raw.type === 'database_id')) {
    const id = parseId(raw.database_id);
    if (!id) throw shapeError('body', 'parent.database_id', 'a valid uuid', raw.database_id);
    const db = findDatabase(ws, id);
    assertEditable(db, 'database');
    return { type: 'database_id', database_id: id };
  }
  if (raw.page_id !== undefined && (raw.type === undefined || raw.type === 'page_id')) {
    const id = parseId(raw.page_id);
    if (!id) throw shapeError('body', 'parent.page_id', 'a valid uuid', raw.page_id);
    assertEditable(findPage(ws, id), 'page');
    return { type: 'page_id', page_id: id };
  }
  if (raw.workspace === true) {
    throw validationError(
      'Public integrations cannot create pages at the top level of a workspace; give a parent page_id or database_id.',
    );
  }
  throw validationError(
    `body failed validation: body.parent should have a page_id, a data_source_id or a database_id, instead was \`${JSON.stringify(raw)}\`.`,
  );
}

function createPage(call: NotionCall): Record<string, unknown> {
  const { ws, body, botId, now } = call;
  const parent = parseParent(ws, body.parent);
  const schemas =
    parent.type === 'database_id' ? findDatabase(ws, parent.database_id).schema : [PAGE_TITLE_SCHEMA];
  const values = new Map<string, PropertyValue>();
  for (const schema of schemas) values.set(schema.id, emptyValue(schema));
  applyProperties(ws, schemas, body.properties, values);
  const children =
    body.children === undefined ? [] : parseBlockRequests(body.children, 'children', mentionResolver(ws));
  claimUploads(ws, children, now);
  const page: PageRecord = {
    id: newId(),
    parent,
    values,
    icon: body.icon === undefined ? null : parseIcon(body.icon),
    cover: body.cover === undefined ? null : parseCover(body.cover),
    childIds: [],
    createdTime: now,
    lastEditedTime: now,
    createdBy: botId,
    lastEditedBy: botId,
    inTrash: false,
  };
  ws.pages.set(page.id, page);
  if (parent.type === 'page_id') {
    const parentPage = findPage(ws, parent.page_id);
    parentPage.childIds.push(page.id);
    touch(parentPage, botId, now);
  }
  if (children.length > 0) insertBlocks(ws, page.id, children, 0, botId, now);
  return renderPage(ws, page, undefined, call.version);
}

function updatePage(call: NotionCall): Record<string, unknown> {
  const { ws, body, params, botId, now } = call;
  const page = findPage(ws, pathId(params.page_id, 'page_id'));
  const trash = trashFlag(body);
  const edits = body.properties !== undefined || body.icon !== undefined || body.cover !== undefined;
  if (trash === false) setTrashed(ws, page, false, botId, now);
  if (edits) {
    assertEditable(page, 'page');
    const values = new Map(page.values);
    applyProperties(ws, schemaOf(ws, page), body.properties, values);
    const icon = body.icon === undefined ? page.icon : parseIcon(body.icon);
    const cover = body.cover === undefined ? page.cover : parseCover(body.cover);
    page.values = values;
    page.icon = icon;
    page.cover = cover;
    touch(page, botId, now);
  }
  if (trash === true) {
    if (page.inTrash && !edits) assertEditable(page, 'page');
    setTrashed(ws, page, true, botId, now);
  }
  return renderPage(ws, page, undefined, call.version);
}

function propertyItem(schema: PropertySchema, value: unknown): Record<string, unknown> {
  return { object: 'property_item', id: schema.id, type: schema.type, [schema.type]: value };
}

function retrievePropertyItem(call: NotionCall, publicBase: string): Record<string, unknown> {
  const { ws, params, query } = call;
  const page = findPage(ws, pathId(params.page_id, 'page_id'));
  const key = decodeURIComponent(params.property_id ?? '');
  const schema = findSchema(schemaOf(ws, page), key);
  if (!schema) throw new NotionApiError(404, 'object_not_found', `Could not find property with ID: ${key}.`);
  const value = renderValue(ws, page, schema);
  if (!LIST_PROPERTY_TYPES.has(schema.type)) return propertyItem(schema, value);
  const pageSize = parsePageSize(query.page_size, 'query');
  const elements = (Array.isArray(value) ? value : []) as Array<RichText | Record<string, unknown>>;
  const indexed = elements.map((element, index) => ({ index, element }));
  const slice = paginate(
    indexed,
    (item) => `${page.id}:${schema.id}:${item.index}`,
    query.start_cursor,
    pageSize,
  );
  const nextUrl = slice.nextCursor
    ? `${publicBase}/v1/pages/${page.id}/properties/${encodeURIComponent(schema.id)}?start_cursor=${encodeURIComponent(slice.nextCursor)}`
    : null;
  return listBody(
    { items: slice.items.map((item) => propertyItem(schema, item.element)), nextCursor: slice.nextCursor },
    'property_item',
    { id: schema.id, next_url: nextUrl, type: schema.type, [schema.type]: {} },
  );
}

export function registerPageRoutes(
  app: FastifyInstance,
  ctx: ProviderContext,
  getState: () => NotionState,
): void {
  app.post('/v1/pages', notionRoute(ctx, getState, createPage));

  app.get(
    '/v1/pages/:page_id',
    notionRoute(ctx, getState, ({ ws, params, query, version }) => {
      const page = findPage(ws, pathId(params.page_id, 'page_id'));
      return renderPage(ws, page, filterPropertyIds(query.filter_properties), version);
    }),
  );

  app.patch('/v1/pages/:page_id', notionRoute(ctx, getState, updatePage));

  app.get(
    '/v1/pages/:page_id/properties/:property_id',
    notionRoute(ctx, getState, (call) => retrievePropertyItem(call, ctx.publicBase(call.req))),
  );
}
