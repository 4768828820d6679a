import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BlockedAddressError, guardedLookup, isPublicAddress } from '../src/upstream/outbound-guard.js';
import { BACKENDS } from './helpers/backends.js';
import { createSandboxConnection } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';

interface Attempt {
  event_id: string;
  event_type: string;
  attempt: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_body: string | null;
  delivery_status: string;
}

describe.each(BACKENDS)('webhooks on $name', (backend) => {
  let t: TestGateway;
  const receivers: Receiver[] = [];
  const endpoints: string[] = [];
  let counter = 0;

  beforeAll(async () => {
    t = await startTestGateway(backend, {
      PORTICO_WEBHOOK_ALLOW_PRIVATE: 'true',
      PORTICO_WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms',
      PORTICO_WEBHOOK_TIMEOUT_MS: '1000',
    });
  });

  afterEach(async () => {
    for (const id of endpoints.splice(0)) await t.api(`/api/v1/webhooks/${id}`, { method: 'DELETE' });
    for (const r of receivers.splice(0)) await r.close();
  });

  afterAll(async () => {
    await t?.close();
  });

  async function endpoint(
    events: string[] = ['connection.created', 'connection.updated'],
    extra: Record<string, unknown> = {},
  ): Promise<{ id: string; secret: string; receiver: Receiver }> {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const res = await t.api('/api/v1/webhooks', {
      method: 'POST',
      json: { url: receiver.url, events, ...extra },
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { id: string; secret: string };
    endpoints.push(body.id);
    return { id: body.id, secret: body.secret, receiver };
  }

  async function attempts(id: string): Promise<Attempt[]> {
    const res = await t.api(`/api/v1/webhooks/${id}/deliveries?page_size=200`);
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: Attempt[] }).data;
  }

  /** A state change with an event: a new connection (connection.created). */
  async function change(): Promise<{ id: string; name: string }> {
    const name = `wh-conn-${++counter}`;
    const { id } = await createSandboxConnection(t, name, 'notion');
    return { id, name };
  }

  it('retries a receiver that fails 3 times until it accepts, logs every attempt, and keeps the order per subject', async () => {
    const { id, secret, receiver } = await endpoint();
    receiver.answer = (i) => (i < 3 ? { status: 500, body: 'not now' } : 204);
    const connection = await change();
    // An update right behind: it waits until the connection's first event is delivered.
    await t.api(`/api/v1/connections/${connection.name}`, {
      method: 'PATCH',
      json: { display_name: 'Later' },
    });
    await receiver.waitFor((r) => r.length >= 5);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const events = receiver.verified(secret);
    expect(events.map((e) => e.type)).toEqual([
      'connection.created',
      'connection.created',
      'connection.created',
      'connection.created',
      'connection.updated',
    ]);
    // Every attempt of one event carries its id: receivers drop repeats by webhook-id.
    expect(new Set(receiver.received.slice(0, 4).map((r) => r.headers['webhook-id'])).size).toBe(1);
    const log = await attempts(id);
    const created = log.filter((a) => a.event_type === 'connection.created');
    expect(created.map((a) => [a.attempt, a.status_code])).toEqual([
      [4, 204],
      [3, 500],
      [2, 500],
      [1, 500],
    ]);
    expect(created[1]).toMatchObject({
      error: 'HTTP 500',
      response_body: 'not now',
      delivery_status: 'delivered',
    });
    expect(created.every((a) => a.duration_ms >= 0)).toBe(true);
  });

  it('times out a receiver that hangs, logs it, and delivers on the next attempt', async () => {
    const { id, receiver } = await endpoint();
    receiver.answer = (i) => (i === 0 ? 'hang' : 204);
    await change();
    await receiver.waitFor((r) => r.length >= 2, 5000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const log = await attempts(id);
    expect(log.map((a) => a.status_code)).toEqual([204, null]);
    expect(log[1]!.error).toBe('timed out after 1000 ms');
    expect(log[1]!.duration_ms).toBeGreaterThanOrEqual(950);
  });

  it('sends nothing to a disabled endpoint', async () => {
    const off = await endpoint(['connection.created'], { enabled: false });
    const on = await endpoint(['connection.created']);
    const disabledLater = await endpoint(['connection.created']);
    const patched = await t.api(`/api/v1/webhooks/${disabledLater.id}`, {
      method: 'PATCH',
      json: { enabled: false },
    });
    expect(await patched.json()).toMatchObject({ enabled: false });
    await change();
    await on.receiver.waitFor((r) => r.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(off.receiver.received).toEqual([]);
    expect(disabledLater.receiver.received).toEqual([]);
  });

  it('disables an endpoint that fails through the whole schedule and records webhook.disabled', async () => {
    const watcher = await endpoint(['webhook.disabled']);
    const { id, receiver } = await endpoint();
    receiver.answer = () => 503;
    await change();
    // One attempt and three retries (the schedule has three delays), then no more.
    await receiver.waitFor((r) => r.length === 4);
    await watcher.receiver.waitFor((r) => r.length === 1);
    const [disabled] = watcher.receiver.verified(watcher.secret);
    expect(disabled).toMatchObject({ type: 'webhook.disabled', data: { id, enabled: false } });
    expect(JSON.stringify(disabled)).not.toContain('whsec_');
    const view = (await (await t.api(`/api/v1/webhooks/${id}`)).json()) as Record<string, unknown>;
    expect(view).toMatchObject({ enabled: false, disabled_reason: expect.stringContaining('HTTP 503') });
    await change();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received.length).toBe(4);
    expect((await attempts(id)).map((a) => a.delivery_status)).toEqual([
      'failed',
      'failed',
      'failed',
      'failed',
    ]);
    // A retry while disabled is refused with what to do; once enabled again it is sent.
    const eventId = (await attempts(id))[0]!.event_id;
    const refused = await t.api(`/api/v1/webhooks/${id}/deliveries/${eventId}/retry`, { method: 'POST' });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({
      code: 'webhook_disabled',
      detail: expect.stringContaining('PATCH'),
    });
    receiver.answer = () => 200;
    await t.api(`/api/v1/webhooks/${id}`, { method: 'PATCH', json: { enabled: true } });
    const retried = await t.api(`/api/v1/webhooks/${id}/deliveries/${eventId}/retry`, { method: 'POST' });
    expect(retried.status).toBe(202);
    await receiver.waitFor((r) => r.length === 5);
    expect(receiver.received[4]!.headers['webhook-id']).toBe(eventId);
  });

  it('re-sends any event on request, and refuses an unknown one', async () => {
    const { id, receiver } = await endpoint();
    await change();
    await receiver.waitFor((r) => r.length === 1);
    const eventId = receiver.received[0]!.headers['webhook-id'] as string;
    const res = await t.api(`/api/v1/webhooks/${id}/deliveries/${eventId}/retry`, { method: 'POST' });
    expect(res.status).toBe(202);
    await receiver.waitFor((r) => r.length === 2);
    expect(receiver.received[1]!.headers['webhook-id']).toBe(eventId);
    const unknown = await t.api(`/api/v1/webhooks/${id}/deliveries/evt_nope/retry`, { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'event_not_found' });
    const noEndpoint = await t.api(`/api/v1/webhooks/wh_nope/deliveries/${eventId}/retry`, {
      method: 'POST',
    });
    expect(await noEndpoint.json()).toMatchObject({ status: 404, code: 'webhook_not_found' });
  });

  it('shows the secret once, signs with old and new secrets for a day after a rotation', async () => {
    const { id, secret, receiver } = await endpoint();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    const shown = await (await t.api(`/api/v1/webhooks/${id}`)).text();
    const listed = await (await t.api('/api/v1/webhooks')).text();
    expect(shown + listed).not.toContain('whsec_');
    const rotated = await t.api(`/api/v1/webhooks/${id}/rotate-secret`, { method: 'POST' });
    expect(rotated.status).toBe(200);
    const body = (await rotated.json()) as { secret: string; previous_secret_expires_at: string };
    expect(body.secret).not.toBe(secret);
    const until = Date.parse(body.previous_secret_expires_at) - Date.now();
    expect(until).toBeGreaterThan(23.9 * 3600_000);
    expect(until).toBeLessThanOrEqual(24 * 3600_000);
    await change();
    await receiver.waitFor((r) => r.length === 1);
    expect(receiver.received[0]!.headers['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/);
    // A receiver holding either secret verifies the delivery.
    expect(receiver.verified(secret)[0]!.type).toBe('connection.created');
    expect(receiver.verified(body.secret)[0]!.type).toBe('connection.created');
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(
        receiver.received[0]!.body,
        receiver.received[0]!.headers as Record<string, string>,
      ),
    ).toThrow(/signature/i);
  });

  it('keeps at most 1 KiB of what a receiver answers', async () => {
    const { id, receiver } = await endpoint();
    receiver.answer = () => ({ status: 200, body: 'x'.repeat(200_000) });
    await change();
    await receiver.waitFor((r) => r.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const [attempt] = await attempts(id);
    expect(attempt).toMatchObject({ status_code: 200, delivery_status: 'delivered' });
    expect(attempt!.response_body!.length).toBe(1024);
  });

  it('manages endpoints: list, update, delete', async () => {
    const { id } = await endpoint(['*']);
    const patched = await t.api(`/api/v1/webhooks/${id}`, {
      method: 'PATCH',
      json: { events: ['connection.deleted', 'tool.execution.failed'], description: 'ops' },
    });
    expect(await patched.json()).toMatchObject({
      events: ['connection.deleted', 'tool.execution.failed'],
      description: 'ops',
    });
    const list = (await (await t.api('/api/v1/webhooks')).json()) as { data: Array<{ id: string }> };
    expect(list.data.map((w) => w.id)).toContain(id);
    expect((await t.api(`/api/v1/webhooks/${id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await t.api(`/api/v1/webhooks/${id}`)).status).toBe(404);
  });

  it('refuses bad input with a problem naming the field', async () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [{ url: 'not a url', events: ['*'] }, '/url', /absolute URL/],
      [{ url: 'ftp://example.com/x', events: ['*'] }, '/url', /https/],
      [{ url: 'https://user:pw@example.com/x', events: ['*'] }, '/url', /credentials/],
      [{ url: 'https://example.com/x', events: ['account.exploded'] }, '/events/0', /must be one of/],
      [{ url: 'https://example.com/x', events: [] }, '/events', /.+/],
      [{ url: 'https://example.com/x' }, '/events', /.+/],
      [{ url: 'https://example.com/x', events: ['*'], secret: 'mine' }, '/secret', /not a known field/],
    ];
    for (const [json, path, detail] of cases) {
      const res = await t.api('/api/v1/webhooks', { method: 'POST', json });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      const problem = (await res.json()) as { code: string; detail: string; errors: Array<{ path: string }> };
      expect(problem.code).toBe('invalid_input');
      expect(
        problem.errors.map((e) => e.path),
        JSON.stringify(json),
      ).toContain(path);
      expect(problem.detail).toMatch(detail);
    }
    const badQuery = await t.api('/api/v1/webhooks/wh_x/deliveries?page_size=0');
    expect(badQuery.status).toBe(400);
  });
});

describe('webhook URLs without PORTICO_WEBHOOK_ALLOW_PRIVATE', () => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway(BACKENDS[0]!);
  });

  afterAll(async () => {
    await t?.close();
  });

  it.each([
    ['http://example.com/hook', /https/],
    ['https://127.0.0.1/hook', /private/],
    ['https://[::1]/hook', /private/],
    ['https://10.1.2.3/hook', /private/],
    ['https://169.254.169.254/latest/meta-data', /private/],
    ['https://[::ffff:192.168.0.1]/hook', /private/],
    ['https://localhost:8443/hook', /private/],
    ['https://metadata.google.internal/computeMetadata', /private/],
  ])('refuses %s', async (url, detail) => {
    const res = await t.api('/api/v1/webhooks', { method: 'POST', json: { url, events: ['*'] } });
    expect(res.status).toBe(400);
    const problem = (await res.json()) as { detail: string; errors: Array<{ path: string }> };
    expect(problem.errors[0]!.path).toBe('/url');
    expect(problem.detail).toMatch(detail);
  });

  it('checks the addresses a name resolves to when it connects', async () => {
    const lookup = guardedLookup(false);
    const error = await new Promise<unknown>((resolve) =>
      lookup('localhost', { all: true }, (err) => resolve(err)),
    );
    expect(error).toBeInstanceOf(BlockedAddressError);
    const allowed = guardedLookup(true);
    const addresses = await new Promise<unknown>((resolve) =>
      allowed('localhost', { all: true }, (_e, a) => resolve(a)),
    );
    expect(addresses).toEqual(
      expect.arrayContaining([expect.objectContaining({ address: expect.any(String) })]),
    );
    expect(isPublicAddress('8.8.8.8')).toBe(true);
    for (const a of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:10.0.0.1',
      '0.0.0.0',
    ]) {
      expect(isPublicAddress(a), a).toBe(false);
    }
  });
});
