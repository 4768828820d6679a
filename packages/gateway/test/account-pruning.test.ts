import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { createSandboxConnection, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

describe.each(BACKENDS)('abandoned authorizations on $name', (backend) => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway(backend);
  });

  afterAll(async () => {
    await t?.close();
  });

  const link = async (identifier: string) => {
    const res = await t.api('/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      json: { connection_name: 'prune', identifier },
    });
    return ((await res.json()) as { connected_account_id: string }).connected_account_id;
  };
  const exists = async (id: string) => (await t.api(`/api/v1/connected-accounts/${id}`)).status === 200;

  it('removes PENDING_AUTH accounts once every link and consent trip has expired, and nothing else', async () => {
    await createSandboxConnection(t, 'prune', 'notion');
    const abandoned = await link('gave-up');
    const waiting = await link('still-deciding');
    const { accountId: active } = await sandboxAccount(t, {
      provider: 'notion',
      identifier: 'connected',
      connection: 'prune',
    });
    // The first user's link expired unused.
    await t.db.query(
      `UPDATE authorization_links SET expires_at = now() - interval '1 second' WHERE account_id = $1`,
      [abandoned],
    );
    expect(await t.gateway.accounts.pruneAbandoned()).toBe(1);
    expect(await exists(abandoned)).toBe(false);
    expect(await exists(waiting)).toBe(true);
    expect(await exists(active)).toBe(true);
    // A new link for the same identifier simply starts over.
    expect(await exists(await link('gave-up'))).toBe(true);
  });
});
