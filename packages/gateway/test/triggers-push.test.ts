import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GoogleState } from '../../emulators/src/providers/google/user-data.js';
import type { HubSpotState } from '../../emulators/src/providers/hubspot/store.js';
import { configureAppWebhooks } from '../../emulators/src/providers/hubspot/webhooks.js';
import type { MicrosoftState } from '../../emulators/src/providers/microsoft/model.js';
import { sendLifecycle } from '../../emulators/src/providers/microsoft/subscriptions.js';
import type { NotionState } from '../../emulators/src/providers/notion/model.js';
import { createNotionWebhook, verifyNotionWebhook } from '../../emulators/src/providers/notion/webhooks.js';
import { BACKENDS } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { emulatorControl } from './helpers/tools.js';
import { TRIGGER_ENV, type TriggerHarness, triggerHarness, until } from './helpers/triggers.js';

// Push channels against the emulators, which send the providers' real deliveries to the gateway's
// receiving routes: Google watch channels (Calendar, Drive), Graph subscriptions (validation
// handshake, clientState, renewal, lifecycle), HubSpot's and Notion's signed app webhooks. Each
// trigger polls once an hour, so a change delivered within 2 s came by push; each is delivered once.

const ADA = '110000000000000000001';
const HUBSPOT_ADA = '71000001';
const NOTION_ADA = 'ada00000-0000-4000-8000-000000000001';
const ROADMAP = '6042b18c-8264-48b6-99d8-01794faa2b55';
const ID = 'push';
const HOUR = 3600;
const PUSH_MS = 2000;

describe.each(BACKENDS)('trigger push channels on $name', (backend) => {
  let t: TestGateway;
  let h: TriggerHarness;
  const conn: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestGateway(backend, { ...TRIGGER_ENV, PORTICO_TRIGGER_PUSH: 'true' });
    h = await triggerHarness(() => t);
    for (const [provider, userId] of [
      ['google_calendar', ADA],
      ['google_drive', ADA],
      ['hubspot', HUBSPOT_ADA],
      ['notion', NOTION_ADA],
      ['sharepoint', undefined],
    ] as const) {
      conn[provider] = (
        await sandboxAccount(t, { provider, identifier: ID, ...(userId ? { userId } : {}) })
      ).connection;
    }
  });

  afterAll(async () => {
    await t?.close();
    await h?.receiver.close();
  });

  const control = () => emulatorControl(t);
  const tool = async (tool_name: string, tool_input: unknown) => {
    const res = await executeTool(t, { tool_name, identifier: ID, tool_input });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as Record<string, unknown>;
  };
  const subscribe = async (provider: string, trigger_type: string, config: Record<string, unknown> = {}) =>
    (
      await h.createTrigger({
        connection_name: conn[provider],
        identifier: ID,
        trigger_type,
        config,
        interval_seconds: HOUR,
      })
    ).id as string;
  const connection = async (provider: string) =>
    (await (await t.api(`/api/v1/connections/${conn[provider]}`)).json()) as {
      id: string;
      client_id: string;
    };
  /** Runs `change`, then waits for the trigger's first event; returns how long that took. */
  const delivered = async (id: string, change: () => Promise<unknown>) => {
    const before = h.firedFor(id).length;
    const started = Date.now();
    await change();
    await h.receiver.waitFor(() => h.firedFor(id).length > before, 10_000);
    const ms = Date.now() - started;
    // Nothing more: the notification and the poll it woke report the change once.
    await new Promise((r) => setTimeout(r, 500));
    expect(h.firedFor(id)).toHaveLength(before + 1);
    return ms;
  };
  const problem = async (res: Response) => {
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    return (await res.json()) as { code: string; detail: string };
  };

  it('a Calendar watch channel: a change arrives within 2 s, once; a forged notification is refused; delete stops the channel', async () => {
    const id = await subscribe('google_calendar', 'calendar_events');
    expect(await h.trigger(id)).toMatchObject({ push: { state: 'active', error: null } });
    const google = control().state<GoogleState>('google');
    const channel = [...google.channels.values()].find((c) => c.watches.kind === 'calendar')!;
    expect(channel).toMatchObject({ address: `${t.url}/push/google`, messageNumber: 1 });
    const ms = await delivered(id, () =>
      tool('calendar_create_event', { summary: 'Pushed', start_datetime: '2031-03-04T10:00:00Z' }),
    );
    expect(ms).toBeLessThan(PUSH_MS);
    expect(h.firedFor(id)[0]).toMatchObject({ data: { change: 'created', item: { summary: 'Pushed' } } });
    expect(channel.messageNumber).toBe(2);

    // A notification with another token, or for no channel, is refused and wakes nothing.
    const forgeries: Array<Record<string, string>> = [
      {
        'x-goog-channel-id': channel.id,
        'x-goog-channel-token': 'forged',
        'x-goog-resource-state': 'exists',
      },
      { 'x-goog-channel-id': 'ptc_unknown', 'x-goog-channel-token': 'x', 'x-goog-resource-state': 'exists' },
      { 'x-goog-resource-state': 'exists' },
    ];
    for (const headers of forgeries) {
      const res = await fetch(`${t.url}/push/google`, { method: 'POST', headers });
      expect(res.status).toBe(401);
      expect(await problem(res)).toMatchObject({ code: 'unauthenticated' });
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(h.firedFor(id)).toHaveLength(1);

    expect((await h.remove(id)).status).toBe(204);
    expect(google.channels.has(channel.id)).toBe(false);
  });

  it('a Drive changes.watch channel: a new file arrives within 2 s, once', async () => {
    const id = await subscribe('google_drive', 'drive_files');
    expect((await h.trigger(id)).push).toMatchObject({ state: 'active' });
    const ms = await delivered(id, async () => {
      const res = await t.api('/proxy/drive/v3/files', {
        method: 'POST',
        headers: { connection_name: conn.google_drive!, identifier: ID },
        json: { name: 'pushed.txt' },
      });
      expect(res.status).toBe(200);
    });
    expect(ms).toBeLessThan(PUSH_MS);
    expect(h.firedFor(id)[0]).toMatchObject({ data: { change: 'created', item: { name: 'pushed.txt' } } });
    await h.remove(id);
  });

  it('a watch channel that cannot be opened: degraded with its event, polling; open again: active', async () => {
    control().addFault({
      emulator: 'google',
      method: 'POST',
      path: '/calendar/v3/calendars/[^/]+/events/watch$',
      status: 503,
      times: 1,
    });
    const created = await h.createTrigger({
      connection_name: conn.google_calendar,
      identifier: ID,
      trigger_type: 'calendar_events',
      config: { calendar_id: 'primary', changes: ['created'] },
      interval_seconds: 1,
    });
    const id = created.id as string;
    const degraded = await h.trigger(id);
    expect(degraded).toMatchObject({ state: 'degraded', push: { state: 'lapsed' } });
    expect(String((degraded.push as { error: string }).error)).toContain('503');
    // The next poll opens the channel: active again, each move with its event.
    await until(
      'active',
      () => h.trigger(id),
      (v) => v.state === 'active',
    );
    await h.receiver.waitFor(() => h.statesOf(id).length === 2);
    expect(h.statesOf(id)).toEqual(['degraded', 'active']);
    const event = h.delivered().find((e) => e.type === 'trigger.state_changed' && e.data.id === id)!;
    expect(event.data).toMatchObject({
      previous_state: 'active',
      reason: expect.stringContaining('push channel'),
    });
    await h.remove(id);
  });

  it('a Graph subscription: validated, a change within 2 s, once; forged clientState refused; removed and failed renewal turn the state', async () => {
    const proxy = async (method: string, path: string, body?: string) => {
      const res = await t.api(`/proxy${path}`, {
        method,
        headers: { connection_name: conn.sharepoint!, identifier: ID, 'content-type': 'text/plain' },
        ...(body === undefined ? {} : { body }),
      });
      expect(res.status, `${method} ${path}`).toBeLessThan(300);
      return res.status === 204 ? {} : ((await res.json()) as Record<string, unknown>);
    };
    const site = await proxy('GET', '/v1.0/sites/root');
    const drives = (await proxy('GET', `/v1.0/sites/${site.id}/drives`)) as { value: Array<{ id: string }> };
    const driveId = drives.value[0]!.id;
    const id = await subscribe('sharepoint', 'sharepoint_drive_items', { drive_id: driveId });
    expect((await h.trigger(id)).push).toMatchObject({ state: 'active' });
    const graph = control().state<MicrosoftState>('microsoft');
    const sub = [...graph.subscriptions.values()].find((s) => s.driveId === driveId)!;
    expect(sub).toMatchObject({ changeType: 'updated', notificationUrl: `${t.url}/push/microsoft` });

    const ms = await delivered(id, () =>
      proxy('PUT', `/v1.0/drives/${driveId}/root:/pushed.txt:/content`, 'x'),
    );
    expect(ms).toBeLessThan(PUSH_MS);

    // The validation handshake answers the token as text/plain.
    const echo = await fetch(`${t.url}/push/microsoft?validationToken=${encodeURIComponent('a b+c')}`, {
      method: 'POST',
    });
    expect(echo.status).toBe(200);
    expect(echo.headers.get('content-type')).toContain('text/plain');
    expect(await echo.text()).toBe('a b+c');
    const forged = await fetch(`${t.url}/push/microsoft`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        value: [{ subscriptionId: sub.id, clientState: 'forged', changeType: 'updated' }],
      }),
    });
    expect(forged.status).toBe(401);
    expect(await problem(forged)).toMatchObject({ code: 'unauthenticated' });

    // Graph removes the subscription: degraded (with its event), then a new one: active.
    await t.api(`/api/v1/triggers/${id}`, { method: 'PATCH', json: { interval_seconds: 1 } });
    sendLifecycle(graph, sub.id, 'subscriptionRemoved');
    await h.receiver.waitFor(() => h.statesOf(id).length === 2);
    expect(h.statesOf(id)).toEqual(['degraded', 'active']);
    const renewed = [...graph.subscriptions.values()].find((s) => s.driveId === driveId)!;
    expect(renewed.id).not.toBe(sub.id);

    // reauthorizationRequired renews now; a renewal Graph refuses turns the state, the next one back.
    control().addFault({
      emulator: 'microsoft',
      method: 'PATCH',
      path: '/v1.0/subscriptions/',
      status: 500,
      times: 1,
    });
    const before = renewed.expiration;
    sendLifecycle(graph, renewed.id, 'reauthorizationRequired');
    await h.receiver.waitFor(() => h.statesOf(id).length === 4);
    expect(h.statesOf(id)).toEqual(['degraded', 'active', 'degraded', 'active']);
    expect(renewed.expiration).toBeGreaterThanOrEqual(before);
    await h.remove(id);
    expect(graph.subscriptions.has(renewed.id)).toBe(false);
  });

  it('HubSpot app webhooks: a signed delivery wakes the account’s CRM trigger within 2 s, once; forged or stale ones are refused', async () => {
    const { id: connectionId, client_id } = await connection('hubspot');
    const hubspot = control().state<HubSpotState>('hubspot');
    const targetUrl = `${t.url}/push/hubspot/${connectionId}`;
    configureAppWebhooks(hubspot, client_id, {
      targetUrl,
      eventTypes: ['contact.creation', 'contact.propertyChange'],
    });
    const id = await subscribe('hubspot', 'crm_contacts');
    const ms = await delivered(id, () => tool('crm_contact_create', { email: 'pushed@example.com' }));
    expect(ms).toBeLessThan(PUSH_MS);
    expect(h.firedFor(id)[0]).toMatchObject({ data: { change: 'created' } });

    const body = JSON.stringify([
      { portalId: Number(HUBSPOT_ADA), objectId: 1, subscriptionType: 'contact.creation' },
    ]);
    const sign = (secret: string, timestamp: string) =>
      createHmac('sha256', secret).update(`POST${targetUrl}${body}${timestamp}`).digest('base64');
    const send = (headers: Record<string, string>) =>
      fetch(targetUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    const now = String(Date.now());
    const secret = control()
      .clients('hubspot')
      .find((c) => c.clientId === client_id)!.clientSecret;
    const stale = String(Date.now() - 6 * 60_000);
    for (const headers of <Array<Record<string, string>>>[
      { 'x-hubspot-signature-v3': sign('not-the-secret', now), 'x-hubspot-request-timestamp': now },
      { 'x-hubspot-signature-v3': sign(secret, stale), 'x-hubspot-request-timestamp': stale },
      {},
    ]) {
      const res = await send(headers);
      expect(res.status).toBe(401);
      expect(await problem(res)).toMatchObject({ code: 'unauthenticated' });
    }
    expect(
      (await send({ 'x-hubspot-signature-v3': sign(secret, now), 'x-hubspot-request-timestamp': now }))
        .status,
    ).toBe(204);
    await h.remove(id);
  });

  it('Notion webhooks: the verification token is kept, signed events wake the page’s trigger within 2 s, once; a bad signature is refused', async () => {
    const { id: connectionId, client_id } = await connection('notion');
    const notion = control().state<NotionState>('notion');
    const url = `${t.url}/push/notion/${connectionId}`;
    const hook = createNotionWebhook(notion, { integrationId: client_id, url });
    await until(
      'the verification token',
      async () =>
        (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM trigger_push_secrets'))[0]!.n,
      (n) => n === 1,
    );
    expect(verifyNotionWebhook(notion, hook.id, hook.verificationToken)).toBe(true);
    const id = await subscribe('notion', 'notes_page', { page_id: ROADMAP });
    const ms = await delivered(id, () => tool('notes_page_update', { page_id: ROADMAP, icon: '🚀' }));
    expect(ms).toBeLessThan(PUSH_MS);

    const body = JSON.stringify({ type: 'page.content_updated', entity: { id: ROADMAP, type: 'page' } });
    const forged = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-notion-signature': `sha256=${createHmac('sha256', 'guess').update(body).digest('hex')}`,
      },
      body,
    });
    expect(forged.status).toBe(401);
    expect(await problem(forged)).toMatchObject({ code: 'unauthenticated' });
    // A second verification request cannot replace the token.
    const again = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ verification_token: 'secret_mine' }),
    });
    expect(again.status).toBe(401);
    await h.remove(id);
  });
});
