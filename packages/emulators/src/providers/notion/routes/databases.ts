import type { FastifyInstance } from 'fastify';
import type { ProviderContext } from '../../../core/types.js';
import { type NotionCall, notionRoute } from '../api.js';
import { shapeError, validationError } from '../errors.js';
import { newId, parseId } from '../ids.js';
import type { DatabaseRecord, NotionState, PropertySchema } from '../model.js';
import { listBody, paginate, parsePageSize } from '../pagination.js';
import { parseSchemaProperty } from '../properties.js';
import { buildFilter, buildSorts } from '../query.js';
import { filterPropertyIds, renderDatabase, renderPage } from '../render.js';
import { isRecord, parseRichText } from '../rich-text.js';
import { requireDataSources, usesDataSources } from '../versions.js';
import {
  assertEditable,
  findDatabase,
  findPage,
  mentionResolver,
  pathId,
  setTrashed,
  touch,
} from '../workspace.js';
import { trashFlag } from './blocks.js';
import { parseCover, parseIcon } from './pages.js';

function parseBoolean(raw: unknown, path: string): boolean {
  if (typeof raw !== 'boolean') throw shapeError('body', path, 'a boolean', raw);
  return raw;
}

function assertOneTitle(schema: PropertySchema[]): void {
  const titles = schema.filter((p) => p.type === 'title').length;
  if (titles === 0)
    throw validationError('Title property is missing: a database needs exactly one property of type title.');
  if (titles > 1) throw validationError('A database can have only one title property.');
}

/** The schema of a new database: `properties`, or `initial_data_source.properties` from 2025-09-03. */
function initialProperties(call: NotionCall): Record<string, unknown> {
  const { body } = call;
  if (!usesDataSources(call.version)) {
    if (!isRecord(body.properties)) throw shapeError('body', 'properties', 'an object', body.properties);
    return body.properties;
  }
  if (body.properties !== undefined) throw shapeError('body', 'properties', 'not present', body.properties);
  const initial = body.initial_data_source ?? {};
  if (!isRecord(initial)) throw shapeError('body', 'initial_data_source', 'an object', initial);
  const properties = initial.properties ?? { Name: { title: {} } };
  if (!isRecord(properties))
    throw shapeError('body', 'initial_data_source.properties', 'an object', properties);
  return properties;
}

function createDatabase(call: NotionCall): Record<string, unknown> {
  const { ws, body, botId, now } = call;
  const parent = body.parent;
  if (!isRecord(parent)) throw shapeError('body', 'parent', 'an object', parent);
  const parentId = parseId(parent.page_id);
  if (!parentId) throw shapeError('body', 'parent.page_id', 'a valid uuid', parent.page_id);
  const parentPage = findPage(ws, parentId);
  assertEditable(parentPage, 'page');
  const id = newId();
  const schema: PropertySchema[] = [];
  for (const [key, raw] of Object.entries(initialProperties(call))) {
    const property = parseSchemaProperty(ws, id, key, raw);
    if (schema.some((p) => p.name === property.name))
      throw validationError(`Duplicate property name: ${property.name}.`);
    schema.push(property);
  }
  assertOneTitle(schema);
  const resolve = mentionResolver(ws);
  const db: DatabaseRecord = {
    id,
    parent: { type: 'page_id', page_id: parentId },
    title: body.title === undefined ? [] : parseRichText(body.title, 'title', resolve),
    description:
      body.description === undefined ? [] : parseRichText(body.description, 'description', resolve),
    schema,
    icon: body.icon === undefined ? null : parseIcon(body.icon),
    cover: body.cover === undefined ? null : parseCover(body.cover),
    isInline: body.is_inline === undefined ? false : parseBoolean(body.is_inline, 'is_inline'),
    createdTime: now,
    lastEditedTime: now,
    createdBy: botId,
    lastEditedBy: botId,
    inTrash: false,
  };
  ws.databases.set(id, db);
  parentPage.childIds.push(id);
  touch(parentPage, botId, now);
  return renderDatabase(db, call.version);
}

/** Schema edits: `null` removes a property, `name` renames, a type key reconfigures, a new key adds. */
export function updateSchema(call: NotionCall, db: DatabaseRecord, raw: unknown): PropertySchema[] {
  if (!isRecord(raw)) throw shapeError('body', 'properties', 'an object', raw);
  let schema = [...db.schema];
  for (const [key, change] of Object.entries(raw)) {
    const existing = schema.find((p) => p.name === key || p.id === key);
    if (change === null) {
      if (!existing) throw validationError(`${key} is not a property that exists.`);
      if (existing.type === 'title') throw validationError('Cannot delete the title property of a database.');
      schema = schema.filter((p) => p !== existing);
      continue;
    }
    const next = parseSchemaProperty(call.ws, db.id, key, change, existing);
    if (schema.some((p) => p !== existing && p.name === next.name)) {
      throw validationError(`Duplicate property name: ${next.name}.`);
    }
    schema = existing ? schema.map((p) => (p === existing ? next : p)) : [...schema, next];
  }
  assertOneTitle(schema);
  return schema;
}

function updateDatabase(call: NotionCall): Record<string, unknown> {
  const { ws, body, params, botId, now } = call;
  const db = findDatabase(ws, pathId(params.database_id, 'database_id'));
  // From 2025-09-03 the schema is the data source's (PATCH /v1/data_sources/{id}).
  if (usesDataSources(call.version) && body.properties !== undefined)
    throw shapeError('body', 'properties', 'not present', body.properties);
  const trash = trashFlag(body);
  if (trash === false) setTrashed(ws, db, false, botId, now);
  const editKeys = ['title', 'description', 'properties', 'icon', 'cover', 'is_inline'].filter(
    (k) => body[k] !== undefined,
  );
  if (editKeys.length > 0) {
    assertEditable(db, 'database');
    const resolve = mentionResolver(ws);
    // Parse everything before changing anything, so a bad field leaves the database untouched.
    const title = body.title === undefined ? db.title : parseRichText(body.title, 'title', resolve);
    const description =
      body.description === undefined
        ? db.description
        : parseRichText(body.description, 'description', resolve);
    const schema = body.properties === undefined ? db.schema : updateSchema(call, db, body.properties);
    const icon = body.icon === undefined ? db.icon : parseIcon(body.icon);
    const cover = body.cover === undefined ? db.cover : parseCover(body.cover);
    const isInline = body.is_inline === undefined ? db.isInline : parseBoolean(body.is_inline, 'is_inline');
    Object.assign(db, { title, description, schema, icon, cover, isInline });
    touch(db, botId, now);
  }
  if (trash === true) {
    if (db.inTrash && editKeys.length === 0) assertEditable(db, 'database');
    setTrashed(ws, db, true, botId, now);
  }
  return renderDatabase(db, call.version);
}

function queryDatabase(call: NotionCall): Record<string, unknown> {
  requireDataSources(call.version, false);
  return queryRows(call, findDatabase(call.ws, pathId(call.params.database_id, 'database_id')));
}

/** A database's rows (under 2025-09-03, its data source's), filtered, sorted and paged. */
export function queryRows(call: NotionCall, db: DatabaseRecord): Record<string, unknown> {
  const { ws, body, query, now } = call;
  const pageSize = parsePageSize(body.page_size, 'body');
  const includeTrashed = body.in_trash === true || body.archived === true;
  const matches = buildFilter(ws, db, body.filter, now);
  const order = buildSorts(ws, db, body.sorts);
  const rows = [...ws.pages.values()]
    .filter((p) => p.parent.type === 'database_id' && p.parent.database_id === db.id)
    .filter((p) => p.inTrash === includeTrashed)
    .filter(matches)
    .sort(order);
  // Notion takes filter_properties in the query string of this POST, as on GET /v1/pages/{id}.
  const filterIds = filterPropertyIds(query.filter_properties);
  const page = paginate(rows, (p) => p.id, body.start_cursor, pageSize);
  return listBody(
    { items: page.items.map((p) => renderPage(ws, p, filterIds, call.version)), nextCursor: page.nextCursor },
    usesDataSources(call.version) ? 'page_or_data_source' : 'page_or_database',
  );
}

export function registerDatabaseRoutes(
  app: FastifyInstance,
  ctx: ProviderContext,
  getState: () => NotionState,
): void {
  app.post('/v1/databases', notionRoute(ctx, getState, createDatabase));
  app.get(
    '/v1/databases/:database_id',
    notionRoute(ctx, getState, ({ ws, params, version }) =>
      renderDatabase(findDatabase(ws, pathId(params.database_id, 'database_id')), version),
    ),
  );
  app.patch('/v1/databases/:database_id', notionRoute(ctx, getState, updateDatabase));
  app.post('/v1/databases/:database_id/query', notionRoute(ctx, getState, queryDatabase));
}
