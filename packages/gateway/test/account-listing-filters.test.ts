import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AccountFilter,
  listAccountListings,
  listAccounts,
  upsertPendingAccount,
} from '../src/store/accounts.js';
import { insertConnection } from '../src/store/connections.js';
import type { Database } from '../src/store/db.js';
import { createEnvironment } from '../src/store/environments.js';
import { migrate } from '../src/store/migrate.js';
import { BACKENDS } from './helpers/backends.js';

/**
 * A page of accounts is a statement made of only the filters given (store/accounts.ts): every
 * filter, alone and together, and the page cursor, select what the filters say, on both stores.
 */
describe.each(BACKENDS)('account pages by filter on $name', (backend) => {
  let db: Database;
  let env: string;
  const all: Array<{ id: string; connection: string; provider: string; identifier: string; status: string }> =
    [];

  beforeAll(async () => {
    db = await backend.open();
    await migrate(db);
    env = (await createEnvironment(db, `filters-${Date.now()}`)).id;
    const other = (await createEnvironment(db, `filters-other-${Date.now()}`)).id;
    const connections = [
      { name: 'notes', provider: 'notion' },
      { name: 'crm', provider: 'hubspot' },
      { name: 'crm-two', provider: 'hubspot' },
    ];
    for (const [environment, own] of [
      [env, true],
      [other, false],
    ] as const) {
      for (const c of connections) {
        const id = `con_${c.name.replace('-', '')}${own ? 'a' : 'b'}${Date.now()}`;
        await insertConnection(db, {
          id,
          environment_id: environment,
          name: c.name,
          provider: c.provider,
          client_id: 'client',
          client_secret: 'secret',
          scopes: [],
          sandbox: true,
          tenant: null,
          display_name: null,
          parameters: {},
          mcp_server: null,
        });
        for (const identifier of ['ada', 'bob', 'cy']) {
          const account = await upsertPendingAccount(db, environment, id, identifier);
          const status = identifier === 'bob' ? 'EXPIRED' : 'PENDING_AUTH';
          await db.query('UPDATE connected_accounts SET status = $2 WHERE id = $1', [account.id, status]);
          if (own) all.push({ id: account.id, connection: c.name, provider: c.provider, identifier, status });
        }
      }
    }
    all.sort((a, b) => (a.id < b.id ? -1 : 1));
  });

  afterAll(async () => {
    await db?.close();
  });

  const cases: Array<[string, Omit<AccountFilter, 'limit'>, (a: (typeof all)[number]) => boolean]> = [
    ['no filter', {}, () => true],
    ['connection', { connectionName: 'crm' }, (a) => a.connection === 'crm'],
    ['identifier', { identifier: 'bob' }, (a) => a.identifier === 'bob'],
    ['status', { status: 'EXPIRED' }, (a) => a.status === 'EXPIRED'],
    ['provider', { provider: 'hubspot' }, (a) => a.provider === 'hubspot'],
    ['connection list', { connectionNames: ['notes', 'crm-two'] }, (a) => a.connection !== 'crm'],
    ['an empty connection list', { connectionNames: [] }, () => false],
    [
      'all of them',
      { provider: 'hubspot', identifier: 'ada', status: 'PENDING_AUTH', connectionNames: ['crm-two'] },
      (a) => a.connection === 'crm-two' && a.identifier === 'ada',
    ],
  ];

  it.each(cases)('selects by %s, in id order, a page at a time', async (_, filter, keep) => {
    const expected = all.filter(keep).map((a) => a.id);
    const listed = (await listAccountListings(db, env, { ...filter, limit: 100 })).map((a) => a.id);
    expect(listed).toEqual(expected);
    expect((await listAccounts(db, env, { ...filter, limit: 100 })).map((a) => a.id)).toEqual(expected);
    // Two at a time, each page after the last id of the one before.
    const paged: string[] = [];
    for (let after: string | undefined; ; ) {
      const page = await listAccountListings(db, env, { ...filter, ...(after ? { after } : {}), limit: 2 });
      paged.push(...page.map((a) => a.id));
      if (page.length < 2) break;
      after = page.at(-1)!.id;
    }
    expect(paged).toEqual(expected);
  });
});
