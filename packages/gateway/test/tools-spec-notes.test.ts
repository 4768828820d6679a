import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { expectUpstreamError, toolHarness, upstreamRequests } from './helpers/tools.js';

// The 18 notes_ tools called with the specification's parameter names only (docs/spec/tools.json),
// each effect read back from the Notion emulator or a later call; then the invalid conditions of
// the specification's "Errors" section, each refused as invalid_input quoting its rule.

const ADA = 'ada00000-0000-4000-8000-000000000001';
const ROADMAP = '6042b18c-8264-48b6-99d8-01794faa2b55';
const ID = 'spec-notes';

/** The parts of the Notion emulator's state these tests read. */
interface Tracked {
  id: string;
  parent: Record<string, unknown>;
  inTrash: boolean;
}
interface Page extends Tracked {
  values: Map<string, unknown>;
  icon: unknown;
  cover: unknown;
  childIds: string[];
}
interface Block extends Tracked {
  type: string;
  content: Record<string, unknown>;
}
interface Workspace {
  pages: Map<string, Page>;
  blocks: Map<string, Block>;
  databases: Map<
    string,
    Tracked & {
      title: RichText;
      description: RichText;
      icon: unknown;
      cover: unknown;
      schema: Array<{ id: string; name: string; type: string }>;
    }
  >;
  comments: Array<{ id: string; discussionId: string; parent: Record<string, unknown>; richText: RichText }>;
}
type RichText = Array<{ plain_text: string }>;

const text = (rich: unknown) => (rich as RichText).map((r) => r.plain_text).join('');
const richText = (content: string) => [{ type: 'text', text: { content } }];
const GEAR = { type: 'external', external: { url: 'https://images.example.com/gear.png' } };
const BLUEPRINT = { type: 'external', external: { url: 'https://images.example.com/blueprint.jpg' } };

/** Requests that reached Notion's API routes of the emulator, of one kind ("PATCH /notion/v1/blocks"). */
const notionRoute = (kind: string) => (key: string) => key.startsWith(kind);

describe.each(BACKENDS)('notes_ tools by the specification’s parameters on $name', (backend) => {
  let t: TestGateway;
  const { control, run, expectInvalid } = toolHarness({ gateway: () => t, identifier: ID });
  const notion = () => control().state<{ workspaces: Map<string, Workspace> }>('notion').workspaces.get(ADA)!;
  const childTypes = (id: string) =>
    notion()
      .pages.get(id)!
      .childIds.map((c) => notion().blocks.get(c)!.type);

  async function ok(tool_name: string, tool_input: Record<string, unknown>) {
    const res = await run(tool_name, tool_input);
    expect(res.status, `${tool_name}: ${JSON.stringify(res.body)}`).toBe(200);
    // biome-ignore lint/suspicious/noExplicitAny: results are asserted as loose JSON
    return res.body.data as Record<string, any>;
  }

  /** A database of engine parts under the roadmap, created by the specification's parameters. */
  async function partsDatabase(title: string) {
    return ok('notes_database_create', {
      parent: { page_id: ROADMAP },
      title: richText(title),
      properties: {
        Part: { title: {} },
        Status: { select: { options: [{ name: 'Ordered' }, { name: 'Delivered' }] } },
        Arrives: { date: {} },
      },
    });
  }

  /** A row in rule 5's provider value shapes, the title keyed `title` (rule 6). */
  function partRow(databaseId: string, part: string, status: string, arrives: string) {
    return ok('notes_database_insert_row', {
      database_id: databaseId,
      properties: {
        title: { title: [{ text: { content: part } }] },
        Status: { select: { name: status } },
        Arrives: { date: { start: arrives } },
      },
    });
  }

  beforeAll(async () => {
    t = await startTestGateway(backend);
    await sandboxAccount(t, { provider: 'notion', identifier: ID, userId: ADA });
  });

  afterAll(async () => {
    await t?.close();
  });

  describe('every tool, called by the specification', () => {
    it('notes_page_create: a child page (parent_page_id) with properties, child_blocks with a divider, icon and cover objects', async () => {
      const page = await ok('notes_page_create', {
        parent_page_id: ROADMAP,
        properties: { title: { title: [{ text: { content: 'Design review 2030-03-04' } }] } },
        child_blocks: [
          { type: 'heading_2', text: 'Decisions' },
          { type: 'divider' },
          { type: 'code', text: 'SELECT 1;', language: 'sql' },
        ],
        icon: { type: 'emoji', emoji: '📐' },
        cover: BLUEPRINT,
      });
      const stored = notion().pages.get(page.id)!;
      expect(stored.parent).toEqual({ type: 'page_id', page_id: ROADMAP });
      expect(text(stored.values.get('title'))).toBe('Design review 2030-03-04');
      expect(stored.icon).toEqual({ type: 'emoji', emoji: '📐' });
      expect(stored.cover).toEqual(BLUEPRINT);
      expect(childTypes(page.id)).toEqual(['heading_2', 'divider', 'code']);
      expect(notion().blocks.get(stored.childIds[2]!)!.content.language).toBe('sql');

      // A child page's title as plain text under "title" (the reading of rule 4), with an external icon.
      const plain = await ok('notes_page_create', {
        parent_page_id: ROADMAP,
        properties: { title: 'Follow-ups' },
        icon: GEAR,
      });
      expect(text(notion().pages.get(plain.id)!.values.get('title'))).toBe('Follow-ups');
      expect(notion().pages.get(plain.id)!.icon).toEqual(GEAR);
      // Without properties the page is created untitled (properties is optional with parent_page_id).
      const untitled = await ok('notes_page_create', { parent_page_id: ROADMAP });
      expect(text(notion().pages.get(untitled.id)!.values.get('title'))).toBe('');
    });

    it('notes_page_create: a database row (database_id) with properties in provider shapes', async () => {
      const db = await partsDatabase('Spare parts');
      const row = await ok('notes_page_create', {
        database_id: db.id,
        properties: {
          title: { title: [{ text: { content: 'Brass gear' } }] },
          Status: { select: { name: 'Ordered' } },
          Arrives: { date: { start: '2030-04-01' } },
        },
        child_blocks: [{ type: 'paragraph', text: 'Forty teeth.' }],
        cover: GEAR,
      });
      expect(notion().pages.get(row.id)!.parent).toEqual({ type: 'database_id', database_id: db.id });
      expect(row.properties.Part.title[0].plain_text).toBe('Brass gear');
      expect(row.properties.Status.select.name).toBe('Ordered');
      expect(row.properties.Arrives.date.start).toBe('2030-04-01');
      expect(childTypes(row.id)).toEqual(['paragraph']);
      expect(notion().pages.get(row.id)!.cover).toEqual(GEAR);
    });

    it('notes_database_create (title as rich_text, rule 7 schema, versions inside tool_input), notes_database_fetch, notes_database_update', async () => {
      const db = await ok('notes_database_create', {
        parent: { page_id: ROADMAP },
        title: [{ type: 'text', text: { content: 'Engine parts' } }],
        properties: {
          Part: { title: {} },
          Status: { select: { options: [{ name: 'Ordered' }, { name: 'Delivered' }] } },
          Arrives: { date: {} },
        },
        upstream_version: '2022-06-28',
        schema_version: '1',
      });
      const stored = notion().databases.get(db.id)!;
      expect(stored.parent).toEqual({ type: 'page_id', page_id: ROADMAP });
      expect(text(stored.title)).toBe('Engine parts');
      expect(stored.schema.map((p) => [p.name, p.type])).toEqual([
        ['Part', 'title'],
        ['Status', 'select'],
        ['Arrives', 'date'],
      ]);

      const fetched = await ok('notes_database_fetch', {
        database_id: db.id,
        upstream_version: '2022-06-28',
      });
      expect(Object.keys(fetched.properties).sort()).toEqual(['Arrives', 'Part', 'Status']);
      expect(text(fetched.title)).toBe('Engine parts');

      await ok('notes_database_update', {
        database_id: db.id,
        title: 'Engine parts 2030',
        description: 'Parts on order for the Analytical Engine',
        properties: { Supplier: { rich_text: {} } },
      });
      const updated = notion().databases.get(db.id)!;
      expect(text(updated.title)).toBe('Engine parts 2030');
      expect(text(updated.description)).toBe('Parts on order for the Analytical Engine');
      expect(updated.schema.map((p) => p.name)).toContain('Supplier');
    });

    it('notes_database_insert_row with child_blocks, icon and cover; notes_database_query sorts by property and by timestamp', async () => {
      const db = await partsDatabase('Gears');
      const row = await ok('notes_database_insert_row', {
        database_id: db.id,
        properties: {
          title: { title: [{ text: { content: 'Crown wheel' } }] },
          Status: { select: { name: 'Ordered' } },
          Arrives: { date: { start: '2030-03-31' } },
        },
        child_blocks: [
          { type: 'paragraph', text: 'Ordered from the Soho workshop.' },
          { type: 'divider' },
          { type: 'bulleted_list_item', text: 'Check the pitch' },
        ],
        icon: { type: 'emoji', emoji: '⚙️' },
        cover: BLUEPRINT,
      });
      const stored = notion().pages.get(row.id)!;
      expect(stored.parent).toEqual({ type: 'database_id', database_id: db.id });
      expect(stored.icon).toEqual({ type: 'emoji', emoji: '⚙️' });
      expect(stored.cover).toEqual(BLUEPRINT);
      expect(childTypes(row.id)).toEqual(['paragraph', 'divider', 'bulleted_list_item']);
      expect(row.properties.Part.title[0].plain_text).toBe('Crown wheel');
      const early = await partRow(db.id, 'Pinion', 'Delivered', '2030-03-10');
      const late = await partRow(db.id, 'Ratchet', 'Ordered', '2030-05-02');

      const first = await ok('notes_database_query', {
        database_id: db.id,
        sorts: [{ property: 'Arrives', direction: 'ascending' }],
        page_size: 2,
        upstream_version: '2022-06-28',
      });
      expect(first.results.map((r: { id: string }) => r.id)).toEqual([early.id, row.id]);
      expect(first.has_more).toBe(true);
      const rest = await ok('notes_database_query', {
        database_id: db.id,
        sorts: [{ property: 'Arrives', direction: 'ascending' }],
        page_size: 2,
        start_cursor: first.next_page.start_cursor,
      });
      expect(rest.results.map((r: { id: string }) => r.id)).toEqual([late.id]);
      const newest = await ok('notes_database_query', {
        database_id: db.id,
        sorts: [{ timestamp: 'created_time', direction: 'descending' }],
      });
      expect(newest.results).toHaveLength(3);
      expect(newest.results[0].id).toBe(late.id);
    });

    it('notes_database_property_retrieve returns the rows limited to the property, and its definition', async () => {
      const db = await partsDatabase('Levers');
      await partRow(db.id, 'Long lever', 'Ordered', '2030-06-01');
      await partRow(db.id, 'Short lever', 'Delivered', '2030-06-02');
      const statusId = notion()
        .databases.get(db.id)!
        .schema.find((p) => p.name === 'Status')!.id;

      const byId = await ok('notes_database_property_retrieve', {
        database_id: db.id,
        property_id: statusId,
      });
      expect(byId.properties).toEqual([
        expect.objectContaining({ id: statusId, name: 'Status', type: 'select' }),
      ]);
      expect(byId.results).toHaveLength(2);
      for (const row of byId.results) expect(Object.keys(row.properties)).toEqual(['Status']);
      expect(
        byId.results
          .map(
            (r: { properties: { Status: { select: { name: string } } } }) => r.properties.Status.select.name,
          )
          .sort(),
      ).toEqual(['Delivered', 'Ordered']);

      // The title property by its ID "title" (rule 6), with versions inside tool_input.
      const titles = await ok('notes_database_property_retrieve', {
        database_id: db.id,
        property_id: 'title',
        schema_version: '1',
        tool_version: '1',
      });
      expect(titles.properties[0]).toMatchObject({ id: 'title', name: 'Part', type: 'title' });
      for (const row of titles.results) expect(Object.keys(row.properties)).toEqual(['Part']);

      // A column name resolves to its ID through the schema; without property_id the rows are whole.
      const byName = await ok('notes_database_property_retrieve', {
        database_id: db.id,
        property_id: 'Arrives',
      });
      for (const row of byName.results) expect(Object.keys(row.properties)).toEqual(['Arrives']);
      const whole = await ok('notes_database_property_retrieve', { database_id: db.id });
      expect(whole.properties.map((p: { name: string }) => p.name)).toEqual(['Part', 'Status', 'Arrives']);
      for (const row of whole.results)
        expect(Object.keys(row.properties).sort()).toEqual(['Arrives', 'Part', 'Status']);
    });

    it('notes_page_get and notes_page_update: properties, icon and cover objects, archive and restore', async () => {
      const db = await partsDatabase('Cams');
      const row = await partRow(db.id, 'Heart cam', 'Ordered', '2030-07-01');
      const got = await ok('notes_page_get', { page_id: row.id });
      expect(got).toMatchObject({ object: 'page', id: row.id, parent: { database_id: db.id } });
      expect(got.properties.Status.select.name).toBe('Ordered');

      await ok('notes_page_update', {
        page_id: row.id,
        properties: { Status: { select: { name: 'Delivered' } } },
        icon: GEAR,
        cover: BLUEPRINT,
      });
      const stored = () => notion().pages.get(row.id)!;
      expect((await ok('notes_page_get', { page_id: row.id })).properties.Status.select.name).toBe(
        'Delivered',
      );
      expect(stored().icon).toEqual(GEAR);
      expect(stored().cover).toEqual(BLUEPRINT);
      await ok('notes_page_update', { page_id: row.id, icon: { type: 'emoji', emoji: '✅' } });
      expect(stored().icon).toEqual({ type: 'emoji', emoji: '✅' });

      await ok('notes_page_update', { page_id: row.id, archived: true });
      expect(stored().inTrash).toBe(true);
      await ok('notes_page_update', { page_id: row.id, archived: false });
      expect(stored().inTrash).toBe(false);
    });

    it('notes_page_content_append (rule 2 types, divider without text), notes_page_content_get (page_size a number), notes_block_update, notes_block_delete', async () => {
      const page = await ok('notes_page_create', {
        parent_page_id: ROADMAP,
        properties: { title: 'Blocks' },
      });
      const blocks = [
        { type: 'paragraph', text: 'Notes on the engine.' },
        { type: 'heading_1', text: 'Mill' },
        { type: 'heading_2', text: 'Store' },
        { type: 'heading_3', text: 'Cards' },
        { type: 'bulleted_list_item', text: 'Operation cards' },
        { type: 'numbered_list_item', text: 'Variable cards' },
        { type: 'code', text: 'V1 = V2 * V3', language: 'plain text' },
        { type: 'quote', text: 'The engine weaves algebraic patterns.' },
        { type: 'callout', text: 'Check Note G.' },
        { type: 'divider' },
        // The block shape has text: a client filling every field sends "" on a divider.
        { type: 'divider', text: '' },
      ];
      const appended = await ok('notes_page_content_append', { block_id: page.id, blocks });
      expect(appended.results).toHaveLength(11);
      expect(childTypes(page.id)).toEqual(blocks.map((b) => b.type));

      // A fraction is rounded down: 2.9 reads two blocks.
      const first = await ok('notes_page_content_get', { block_id: page.id, page_size: 2.9 });
      expect(first.results.map((b: { type: string; text: string }) => [b.type, b.text])).toEqual([
        ['paragraph', 'Notes on the engine.'],
        ['heading_1', 'Mill'],
      ]);
      expect(first.has_more).toBe(true);
      const rest = await ok('notes_page_content_get', {
        block_id: page.id,
        page_size: 100,
        start_cursor: first.next_page.start_cursor,
      });
      expect(rest.results).toHaveLength(9);
      expect(rest.results.slice(-2).map((b: { type: string }) => b.type)).toEqual(['divider', 'divider']);

      const [paragraphId, , , , , , codeId] = notion().pages.get(page.id)!.childIds;
      await ok('notes_block_update', {
        block_id: paragraphId,
        type: 'paragraph',
        text: 'Notes on the Analytical Engine.',
      });
      expect(text(notion().blocks.get(paragraphId!)!.content.rich_text)).toBe(
        'Notes on the Analytical Engine.',
      );
      await ok('notes_block_update', {
        block_id: codeId,
        type: 'code',
        text: 'v1 = v2 * v3',
        language: 'python',
      });
      expect(notion().blocks.get(codeId!)!.content).toMatchObject({ language: 'python' });
      expect(text(notion().blocks.get(codeId!)!.content.rich_text)).toBe('v1 = v2 * v3');

      await ok('notes_block_delete', { block_id: paragraphId });
      expect(notion().blocks.get(paragraphId!)!.inTrash).toBe(true);
      const after = await ok('notes_page_content_get', { block_id: page.id });
      expect(after.results).toHaveLength(10);
    });

    it('notes_comment_create, notes_comments_fetch and notes_comment_retrieve (comment_id only, under each Notion version)', async () => {
      const started = await ok('notes_comment_create', {
        parent: { page_id: ROADMAP },
        comment: { rich_text: richText('Is the mill design final?') },
        upstream_version: '2022-06-28',
      });
      const reply = await ok('notes_comment_create', {
        discussion_id: started.discussion_id,
        comment: { rich_text: richText('Yes, signed off on Monday.') },
      });
      const stored = notion().comments.find((c) => c.id === reply.id)!;
      expect(stored.discussionId).toBe(started.discussion_id);
      expect(text(stored.richText)).toBe('Yes, signed off on Monday.');

      const first = await ok('notes_comments_fetch', { block_id: ROADMAP, page_size: 1 });
      expect(first.results.map((c: { id: string }) => c.id)).toEqual([started.id]);
      const rest = await ok('notes_comments_fetch', {
        block_id: ROADMAP,
        page_size: 100,
        start_cursor: first.next_page.start_cursor,
      });
      expect(rest.results.map((c: { id: string }) => c.id)).toEqual([reply.id]);

      for (const upstream_version of ['2022-06-28', '2025-09-03']) {
        const got = await ok('notes_comment_retrieve', { comment_id: reply.id, upstream_version });
        expect(got).toMatchObject({
          object: 'comment',
          id: reply.id,
          discussion_id: started.discussion_id,
          parent: { type: 'page_id', page_id: ROADMAP },
        });
        expect(text(got.rich_text)).toBe('Yes, signed off on Monday.');
      }
      // The version inside tool_input is the one Notion gets: an unpublished one is Notion's refusal.
      const refused = await run('notes_comment_retrieve', {
        comment_id: reply.id,
        upstream_version: '2099-01-01',
      });
      expectUpstreamError(refused, { status: 400, code: 'upstream_validation', detail: '"2099-01-01"' });
    });

    it('notes_data_fetch searches the workspace; notes_user_list pages people and bots (page_size a number)', async () => {
      const db = await partsDatabase('Punched cards');
      const found = await ok('notes_data_fetch', {
        query: 'punched cards',
        page_size: 10,
        schema_version: '1',
      });
      expect(found.results.map((r: { id: string }) => r.id)).toContain(db.id);
      const firstHit = await ok('notes_data_fetch', { page_size: 1 });
      const nextHit = await ok('notes_data_fetch', {
        page_size: 1,
        start_cursor: firstHit.next_page.start_cursor,
      });
      expect(nextHit.results[0].id).not.toBe(firstHit.results[0].id);

      const one = await ok('notes_user_list', { page_size: 1.5 });
      expect(one.results).toHaveLength(1);
      const rest = await ok('notes_user_list', { page_size: 100, start_cursor: one.next_page.start_cursor });
      const everyone = [...one.results, ...rest.results];
      expect(everyone.map((u: { id: string }) => u.id)).toContain(ADA);
      expect(new Set(everyone.map((u: { type: string }) => u.type))).toEqual(new Set(['person', 'bot']));
    });
  });

  describe('the invalid conditions of the specification, refused as invalid_input quoting the rule', () => {
    it('1: notes_page_create with both database_id and parent_page_id (before any upstream call)', async () => {
      const db = await partsDatabase('Condition 1');
      await expectInvalid(
        'notes_page_create',
        { database_id: db.id, parent_page_id: ROADMAP, properties: { title: 'x' } },
        '/tool_input/parent_page_id',
        /\(rule: notes_page_create takes database_id or parent_page_id, never both\)/,
      );
      // Neither parent is refused the same way (the reading of rule 4).
      await expectInvalid(
        'notes_page_create',
        { properties: { title: 'Orphan' } },
        '/tool_input',
        /\(rule: notes_page_create takes database_id or parent_page_id, never both\)/,
      );
    });

    it('2: notes_page_create with database_id and without properties (before any upstream call)', async () => {
      const db = await partsDatabase('Condition 2');
      await expectInvalid(
        'notes_page_create',
        { database_id: db.id, child_blocks: [{ type: 'divider' }] },
        '/tool_input/properties',
        /\(rule: when database_id is given, properties is required\)/,
      );
    });

    it('3: a sort item with both property and timestamp, or with neither (before any upstream call)', async () => {
      const db = await partsDatabase('Condition 3');
      const rule = /\(rule: each sort item holds exactly one of property or timestamp .*, plus direction\)/;
      await expectInvalid(
        'notes_database_query',
        {
          database_id: db.id,
          sorts: [{ property: 'Arrives', timestamp: 'created_time', direction: 'ascending' }],
        },
        '/tool_input/sorts/0/timestamp',
        rule,
      );
      await expectInvalid(
        'notes_database_query',
        {
          database_id: db.id,
          sorts: [{ property: 'Arrives', direction: 'ascending' }, { direction: 'descending' }],
        },
        '/tool_input/sorts/1',
        rule,
      );
    });

    it('4: notes_block_update with another type than the block has (read, but no update sent)', async () => {
      const page = await ok('notes_page_create', {
        parent_page_id: ROADMAP,
        properties: { title: 'Condition 4' },
        child_blocks: [{ type: 'quote', text: 'As it was.' }],
      });
      const [quoteId] = notion().pages.get(page.id)!.childIds;
      const reads = upstreamRequests(control(), notionRoute('GET /notion/v1/blocks/:block_id'));
      const updates = upstreamRequests(control(), notionRoute('PATCH /notion/v1/blocks'));
      const res = await run('notes_block_update', { block_id: quoteId, type: 'paragraph', text: 'Changed' });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_input');
      expect(res.body.errors).toEqual([
        {
          path: '/tool_input/type',
          message: `must be the block's existing type "quote" (rule: type must equal the block's existing type)`,
        },
      ]);
      expect(upstreamRequests(control(), notionRoute('GET /notion/v1/blocks/:block_id'))).toBe(reads + 1);
      expect(upstreamRequests(control(), notionRoute('PATCH /notion/v1/blocks'))).toBe(updates);
      expect(text(notion().blocks.get(quoteId!)!.content.rich_text)).toBe('As it was.');
    });

    it('5: notes_database_insert_row with a caller-supplied _parent (before any upstream call)', async () => {
      const db = await partsDatabase('Condition 5');
      await expectInvalid(
        'notes_database_insert_row',
        {
          database_id: db.id,
          properties: { title: { title: [{ text: { content: 'x' } }] } },
          _parent: { database_id: db.id },
        },
        '/tool_input/_parent',
        /\(rule: "_parent" is computed by the gateway .* never supplied by the caller\)/,
      );
    });

    it('6: a missing required parameter (before any upstream call)', async () => {
      const missing = /is required \(rule: a missing required parameter is invalid/;
      await expectInvalid('notes_comment_retrieve', {}, '/tool_input/comment_id', missing);
      await expectInvalid(
        'notes_database_create',
        { parent: { page_id: ROADMAP }, properties: { Name: { title: {} } } },
        '/tool_input/title',
        missing,
      );
      // Rule 2's reading: every block type but divider requires text.
      await expectInvalid(
        'notes_page_content_append',
        { block_id: ROADMAP, blocks: [{ type: 'paragraph' }, { type: 'divider', text: 'x' }] },
        ['/tool_input/blocks/0/text', '/tool_input/blocks/1/text'],
        /rule: divider blocks take no text \(an empty one is ignored\); every other block type requires text/,
      );
    });
  });
});
