import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { expectInvalidInput, expectNoUpstreamCall, toolHarness } from './helpers/tools.js';

// Rules of the specification that hold for every tool: a missing required parameter is invalid
// (invalid condition 6), `_parent` is never taken from a caller (condition 5), and the version
// parameters are parameters of the tool — inside tool_input — with the same effect as beside it.

interface SpecTool {
  name: string;
  parameters: Array<{ name: string; required: boolean; versioning?: boolean }>;
}
const SPEC = JSON.parse(readFileSync(new URL('../../../docs/spec/tools.json', import.meta.url), 'utf8')) as {
  tools: SpecTool[];
};
const NOTES = '9adbce3c-958d-4ca1-8679-b7b8efbfb488';
const ID = 'versions-user';

describe.each(BACKENDS)('rules every tool keeps, on $name', (backend) => {
  let t: TestGateway;
  const { control, run } = toolHarness({ gateway: () => t, identifier: ID });

  beforeAll(async () => {
    t = await startTestGateway(backend);
    await sandboxAccount(t, { provider: 'notion', identifier: ID });
    await sandboxAccount(t, { provider: 'hubspot', identifier: ID });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('refuses a call missing any required parameter, naming each and quoting the rule, before any upstream call', async () => {
    for (const tool of SPEC.tools) {
      const required = tool.parameters.filter((p) => p.required).map((p) => `/tool_input/${p.name}`);
      if (!required.length) continue;
      const res = await expectNoUpstreamCall(control(), () => run(tool.name, {}));
      const body = expectInvalidInput(res, required, /rule: a missing required parameter is invalid/);
      expect(body.detail, tool.name).toContain(required[0]!.replace('/tool_input/', 'tool_input.'));
    }
  });

  it('refuses a caller-supplied _parent on any tool, quoting the rule', async () => {
    for (const [tool, input] of [
      ['notes_database_insert_row', { database_id: NOTES, properties: {}, _parent: { database_id: NOTES } }],
      ['notes_page_create', { parent_page_id: NOTES, _parent: { page_id: NOTES } }],
    ] as const) {
      const res = await expectNoUpstreamCall(control(), () => run(tool, input));
      expectInvalidInput(res, '/tool_input/_parent', /rule: "_parent" is computed by the gateway/);
    }
  });

  it('takes upstream_version inside tool_input as beside it: both reach Notion as Notion-Version', async () => {
    const inside = await run('notes_page_get', { page_id: NOTES, upstream_version: '1999-12-31' });
    const beside = await executeTool(t, {
      tool_name: 'notes_page_get',
      identifier: ID,
      tool_input: { page_id: NOTES },
      upstream_version: '1999-12-31',
    });
    for (const res of [inside, beside]) {
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('upstream_validation');
      // Notion quotes the header it received.
      expect(res.body.detail).toContain('"1999-12-31"');
    }
    const current = await run('notes_page_get', { page_id: NOTES, upstream_version: '2022-06-28' });
    expect(current.status).toBe(200);
    expect(current.body.data).toMatchObject({ object: 'page', id: NOTES });
  });

  it('takes schema_version and tool_version inside tool_input: checked and recorded as beside it', async () => {
    const ok = await run('crm_contacts_list', { limit: 1, schema_version: '1', tool_version: '1' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const record = await t.api(`/api/v1/executions/${ok.body.execution_id}`);
    expect(await record.json()).toMatchObject({ tool_name: 'crm_contacts_list', tool_version: '1' });

    const unknown = await expectNoUpstreamCall(control(), () =>
      run('notes_user_list', { tool_version: '7' }),
    );
    expectInvalidInput(unknown, '/tool_input/tool_version', 'must be one of: 1');
    expect(unknown.body.detail).toContain('known versions: 1');
  });

  it('refuses a version given inside and beside with different values, and upstream_version where the provider has none', async () => {
    const disagree = await expectNoUpstreamCall(control(), () =>
      executeTool(t, {
        tool_name: 'notes_user_list',
        identifier: ID,
        tool_input: { schema_version: '1' },
        schema_version: '2',
      }),
    );
    expectInvalidInput(disagree, '/tool_input/schema_version', /with different values; give it once/);
    const agree = await executeTool(t, {
      tool_name: 'notes_user_list',
      identifier: ID,
      tool_input: { schema_version: '1' },
      schema_version: '1',
    });
    expect(agree.status).toBe(200);

    const hubspot = await expectNoUpstreamCall(control(), () =>
      run('crm_contacts_list', { upstream_version: '2024-01-01' }),
    );
    expectInvalidInput(hubspot, '/tool_input/upstream_version', /has no API version header/);
    const notString = await expectNoUpstreamCall(control(), () =>
      run('notes_user_list', { schema_version: 1 }),
    );
    expectInvalidInput(notString, '/tool_input/schema_version', /non-empty string/);
  });

  it('publishes the version parameters in every tool’s schema, upstream_version on the notes tools only', async () => {
    const res = await t.api('/api/v1/tools');
    const tools = (
      (await res.json()) as { data: Array<{ name: string; input_schema: { properties: object } }> }
    ).data;
    expect(tools).toHaveLength(45);
    for (const tool of tools) {
      expect(Object.keys(tool.input_schema.properties), tool.name).toEqual(
        expect.arrayContaining(['schema_version', 'tool_version']),
      );
      expect('upstream_version' in tool.input_schema.properties, tool.name).toBe(
        tool.name.startsWith('notes_'),
      );
    }
  });
});
