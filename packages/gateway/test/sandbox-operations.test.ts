import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

// Operators rehearse provider failures against the sandbox through the authenticated API.
describe.each(BACKENDS)('sandbox operations on $name', (backend) => {
  let t: TestGateway;
  let accountId: string;
  const me = () =>
    t.api('/proxy/v1/users/me', { headers: { connection_name: 'sandbox-notion', identifier: 'rehearsal' } });

  beforeAll(async () => {
    t = await startTestGateway(backend);
    ({ accountId } = await sandboxAccount(t, { provider: 'notion', identifier: 'rehearsal' }));
  });

  afterAll(async () => {
    await t?.close();
  });

  it('expiring the tokens of a connection makes the next call refresh, invisibly to the caller', async () => {
    expect((await me()).status).toBe(200);
    const before = (
      await t.db.query<{ token_version: number }>(
        'SELECT token_version FROM connected_accounts WHERE id = $1',
        [accountId],
      )
    )[0]!;
    const res = await t.api('/api/v1/sandbox/connections/sandbox-notion/expire-tokens', { method: 'POST' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { expired: number }).expired).toBeGreaterThanOrEqual(1);
    expect((await me()).status).toBe(200);
    const after = (
      await t.db.query<{ token_version: number }>(
        'SELECT token_version FROM connected_accounts WHERE id = $1',
        [accountId],
      )
    )[0]!;
    expect(after.token_version).toBe(before.token_version + 1);
  });

  it('revoking the grants makes the account expire with a fresh authorization link', async () => {
    const res = await t.api('/api/v1/sandbox/connections/sandbox-notion/revoke-grants', { method: 'POST' });
    expect(((await res.json()) as { revoked: number }).revoked).toBeGreaterThanOrEqual(1);
    const refused = await me();
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({
      code: 'account_not_active',
      account_status: 'EXPIRED',
      authorization_link: { link: expect.stringContaining('/connect/') },
    });
  });

  it('resets the emulators’ data, and refuses operations on connections that are not sandboxes', async () => {
    expect((await t.api('/api/v1/sandbox/reset', { method: 'POST' })).status).toBe(200);
    await t.api('/api/v1/connections', {
      method: 'POST',
      json: { name: 'real-notion', provider: 'notion', client_id: 'id', client_secret: 'secret' },
    });
    const real = await t.api('/api/v1/sandbox/connections/real-notion/expire-tokens', { method: 'POST' });
    expect(real.status).toBe(400);
    expect(await real.json()).toMatchObject({ code: 'invalid_input', errors: [{ path: '/name' }] });
    const missing = await t.api('/api/v1/sandbox/connections/nope/expire-tokens', { method: 'POST' });
    expect(missing.status).toBe(404);
    expect((await t.api('/api/v1/sandbox/reset', { method: 'POST', token: null })).status).toBe(401);
  });
});
