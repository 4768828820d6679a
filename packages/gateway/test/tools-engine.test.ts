import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { expectProviderTools } from './helpers/tools.js';

const ADA = 'ada00000-0000-4000-8000-000000000001';
const NOTES = '9adbce3c-958d-4ca1-8679-b7b8efbfb488';

const NOTES_TOOLS = [
  'notes_block_delete',
  'notes_block_update',
  'notes_comment_create',
  'notes_comment_retrieve',
  'notes_comments_fetch',
  'notes_data_fetch',
  'notes_database_create',
  'notes_database_fetch',
  'notes_database_insert_row',
  'notes_database_property_retrieve',
  'notes_database_query',
  'notes_database_update',
  'notes_page_content_append',
  'notes_page_content_get',
  'notes_page_create',
  'notes_page_get',
  'notes_page_update',
  'notes_user_list',
];

type Json = Record<string, unknown>;

describe.each(BACKENDS)('tool engine on $name', (backend) => {
  let t: TestGateway;
  let accountId: string;

  beforeAll(async () => {
    t = await startTestGateway(backend);
    ({ accountId } = await sandboxAccount(t, { provider: 'notion', identifier: 'user_42', userId: ADA }));
  });
  afterAll(async () => {
    await t?.close();
  });

  async function get(path: string): Promise<{ status: number; body: Json }> {
    const res = await t.api(path);
    return { status: res.status, body: (await res.json()) as Json };
  }

  describe('catalog', () => {
    it('GET /api/v1/tools lists every tool with schema, annotations, provider and versions', async () => {
      const { status, body } = await get('/api/v1/tools');
      expect(status).toBe(200);
      const tools = body.data as Json[];
      const names = tools.map((tool) => tool.name);
      for (const name of NOTES_TOOLS) expect(names).toContain(name);
      expect(new Set(names).size).toBe(names.length);
      const create = tools.find((tool) => tool.name === 'notes_page_create')!;
      expect(create).toMatchObject({
        provider: 'notion',
        annotations: { read_only: false, destructive: false, idempotent: false },
        versions: ['1'],
      });
      expect(create.description).toContain('Example:');
      const schema = create.input_schema as Json;
      expect(schema).toMatchObject({ type: 'object', additionalProperties: false });
      expect(Object.keys(schema.properties as Json)).toEqual(
        expect.arrayContaining(['database_id', 'parent_page_id', 'properties', 'title', 'icon', 'cover']),
      );
      const list = tools.find((tool) => tool.name === 'notes_user_list')!;
      expect(list.annotations).toEqual({ read_only: true, destructive: false, idempotent: true });
      // The specification types this page_size as a number (a fraction is rounded down).
      expect((list.input_schema as { properties: Record<string, Json> }).properties.page_size).toMatchObject({
        type: 'number',
        minimum: 1,
        maximum: 100,
      });
    });

    it('filters by provider, every notes_ tool strict and every parameter described for the model', async () => {
      await expectProviderTools(t, 'notion', NOTES_TOOLS);
      const bad = await get('/api/v1/tools?provider=myspace');
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe('invalid_input');
    });

    it('serves the openai, anthropic and mcp formats', async () => {
      const openai = (await get('/api/v1/tools?provider=notion&format=openai')).body.data as Json[];
      const page = openai.find((x) => (x.function as Json).name === 'notes_page_get')!;
      expect(page.type).toBe('function');
      expect((page.function as Json).parameters).toMatchObject({ type: 'object', required: ['page_id'] });
      expect((page.function as Json).description).toContain('notion.so');

      const anthropic = (await get('/api/v1/tools?provider=notion&format=anthropic')).body.data as Json[];
      const query = anthropic.find((x) => x.name === 'notes_database_query')!;
      expect(Object.keys(query).sort()).toEqual(['description', 'input_schema', 'name']);
      expect((query.input_schema as Json).type).toBe('object');

      const mcp = (await get('/api/v1/tools?provider=notion&format=mcp')).body.data as Json[];
      const del = mcp.find((x) => x.name === 'notes_block_delete')!;
      expect(del.annotations).toEqual({
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: true,
        openWorldHint: true,
      });
      expect((del.inputSchema as Json).required).toEqual(['block_id']);

      const bad = await get('/api/v1/tools?format=yaml');
      expect(bad.status).toBe(400);
    });

    it('GET /api/v1/tools/{name} describes one tool, in any format', async () => {
      const one = await get('/api/v1/tools/notes_database_insert_row');
      expect(one.status).toBe(200);
      expect(one.body.name).toBe('notes_database_insert_row');
      // _parent is computed by the gateway: never part of the published input (invalid condition 5).
      expect((one.body.input_schema as { properties: Record<string, Json> }).properties).not.toHaveProperty(
        '_parent',
      );
      const mcp = await get('/api/v1/tools/notes_database_insert_row?format=mcp');
      expect(mcp.body.inputSchema).toEqual(one.body.input_schema);
    });

    it('an unknown tool is 404 unknown_tool, naming tools with the same prefix', async () => {
      const described = await get('/api/v1/tools/notes_page_delete');
      expect(described.status).toBe(404);
      expect(described.body.code).toBe('unknown_tool');
      expect(described.body.detail).toContain('notes_page_get');
      const executed = await executeTool(t, {
        tool_name: 'notes_page_delete',
        identifier: 'user_42',
        tool_input: {},
      });
      expect(executed.status).toBe(404);
      expect(executed.body.code).toBe('unknown_tool');
    });
  });

  describe('execution', () => {
    it("uses the identifier's single active account when connection_name is omitted", async () => {
      const res = await executeTool(t, {
        tool_name: 'notes_page_get',
        identifier: 'user_42',
        tool_input: { page_id: NOTES },
      });
      expect(res.status).toBe(200);
      expect((res.body.data as Json).id).toBe(NOTES);
      const record = await get(`/api/v1/executions/${res.body.execution_id}`);
      expect(record.body.connected_account_id).toBe(accountId);
    });

    it('no account for the identifier → account_not_active with the link that authorizes it', async () => {
      const res = await executeTool(t, {
        tool_name: 'notes_page_get',
        identifier: 'nobody',
        tool_input: { page_id: NOTES },
      });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({
        code: 'account_not_active',
        account_status: 'PENDING_AUTH',
        authorization_link: { link: expect.stringContaining('/connect/') },
      });
      expect(res.body.detail).toContain('authorization_link');
    });

    it('two active accounts → ambiguous_account listing the connection names; connection_name chooses', async () => {
      await sandboxAccount(t, {
        provider: 'notion',
        identifier: 'twice',
        connection: 'notion-one',
        userId: ADA,
      });
      await sandboxAccount(t, {
        provider: 'notion',
        identifier: 'twice',
        connection: 'notion-two',
        userId: ADA,
      });
      const res = await executeTool(t, { tool_name: 'notes_user_list', identifier: 'twice', tool_input: {} });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('ambiguous_account');
      expect((res.body.connection_names as string[]).sort()).toEqual(['notion-one', 'notion-two']);
      expect(res.body.detail).toContain('notion-one');
      const chosen = await executeTool(t, {
        tool_name: 'notes_user_list',
        identifier: 'twice',
        connection_name: 'notion-two',
        tool_input: {},
      });
      expect(chosen.status).toBe(200);
      const record = await get(`/api/v1/executions/${chosen.body.execution_id}`);
      expect(record.body.connection_name).toBe('notion-two');
    });

    it('unknown schema_version / tool_version → invalid_input listing the known versions', async () => {
      for (const field of ['schema_version', 'tool_version']) {
        const res = await executeTool(t, {
          tool_name: 'notes_user_list',
          identifier: 'user_42',
          tool_input: {},
          [field]: '7',
        });
        expect(res.status).toBe(400);
        expect(res.body.code).toBe('invalid_input');
        expect(res.body.detail).toContain('known versions: 1');
        expect(res.body.errors).toEqual([{ path: `/${field}`, message: 'must be one of: 1' }]);
      }
      const current = await executeTool(t, {
        tool_name: 'notes_user_list',
        identifier: 'user_42',
        tool_input: {},
        schema_version: '1',
        tool_version: '1',
      });
      expect(current.status).toBe(200);
    });

    it('upstream_version is sent to Notion as Notion-Version', async () => {
      const older = await executeTool(t, {
        tool_name: 'notes_page_get',
        identifier: 'user_42',
        tool_input: { page_id: NOTES },
        upstream_version: '2022-02-22',
      });
      expect(older.status).toBe(200);
      const unknown = await executeTool(t, {
        tool_name: 'notes_page_get',
        identifier: 'user_42',
        tool_input: { page_id: NOTES },
        upstream_version: '1999-12-31',
      });
      expect(unknown.status).toBe(400);
      expect(unknown.body.code).toBe('upstream_validation');
      // Notion quotes the Notion-Version header it received.
      expect(unknown.body.detail).toContain('Notion-Version header failed validation');
      expect(unknown.body.detail).toContain('"1999-12-31"');
    });
  });

  describe('execution records', () => {
    it('records a success with account, status and duration, and no secrets', async () => {
      const res = await executeTool(t, {
        tool_name: 'notes_user_list',
        identifier: 'user_42',
        tool_input: {},
      });
      expect(res.status).toBe(200);
      const id = res.body.execution_id as string;
      expect(id).toMatch(/^exec_/);
      const { status, body } = await get(`/api/v1/executions/${id}`);
      expect(status).toBe(200);
      expect(body).toMatchObject({
        id,
        tool_name: 'notes_user_list',
        connected_account_id: accountId,
        identifier: 'user_42',
        status: 'success',
        error_code: null,
        upstream_calls: 1,
      });
      expect(Number.isInteger(body.duration_ms)).toBe(true);
      expect(body.duration_ms as number).toBeGreaterThanOrEqual(0);
      expect(Date.parse(body.finished_at as string)).toBeGreaterThanOrEqual(
        Date.parse(body.started_at as string),
      );
      // The field that says whether a token was refreshed is named for it, and holds no token.
      const text = JSON.stringify(body).replace('"token_refreshed":', '');
      expect(text).not.toMatch(/ntn_|secret|token|authorization/i);
    });

    it('records errors with their code: invalid input, provider errors, unknown tools', async () => {
      const invalid = await executeTool(t, {
        tool_name: 'notes_page_get',
        identifier: 'user_42',
        tool_input: {},
      });
      const missing = await executeTool(t, {
        tool_name: 'notes_page_get',
        identifier: 'user_42',
        tool_input: { page_id: '0b0b0b0b-0b0b-4b0b-8b0b-0b0b0b0b0b0b' },
      });
      const unknown = await executeTool(t, {
        tool_name: 'notes_nothing',
        identifier: 'user_42',
        tool_input: {},
      });
      for (const [res, code, calls] of [
        [invalid, 'invalid_input', 0],
        [missing, 'upstream_not_found', 1],
        [unknown, 'unknown_tool', 0],
      ] as const) {
        expect(res.body.code).toBe(code);
        const record = await get(`/api/v1/executions/${res.body.execution_id}`);
        expect(record.status).toBe(200);
        expect(record.body).toMatchObject({ status: 'error', error_code: code, upstream_calls: calls });
        expect(Number.isInteger(record.body.duration_ms)).toBe(true);
      }
    });

    it('an unknown execution id → 404 execution_not_found', async () => {
      const res = await get('/api/v1/executions/exec_doesnotexist');
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('execution_not_found');
    });
  });
});
