import { expect } from 'vitest';
import type { TestGateway } from './gateway.js';
import { type Receiver, startReceiver } from './receiver.js';

/** A webhook event as a receiver got it, its signature checked. */
export interface Delivered {
  id: string;
  type: string;
  data: Record<string, unknown> & { trigger_id?: string; change?: string; item_id?: string };
}

/** The gateway settings trigger suites run with: polls looked for often, one-second intervals. */
export const TRIGGER_ENV = {
  PORTICO_WEBHOOK_ALLOW_PRIVATE: 'true',
  PORTICO_TRIGGER_POLL_MS: '50',
  PORTICO_TRIGGER_MIN_INTERVAL_SECONDS: '1',
};

/** Polls `read` until `ok` holds (every 25 ms), failing with the last value after `ms`. */
export async function until<T>(
  what: string,
  read: () => Promise<T> | T,
  ok: (v: T) => boolean,
  ms = 15_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * What a trigger suite needs of its gateway: a receiver subscribed to the trigger events, and
 * calls to create, read and wait for triggers.
 */
export async function triggerHarness(t: () => TestGateway) {
  const receiver: Receiver = await startReceiver();
  const hook = await t().api('/api/v1/webhooks', {
    method: 'POST',
    json: { url: receiver.url, events: ['trigger.fired', 'trigger.state_changed'] },
  });
  expect(hook.status).toBe(201);
  const secret = ((await hook.json()) as { secret: string }).secret;

  const delivered = (): Delivered[] => receiver.verified(secret) as Delivered[];
  const firedFor = (triggerId: string) =>
    delivered().filter((e) => e.type === 'trigger.fired' && e.data.trigger_id === triggerId);
  const statesOf = (triggerId: string) =>
    delivered()
      .filter((e) => e.type === 'trigger.state_changed' && e.data.id === triggerId)
      .map((e) => e.data.state);

  async function createTrigger(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const res = await t().api('/api/v1/triggers', {
      method: 'POST',
      json: { interval_seconds: 1, ...body },
    });
    const json = (await res.json()) as Record<string, unknown>;
    expect(res.status, JSON.stringify(json)).toBe(201);
    return json;
  }

  async function trigger(id: string): Promise<Record<string, unknown>> {
    const res = await t().api(`/api/v1/triggers/${id}`);
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  }

  /** Waits until the trigger has been polled `polls` more times after now. */
  async function pollsAfterNow(id: string, polls = 1) {
    for (let i = 0; i < polls; i++) {
      const before = String((await trigger(id)).last_success_at);
      await until(
        'a poll',
        async () => String((await trigger(id)).last_success_at),
        (v) => v !== before,
      );
    }
  }

  const remove = (id: string) => t().api(`/api/v1/triggers/${id}`, { method: 'DELETE' });

  return { receiver, secret, delivered, firedFor, statesOf, createTrigger, trigger, pollsAfterNow, remove };
}

export type TriggerHarness = Awaited<ReturnType<typeof triggerHarness>>;
