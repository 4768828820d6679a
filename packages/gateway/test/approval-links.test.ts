import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolService } from '../src/grpc/descriptors.js';
import { BACKENDS } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';

// An approver decides from the link the approval.requested webhook carries; an agent on the
// official gRPC SDK's wire retries the approved call with the approval id in its metadata.
describe.each(BACKENDS)('approval links and gRPC approvals on $name', (backend) => {
  let t: TestGateway;
  let receiver: Receiver;
  let secret: string;
  const ID = 'link-approved-user';

  beforeAll(async () => {
    t = await startTestGateway(backend, { PORTICO_WEBHOOK_ALLOW_PRIVATE: 'true' });
    receiver = await startReceiver();
    const hook = await t.api('/api/v1/webhooks', {
      method: 'POST',
      json: { url: receiver.url, events: ['approval.requested', 'approval.approved', 'approval.denied'] },
    });
    expect(hook.status).toBe(201);
    ({ secret } = (await hook.json()) as { secret: string });
    await sandboxAccount(t, { provider: 'google_calendar', identifier: ID });
    const policy = await t.api('/api/v1/policies', {
      method: 'POST',
      json: { name: 'hold-deletes', identifier: ID },
    });
    expect(policy.status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  const newEvent = async () => {
    const created = await executeTool(t, {
      tool_name: 'calendar_create_event',
      identifier: ID,
      tool_input: { summary: 'Held', start_datetime: '2031-04-01T10:00:00Z' },
    });
    expect(created.status).toBe(200);
    return (created.body.data as { id: string }).id;
  };
  const heldDelete = async (eventId: string) => {
    const held = await executeTool(t, {
      tool_name: 'calendar_delete_event',
      identifier: ID,
      tool_input: { event_id: eventId },
    });
    expect(held.status).toBe(403);
    expect(held.body.code).toBe('approval_required');
    return held.body.approval_id as string;
  };
  /** The decision link the approval.requested webhook carried for this approval. */
  const decisionUrl = async (approvalId: string) => {
    const find = () =>
      receiver.verified(secret).find((e) => e.type === 'approval.requested' && e.data.id === approvalId);
    await receiver.waitFor(() => find() !== undefined);
    const url = find()!.data.decision_url as string;
    expect(url.startsWith(`${t.url}/approvals/decide/${approvalId}.`)).toBe(true);
    return url;
  };
  const approval = async (id: string) =>
    (await (await t.api(`/api/v1/approvals/${id}`)).json()) as Record<string, unknown>;
  const decide = (url: string, decision: string, reason = '') =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ decision, reason }),
    });
  const eventExists = async (eventId: string) =>
    (
      await executeTool(t, {
        tool_name: 'calendar_get_event_by_id',
        identifier: ID,
        tool_input: { event_id: eventId },
      })
    ).status === 200;

  it('shows the held call on the link without deciding it, then approves it once', async () => {
    const eventId = await newEvent();
    const approvalId = await heldDelete(eventId);
    const url = await decisionUrl(approvalId);

    // Opening the link (a chat preview, a mail scanner) decides nothing.
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const html = await page.text();
    expect(html).toContain('calendar_delete_event');
    expect(html).toContain(eventId);
    expect((await fetch(url, { method: 'HEAD' })).status).toBe(200);
    expect((await approval(approvalId)).status).toBe('pending');

    const approved = await decide(url, 'approve', 'looked fine');
    expect(approved.status).toBe(200);
    expect(await approved.text()).toContain('Call approved');
    expect(await approval(approvalId)).toMatchObject({
      status: 'approved',
      decided_by: 'link',
      reason: 'looked fine',
    });
    await receiver.waitFor(() =>
      receiver.verified(secret).some((e) => e.type === 'approval.approved' && e.data.id === approvalId),
    );
    // The data of the later events carries no decision link.
    for (const e of receiver.verified(secret).filter((e) => e.type !== 'approval.requested')) {
      expect(e.data.decision_url).toBeUndefined();
    }

    // Recorded in the audit log with the link as the actor, and never the link's token.
    const audit = (await (
      await t.api(`/api/v1/audit?action=approval.approved&resource_id=${approvalId}`)
    ).json()) as { data: Array<Record<string, unknown>> };
    expect(audit.data).toHaveLength(1);
    expect(audit.data[0]).toMatchObject({
      actor_type: 'link',
      actor_id: approvalId,
      resource_type: 'approval',
    });
    expect(JSON.stringify(audit.data)).not.toContain(url.slice(url.lastIndexOf('.') + 1));

    // The link works once: a second decision, either way, is refused and changes nothing.
    const again = await decide(url, 'deny');
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('approval_used');
    expect((await approval(approvalId)).status).toBe('approved');

    // The approved call runs once, through the REST retry.
    const ran = await executeTool(t, {
      tool_name: 'calendar_delete_event',
      identifier: ID,
      tool_input: { event_id: eventId },
      approval_id: approvalId,
    });
    expect(ran.status).toBe(200);
    expect(await eventExists(eventId)).toBe(false);
  });

  it('refuses forged, tampered and unknown links with a page, not a decision', async () => {
    const approvalId = await heldDelete(await newEvent());
    const url = await decisionUrl(approvalId);
    const [id, kid, mac] = url.slice(url.lastIndexOf('/') + 1).split('.') as [string, string, string];
    const base = `${t.url}/approvals/decide/`;
    const flipped = `${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`;
    for (const token of [
      `${id}.${kid}.${flipped}`,
      `${id}.unknownkey.${mac}`,
      `apr_${'x'.repeat(22)}.${kid}.${mac}`,
      'not-a-token',
      `${id}.${kid}.${mac}.more`,
    ]) {
      const shown = await fetch(base + token);
      expect(shown.status).toBe(404);
      expect(await shown.text()).toContain('approval_not_found');
      expect((await decide(base + token, 'approve')).status).toBe(404);
    }
    const noChoice = await decide(url, 'maybe');
    expect(noChoice.status).toBe(400);
    expect((await approval(approvalId)).status).toBe('pending');

    const denied = await decide(url, 'deny', 'not today');
    expect(denied.status).toBe(200);
    expect(await denied.text()).toContain('Call denied');
    const page = await (await fetch(url)).text();
    expect(page).toContain('already denied');
  });

  it('runs an approved call over gRPC once, named by the x-portico-approval-id metadata', async () => {
    const tools = createClient(ToolService, createGrpcTransport({ baseUrl: t.url }));
    const headers = { authorization: `Bearer ${await t.token()}` };
    const eventId = await newEvent();
    const call = {
      toolName: 'calendar_delete_event',
      identifier: ID,
      params: { event_id: eventId },
    };
    const held = await tools.executeTool(call, { headers }).catch((e: unknown) => e);
    expect(held).toBeInstanceOf(ConnectError);
    expect((held as ConnectError).code).toBe(Code.FailedPrecondition);
    const approvalId = /approval (apr_[0-9A-Za-z]+)/.exec((held as ConnectError).rawMessage)?.[1];
    expect(approvalId).toBeDefined();

    const early = await tools
      .executeTool(call, { headers: { ...headers, 'x-portico-approval-id': approvalId! } })
      .catch((e: unknown) => e);
    expect((early as ConnectError).code).toBe(Code.FailedPrecondition);
    expect((early as ConnectError).rawMessage).toContain('waits for a decision');

    expect((await decide(await decisionUrl(approvalId!), 'approve')).status).toBe(200);
    const ran = await tools.executeTool(call, {
      headers: { ...headers, 'x-portico-approval-id': approvalId! },
    });
    expect(ran.executionId).toMatch(/^exec_/);
    expect(await eventExists(eventId)).toBe(false);
    const twice = await tools
      .executeTool(call, { headers: { ...headers, 'x-portico-approval-id': approvalId! } })
      .catch((e: unknown) => e);
    expect((twice as ConnectError).rawMessage).toContain('runs once');
  });
});
