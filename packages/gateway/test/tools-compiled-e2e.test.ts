import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURATED } from '../src/tools/compiled/descriptions.js';
import { BACKENDS } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

const ADA = 'ada00000-0000-4000-8000-000000000001';
/** Grace Hopper's HubSpot portal (the emulator's second user). */
const HUBSPOT_USER = '71000002';

type Json = Record<string, unknown>;

/**
 * The compiled operations the emulators implement, each run end to end: the registry finds the
 * tool, the engine validates and records it, the credential path signs the request, the emulator
 * answers in the provider's shape.
 */
describe.each(BACKENDS)('compiled tools end to end on $name', (backend) => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway(backend, { PORTICO_COMPILED_TOOLS: 'true' });
    for (const provider of ['google_calendar', 'google_drive', 'google_sheets', 'google_docs']) {
      await sandboxAccount(t, { provider, identifier: 'user_c' });
    }
    await sandboxAccount(t, { provider: 'notion', identifier: 'user_c', userId: ADA });
    await sandboxAccount(t, { provider: 'sharepoint', identifier: 'user_c' });
    await sandboxAccount(t, { provider: 'hubspot', identifier: 'user_c', userId: HUBSPOT_USER });
  });
  afterAll(async () => {
    await t?.close();
  });

  async function run(tool_name: string, tool_input: Json): Promise<Json> {
    const { status, body } = await executeTool(t, { tool_name, identifier: 'user_c', tool_input });
    if (status !== 200) throw new Error(`${tool_name} answered ${status}: ${JSON.stringify(body)}`);
    return body.data as Json;
  }

  it('lists the compiled tools beside the specification tools, which keep their place', async () => {
    const res = await t.api('/api/v1/tools');
    const names = ((await res.json()) as { data: Json[] }).data.map((d) => d.name as string);
    expect(names.length).toBeGreaterThan(2000);
    expect(names[0]).toMatch(/^notes_/);
    expect(names).toContain('github_issues_create');
    expect(names).toContain('gmail_users_messages_send');
    expect(names).toContain('sharepoint_sites_list_lists');
    expect(names).toContain('outlook_me_send_mail');
    expect(names).toContain('microsoft_teams_me_list_joined_teams');
    expect(names).toContain('hubspot_contacts_search');
    expect(names).toContain('hubspot_associations_v4_create_default');
    expect(names).toContain('hubspot_notes_create');
    // The specification's CRM tools are HubSpot's too, and keep their names and place.
    expect(names).toContain('crm_contacts_search');
    expect(names.indexOf('crm_contacts_search')).toBeLessThan(names.indexOf('hubspot_contacts_search'));
    // Every curated line is for a tool that exists.
    expect(Object.keys(CURATED).filter((name) => !names.includes(name))).toEqual([]);
    expect(names.every((n) => /^[a-zA-Z0-9_-]{1,64}$/.test(n))).toBe(true);
    expect(new Set(names).size).toBe(names.length);
    const one = await t.api('/api/v1/tools/google_calendar_events_delete');
    expect(await one.json()).toMatchObject({
      provider: 'google_calendar',
      annotations: { read_only: false, destructive: true },
    });
  });

  it('runs Google Calendar operations', async () => {
    const calendars = await run('google_calendar_calendar_list_list', {});
    expect(Array.isArray(calendars.items)).toBe(true);
    const created = await run('google_calendar_events_insert', {
      calendarId: 'primary',
      body: {
        summary: 'Compiled',
        start: { dateTime: '2026-03-02T10:00:00Z' },
        end: { dateTime: '2026-03-02T11:00:00Z' },
      },
    });
    expect(created).toMatchObject({ summary: 'Compiled' });
    const id = created.id as string;
    const patched = await run('google_calendar_events_patch', {
      calendarId: 'primary',
      eventId: id,
      body: { summary: 'Compiled, renamed' },
    });
    expect(patched.summary).toBe('Compiled, renamed');
    expect(await run('google_calendar_events_get', { calendarId: 'primary', eventId: id })).toMatchObject({
      id,
    });
    const listed = await run('google_calendar_events_list', { calendarId: 'primary', maxResults: 50 });
    expect((listed.items as Json[]).some((e) => e.id === id)).toBe(true);
    const busy = await run('google_calendar_freebusy_query', {
      body: { timeMin: '2026-03-02T00:00:00Z', timeMax: '2026-03-03T00:00:00Z', items: [{ id: 'primary' }] },
    });
    expect(busy.calendars).toBeDefined();
    expect(await run('google_calendar_events_delete', { calendarId: 'primary', eventId: id })).toEqual({});
  });

  it('runs Google Drive, Sheets and Docs operations', async () => {
    expect(await run('google_drive_about_get', { fields: 'user' })).toHaveProperty('user');
    const created = await run('google_drive_files_create', {
      body: { name: 'compiled.txt', mimeType: 'text/plain' },
    });
    expect(created).toMatchObject({ name: 'compiled.txt' });
    const files = await run('google_drive_files_list', { pageSize: 100 });
    expect((files.files as Json[]).some((f) => f.id === created.id)).toBe(true);
    expect(await run('google_drive_files_get', { fileId: created.id })).toMatchObject({ id: created.id });
    const sheet = await run('google_sheets_spreadsheets_create', {
      body: { properties: { title: 'Compiled' } },
    });
    const spreadsheetId = sheet.spreadsheetId as string;
    await run('google_sheets_spreadsheets_values_update', {
      spreadsheetId,
      range: 'Sheet1!A1:B1',
      valueInputOption: 'RAW',
      body: { values: [['a', 'b']] },
    });
    const values = await run('google_sheets_spreadsheets_values_get', {
      spreadsheetId,
      range: 'Sheet1!A1:B1',
    });
    expect(values.values).toEqual([['a', 'b']]);
    const doc = await run('google_docs_documents_create', { body: { title: 'Compiled doc' } });
    expect(await run('google_docs_documents_get', { documentId: doc.documentId })).toMatchObject({
      title: 'Compiled doc',
    });
  });

  it('runs Notion operations at the version of their description', async () => {
    const me = await run('notion_get_self', {});
    expect(me.object).toBe('user');
    const users = await run('notion_get_users', { page_size: 10 });
    expect(users.object).toBe('list');
    const found = await run('notion_post_search', { body: { page_size: 5 } });
    expect(found.object).toBe('list');
    const page = (found.results as Json[]).find((r) => r.object === 'page');
    if (page) {
      expect(await run('notion_retrieve_a_page', { page_id: page.id })).toMatchObject({ id: page.id });
      expect(await run('notion_get_block_children', { block_id: page.id })).toMatchObject({ object: 'list' });
    }
  });

  it('runs the database operations of Notion 2022-06-28, which 2025-09-03 replaced by data sources', async () => {
    const found = await run('notion_post_search', {
      body: { filter: { property: 'object', value: 'page' }, page_size: 5 },
    });
    const parent = (found.results as Json[])[0]!;
    const created = await run('notion_create_a_database', {
      body: {
        parent: { type: 'page_id', page_id: parent.id },
        title: [{ type: 'text', text: { content: 'Compiled tasks' } }],
        // The description's property schemas allow a title property only.
        properties: { Name: { title: {} } },
      },
    });
    // A 2022-06-28 database holds its properties itself (2025-09-03 moved them to its data source).
    expect(created).toMatchObject({ object: 'database', properties: { Name: { type: 'title' } } });
    const queried = await run('notion_post_database_query', { database_id: created.id, body: {} });
    expect(queried).toMatchObject({ object: 'list', results: [] });
    const renamed = await run('notion_update_a_database', {
      database_id: created.id,
      body: { title: [{ type: 'text', text: { content: 'Compiled tasks, renamed' } }] },
    });
    expect((renamed.title as Json[])[0]).toMatchObject({ plain_text: 'Compiled tasks, renamed' });
  });

  it('runs SharePoint (Microsoft Graph) operations: sites, drives and drive items', async () => {
    const sites = await run('sharepoint_sites_list_site', { search: '*' });
    const site = (sites.value as Json[])[0]!;
    expect(site.id).toEqual(expect.any(String));
    expect(await run('sharepoint_sites_get_site', { site_id: site.id })).toMatchObject({ id: site.id });
    const drives = await run('sharepoint_sites_list_drives', { site_id: site.id, top: 10 });
    const drive = (drives.value as Json[])[0]!;
    expect(await run('sharepoint_drives_get_drive', { drive_id: drive.id })).toMatchObject({ id: drive.id });
    const root = await run('sharepoint_drives_get_root', { drive_id: drive.id });
    const children = await run('sharepoint_drives_items_list_children', {
      drive_id: drive.id,
      driveItem_id: root.id,
    });
    expect(Array.isArray(children.value)).toBe(true);
    const mine = await run('sharepoint_me_get_drive', {});
    expect(mine).toMatchObject({ driveType: expect.any(String) });
  });

  it('runs HubSpot CRM operations: objects, search, associations and owners', async () => {
    const owners = await run('hubspot_owners_get_page', { limit: 5 });
    const owner = (owners.results as Json[])[0]!;
    expect(await run('hubspot_owners_get_by_id', { ownerId: Number(owner.id) })).toMatchObject({
      id: owner.id,
      email: owner.email,
    });
    const company = await run('hubspot_companies_create', {
      body: { properties: { name: 'Compiled Tools Ltd', domain: 'compiled-tools.example.com' } },
    });
    const contact = await run('hubspot_contacts_create', {
      body: {
        properties: { email: 'compiled.tools@example.com', firstname: 'Compiled', lastname: 'Tools' },
        associations: [
          {
            to: { id: company.id },
            types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 279 }],
          },
        ],
      },
    });
    expect(contact).toMatchObject({
      id: expect.any(String),
      properties: { email: 'compiled.tools@example.com' },
    });
    const contactId = contact.id as string;
    const read = await run('hubspot_contacts_get_by_id', {
      contactId,
      properties: ['email', 'firstname'],
      associations: ['companies'],
    });
    expect(read).toMatchObject({
      properties: { email: 'compiled.tools@example.com', firstname: 'Compiled' },
      associations: { companies: { results: [{ id: company.id }] } },
    });
    const updated = await run('hubspot_contacts_update', {
      contactId,
      body: { properties: { jobtitle: 'Agent' } },
    });
    expect((updated.properties as Json).jobtitle).toBe('Agent');
    const found = await run('hubspot_contacts_search', {
      body: {
        filterGroups: [
          { filters: [{ propertyName: 'email', operator: 'EQ', value: 'compiled.tools@example.com' }] },
        ],
        properties: ['email'],
      },
    });
    expect(found).toMatchObject({ total: 1, results: [{ id: contactId }] });
    const page = await run('hubspot_contacts_get_page', { limit: 100, properties: ['email'] });
    expect((page.results as Json[]).some((c) => c.id === contactId)).toBe(true);
    expect(
      await run('hubspot_companies_get_by_id', { companyId: company.id, properties: ['domain'] }),
    ).toMatchObject({ properties: { domain: 'compiled-tools.example.com' } });
    expect(
      await run('hubspot_companies_search', { body: { query: 'Compiled Tools', properties: ['name'] } }),
    ).toMatchObject({ results: [{ id: company.id }] });

    // A deal, through the generic objects API, then linked with the v4 associations API.
    const deal = await run('hubspot_objects_create', {
      objectType: 'deals',
      body: { properties: { dealname: 'Compiled deal', amount: '1200' } },
    });
    const dealId = deal.id as string;
    expect(await run('hubspot_deals_get_by_id', { dealId })).toMatchObject({
      properties: { dealname: 'Compiled deal' },
    });
    expect(
      await run('hubspot_deals_update', { dealId, body: { properties: { amount: '1500' } } }),
    ).toMatchObject({ properties: { amount: '1500' } });
    expect(
      await run('hubspot_deals_search', {
        body: {
          filterGroups: [{ filters: [{ propertyName: 'dealname', operator: 'EQ', value: 'Compiled deal' }] }],
        },
      }),
    ).toMatchObject({ total: 1 });
    const linked = await run('hubspot_associations_v4_create_default', {
      fromObjectType: 'deals',
      fromObjectId: dealId,
      toObjectType: 'contacts',
      toObjectId: contactId,
    });
    expect(linked).toMatchObject({
      status: 'COMPLETE',
      results: [{ from: { id: dealId }, to: { id: contactId }, associationSpec: { associationTypeId: 3 } }],
    });
    await run('hubspot_associations_v4_create', {
      objectType: 'deals',
      objectId: dealId,
      toObjectType: 'companies',
      toObjectId: company.id,
      body: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 341 }],
    });
    const ofContact = await run('hubspot_associations_v4_get_page', {
      objectType: 'contacts',
      objectId: contactId,
      toObjectType: 'deals',
    });
    expect(ofContact.results).toEqual([
      { toObjectId: dealId, associationTypes: [{ category: 'HUBSPOT_DEFINED', typeId: 4, label: null }] },
    ]);
    expect(
      await run('hubspot_objects_get_by_id', {
        objectType: 'deals',
        objectId: dealId,
        associations: ['companies'],
      }),
    ).toMatchObject({ associations: { companies: { results: [{ id: company.id }] } } });
    expect(
      await run('hubspot_associations_v4_archive', {
        objectType: 'deals',
        objectId: dealId,
        toObjectType: 'contacts',
        toObjectId: contactId,
      }),
    ).toEqual({});
    const after = await run('hubspot_associations_v4_get_page', {
      objectType: 'deals',
      objectId: dealId,
      toObjectType: 'contacts',
    });
    expect(after.results).toEqual([]);

    expect(await run('hubspot_contacts_archive', { contactId })).toEqual({});
    const gone = await executeTool(t, {
      tool_name: 'hubspot_contacts_get_by_id',
      identifier: 'user_c',
      tool_input: { contactId },
    });
    expect(gone.status).toBe(404);
  });

  it('refuses an input its description does not allow, before any request', async () => {
    const { status, body } = await executeTool(t, {
      tool_name: 'google_calendar_events_get',
      identifier: 'user_c',
      tool_input: { calendarId: 'primary' },
    });
    expect(status).toBe(400);
    expect(body).toMatchObject({ code: 'invalid_input' });
    expect(JSON.stringify(body.errors)).toContain('eventId');
  });
});
