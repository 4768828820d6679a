import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import {
  expectRateLimited,
  expectRevokedAccountNotActive,
  expectUpstreamError,
  type FieldError,
  notFound,
  toolHarness,
  upstreamRequests,
} from './helpers/tools.js';

const ADA = 'ada00000-0000-4000-8000-000000000001';
const GRACE = '9ace0000-0000-4000-8000-000000000002';
const NOTES = '9adbce3c-958d-4ca1-8679-b7b8efbfb488';
const ROADMAP = '6042b18c-8264-48b6-99d8-01794faa2b55';
const TASKS = '39fbdf12-08c0-4b0b-95e8-06be30a24a4a';
const MISSING = '0b0b0b0b-0b0b-4b0b-8b0b-0b0b0b0b0b0b';
const ID = 'ada';

let t: TestGateway;

/** Requests that reached the Notion API routes of the emulator (OAuth excluded), optionally of one kind. */
const notionRoute =
  (filter = '') =>
  (key: string) =>
    key.includes('/notion/v1/') && !key.includes('/oauth/') && key.includes(filter);

/** `refused` runs a tool that must be refused as invalid_input before any request to Notion. */
const {
  control,
  run,
  expectInvalid: refused,
} = toolHarness({ gateway: () => t, identifier: ID, route: notionRoute() });

function notionRequests(filter = ''): number {
  return upstreamRequests(control(), notionRoute(filter));
}

beforeAll(async () => {
  t = await startTestGateway(BACKENDS[0]!);
  await sandboxAccount(t, { provider: 'notion', identifier: ID, userId: ADA });
});

afterAll(async () => {
  await t?.close();
});

describe('notes_ tools: input validation before any upstream request', () => {
  it.each([
    ['notes_block_delete', {}, '/tool_input/block_id'],
    ['notes_block_update', { block_id: NOTES, type: 'paragraph' }, '/tool_input/text'],
    ['notes_comment_create', { parent: { page_id: NOTES } }, '/tool_input/comment'],
    ['notes_comment_retrieve', {}, '/tool_input/comment_id'],
    ['notes_comments_fetch', {}, '/tool_input/block_id'],
    ['notes_database_create', { parent_page_id: ROADMAP, title: 'X' }, '/tool_input/properties'],
    ['notes_database_fetch', {}, '/tool_input/database_id'],
    ['notes_database_insert_row', { database_id: TASKS }, '/tool_input/properties'],
    ['notes_database_property_retrieve', { property_id: 'title' }, '/tool_input/database_id'],
    ['notes_database_query', {}, '/tool_input/database_id'],
    ['notes_database_update', { title: 'X' }, '/tool_input/database_id'],
    ['notes_page_content_append', { page_id: NOTES }, '/tool_input/blocks'],
    ['notes_page_content_get', {}, '/tool_input/block_id'],
    ['notes_page_get', {}, '/tool_input/page_id'],
    ['notes_page_update', { archived: true }, '/tool_input/page_id'],
    ['notes_comment_create', { parent: {}, text: 'x' }, '/tool_input/parent/page_id'],
  ])('%s without a required parameter → invalid_input at %s', async (tool, input, path) => {
    await refused(tool, input, path, 'is required');
  });

  it.each([
    ['notes_user_list', { page_size: '10' }, '/tool_input/page_size', 'must be a number'],
    ['notes_user_list', { page_size: 0 }, '/tool_input/page_size', '>= 1'],
    ['notes_user_list', { page_size: 0.5 }, '/tool_input/page_size', '>= 1'],
    ['notes_page_content_get', { block_id: NOTES, page_size: 100.5 }, '/tool_input/page_size', '<= 100'],
    [
      'notes_comments_fetch',
      { block_id: NOTES, page_size: 2.5 },
      '/tool_input/page_size',
      'must be an integer',
    ],
    ['notes_data_fetch', { page_size: 101 }, '/tool_input/page_size', '<= 100'],
    ['notes_data_fetch', { object: 'block' }, '/tool_input/object', 'must be one of: page, database'],
    ['notes_data_fetch', { query: 42 }, '/tool_input/query', 'must be a string'],
    ['notes_comments_fetch', { block_id: NOTES, start_cursor: '' }, '/tool_input/start_cursor', undefined],
    ['notes_page_get', { page_id: 'not-an-id' }, '/tool_input/page_id', 'notion.so URL'],
    [
      'notes_page_get',
      { page_id: 'https://example.com/9adbce3c958d4ca18679b7b8efbfb488' },
      '/tool_input/page_id',
      undefined,
    ],
    ['notes_page_get', { page_id: NOTES, extra: 1 }, '/tool_input/extra', 'is not a known field'],
    ['notes_page_update', { page_id: NOTES, archived: 'yes' }, '/tool_input/archived', 'must be a boolean'],
    ['notes_page_update', { page_id: NOTES, cover: 'not a url' }, '/tool_input/cover', undefined],
    ['notes_page_content_append', { page_id: NOTES, blocks: {} }, '/tool_input/blocks', 'must be an array'],
    ['notes_page_content_append', { page_id: NOTES, blocks: [] }, '/tool_input/blocks', undefined],
    [
      'notes_page_content_append',
      { page_id: NOTES, blocks: [{ type: 'table', text: 'x' }] },
      '/tool_input/blocks/0/type',
      'must be one of: paragraph',
    ],
    [
      'notes_page_content_append',
      { page_id: NOTES, blocks: [{ type: 'paragraph', text: 5 }] },
      '/tool_input/blocks/0/text',
      'must be a string',
    ],
    ['notes_comment_create', { parent: 'page', text: 'x' }, '/tool_input/parent', 'must be an object'],
    ['notes_database_query', { database_id: TASKS, sorts: {} }, '/tool_input/sorts', 'must be an array'],
    [
      'notes_database_query',
      { database_id: TASKS, sorts: [{ property: 'Due', direction: 'up' }] },
      '/tool_input/sorts/0/direction',
      'must be one of: ascending, descending',
    ],
    [
      'notes_database_insert_row',
      { database_id: TASKS, properties: {} },
      '/tool_input/properties',
      undefined,
    ],
  ])('%s with %j → invalid_input at %s', async (tool, input, path, message) => {
    await refused(tool, input, path, message);
  });

  it('notes_page_create: exactly one of database_id or parent_page_id, quoting rule 4', async () => {
    const rule =
      'Provide exactly one of "database_id" or "parent_page_id" (rule: notes_page_create takes database_id or parent_page_id, never both).';
    const both = await refused(
      'notes_page_create',
      { database_id: TASKS, parent_page_id: ROADMAP, properties: { Name: 'x' } },
      '/tool_input/parent_page_id',
      rule,
    );
    expect(both.detail).toContain('rule: notes_page_create takes database_id or parent_page_id, never both');
    await refused('notes_page_create', { title: 'Orphan' }, '/tool_input', rule);
  });

  it('notes_page_create: database_id needs properties; the title shortcut is for child pages, given once', async () => {
    await refused(
      'notes_page_create',
      { database_id: TASKS },
      '/tool_input/properties',
      /rule: when database_id is given, properties is required/,
    );
    await refused(
      'notes_page_create',
      { database_id: TASKS, title: 'x', properties: { Name: 'x' } },
      '/tool_input/title',
      /rule: a database row's title is its title column/,
    );
    await refused(
      'notes_page_create',
      { parent_page_id: ROADMAP, title: 'x', properties: { title: 'y' } },
      '/tool_input/title',
      /give it once/,
    );
  });

  it('a caller-supplied _parent is refused (the gateway computes it)', async () => {
    const rule = /rule: "_parent" is computed by the gateway from database_id or parent_page_id/;
    await refused(
      'notes_database_insert_row',
      { database_id: TASKS, properties: { Name: 'x' }, _parent: { database_id: TASKS } },
      '/tool_input/_parent',
      rule,
    );
    await refused(
      'notes_page_create',
      { parent_page_id: ROADMAP, title: 'x', _parent: { page_id: ROADMAP } },
      '/tool_input/_parent',
      rule,
    );
  });

  it('notes_database_query: each sort has exactly one of property or timestamp, plus direction', async () => {
    const rule =
      /Provide exactly one of "property" or "timestamp" \(rule: each sort item holds exactly one of property or timestamp \(last_edited_time or created_time\), plus direction\)/;
    await refused(
      'notes_database_query',
      {
        database_id: TASKS,
        sorts: [
          { property: 'Due', direction: 'ascending' },
          { property: 'Due', timestamp: 'created_time', direction: 'ascending' },
        ],
      },
      '/tool_input/sorts/1/timestamp',
      rule,
    );
    await refused(
      'notes_database_query',
      { database_id: TASKS, sorts: [{ direction: 'ascending' }] },
      '/tool_input/sorts/0',
      rule,
    );
    await refused(
      'notes_database_query',
      { database_id: TASKS, sorts: [{ property: 'Due' }] },
      '/tool_input/sorts/0/direction',
      'is required',
    );
    await refused(
      'notes_database_query',
      { database_id: TASKS, sorts: [{ timestamp: 'edited_time', direction: 'ascending' }] },
      '/tool_input/sorts/0/timestamp',
      'must be one of: created_time, last_edited_time',
    );
  });

  it('notes_comment_create: exactly one of parent or discussion_id', async () => {
    const rule = /Provide exactly one of "parent" or "discussion_id"/;
    await refused('notes_comment_create', { text: 'x' }, '/tool_input', rule);
    await refused(
      'notes_comment_create',
      { parent: { page_id: NOTES }, discussion_id: NOTES, text: 'x' },
      '/tool_input/discussion_id',
      rule,
    );
  });

  it('block rules: language only on code blocks, checked only on to-dos', async () => {
    await refused(
      'notes_page_content_append',
      {
        page_id: NOTES,
        blocks: [
          { type: 'code', text: 'x' },
          { type: 'paragraph', text: 'x', language: 'python' },
        ],
      },
      '/tool_input/blocks/1/language',
      /rule: only code blocks have a language/,
    );
    await refused(
      'notes_block_update',
      { block_id: NOTES, type: 'quote', text: 'x', checked: true },
      '/tool_input/checked',
      /rule: only to-do blocks can be checked/,
    );
  });

  it('database schema rules: exactly one title column, one type per column; updates must change something', async () => {
    await refused(
      'notes_database_create',
      { parent_page_id: ROADMAP, title: 'X', properties: { Notes: 'rich_text' } },
      '/tool_input/properties',
      /rule: a database has exactly one title column; found 0/,
    );
    await refused(
      'notes_database_create',
      { parent_page_id: ROADMAP, title: 'X', properties: { Name: { title: {}, rich_text: {} } } },
      '/tool_input/properties/Name',
      /exactly one column type/,
    );
    await refused(
      'notes_database_create',
      { parent_page_id: ROADMAP, title: 'X', properties: { Name: 'titel' } },
      '/tool_input/properties/Name',
    );
    await refused(
      'notes_database_update',
      { database_id: TASKS },
      '/tool_input',
      /rule: an update must change something/,
    );
    await refused(
      'notes_database_update',
      { database_id: TASKS, properties: { Estimate: {} } },
      '/tool_input/properties/Estimate',
      /rename/,
    );
    await refused(
      'notes_page_update',
      { page_id: NOTES },
      '/tool_input',
      /rule: an update must change something/,
    );
  });

  it('notes_block_update refuses another type than the block has, after reading it and before updating', async () => {
    const state = control().state<{
      workspaces: Map<string, { blocks: Map<string, { type: string; id: string }> }>;
    }>('notion');
    const heading = [...state.workspaces.get(ADA)!.blocks.values()].find((b) => b.type === 'heading_1')!;
    const reads = notionRequests('GET /');
    const patches = notionRequests('PATCH /');
    const res = await run('notes_block_update', { block_id: heading.id, type: 'paragraph', text: 'x' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_input');
    expect(res.body.errors).toEqual([
      {
        path: '/tool_input/type',
        message: `must be the block's existing type "heading_1" (rule: type must equal the block's existing type)`,
      },
    ]);
    expect(res.body.detail).toContain('is a heading_1 block');
    expect(notionRequests('GET /')).toBe(reads + 1);
    expect(notionRequests('PATCH /')).toBe(patches);
  });

  it('plain values that do not fit their column are refused before the row is created', async () => {
    const creates = notionRequests('POST /notion/v1/pages');
    const res = await run('notes_database_insert_row', {
      database_id: TASKS,
      properties: { Name: 'x', Estimate: 'three', Colour: 'red' },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_input');
    const errors = res.body.errors as FieldError[];
    expect(errors.map((e) => e.path).sort()).toEqual([
      '/tool_input/properties/Colour',
      '/tool_input/properties/Estimate',
    ]);
    expect(errors.find((e) => e.path.endsWith('Colour'))!.message).toContain('"Estimate" (number)');
    expect(notionRequests('POST /notion/v1/pages')).toBe(creates);
  });
});

describe('notes_ tools: provider errors', () => {
  it("an unknown id → upstream_not_found with Notion's message", async () => {
    const res = await run('notes_page_get', { page_id: MISSING });
    expectUpstreamError(res, notFound(`Could not find page with ID: ${MISSING}`));
    expect(res.body.retryable).toBe(false);
  });

  it('an unknown comment or property → upstream_not_found', async () => {
    const res = await run('notes_comment_retrieve', { comment_id: MISSING });
    expectUpstreamError(res, notFound(`Could not find comment with ID: ${MISSING}`));
    expect((res.body.upstream as { body: { code: string } }).body.code).toBe('object_not_found');
    // A comment that exists, but not on the block an earlier caller names.
    const state = control().state<{
      workspaces: Map<string, { comments: Array<{ id: string; parent: { page_id?: string } }> }>;
    }>('notion');
    const onNotes = state.workspaces.get(ADA)!.comments.find((c) => c.parent.page_id === NOTES)!;
    const elsewhere = await run('notes_comment_retrieve', { comment_id: onNotes.id, block_id: ROADMAP });
    expectUpstreamError(elsewhere, { status: 404, code: 'upstream_not_found', detail: 'not on block' });
    const missing = await run('notes_database_property_retrieve', {
      database_id: TASKS,
      property_id: ['Status', 'Nope'],
    });
    expectUpstreamError(missing, { status: 404, code: 'upstream_not_found', detail: '"Nope"' });
  });

  it('Notion refusing the request → upstream_validation with its message', async () => {
    const res = await run('notes_database_insert_row', {
      database_id: TASKS,
      properties: { Name: { title: [{ text: { content: 'x' } }] }, Status: { status: { name: 'Nope' } } },
    });
    expectUpstreamError(res, {
      status: 400,
      code: 'upstream_validation',
      detail: 'Status option "Nope" does not exist',
    });
    expect((res.body.upstream as { body: { code: string } }).body.code).toBe('validation_error');
  });

  it('429 with Retry-After → upstream_rate_limited with retry_after_ms', async () => {
    const body = {
      object: 'error',
      status: 429,
      code: 'rate_limited',
      message: 'You have been rate limited.',
    };
    // A POST is not retried by the gateway: the 429 comes straight back.
    await expectRateLimited(
      control(),
      () => run('notes_data_fetch', { query: 'x' }),
      {
        emulator: 'notion',
        method: 'POST',
        path: '^/notion/v1/search',
        status: 429,
        headers: { 'retry-after': '2' },
        body,
      },
      { retryAfterMs: 2000, detail: 'You have been rate limited.' },
    );

    // A GET is retried when Retry-After is short; a long wait is handed back to the caller.
    await expectRateLimited(
      control(),
      () => run('notes_user_list', {}),
      {
        emulator: 'notion',
        method: 'GET',
        path: '^/notion/v1/users',
        status: 429,
        headers: { 'retry-after': '120' },
        body,
        times: 3,
      },
      { retryAfterMs: 120_000 },
    );
    control().clearFaults();
    control().addFault({
      emulator: 'notion',
      method: 'GET',
      path: '^/notion/v1/users',
      status: 429,
      headers: { 'retry-after': '0' },
      body,
      times: 1,
    });
    const retried = await run('notes_user_list', {});
    expect(retried.status).toBe(200);
  });

  it('upstream_version reaches Notion as Notion-Version', async () => {
    const res = await executeTool(t, {
      tool_name: 'notes_page_get',
      identifier: ID,
      tool_input: { page_id: NOTES },
      upstream_version: '2099-01-01',
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('upstream_validation');
    expect(res.body.detail).toContain('"2099-01-01"');
  });

  it('a revoked account → account_not_active with a fresh authorization link', async () => {
    const body = await expectRevokedAccountNotActive(t, {
      provider: 'notion',
      emulator: 'notion',
      identifier: 'grace',
      userId: GRACE,
      works: ['notes_user_list', {}],
      fails: ['notes_page_get', { page_id: 'd77ab1e8-297c-405e-851a-0ee8e9cd9993' }],
    });
    expect(body.account_status).toBe('EXPIRED');
    // Ada's account is unaffected.
    expect((await run('notes_page_get', { page_id: NOTES })).status).toBe(200);
  });
});
