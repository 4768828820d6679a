import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../src/events/types.js';
import { BACKENDS } from './helpers/backends.js';
import { authorize, createSandboxConnection, executeTool, openLink } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';

const WEBHOOK_ENV = {
  PORTICO_WEBHOOK_ALLOW_PRIVATE: 'true',
  PORTICO_WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms',
  PORTICO_WEBHOOK_TIMEOUT_MS: '1000',
};

interface Listed {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

async function allEvents(t: TestGateway, query = ''): Promise<Listed[]> {
  const res = await t.api(`/api/v1/events?page_size=200${query}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: Listed[] }).data;
}

// Every account and connection change is recorded with the change and arrives signed at a receiver.
describe.each(BACKENDS)('events on $name', (backend) => {
  let t: TestGateway;
  let receiver: Receiver;
  let secret: string;

  beforeAll(async () => {
    t = await startTestGateway(backend, WEBHOOK_ENV);
    receiver = await startReceiver();
    const res = await t.api('/api/v1/webhooks', {
      method: 'POST',
      json: { url: receiver.url, events: ['*', 'tool.execution.failed'], description: 'all of them' },
    });
    expect(res.status).toBe(201);
    ({ secret } = (await res.json()) as { secret: string });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('emits every event type from the action that causes it, delivered signed and in order', async () => {
    // connection.created, connection.updated
    const connection = await createSandboxConnection(t, 'events-notion', 'notion');
    const patched = await t.api('/api/v1/connections/events-notion', {
      method: 'PATCH',
      json: { display_name: 'Events app' },
    });
    expect(patched.status).toBe(200);
    // connected_account.created (a link for a new pair), then authorization_failed (consent denied)
    const denied = await authorize(t, {
      connection: 'events-notion',
      identifier: 'ev-user',
      decision: 'deny',
    });
    expect(denied.response.status).toBe(400);
    // connected_account.authorized (a second link for the same pair creates nothing)
    const allowed = await authorize(t, { connection: 'events-notion', identifier: 'ev-user' });
    expect(allowed.response.status).toBe(200);
    // connected_account.expired: the provider refuses the grant at refresh; the failed tool call is an event too
    const revoked = await t.api('/api/v1/sandbox/connections/events-notion/revoke-grants', {
      method: 'POST',
    });
    expect(revoked.status).toBe(200);
    const call = await executeTool(t, { tool_name: 'notes_user_list', identifier: 'ev-user' });
    expect(call.status).toBe(409);
    // The call's record (and its event) is written in the background, within 200 ms; a listing flushes it.
    await t.api('/api/v1/executions');
    // The link in the expiry event works: it starts a consent trip.
    const [expiry] = await allEvents(t, '&type=connected_account.expired');
    const link = (expiry!.data.authorization_link as { link: string }).link;
    expect((await openLink(link)).status).toBe(303);
    // connected_account.disconnected, connection.deleted
    expect(
      (await t.api(`/api/v1/connected-accounts/${allowed.accountId}`, { method: 'DELETE' })).status,
    ).toBe(200);
    expect((await t.api('/api/v1/connections/events-notion', { method: 'DELETE' })).status).toBe(204);

    const expected = [
      'connection.created',
      'connection.updated',
      'connected_account.created',
      'connected_account.authorization_failed',
      'connected_account.authorized',
      'connected_account.expired',
      'tool.execution.failed',
      'connected_account.disconnected',
      'connected_account.disconnected',
      'connection.deleted',
    ];
    const listed = await allEvents(t);
    expect(listed.map((e) => e.type)).toEqual(expected);
    await receiver.waitFor((r) => r.length >= expected.length);
    const delivered = receiver.verified(secret);
    expect(new Set(delivered.map((e) => e.id))).toEqual(new Set(listed.map((e) => e.id)));
    // Order per subject: each connection's and each account's events arrive as they happened.
    const bySubject = (events: Listed[], id: string) =>
      events.filter((e) => e.data.id === id || e.data.connected_account_id === id).map((e) => e.id);
    expect(bySubject(delivered, allowed.accountId)).toEqual(bySubject(listed, allowed.accountId));
    expect(bySubject(delivered, connection.id)).toEqual(bySubject(listed, connection.id));
    for (const r of receiver.received) {
      expect(r.headers['webhook-id']).toMatch(/^evt_/);
      expect(r.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
      expect(r.headers['content-type']).toBe('application/json');
    }

    const of = (type: string) => listed.filter((e) => e.type === type);
    expect(of('connection.created')[0]!.data).toMatchObject({
      id: connection.id,
      name: 'events-notion',
      provider: 'notion',
    });
    expect(of('connection.updated')[0]!.data).toMatchObject({ display_name: 'Events app' });
    expect(of('connected_account.created')[0]!.data).toMatchObject({
      id: allowed.accountId,
      identifier: 'ev-user',
      connection_name: 'events-notion',
      status: 'PENDING_AUTH',
    });
    expect(of('connected_account.authorization_failed')[0]!.data).toMatchObject({
      id: allowed.accountId,
      reason: { code: 'access_denied' },
    });
    expect(of('connected_account.authorized')[0]!.data).toMatchObject({
      id: allowed.accountId,
      status: 'ACTIVE',
      scopes: expect.any(Array),
    });
    const expired = of('connected_account.expired')[0]!.data;
    expect(expired).toMatchObject({
      id: allowed.accountId,
      status: 'EXPIRED',
      reason: { code: expect.any(String), message: expect.any(String) },
      authorization_link: { link: expect.stringContaining('/connect/'), expires_at: expect.any(String) },
    });
    expect(of('tool.execution.failed')[0]!.data).toMatchObject({
      tool_name: 'notes_user_list',
      status: 'error',
      error_code: 'account_not_active',
    });
    expect(of('connected_account.disconnected').map((e) => e.data.reason)).toEqual([
      expect.objectContaining({ code: 'disconnected' }),
      expect.objectContaining({ code: 'connection_deleted' }),
    ]);
    expect(of('connection.deleted')[0]!.data).toMatchObject({ id: connection.id });

    // Never a token or secret: not the provider's, not the connection's client secret.
    const text = JSON.stringify(listed) + receiver.received.map((r) => r.body).join('');
    expect(text).not.toMatch(/access_token|refresh_token|client_secret|ya29\.|secret_/);
  });

  it('lists events by type and after a given event, and refuses what it cannot list', async () => {
    const all = await allEvents(t);
    expect(all.length).toBeGreaterThan(3);
    const accounts = await allEvents(t, '&type=connected_account.authorized');
    expect(accounts.map((e) => e.type)).toEqual(['connected_account.authorized']);
    const page = await t.api(`/api/v1/events?page_size=2&after=${all[0]!.id}`);
    const body = (await page.json()) as { data: Listed[]; has_more: boolean; next_after: string };
    expect(body.data.map((e) => e.id)).toEqual([all[1]!.id, all[2]!.id]);
    expect(body.has_more).toBe(true);
    expect(body.next_after).toBe(all[2]!.id);

    // Newest first (for people): "after" then continues to older events.
    const newest = await allEvents(t, '&order=newest_first');
    expect(newest.map((e) => e.id)).toEqual([...all].reverse().map((e) => e.id));
    const older = (await (
      await t.api(`/api/v1/events?order=newest_first&page_size=2&after=${newest[0]!.id}`)
    ).json()) as { data: Listed[] };
    expect(older.data.map((e) => e.id)).toEqual([newest[1]!.id, newest[2]!.id]);

    const unknownType = await t.api('/api/v1/events?type=account.exploded');
    expect(unknownType.status).toBe(400);
    expect(unknownType.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const problem = (await unknownType.json()) as {
      code: string;
      detail: string;
      errors: Array<{ path: string }>;
    };
    expect(problem.code).toBe('invalid_input');
    expect(problem.errors[0]!.path).toBe('/type');
    expect(problem.detail).toContain('connected_account.created');
    const unknownAfter = await t.api('/api/v1/events?after=evt_doesnotexist');
    expect(unknownAfter.status).toBe(400);
    expect(((await unknownAfter.json()) as { errors: Array<{ path: string }> }).errors[0]!.path).toBe(
      '/after',
    );
  });

  it('commits no event without its change: a refused change records nothing', async () => {
    const before = (await allEvents(t)).length;
    await createSandboxConnection(t, 'twice', 'notion');
    const again = await t.api('/api/v1/connections', {
      method: 'POST',
      json: { name: 'twice', provider: 'notion', sandbox: true },
    });
    expect(again.status).toBe(409);
    const after = await allEvents(t);
    expect(after.slice(before).map((e) => e.type)).toEqual(['connection.created']);
  });

  it('commits no change without its event: an event that cannot be written rolls the change back', async () => {
    // A trigger stands in for any failure between the change and its event inside the transaction.
    await t.db.query(`CREATE FUNCTION refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'event refused'; END $$`);
    await t.db.query(
      'CREATE TRIGGER refuse_event BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION refuse_event()',
    );
    try {
      const res = await t.api('/api/v1/connections', {
        method: 'POST',
        json: { name: 'never-there', provider: 'notion', sandbox: true },
      });
      expect(res.status).toBe(500);
      expect((await t.api('/api/v1/connections/never-there')).status).toBe(404);
    } finally {
      await t.db.query('DROP TRIGGER refuse_event ON events');
      await t.db.query('DROP FUNCTION refuse_event()');
    }
  });

  it('reports an authorization abandoned until every link expired as failed when the account is removed', async () => {
    await createSandboxConnection(t, 'abandoned', 'notion');
    const res = await t.api('/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      json: { connection_name: 'abandoned', identifier: 'walked-away' },
    });
    const { connected_account_id: id } = (await res.json()) as { connected_account_id: string };
    await t.db.query(
      `UPDATE authorization_links SET expires_at = now() - interval '1 minute' WHERE account_id = $1`,
      [id],
    );
    expect(await t.gateway.accounts.pruneAbandoned()).toBe(1);
    const failed = await allEvents(t, '&type=connected_account.authorization_failed');
    expect(failed.at(-1)!.data).toMatchObject({
      id,
      identifier: 'walked-away',
      reason: { code: 'abandoned' },
    });
  });

  it('removes events past the retention period', async () => {
    const listed = await allEvents(t);
    await t.db.query(`UPDATE events SET created_at = now() - interval '31 days' WHERE id = $1`, [
      listed[0]!.id,
    ]);
    expect(await t.gateway.events.prune()).toBe(1);
    expect((await allEvents(t)).map((e) => e.id)).not.toContain(listed[0]!.id);
  });

  it('knows every type it documents', () => {
    expect(EVENT_TYPES).toContain('webhook.disabled');
  });
});
