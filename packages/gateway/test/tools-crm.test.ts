import type { EmulatorControl } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import {
  expectProviderTools,
  expectRateLimited,
  expectRevokedAccountNotActive,
  expectUpstreamError,
  notFound,
  toolHarness,
} from './helpers/tools.js';

/** The parts of the HubSpot emulator's live state these tests read. */
interface EmuRecord {
  id: string;
  properties: Map<string, string>;
  archived: boolean;
  associations: Map<string, Set<string>>;
}
interface EmuPortal {
  objects: Record<'companies' | 'contacts' | 'deals', Map<string, EmuRecord>>;
}
interface EmuState {
  portals: Map<string, EmuPortal>;
}

const ADA = '71000001';
const GRACE = '71000002';
const USER = 'crm-user';

let t: TestGateway;
let control: EmulatorControl;

beforeAll(async () => {
  t = await startTestGateway(BACKENDS[0]!);
  control = t.gateway.sandbox.control!;
  await sandboxAccount(t, { provider: 'hubspot', identifier: USER, userId: ADA });
});

afterAll(async () => {
  await t?.close();
});

function portal(userId = ADA): EmuPortal {
  return control.state<EmuState>('hubspot').portals.get(userId)!;
}

function records(type: 'companies' | 'contacts' | 'deals', userId = ADA): EmuRecord[] {
  return [...portal(userId).objects[type].values()]
    .filter((r) => !r.archived)
    .sort((a, b) => Number(a.id) - Number(b.id));
}

/** `rejected` expects 400 invalid_input naming a path, and proves HubSpot was never called. */
const { run, expectInvalid: rejected } = toolHarness({
  gateway: () => t,
  identifier: USER,
  route: '/hubspot/',
});

type Data = Record<string, unknown> & {
  id: string;
  properties: Record<string, string | null>;
  results: Array<{ id: string; properties: Record<string, string | null> }>;
  next_page: Record<string, string> | null;
  has_more: boolean;
  total: number;
};

async function ok(tool_name: string, tool_input: unknown): Promise<Data> {
  const res = await run(tool_name, tool_input);
  if (res.status !== 200) throw new Error(`${tool_name} answered ${res.status}: ${JSON.stringify(res.body)}`);
  expect(res.body.execution_id).toMatch(/^exec_/);
  return res.body.data as Data;
}

describe('crm_ searches', () => {
  it('crm_companies_search filters by JSON filterGroups and pages with next_page', async () => {
    const uk = records('companies').filter((r) => r.properties.get('country') === 'United Kingdom');
    expect(uk.length).toBeGreaterThan(2);
    const input = {
      filterGroups: JSON.stringify([
        { filters: [{ propertyName: 'country', operator: 'EQ', value: 'United Kingdom' }] },
      ]),
      properties: 'name, country,numberofemployees',
      limit: 2,
    };
    const first = await ok('crm_companies_search', input);
    expect(first.total).toBe(uk.length);
    expect(first.results).toHaveLength(2);
    expect(first.results[0]!.properties).toMatchObject({ country: 'United Kingdom' });
    expect(first.results[0]!.properties.numberofemployees).toEqual(expect.any(String));
    expect(first.has_more).toBe(true);
    expect(first.next_page).toEqual({ after: '2' });
    const seen = first.results.map((r) => r.id);
    let next = first.next_page;
    while (next) {
      const page = await ok('crm_companies_search', { ...input, ...next });
      seen.push(...page.results.map((r) => r.id));
      next = page.next_page;
    }
    expect(seen.sort()).toEqual(uk.map((r) => r.id).sort());
  });

  it('crm_companies_search finds by free-text query', async () => {
    const data = await ok('crm_companies_search', { query: 'babbage' });
    expect(data.results.map((r) => r.properties.name)).toEqual(['Babbage & Sons Engineering']);
    expect(data).toMatchObject({ has_more: false, next_page: null, total: 1 });
  });

  it('crm_contacts_search finds contacts by lead status, sorted', async () => {
    const expected = records('contacts').filter((r) => r.properties.get('hs_lead_status') === 'OPEN_DEAL');
    const data = await ok('crm_contacts_search', {
      filterGroups: '[{"filters":[{"propertyName":"hs_lead_status","operator":"EQ","value":"OPEN_DEAL"}]}]',
      properties: 'firstname,lastname,hs_lead_status',
      sort: '-lastname',
    });
    expect(data.total).toBe(expected.length);
    expect(data.results.every((r) => r.properties.hs_lead_status === 'OPEN_DEAL')).toBe(true);
    const names = data.results.map((r) => r.properties.lastname!);
    expect(names).toEqual([...names].sort().reverse());
  });

  it('crm_deals_search combines filters (AND) and sorts by amount', async () => {
    const expected = records('deals').filter((r) => Number(r.properties.get('amount')) >= 50_000);
    const data = await ok('crm_deals_search', {
      filterGroups: JSON.stringify([
        { filters: [{ propertyName: 'amount', operator: 'GTE', value: 50000 }] },
      ]),
      properties: 'dealname,amount,hs_priority,good_deal',
      sort: '-amount',
      limit: 100,
    });
    expect(data.results.map((r) => r.id).sort()).toEqual(expected.map((r) => r.id).sort());
    const amounts = data.results.map((r) => Number(r.properties.amount));
    expect(amounts).toEqual([...amounts].sort((a, b) => b - a));
    expect(data.results.every((r) => r.properties.good_deal === 'true')).toBe(true);
  });
});

describe('crm_ companies', () => {
  it('crm_company_create creates the company and crm_company_get reads it back', async () => {
    const created = await ok('crm_company_create', {
      name: 'Portico Test Works',
      domain: 'portico-test.example',
      industry: 'COMPUTER_SOFTWARE',
      city: 'Leeds',
      numberofemployees: 42,
      annualrevenue: 1250000.5,
      extra_properties: { description: 'Made by the crm tests' },
    });
    expect(created.id).toMatch(/^\d+$/);
    expect(created.properties).toMatchObject({ name: 'Portico Test Works', numberofemployees: '42' });
    const stored = portal().objects.companies.get(created.id)!;
    expect(Object.fromEntries(stored.properties)).toMatchObject({
      name: 'Portico Test Works',
      domain: 'portico-test.example',
      industry: 'COMPUTER_SOFTWARE',
      city: 'Leeds',
      numberofemployees: '42',
      annualrevenue: '1250000.5',
      description: 'Made by the crm tests',
    });

    const read = await ok('crm_company_get', { company_id: created.id, properties: 'name,city' });
    expect(read).toMatchObject({ id: created.id, properties: { name: 'Portico Test Works', city: 'Leeds' } });
  });

  it('crm_company_get includes associated contacts when asked', async () => {
    const company = records('companies')[0]!;
    const data = await ok('crm_company_get', { company_id: company.id, associations: 'contacts' });
    const expected = [...(company.associations.get('contacts') ?? [])].sort();
    const ids = (data.associations as { contacts: { results: Array<{ id: string }> } }).contacts.results.map(
      (r) => r.id,
    );
    expect(ids.sort()).toEqual(expected);
  });
});

describe('crm_ contacts', () => {
  let contactId: string;

  it('crm_contact_create stores the contact with hs_lead_status and its company', async () => {
    const company = records('companies')[1]!;
    const created = await ok('crm_contact_create', {
      email: 'Katherine.Johnson@Example.com',
      firstname: 'Katherine',
      lastname: 'Johnson',
      jobtitle: 'Mathematician',
      crm_lead_status: 'NEW',
      company_ids: [company.id],
    });
    contactId = created.id;
    const stored = portal().objects.contacts.get(contactId)!;
    expect(Object.fromEntries(stored.properties)).toMatchObject({
      email: 'katherine.johnson@example.com',
      firstname: 'Katherine',
      hs_lead_status: 'NEW',
      jobtitle: 'Mathematician',
    });
    expect([...stored.associations.get('companies')!]).toEqual([company.id]);
  });

  it('crm_contact_get reads by id and by email', async () => {
    const byId = await ok('crm_contact_get', {
      contact_id: contactId,
      properties: 'email,hs_lead_status',
      associations: 'companies',
    });
    expect(byId.properties).toMatchObject({ email: 'katherine.johnson@example.com', hs_lead_status: 'NEW' });
    expect(byId.associations).toBeDefined();
    const byEmail = await ok('crm_contact_get', {
      contact_id: 'katherine.johnson@example.com',
      id_property: 'email',
    });
    expect(byEmail.id).toBe(contactId);
  });

  it('crm_contact_update changes only the given props, crm_lead_status as hs_lead_status', async () => {
    const updated = await ok('crm_contact_update', {
      contact_id: contactId,
      props: { crm_lead_status: 'IN_PROGRESS', jobtitle: 'Research Mathematician', phone: null },
    });
    expect(updated.properties).toMatchObject({ hs_lead_status: 'IN_PROGRESS' });
    const stored = Object.fromEntries(portal().objects.contacts.get(contactId)!.properties);
    expect(stored).toMatchObject({
      hs_lead_status: 'IN_PROGRESS',
      jobtitle: 'Research Mathematician',
      firstname: 'Katherine',
      email: 'katherine.johnson@example.com',
    });
    expect(stored.phone).toBeUndefined();
  });

  it('crm_contact_update merges contact fields given beside props into it', async () => {
    await ok('crm_contact_update', {
      contact_id: contactId,
      jobtitle: 'Head of Trajectory Analysis',
      crm_lead_status: 'CONNECTED',
      props: { city: 'Hampton' },
    });
    expect(Object.fromEntries(portal().objects.contacts.get(contactId)!.properties)).toMatchObject({
      jobtitle: 'Head of Trajectory Analysis',
      hs_lead_status: 'CONNECTED',
      city: 'Hampton',
    });
  });

  it('crm_contacts_list pages through every contact with the after cursor', async () => {
    const all = records('contacts');
    const seen: string[] = [];
    let next: Record<string, string> | null = null;
    let pages = 0;
    do {
      const page: Data = await ok('crm_contacts_list', { limit: 7, properties: 'email', ...(next ?? {}) });
      seen.push(...page.results.map((r) => r.id));
      expect(page.results.every((r) => 'email' in r.properties)).toBe(true);
      next = page.next_page;
      expect(page.has_more).toBe(next !== null);
      pages++;
    } while (next);
    expect(pages).toBe(Math.ceil(all.length / 7));
    expect(seen).toEqual(all.map((r) => r.id));
  });

  it('crm_contacts_list with archived lists archived contacts only', async () => {
    // Archive one through HubSpot's own API (the raw proxy), as a user would have.
    const victim = records('contacts')[0]!;
    const res = await t.api(`/proxy/crm/v3/objects/contacts/${victim.id}`, {
      method: 'DELETE',
      headers: { connection_name: 'sandbox-hubspot', identifier: USER },
    });
    expect(res.status).toBe(204);
    const archived = await ok('crm_contacts_list', { archived: true });
    expect(archived.results.map((r) => r.id)).toContain(victim.id);
    expect(archived.results.every((r) => (r as { archived?: boolean }).archived === true)).toBe(true);
    const active = await ok('crm_contacts_list', { limit: 100 });
    expect(active.results.map((r) => r.id)).not.toContain(victim.id);
  });
});

describe('crm_ deals', () => {
  let dealId: string;

  it('crm_deal_create maps closedate, crm_priority and good_deal and links records', async () => {
    const company = records('companies')[2]!;
    const contact = records('contacts')[3]!;
    const created = await ok('crm_deal_create', {
      dealname: 'Difference engine no. 2',
      amount: 250000,
      dealstage: 'qualifiedtobuy',
      pipeline: 'default',
      closedate: '2024-02-29',
      crm_priority: 'HIGH',
      good_deal: true,
      dealtype: 'newbusiness',
      company_ids: [company.id],
      contact_ids: [contact.id],
    });
    dealId = created.id;
    expect(created.properties).toMatchObject({ dealname: 'Difference engine no. 2', hs_priority: 'high' });
    const stored = portal().objects.deals.get(dealId)!;
    expect(Object.fromEntries(stored.properties)).toMatchObject({
      dealname: 'Difference engine no. 2',
      amount: '250000',
      dealstage: 'qualifiedtobuy',
      closedate: '2024-02-29T00:00:00.000Z',
      hs_priority: 'high',
      good_deal: 'true',
      dealtype: 'newbusiness',
    });
    expect([...stored.associations.get('companies')!]).toEqual([company.id]);
    expect([...stored.associations.get('contacts')!]).toEqual([contact.id]);
  });

  it('crm_deal_update changes only the given properties, converting crm_priority and closedate', async () => {
    const updated = await ok('crm_deal_update', {
      deal_id: dealId,
      properties: {
        dealstage: 'closedwon',
        crm_priority: 'LOW',
        closedate: '2025-12-31',
        description: 'Signed',
      },
      good_deal: false,
    });
    expect(updated.properties).toMatchObject({ dealstage: 'closedwon', hs_priority: 'low' });
    expect(Object.fromEntries(portal().objects.deals.get(dealId)!.properties)).toMatchObject({
      dealname: 'Difference engine no. 2',
      amount: '250000',
      dealstage: 'closedwon',
      hs_priority: 'low',
      good_deal: 'false',
      closedate: '2025-12-31T00:00:00.000Z',
      description: 'Signed',
    });
  });

  it('crm_deal_update takes props, the earlier name of properties', async () => {
    await ok('crm_deal_update', { deal_id: dealId, props: { amount: 260000, hs_priority: 'medium' } });
    expect(Object.fromEntries(portal().objects.deals.get(dealId)!.properties)).toMatchObject({
      amount: '260000',
      hs_priority: 'medium',
      dealstage: 'closedwon',
    });
  });
});

describe('crm_ input validation (400 invalid_input, no upstream request)', () => {
  it('searches: filterGroups that is not JSON shows the parser message and the rule', async () => {
    for (const tool of ['crm_companies_search', 'crm_contacts_search', 'crm_deals_search']) {
      const body = await rejected(
        tool,
        { filterGroups: '[{"filters": [{"propertyName": "email", }]}]' },
        '/tool_input/filterGroups',
        /is not valid JSON \(.+\) \(rule: filterGroups is JSON text of an array/,
      );
      expect(String(body.detail)).toContain('filterGroups');
    }
  });

  it('searches: filterGroups of the wrong shape', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ filterGroups: [] }, /Pass the array inside "filterGroups"/],
      [{ filters: [] }, /must be a JSON array/],
      [[{ filters: [] }], /filterGroups\[0\]\.filters must be a non-empty array/],
      [
        [{ filters: [{ propertyName: 'email', operator: 'LIKE', value: 'x' }] }],
        /operator must be one of EQ/,
      ],
      [[{ filters: [{ operator: 'EQ', value: 'x' }] }], /filters\[0\]\.propertyName/],
      [[{ filters: [{ propertyName: 'email', operator: 'EQ' }] }], /operator EQ needs a "value"/],
      [[{ filters: [{ propertyName: 'amount', operator: 'BETWEEN', value: 1 }] }], /highValue/],
      [[{ filters: [{ propertyName: 'dealstage', operator: 'IN' }] }], /non-empty "values" array/],
      [[{ filters: [{ propertyName: 'email', operator: 'EQ', value: { a: 1 } }] }], /value must be a string/],
      [[{ filters: [{ propertyName: 'email', operator: 'EQ', value: 'x', op: 1 }] }], /unknown field "op"/],
      [
        Array.from({ length: 6 }, () => ({
          filters: [{ propertyName: 'email', operator: 'HAS_PROPERTY' }],
        })),
        /has 6 groups/,
      ],
      [
        [{ filters: Array.from({ length: 7 }, () => ({ propertyName: 'email', operator: 'HAS_PROPERTY' })) }],
        /has 7 filters/,
      ],
      [
        Array.from({ length: 4 }, () => ({
          filters: Array.from({ length: 5 }, () => ({ propertyName: 'email', operator: 'HAS_PROPERTY' })),
        })),
        /has 20 filters in all/,
      ],
    ];
    for (const [groups, message] of cases) {
      await rejected(
        'crm_contacts_search',
        { filterGroups: JSON.stringify(groups) },
        '/tool_input/filterGroups',
        message,
      );
    }
  });

  it('searches: properties, limit, after, sort and unknown fields', async () => {
    await rejected('crm_deals_search', { properties: 'dealname;amount' }, '/tool_input/properties');
    await rejected('crm_deals_search', { limit: 101 }, '/tool_input/limit');
    await rejected('crm_deals_search', { limit: 0 }, '/tool_input/limit');
    await rejected('crm_deals_search', { limit: 0.5 }, '/tool_input/limit');
    await rejected('crm_deals_search', { limit: '10' }, '/tool_input/limit', /must be a number/);
    await rejected('crm_companies_search', { after: 'abc' }, '/tool_input/after');
    await rejected('crm_companies_search', { after: 10 }, '/tool_input/after', /must be a string/);
    await rejected('crm_companies_search', { sort: 'name desc' }, '/tool_input/sort');
    await rejected('crm_contacts_search', { q: 'ada' }, '/tool_input/q', /not a known field/);
    await rejected('crm_contacts_search', { query: '' }, '/tool_input/query');
  });

  it('company tools: required fields and types', async () => {
    await rejected('crm_company_create', { domain: 'x.example' }, '/tool_input/name', /is required/);
    await rejected(
      'crm_company_create',
      { name: 'X', numberofemployees: -1 },
      '/tool_input/numberofemployees',
    );
    await rejected(
      'crm_company_create',
      { name: 'X', numberofemployees: '42' },
      '/tool_input/numberofemployees',
      /must be a number/,
    );
    await rejected(
      'crm_company_create',
      { name: 'X', extra_properties: { name: 'Y' } },
      '/tool_input/extra_properties/name',
      /rule: give each property once/,
    );
    await rejected('crm_company_get', {}, '/tool_input/company_id', /is required/);
    await rejected('crm_company_get', { company_id: 'acme' }, '/tool_input/company_id');
    await rejected(
      'crm_company_get',
      { company_id: '1', associations: 'tickets' },
      '/tool_input/associations',
    );
  });

  it('contact tools: rules, lead status values, required fields', async () => {
    await rejected(
      'crm_contact_create',
      { firstname: 'Ada', lastname: 'Lovelace' },
      '/tool_input/email',
      /is required \(rule: a missing required parameter/,
    );
    await rejected('crm_contact_create', { email: 'not-an-email' }, '/tool_input/email');
    await rejected(
      'crm_contact_create',
      { email: 'a@example.com', crm_lead_status: 'HOT' },
      '/tool_input/crm_lead_status',
      /must be one of: NEW, OPEN, IN_PROGRESS/,
    );
    await rejected(
      'crm_contact_create',
      { email: 'a@example.com', extra_properties: { hs_lead_status: 'NEW' } },
      '/tool_input/extra_properties/hs_lead_status',
      /crm_lead_status/,
    );
    await rejected('crm_contact_get', {}, '/tool_input/contact_id', /is required/);
    await rejected(
      'crm_contact_get',
      { contact_id: 'ada@example.com' },
      '/tool_input/contact_id',
      /set id_property/,
    );
    await rejected(
      'crm_contact_get',
      { contact_id: '100009', id_property: 'email' },
      '/tool_input/contact_id',
      /not an email address/,
    );
    await rejected(
      'crm_contact_update',
      { contact_id: '100009' },
      '/tool_input/props',
      /Nothing to change \(rule: props is optional, but a call must change something/,
    );
    await rejected(
      'crm_contact_update',
      { props: { firstname: 'A' } },
      '/tool_input/contact_id',
      /is required/,
    );
    await rejected(
      'crm_contact_update',
      { contact_id: '100009', props: {} },
      '/tool_input/props',
      /Nothing to change/,
    );
    await rejected(
      'crm_contact_update',
      { contact_id: '100009', jobtitle: 'CTO', props: { jobtitle: 'CEO' } },
      '/tool_input/props/jobtitle',
      /rule: give each property once, inside props or beside it/,
    );
    await rejected(
      'crm_contact_update',
      { contact_id: '100009', crm_lead_status: 'NEW', props: { hs_lead_status: 'OPEN' } },
      '/tool_input/props/hs_lead_status',
      /same property/,
    );
    await rejected('crm_contact_update', { contact_id: '100009', email: 'nope' }, '/tool_input/email');
    await rejected(
      'crm_contact_update',
      { contact_id: '100009', props: { crm_lead_status: 'WARM' } },
      '/tool_input/props/crm_lead_status',
      /rule: the lead status .* is one of NEW, OPEN/,
    );
    await rejected(
      'crm_contact_update',
      { contact_id: '100009', props: { hs_lead_status: 'new' } },
      '/tool_input/props/hs_lead_status',
    );
    await rejected(
      'crm_contact_update',
      { contact_id: '100009', props: { crm_lead_status: 'NEW', hs_lead_status: 'NEW' } },
      '/tool_input/props/hs_lead_status',
      /same property/,
    );
    await rejected(
      'crm_contact_update',
      { contact_id: '100009', props: { email: 'nope' } },
      '/tool_input/props/email',
    );
    await rejected(
      'crm_contact_update',
      { contact_id: '100009', props: { tags: ['a'] } },
      '/tool_input/props/tags',
    );
    await rejected('crm_contacts_list', { limit: 101 }, '/tool_input/limit');
    await rejected('crm_contacts_list', { limit: true }, '/tool_input/limit', /must be a number/);
    await rejected('crm_contacts_list', { archived: 'yes' }, '/tool_input/archived', /must be a boolean/);
    await rejected('crm_contacts_list', { after: '' }, '/tool_input/after');
  });

  it('deal tools: closedate calendar rule, priority and good_deal values, required fields', async () => {
    const deal = { dealname: 'D', amount: 10, dealstage: 'qualifiedtobuy' };
    await rejected(
      'crm_deal_create',
      { pipeline: 'default' },
      ['/tool_input/dealname', '/tool_input/amount', '/tool_input/dealstage'],
      /is required/,
    );
    await rejected(
      'crm_deal_create',
      { ...deal, closedate: '2025-02-30' },
      '/tool_input/closedate',
      /rule: closedate is a real date in the form YYYY-MM-DD/,
    );
    await rejected('crm_deal_create', { ...deal, closedate: '2025-13-01' }, '/tool_input/closedate', /rule/);
    await rejected('crm_deal_create', { ...deal, closedate: '2023-02-29' }, '/tool_input/closedate', /rule/);
    await rejected('crm_deal_create', { ...deal, closedate: '30/06/2025' }, '/tool_input/closedate');
    await rejected(
      'crm_deal_create',
      { ...deal, closedate: '2025-06-30T10:00:00Z' },
      '/tool_input/closedate',
    );
    await rejected(
      'crm_deal_create',
      { ...deal, crm_priority: 'high' },
      '/tool_input/crm_priority',
      /must be one of: HIGH, MEDIUM, LOW/,
    );
    await rejected('crm_deal_create', { ...deal, good_deal: 'yes' }, '/tool_input/good_deal', /boolean/);
    await rejected('crm_deal_create', { ...deal, amount: -1 }, '/tool_input/amount');
    await rejected('crm_deal_create', { ...deal, company_ids: ['x'] }, '/tool_input/company_ids/0');
    await rejected(
      'crm_deal_create',
      { ...deal, extra_properties: { hs_priority: 'high' } },
      '/tool_input/extra_properties/hs_priority',
      /crm_priority/,
    );
    await rejected(
      'crm_deal_update',
      { properties: { dealstage: 'closedwon' } },
      '/tool_input/deal_id',
      /is required/,
    );
    await rejected('crm_deal_update', { deal_id: '100024' }, '/tool_input/properties', /is required/);
    await rejected(
      'crm_deal_update',
      { deal_id: '100024', dealstage: 'closedwon' },
      '/tool_input/dealstage',
      /not a known field/,
    );
    await rejected(
      'crm_deal_update',
      { deal_id: '100024', properties: {} },
      '/tool_input/properties',
      /Nothing to change \(rule: properties holds the deal properties to change/,
    );
    await rejected(
      'crm_deal_update',
      { deal_id: '100024', properties: { closedate: '2025-04-31' } },
      '/tool_input/properties/closedate',
      /rule: closedate/,
    );
    // Errors under the alias are reported where the caller wrote them.
    await rejected(
      'crm_deal_update',
      { deal_id: '100024', props: { closedate: '2025-06-30T10:00:00Z' } },
      '/tool_input/props/closedate',
      /rule: closedate/,
    );
    await rejected(
      'crm_deal_update',
      { deal_id: '100024', properties: { crm_priority: 'high' } },
      '/tool_input/properties/crm_priority',
      /rule: crm_priority is one of HIGH, MEDIUM, LOW/,
    );
    await rejected(
      'crm_deal_update',
      { deal_id: '100024', properties: { crm_priority: 'HIGH', hs_priority: 'high' } },
      '/tool_input/properties/hs_priority',
      /same property/,
    );
    await rejected(
      'crm_deal_update',
      { deal_id: '100024', properties: { good_deal: true }, good_deal: false },
      '/tool_input/properties/good_deal',
      /give each property once/,
    );
    await rejected(
      'crm_deal_update',
      { deal_id: '100024', properties: { dealstage: 'closedwon' }, good_deal: 'yes' },
      '/tool_input/good_deal',
      /boolean/,
    );
    await rejected(
      'crm_deal_update',
      { deal_id: '100024', properties: { a: 1 }, props: { a: 2 } },
      '/tool_input/props',
      /give only "properties"/,
    );
  });
});

describe('crm_ provider errors', () => {
  it('an unknown record is upstream_not_found with HubSpot message', async () => {
    for (const [tool, input] of [
      ['crm_contact_get', { contact_id: '999999' }],
      ['crm_company_get', { company_id: '999999' }],
      ['crm_deal_update', { deal_id: '999999', properties: { amount: 1 } }],
      ['crm_contact_update', { contact_id: '999999', props: { firstname: 'X' } }],
    ] as const) {
      expectUpstreamError(await run(tool, input), notFound(/HubSpot answered 404: Object not found/), tool);
    }
  });

  it("HubSpot's validation errors are upstream_validation", async () => {
    const res = await run('crm_deal_create', {
      dealname: 'Bad stage',
      amount: 1,
      dealstage: 'no_such_stage',
    });
    expectUpstreamError(res, {
      status: 400,
      code: 'upstream_validation',
      detail: /Property values were not valid/,
    });
    expect(res.body.retryable).toBe(false);
    expect(String(res.body.detail)).toContain('no_such_stage');

    const unknown = await run('crm_company_create', { name: 'X', extra_properties: { no_such_prop: 'x' } });
    expectUpstreamError(unknown, { status: 400, code: 'upstream_validation', detail: 'no_such_prop' });
  });

  it('a duplicate contact email is upstream_conflict naming the existing id', async () => {
    const existing = records('contacts')[1]!;
    const res = await run('crm_contact_create', { email: existing.properties.get('email') });
    expectUpstreamError(res, {
      status: 409,
      code: 'upstream_conflict',
      detail: `Existing ID: ${existing.id}`,
    });
  });

  it('429 with Retry-After is upstream_rate_limited with retry_after_ms', async () => {
    const rateLimit = {
      status: 'error',
      message: 'You have reached your secondly limit.',
      errorType: 'RATE_LIMIT',
      correlationId: 'c0ffee00-0000-4000-8000-000000000000',
      policyName: 'SECONDLY',
    };
    const body = await expectRateLimited(
      control,
      () => run('crm_deals_search', { query: 'engine' }),
      {
        emulator: 'hubspot',
        method: 'POST',
        path: '^/hubspot/crm/v3/objects/deals/search',
        status: 429,
        headers: { 'retry-after': '2', 'content-type': 'application/json' },
        body: rateLimit,
      },
      { retryAfterMs: 2000, detail: 'You have reached your secondly limit.' },
    );
    expect(body).toMatchObject({ upstream: { status: 429, body: rateLimit } });

    // A GET whose Retry-After is too long to wait for inside the request comes back the same way.
    await expectRateLimited(
      control,
      () => run('crm_contacts_list', {}),
      {
        emulator: 'hubspot',
        method: 'GET',
        path: '^/hubspot/crm/v3/objects/contacts$',
        status: 429,
        headers: { 'retry-after': '30', 'content-type': 'application/json' },
        body: rateLimit,
      },
      { retryAfterMs: 30_000 },
    );
  });

  it('an account whose HubSpot grant was revoked is account_not_active with an authorization link', async () => {
    await expectRevokedAccountNotActive(t, {
      provider: 'hubspot',
      emulator: 'hubspot',
      identifier: 'crm-revoked',
      userId: GRACE,
      works: ['crm_contacts_list', { limit: 1 }],
      fails: ['crm_contact_get', { contact_id: '200009' }],
      revoke: (c) => c.expireAccessTokens('hubspot', { userId: GRACE }),
    });
  });
});

describe('crm_ catalog', () => {
  it('lists the 11 crm_ tools with strict input schemas', async () => {
    await expectProviderTools(t, 'hubspot', [
      'crm_companies_search',
      'crm_company_create',
      'crm_company_get',
      'crm_contact_create',
      'crm_contact_get',
      'crm_contact_update',
      'crm_contacts_list',
      'crm_contacts_search',
      'crm_deal_create',
      'crm_deal_update',
      'crm_deals_search',
    ]);
  });
});
