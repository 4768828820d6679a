import type { FastifyInstance } from 'fastify';
import type { ProviderContext } from '../../../core/types.js';
import { type NotionCall, notionRoute } from '../api.js';
import type { DatabaseRecord, NotionState } from '../model.js';
import { renderDataSource } from '../render.js';
import { parseRichText } from '../rich-text.js';
import { requireDataSources } from '../versions.js';
import { assertEditable, findDataSource, mentionResolver, pathId, setTrashed, touch } from '../workspace.js';
import { trashFlag } from './blocks.js';
import { queryRows, updateSchema } from './databases.js';

/**
 * API version 2025-09-03: each database holds one data source (its schema and rows), with an id
 * of its own derived from the database's, so both versions see the same rows.
 */
function dataSourceOf(call: NotionCall): DatabaseRecord {
  requireDataSources(call.version, true);
  return findDataSource(call.ws, pathId(call.params.data_source_id, 'data_source_id'));
}

function updateDataSource(call: NotionCall): Record<string, unknown> {
  const { ws, body, botId, now } = call;
  const db = dataSourceOf(call);
  const trash = trashFlag(body);
  if (trash === false) setTrashed(ws, db, false, botId, now);
  const edits = ['title', 'description', 'properties'].some((k) => body[k] !== undefined);
  if (edits) {
    assertEditable(db, 'database');
    const resolve = mentionResolver(ws);
    // Parse everything before changing anything, so a bad field leaves the data source untouched.
    const title = body.title === undefined ? db.title : parseRichText(body.title, 'title', resolve);
    const description =
      body.description === undefined
        ? db.description
        : parseRichText(body.description, 'description', resolve);
    const schema = body.properties === undefined ? db.schema : updateSchema(call, db, body.properties);
    Object.assign(db, { title, description, schema });
    touch(db, botId, now);
  }
  if (trash === true) {
    if (db.inTrash && !edits) assertEditable(db, 'database');
    setTrashed(ws, db, true, botId, now);
  }
  return renderDataSource(db);
}

export function registerDataSourceRoutes(
  app: FastifyInstance,
  ctx: ProviderContext,
  getState: () => NotionState,
): void {
  app.get(
    '/v1/data_sources/:data_source_id',
    notionRoute(ctx, getState, (call) => renderDataSource(dataSourceOf(call))),
  );
  app.patch('/v1/data_sources/:data_source_id', notionRoute(ctx, getState, updateDataSource));
  app.post(
    '/v1/data_sources/:data_source_id/query',
    notionRoute(ctx, getState, (call) => queryRows(call, dataSourceOf(call))),
  );
}
