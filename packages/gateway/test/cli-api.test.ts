import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { submitConsent } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { browserCookie, executeTool, openLink, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { runCliAsync } from './helpers/process.js';

// Each command is a new process (about a second each on a busy machine); a test runs up to a dozen.
vi.setConfig({ testTimeout: 120_000 });

describe.each(BACKENDS)('CLI commands through the HTTP API ($name)', (backend) => {
  let t: TestGateway;
  let env: Record<string, string>;
  /** `portico` with these arguments (a string is split on spaces). */
  const cli = (args: string | string[], input?: string) =>
    runCliAsync(typeof args === 'string' ? args.split(' ') : args, env, input);

  beforeAll(async () => {
    t = await startTestGateway(backend, { PORTICO_WEBHOOK_ALLOW_PRIVATE: 'true' });
    env = { PORTICO_ENV_URL: t.url, PORTICO_CLIENT_ID: t.clientId, PORTICO_CLIENT_SECRET: t.clientSecret };
    await sandboxAccount(t, { provider: 'notion', identifier: 'user_42', connection: 'notes' });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('manages connections: create, table and JSON listings, update, delete; the secret never printed', async () => {
    const created = await cli(
      'connections create --name crm --provider hubspot --client-id hid --client-secret hsecret --scopes oauth,crm.objects.contacts.read --json',
    );
    expect(created.status, created.stderr).toBe(0);
    const view = JSON.parse(created.stdout) as Record<string, unknown>;
    expect(view).toMatchObject({
      name: 'crm',
      provider: 'hubspot',
      scopes: ['oauth', 'crm.objects.contacts.read'],
    });
    // Spelt as the API and every other command spell it.
    expect(view).toHaveProperty('redirect_uri');
    expect(Object.keys(view).filter((k) => /[A-Z]/.test(k))).toEqual([]);
    const fields = await cli(['connections', 'get', 'crm']);
    expect(fields.stdout).toMatch(/^redirect_uri:\s+http/m);
    expect(created.stdout).not.toContain('hsecret');

    const table = await cli(['connections', 'list']);
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+PROVIDER\s+SANDBOX\s+SCOPES\s+REDIRECT URI$/);
    expect(table.stdout).toMatch(/^crm\s+hubspot\s+no\s+oauth,crm\.objects\.contacts\.read\s+http/m);
    const listed = JSON.parse((await cli(['connections', 'list', '--json'])).stdout) as {
      data: { name: string }[];
    };
    expect(listed.data.map((c) => c.name).sort()).toEqual(['crm', 'notes']);

    const updated = await cli(['connections', 'update', 'crm', '--scopes', 'oauth', '--json']);
    expect(JSON.parse(updated.stdout)).toMatchObject({ scopes: ['oauth'] });
    // The gateway itself sees the change (no write around it).
    expect(await (await t.api('/api/v1/connections/crm')).json()).toMatchObject({ scopes: ['oauth'] });

    expect((await cli(['connections', 'delete', 'crm'])).status).toBe(0);
    const missing = await cli(['connections', 'get', 'crm']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/^error \(connection_not_found\): No connection is named "crm"/);
    // The hint names the CLI's commands, not the HTTP calls behind them.
    expect(missing.stderr).toContain('`portico connections list`');
    expect(missing.stderr).toContain('`portico connections create`');
    expect(missing.stderr).not.toMatch(/(GET|POST) \/api\/v1/);
  });

  it("prints a bad request's problem detail and field errors, exiting non-zero", async () => {
    const bad = await cli(['connections', 'create', '--name', 'x', '--provider', 'myspace']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/^error \(invalid_input\): .*provider/);
    expect(bad.stderr).toMatch(/\/provider: /);
    const usage = await cli(['tools', 'run', 'notes_user_list']);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toMatch(/tools run needs --identifier/);
  });

  it('issues a link and lists, gets and deletes accounts', async () => {
    const link = await cli(['link', 'notes', 'user_77']);
    expect(link.status, link.stderr).toBe(0);
    expect(link.stdout).toMatch(
      new RegExp(`^${t.url}/connect/\\w+\\n\\(works once; expires .*; account ca_\\w+\\)`),
    );
    const table = await cli(['accounts', 'list', '--connection', 'notes']);
    expect(table.stdout).toMatch(/^ca_\w+\s+notes\s+user_42\s+ACTIVE/m);
    expect(table.stdout).toMatch(/^ca_\w+\s+notes\s+user_77\s+PENDING_AUTH/m);
    const active = JSON.parse((await cli(['accounts', 'list', '--status', 'ACTIVE', '--json'])).stdout) as {
      data: { id: string; identifier: string }[];
    };
    expect(active.data.map((a) => a.identifier)).toEqual(['user_42']);
    const id = active.data[0]!.id;
    expect((await cli(['accounts', 'get', id])).stdout).toMatch(/^status:\s+ACTIVE$/m);
    const deleted = await cli(['accounts', 'delete', id, '--json']);
    expect(JSON.parse(deleted.stdout)).toMatchObject({ id, status: 'DISCONNECTED' });
    // Put it back for the tool tests.
    await sandboxAccount(t, { provider: 'notion', identifier: 'user_42', connection: 'notes' });
  });

  it('issues a link with user verification and verifies the user', async () => {
    const made = await cli([
      'link',
      'notes',
      'user_88',
      '--user-verify-url',
      'https://app.example.com/verify',
      '--json',
    ]);
    expect(made.status, made.stderr).toBe(0);
    const { link } = JSON.parse(made.stdout) as { link: string };
    const start = await openLink(link);
    const callbackUrl = await submitConsent(start.headers.get('location')!, { decision: 'allow' });
    const done = await fetch(callbackUrl, { redirect: 'manual', headers: { cookie: browserCookie(start) } });
    const authRequestId = new URL(done.headers.get('location')!).searchParams.get('auth_request_id')!;
    const wrong = await cli(['accounts', 'verify', 'areq_nothing', 'user_88']);
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toMatch(/^error \(verification_not_found\)/);
    const verified = await cli(['accounts', 'verify', authRequestId, 'user_88']);
    expect(verified.status, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/^status:\s+ACTIVE$/m);
    expect((await cli(['accounts', 'verify', authRequestId])).status).toBe(2);
  });

  it('lists tools as a table or in an LLM format, runs one with input from JSON, a file or stdin', async () => {
    const table = await cli(['tools', 'list', '--provider', 'notion']);
    expect(table.stdout).toMatch(/^notes_user_list\s+notion\s+read\s+/m);
    expect(table.stdout).not.toMatch(/^crm_/m);
    // Exactly what the LLM API's `tools` parameter takes: an array, no envelope.
    const openai = JSON.parse(
      (await cli(['tools', 'list', '--provider', 'hubspot', '--format', 'openai'])).stdout,
    ) as { type: string; function: { name: string } }[];
    expect(Array.isArray(openai)).toBe(true);
    expect(openai.length).toBeGreaterThan(0);
    expect(openai.every((tool) => tool.type === 'function' && tool.function.name.startsWith('crm_'))).toBe(
      true,
    );
    const anthropic = JSON.parse(
      (await cli(['tools', 'list', '--provider', 'notion', '--format', 'anthropic'])).stdout,
    ) as { name: string; input_schema: object }[];
    expect(Array.isArray(anthropic)).toBe(true);
    expect(anthropic.every((tool) => tool.name.startsWith('notes_') && tool.input_schema)).toBe(true);

    const search = await cli(['tools', 'search', 'find', 'contacts', 'in the CRM', '--limit', '3']);
    expect(search.status, search.stderr).toBe(0);
    const lines = search.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+SCORE\s+PROVIDER\s+KIND\s+DESCRIPTION$/);
    expect(lines).toHaveLength(4);
    expect(search.stdout).toMatch(/^crm_contacts_search\s+\d+\.\d\s+hubspot\s+read\s+/m);
    const filtered = JSON.parse(
      (await cli(['tools', 'search', 'events', '--tags', 'calendar', '--read-only', 'true', '--json']))
        .stdout,
    ) as { data: { name: string; score: number; annotations: { readOnly: boolean } }[] };
    expect(filtered.data.length).toBeGreaterThan(0);
    expect(filtered.data.every((t) => t.name.startsWith('calendar_') && t.annotations.readOnly)).toBe(true);
    const destructive = await cli(['tools', 'list', '--provider', 'notion', '--tags', 'destructive']);
    expect(destructive.stdout).toMatch(/^notes_block_delete\s+/m);
    expect(destructive.stdout).not.toMatch(/^notes_user_list/m);
    const noWords = await cli(['tools', 'search']);
    expect(noWords.status).toBe(2);
    expect(noWords.stderr).toMatch(/tools search needs the task in words/);
    const badTag = await cli(['tools', 'search', 'mail', '--tags', 'nope']);
    expect(badTag.status).not.toBe(0);
    expect(badTag.stderr).toMatch(/invalid_input.*tags are:/s);

    const made = await cli([
      'toolsets',
      'create',
      '--name',
      'cli-notes',
      '--providers',
      'notion',
      '--tags',
      'read-only',
      '--mcp-mode',
      'search',
    ]);
    expect(made.status, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/^mcp_url:\s+http.*\/mcp\/t\/cli-notes$/m);
    const sets = await cli(['toolsets', 'list']);
    expect(sets.stdout.split('\n')[0]).toMatch(
      /^NAME\s+TOOLS\s+PATTERNS\s+PROVIDERS\s+CONNECTIONS\s+TAGS\s+MCP\s+MCP URL$/,
    );
    expect(sets.stdout).toMatch(/^cli-notes\s+notion\s+read-only\s+search\s+http/m);
    const within = await cli(['tools', 'list', '--toolset', 'cli-notes']);
    expect(within.stdout).toMatch(/^notes_user_list\s+/m);
    expect(within.stdout).not.toMatch(/^notes_page_create\s+/m);
    const updated = await cli([
      'toolsets',
      'update',
      'cli-notes',
      '--tags',
      '',
      '--tools',
      'calendar_list_events',
      '--json',
    ]);
    expect(JSON.parse(updated.stdout)).toMatchObject({ name: 'cli-notes', tools: ['calendar_list_events'] });
    expect(JSON.parse(updated.stdout)).not.toHaveProperty('tags');
    expect((await cli(['toolsets', 'update', 'cli-notes'])).status).toBe(2);
    expect((await cli(['toolsets', 'delete', 'cli-notes'])).stdout).toBe('deleted\n');
    const gone = await cli(['toolsets', 'get', 'cli-notes']);
    expect(gone.stderr).toMatch(/^error \(toolset_not_found\)/);

    const inline = await cli('tools run notes_user_list --identifier user_42 --input {"page_size":1}');
    expect(inline.status, inline.stderr).toBe(0);
    expect((JSON.parse(inline.stdout) as { results: unknown[] }).results).toHaveLength(1);
    const executionId = /execution (exec_\w+)/.exec(inline.stderr)![1]!;
    const execution = await cli(['executions', 'get', executionId, '--json']);
    expect(JSON.parse(execution.stdout)).toMatchObject({
      id: executionId,
      tool_name: 'notes_user_list',
      status: 'success',
    });

    const file = path.join(await mkdtemp(path.join(tmpdir(), 'portico-cli-')), 'input.json');
    await writeFile(file, '{"page_size": 2}');
    const fromFile = await cli([
      'tools',
      'run',
      'notes_user_list',
      '--identifier',
      'user_42',
      '--input',
      `@${file}`,
      '--json',
    ]);
    expect(JSON.parse(fromFile.stdout)).toMatchObject({ execution_id: expect.stringMatching(/^exec_/) });
    const fromStdin = await cli(
      ['tools', 'run', 'notes_user_list', '--identifier', 'user_42', '--input', '-'],
      '{"page_size": 1}',
    );
    expect(fromStdin.status, fromStdin.stderr).toBe(0);

    const invalid = await cli([
      'tools',
      'run',
      'notes_user_list',
      '--identifier',
      'user_42',
      '--input',
      '{"page_size": 1000}',
    ]);
    expect(invalid.status).toBe(1);
    expect(invalid.stderr).toMatch(/error \(invalid_input\)[\s\S]*\/tool_input\/page_size/);
    const typo = await cli(['tools', 'run', 'notes_user_lst', '--identifier', 'user_42']);
    expect(typo.stderr).toMatch(/Did you mean "notes_user_list"/);
    const notJson = await cli('tools run notes_user_list --identifier user_42 --input {page_size');
    expect(notJson.status).toBe(2);
    expect(notJson.stderr).toMatch(/--input is not valid JSON/);

    const executions = await cli(['executions', 'list', '--tool', 'notes_user_list', '--status', 'error']);
    expect(executions.stdout).toMatch(/^exec_\w+\s+notes_user_list\s+user_42\s+error\s+invalid_input/m);
  });

  it('mints, lists and revokes MCP tokens', async () => {
    const minted = await cli(
      'mcp-tokens create --identifier user_42 --connections notes --tools notes_user_list --json',
    );
    expect(minted.status, minted.stderr).toBe(0);
    const token = JSON.parse(minted.stdout) as { id: string; token: string; url: string };
    expect(token).toMatchObject({ token: expect.stringMatching(/^pmt_/), url: `${t.url}/mcp` });
    const table = await cli(['mcp-tokens', 'list', '--identifier', 'user_42']);
    expect(table.stdout).toMatch(new RegExp(`^${token.id}\\s+user_42\\s+notes\\s+notes_user_list\\s`, 'm'));
    expect(table.stdout).not.toContain(token.token);
    expect((await cli(['mcp-tokens', 'revoke', token.id])).status).toBe(0);
    expect((await cli(['mcp-tokens', 'list'])).stdout).not.toContain(token.id);
    const again = await cli(['mcp-tokens', 'revoke', token.id]);
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/mcp_token_not_found/);
  });

  it('manages webhook endpoints and lists events', async () => {
    const created = await cli(
      'webhooks create --url http://127.0.0.1:65530/hook --events connection.created,connection.deleted --json',
    );
    expect(created.status, created.stderr).toBe(0);
    const endpoint = JSON.parse(created.stdout) as { id: string; secret: string };
    expect(endpoint.secret).toMatch(/^whsec_/);
    const table = await cli(['webhooks', 'list']);
    expect(table.stdout).toMatch(
      new RegExp(
        `^${endpoint.id}\\s+http://127\\.0\\.0\\.1:65530/hook\\s+connection\\.created,connection\\.deleted\\s+yes`,
        'm',
      ),
    );
    expect(table.stdout).not.toContain(endpoint.secret);
    const disabled = await cli(['webhooks', 'update', endpoint.id, '--enabled', 'false', '--json']);
    expect(JSON.parse(disabled.stdout)).toMatchObject({ enabled: false });
    const rotated = JSON.parse((await cli(['webhooks', 'rotate-secret', endpoint.id, '--json'])).stdout) as {
      secret: string;
    };
    expect(rotated.secret).not.toBe(endpoint.secret);
    expect((await cli(['webhooks', 'delete', endpoint.id])).status).toBe(0);
    const bad = await cli(['webhooks', 'create', '--url', 'ftp://example.com/hook', '--events', '*']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/^error \(invalid_input\)[\s\S]*\/url/);

    await t.api('/api/v1/connections', {
      method: 'POST',
      json: { name: 'evented', provider: 'notion', sandbox: true },
    });
    const events = await cli(['events', 'list', '--type', 'connection.created']);
    expect(events.stdout).toMatch(/^evt_\w+\s+connection\.created\s+\S+\s+conn_\w+/m);
  });

  it('says how to reach the gateway when it cannot, and which credentials are missing', async () => {
    const unreachable = await runCliAsync(['connections', 'list'], {
      ...env,
      PORTICO_ENV_URL: 'http://127.0.0.1:65530',
    });
    expect(unreachable.status).toBe(1);
    expect(unreachable.stderr).toMatch(
      /^Could not reach the Portico gateway at http:\/\/127\.0\.0\.1:65530.*ECONNREFUSED.*Is it running\?/,
    );
    const anonymous = await runCliAsync(['connections', 'list'], { PORTICO_ENV_URL: t.url });
    expect(anonymous.status).toBe(2);
    // Only the line that matters, not the usage text after it.
    expect(anonymous.stderr.trim().split('\n')).toHaveLength(1);
    expect(anonymous.stderr).toMatch(/^Set PORTICO_CLIENT_ID and PORTICO_CLIENT_SECRET/);
    const wrong = await runCliAsync(['connections', 'list'], { ...env, PORTICO_CLIENT_SECRET: 'pcs_wrong' });
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toMatch(/invalid_client/);
  });
});

describe.each(BACKENDS)('CLI policies and approvals ($name)', (backend) => {
  let t: TestGateway;
  let env: Record<string, string>;
  const cli = (args: string[], input?: string) => runCliAsync(args, env, input);

  beforeAll(async () => {
    t = await startTestGateway(backend);
    env = { PORTICO_ENV_URL: t.url, PORTICO_CLIENT_ID: t.clientId, PORTICO_CLIENT_SECRET: t.clientSecret };
    await sandboxAccount(t, { provider: 'google_calendar', identifier: 'cli-guarded' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('creates, lists, replaces and deletes policies from JSON files; approves a held call', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'portico-cli-policy-'));
    const file = path.join(dir, 'policy.json');
    await writeFile(
      file,
      JSON.stringify({
        name: 'cli-hold',
        identifier: 'cli-guarded',
        approval_tools: ['@destructive'],
        constraints: [{ tools: ['calendar_*'], path: '/calendar_id', one_of: ['primary'] }],
      }),
    );
    const created = await cli(['policies', 'create', '--file', file, '--json']);
    expect(created.status, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({
      name: 'cli-hold',
      constraints: [{ path: '/calendar_id', one_of: ['primary'] }],
    });
    const table = await cli(['policies', 'list']);
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+CONNECTION\s+IDENTIFIER/);
    expect(table.stdout).toMatch(/^cli-hold\s+\*\s+cli-guarded/m);
    const bad = await cli(['policies', 'create', '--file', '-', '--json'], '{"name": "Bad Name"}');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('invalid_input');
    const replaced = await cli(
      ['policies', 'replace', 'cli-hold', '--file', '-', '--json'],
      '{"identifier": "cli-guarded", "enabled": true}',
    );
    expect(replaced.status, replaced.stderr).toBe(0);
    expect(JSON.parse(replaced.stdout)).toMatchObject({ name: 'cli-hold', approval_tools: ['@destructive'] });

    const event = await executeTool(t, {
      tool_name: 'calendar_create_event',
      identifier: 'cli-guarded',
      tool_input: { summary: 'From the CLI test', start_datetime: '2031-05-01T10:00:00Z' },
    });
    const held = await executeTool(t, {
      tool_name: 'calendar_delete_event',
      identifier: 'cli-guarded',
      tool_input: { event_id: (event.body.data as { id: string }).id },
    });
    expect(held.body.code).toBe('approval_required');
    const approvalId = held.body.approval_id as string;
    const pending = await cli(['approvals', 'list', '--status', 'pending']);
    expect(pending.stdout).toMatch(new RegExp(`^${approvalId}\\s+pending\\s+calendar_delete_event`, 'm'));
    const approved = await cli(['approvals', 'approve', approvalId, '--reason', 'checked by hand', '--json']);
    expect(approved.status, approved.stderr).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({ status: 'approved', reason: 'checked by hand' });
    const again = await cli(['approvals', 'deny', approvalId]);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('approval_used');

    expect((await cli(['policies', 'delete', 'cli-hold'])).status).toBe(0);
    expect((await t.api('/api/v1/policies/cli-hold')).status).toBe(404);
  });
});
