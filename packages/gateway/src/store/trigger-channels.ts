import type { Queryable } from './db.js';

/** A subscription's push channel as stored; `secret` is sealed (TRIGGER_CHANNEL_SECRET). */
export interface TriggerChannelRow {
  /** The channel's id at the provider: Google's channel id, Graph's subscription id. */
  id: string;
  subscription_id: string;
  /** Google's X-Goog-Resource-ID (channels.stop needs it); null for Graph. */
  resource_id: string | null;
  secret: string;
  expires_at: Date;
  created_at: Date;
}

export async function findChannel(db: Queryable, id: string): Promise<TriggerChannelRow | undefined> {
  return (await db.query<TriggerChannelRow>('SELECT * FROM trigger_channels WHERE id = $1', [id]))[0];
}

export async function channelOf(
  db: Queryable,
  subscriptionId: string,
): Promise<TriggerChannelRow | undefined> {
  return (
    await db.query<TriggerChannelRow>('SELECT * FROM trigger_channels WHERE subscription_id = $1', [
      subscriptionId,
    ])
  )[0];
}

/** Records the subscription's channel, replacing the one it had (a Google renewal is a new channel). */
export async function saveChannel(db: Queryable, row: Omit<TriggerChannelRow, 'created_at'>): Promise<void> {
  await db.query('DELETE FROM trigger_channels WHERE subscription_id = $1 AND id <> $2', [
    row.subscription_id,
    row.id,
  ]);
  await db.query(
    `INSERT INTO trigger_channels (id, subscription_id, resource_id, secret, expires_at)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (id) DO UPDATE SET resource_id = EXCLUDED.resource_id, secret = EXCLUDED.secret,
       expires_at = EXCLUDED.expires_at`,
    [row.id, row.subscription_id, row.resource_id, row.secret, row.expires_at],
  );
}

export async function deleteChannel(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM trigger_channels WHERE id = $1', [id]);
}

/**
 * Where push stands for a subscription: `active` with the time its channel next needs renewing,
 * or `lapsed` (polling only) with why and when to try again.
 */
export async function setChannelState(
  db: Queryable,
  subscriptionId: string,
  state: 'active' | 'lapsed',
  dueAt: Date,
  error: string | null,
): Promise<void> {
  await db.query(
    `UPDATE trigger_subscriptions SET channel_state = $2, channel_due_at = $3, channel_error = $4
     WHERE id = $1`,
    [subscriptionId, state, dueAt, error],
  );
}

/**
 * A provider's notification for these subscriptions: each is polled now (paused ones stay paused),
 * and one being polled at this moment is polled again right after (woken_at, cleared by the claim).
 * Returns the ids woken.
 */
export async function wakeTriggers(db: Queryable, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  const rows = await db.query<{ id: string }>(
    `UPDATE trigger_subscriptions SET woken_at = now(), next_poll_at = now()
     WHERE id = ANY($1) AND state <> 'paused' RETURNING id`,
    [ids],
  );
  return rows.map((r) => r.id);
}

/** The subscriptions of a connection's accounts whose provider metadata has `field` = `value`. */
export async function triggersOfAccounts(
  db: Queryable,
  connectionId: string,
  field: string,
  value: string,
): Promise<Array<{ id: string; trigger_type: string; config: Record<string, unknown> }>> {
  return db.query(
    `SELECT s.id, s.trigger_type, s.config FROM trigger_subscriptions s
     JOIN connected_accounts a ON a.id = s.account_id
     WHERE s.connection_id = $1 AND a.provider_metadata ->> $2 = $3`,
    [connectionId, field, value],
  );
}

export async function findPushSecret(
  db: Queryable,
  connectionId: string,
): Promise<{ id: string; secret: string } | undefined> {
  return (
    await db.query<{ id: string; secret: string }>(
      'SELECT id, secret FROM trigger_push_secrets WHERE connection_id = $1',
      [connectionId],
    )
  )[0];
}

/** Keeps the first secret a connection was given; false when it had one already. */
export async function insertPushSecret(
  db: Queryable,
  row: { id: string; connection_id: string; secret: string },
): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO trigger_push_secrets (id, connection_id, secret) VALUES ($1, $2, $3)
     ON CONFLICT (connection_id) DO NOTHING RETURNING id`,
    [row.id, row.connection_id, row.secret],
  );
  return rows.length > 0;
}
