import type { FastifyInstance } from 'fastify';
import type { ProviderContext } from '../../../core/types.js';
import { notionRoute } from '../api.js';
import { shapeError } from '../errors.js';
import type { DatabaseRecord, NotionState, PageRecord } from '../model.js';
import { listBody, paginate, parsePageSize } from '../pagination.js';
import { pageTitle, renderDatabase, renderDataSource, renderPage } from '../render.js';
import { isRecord, plainText } from '../rich-text.js';
import { usesDataSources } from '../versions.js';

type Found = { kind: 'page'; record: PageRecord } | { kind: 'database'; record: DatabaseRecord };

export function registerSearchRoutes(
  app: FastifyInstance,
  ctx: ProviderContext,
  getState: () => NotionState,
): void {
  app.post(
    '/v1/search',
    notionRoute(ctx, getState, ({ ws, body, version }) => {
      // From 2025-09-03 search finds data sources where it found databases.
      const dataSources = usesDataSources(version);
      const tableKind = dataSources ? 'data_source' : 'database';
      const pageSize = parsePageSize(body.page_size, 'body');
      const { query, filter, sort } = body;
      if (query !== undefined && typeof query !== 'string')
        throw shapeError('body', 'query', 'a string', query);
      let only: 'page' | 'database' | null = null;
      if (filter !== undefined) {
        if (!isRecord(filter)) throw shapeError('body', 'filter', 'an object', filter);
        if (filter.property !== 'object')
          throw shapeError('body', 'filter.property', '`"object"`', filter.property);
        if (filter.value !== 'page' && filter.value !== tableKind) {
          throw shapeError('body', 'filter.value', `\`"page"\` or \`"${tableKind}"\``, filter.value);
        }
        only = filter.value === 'page' ? 'page' : 'database';
      }
      let direction: 'ascending' | 'descending' = 'descending';
      if (sort !== undefined) {
        if (!isRecord(sort)) throw shapeError('body', 'sort', 'an object', sort);
        if (sort.timestamp !== 'last_edited_time') {
          throw shapeError('body', 'sort.timestamp', '`"last_edited_time"`', sort.timestamp);
        }
        if (sort.direction !== 'ascending' && sort.direction !== 'descending') {
          throw shapeError('body', 'sort.direction', '`"ascending"` or `"descending"`', sort.direction);
        }
        direction = sort.direction;
      }
      const needle = (query ?? '').trim().toLowerCase();
      const found: Found[] = [];
      if (only !== 'database') {
        for (const record of ws.pages.values()) {
          if (!record.inTrash) found.push({ kind: 'page', record });
        }
      }
      if (only !== 'page') {
        for (const record of ws.databases.values()) {
          if (!record.inTrash) found.push({ kind: 'database', record });
        }
      }
      const title = (f: Found) =>
        (f.kind === 'page' ? plainText(pageTitle(ws, f.record)) : plainText(f.record.title)).toLowerCase();
      const matches = found
        .filter((f) => needle === '' || title(f).includes(needle))
        .sort((a, b) => {
          const delta = a.record.lastEditedTime - b.record.lastEditedTime;
          return direction === 'ascending' ? delta : -delta;
        });
      const page = paginate(matches, (f) => f.record.id, body.start_cursor, pageSize);
      const results = page.items.map((f) => {
        if (f.kind === 'page') return renderPage(ws, f.record, undefined, version);
        return dataSources ? renderDataSource(f.record) : renderDatabase(f.record);
      });
      return listBody(
        { items: results, nextCursor: page.nextCursor },
        dataSources ? 'page_or_data_source' : 'page_or_database',
      );
    }),
  );
}
