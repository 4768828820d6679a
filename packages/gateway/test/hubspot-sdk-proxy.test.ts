import { Client } from '@hubspot/api-client';
import { FilterOperatorEnum } from '@hubspot/api-client/lib/codegen/crm/contacts/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * HubSpot's official Node client (13.x, the last line for Node 20) through the proxy. Its generated
 * APIs drop the configuration's middleware, `defaultHeaders` included (fixed in 14.x, Node ≥ 22),
 * so the routing headers never leave it: a proxy token, bound to the connection and end user, is
 * the set-up that works, as the guide says.
 */
describe.each(BACKENDS)("HubSpot's official client through the proxy ($name)", (backend) => {
  let t: TestGateway;
  let client: Client;
  const ID = 'hubspot-sdk-user';

  beforeAll(async () => {
    t = await startTestGateway(backend);
    const { connection } = await sandboxAccount(t, { provider: 'hubspot', identifier: ID });
    const minted = await t.api('/api/v1/proxy/tokens', {
      method: 'POST',
      json: { connection_name: connection, identifier: ID },
    });
    expect(minted.status).toBe(201);
    const { token } = (await minted.json()) as { token: string };
    client = new Client({ accessToken: token, basePath: `${t.url}/proxy` });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('creates, reads, updates, searches and archives contacts', async () => {
    const email = `sdk-${Date.now()}@example.com`;
    const created = await client.crm.contacts.basicApi.create({
      properties: { email, firstname: 'Ada', lastname: 'Proxy' },
      associations: [],
    });
    expect(created.id).toBeTruthy();
    const read = await client.crm.contacts.basicApi.getById(created.id, ['email', 'firstname']);
    expect(read.properties.email).toBe(email);
    const updated = await client.crm.contacts.basicApi.update(created.id, {
      properties: { firstname: 'Grace' },
    });
    expect(updated.properties.firstname).toBe('Grace');
    const found = await client.crm.contacts.searchApi.doSearch({
      filterGroups: [{ filters: [{ propertyName: 'email', operator: FilterOperatorEnum.Eq, value: email }] }],
      properties: ['email'],
      limit: 10,
      after: '0',
      sorts: [],
    });
    expect(found.results.map((r) => r.id)).toEqual([created.id]);
    await client.crm.contacts.basicApi.archive(created.id);
    const gone = await client.crm.contacts.basicApi.getById(created.id).catch((e: unknown) => e);
    expect((gone as { code?: number }).code).toBe(404);
  });

  it("pages with the client's own getAll, and every paging.next.link names the proxy", async () => {
    for (let i = 0; i < 5; i++) {
      await client.crm.contacts.basicApi.create({
        properties: { email: `paged-${i}-${Date.now()}@example.com` },
        associations: [],
      });
    }
    const total = (await client.crm.contacts.basicApi.getPage(100)).results.length;
    const all = await client.crm.contacts.getAll(2);
    expect(all.length).toBe(total);
    expect(new Set(all.map((c) => c.id)).size).toBe(total);
    const page = await client.crm.contacts.basicApi.getPage(2);
    expect(page.paging?.next?.link?.startsWith(`${t.url}/proxy/crm/v3/objects/contacts?`)).toBe(true);
  });

  it("answers HubSpot's errors as the client's ApiException, with HubSpot's body", async () => {
    const error = (await client.crm.contacts.basicApi
      .create({ properties: { email: 'not an email' }, associations: [] })
      .catch((e: unknown) => e)) as { code?: number; body?: { category?: string } };
    expect(error.code).toBe(400);
    expect(error.body?.category).toBe('VALIDATION_ERROR');
  });
});
