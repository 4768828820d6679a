import { Client } from '@hubspot/api-client';
import { FilterOperatorEnum } from '@hubspot/api-client/lib/codegen/crm/contacts/index.js';
import { describe, expect, it } from 'vitest';
import { submitConsent } from '../src/index.js';
import { useEmulators } from './helpers/emulators.js';

/**
 * Conformance: HubSpot's official Node SDK (@hubspot/api-client, pinned) talks to the emulator.
 * Where the SDK and the emulator disagree, the emulator is wrong.
 */

const ADA = '71000001';
const GRACE = '71000002';
const CLIENT_ID = 'hubspot-sdk-test-client';
const CLIENT_SECRET = 'hubspot-sdk-test-secret';
const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const SCOPES = 'oauth crm.objects.contacts.read crm.objects.contacts.write crm.objects.companies.read';

const emu = useEmulators({ modules: ['hubspot'] });

function sdkFor(userId: string): Client {
  const { access_token } = emu.control.issueToken('hubspot', { userId });
  return new Client({ accessToken: access_token, basePath: emu.urls.hubspot });
}

/**
 * The SDK builds the authorize URL for app.hubspot.com; keep its query (which has no
 * `response_type`, as HubSpot does not need one), point it at the emulator.
 */
function authorizeUrl(client: Client, state: string): string {
  const sdkUrl = new URL(client.oauth.getAuthorizationUrl(CLIENT_ID, REDIRECT_URI, SCOPES, undefined, state));
  expect(sdkUrl.searchParams.has('response_type')).toBe(false);
  return `${emu.urls.hubspot}/oauth/authorize${sdkUrl.search}`;
}

async function installApp(client: Client, userId: string): Promise<string> {
  emu.control.registerClient('hubspot', {
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    redirectUris: [REDIRECT_URI],
  });
  const location = new URL(await submitConsent(authorizeUrl(client, 'xyz'), { userId, decision: 'allow' }));
  expect(location.searchParams.get('state')).toBe('xyz');
  const code = location.searchParams.get('code');
  expect(code).toBeTruthy();
  return code!;
}

describe('HubSpot SDK: OAuth', () => {
  it('exchanges an authorization code, refreshes with the same refresh token, and describes both tokens', async () => {
    const client = new Client({ basePath: emu.urls.hubspot });
    const code = await installApp(client, GRACE);

    const tokens = await client.oauth.tokensApi.create(
      'authorization_code',
      code,
      REDIRECT_URI,
      CLIENT_ID,
      CLIENT_SECRET,
    );
    expect(tokens.tokenType).toBe('bearer');
    expect(tokens.expiresIn).toBe(1800);
    expect(tokens.accessToken).toMatch(/^CJ/);
    expect(tokens.refreshToken).toMatch(/^na1-/);

    const refreshed = await client.oauth.tokensApi.create(
      'refresh_token',
      undefined,
      undefined,
      CLIENT_ID,
      CLIENT_SECRET,
      tokens.refreshToken,
    );
    expect(refreshed.refreshToken).toBe(tokens.refreshToken);
    expect(refreshed.accessToken).not.toBe(tokens.accessToken);
    expect(refreshed.expiresIn).toBe(1800);

    const accessInfo = await client.oauth.accessTokensApi.get(refreshed.accessToken);
    expect(accessInfo.user).toBe('grace.hopper@example.com');
    expect(accessInfo.hubId).toBe(24000002);
    expect(accessInfo.userId).toBe(Number(GRACE));
    expect(accessInfo.scopes).toEqual(SCOPES.split(' '));
    expect(accessInfo.expiresIn).toBeGreaterThan(1700);

    const refreshInfo = await client.oauth.refreshTokensApi.get(tokens.refreshToken);
    expect(refreshInfo.clientId).toBe(CLIENT_ID);
    expect(refreshInfo.hubId).toBe(24000002);

    // The fresh access token works against the CRM, for Grace's portal.
    const crm = new Client({ accessToken: refreshed.accessToken, basePath: emu.urls.hubspot });
    const page = await crm.crm.contacts.basicApi.getPage(1);
    expect(page.results[0]?.properties.email).toMatch(/@harvard-computation\.example$/);

    await client.oauth.refreshTokensApi.archive(tokens.refreshToken);
    await expect(
      client.oauth.tokensApi.create(
        'refresh_token',
        undefined,
        undefined,
        CLIENT_ID,
        CLIENT_SECRET,
        tokens.refreshToken,
      ),
    ).rejects.toMatchObject({ code: 400, body: { status: 'BAD_REFRESH_TOKEN' } });
  });

  it('refuses a reused authorization code with BAD_AUTH_CODE', async () => {
    const client = new Client({ basePath: emu.urls.hubspot });
    const code = await installApp(client, ADA);
    await client.oauth.tokensApi.create('authorization_code', code, REDIRECT_URI, CLIENT_ID, CLIENT_SECRET);
    await expect(
      client.oauth.tokensApi.create('authorization_code', code, REDIRECT_URI, CLIENT_ID, CLIENT_SECRET),
    ).rejects.toMatchObject({ code: 400, body: { status: 'BAD_AUTH_CODE' } });
  });

  it('tells an unknown client id (BAD_CLIENT_ID) from a wrong secret (BAD_CLIENT_SECRET)', async () => {
    const client = new Client({ basePath: emu.urls.hubspot });
    const code = await installApp(client, ADA);
    await expect(
      client.oauth.tokensApi.create('authorization_code', code, REDIRECT_URI, 'no-such-app', CLIENT_SECRET),
    ).rejects.toMatchObject({
      code: 400,
      body: { status: 'BAD_CLIENT_ID', message: 'missing or unknown client id' },
    });
    await expect(
      client.oauth.tokensApi.create('authorization_code', code, REDIRECT_URI, CLIENT_ID, 'wrong-secret'),
    ).rejects.toMatchObject({
      code: 400,
      body: { status: 'BAD_CLIENT_SECRET', message: 'missing or invalid client secret' },
    });
    // Neither attempt used up the code.
    const tokens = await client.oauth.tokensApi.create(
      'authorization_code',
      code,
      REDIRECT_URI,
      CLIENT_ID,
      CLIENT_SECRET,
    );
    expect(tokens.accessToken).toMatch(/^CJ/);
  });
});

describe('HubSpot SDK: CRM objects', () => {
  it('creates, reads, updates, lists and archives contacts', async () => {
    const sdk = sdkFor(ADA);
    const created = await sdk.crm.contacts.basicApi.create({
      properties: {
        email: 'Hedy.Lamarr@Example.com',
        firstname: 'Hedy',
        lastname: 'Lamarr',
        hs_lead_status: 'NEW',
      },
      associations: [],
    });
    expect(created.id).toMatch(/^\d+$/);
    expect(created.properties.email).toBe('hedy.lamarr@example.com');
    expect(created.properties.hs_object_id).toBe(created.id);
    expect(created.createdAt).toBeInstanceOf(Date);
    expect(created.archived).toBe(false);

    const fetched = await sdk.crm.contacts.basicApi.getById(created.id, ['firstname', 'hs_lead_status']);
    expect(fetched.properties).toMatchObject({
      firstname: 'Hedy',
      hs_lead_status: 'NEW',
      hs_object_id: created.id,
    });
    expect(fetched.properties.email).toBeUndefined();

    const byEmail = await sdk.crm.contacts.basicApi.getById(
      'hedy.lamarr@example.com',
      undefined,
      undefined,
      undefined,
      false,
      'email',
    );
    expect(byEmail.id).toBe(created.id);

    const updated = await sdk.crm.contacts.basicApi.update(created.id, {
      properties: { hs_lead_status: 'CONNECTED' },
    });
    expect(updated.properties.hs_lead_status).toBe('CONNECTED');
    expect(updated.updatedAt.getTime()).toBeGreaterThanOrEqual(created.updatedAt.getTime());

    const firstPage = await sdk.crm.contacts.basicApi.getPage(10);
    expect(firstPage.results).toHaveLength(10);
    expect(firstPage.paging?.next?.after).toBeTruthy();
    const secondPage = await sdk.crm.contacts.basicApi.getPage(10, firstPage.paging!.next!.after);
    const ids = [...firstPage.results, ...secondPage.results].map((c) => c.id);
    expect(new Set(ids).size).toBe(16);
    expect(ids).toContain(created.id);
    expect(secondPage.paging).toBeUndefined();

    await sdk.crm.contacts.basicApi.archive(created.id);
    await expect(sdk.crm.contacts.basicApi.getById(created.id)).rejects.toMatchObject({
      code: 404,
      body: { category: 'OBJECT_NOT_FOUND' },
    });
  });

  it('handles companies and deals through their own APIs and the generic objects API', async () => {
    const sdk = sdkFor(ADA);
    const company = await sdk.crm.companies.basicApi.create({
      properties: { name: 'Difference Engine No. 2', domain: 'engine-two.example', industry: 'MACHINERY' },
      associations: [],
    });
    expect(company.properties.name).toBe('Difference Engine No. 2');

    const deal = await sdk.crm.deals.basicApi.create({
      properties: {
        dealname: 'Engine No. 2 build',
        amount: '250000',
        dealstage: 'qualifiedtobuy',
        pipeline: 'default',
        closedate: '2025-12-31',
        hs_priority: 'high',
        good_deal: 'true',
      },
      associations: [
        {
          to: { id: company.id },
          types: [{ associationCategory: 'HUBSPOT_DEFINED' as never, associationTypeId: 341 }],
        },
      ],
    });
    expect(deal.properties.closedate).toBe('2025-12-31T00:00:00.000Z');
    expect(deal.properties.amount).toBe('250000');

    const viaObjects = await sdk.crm.objects.basicApi.getById(
      '0-3',
      deal.id,
      ['dealname', 'good_deal'],
      undefined,
      ['companies'],
    );
    expect(viaObjects.properties).toMatchObject({ dealname: 'Engine No. 2 build', good_deal: 'true' });
    expect(viaObjects.associations?.companies?.results.map((r) => r.id)).toEqual([company.id]);

    const moved = await sdk.crm.deals.basicApi.update(deal.id, { properties: { dealstage: 'closedwon' } });
    expect(moved.properties.dealstage).toBe('closedwon');

    const companies = await sdk.crm.companies.basicApi.getPage(100);
    expect(companies.results).toHaveLength(9);
    expect(Object.keys(companies.results[0]!.properties).sort()).toEqual([
      'createdate',
      'domain',
      'hs_lastmodifieddate',
      'hs_object_id',
      'name',
    ]);

    await sdk.crm.objects.basicApi.archive('deals', deal.id);
    const archived = await sdk.crm.deals.basicApi.getById(deal.id, undefined, undefined, undefined, true);
    expect(archived.archived).toBe(true);
    expect(archived.archivedAt).toBeInstanceOf(Date);
  });

  it('searches with filter groups, sorts and paging', async () => {
    const sdk = sdkFor(ADA);
    const first = await sdk.crm.contacts.searchApi.doSearch({
      filterGroups: [
        { filters: [{ propertyName: 'hs_lead_status', operator: FilterOperatorEnum.Eq, value: 'NEW' }] },
        {
          filters: [
            {
              propertyName: 'hs_lead_status',
              operator: FilterOperatorEnum.In,
              values: ['CONNECTED', 'OPEN'],
            },
          ],
        },
      ],
      sorts: ['-lastname'],
      properties: ['firstname', 'lastname', 'hs_lead_status'],
      limit: 3,
      after: '0',
    });
    // Ada's portal: 2 NEW, 3 CONNECTED, 2 OPEN.
    expect(first.total).toBe(7);
    expect(first.results).toHaveLength(3);
    expect(
      first.results.every((r) => ['NEW', 'CONNECTED', 'OPEN'].includes(r.properties.hs_lead_status!)),
    ).toBe(true);
    expect(first.paging?.next?.after).toBe('3');
    const lastNames = first.results.map((r) => r.properties.lastname!);
    expect(lastNames).toEqual([...lastNames].sort().reverse());

    const rest = await sdk.crm.contacts.searchApi.doSearch({
      filterGroups: [
        { filters: [{ propertyName: 'hs_lead_status', operator: FilterOperatorEnum.Eq, value: 'NEW' }] },
        {
          filters: [
            {
              propertyName: 'hs_lead_status',
              operator: FilterOperatorEnum.In,
              values: ['CONNECTED', 'OPEN'],
            },
          ],
        },
      ],
      sorts: ['-lastname'],
      properties: ['lastname'],
      limit: 10,
      after: first.paging!.next!.after,
    });
    expect(rest.results).toHaveLength(4);
    expect(rest.paging).toBeUndefined();

    const deals = await sdk.crm.deals.searchApi.doSearch({
      filterGroups: [
        { filters: [{ propertyName: 'amount', operator: FilterOperatorEnum.Gte, value: '48000' }] },
      ],
      sorts: [],
      properties: ['dealname', 'amount'],
      limit: 10,
      after: '0',
    });
    expect(deals.results.map((d) => Number(d.properties.amount)).sort((a, b) => a - b)).toEqual([
      48000, 72000, 125000,
    ]);
  });

  it('surfaces an injected HubSpot rate-limit answer as a typed 429, then serves normally', async () => {
    const sdk = sdkFor(ADA);
    emu.control.addFault({
      emulator: 'hubspot',
      path: '^/hubspot/crm/v3/objects/contacts',
      status: 429,
      headers: { 'retry-after': '1' },
      body: {
        status: 'error',
        message: 'You have reached your secondly limit.',
        errorType: 'RATE_LIMIT',
        correlationId: '00000000-0000-4000-8000-000000000000',
        policyName: 'SECONDLY',
      },
      times: 1,
    });
    await expect(sdk.crm.contacts.basicApi.getPage(1)).rejects.toMatchObject({
      code: 429,
      body: { message: 'You have reached your secondly limit.' },
    });
    const page = await sdk.crm.contacts.basicApi.getPage(1);
    expect(page.results).toHaveLength(1);
  });

  it('lists the portal owners', async () => {
    const sdk = sdkFor(GRACE);
    const owners = await sdk.crm.owners.ownersApi.getPage();
    expect(owners.results.map((o) => `${o.firstName} ${o.lastName}`)).toEqual([
      'Grace Hopper',
      'Jean Sammet',
      'Howard Aiken',
    ]);
    expect(owners.results[0]).toMatchObject({
      email: 'grace.hopper@example.com',
      userId: Number(GRACE),
      archived: false,
    });
    expect(owners.results[0]!.teams?.[0]?.name).toBe('Compiler Sales');

    const byEmail = await sdk.crm.owners.ownersApi.getPage('jean.sammet@example.com');
    expect(byEmail.results.map((o) => o.lastName)).toEqual(['Sammet']);

    const paged = await sdk.crm.owners.ownersApi.getPage(undefined, undefined, 2);
    expect(paged.results).toHaveLength(2);
    const next = await sdk.crm.owners.ownersApi.getPage(undefined, paged.paging!.next!.after, 2);
    expect(next.results.map((o) => o.lastName)).toEqual(['Aiken']);
  });

  it('describes properties, including the enumeration options HubSpot validates against', async () => {
    const sdk = sdkFor(ADA);
    const properties = await sdk.crm.properties.coreApi.getAll('contacts');
    const leadStatus = properties.results.find((p) => p.name === 'hs_lead_status');
    expect(leadStatus?.type).toBe('enumeration');
    expect(leadStatus?.options.map((o) => o.value)).toEqual([
      'NEW',
      'OPEN',
      'IN_PROGRESS',
      'OPEN_DEAL',
      'UNQUALIFIED',
      'ATTEMPTED_TO_CONTACT',
      'CONNECTED',
      'BAD_TIMING',
    ]);
    const priority = await sdk.crm.properties.coreApi.getByName('deals', 'hs_priority');
    expect(priority.options.map((o) => o.value)).toEqual(['low', 'medium', 'high']);
  });
});

describe('HubSpot SDK: associations v4', () => {
  const ALAN = '71000003';

  it('links records by default and with a HubSpot-defined type, lists and removes the links', async () => {
    const sdk = sdkFor(ALAN);
    const company = await sdk.crm.companies.basicApi.create({
      properties: { name: 'Bombe Works', domain: 'bombe.example' },
      associations: [],
    });
    const contact = await sdk.crm.contacts.basicApi.create({
      properties: { email: 'joan.clarke@bombe.example', firstname: 'Joan' },
      associations: [],
    });
    const deal = await sdk.crm.deals.basicApi.create({
      properties: { dealname: 'Bombe service', dealstage: 'qualifiedtobuy', pipeline: 'default' },
      associations: [],
    });

    const byDefault = await sdk.crm.associations.v4.basicApi.createDefault(
      'contacts',
      contact.id,
      'companies',
      company.id,
    );
    expect(byDefault.status).toBe('COMPLETE');
    expect(byDefault.results).toMatchObject([
      {
        // The SDK's name for the wire's `from`.
        _from: { id: contact.id },
        to: { id: company.id },
        associationSpec: { associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 279 },
      },
    ]);

    const labelled = await sdk.crm.associations.v4.basicApi.create('deals', deal.id, 'contacts', contact.id, [
      { associationCategory: 'HUBSPOT_DEFINED' as never, associationTypeId: 3 },
    ]);
    expect(labelled).toMatchObject({ fromObjectId: deal.id, toObjectId: contact.id, labels: [] });

    const ofContact = await sdk.crm.associations.v4.basicApi.getPage('contacts', contact.id, 'deals');
    expect(ofContact.results.map((r) => r.toObjectId)).toEqual([deal.id]);
    expect(ofContact.results[0]!.associationTypes).toMatchObject([
      { category: 'HUBSPOT_DEFINED', typeId: 4, label: null },
    ]);
    // Both ends see the link, as the v3 objects API does.
    const read = await sdk.crm.companies.basicApi.getById(company.id, undefined, undefined, ['contacts']);
    expect(read.associations?.contacts?.results.map((r) => r.id)).toEqual([contact.id]);

    await expect(
      sdk.crm.associations.v4.basicApi.create('deals', deal.id, 'contacts', contact.id, [
        { associationCategory: 'HUBSPOT_DEFINED' as never, associationTypeId: 279 },
      ]),
    ).rejects.toMatchObject({ code: 400 });

    await sdk.crm.associations.v4.basicApi.archive('contacts', contact.id, 'companies', company.id);
    const afterwards = await sdk.crm.associations.v4.basicApi.getPage('companies', company.id, 'contacts');
    expect(afterwards.results).toEqual([]);
    await expect(
      sdk.crm.associations.v4.basicApi.getPage('contacts', '999999999', 'deals'),
    ).rejects.toMatchObject({ code: 404 });
  });
});
