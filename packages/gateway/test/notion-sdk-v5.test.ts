import {
  APIErrorCode,
  APIResponseError,
  Client,
  collectPaginatedAPI,
  isFullDatabase,
  isFullDataSource,
  isFullPage,
  LogLevel,
} from '@notionhq/client-v5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { toolHarness, upstreamRequests } from './helpers/tools.js';

// Notion API version 2025-09-03 (databases hold data sources) through the gateway: the notes_
// database tools keep doing what the specification says when the caller picks that version, and
// Notion's official SDK 5.x works through the proxy.

const ADA = 'ada00000-0000-4000-8000-000000000001';
const ROADMAP = '6042b18c-8264-48b6-99d8-01794faa2b55';
const TASKS = '39fbdf12-08c0-4b0b-95e8-06be30a24a4a';
const ID = 'notion-v5';
const V5 = '2025-09-03';

describe.each(BACKENDS)('Notion 2025-09-03 through the gateway, on $name', (backend) => {
  let t: TestGateway;
  let connection: string;
  const { control, run } = toolHarness({ gateway: () => t, identifier: ID });

  beforeAll(async () => {
    t = await startTestGateway(backend);
    ({ connection } = await sandboxAccount(t, { provider: 'notion', identifier: ID, userId: ADA }));
  });
  afterAll(async () => {
    await t?.close();
  });

  // biome-ignore lint/suspicious/noExplicitAny: results are asserted as loose JSON
  async function ok(tool: string, input: Record<string, unknown>): Promise<Record<string, any>> {
    const res = await run(tool, { ...input, upstream_version: V5 });
    if (res.status !== 200) throw new Error(`${tool}: ${res.status} ${JSON.stringify(res.body)}`);
    // biome-ignore lint/suspicious/noExplicitAny: results are asserted as loose JSON
    return res.body.data as Record<string, any>;
  }

  /** The official SDK 5.x pointed at the proxy, routing headers added by a custom fetch. */
  async function sdk(): Promise<Client> {
    const routed: typeof fetch = (url, init) => {
      const headers = new Headers(init?.headers);
      headers.set('connection_name', connection);
      headers.set('identifier', ID);
      return fetch(url, { ...init, headers });
    };
    return new Client({
      auth: await t.token(),
      baseUrl: `${t.url}/proxy`,
      fetch: routed,
      logLevel: LogLevel.ERROR,
      retry: false,
    });
  }

  describe('notes_ database tools with upstream_version 2025-09-03', () => {
    it('notes_database_fetch shows the schema (from the data source) and the data source', async () => {
      const db = await ok('notes_database_fetch', { database_id: TASKS });
      expect(db.object).toBe('database');
      expect(db.id).toBe(TASKS);
      expect(db.data_sources).toHaveLength(1);
      expect(Object.keys(db.properties)).toEqual(expect.arrayContaining(['Name', 'Status', 'Estimate']));
    });

    it('notes_database_query queries the data source, with filter, sorts and paging', async () => {
      const before = upstreamRequests(control(), '/v1/data_sources/');
      const first = await ok('notes_database_query', {
        database_id: TASKS,
        sorts: [{ property: 'Estimate', direction: 'descending' }],
        page_size: 2,
      });
      expect(upstreamRequests(control(), '/v1/data_sources/')).toBeGreaterThan(before);
      expect(first.results).toHaveLength(2);
      expect(first.has_more).toBe(true);
      expect(first.results[0].parent).toMatchObject({ type: 'data_source_id', database_id: TASKS });
      const rest = await ok('notes_database_query', {
        database_id: TASKS,
        sorts: [{ property: 'Estimate', direction: 'descending' }],
        ...first.next_page,
      });
      expect(rest.has_more).toBe(false);
      const all = [...first.results, ...rest.results].map((r: { id: string }) => r.id);
      expect(new Set(all).size).toBe(5);
      const done = await ok('notes_database_query', {
        database_id: TASKS,
        filter: { property: 'Done', checkbox: { equals: true } },
      });
      expect(done.results.length).toBeGreaterThan(0);
      for (const row of done.results) expect(row.properties.Done.checkbox).toBe(true);
    });

    it('notes_database_property_retrieve reads one property of every row', async () => {
      const res = await ok('notes_database_property_retrieve', { database_id: TASKS, property_id: 'Status' });
      expect(res.properties).toEqual([expect.objectContaining({ name: 'Status', type: 'status' })]);
      expect(res.results).toHaveLength(5);
      for (const row of res.results) expect(Object.keys(row.properties)).toEqual(['Status']);
    });

    it('creates a database, inserts rows (plain values too), updates its columns and finds it', async () => {
      const db = await ok('notes_database_create', {
        parent_page_id: ROADMAP,
        title: 'Parts v5',
        properties: { Part: 'title', Count: 'number' },
      });
      expect(db.data_sources).toHaveLength(1);
      const plain = await ok('notes_database_insert_row', {
        database_id: db.id,
        properties: { title: 'Cog', Count: 12 },
      });
      expect(plain.parent).toMatchObject({ type: 'data_source_id', database_id: db.id });
      const shaped = await ok('notes_page_create', {
        database_id: db.id,
        properties: { title: { title: [{ text: { content: 'Spring' } }] } },
      });
      expect(shaped.parent).toMatchObject({ type: 'data_source_id', database_id: db.id });
      const updated = await ok('notes_database_update', {
        database_id: db.id,
        title: 'Parts v5 (2)',
        properties: { Count: { name: 'Quantity' } },
      });
      expect(Object.keys(updated.properties).sort()).toEqual(['Part', 'Quantity']);
      const rows = await ok('notes_database_query', { database_id: db.id });
      expect(rows.results.map((r: { id: string }) => r.id).sort()).toEqual([plain.id, shaped.id].sort());
      const found = await ok('notes_data_fetch', { query: 'Parts v5', object: 'database' });
      expect(found.results).toEqual([
        expect.objectContaining({ object: 'data_source', title: 'Parts v5 (2)' }),
      ]);
    });
  });

  describe('@notionhq/client 5.x through the proxy', () => {
    it('reads a database and its data source, queries with paging, creates a page', async () => {
      const notion = await sdk();
      const db = await notion.databases.retrieve({ database_id: TASKS });
      if (!isFullDatabase(db)) throw new Error('expected a full database');
      const dataSourceId = db.data_sources[0]?.id ?? '';
      const source = await notion.dataSources.retrieve({ data_source_id: dataSourceId });
      if (!isFullDataSource(source)) throw new Error('expected a full data source');
      expect(source.parent).toEqual({ type: 'database_id', database_id: TASKS });

      const first = await notion.dataSources.query({ data_source_id: dataSourceId, page_size: 2 });
      expect(first.has_more).toBe(true);
      const rows = await collectPaginatedAPI(notion.dataSources.query, {
        data_source_id: dataSourceId,
        page_size: 2,
      });
      expect(rows).toHaveLength(5);

      const page = await notion.pages.create({
        parent: { type: 'data_source_id', data_source_id: dataSourceId },
        properties: { Name: { title: [{ text: { content: 'Through the proxy' } }] } },
      });
      if (!isFullPage(page)) throw new Error('expected a full page');
      expect(page.parent).toEqual({
        type: 'data_source_id',
        data_source_id: dataSourceId,
        database_id: TASKS,
      });
      const after = await collectPaginatedAPI(notion.dataSources.query, { data_source_id: dataSourceId });
      expect(after.map((r) => r.id)).toContain(page.id);
      await notion.pages.update({ page_id: page.id, in_trash: true });
    });

    it('passes Notion’s errors through as the SDK’s APIResponseError', async () => {
      const notion = await sdk();
      const error = await notion.dataSources
        .retrieve({ data_source_id: '00000000-0000-4000-8000-000000000000' })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(APIResponseError);
      expect((error as APIResponseError).code).toBe(APIErrorCode.ObjectNotFound);
    });
  });
});
