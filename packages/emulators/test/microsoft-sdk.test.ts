import { type Client, GraphError } from '@microsoft/microsoft-graph-client';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { quickXorHash } from '../src/providers/microsoft/quick-xor-hash.js';
import { mintToken, useEmulators } from './helpers/emulators.js';
import { graphClient, readAll } from './microsoft-fixtures.js';

interface DriveItemJson {
  id: string;
  name: string;
  size: number;
  webUrl: string;
  file?: { mimeType: string; hashes: { quickXorHash: string } };
  folder?: { childCount: number };
  parentReference: { driveId: string; id?: string; path?: string };
  '@microsoft.graph.downloadUrl'?: string;
}

interface Page<T> {
  value: T[];
  '@odata.nextLink'?: string;
}

const ADA_EMAIL = 'ada.lovelace@contoso.com';

const emu = useEmulators({ modules: ['microsoft'], clock: () => now });
let now = Date.now();
let token = '';
let client: Client;

beforeAll(() => {
  client = graphClient(emu.urls.microsoft, () => token);
});

beforeEach(() => {
  now = Date.now();
  token = mintToken(emu, 'microsoft', ADA_EMAIL, ['Sites.ReadWrite.All', 'Files.ReadWrite.All', 'User.Read']);
});

/** The SDK only parses https links, so a next link is handed back as a path under the base URL. */
function pathOf(nextLink: string): string {
  return nextLink.slice(`${emu.urls.microsoft}/v1.0`.length);
}

describe('Microsoft Graph emulator with @microsoft/microsoft-graph-client', () => {
  it('answers /me with the signed-in user', async () => {
    const me = await client.api('/me').get();
    expect(me).toMatchObject({ displayName: 'Ada Lovelace', mail: ADA_EMAIL, userPrincipalName: ADA_EMAIL });
    expect(me.id).toBe(emu.control.users('microsoft').find((u) => u.email === ADA_EMAIL)!.id);
    expect(me['@odata.context']).toMatch(/\$metadata#users\/\$entity$/);
  });

  it('finds the root site, by composite id and by server-relative path', async () => {
    const root = await client.api('/sites/root').get();
    expect(root).toMatchObject({
      displayName: 'Contoso Team Site',
      webUrl: 'https://contoso.sharepoint.com',
      root: {},
    });
    expect(root.id).toMatch(/^contoso\.sharepoint\.com,[0-9a-f-]{36},[0-9a-f-]{36}$/);
    expect((await client.api(`/sites/${root.id}`).get()).displayName).toBe('Contoso Team Site');
    const marketing = await client.api('/sites/contoso.sharepoint.com:/sites/marketing').get();
    expect(marketing).toMatchObject({
      displayName: 'Marketing',
      webUrl: 'https://contoso.sharepoint.com/sites/marketing',
    });
  });

  it('lists followed sites and searches sites', async () => {
    const followed: Page<{ displayName: string }> = await client.api('/me/followedSites').get();
    expect(followed.value.map((s) => s.displayName)).toEqual(['Marketing', 'Engineering']);
    const hits: Page<{ displayName: string }> = await client
      .api('/sites')
      .query({ search: 'engineering' })
      .get();
    expect(hits.value.map((s) => s.displayName)).toEqual(['Engineering']);
    const all: Page<{ displayName: string }> = await client.api('/sites').query({ search: '*' }).get();
    expect(all.value).toHaveLength(3);
  });

  it('pages drive root children with $top and @odata.nextLink', async () => {
    const full: Page<DriveItemJson> = await client.api('/sites/root/drive/root/children').get();
    expect(full.value.map((i) => i.name).sort()).toEqual(['Brand Guidelines.pdf', 'Projects', 'Welcome.txt']);
    expect(full['@odata.nextLink']).toBeUndefined();
    const names: string[] = [];
    let page: Page<DriveItemJson> = await client.api('/sites/root/drive/root/children').top(1).get();
    let pages = 1;
    names.push(...page.value.map((i) => i.name));
    while (page['@odata.nextLink']) {
      page = await client.api(pathOf(page['@odata.nextLink'])).get();
      names.push(...page.value.map((i) => i.name));
      pages++;
    }
    expect(pages).toBe(3);
    expect(names).toEqual(full.value.map((i) => i.name));
    const projects = full.value.find((i) => i.name === 'Projects')!;
    expect(projects.folder).toEqual({ childCount: 3 });
  });

  it('uploads with put, then gets the item by path and downloads the same bytes', async () => {
    const bytes = Buffer.from('Quarterly numbers: 1, 1, 2, 3, 5, 8\n');
    const created: DriveItemJson = await client
      .api('/sites/root/drive/root:/Reports/Q1.txt:/content')
      .header('Content-Type', 'text/plain')
      .put(bytes);
    expect(created).toMatchObject({
      name: 'Q1.txt',
      size: bytes.length,
      file: { mimeType: 'text/plain', hashes: { quickXorHash: quickXorHash([bytes]) } },
    });
    expect(created.parentReference.path).toMatch(/\/root:\/Reports$/);
    expect(created.webUrl).toBe('https://contoso.sharepoint.com/Shared%20Documents/Reports/Q1.txt');

    const byPath: DriveItemJson = await client.api('/sites/root/drive/root:/Reports/Q1.txt').get();
    expect(byPath.id).toBe(created.id);
    const downloadUrl = byPath['@microsoft.graph.downloadUrl']!;
    expect(downloadUrl).toContain('/_layouts/15/download.aspx?');

    // The pre-signed URL needs no Authorization header.
    const plain = await fetch(downloadUrl);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toBe('text/plain');
    expect(Buffer.from(await plain.arrayBuffer()).equals(bytes)).toBe(true);

    // `…/content` redirects there; the SDK follows the 302.
    const streamed = await readAll(
      await client.api(`/sites/root/drive/items/${created.id}/content`).getStream(),
    );
    expect(streamed.equals(bytes)).toBe(true);
  });

  it('reports a missing item as a GraphError itemNotFound', async () => {
    const error = await client
      .api('/sites/root/drive/root:/Nowhere/missing.txt')
      .get()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GraphError);
    expect(error).toMatchObject({ statusCode: 404, code: 'itemNotFound' });
    expect((error as GraphError).requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses an expired download URL', async () => {
    const item: DriveItemJson = await client.api('/sites/root/drive/root:/Welcome.txt').get();
    const url = item['@microsoft.graph.downloadUrl']!;
    now += 59 * 60 * 1000;
    expect((await fetch(url)).status).toBe(200);
    now += 2 * 60 * 1000;
    const expired = await fetch(url);
    expect(expired.status).toBe(401);
    expect(await expired.json()).toEqual({ error_description: 'Invalid JWT token. The token is expired.' });
  });

  it('honours a shorter download URL lifetime set in the state', async () => {
    emu.control.state<{ downloadUrlTtlSeconds: number }>('microsoft').downloadUrlTtlSeconds = 30;
    const item: DriveItemJson = await client.api('/me/drive/root:/Notes.txt').get();
    now += 31 * 1000;
    expect((await fetch(item['@microsoft.graph.downloadUrl']!)).status).toBe(401);
  });

  it('gives each user their own tenant', async () => {
    const adaRoot = await client.api('/sites/root').get();
    token = mintToken(emu, 'microsoft', 'grace.hopper@fabrikam.com');
    const graceRoot = await client.api('/sites/root').get();
    expect(graceRoot.displayName).toBe('Fabrikam Team Site');
    const error = await client
      .api(`/sites/${adaRoot.id}`)
      .get()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ statusCode: 404, code: 'itemNotFound' });
  });

  it('keeps seeded ids stable across resets', async () => {
    const before: DriveItemJson = await client.api('/sites/root/drive/root:/Projects/Budget.xlsx').get();
    emu.control.reset();
    token = mintToken(emu, 'microsoft', ADA_EMAIL);
    const after: DriveItemJson = await client.api('/sites/root/drive/root:/Projects/Budget.xlsx').get();
    expect(after.id).toBe(before.id);
    expect(after.parentReference.driveId).toBe(before.parentReference.driveId);
    expect(after.file?.hashes.quickXorHash).toBe(before.file?.hashes.quickXorHash);
    const content = Buffer.from(await (await fetch(after['@microsoft.graph.downloadUrl']!)).arrayBuffer());
    expect(content.subarray(0, 2).toString()).toBe('PK');
    expect(content.toString()).toContain('Contoso budget');
  });
});

describe('Microsoft Graph delta queries with @microsoft/microsoft-graph-client', () => {
  it('follows a drive from token=latest: created, changed and deleted items, then a 410 for a token it never gave', async () => {
    const site = await client.api('/sites/root').get();
    const driveId = (await client.api(`/sites/${site.id}/drives`).get()).value[0].id as string;
    const latest = await client.api(`/drives/${driveId}/root/delta`).query({ token: 'latest' }).get();
    expect(latest.value).toEqual([]);
    const token = new URL(latest['@odata.deltaLink']).searchParams.get('token')!;
    const item = await client.api(`/drives/${driveId}/root:/delta.txt:/content`).put('one');
    await client.api(`/drives/${driveId}/items/${item.id}/content`).put('two');
    const gone = await client.api(`/drives/${driveId}/root:/gone.txt:/content`).put('x');
    await client.api(`/drives/${driveId}/items/${gone.id}`).delete();
    const delta = await client.api(`/drives/${driveId}/root/delta`).query({ token }).get();
    expect(
      delta.value.map((v: { id: string; deleted?: unknown }) => [v.id, v.deleted !== undefined]),
    ).toEqual([
      [item.id, false],
      [gone.id, true],
    ]);
    expect(delta['@odata.deltaLink']).toContain('token=');
    const full = await client.api(`/drives/${driveId}/root/delta`).get();
    expect(full.value.some((v: { id: string }) => v.id === item.id)).toBe(true);
    const stale = await client
      .api(`/drives/${driveId}/root/delta`)
      .query({ token: 'bm90LWEtdG9rZW4' })
      .get()
      .catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(GraphError);
    expect(stale).toMatchObject({ statusCode: 410, code: 'resyncRequired' });
  });
});
