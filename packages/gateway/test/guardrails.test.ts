import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalRequiredError, Portico } from '../../sdk/src/index.js';
import { BACKENDS } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

describe.each(BACKENDS)('guardrails: policies and approvals on $name', (backend) => {
  let t: TestGateway;
  const ID = 'guarded-user';
  const OTHER = 'unguarded-user';
  let calendar: string;

  beforeAll(async () => {
    t = await startTestGateway(backend);
    calendar = (await sandboxAccount(t, { provider: 'google_calendar', identifier: ID })).connection;
    await sandboxAccount(t, { provider: 'google_calendar', identifier: OTHER });
  });
  afterAll(async () => {
    await t?.close();
  });

  const api = async (path: string, init: { method?: string; json?: unknown } = {}) => {
    const res = await t.api(path, init);
    const text = await res.text();
    // biome-ignore lint/suspicious/noExplicitAny: answers are read loosely, field by field
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, any> };
  };
  const policy = (json: Record<string, unknown>) => api('/api/v1/policies', { method: 'POST', json });
  const createEvent = (identifier: string, input: Record<string, unknown> = {}) =>
    executeTool(t, {
      tool_name: 'calendar_create_event',
      identifier,
      tool_input: { summary: 'Guarded', start_datetime: '2031-03-01T10:00:00Z', ...input },
    });
  const deleteEvent = (identifier: string, eventId: string, extra: Record<string, unknown> = {}) =>
    executeTool(t, {
      tool_name: 'calendar_delete_event',
      identifier,
      tool_input: { event_id: eventId },
      ...extra,
    });
  const eventExists = async (identifier: string, eventId: string) =>
    (
      await executeTool(t, {
        tool_name: 'calendar_get_event_by_id',
        identifier,
        tool_input: { event_id: eventId },
      })
    ).status === 200;

  it('manages policies and refuses bad ones with the field named', async () => {
    const bad = await policy({ name: 'Bad Name', allow_tools: ['calendar_*'] });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_input');
    const created = await policy({
      name: 'calendar-primary-only',
      connection_name: calendar,
      identifier: ID,
      allow_tools: ['calendar_*'],
      constraints: [{ tools: ['calendar_*'], path: '/calendar_id', one_of: ['primary'] }],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'calendar-primary-only',
      approval_tools: ['@destructive'],
      enabled: true,
    });
    expect((await policy({ name: 'calendar-primary-only' })).body.code).toBe('policy_exists');
    const listed = await api('/api/v1/policies');
    expect(listed.body.data.map((p: { name: string }) => p.name)).toContain('calendar-primary-only');
    const missing = await api('/api/v1/policies/calendar-primary-onyl');
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toContain('did you mean "calendar-primary-only"');
  });

  it('refuses a constrained argument with the policy and the field named, before the provider', async () => {
    const refused = await createEvent(ID, { calendar_id: 'team@example.com' });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'policy_constraint', policy: 'calendar-primary-only' });
    expect(refused.body.errors).toEqual([
      {
        path: '/tool_input/calendar_id',
        message: 'must be one of "primary" (policy "calendar-primary-only")',
      },
    ]);
    expect((await createEvent(ID, { calendar_id: 'primary' })).status).toBe(200);
    // Another end user of the same connection is not under this policy.
    expect((await createEvent(OTHER, { calendar_id: 'team@example.com' })).status).not.toBe(403);
  });

  it('refuses a denied tool with the policy named and what it allows', async () => {
    await policy({
      name: 'no-listing',
      connection_name: calendar,
      identifier: ID,
      deny_tools: ['calendar_list_*'],
    });
    const refused = await executeTool(t, {
      tool_name: 'calendar_list_calendars',
      identifier: ID,
      tool_input: {},
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'policy_denied', policy: 'no-listing' });
    expect(refused.body.detail).toContain('calendar_list_calendars');
    const removed = await api('/api/v1/policies/no-listing', { method: 'DELETE' });
    expect(removed.status).toBe(204);
    expect(
      (await executeTool(t, { tool_name: 'calendar_list_calendars', identifier: ID, tool_input: {} })).status,
    ).toBe(200);
  });

  it('holds a destructive call for approval; once approved it runs once, with the approved input', async () => {
    const event = await createEvent(ID);
    const eventId = (event.body.data as { id: string }).id;
    const held = await deleteEvent(ID, eventId);
    expect(held.status).toBe(403);
    expect(held.body).toMatchObject({
      code: 'approval_required',
      policy: 'calendar-primary-only',
      approval_status: 'pending',
    });
    const approvalId = held.body.approval_id as string;
    expect(held.body.approval_url).toBe(`${t.url}/api/v1/approvals/${approvalId}`);
    expect(await eventExists(ID, eventId)).toBe(true);

    const early = await deleteEvent(ID, eventId, { approval_id: approvalId });
    expect(early.status).toBe(409);
    expect(early.body.code).toBe('approval_pending');

    const shown = await api(`/api/v1/approvals/${approvalId}`);
    expect(shown.body).toMatchObject({
      status: 'pending',
      tool_name: 'calendar_delete_event',
      tool_input: { event_id: eventId },
    });
    const approved = await api(`/api/v1/approvals/${approvalId}/approve`, {
      method: 'POST',
      json: { reason: 'ok' },
    });
    expect(approved.status).toBe(200);
    expect(approved.body.status).toBe('approved');

    const other = await createEvent(ID);
    const otherId = (other.body.data as { id: string }).id;
    const swapped = await deleteEvent(ID, otherId, { approval_id: approvalId });
    expect(swapped.status).toBe(409);
    expect(swapped.body.code).toBe('approval_mismatch');

    const ran = await executeTool(t, {
      tool_name: 'calendar_delete_event',
      identifier: ID,
      approval_id: approvalId,
    });
    expect(ran.status).toBe(200);
    expect(await eventExists(ID, eventId)).toBe(false);
    expect(await eventExists(ID, otherId)).toBe(true);
    const again = await deleteEvent(ID, eventId, { approval_id: approvalId });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('approval_used');
    const used = await api(`/api/v1/approvals/${approvalId}`);
    expect(used.body).toMatchObject({ status: 'used', execution_id: ran.body.execution_id });
    // Deciding twice is refused.
    expect((await api(`/api/v1/approvals/${approvalId}/deny`, { method: 'POST', json: {} })).status).toBe(
      409,
    );
  });

  it('never runs a denied or an expired approval', async () => {
    const event = await createEvent(ID);
    const eventId = (event.body.data as { id: string }).id;
    const denied = (await deleteEvent(ID, eventId)).body.approval_id as string;
    await api(`/api/v1/approvals/${denied}/deny`, { method: 'POST', json: { reason: 'not this one' } });
    const refused = await deleteEvent(ID, eventId, { approval_id: denied });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('approval_denied');
    expect(refused.body.detail).toContain('not this one');

    const expiring = (await deleteEvent(ID, eventId)).body.approval_id as string;
    await api(`/api/v1/approvals/${expiring}/approve`, { method: 'POST', json: {} });
    await t.db.query(`UPDATE approvals SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      expiring,
    ]);
    const late = await deleteEvent(ID, eventId, { approval_id: expiring });
    expect(late.status).toBe(410);
    expect(late.body.code).toBe('approval_expired');
    expect(await eventExists(ID, eventId)).toBe(true);

    const pending = await api('/api/v1/approvals?status=expired');
    expect(pending.body.data.map((a: { id: string }) => a.id)).toContain(expiring);
    const events = await api('/api/v1/events?page_size=100');
    const types = events.body.data.map((e: { type: string }) => e.type);
    for (const type of ['approval.requested', 'approval.approved', 'approval.denied', 'approval.expired']) {
      expect(types).toContain(type);
    }
  });

  it('spends a budget of calls per end user and window, then refuses with when to retry', async () => {
    await policy({
      name: 'two-calls',
      identifier: OTHER,
      budget: { calls: 2, period_seconds: 3600 },
      approval_tools: [],
    });
    const call = () =>
      executeTool(t, { tool_name: 'calendar_list_calendars', identifier: OTHER, tool_input: {} });
    expect((await call()).status).toBe(200);
    expect((await call()).status).toBe(200);
    const spent = await call();
    expect(spent.status).toBe(429);
    expect(spent.body).toMatchObject({
      code: 'policy_budget_exceeded',
      policy: 'two-calls',
      retryable: true,
    });
    expect(spent.body.retry_after_ms).toBeGreaterThan(0);
    // The budget is the end user's: another one is not counted.
    expect(
      (await executeTool(t, { tool_name: 'calendar_list_calendars', identifier: ID, tool_input: {} })).status,
    ).toBe(200);
    expect((await api('/api/v1/policies/two-calls', { method: 'DELETE' })).status).toBe(204);
    expect((await call()).status).toBe(200);
  });

  it('through the SDK: a policy, the held call as ApprovalRequiredError, the approval, the one run', async () => {
    const portico = new Portico({ envUrl: t.url, clientId: t.clientId, clientSecret: t.clientSecret });
    const created = await portico.policies.create({
      name: 'sdk-approvals',
      identifier: OTHER,
      approvalTools: ['calendar_create_event'],
      constraints: [{ tools: ['calendar_create_event'], path: '/summary', oneOf: ['Approved by SDK'] }],
    });
    expect(created.constraints).toEqual([
      { tools: ['calendar_create_event'], path: '/summary', oneOf: ['Approved by SDK'] },
    ]);
    const call = { toolName: 'calendar_create_event', identifier: OTHER };
    const input = { summary: 'Approved by SDK', start_datetime: '2031-04-01T09:00:00Z' };
    const held = await portico.tools.execute({ ...call, toolInput: input }).catch((e: unknown) => e);
    expect(held).toBeInstanceOf(ApprovalRequiredError);
    const approval = (held as ApprovalRequiredError).approval!;
    expect(approval.policy).toBe('sdk-approvals');
    const pending: string[] = [];
    for await (const a of portico.approvals.list({ status: 'pending', identifier: OTHER }))
      pending.push(a.id);
    expect(pending).toContain(approval.id);
    expect((await portico.approvals.approve(approval.id, 'fine')).status).toBe('approved');
    const ran = await portico.tools.execute<{ summary: string }>({ ...call, approvalId: approval.id });
    expect(ran.data.summary).toBe('Approved by SDK');
    expect((await portico.approvals.get(approval.id)).status).toBe('used');
    await portico.policies.delete('sdk-approvals');
    expect((await portico.policies.list()).map((p) => p.name)).not.toContain('sdk-approvals');
  });

  it('over MCP: the held call answers approval_required, and portico_run_approved runs it once approved', async () => {
    await policy({ name: 'mcp-holds-creates', identifier: OTHER, approval_tools: ['calendar_create_event'] });
    const client = new Client({ name: 'guardrails-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${await t.token()}`, identifier: OTHER } },
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('portico_run_approved');
      const input = { summary: 'Held over MCP', start_datetime: '2031-05-01T09:00:00Z' };
      const held = (await client.callTool({
        name: 'calendar_create_event',
        arguments: input,
      })) as CallToolResult;
      expect(held.isError).toBe(true);
      const problem = JSON.parse((held.content[0] as { text: string }).text) as Record<string, string>;
      expect(problem.code).toBe('approval_required');
      const run = () =>
        client.callTool({
          name: 'portico_run_approved',
          arguments: { approval_id: problem.approval_id, tool_name: 'calendar_create_event' },
        }) as Promise<CallToolResult>;
      const early = await run();
      expect(JSON.parse((early.content[0] as { text: string }).text).code).toBe('approval_pending');
      await api(`/api/v1/approvals/${problem.approval_id}/approve`, { method: 'POST', json: {} });
      const ran = await run();
      expect(ran.isError).toBeFalsy();
      expect((ran.structuredContent as { summary: string }).summary).toBe('Held over MCP');
      const approval = await api(`/api/v1/approvals/${problem.approval_id}`);
      expect(approval.body).toMatchObject({ status: 'used', requested_by: `mcp:${OTHER}` });
    } finally {
      await client.close();
      await api('/api/v1/policies/mcp-holds-creates', { method: 'DELETE' });
    }
  });
});
