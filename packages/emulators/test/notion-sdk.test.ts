import {
  APIErrorCode,
  APIResponseError,
  Client,
  collectPaginatedAPI,
  isFullBlock,
  isFullDatabase,
  isFullPage,
  iteratePaginatedAPI,
  LogLevel,
} from '@notionhq/client';
import type {
  BlockObjectResponse,
  DatabaseObjectResponse,
  PageObjectResponse,
} from '@notionhq/client/build/src/api-endpoints.js';
import { describe, expect, it } from 'vitest';
import { notionSeedIds } from '../src/providers/notion/index.js';
import { useEmulators } from './helpers/emulators.js';

/**
 * Conformance: Notion's official SDK (@notionhq/client 4.0.1, Notion-Version 2022-06-28) talks to
 * the emulator. Where the SDK and the emulator disagree, the emulator is wrong.
 */

const ADA = 'ada00000-0000-4000-8000-000000000001';
const GRACE = '9ace0000-0000-4000-8000-000000000002';
const ada = notionSeedIds(ADA);

const emu = useEmulators({ modules: ['notion'] });

function sdkFor(userId: string, clientId?: string): Client {
  const { access_token } = emu.control.issueToken('notion', { userId, clientId });
  return new Client({ auth: access_token, baseUrl: emu.urls.notion, logLevel: LogLevel.ERROR });
}

async function apiError(promise: Promise<unknown>): Promise<APIResponseError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(APIResponseError);
  return error as APIResponseError;
}

function plain(richText: Array<{ plain_text: string }>): string {
  return richText.map((t) => t.plain_text).join('');
}

function titleOf(page: PageObjectResponse): string {
  const title = Object.values(page.properties).find((p) => p.type === 'title');
  return title?.type === 'title' ? plain(title.title) : '';
}

describe('users', () => {
  it('users.me returns the integration bot owned by the signed-in user', async () => {
    const me = await sdkFor(ADA).users.me({});
    expect(me.object).toBe('user');
    expect(me.type).toBe('bot');
    if (me.type !== 'bot' || !('owner' in me.bot)) throw new Error('expected a bot with an owner');
    expect(me.bot.owner).toMatchObject({
      type: 'user',
      user: {
        object: 'user',
        id: ADA,
        name: 'Ada Lovelace',
        type: 'person',
        person: { email: 'ada.lovelace@example.com' },
      },
    });
    expect(me.bot.workspace_name).toBe("Ada's Workspace");
  });

  it('each client is its own bot; list and retrieve show people and bots', async () => {
    const first = await sdkFor(ADA, 'client-one').users.me({});
    const second = await sdkFor(ADA, 'client-two').users.me({});
    expect(first.id).not.toBe(second.id);

    const notion = sdkFor(ADA, 'client-one');
    const users = await collectPaginatedAPI(notion.users.list, { page_size: 1 });
    const people = users.filter((u) => u.type === 'person');
    expect(people.map((u) => u.name)).toEqual(['Ada Lovelace', 'Charles Babbage']);
    expect(users.some((u) => u.id === first.id && u.type === 'bot')).toBe(true);

    const retrieved = await notion.users.retrieve({ user_id: ADA.replace(/-/g, '') });
    expect(retrieved).toMatchObject({
      id: ADA,
      type: 'person',
      person: { email: 'ada.lovelace@example.com' },
    });
    const missing = await apiError(notion.users.retrieve({ user_id: GRACE }));
    expect(missing.code).toBe(APIErrorCode.ObjectNotFound);
    expect(missing.status).toBe(404);
  });
});

describe('search', () => {
  it('finds pages and databases by title, filtered by object type, newest edit first', async () => {
    const notion = sdkFor(ADA);
    const all = await notion.search({});
    expect(all.object).toBe('list');
    expect(all.type).toBe('page_or_database');
    const stamps = all.results.map((r) => ('last_edited_time' in r ? r.last_edited_time : ''));
    expect([...stamps].sort().reverse()).toEqual(stamps);

    const roadmap = await notion.search({ query: 'roadmap', filter: { property: 'object', value: 'page' } });
    expect(roadmap.results).toHaveLength(1);
    const page = roadmap.results[0]!;
    if (!isFullPage(page)) throw new Error('expected a full page');
    expect(page.id).toBe(ada.roadmapPageId);
    expect(titleOf(page)).toBe('Engine Roadmap');

    const dbs = await notion.search({ filter: { property: 'object', value: 'database' } });
    expect(dbs.results.map((r) => r.id)).toEqual([ada.tasksDatabaseId]);

    const oldestFirst = await notion.search({
      sort: { timestamp: 'last_edited_time', direction: 'ascending' },
    });
    expect(oldestFirst.results[0]?.id).toBe(ada.notesPageId);
  });

  it('keeps each workspace to itself', async () => {
    const grace = await sdkFor(GRACE).search({ query: 'Engine' });
    expect(grace.results).toHaveLength(0);
    const own = await sdkFor(GRACE).search({ query: 'COBOL' });
    expect(own.results).toHaveLength(1);
    const error = await apiError(sdkFor(GRACE).pages.retrieve({ page_id: ada.notesPageId }));
    expect(error.code).toBe(APIErrorCode.ObjectNotFound);
  });

  it('pages through results with cursors', async () => {
    const notion = sdkFor(ADA);
    const first = await notion.search({ page_size: 3 });
    expect(first.results).toHaveLength(3);
    expect(first.has_more).toBe(true);
    expect(first.next_cursor).toEqual(expect.any(String));
    const all = await collectPaginatedAPI(notion.search, { page_size: 3 });
    const everything = await notion.search({});
    expect(all.map((r) => r.id)).toEqual(everything.results.map((r) => r.id));
  });
});

describe('blocks', () => {
  it('lists a page’s blocks with typed rich text content and nested children', async () => {
    const notion = sdkFor(ADA);
    const blocks = (await collectPaginatedAPI(notion.blocks.children.list, {
      block_id: ada.notesPageId,
      page_size: 4,
    })) as BlockObjectResponse[];
    expect(blocks.map((b) => b.type)).toEqual([
      'heading_1',
      'paragraph',
      'heading_2',
      'to_do',
      'to_do',
      'to_do',
      'heading_2',
      'bulleted_list_item',
      'bulleted_list_item',
      'code',
      'toggle',
      'divider',
      'quote',
    ]);
    const paragraph = blocks[1]!;
    if (paragraph.type !== 'paragraph') throw new Error('expected a paragraph');
    expect(paragraph.paragraph.rich_text[0]).toMatchObject({
      type: 'text',
      text: { content: expect.stringContaining('Analytical Engine'), link: null },
      annotations: { bold: false, italic: false, code: false, color: 'default' },
      href: null,
    });
    expect(paragraph.paragraph.rich_text[1]).toMatchObject({
      href: 'https://example.com/notes',
      annotations: { italic: true },
    });
    expect(paragraph.parent).toEqual({ type: 'page_id', page_id: ada.notesPageId });
    const todo = blocks[3]!;
    expect(todo.type === 'to_do' && todo.to_do.checked).toBe(true);
    const code = blocks[9]!;
    expect(code.type === 'code' && code.code.language).toBe('python');
    const toggle = blocks[10]!;
    expect(toggle.id).toBe(ada.toggleBlockId);
    expect(toggle.has_children).toBe(true);
    expect(blocks[0]!.has_children).toBe(false);

    const inner = await notion.blocks.children.list({ block_id: toggle.id });
    expect(inner.type).toBe('block');
    expect(inner.results.map((b) => (isFullBlock(b) ? b.type : ''))).toEqual([
      'paragraph',
      'numbered_list_item',
      'numbered_list_item',
    ]);
    const first = inner.results[0]!;
    expect(isFullBlock(first) && first.parent).toEqual({ type: 'block_id', block_id: toggle.id });
  });

  it('shows child pages and databases as blocks', async () => {
    const notion = sdkFor(ADA);
    const children = (await notion.blocks.children.list({ block_id: ada.roadmapPageId }))
      .results as BlockObjectResponse[];
    expect(children.map((b) => b.type)).toEqual(['paragraph', 'child_database', 'child_page']);
    const db = children[1]!;
    expect(db.id).toBe(ada.tasksDatabaseId);
    expect(db.type === 'child_database' && db.child_database.title).toBe('Tasks');
    const page = await notion.blocks.retrieve({ block_id: ada.meetingPageId });
    expect(isFullBlock(page) && page.type === 'child_page' && page.child_page.title).toBe('Meeting Notes');
  });

  it('updates a block’s content and refuses to change its type', async () => {
    const notion = sdkFor(ADA);
    const me = await notion.users.me({});
    const updated = await notion.blocks.update({
      block_id: ada.introBlockId,
      paragraph: { rich_text: [{ text: { content: 'Rewritten' }, annotations: { bold: true } }] },
    });
    if (!isFullBlock(updated) || updated.type !== 'paragraph') throw new Error('expected a paragraph');
    expect(plain(updated.paragraph.rich_text)).toBe('Rewritten');
    expect(updated.paragraph.rich_text[0]?.annotations.bold).toBe(true);
    expect(updated.last_edited_by.id).toBe(me.id);
    const todos = (await notion.blocks.children.list({ block_id: ada.notesPageId }))
      .results as BlockObjectResponse[];
    const todo = todos.find((b) => b.type === 'to_do' && !b.to_do.checked)!;
    const checked = await notion.blocks.update({ block_id: todo.id, to_do: { checked: true } });
    // A partial update keeps the fields it does not name.
    expect(isFullBlock(checked) && checked.type === 'to_do' && checked.to_do).toMatchObject({
      checked: true,
      rich_text: todo.type === 'to_do' ? todo.to_do.rich_text : [],
    });
    const again = await notion.blocks.retrieve({ block_id: ada.introBlockId });
    expect(isFullBlock(again) && again.type === 'paragraph' && plain(again.paragraph.rich_text)).toBe(
      'Rewritten',
    );

    const error = await apiError(
      notion.blocks.update({
        block_id: ada.introBlockId,
        heading_1: { rich_text: [{ text: { content: 'x' } }] },
      }),
    );
    expect(error.status).toBe(400);
    expect(error.code).toBe(APIErrorCode.ValidationError);
  });

  it('appends children at the end or after a given block, with nested children', async () => {
    const notion = sdkFor(ADA);
    const appended = await notion.blocks.children.append({
      block_id: ada.notesPageId,
      children: [
        { to_do: { rich_text: [{ text: { content: 'New task' } }], checked: false } },
        {
          bulleted_list_item: {
            rich_text: [{ text: { content: 'Parent item' } }],
            children: [{ paragraph: { rich_text: [{ text: { content: 'Nested' } }] } }],
          },
        },
      ],
    });
    expect(appended.type).toBe('block');
    expect(appended.results).toHaveLength(2);
    const [todo, bullet] = appended.results as BlockObjectResponse[];
    expect(todo!.type).toBe('to_do');
    expect(bullet!.has_children).toBe(true);
    const nested = await notion.blocks.children.list({ block_id: bullet!.id });
    expect(nested.results).toHaveLength(1);

    const inserted = await notion.blocks.children.append({
      block_id: ada.notesPageId,
      after: ada.introBlockId,
      children: [{ heading_3: { rich_text: [{ text: { content: 'Inserted' } }] } }],
    });
    const all = await collectPaginatedAPI(notion.blocks.children.list, { block_id: ada.notesPageId });
    const ids = all.map((b) => b.id);
    expect(ids[ids.indexOf(ada.introBlockId) + 1]).toBe(inserted.results[0]!.id);
    expect(ids.slice(-2)).toEqual([todo!.id, bullet!.id]);
  });

  it('deleting a block archives it and its descendants', async () => {
    const notion = sdkFor(ADA);
    const inner = await notion.blocks.children.list({ block_id: ada.toggleBlockId });
    const deleted = await notion.blocks.delete({ block_id: ada.toggleBlockId });
    expect(isFullBlock(deleted) && deleted.archived).toBe(true);
    expect(isFullBlock(deleted) && deleted.in_trash).toBe(true);
    const child = await notion.blocks.retrieve({ block_id: inner.results[0]!.id });
    expect(isFullBlock(child) && child.archived).toBe(true);
    const remaining = await collectPaginatedAPI(notion.blocks.children.list, { block_id: ada.notesPageId });
    expect(remaining.map((b) => b.id)).not.toContain(ada.toggleBlockId);

    const edit = await apiError(
      notion.blocks.update({ block_id: ada.toggleBlockId, toggle: { rich_text: [] } }),
    );
    expect(edit.code).toBe(APIErrorCode.ValidationError);

    const restored = await notion.blocks.update({ block_id: ada.toggleBlockId, archived: false });
    expect(isFullBlock(restored) && restored.archived).toBe(false);
    const back = await notion.blocks.retrieve({ block_id: inner.results[0]!.id });
    expect(isFullBlock(back) && back.archived).toBe(false);
  });
});

describe('pages', () => {
  it('creates a database row with typed properties validated against the schema', async () => {
    const notion = sdkFor(ADA);
    const page = await notion.pages.create({
      parent: { database_id: ada.tasksDatabaseId },
      icon: { emoji: '🧮' },
      cover: { external: { url: 'https://example.com/cover.png' } },
      properties: {
        Name: { title: [{ text: { content: 'Design the mill' } }] },
        Status: { status: { name: 'In progress' } },
        Priority: { select: { name: 'Urgent' } },
        Estimate: { number: 21 },
        Due: { date: { start: '2025-03-01' } },
        Done: { checkbox: false },
        Tags: { multi_select: [{ name: 'Hardware' }, { name: 'Math' }] },
        Assignee: { people: [{ id: ADA }] },
      },
    });
    if (!isFullPage(page)) throw new Error('expected a full page');
    expect(page.parent).toEqual({ type: 'database_id', database_id: ada.tasksDatabaseId });
    expect(page.icon).toEqual({ type: 'emoji', emoji: '🧮' });
    expect(page.cover).toEqual({ type: 'external', external: { url: 'https://example.com/cover.png' } });
    expect(page.url).toMatch(/^https:\/\/www\.notion\.so\/Design-the-mill-[0-9a-f]{32}$/);
    const p = page.properties;
    expect(p.Name).toMatchObject({ id: 'title', type: 'title' });
    expect(p.Status).toMatchObject({ type: 'status', status: { name: 'In progress', color: 'blue' } });
    expect(p.Priority).toMatchObject({ type: 'select', select: { name: 'Urgent' } });
    expect(p.Estimate).toMatchObject({ type: 'number', number: 21 });
    expect(p.Due).toMatchObject({ type: 'date', date: { start: '2025-03-01', end: null, time_zone: null } });
    expect(p.Done).toMatchObject({ type: 'checkbox', checkbox: false });
    expect(p.Tags?.type === 'multi_select' && p.Tags.multi_select.map((o) => o.name)).toEqual([
      'Hardware',
      'Math',
    ]);
    expect(p.Assignee).toMatchObject({
      type: 'people',
      people: [{ object: 'user', id: ADA, name: 'Ada Lovelace' }],
    });

    // Notion adds a select option a page uses to the schema.
    const db = await notion.databases.retrieve({ database_id: ada.tasksDatabaseId });
    const priority = (db as DatabaseObjectResponse).properties.Priority;
    expect(priority?.type === 'select' && priority.select.options.map((o) => o.name)).toContain('Urgent');

    const unknown = await apiError(
      notion.pages.create({
        parent: { database_id: ada.tasksDatabaseId },
        properties: { Nope: { rich_text: [] } },
      }),
    );
    expect(unknown.code).toBe(APIErrorCode.ValidationError);
    const wrongType = await apiError(
      notion.pages.create({
        parent: { database_id: ada.tasksDatabaseId },
        properties: { Estimate: { checkbox: true } },
      }),
    );
    expect(wrongType.code).toBe(APIErrorCode.ValidationError);
    const badStatus = await apiError(
      notion.pages.create({
        parent: { database_id: ada.tasksDatabaseId },
        properties: { Status: { status: { name: 'Blocked' } } },
      }),
    );
    expect(badStatus.code).toBe(APIErrorCode.ValidationError);
  });

  it('creates a child page with content, which shows up in its parent', async () => {
    const notion = sdkFor(ADA);
    const page = await notion.pages.create({
      parent: { page_id: ada.notesPageId },
      properties: { title: { title: [{ text: { content: 'Sketches' } }] } },
      children: [{ paragraph: { rich_text: [{ text: { content: 'First sketch' } }] } }],
    });
    if (!isFullPage(page)) throw new Error('expected a full page');
    expect(page.parent).toEqual({ type: 'page_id', page_id: ada.notesPageId });
    expect(titleOf(page)).toBe('Sketches');
    const content = await notion.blocks.children.list({ block_id: page.id });
    expect(content.results).toHaveLength(1);
    const parentChildren = await collectPaginatedAPI(notion.blocks.children.list, {
      block_id: ada.notesPageId,
    });
    const asBlock = parentChildren.at(-1);
    expect(asBlock && isFullBlock(asBlock) && asBlock.type === 'child_page' && asBlock.child_page.title).toBe(
      'Sketches',
    );

    const extra = await apiError(
      notion.pages.create({
        parent: { page_id: ada.notesPageId },
        properties: { title: { title: [{ text: { content: 'x' } }] }, Estimate: { number: 1 } },
      }),
    );
    expect(extra.code).toBe(APIErrorCode.ValidationError);
  });

  it('retrieves and updates properties, icon and cover', async () => {
    const notion = sdkFor(ADA);
    const taskId = ada.taskPageId(2);
    const before = await notion.pages.retrieve({ page_id: taskId });
    if (!isFullPage(before)) throw new Error('expected a full page');
    expect(titleOf(before)).toBe('Write Note G');
    const after = await notion.pages.update({
      page_id: taskId,
      icon: { type: 'external', external: { url: 'https://example.com/icon.png' } },
      properties: {
        Done: { checkbox: true },
        Status: { status: { name: 'Done' } },
        Estimate: { number: null },
      },
    });
    if (!isFullPage(after)) throw new Error('expected a full page');
    expect(after.properties.Done).toMatchObject({ checkbox: true });
    expect(after.properties.Status).toMatchObject({ status: { name: 'Done' } });
    expect(after.properties.Estimate).toMatchObject({ number: null });
    expect(after.properties.Name).toEqual(before.properties.Name);
    expect(after.icon).toEqual({ type: 'external', external: { url: 'https://example.com/icon.png' } });
    expect(after.last_edited_time >= before.last_edited_time).toBe(true);

    const filtered = await notion.pages.retrieve({ page_id: taskId, filter_properties: ['title'] });
    expect(isFullPage(filtered) && Object.keys(filtered.properties)).toEqual(['Name']);
  });

  it('archives and unarchives a page; archived pages leave queries and refuse edits', async () => {
    const notion = sdkFor(ADA);
    const taskId = ada.taskPageId(1);
    const archived = await notion.pages.update({ page_id: taskId, archived: true });
    expect(isFullPage(archived) && archived.archived).toBe(true);
    expect(isFullPage(archived) && archived.in_trash).toBe(true);
    const rows = await collectPaginatedAPI(notion.databases.query, { database_id: ada.tasksDatabaseId });
    expect(rows.map((r) => r.id)).not.toContain(taskId);
    const edit = await apiError(
      notion.pages.update({ page_id: taskId, properties: { Done: { checkbox: false } } }),
    );
    expect(edit.code).toBe(APIErrorCode.ValidationError);

    const restored = await notion.pages.update({ page_id: taskId, in_trash: false });
    expect(isFullPage(restored) && restored.archived).toBe(false);
    const again = await collectPaginatedAPI(notion.databases.query, { database_id: ada.tasksDatabaseId });
    expect(again.map((r) => r.id)).toContain(taskId);
  });

  it('retrieves property items: paginated lists for title and people, single items otherwise', async () => {
    const notion = sdkFor(ADA);
    const page = await notion.pages.create({
      parent: { database_id: ada.tasksDatabaseId },
      properties: {
        Name: { title: [{ text: { content: 'Part one, ' } }, { text: { content: 'part two' } }] },
        Estimate: { number: 3 },
      },
    });
    const title = await notion.pages.properties.retrieve({
      page_id: page.id,
      property_id: 'title',
      page_size: 1,
    });
    if (title.object !== 'list') throw new Error('expected a property item list');
    expect(title.type).toBe('property_item');
    expect(title.property_item).toMatchObject({ id: 'title', type: 'title' });
    expect(title.results).toHaveLength(1);
    expect(title.results[0]).toMatchObject({
      object: 'property_item',
      type: 'title',
      title: { plain_text: 'Part one, ' },
    });
    expect(title.has_more).toBe(true);
    const rest = await notion.pages.properties.retrieve({
      page_id: page.id,
      property_id: 'title',
      start_cursor: title.next_cursor ?? undefined,
    });
    expect(rest.object === 'list' && rest.results).toMatchObject([{ title: { plain_text: 'part two' } }]);
    expect(rest.object === 'list' && rest.has_more).toBe(false);

    const db = (await notion.databases.retrieve({
      database_id: ada.tasksDatabaseId,
    })) as DatabaseObjectResponse;
    const estimateId = db.properties.Estimate!.id;
    const estimate = await notion.pages.properties.retrieve({ page_id: page.id, property_id: estimateId });
    expect(estimate).toMatchObject({ object: 'property_item', id: estimateId, type: 'number', number: 3 });
  });
});

describe('comments', () => {
  it('lists a page’s comments with their discussion threads', async () => {
    const notion = sdkFor(ADA);
    const comments = await notion.comments.list({ block_id: ada.notesPageId });
    expect(comments.type).toBe('comment');
    expect(comments.results).toHaveLength(4);
    const thread = comments.results.filter((c) => c.discussion_id === ada.firstDiscussionId);
    expect(thread).toHaveLength(3);
    expect(thread[0]).toMatchObject({
      object: 'comment',
      parent: { type: 'page_id', page_id: ada.notesPageId },
      created_by: { object: 'user', id: ADA },
    });
    const paged = await collectPaginatedAPI(notion.comments.list, {
      block_id: ada.notesPageId,
      page_size: 3,
    });
    expect(paged.map((c) => c.id)).toEqual(comments.results.map((c) => c.id));
  });

  it('starts a discussion on a page and replies in an existing one', async () => {
    const notion = sdkFor(ADA);
    const me = await notion.users.me({});
    const started = await notion.comments.create({
      parent: { page_id: ada.roadmapPageId },
      rich_text: [{ text: { content: 'Looks good to me' } }],
    });
    expect(started).toMatchObject({
      object: 'comment',
      parent: { type: 'page_id', page_id: ada.roadmapPageId },
      created_by: { object: 'user', id: me.id },
    });
    const reply = await notion.comments.create({
      discussion_id: ada.firstDiscussionId,
      rich_text: [{ text: { content: 'Done now.' } }],
    });
    expect('discussion_id' in reply && reply.discussion_id).toBe(ada.firstDiscussionId);
    const list = await notion.comments.list({ block_id: ada.notesPageId });
    expect(list.results.at(-1)?.id).toBe(reply.id);
    const roadmap = await notion.comments.list({ block_id: ada.roadmapPageId });
    expect(roadmap.results.map((c) => c.id)).toEqual([started.id]);

    const missing = await apiError(
      notion.comments.create({ parent: { page_id: GRACE }, rich_text: [{ text: { content: 'x' } }] }),
    );
    expect(missing.code).toBe(APIErrorCode.ObjectNotFound);
  });
});

describe('databases', () => {
  it('creates, retrieves and updates a database schema', async () => {
    const notion = sdkFor(ADA);
    const created = await notion.databases.create({
      parent: { type: 'page_id', page_id: ada.notesPageId },
      title: [{ text: { content: 'Reading list' } }],
      properties: {
        Title: { title: {} },
        Author: { rich_text: {} },
        Pages: { number: { format: 'number_with_commas' } },
        Genre: { select: { options: [{ name: 'Math', color: 'blue' }, { name: 'Poetry' }] } },
        Read: { checkbox: {} },
      },
    });
    if (!isFullDatabase(created)) throw new Error('expected a full database');
    expect(plain(created.title)).toBe('Reading list');
    expect(created.parent).toEqual({ type: 'page_id', page_id: ada.notesPageId });
    expect(created.is_inline).toBe(false);
    expect(created.properties.Title).toMatchObject({ id: 'title', name: 'Title', type: 'title', title: {} });
    expect(created.properties.Pages).toMatchObject({
      type: 'number',
      number: { format: 'number_with_commas' },
    });
    const genre = created.properties.Genre;
    expect(genre?.type === 'select' && genre.select.options.map((o) => [o.name, o.color])[0]).toEqual([
      'Math',
      'blue',
    ]);

    const updated = await notion.databases.update({
      database_id: created.id,
      title: [{ text: { content: 'Books' } }],
      description: [{ text: { content: 'What to read next' } }],
      properties: {
        Author: { name: 'Written by' },
        Read: null,
        Rating: { number: {} },
        Genre: { select: { options: [{ name: 'Math' }, { name: 'History', color: 'brown' }] } },
      },
    });
    if (!isFullDatabase(updated)) throw new Error('expected a full database');
    expect(plain(updated.title)).toBe('Books');
    expect(plain(updated.description)).toBe('What to read next');
    expect(Object.keys(updated.properties).sort()).toEqual([
      'Genre',
      'Pages',
      'Rating',
      'Title',
      'Written by',
    ]);
    expect(updated.properties['Written by']?.id).toBe(created.properties.Author?.id);
    const newGenre = updated.properties.Genre;
    expect(newGenre?.type === 'select' && newGenre.select.options.map((o) => o.name)).toEqual([
      'Math',
      'History',
    ]);

    const retrieved = await notion.databases.retrieve({ database_id: created.id });
    expect(retrieved).toEqual({ ...updated, request_id: expect.any(String) });

    const noTitle = await apiError(
      notion.databases.update({ database_id: created.id, properties: { Title: null } }),
    );
    expect(noTitle.code).toBe(APIErrorCode.ValidationError);
  });

  it('queries with property filters, compound filters and sorts', async () => {
    const notion = sdkFor(ADA);
    const names = (rows: Array<{ object: string }>) => rows.map((r) => titleOf(r as PageObjectResponse));

    const inProgress = await notion.databases.query({
      database_id: ada.tasksDatabaseId,
      filter: {
        and: [
          { property: 'Status', status: { equals: 'In progress' } },
          { property: 'Estimate', number: { greater_than_or_equal_to: 5 } },
        ],
      },
      sorts: [{ property: 'Estimate', direction: 'descending' }],
    });
    expect(inProgress.type).toBe('page_or_database');
    expect(names(inProgress.results)).toEqual(['Write Note G', 'Compute Bernoulli numbers']);

    const either = await notion.databases.query({
      database_id: ada.tasksDatabaseId,
      filter: {
        or: [
          { property: 'Done', checkbox: { equals: true } },
          { property: 'Tags', multi_select: { contains: 'Hardware' } },
        ],
      },
      sorts: [{ property: 'Name', direction: 'ascending' }],
    });
    expect(names(either.results)).toEqual(['Review punched card design', 'Translate Menabrea memoir']);

    const due = await notion.databases.query({
      database_id: ada.tasksDatabaseId,
      filter: {
        and: [
          { property: 'Due', date: { on_or_before: '2025-01-31' } },
          { property: 'Priority', select: { does_not_equal: 'Low' } },
          { property: 'Name', title: { contains: 'note' } },
        ],
      },
    });
    expect(names(due.results)).toEqual(['Write Note G']);

    const byDue = await notion.databases.query({
      database_id: ada.tasksDatabaseId,
      sorts: [{ property: 'Due', direction: 'ascending' }],
    });
    expect(names(byDue.results)[0]).toBe('Translate Menabrea memoir');
    const byPriority = await notion.databases.query({
      database_id: ada.tasksDatabaseId,
      sorts: [
        { property: 'Priority', direction: 'ascending' },
        { property: 'Estimate', direction: 'ascending' },
      ],
    });
    // Select values sort by the schema's option order (High, Medium, Low), not alphabetically.
    expect(names(byPriority.results)).toEqual([
      'Translate Menabrea memoir',
      'Write Note G',
      'Send letters to Babbage',
      'Compute Bernoulli numbers',
      'Review punched card design',
    ]);
    const newest = await notion.databases.query({
      database_id: ada.tasksDatabaseId,
      sorts: [{ timestamp: 'created_time', direction: 'descending' }],
    });
    expect(names(newest.results)[0]).toBe('Send letters to Babbage');

    const bad = await apiError(
      notion.databases.query({
        database_id: ada.tasksDatabaseId,
        filter: { property: 'Missing', checkbox: { equals: true } },
      }),
    );
    expect(bad.code).toBe(APIErrorCode.ValidationError);
  });

  it('filters by people, relative dates and timestamps', async () => {
    const notion = sdkFor(ADA);
    const names = (rows: Array<{ object: string }>) =>
      rows.map((r) => titleOf(r as PageObjectResponse)).sort();
    const mine = await notion.databases.query({
      database_id: ada.tasksDatabaseId,
      filter: { property: 'Assignee', people: { contains: ADA.replace(/-/g, '') } },
    });
    expect(names(mine.results)).toEqual([
      'Compute Bernoulli numbers',
      'Send letters to Babbage',
      'Translate Menabrea memoir',
    ]);
    const untagged = await notion.databases.query({
      database_id: ada.tasksDatabaseId,
      filter: { property: 'Tags', multi_select: { is_empty: true } },
    });
    expect(names(untagged.results)).toEqual(['Send letters to Babbage']);

    const created = await notion.pages.create({
      parent: { database_id: ada.tasksDatabaseId },
      properties: {
        Name: { title: [{ text: { content: 'Fresh' } }] },
        Due: { date: { start: new Date().toISOString() } },
      },
    });
    const recent = await notion.databases.query({
      database_id: ada.tasksDatabaseId,
      filter: { timestamp: 'created_time', created_time: { past_week: {} } },
    });
    expect(recent.results.map((r) => r.id)).toEqual([created.id]);
    const dueSoon = await notion.databases.query({
      database_id: ada.tasksDatabaseId,
      filter: { property: 'Due', date: { next_week: {} } },
    });
    expect(dueSoon.results.map((r) => r.id)).toEqual([created.id]);
    // A new status row starts at the first option, as in Notion.
    expect(isFullPage(created) && created.properties.Status).toMatchObject({
      status: { name: 'Not started' },
    });
  });

  it('paginates query results with the SDK iterator', async () => {
    const notion = sdkFor(ADA);
    const first = await notion.databases.query({ database_id: ada.tasksDatabaseId, page_size: 2 });
    expect(first.results).toHaveLength(2);
    expect(first.has_more).toBe(true);
    const seen: string[] = [];
    for await (const row of iteratePaginatedAPI(notion.databases.query, {
      database_id: ada.tasksDatabaseId,
      page_size: 2,
    })) {
      seen.push(row.id);
    }
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);
  });
});
