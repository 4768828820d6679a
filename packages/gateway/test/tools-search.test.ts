import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { specificationTools } from '../src/tools/catalog.js';
import { compiledSources } from '../src/tools/compiled/source.js';
import { ToolRegistry } from '../src/tools/registry.js';
import { terms } from '../src/tools/search/analyze.js';
import { listTools } from '../src/tools/search/listing.js';
import { stem } from '../src/tools/search/stem.js';
import { ToolSearch } from '../src/tools/search/tool-search.js';
import { type AnyTool, defineTool } from '../src/tools/types.js';
import { BACKENDS } from './helpers/backends.js';
import { createSandboxConnection } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

type Json = Record<string, unknown>;

function tool(name: string, extra: Partial<AnyTool> = {}): AnyTool {
  return defineTool({
    name,
    description: `the ${name.replaceAll('_', ' ')} tool`,
    provider: 'github',
    input: Type.Object({ q: Type.String() }),
    annotations: { read_only: true, destructive: false, idempotent: true },
    run: async () => ({}),
    ...extra,
  });
}

const names = (page: { hits: Array<{ tool: AnyTool }> }) => page.hits.map((h) => h.tool.name);

describe('analysis', () => {
  it('splits names at underscores and camel case, and stems every word', () => {
    expect(terms('github_pulls_list')).toEqual(['github', 'pull', 'list']);
    expect(terms('startHistoryId')).toEqual(['starthistoryid', 'start', 'histori', 'id']);
    expect(terms('Creates the events')).toEqual(['creat', 'event']);
    expect(['creates', 'creating', 'created'].map(stem)).toEqual(['creat', 'creat', 'creat']);
    // A word the index knows whole stays whole: "GitHub" is not also "git" and "hub".
    expect(terms('GitHub', (t) => t === 'github')).toEqual(['github']);
    expect(terms('open PRs in the repository')).toEqual(['open', 'pull', 'request', 'repo']);
  });
});

describe('tool search over the whole catalog', () => {
  const registry = new ToolRegistry([specificationTools, ...compiledSources()]);
  const search = new ToolSearch(registry);
  const top = (query: string, filter = {}) => names(search.search(query, filter, { offset: 0, limit: 5 }));

  it('finds specification and compiled tools from a task in plain words', () => {
    expect(registry.list().length).toBeGreaterThan(1400);
    expect(top('Schedule a meeting with Ann tomorrow at 10am')).toContain('calendar_create_event');
    expect(top('List the open pull requests in the acme/api repository')).toContain('github_pulls_list');
    expect(top('Send an email to bob@example.com about the invoice')).toContain('gmail_users_messages_send');
    expect(top('Star the vercel/next.js repository on GitHub')).toContain(
      'github_activity_star_repo_for_authenticated_user',
    );
    expect(top('Search HubSpot for contacts whose last name is Smith')).toContain('crm_contacts_search');
    // Nothing to look for: no words, or only words no tool has.
    expect(top('the of and')).toEqual([]);
    expect(top('zzqx')).toEqual([]);
  });

  it('filters by provider, read-only and tags, and counts every match', () => {
    const all = search.search('create a file', {}, { offset: 0, limit: 1000 });
    const drive = search.search('create a file', { provider: 'google_drive' }, { offset: 0, limit: 1000 });
    expect(drive.total).toBeGreaterThan(0);
    expect(drive.total).toBeLessThan(all.total);
    expect(drive.hits.every((h) => h.tool.provider === 'google_drive')).toBe(true);
    const reads = search.search('file', { readOnly: true }, { offset: 0, limit: 1000 });
    expect(reads.hits.every((h) => h.tool.annotations.read_only)).toBe(true);
    const spec = search.search('file', { tags: ['specification', 'read-only'] }, { offset: 0, limit: 1000 });
    expect(spec.hits.map((h) => h.tool.name).sort()).toEqual(
      ['drive_get_file_metadata', 'drive_search_content', 'drive_search_files'].sort(),
    );
    expect(spec.hits[0]!.tags).toEqual(
      expect.arrayContaining(['specification', 'read-only', 'file-storage']),
    );
  });
});

describe('the index follows the registry', () => {
  it('sees a source registered or removed after its first search, and environment-bound tools only there', () => {
    const registry = new ToolRegistry([
      { id: 'a', precedence: 100, tools: () => [tool('github_zebra_list')] },
    ]);
    const search = new ToolSearch(registry);
    const find = (q: string, environmentId?: string) =>
      names(search.search(q, { environmentId }, { offset: 0, limit: 10 }));
    expect(find('zebra')).toEqual(['github_zebra_list']);
    const remove = registry.register({
      id: 'remote',
      precedence: 200,
      tools: () => [
        tool('crm__zebra_feed', { environmentId: 'env_1', connection: 'crm', remoteName: 'zebra_feed' }),
      ],
    });
    expect(find('zebra')).toEqual(['github_zebra_list']);
    expect(find('zebra', 'env_1').sort()).toEqual(['crm__zebra_feed', 'github_zebra_list']);
    expect(find('zebra feed', 'env_1')[0]).toBe('crm__zebra_feed');
    remove();
    expect(find('zebra', 'env_1')).toEqual(['github_zebra_list']);
  });

  it('pages with tokens bound to their query, and refuses unknown tags and foreign tokens', () => {
    const tools = Array.from({ length: 25 }, (_, i) => tool(`github_thing_${i}_list`));
    const registry = new ToolRegistry([{ id: 'a', precedence: 100, tools: () => tools }]);
    const search = new ToolSearch(registry);
    const seen: string[] = [];
    let pageToken: string | undefined;
    do {
      const page = listTools(search, { query: 'list things', pageSize: 10, pageToken });
      expect(page.total).toBe(25);
      seen.push(...names(page));
      pageToken = page.nextPageToken ?? undefined;
    } while (pageToken);
    expect(seen.sort()).toEqual(tools.map((t) => t.name).sort());
    const first = listTools(search, { query: 'list things', pageSize: 10 });
    expect(() => listTools(search, { query: 'other words', pageToken: first.nextPageToken! })).toThrow(
      /belongs to another query/,
    );
    expect(() => listTools(search, { pageToken: 'bm90IGEgdG9rZW4' })).toThrow(
      /not a token this API returned/,
    );
    expect(() => listTools(search, { tags: ['nope'] })).toThrow(/No tool has the tag "nope"; tags are: /);
    expect(() => listTools(search, { tags: ['Not A Tag'] })).toThrow(/lower-case words/);
    // Without words and a page size, the whole catalog in the registry's order, as before.
    expect(names(listTools(search, {}))).toEqual(tools.map((t) => t.name));
  });
});

describe.each(BACKENDS)('GET /api/v1/tools?query= on $name', (backend) => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway(backend, { PORTICO_COMPILED_TOOLS: 'true' }, { awaitSandbox: false });
    await createSandboxConnection(t, 'work-calendar', 'google_calendar');
  });
  afterAll(async () => {
    await t?.close();
  });

  async function get(query: string): Promise<{ status: number; body: Json }> {
    const res = await t.api(`/api/v1/tools?${query}`);
    return { status: res.status, body: (await res.json()) as Json };
  }

  it('ranks tools by how well they fit the task, with tags and scores, a page at a time', async () => {
    const { status, body } = await get(`query=${encodeURIComponent('reply to a comment on a drive file')}`);
    expect(status).toBe(200);
    const data = body.data as Json[];
    expect(data).toHaveLength(20);
    expect(body.total as number).toBeGreaterThan(20);
    expect(typeof body.next_page_token).toBe('string');
    expect(data.slice(0, 5).map((d) => d.name)).toContain('google_drive_replies_create');
    const scores = data.map((d) => d.score as number);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(data[0]!.tags).toEqual(expect.arrayContaining(['compiled', 'file-storage']));

    const next = await get(
      `query=${encodeURIComponent('reply to a comment on a drive file')}&page_token=${body.next_page_token}`,
    );
    expect(next.status).toBe(200);
    const again = (next.body.data as Json[]).map((d) => d.name);
    expect(again.filter((n) => data.some((d) => d.name === n))).toEqual([]);
  });

  it('filters by connection, read_only and tags, in any format', async () => {
    const { body } = await get(
      'query=events&connection=work-calendar&read_only=true&tags=compiled&format=openai',
    );
    const data = body.data as Array<{ type: string; function: { name: string } }>;
    expect(data.length).toBeGreaterThan(0);
    expect(data.every((d) => d.type === 'function' && d.function.name.startsWith('google_calendar_'))).toBe(
      true,
    );
    const both = await get('tags=specification,read-only&provider=google_drive');
    expect((both.body.data as Json[]).map((d) => d.name).sort()).toEqual(
      ['drive_get_file_metadata', 'drive_search_content', 'drive_search_files'].sort(),
    );
    expect(both.body.next_page_token).toBeNull();
  });

  it('answers bad filters with a problem saying what to change', async () => {
    const tag = await get('query=mail&tags=nope');
    expect(tag.status).toBe(400);
    expect(tag.body.code).toBe('invalid_input');
    expect(tag.body.detail).toMatch(/No tool has the tag "nope"; tags are: .*read-only/);
    const connection = await get('connection=missing');
    expect(connection.status).toBe(404);
    expect(connection.body.code).toBe('connection_not_found');
    const token = await get('query=mail&page_token=bm9wZQ');
    expect(token.status).toBe(400);
    expect(token.body.detail).toMatch(/page_token/);
    const size = await get('query=mail&page_size=0');
    expect(size.status).toBe(400);
    expect(size.body.code).toBe('invalid_input');
  });

  it('keeps the whole list without a query, and the tags in a single tool', async () => {
    const { body } = await get('');
    expect((body.data as Json[]).length).toBeGreaterThan(1400);
    expect(body.next_page_token).toBeNull();
    const one = (await (await t.api('/api/v1/tools/calendar_list_events')).json()) as Json;
    expect(one.tags).toEqual(['specification', 'read-only', 'calendar']);
  });

  it('lists each tool, in every format, exactly as its own description reads, twice alike', async () => {
    // A listing is written from each definition serialized once: it must say what describing the
    // tool says, in each format, with no listing's answer changing the next one's.
    for (const format of ['json_schema', 'openai', 'anthropic', 'mcp']) {
      const first = await t.api(`/api/v1/tools?format=${format}&provider=google_drive`);
      expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const text = await first.text();
      const listed = (JSON.parse(text) as { data: Json[]; total: number }).data;
      expect(listed.length).toBeGreaterThan(10);
      expect(await (await t.api(`/api/v1/tools?format=${format}&provider=google_drive`)).text()).toBe(text);
      for (const entry of [listed[0]!, listed.at(-1)!]) {
        const name = (format === 'openai' ? (entry.function as Json).name : entry.name) as string;
        const own = (await (await t.api(`/api/v1/tools/${name}?format=${format}`)).json()) as Json;
        expect(entry).toEqual(own);
      }
    }
  });
});
