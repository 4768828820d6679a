import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import type { CalendarState } from './helpers/calendar-state.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { expectNoUpstreamCall, toolHarness } from './helpers/tools.js';

// The specification's parameter names are the contract; Portico's earlier names stay as aliases.
// These calls use only the specification's names and check the provider's state afterwards.

const NOTION_ADA = 'ada00000-0000-4000-8000-000000000001';
const NOTES = '9adbce3c-958d-4ca1-8679-b7b8efbfb488';
const ROADMAP = '6042b18c-8264-48b6-99d8-01794faa2b55';
const GOOGLE_ADA = '110000000000000000001';
const ID = 'spec-user';

interface NotionState {
  workspaces: Map<
    string,
    {
      blocks: Map<string, { parent: Record<string, unknown> }>;
      databases: Map<string, { parent: Record<string, unknown> }>;
      comments: Array<{ id: string; richText: Array<{ plain_text: string }> }>;
    }
  >;
}
describe.each(BACKENDS)('tools by the specification’s parameter names on $name', (backend) => {
  let t: TestGateway;
  const { control, run, expectInvalid } = toolHarness({ gateway: () => t, identifier: ID });
  const notion = () => control().state<NotionState>('notion').workspaces.get(NOTION_ADA)!;

  async function ok(tool_name: string, tool_input: Record<string, unknown>) {
    const res = await run(tool_name, tool_input);
    expect(res.status, `${tool_name}: ${JSON.stringify(res.body)}`).toBe(200);
    // biome-ignore lint/suspicious/noExplicitAny: results are asserted as loose JSON
    return res.body.data as Record<string, any>;
  }

  beforeAll(async () => {
    t = await startTestGateway(backend);
    await sandboxAccount(t, { provider: 'notion', identifier: ID, userId: NOTION_ADA });
    await sandboxAccount(t, { provider: 'google_calendar', identifier: ID, userId: GOOGLE_ADA });
    await sandboxAccount(t, { provider: 'google_drive', identifier: ID, userId: GOOGLE_ADA });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('notes_page_content_append takes block_id (a page or a block)', async () => {
    const data = await ok('notes_page_content_append', {
      block_id: NOTES,
      blocks: [{ type: 'paragraph', text: 'Appended by block_id.' }],
    });
    expect(data.results).toHaveLength(1);
    expect(notion().blocks.get(data.results[0].id)?.parent).toMatchObject({ page_id: NOTES });
  });

  it('notes_comment_create takes the comment object, as plain text or as rich text', async () => {
    const plain = await ok('notes_comment_create', {
      parent: { page_id: NOTES },
      comment: { text: 'Plain comment.' },
    });
    const rich = await ok('notes_comment_create', {
      discussion_id: plain.discussion_id,
      comment: { rich_text: [{ type: 'text', text: { content: 'Rich reply.' } }] },
    });
    const stored = (id: string) =>
      notion()
        .comments.find((c) => c.id === id)
        ?.richText.map((r) => r.plain_text)
        .join('');
    expect(stored(plain.id)).toBe('Plain comment.');
    expect(stored(rich.id)).toBe('Rich reply.');
    await expectInvalid(
      'notes_comment_create',
      { parent: { page_id: NOTES }, comment: { text: 'a', rich_text: [{ text: { content: 'b' } }] } },
      '/tool_input/comment/rich_text',
      /exactly one of "text" or "rich_text"/,
    );
  });

  it('notes_database_create takes the parent object', async () => {
    const data = await ok('notes_database_create', {
      parent: { page_id: ROADMAP },
      title: 'Spec bugs',
      properties: { Name: 'title', Severity: 'select' },
    });
    expect(notion().databases.get(data.id)?.parent).toMatchObject({ page_id: ROADMAP });
  });

  it('calendar_create_event and calendar_update_event take attendees_emails', async () => {
    const event = await ok('calendar_create_event', {
      summary: 'Spec review',
      start_datetime: '2030-03-04T10:00:00Z',
      attendees_emails: ['grace@example.com'],
    });
    const stored = () =>
      control()
        .state<CalendarState>('google')
        .byUser.get(GOOGLE_ADA)!
        .calendar.events.get('ada.lovelace@example.com')
        ?.get(event.id)?.resource;
    expect(stored()?.attendees?.map((a) => a.email)).toEqual(['grace@example.com']);
    await ok('calendar_update_event', {
      calendar_id: 'primary',
      event_id: event.id,
      attendees_emails: ['grace@example.com', 'alan@example.com'],
    });
    expect(stored()?.attendees?.map((a) => a.email)).toEqual(['grace@example.com', 'alan@example.com']);
  });

  it('drive_search_content takes search_term', async () => {
    const data = await ok('drive_search_content', { search_term: "It's the first published algorithm" });
    expect(data.results.map((f: { name: string }) => f.name)).toEqual(['Note G.txt']);
  });

  it('accepts Portico’s earlier names as aliases, reports errors under the name the caller used, and refuses disagreeing pairs', async () => {
    const viaAlias = await ok('drive_search_content', { query: "It's the first published algorithm" });
    expect(viaAlias.results).toHaveLength(1);
    // The same value under both names is one parameter given twice, not a conflict.
    await ok('drive_search_content', { query: 'Bernoulli', search_term: 'Bernoulli' });
    await expectInvalid(
      'drive_search_content',
      { query: 'Bernoulli', search_term: 'Babbage' },
      '/tool_input/query',
      /another name for "search_term"/,
    );
    await expectInvalid(
      'notes_database_create',
      { parent_page_id: ROADMAP, parent: { page_id: NOTES }, title: 'x', properties: { Name: 'title' } },
      '/tool_input/parent_page_id',
      /give only "parent"/,
    );
    await expectInvalid(
      'calendar_create_event',
      { start_datetime: '2030-03-04T10:00:00Z', attendees: ['not-an-email'] },
      '/tool_input/attendees/0',
      /email/,
    );
    const res = await expectNoUpstreamCall(control(), () =>
      run('notes_comment_create', { parent: { page_id: NOTES }, text: '' }),
    );
    expect(res.status).toBe(400);
    expect((res.body.errors as Array<{ path: string }>).map((e) => e.path)).toContain('/tool_input/text');
  });
});
