import { Client as ClientV4 } from '@notionhq/client';
import {
  APIErrorCode,
  APIResponseError,
  Client,
  collectPaginatedAPI,
  isFullDatabase,
  isFullDataSource,
  isFullPage,
  iteratePaginatedAPI,
  LogLevel,
} from '@notionhq/client-v5';
import type { PageObjectResponse } from '@notionhq/client-v5/build/src/api-endpoints.js';
import { describe, expect, it } from 'vitest';
import { notionSeedIds } from '../src/providers/notion/index.js';
import { useEmulators } from './helpers/emulators.js';

/**
 * Conformance: Notion's official SDK 5.x (Notion-Version 2025-09-03, databases hold data sources)
 * talks to the emulator, and sees the same rows as 2022-06-28 callers.
 */

const ADA = 'ada00000-0000-4000-8000-000000000001';
const ada = notionSeedIds(ADA);

const emu = useEmulators({ modules: ['notion'] });

function tokenFor(userId: string): string {
  return emu.control.issueToken('notion', { userId }).access_token;
}

function sdkFor(userId: string, notionVersion?: string): Client {
  return new Client({
    auth: tokenFor(userId),
    baseUrl: emu.urls.notion,
    logLevel: LogLevel.ERROR,
    retry: false,
    ...(notionVersion ? { notionVersion } : {}),
  });
}

async function apiError(promise: Promise<unknown>): Promise<APIResponseError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(APIResponseError);
  return error as APIResponseError;
}

function titleOf(page: PageObjectResponse): string {
  const title = Object.values(page.properties).find((p) => p.type === 'title');
  return title?.type === 'title' ? title.title.map((t) => t.plain_text).join('') : '';
}

async function tasksDataSourceId(notion: Client): Promise<string> {
  const db = await notion.databases.retrieve({ database_id: ada.tasksDatabaseId });
  if (!isFullDatabase(db)) throw new Error('expected a full database');
  const [source] = db.data_sources;
  if (!source) throw new Error('expected a data source');
  return source.id;
}

describe('Notion API 2025-09-03 with @notionhq/client 5.x', () => {
  it('retrieves a database as a container of one data source, and the data source with the schema', async () => {
    const notion = sdkFor(ADA);
    const db = await notion.databases.retrieve({ database_id: ada.tasksDatabaseId });
    if (!isFullDatabase(db)) throw new Error('expected a full database');
    expect(db.object).toBe('database');
    expect(db.id).toBe(ada.tasksDatabaseId);
    expect(db.title.map((t) => t.plain_text).join('')).toBe('Tasks');
    expect('properties' in db).toBe(false);
    expect(db.data_sources).toHaveLength(1);
    const sourceId = db.data_sources[0]?.id ?? '';
    expect(sourceId).not.toBe(db.id);
    expect(db.data_sources[0]?.name).toBe('Tasks');

    const source = await notion.dataSources.retrieve({ data_source_id: sourceId });
    if (!isFullDataSource(source)) throw new Error('expected a full data source');
    expect(source.object).toBe('data_source');
    expect(source.id).toBe(sourceId);
    expect(source.parent).toEqual({ type: 'database_id', database_id: ada.tasksDatabaseId });
    expect(source.database_parent).toEqual({ type: 'page_id', page_id: ada.roadmapPageId });
    expect(source.properties.Name?.type).toBe('title');
    expect(source.properties.Status?.type).toBe('status');

    // The id is stable: the same data source on every retrieve, hyphenated or not.
    expect(await tasksDataSourceId(notion)).toBe(sourceId);
    const compact = await notion.dataSources.retrieve({ data_source_id: sourceId.replace(/-/g, '') });
    expect(compact.id).toBe(sourceId);
  });

  it('queries a data source with filters and sorts, paging with the SDK helpers', async () => {
    const notion = sdkFor(ADA);
    const dataSourceId = await tasksDataSourceId(notion);
    const inProgress = await notion.dataSources.query({
      data_source_id: dataSourceId,
      filter: {
        and: [
          { property: 'Status', status: { equals: 'In progress' } },
          { property: 'Estimate', number: { greater_than_or_equal_to: 5 } },
        ],
      },
      sorts: [{ property: 'Estimate', direction: 'descending' }],
    });
    expect(inProgress.type).toBe('page_or_data_source');
    const rows = inProgress.results.filter(isFullPage);
    expect(rows.map(titleOf)).toEqual(['Write Note G', 'Compute Bernoulli numbers']);
    expect(rows[0]?.parent).toEqual({
      type: 'data_source_id',
      data_source_id: dataSourceId,
      database_id: ada.tasksDatabaseId,
    });

    const first = await notion.dataSources.query({ data_source_id: dataSourceId, page_size: 2 });
    expect(first.results).toHaveLength(2);
    expect(first.has_more).toBe(true);
    const seen: string[] = [];
    for await (const row of iteratePaginatedAPI(notion.dataSources.query, {
      data_source_id: dataSourceId,
      page_size: 2,
    })) {
      seen.push(row.id);
    }
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);
    const collected = await collectPaginatedAPI(notion.dataSources.query, {
      data_source_id: dataSourceId,
      page_size: 3,
    });
    expect(collected.map((r) => r.id)).toEqual(seen);

    // 2022-06-28 callers see the same rows through the database.
    const legacy = new ClientV4({ auth: tokenFor(ADA), baseUrl: emu.urls.notion });
    const old = await legacy.databases.query({ database_id: ada.tasksDatabaseId });
    expect(old.results.map((r) => r.id).sort()).toEqual([...seen].sort());
    expect((old.results[0] as { parent: unknown }).parent).toEqual({
      type: 'database_id',
      database_id: ada.tasksDatabaseId,
    });
  });

  it('creates a page under a data source (or its database), updates and archives it', async () => {
    const notion = sdkFor(ADA);
    const dataSourceId = await tasksDataSourceId(notion);
    const created = await notion.pages.create({
      parent: { type: 'data_source_id', data_source_id: dataSourceId },
      properties: {
        Name: { title: [{ text: { content: 'Draft the v5 notes' } }] },
        Estimate: { number: 3 },
      },
    });
    if (!isFullPage(created)) throw new Error('expected a full page');
    expect(created.parent).toEqual({
      type: 'data_source_id',
      data_source_id: dataSourceId,
      database_id: ada.tasksDatabaseId,
    });
    expect(titleOf(created)).toBe('Draft the v5 notes');

    const viaDatabase = await notion.pages.create({
      parent: { type: 'database_id', database_id: ada.tasksDatabaseId },
      properties: { Name: { title: [{ text: { content: 'Legacy parent' } }] } },
    });
    if (!isFullPage(viaDatabase)) throw new Error('expected a full page');
    expect(viaDatabase.parent).toMatchObject({ type: 'data_source_id', data_source_id: dataSourceId });

    const updated = await notion.pages.update({
      page_id: created.id,
      properties: { Estimate: { number: 42 }, Done: { checkbox: true } },
    });
    if (!isFullPage(updated)) throw new Error('expected a full page');
    expect(updated.properties.Estimate).toMatchObject({ type: 'number', number: 42 });
    expect(updated.properties.Done).toMatchObject({ type: 'checkbox', checkbox: true });

    const done = await notion.dataSources.query({
      data_source_id: dataSourceId,
      filter: { property: 'Estimate', number: { equals: 42 } },
    });
    expect(done.results.map((r) => r.id)).toEqual([created.id]);

    const archived = await notion.pages.update({ page_id: created.id, in_trash: true });
    expect(archived).toMatchObject({ in_trash: true, archived: true });
    const after = await collectPaginatedAPI(notion.dataSources.query, { data_source_id: dataSourceId });
    expect(after.map((r) => r.id)).not.toContain(created.id);
    const edit = await apiError(
      notion.pages.update({ page_id: created.id, properties: { Estimate: { number: 1 } } }),
    );
    expect(edit.code).toBe(APIErrorCode.ValidationError);
  });

  it('creates a database with its initial data source and edits the schema through the data source', async () => {
    const notion = sdkFor(ADA);
    const db = await notion.databases.create({
      parent: { type: 'page_id', page_id: ada.notesPageId },
      title: [{ text: { content: 'Reading list' } }],
      initial_data_source: { properties: { Book: { title: {} }, Pages: { number: {} } } },
    });
    if (!isFullDatabase(db)) throw new Error('expected a full database');
    const sourceId = db.data_sources[0]?.id ?? '';
    const updated = await notion.dataSources.update({
      data_source_id: sourceId,
      properties: { Pages: { name: 'Page count' }, Read: { checkbox: {} } },
    });
    if (!isFullDataSource(updated)) throw new Error('expected a full data source');
    expect(Object.keys(updated.properties).sort()).toEqual(['Book', 'Page count', 'Read']);
    const row = await notion.pages.create({
      parent: { data_source_id: sourceId },
      properties: { Book: { title: [{ text: { content: 'Sketches' } }] }, Read: { checkbox: true } },
    });
    const rows = await collectPaginatedAPI(notion.dataSources.query, { data_source_id: sourceId });
    expect(rows.map((r) => r.id)).toEqual([row.id]);
    // The schema moved to the data source: the database takes no properties from 2025-09-03 on.
    const schemaOnDatabase = await apiError(
      notion.request({
        path: `databases/${db.id}`,
        method: 'patch',
        body: { properties: { Extra: { rich_text: {} } } },
      }),
    );
    expect(schemaOnDatabase.code).toBe(APIErrorCode.ValidationError);
    const oldQuery = await apiError(
      notion.request({ path: `databases/${db.id}/query`, method: 'post', body: {} }),
    );
    expect(oldQuery.code).toBe(APIErrorCode.InvalidRequestURL);
  });

  it('searches with the data_source filter', async () => {
    const notion = sdkFor(ADA);
    const dataSourceId = await tasksDataSourceId(notion);
    const sources = await notion.search({ filter: { property: 'object', value: 'data_source' } });
    expect(sources.results.map((r) => [r.object, r.id])).toEqual([['data_source', dataSourceId]]);
    const tasks = await notion.search({ query: 'tasks' });
    expect(tasks.results.map((r) => r.object)).toContain('data_source');
    expect(tasks.results.map((r) => r.object)).not.toContain('database');
    const pages = await notion.search({ filter: { property: 'object', value: 'page' }, page_size: 1 });
    expect(pages.results.every((r) => r.object === 'page')).toBe(true);
    expect(pages.has_more).toBe(true);
    const legacyValue = await apiError(
      notion.search({ filter: { property: 'object', value: 'database' as 'data_source' } }),
    );
    expect(legacyValue.code).toBe(APIErrorCode.ValidationError);
    expect(legacyValue.status).toBe(400);
  });

  it('answers errors as the SDK’s APIResponseError with Notion’s codes', async () => {
    const notion = sdkFor(ADA);
    const missing = await apiError(
      notion.dataSources.retrieve({ data_source_id: '00000000-0000-4000-8000-000000000000' }),
    );
    expect(missing.code).toBe(APIErrorCode.ObjectNotFound);
    expect(missing.status).toBe(404);
    // A database id is not a data source id.
    const wrongId = await apiError(notion.dataSources.query({ data_source_id: ada.tasksDatabaseId }));
    expect(wrongId.code).toBe(APIErrorCode.ObjectNotFound);
    const unknownProperty = await apiError(
      notion.dataSources.query({
        data_source_id: await tasksDataSourceId(notion),
        filter: { property: 'Nope', checkbox: { equals: true } },
      }),
    );
    expect(unknownProperty.code).toBe(APIErrorCode.ValidationError);
    const unauthorized = new Client({
      auth: 'not-a-token',
      baseUrl: emu.urls.notion,
      logLevel: LogLevel.ERROR,
      retry: false,
    });
    const denied = await apiError(unauthorized.databases.retrieve({ database_id: ada.tasksDatabaseId }));
    expect(denied.code).toBe(APIErrorCode.Unauthorized);
    // Under 2022-06-28 there are no data sources.
    const legacy = await apiError(
      sdkFor(ADA, '2022-06-28').dataSources.retrieve({ data_source_id: await tasksDataSourceId(notion) }),
    );
    expect(legacy.code).toBe(APIErrorCode.InvalidRequestURL);
  });

  it('refuses an unsupported Notion-Version as Notion does', async () => {
    const error = await apiError(
      sdkFor(ADA, '2024-01-01').databases.retrieve({ database_id: ada.tasksDatabaseId }),
    );
    expect(error.status).toBe(400);
    expect(error.code).toBe(APIErrorCode.ValidationError);
    expect(error.message).toContain('Notion-Version header failed validation');
    expect(error.message).toContain('"2024-01-01"');
  });
});
