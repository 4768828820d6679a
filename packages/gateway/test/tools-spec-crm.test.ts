import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { toolHarness } from './helpers/tools.js';

// The 11 crm_ tools called with the specification's parameter names only (docs/spec/tools.json,
// "Tools: CRM"), each effect read back through another tool or the HubSpot emulator's state.

const ADA = '71000001';
const ID = 'spec-crm-user';

type ObjectType = 'companies' | 'contacts' | 'deals';
interface HubSpotState {
  portals: Map<
    string,
    {
      objects: Record<
        ObjectType,
        Map<string, { id: string; archived: boolean; properties: Map<string, string> }>
      >;
    }
  >;
}
interface Page {
  results: Array<{ id: string; properties: Record<string, string | null> }>;
  has_more: boolean;
  next_page: { after: string } | null;
  total?: number;
}

describe.each(BACKENDS)('crm_ tools by the specification’s parameter names on $name', (backend) => {
  let t: TestGateway;
  const { control, run, expectInvalid } = toolHarness({
    gateway: () => t,
    identifier: ID,
    route: '/hubspot/',
  });
  const objects = (type: ObjectType) =>
    control().state<HubSpotState>('hubspot').portals.get(ADA)!.objects[type];
  const stored = (type: ObjectType, id: string) => Object.fromEntries(objects(type).get(id)!.properties);

  async function ok(tool_name: string, tool_input: Record<string, unknown>) {
    const res = await run(tool_name, tool_input);
    expect(res.status, `${tool_name}: ${JSON.stringify(res.body)}`).toBe(200);
    // biome-ignore lint/suspicious/noExplicitAny: results are asserted as loose JSON
    return { data: res.body.data as Record<string, any>, executionId: res.body.execution_id as string };
  }
  const data = async (tool_name: string, tool_input: Record<string, unknown>) =>
    (await ok(tool_name, tool_input)).data;

  /** Every page of a search, following next_page; checks that `after` is the offset. */
  async function allPages(tool_name: string, input: Record<string, unknown>): Promise<Page[]> {
    const pages: Page[] = [];
    let next: Page['next_page'] = null;
    do {
      const page = (await data(tool_name, { ...input, ...next })) as Page;
      const offset = pages.reduce((n, p) => n + p.results.length, 0) + page.results.length;
      if (page.next_page) expect(page.next_page, tool_name).toEqual({ after: String(offset) });
      pages.push(page);
      next = page.next_page;
    } while (next);
    return pages;
  }

  beforeAll(async () => {
    t = await startTestGateway(backend);
    await sandboxAccount(t, { provider: 'hubspot', identifier: ID, userId: ADA });
  });

  afterAll(async () => {
    await t?.close();
  });

  const ids = { companies: [] as string[], contacts: [] as string[], deals: [] as string[] };

  it('crm_company_create takes every specification parameter; crm_company_get reads them back', async () => {
    const company = await data('crm_company_create', {
      name: 'Hollerith Tabulating Machine Company',
      annualrevenue: 1250000.5,
      city: 'Washington',
      country: 'United States',
      state: 'District of Columbia',
      description: 'Punched-card tabulators for the census.',
      domain: 'hollerith-tabulating.example',
      industry: 'MACHINERY',
      phone: '+1 202 555 0147',
      numberofemployees: 42,
    });
    ids.companies.push(company.id);
    expect(stored('companies', company.id)).toMatchObject({
      name: 'Hollerith Tabulating Machine Company',
      annualrevenue: '1250000.5',
      city: 'Washington',
      country: 'United States',
      state: 'District of Columbia',
      description: 'Punched-card tabulators for the census.',
      domain: 'hollerith-tabulating.example',
      industry: 'MACHINERY',
      phone: '+1 202 555 0147',
      numberofemployees: '42',
    });
    const read = await data('crm_company_get', {
      company_id: company.id,
      properties: 'name,numberofemployees',
    });
    expect(read).toMatchObject({
      id: company.id,
      properties: { name: 'Hollerith Tabulating Machine Company', numberofemployees: '42' },
    });
  });

  it('crm_contact_create takes every specification parameter (and the version parameters inside tool_input); crm_contact_get reads them back', async () => {
    const { data: contact, executionId } = await ok('crm_contact_create', {
      email: 'herman.hollerith@hollerith-tabulating.example',
      company: 'Hollerith Tabulating Machine Company',
      firstname: 'Herman',
      lastname: 'Hollerith',
      jobtitle: 'Founder',
      lifecyclestage: 'lead',
      phone: '+1 202 555 0148',
      website: 'https://www.hollerith-tabulating.example',
      crm_lead_status: 'NEW',
      schema_version: '1',
      tool_version: '1',
    });
    ids.contacts.push(contact.id);
    expect(stored('contacts', contact.id)).toMatchObject({
      email: 'herman.hollerith@hollerith-tabulating.example',
      company: 'Hollerith Tabulating Machine Company',
      firstname: 'Herman',
      lastname: 'Hollerith',
      jobtitle: 'Founder',
      lifecyclestage: 'lead',
      phone: '+1 202 555 0148',
      website: 'https://www.hollerith-tabulating.example',
      hs_lead_status: 'NEW',
    });
    // The version parameters were taken out of tool_input, not sent to HubSpot, and recorded.
    expect(stored('contacts', contact.id)).not.toHaveProperty('schema_version');
    const record = await t.api(`/api/v1/executions/${executionId}`);
    expect(await record.json()).toMatchObject({ tool_name: 'crm_contact_create', tool_version: '1' });

    const read = await data('crm_contact_get', {
      contact_id: contact.id,
      properties: 'email,hs_lead_status',
    });
    expect(read).toMatchObject({
      id: contact.id,
      properties: { email: 'herman.hollerith@hollerith-tabulating.example', hs_lead_status: 'NEW' },
    });
  });

  it('crm_contact_update changes the properties given in props', async () => {
    const [contactId] = ids.contacts;
    await data('crm_contact_update', {
      contact_id: contactId,
      props: { jobtitle: 'Director of Tabulation', crm_lead_status: 'IN_PROGRESS', phone: null },
    });
    const read = await data('crm_contact_get', {
      contact_id: contactId,
      properties: 'jobtitle,hs_lead_status,phone,firstname',
    });
    expect(read.properties).toMatchObject({
      jobtitle: 'Director of Tabulation',
      hs_lead_status: 'IN_PROGRESS',
      firstname: 'Herman',
    });
    expect(read.properties.phone ?? null).toBeNull();
  });

  it('crm_deal_create takes every specification parameter; crm_deal_update takes properties and good_deal', async () => {
    const deal = await data('crm_deal_create', {
      amount: 48000,
      dealname: 'Census tabulators 1890',
      dealstage: 'qualifiedtobuy',
      closedate: '2030-03-31',
      dealtype: 'newbusiness',
      description: 'Tabulators and card punches for the eleventh census.',
      crm_priority: 'MEDIUM',
      pipeline: 'default',
    });
    ids.deals.push(deal.id);
    expect(stored('deals', deal.id)).toMatchObject({
      amount: '48000',
      dealname: 'Census tabulators 1890',
      dealstage: 'qualifiedtobuy',
      closedate: '2030-03-31T00:00:00.000Z',
      dealtype: 'newbusiness',
      description: 'Tabulators and card punches for the eleventh census.',
      hs_priority: 'medium',
      pipeline: 'default',
    });

    await data('crm_deal_update', {
      deal_id: deal.id,
      properties: { dealstage: 'closedwon', amount: 52000, crm_priority: 'HIGH', closedate: '2030-04-15' },
      good_deal: true,
    });
    const found = await data('crm_deals_search', {
      filterGroups: JSON.stringify([
        { filters: [{ propertyName: 'hs_object_id', operator: 'EQ', value: deal.id }] },
      ]),
      properties: 'dealname,dealstage,amount,hs_priority,closedate,good_deal',
    });
    expect(found.results).toHaveLength(1);
    expect(found.results[0].properties).toMatchObject({
      dealname: 'Census tabulators 1890',
      dealstage: 'closedwon',
      amount: '52000',
      hs_priority: 'high',
      closedate: '2030-04-15T00:00:00.000Z',
      good_deal: 'true',
    });
  });

  it('crm_contacts_list takes limit and after as the cursor of the next set, over two pages', async () => {
    const active = [...objects('contacts').values()]
      .filter((r) => !r.archived)
      .sort((a, b) => Number(a.id) - Number(b.id))
      .map((r) => r.id);
    const first = (await data('crm_contacts_list', { limit: 3, properties: 'email,lastname' })) as Page;
    expect(first.results.map((r) => r.id)).toEqual(active.slice(0, 3));
    expect(first.results.every((r) => 'email' in r.properties && 'lastname' in r.properties)).toBe(true);
    // The cursor names where the next set starts (a record id), not how many were seen.
    expect(first.next_page).toEqual({ after: active[3] });
    const second = (await data('crm_contacts_list', {
      limit: 3,
      properties: 'email,lastname',
      after: first.next_page!.after,
    })) as Page;
    expect(second.results.map((r) => r.id)).toEqual(active.slice(3, 6));
    // limit is a number; a fraction is rounded down.
    const fraction = (await data('crm_contacts_list', { limit: 2.9 })) as Page;
    expect(fraction.results).toHaveLength(2);
  });

  it('each search takes query, filterGroups as JSON text, properties, limit and after as the offset', async () => {
    // Two more Hollerith records of each type, one of them outside the filter.
    for (const [name, country] of [
      ['Hollerith Census Office', 'United States'],
      ['Hollerith Electric Tabulating', 'United States'],
      ['Deutsche Hollerith Maschinen', 'Germany'],
    ] as const) {
      ids.companies.push((await data('crm_company_create', { name, country })).id);
    }
    for (const [firstname, crm_lead_status] of [
      ['Lucy', 'CONNECTED'],
      ['Walter', 'OPEN'],
      ['Otto', 'BAD_TIMING'],
    ] as const) {
      const email = `${firstname.toLowerCase()}@hollerith-tabulating.example`;
      const contact = await data('crm_contact_create', {
        email,
        firstname,
        lastname: 'Hollerith',
        crm_lead_status,
      });
      ids.contacts.push(contact.id);
    }
    for (const [dealname, amount] of [
      ['Census card punches', 51000],
      ['Census sorting machines', 75000],
      ['Census pantograph spares', 900],
    ] as const) {
      ids.deals.push(
        (await data('crm_deal_create', { dealname, amount, dealstage: 'appointmentscheduled' })).id,
      );
    }

    const cases = [
      {
        tool: 'crm_companies_search',
        type: 'companies' as const,
        query: 'hollerith',
        filters: [{ propertyName: 'country', operator: 'EQ', value: 'United States' }],
        properties: 'name,country',
        expected: ids.companies.filter((id) => stored('companies', id).country === 'United States'),
      },
      {
        tool: 'crm_contacts_search',
        type: 'contacts' as const,
        query: 'hollerith',
        filters: [{ propertyName: 'hs_lead_status', operator: 'NEQ', value: 'BAD_TIMING' }],
        properties: 'email,hs_lead_status',
        expected: ids.contacts.filter((id) => stored('contacts', id).hs_lead_status !== 'BAD_TIMING'),
      },
      {
        tool: 'crm_deals_search',
        type: 'deals' as const,
        query: 'census',
        filters: [{ propertyName: 'amount', operator: 'GTE', value: '10000' }],
        properties: 'dealname,amount',
        expected: ids.deals.filter((id) => Number(stored('deals', id).amount) >= 10000),
      },
    ];
    for (const c of cases) {
      expect(c.expected.length, c.tool).toBe(3);
      const pages = await allPages(c.tool, {
        query: c.query,
        filterGroups: JSON.stringify([{ filters: c.filters }]),
        properties: c.properties,
        limit: 2,
      });
      expect(
        pages.map((p) => p.results.length),
        c.tool,
      ).toEqual([2, 1]);
      expect(pages[0]!.total, c.tool).toBe(3);
      const seen = pages.flatMap((p) => p.results);
      expect(seen.map((r) => r.id).sort(), c.tool).toEqual([...c.expected].sort());
      for (const r of seen) {
        for (const name of c.properties.split(',')) {
          expect(r.properties[name], `${c.tool} ${name}`).toBe(stored(c.type, r.id)[name]);
        }
      }
    }
  });

  it('refuses a missing email, amount or dealstage as invalid_input naming it, without calling HubSpot', async () => {
    const missing = [
      ['crm_contact_create', { firstname: 'Herman', lastname: 'Hollerith' }, 'email'],
      ['crm_deal_create', { dealname: 'Census 1900', dealstage: 'qualifiedtobuy' }, 'amount'],
      ['crm_deal_create', { dealname: 'Census 1900', amount: 60000 }, 'dealstage'],
      ['crm_deal_update', { deal_id: ids.deals[0] }, 'properties'],
    ] as const;
    for (const [tool, input, name] of missing) {
      const body = await expectInvalid(tool, input, `/tool_input/${name}`, /is required/);
      expect(String(body.detail), tool).toContain(`tool_input.${name} is required`);
    }
    // props is optional in the schema, but a call must change something.
    await expectInvalid(
      'crm_contact_update',
      { contact_id: ids.contacts[0] },
      '/tool_input/props',
      /rule: props is optional, but a call must change something/,
    );
  });
});
