import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { TRIGGER_ENV, type TriggerHarness, triggerHarness, until } from './helpers/triggers.js';

// When the poller looks: it sleeps until the next subscription comes due (PORTICO_TRIGGER_POLL_MS
// is only the longest sleep, a minute here), and claims many due subscriptions in one statement.

const ADA = '110000000000000000001';
const CLAIMS = /WITH due AS/;
const QUIET_WRITES = /cursor = u\.cursor::jsonb/;

describe.each(BACKENDS)('trigger scheduling on $name', (backend) => {
  let t: TestGateway;
  let h: TriggerHarness;
  let calendar: string;

  beforeAll(async () => {
    t = await startTestGateway(backend, { ...TRIGGER_ENV, PORTICO_TRIGGER_POLL_MS: '60000' });
    h = await triggerHarness(() => t);
    ({ connection: calendar } = await sandboxAccount(t, {
      provider: 'google_calendar',
      identifier: 'ada',
      userId: ADA,
    }));
  });

  afterAll(async () => {
    await t?.close();
    await h?.receiver.close();
  });

  it('polls at the subscription’s interval, not at the longest sleep, and delivers within it', async () => {
    const id = (
      await h.createTrigger({
        connection_name: calendar,
        identifier: 'ada',
        trigger_type: 'calendar_events',
        interval_seconds: 1,
      })
    ).id as string;
    const started = Date.now();
    await h.pollsAfterNow(id, 3);
    // Three one-second intervals (with the quiet writes' batching), far from a minute's tick.
    expect(Date.now() - started).toBeLessThan(8_000);
    const made = Date.now();
    const res = await executeTool(t, {
      tool_name: 'calendar_create_event',
      identifier: 'ada',
      tool_input: { summary: 'On time', start_datetime: '2031-03-04T10:00:00Z' },
    });
    expect(res.status).toBe(200);
    await h.receiver.waitFor(() => h.firedFor(id).length === 1, 5_000);
    expect(Date.now() - made).toBeLessThan(3_000);
    await h.remove(id);
  });

  it('claims many due subscriptions in a few statements and polls every one', async () => {
    const template = (
      await h.createTrigger({
        connection_name: calendar,
        identifier: 'ada',
        trigger_type: 'calendar_events',
        config: { changes: ['created'] },
        interval_seconds: 1,
      })
    ).id as string;
    await h.pollsAfterNow(template, 1);
    const copies = 200;
    const claims = t.queries(CLAIMS);
    const writes = t.queries(QUIET_WRITES);
    // Copies of the subscription, all due now, each polled once an hour after its first poll.
    await t.db.query(
      `INSERT INTO trigger_subscriptions
       SELECT (jsonb_populate_record(NULL::trigger_subscriptions, to_jsonb(s) || jsonb_build_object(
         'id', s.id || '_' || g, 'config_key', s.config_key || '#' || g,
         'interval_seconds', 3600, 'next_poll_at', now(), 'last_success_at', NULL))).*
       FROM trigger_subscriptions s, generate_series(1, $2::integer) g WHERE s.id = $1`,
      [template, copies],
    );
    await until(
      'every copy polled',
      async () =>
        Number(
          (
            await t.db.query<{ n: string }>(
              `SELECT count(*)::text AS n FROM trigger_subscriptions
               WHERE id LIKE $1 AND last_success_at IS NOT NULL AND next_poll_at > now() + interval '1 minute'`,
              [`${template}\\_%`],
            )
          )[0]!.n,
        ),
      (n) => n === copies,
      30_000,
    );
    // The template polls each second meanwhile: its claims and writes are among those counted.
    const statements = t.queries(CLAIMS) - claims + (t.queries(QUIET_WRITES) - writes);
    expect(statements).toBeLessThan(copies / 5);
    const polled = await t.db.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM trigger_subscriptions WHERE id LIKE $1 AND lease_owner IS NOT NULL`,
      [`${template}\\_%`],
    );
    expect(Number(polled[0]!.n)).toBe(0);
    await t.db.query('DELETE FROM trigger_subscriptions WHERE id LIKE $1', [`${template}\\_%`]);
    await h.remove(template);
  }, 60_000);
});
