import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

// Tools called without connection_name use the identifier's one active account for the provider;
// the gateway remembers that resolution, and must forget it the moment it could change.
describe.each(BACKENDS)('account resolution for tools on $name', (backend) => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway(backend);
  });

  afterAll(async () => {
    await t?.close();
  });

  const call = async () => {
    const res = await t.api('/api/v1/tools/execute', {
      method: 'POST',
      json: { tool_name: 'notes_user_list', identifier: 'resolved', tool_input: {} },
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('reads no account row on a repeated call, and sees a second account or a removal at once', async () => {
    const first = await sandboxAccount(t, {
      provider: 'notion',
      identifier: 'resolved',
      connection: 'notion-a',
    });
    expect((await call()).status).toBe(200);
    // Watch what the repeated call asks the store (the batched writes of records and last-use times
    // may run meanwhile; no account may be read).
    const statements: string[] = [];
    const query = t.db.query;
    t.db.query = (sql, params) => {
      statements.push(sql);
      return query(sql, params);
    };
    try {
      expect((await call()).status).toBe(200);
    } finally {
      t.db.query = query;
    }
    expect(statements.filter((sql) => /SELECT[\s\S]*FROM connected_accounts/i.test(sql))).toEqual([]);

    await sandboxAccount(t, { provider: 'notion', identifier: 'resolved', connection: 'notion-b' });
    const ambiguous = await call();
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.body.code).toBe('ambiguous_account');
    expect((ambiguous.body.connection_names as string[]).sort()).toEqual(['notion-a', 'notion-b']);

    await t.api(`/api/v1/connected-accounts/${first.accountId}`, { method: 'DELETE' });
    expect((await call()).status).toBe(200);
  });
});
