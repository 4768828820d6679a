import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { TRIGGER_ENV, type TriggerHarness, triggerHarness } from './helpers/triggers.js';

// The CRM (HubSpot), workspace-page (Notion) and site-library (SharePoint) trigger types against
// their emulators: each change made there reaches the receiver once, signed; filters hold.

const HUBSPOT_ADA = '71000001';
const NOTION_ADA = 'ada00000-0000-4000-8000-000000000001';
const ROADMAP = '6042b18c-8264-48b6-99d8-01794faa2b55';
const TASKS = '39fbdf12-08c0-4b0b-95e8-06be30a24a4a';
const ID = 'crm-notes';

describe.each(BACKENDS)('CRM, Notion and SharePoint triggers on $name', (backend) => {
  let t: TestGateway;
  let h: TriggerHarness;
  const conn: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestGateway(backend, TRIGGER_ENV);
    h = await triggerHarness(() => t);
    conn.hubspot = (
      await sandboxAccount(t, { provider: 'hubspot', identifier: ID, userId: HUBSPOT_ADA })
    ).connection;
    conn.notion = (
      await sandboxAccount(t, { provider: 'notion', identifier: ID, userId: NOTION_ADA })
    ).connection;
    conn.sharepoint = (await sandboxAccount(t, { provider: 'sharepoint', identifier: ID })).connection;
  });

  afterAll(async () => {
    await t?.close();
    await h?.receiver.close();
  });

  const tool = async (tool_name: string, tool_input: unknown) => {
    const res = await executeTool(t, { tool_name, identifier: ID, tool_input });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as Record<string, unknown>;
  };
  const subscribe = async (provider: string, trigger_type: string, config: Record<string, unknown> = {}) =>
    (await h.createTrigger({ connection_name: conn[provider], identifier: ID, trigger_type, config }))
      .id as string;
  const changesOf = (id: string) => h.firedFor(id).map((e) => [e.data.change, e.data.item_id]);

  it('reports contacts and companies created and changed', async () => {
    const contacts = await subscribe('hubspot', 'crm_contacts', { properties: ['email', 'firstname'] });
    const companies = await subscribe('hubspot', 'crm_companies');
    const contact = await tool('crm_contact_create', { email: 'hedy.lamarr@example.com', firstname: 'Hedy' });
    const company = await tool('crm_company_create', { name: 'Frequency Hopping Ltd' });
    await h.receiver.waitFor(() => h.firedFor(contacts).length === 1 && h.firedFor(companies).length === 1);
    expect(h.firedFor(contacts)[0]).toMatchObject({
      data: {
        change: 'created',
        item: { id: contact.id, properties: { email: 'hedy.lamarr@example.com', firstname: 'Hedy' } },
      },
    });
    await tool('crm_contact_update', { contact_id: contact.id, props: { firstname: 'Hedwig' } });
    await h.receiver.waitFor(() => h.firedFor(contacts).length === 2);
    // The overlap HubSpot's search needs lists them again for a minute: nothing is reported twice.
    await h.pollsAfterNow(contacts, 2);
    expect(changesOf(contacts)).toEqual([
      ['created', contact.id],
      ['updated', contact.id],
    ]);
    expect(changesOf(companies)).toEqual([['created', company.id]]);
    await h.remove(contacts);
    await h.remove(companies);
  });

  it('reports only the deals its filters select, and only changes to the watched properties', async () => {
    const id = await subscribe('hubspot', 'crm_deals', {
      filters: [{ property: 'dealstage', operator: 'EQ', value: 'closedwon' }],
      watch_properties: ['amount'],
    });
    const lost = await tool('crm_deal_create', { dealname: 'Lost one', amount: 10, dealstage: 'closedlost' });
    const won = await tool('crm_deal_create', { dealname: 'Won one', amount: 20, dealstage: 'closedwon' });
    await h.receiver.waitFor(() => h.firedFor(id).length === 1);
    await tool('crm_deal_update', { deal_id: won.id, properties: { description: 'not watched' } });
    await tool('crm_deal_update', { deal_id: lost.id, properties: { amount: 11 } });
    await h.pollsAfterNow(id, 2);
    await tool('crm_deal_update', { deal_id: won.id, properties: { amount: 25 } });
    await h.receiver.waitFor(() => h.firedFor(id).length === 2);
    await h.pollsAfterNow(id, 1);
    expect(changesOf(id)).toEqual([
      ['created', won.id],
      ['updated', won.id],
    ]);
    await h.remove(id);
  });

  it('reports database rows created and changed, a page changed and a comment added', async () => {
    const rows = await subscribe('notion', 'notes_database_rows', { database_id: TASKS });
    const page = await subscribe('notion', 'notes_page', { page_id: ROADMAP });
    const comments = await subscribe('notion', 'notes_comments', { page_id: ROADMAP });
    const row = await tool('notes_database_insert_row', {
      database_id: TASKS,
      properties: { Name: 'Watched row' },
    });
    await tool('notes_comment_create', { parent: { page_id: ROADMAP }, text: 'A remark' });
    await h.receiver.waitFor(() => h.firedFor(rows).length === 1 && h.firedFor(comments).length === 1);
    await tool('notes_page_update', { page_id: row.id, properties: { Done: true } });
    await tool('notes_page_update', { page_id: ROADMAP, icon: '🗺' });
    await h.receiver.waitFor(() => h.firedFor(rows).length === 2 && h.firedFor(page).length === 1);
    await h.pollsAfterNow(rows, 2);
    expect(changesOf(rows)).toEqual([
      ['created', row.id],
      ['updated', row.id],
    ]);
    expect(h.firedFor(rows)[1]).toMatchObject({
      data: { item: { properties: { Done: { checkbox: true } } } },
    });
    expect(changesOf(page)).toEqual([['updated', ROADMAP]]);
    expect(h.firedFor(comments)).toHaveLength(1);
    expect(h.firedFor(comments)[0]).toMatchObject({
      data: { change: 'created', item: { object: 'comment' } },
    });
    for (const id of [rows, page, comments]) await h.remove(id);
  });

  it('reports library files created, changed and deleted from the delta link', async () => {
    const proxy = async (method: string, path: string, body?: string) => {
      const res = await t.api(`/proxy${path}`, {
        method,
        headers: {
          connection_name: conn.sharepoint!,
          identifier: ID,
          'content-type': body ? 'text/plain' : 'application/json',
        },
        ...(body === undefined ? {} : { body }),
      });
      expect(res.status, `${method} ${path}`).toBeLessThan(300);
      return res.status === 204 ? {} : ((await res.json()) as Record<string, unknown>);
    };
    const site = await proxy('GET', '/v1.0/sites/root');
    const drives = (await proxy('GET', `/v1.0/sites/${site.id}/drives`)) as { value: Array<{ id: string }> };
    const driveId = drives.value[0]!.id;
    const id = await subscribe('sharepoint', 'sharepoint_drive_items', { drive_id: driveId });
    const file = await proxy('PUT', `/v1.0/drives/${driveId}/root:/watched.txt:/content`, 'first');
    await h.receiver.waitFor(() => h.firedFor(id).length === 1);
    await proxy('PUT', `/v1.0/drives/${driveId}/items/${file.id}/content`, 'second');
    await h.receiver.waitFor(() => h.firedFor(id).length === 2);
    await proxy('DELETE', `/v1.0/drives/${driveId}/items/${file.id}`);
    await h.receiver.waitFor(() => h.firedFor(id).length === 3);
    await h.pollsAfterNow(id, 2);
    expect(changesOf(id)).toEqual([
      ['created', file.id],
      ['updated', file.id],
      ['deleted', file.id],
    ]);
    expect(h.firedFor(id)[0]).toMatchObject({ data: { item: { name: 'watched.txt' } } });
    await h.remove(id);
  });
});
