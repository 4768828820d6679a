import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { expectNoUpstreamCall, toolHarness } from './helpers/tools.js';

/** The parts of the Notion emulator's state these tests read. */
interface Tracked {
  id: string;
  parent: Record<string, unknown>;
  inTrash: boolean;
}
interface Block extends Tracked {
  type: string;
  content: Record<string, unknown>;
  childIds: string[];
}
interface Page extends Tracked {
  values: Map<string, unknown>;
  icon: unknown;
  cover: unknown;
  childIds: string[];
}
interface Database extends Tracked {
  title: Array<{ plain_text: string }>;
  description: Array<{ plain_text: string }>;
  schema: Array<{ id: string; name: string; type: string; config: Record<string, unknown> }>;
}
interface Workspace {
  pages: Map<string, Page>;
  blocks: Map<string, Block>;
  databases: Map<string, Database>;
  comments: Array<{
    id: string;
    discussionId: string;
    parent: Record<string, unknown>;
    richText: Array<{ plain_text: string }>;
  }>;
}

const ADA = 'ada00000-0000-4000-8000-000000000001';
const NOTES = '9adbce3c-958d-4ca1-8679-b7b8efbfb488';
const ROADMAP = '6042b18c-8264-48b6-99d8-01794faa2b55';
const TASKS = '39fbdf12-08c0-4b0b-95e8-06be30a24a4a';
const ID = 'ada';

let t: TestGateway;
const { control, run } = toolHarness({ gateway: () => t, identifier: ID });

function ws(): Workspace {
  const state = control().state<{ workspaces: Map<string, Workspace> }>('notion');
  return state.workspaces.get(ADA)!;
}

function text(rich: unknown): string {
  return (rich as Array<{ plain_text: string }>).map((r) => r.plain_text).join('');
}

async function ok(tool_name: string, tool_input: Record<string, unknown>) {
  const res = await run(tool_name, tool_input);
  if (res.status !== 200) throw new Error(`${tool_name}: ${res.status} ${JSON.stringify(res.body)}`);
  expect(res.body.execution_id).toMatch(/^exec_/);
  // biome-ignore lint/suspicious/noExplicitAny: results are asserted as loose JSON
  return res.body.data as Record<string, any>;
}

beforeAll(async () => {
  t = await startTestGateway(BACKENDS[0]!);
  await sandboxAccount(t, { provider: 'notion', identifier: ID, userId: ADA });
});

afterAll(async () => {
  await t?.close();
});

describe('notes_ tools against the Notion emulator', () => {
  it('notes_page_get accepts hyphenated ids, 32 hex characters and page URLs', async () => {
    const hex = NOTES.replaceAll('-', '');
    for (const id of [
      NOTES,
      hex,
      `https://www.notion.so/Analytical-Engine-Notes-${hex}`,
      `https://www.notion.so/ada/${hex}?pvs=4`,
    ]) {
      const page = await ok('notes_page_get', { page_id: id });
      expect(page.id).toBe(NOTES);
      expect(page.object).toBe('page');
      expect(page.request_id).toBeUndefined();
    }
    // A database view URL peeking at a row names the row with ?p=.
    const row = [...ws().pages.values()].find((p) => p.parent.database_id === TASKS)!;
    const peek = await ok('notes_page_get', {
      page_id: `https://www.notion.so/${TASKS.replaceAll('-', '')}?v=${'a'.repeat(32)}&p=${row.id.replaceAll('-', '')}&pm=s`,
    });
    expect(peek.id).toBe(row.id);
  });

  it('notes_page_create creates a child page with icon, cover and content', async () => {
    const page = await ok('notes_page_create', {
      parent_page_id: ROADMAP,
      title: 'Meeting 2025-02-03',
      icon: '📝',
      cover: 'https://example.com/cover.png',
      blocks: [
        { type: 'heading_2', text: 'Agenda' },
        { type: 'code', text: 'SELECT 1;', language: 'sql' },
      ],
    });
    const stored = ws().pages.get(page.id)!;
    expect(stored.parent).toEqual({ type: 'page_id', page_id: ROADMAP });
    expect(text(stored.values.get('title'))).toBe('Meeting 2025-02-03');
    expect(stored.icon).toEqual({ type: 'emoji', emoji: '📝' });
    expect(stored.cover).toEqual({ type: 'external', external: { url: 'https://example.com/cover.png' } });
    const blocks = stored.childIds.map((id) => ws().blocks.get(id)!);
    expect(blocks.map((b) => b.type)).toEqual(['heading_2', 'code']);
    expect(blocks[1]!.content.language).toBe('sql');
    expect(ws().pages.get(ROADMAP)!.childIds).toContain(page.id);
  });

  it('notes_page_create creates a database row from plain values, converted by column type', async () => {
    const page = await ok('notes_page_create', {
      database_id: TASKS.replaceAll('-', ''),
      properties: {
        Name: 'Ship v2',
        Priority: 'High',
        Estimate: 8,
        Done: false,
        Tags: ['Math'],
        Due: '2025-03-01',
      },
      icon: 'https://example.com/icon.png',
    });
    const stored = ws().pages.get(page.id)!;
    expect(stored.parent).toEqual({ type: 'database_id', database_id: TASKS });
    expect(page.properties.Name.title[0].plain_text).toBe('Ship v2');
    expect(page.properties.Priority.select.name).toBe('High');
    expect(page.properties.Estimate.number).toBe(8);
    expect(page.properties.Due.date.start).toBe('2025-03-01');
    expect(stored.icon).toEqual({ type: 'external', external: { url: 'https://example.com/icon.png' } });
  });

  it('notes_page_update changes properties, icon and cover, archives and restores', async () => {
    const created = await ok('notes_database_insert_row', {
      database_id: TASKS,
      properties: { Name: 'Temp' },
    });
    const updated = await ok('notes_page_update', {
      page_id: created.id,
      properties: { Estimate: 5, Done: true },
      title: 'Renamed',
      icon: '✅',
      cover: 'https://example.com/c.png',
    });
    expect(updated.properties.Estimate.number).toBe(5);
    expect(updated.properties.Done.checkbox).toBe(true);
    expect(updated.properties.Name.title[0].plain_text).toBe('Renamed');
    expect(ws().pages.get(created.id)!.icon).toEqual({ type: 'emoji', emoji: '✅' });
    await ok('notes_page_update', { page_id: created.id, icon: null, cover: null });
    expect(ws().pages.get(created.id)!.icon).toBeNull();
    expect(ws().pages.get(created.id)!.cover).toBeNull();
    const archived = await ok('notes_page_update', { page_id: created.id, archived: true });
    expect(archived.archived).toBe(true);
    expect(ws().pages.get(created.id)!.inTrash).toBe(true);
    await ok('notes_page_update', { page_id: created.id, archived: false });
    expect(ws().pages.get(created.id)!.inTrash).toBe(false);
  });

  it('notes_page_content_append adds the ten block types; notes_page_content_get pages through them', async () => {
    const page = await ok('notes_page_create', { parent_page_id: ROADMAP, title: 'Blocks' });
    const blocks = [
      { type: 'paragraph', text: 'p' },
      { type: 'heading_1', text: 'h1' },
      { type: 'heading_2', text: 'h2' },
      { type: 'heading_3', text: 'h3' },
      { type: 'bulleted_list_item', text: 'b' },
      { type: 'numbered_list_item', text: 'n' },
      { type: 'to_do', text: 't', checked: true },
      { type: 'quote', text: 'q' },
      { type: 'callout', text: 'c' },
      { type: 'code', text: 'x = 1', language: 'python' },
    ];
    const appended = await ok('notes_page_content_append', { page_id: page.id, blocks });
    expect(appended.results).toHaveLength(10);
    const stored = ws()
      .pages.get(page.id)!
      .childIds.map((id) => ws().blocks.get(id)!);
    expect(stored.map((b) => b.type)).toEqual(blocks.map((b) => b.type));
    expect(stored.map((b) => text(b.content.rich_text))).toEqual(blocks.map((b) => b.text));
    expect(stored[6]!.content.checked).toBe(true);
    expect(stored[9]!.content.language).toBe('python');

    // Long text is split into 2000-character runs.
    const long = 'a'.repeat(4500);
    const [first] = (
      await ok('notes_page_content_append', {
        page_id: page.id,
        blocks: [{ type: 'paragraph', text: long }],
        after: stored[0]!.id,
      })
    ).results;
    expect((ws().blocks.get(first.id)!.content.rich_text as unknown[]).length).toBe(3);
    expect(ws().pages.get(page.id)!.childIds[1]).toBe(first.id);

    const one = await ok('notes_page_content_get', { page_id: page.id, page_size: 6 });
    expect(one.results).toHaveLength(6);
    expect(one.has_more).toBe(true);
    expect(one.next_page).toEqual({ start_cursor: one.next_cursor });
    const two = await ok('notes_page_content_get', { page_id: page.id, page_size: 6, ...one.next_page });
    expect(two.results).toHaveLength(5);
    expect(two.has_more).toBe(false);
    expect(two.next_page).toBeNull();
  });

  it('notes_block_update replaces text (and language of code); notes_block_delete archives children too', async () => {
    const page = await ok('notes_page_create', {
      parent_page_id: ROADMAP,
      title: 'Edits',
      blocks: [
        { type: 'bulleted_list_item', text: 'old' },
        { type: 'code', text: 'x', language: 'python' },
      ],
    });
    const [itemId, codeId] = ws().pages.get(page.id)!.childIds;
    const updated = await ok('notes_block_update', {
      block_id: itemId,
      type: 'bulleted_list_item',
      text: 'new',
    });
    expect(updated.bulleted_list_item.rich_text[0].plain_text).toBe('new');
    expect(text(ws().blocks.get(itemId!)!.content.rich_text)).toBe('new');
    await ok('notes_block_update', {
      block_id: codeId,
      type: 'code',
      text: 'fn main() {}',
      language: 'rust',
    });
    expect(ws().blocks.get(codeId!)!.content.language).toBe('rust');
    await ok('notes_block_update', { block_id: codeId, type: 'code', text: 'fn x() {}' });
    expect(ws().blocks.get(codeId!)!.content.language).toBe('rust');

    // Delete the seeded toggle: its children go to the trash with it.
    const toggle = [...ws().blocks.values()].find((b) => b.type === 'toggle' && b.childIds.length > 0)!;
    const deleted = await ok('notes_block_delete', { block_id: toggle.id.replaceAll('-', '') });
    expect(deleted.archived).toBe(true);
    expect(ws().blocks.get(toggle.id)!.inTrash).toBe(true);
    for (const child of toggle.childIds) expect(ws().blocks.get(child)!.inTrash).toBe(true);
  });

  it('notes_comment_create starts a discussion and replies; notes_comments_fetch and notes_comment_retrieve read them', async () => {
    const started = await ok('notes_comment_create', { parent: { page_id: ROADMAP }, text: 'First!' });
    expect(started.discussion_id).toBeTruthy();
    const reply = await ok('notes_comment_create', { discussion_id: started.discussion_id, text: 'Reply' });
    expect(reply.discussion_id).toBe(started.discussion_id);
    const stored = ws().comments.filter((c) => c.discussionId === started.discussion_id);
    expect(stored.map((c) => text(c.richText))).toEqual(['First!', 'Reply']);
    expect(stored[1]!.parent).toEqual({ type: 'page_id', page_id: ROADMAP });

    const first = await ok('notes_comments_fetch', { block_id: NOTES, page_size: 3 });
    expect(first.results).toHaveLength(3);
    expect(first.has_more).toBe(true);
    const rest = await ok('notes_comments_fetch', { block_id: NOTES, page_size: 3, ...first.next_page });
    expect(rest.results.length).toBeGreaterThan(0);
    expect(rest.has_more).toBe(false);

    // By its id alone (Notion's GET /v1/comments/{id}); block_id is still accepted from earlier callers.
    const got = await ok('notes_comment_retrieve', { comment_id: reply.id });
    expect(got).toMatchObject({ object: 'comment', id: reply.id, discussion_id: started.discussion_id });
    expect(got.parent).toEqual({ type: 'page_id', page_id: ROADMAP });
    expect(text(got.rich_text)).toBe('Reply');
    expect(got.request_id).toBeUndefined();
    const checked = await ok('notes_comment_retrieve', { comment_id: reply.id, block_id: ROADMAP });
    expect(checked.id).toBe(reply.id);
  });

  it('notes_data_fetch searches pages and databases by title', async () => {
    const found = await ok('notes_data_fetch', { query: 'roadmap' });
    expect(found.results.map((r: { id: string }) => r.id)).toContain(ROADMAP);
    const roadmap = found.results.find((r: { id: string }) => r.id === ROADMAP);
    expect(roadmap).toMatchObject({ object: 'page', title: 'Engine Roadmap' });
    const dbs = await ok('notes_data_fetch', { object: 'database', query: 'tasks' });
    expect(dbs.results.map((r: { object: string }) => r.object)).toEqual(['database']);
    expect(dbs.results[0]).toMatchObject({ id: TASKS, title: 'Tasks' });
    const paged = await ok('notes_data_fetch', { page_size: 1, sort_direction: 'ascending' });
    expect(paged.results).toHaveLength(1);
    expect(paged.next_page).toEqual({ start_cursor: expect.any(String) });
  });

  it('notes_database_create, notes_database_fetch, notes_database_update and notes_database_property_retrieve', async () => {
    const db = await ok('notes_database_create', {
      parent_page_id: ROADMAP,
      title: 'Bugs',
      description: 'Known bugs',
      properties: {
        Name: { title: {} },
        Severity: { select: { options: [{ name: 'High', color: 'red' }, { name: 'Low' }] } },
        Points: 'number',
        Reported: { date: {} },
      },
    });
    const stored = ws().databases.get(db.id)!;
    expect(text(stored.title)).toBe('Bugs');
    expect(text(stored.description)).toBe('Known bugs');
    expect(stored.schema.map((p) => [p.name, p.type])).toEqual([
      ['Name', 'title'],
      ['Severity', 'select'],
      ['Points', 'number'],
      ['Reported', 'date'],
    ]);
    expect(ws().pages.get(ROADMAP)!.childIds).toContain(db.id);

    const fetched = await ok('notes_database_fetch', { database_id: db.id });
    expect(Object.keys(fetched.properties).sort()).toEqual(['Name', 'Points', 'Reported', 'Severity']);

    await ok('notes_database_update', {
      database_id: db.id,
      title: 'Bugs 2025',
      description: 'All of them',
      properties: {
        Points: { name: 'Estimate' },
        Severity: { select: { options: [{ name: 'High' }, { name: 'Low' }, { name: 'Urgent' }] } },
        Owner: 'people',
        Reported: null,
      },
    });
    const after = ws().databases.get(db.id)!;
    expect(text(after.title)).toBe('Bugs 2025');
    expect(text(after.description)).toBe('All of them');
    expect(after.schema.map((p) => p.name).sort()).toEqual(['Estimate', 'Name', 'Owner', 'Severity']);
    const severity = after.schema.find((p) => p.name === 'Severity')!;
    expect((severity.config.options as Array<{ name: string }>).map((o) => o.name)).toEqual([
      'High',
      'Low',
      'Urgent',
    ]);

    const one = await ok('notes_database_property_retrieve', { database_id: db.id, property_id: 'Severity' });
    expect(one.properties).toHaveLength(1);
    expect(one.properties[0]).toMatchObject({ name: 'Severity', type: 'select', id: severity.id });
    const many = await ok('notes_database_property_retrieve', {
      database_id: db.id,
      property_id: ['title', severity.id],
    });
    expect(many.properties.map((p: { name: string }) => p.name)).toEqual(['Name', 'Severity']);
  });

  it('notes_database_insert_row computes the parent and stores the values; notes_database_query sorts and pages', async () => {
    const row = await ok('notes_database_insert_row', {
      database_id: TASKS,
      properties: { Name: 'Query me', Estimate: 100, Tags: 'Math, Writing', Status: 'Done' },
      blocks: [{ type: 'paragraph', text: 'Row content' }],
    });
    const stored = ws().pages.get(row.id)!;
    expect(stored.parent).toEqual({ type: 'database_id', database_id: TASKS });
    expect(row.properties.Estimate.number).toBe(100);
    expect(row.properties.Status.status.name).toBe('Done');
    expect(row.properties.Tags.multi_select.map((o: { name: string }) => o.name)).toEqual([
      'Math',
      'Writing',
    ]);
    expect(text(ws().blocks.get(stored.childIds[0]!)!.content.rich_text)).toBe('Row content');

    // Notion's own value objects pass through without reading the schema.
    const native = await expectNoUpstreamCall(
      control(),
      () =>
        ok('notes_database_insert_row', {
          database_id: TASKS,
          properties: { Name: { title: [{ text: { content: 'Native' } }] }, Estimate: { number: 1 } },
        }),
      (route) => route === 'GET /notion/v1/databases/:database_id',
    );
    expect(native.properties.Estimate.number).toBe(1);

    const top = await ok('notes_database_query', {
      database_id: TASKS,
      sorts: [{ property: 'Estimate', direction: 'descending' }],
      page_size: 2,
    });
    expect(top.results).toHaveLength(2);
    expect(top.results[0].id).toBe(row.id);
    expect(top.has_more).toBe(true);
    const next = await ok('notes_database_query', {
      database_id: TASKS,
      sorts: [{ property: 'Estimate', direction: 'descending' }],
      page_size: 2,
      ...top.next_page,
    });
    expect(next.results[0].properties.Estimate.number).toBeLessThanOrEqual(
      top.results[1].properties.Estimate.number,
    );

    const filtered = await ok('notes_database_query', {
      database_id: TASKS,
      filter: { property: 'Name', title: { equals: 'Query me' } },
      sorts: [{ timestamp: 'created_time', direction: 'ascending' }],
    });
    expect(filtered.results.map((r: { id: string }) => r.id)).toEqual([row.id]);
  });

  it('notes_user_list lists people and bots', async () => {
    const users = await ok('notes_user_list', {});
    const types = new Set(users.results.map((u: { type: string }) => u.type));
    expect(types).toEqual(new Set(['person', 'bot']));
    expect(users.results.map((u: { id: string }) => u.id)).toContain(ADA);
    const first = await ok('notes_user_list', { page_size: 1 });
    expect(first.results).toHaveLength(1);
    expect(first.next_page).toEqual({ start_cursor: first.next_cursor });
  });
});
