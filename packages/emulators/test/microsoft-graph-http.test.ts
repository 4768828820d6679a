import { createHash, randomBytes } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { quickXorHash } from '../src/providers/microsoft/quick-xor-hash.js';
import { mintToken, useEmulators } from './helpers/emulators.js';

const ADA = 'ada.lovelace@contoso.com';

interface GraphErrorBody {
  error: {
    code: string;
    message: string;
    innerError: { date: string; 'request-id': string; 'client-request-id': string };
  };
}

interface Item {
  id: string;
  name: string;
  size: number;
  file?: { mimeType: string; hashes: { quickXorHash: string } };
  folder?: { childCount: number };
  '@microsoft.graph.downloadUrl'?: string;
}

const emu = useEmulators({ modules: ['microsoft'] });
let token = '';

beforeEach(() => {
  token = mintToken(emu, 'microsoft', ADA, ['Sites.ReadWrite.All']);
});

function graph(
  path: string,
  init: RequestInit & { headers?: Record<string, string> } = {},
): Promise<Response> {
  return fetch(`${emu.urls.microsoft}/v1.0${path}`, {
    redirect: 'manual',
    ...init,
    headers: { authorization: `Bearer ${token}`, ...init.headers },
  });
}

async function expectGraphError(
  res: Response,
  status: number,
  code: string,
): Promise<GraphErrorBody['error']> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await res.json()) as GraphErrorBody;
  expect(body.error.code).toBe(code);
  expect(body.error.innerError.date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
  expect(body.error.innerError['request-id']).toBe(res.headers.get('request-id'));
  return body.error;
}

describe('Graph bearer errors', () => {
  it('401 InvalidAuthenticationToken for a missing token, with the challenge header', async () => {
    const res = await fetch(`${emu.urls.microsoft}/v1.0/me`, {
      headers: { 'client-request-id': 'caller-chosen-id' },
    });
    const error = await expectGraphError(res, 401, 'InvalidAuthenticationToken');
    expect(error.message).toBe('Access token is empty.');
    expect(error.innerError['client-request-id']).toBe('caller-chosen-id');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="", authorization_uri=/);
  });

  it('IDX14100 for a token that is not a JWT', async () => {
    const res = await fetch(`${emu.urls.microsoft}/v1.0/me`, {
      headers: { authorization: 'Bearer not-a-jwt' },
    });
    const error = await expectGraphError(res, 401, 'InvalidAuthenticationToken');
    expect(error.message).toMatch(/^IDX14100: JWT is not well formed/);
    const forged = await fetch(`${emu.urls.microsoft}/v1.0/me`, {
      headers: { authorization: 'Bearer eyJ0.eyJ1.c2ln' },
    });
    expect((await expectGraphError(forged, 401, 'InvalidAuthenticationToken')).message).toBe(
      'Access token validation failure.',
    );
  });

  it('expired access token', async () => {
    emu.control.expireAccessTokens('microsoft');
    const error = await expectGraphError(await graph('/me'), 401, 'InvalidAuthenticationToken');
    expect(error.message).toBe('Access token has expired or is not yet valid.');
  });

  it('403 accessDenied when the token lacks a SharePoint permission', async () => {
    token = emu.control.issueToken('microsoft', { userId: ADA, scopes: ['User.Read'] }).access_token;
    expect((await graph('/me')).status).toBe(200);
    await expectGraphError(await graph('/sites/root/drive/root/children'), 403, 'accessDenied');
  });
});

describe('Graph addressing errors', () => {
  it('404 itemNotFound for an unknown item id', async () => {
    const error = await expectGraphError(
      await graph('/sites/root/drive/items/01NOTANITEM'),
      404,
      'itemNotFound',
    );
    expect(error.message).toBe('The resource could not be found.');
  });

  it('400 BadRequest naming an unknown segment', async () => {
    const error = await expectGraphError(await graph('/sites/root/notebooks'), 400, 'BadRequest');
    expect(error.message).toBe("Resource not found for the segment 'notebooks'.");
    const top = await expectGraphError(await graph('/teamz'), 400, 'BadRequest');
    expect(top.message).toBe("Resource not found for the segment 'teamz'.");
    // Graph v1.0 has no /me/sites; sites come from /me/followedSites or /sites?search=.
    const meSites = await expectGraphError(await graph('/me/sites'), 400, 'BadRequest');
    expect(meSites.message).toBe("Resource not found for the segment 'sites'.");
  });

  it('404 for a site path that does not exist', async () => {
    const error = await expectGraphError(
      await graph('/sites/contoso.sharepoint.com:/sites/nowhere'),
      404,
      'itemNotFound',
    );
    expect(error.message).toBe('Requested site could not be found');
  });
});

describe('Drive item writes', () => {
  it('upload answers 201 when created, 200 when replaced, keeping the id', async () => {
    const path = '/sites/root/drive/root:/Projects/Plan.txt:/content';
    const created = await graph(path, {
      method: 'PUT',
      body: 'v1',
      headers: { 'content-type': 'text/plain' },
    });
    expect(created.status).toBe(201);
    const first = (await created.json()) as Item;
    const replaced = await graph(path, { method: 'PUT', body: 'version two' });
    expect(replaced.status).toBe(200);
    const second = (await replaced.json()) as Item;
    expect(second.id).toBe(first.id);
    expect(second.size).toBe('version two'.length);

    const listing = (await (await graph('/sites/root/drive/root:/Projects:/children')).json()) as {
      value: Item[];
    };
    expect(listing.value.filter((i) => i.name === 'Plan.txt')).toHaveLength(1);
  });

  it('uploads under a parent item id and honours conflictBehavior', async () => {
    const folder = (await (await graph('/sites/root/drive/root:/Projects')).json()) as Item;
    const url = `/sites/root/drive/items/${folder.id}:/Budget.xlsx:/content`;
    const fail = await graph(`${url}?@microsoft.graph.conflictBehavior=fail`, { method: 'PUT', body: 'x' });
    await expectGraphError(fail, 409, 'nameAlreadyExists');
    const renamed = await graph(`${url}?@microsoft.graph.conflictBehavior=rename`, {
      method: 'PUT',
      body: 'x',
    });
    expect(renamed.status).toBe(201);
    expect(((await renamed.json()) as Item).name).toBe('Budget 1.xlsx');
  });

  it('stores the body exactly as sent, whatever its Content-Type', async () => {
    const json = '{"not":"parsed"}';
    const res = await graph('/me/drive/root:/data.json:/content', {
      method: 'PUT',
      body: json,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(201);
    const item = (await res.json()) as Item;
    expect(item.file?.mimeType).toBe('application/json');
    expect(await (await fetch(item['@microsoft.graph.downloadUrl']!)).text()).toBe(json);
    const noType = await graph('/me/drive/root:/blob:/content', {
      method: 'PUT',
      body: new Uint8Array([1, 2, 3]),
    });
    expect(((await noType.json()) as Item).file?.mimeType).toBe('application/octet-stream');
  });

  it('creates folders, refuses duplicates, deletes with 204', async () => {
    const create = () =>
      graph('/sites/root/drive/root/children', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Archive', folder: {} }),
      });
    const created = await create();
    expect(created.status).toBe(201);
    const folder = (await created.json()) as Item;
    expect(folder.folder).toEqual({ childCount: 0 });
    await expectGraphError(await create(), 409, 'nameAlreadyExists');

    const del = await graph(`/sites/root/drive/items/${folder.id}`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    await expectGraphError(await graph(`/sites/root/drive/items/${folder.id}`), 404, 'itemNotFound');
  });

  it('content redirects to the pre-signed URL, which serves byte ranges', async () => {
    const res = await graph('/sites/root/drive/root:/Welcome.txt:/content');
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    const full = Buffer.from(await (await fetch(location)).arrayBuffer());
    const part = await fetch(location, { headers: { range: 'bytes=0-6' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 0-6/${full.length}`);
    expect(await part.text()).toBe(full.subarray(0, 7).toString());
  });

  it('refuses a tampered download URL', async () => {
    const item = (await (await graph('/sites/root/drive/root:/Welcome.txt')).json()) as Item;
    const url = new URL(item['@microsoft.graph.downloadUrl']!);
    url.searchParams.set('tempauth', `${url.searchParams.get('tempauth')!.slice(0, -2)}xx`);
    expect((await fetch(url)).status).toBe(401);
  });

  it('round-trips a 50 MiB upload byte for byte', { timeout: 60_000 }, async () => {
    const bytes = randomBytes(50 * 1024 * 1024);
    const res = await graph('/sites/root/drive/root:/Media/big.bin:/content', {
      method: 'PUT',
      body: bytes,
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(res.status).toBe(201);
    const item = (await res.json()) as Item;
    expect(item.size).toBe(bytes.length);
    expect(item.file?.hashes.quickXorHash).toBe(quickXorHash([bytes]));

    const download = await fetch(item['@microsoft.graph.downloadUrl']!);
    expect(download.headers.get('content-length')).toBe(String(bytes.length));
    const hash = createHash('sha256');
    for await (const chunk of download.body as unknown as AsyncIterable<Uint8Array>) hash.update(chunk);
    expect(hash.digest('hex')).toBe(createHash('sha256').update(bytes).digest('hex'));
  });
});

describe('Drive addressing', () => {
  it('renames and moves an item with PATCH, refusing a name clash', async () => {
    const welcome = (await (await graph('/sites/root/drive/root:/Welcome.txt')).json()) as Item;
    const projects = (await (await graph('/sites/root/drive/root:/Projects')).json()) as Item;
    const patch = (body: unknown) =>
      graph(`/sites/root/drive/items/${welcome.id}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    await expectGraphError(await patch({ name: 'Brand Guidelines.pdf' }), 409, 'nameAlreadyExists');
    const moved = await patch({ name: 'Hello.txt', parentReference: { id: projects.id } });
    expect(moved.status).toBe(200);
    expect(((await moved.json()) as Item).name).toBe('Hello.txt');
    expect((await graph('/sites/root/drive/root:/Projects/Hello.txt')).status).toBe(200);
    await expectGraphError(await graph('/sites/root/drive/root:/Welcome.txt'), 404, 'itemNotFound');
  });

  it('reaches the same library through /drives/{id} and /sites/{id}/drives/{id}', async () => {
    const site = (await (await graph('/sites/contoso.sharepoint.com:/sites/engineering')).json()) as {
      id: string;
    };
    const drives = (await (await graph(`/sites/${site.id}/drives`)).json()) as {
      value: Array<{ id: string; name: string }>;
    };
    expect(drives.value.map((d) => d.name)).toEqual(['Documents']);
    const driveId = drives.value[0]!.id;
    const viaDrives = (await (await graph(`/drives/${driveId}/root:/Specs:/children`)).json()) as {
      value: Item[];
    };
    const viaSite = (await (
      await graph(`/sites/${site.id}/drives/${driveId}/root:/Specs:/children`)
    ).json()) as {
      value: Item[];
    };
    expect(viaDrives.value.map((i) => i.name)).toEqual(['Architecture.pdf']);
    expect(viaSite.value).toEqual(
      viaDrives.value.map((i) => ({ ...i, '@microsoft.graph.downloadUrl': expect.any(String) })),
    );
  });

  it('counts requests to fixed Graph paths under their own names', async () => {
    emu.control.resetCounters();
    await graph('/me');
    await graph('/sites/root/drive/root:/Welcome.txt');
    const { requests } = emu.control.counters();
    expect(requests['GET /microsoft/v1.0/me']).toBe(1);
    expect(requests['GET /microsoft/v1.0/*']).toBe(1);
  });
});

describe('Resumable uploads', () => {
  interface Session {
    uploadUrl: string;
    expirationDateTime: string;
    nextExpectedRanges: string[];
  }

  const FRAGMENT = 320 * 1024;

  async function openSession(path: string, body: unknown = {}): Promise<Session> {
    const res = await graph(`/sites/root/drive/root:/${path}:/createUploadSession`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const session = (await res.json()) as Session;
    expect(session.nextExpectedRanges).toEqual(['0-']);
    return session;
  }

  function putRange(session: Session, bytes: Buffer, start: number, end: number): Promise<Response> {
    return fetch(session.uploadUrl, {
      method: 'PUT',
      headers: { 'content-range': `bytes ${start}-${end - 1}/${bytes.length}` },
      body: bytes.subarray(start, end),
    });
  }

  it('takes a file in ranges at the pre-authenticated URL, then creates the item', async () => {
    const bytes = randomBytes(3 * FRAGMENT + 1000);
    const session = await openSession('Videos/talk.bin', {
      item: { '@microsoft.graph.conflictBehavior': 'rename' },
    });
    expect(new URL(session.uploadUrl).searchParams.get('tempauth')).toBeTruthy();

    const first = await putRange(session, bytes, 0, FRAGMENT);
    expect(first.status).toBe(202);
    expect(((await first.json()) as Session).nextExpectedRanges).toEqual([`${FRAGMENT}-${bytes.length - 1}`]);
    const overlap = await putRange(session, bytes, 0, FRAGMENT);
    await expectGraphError(overlap, 416, 'invalidRange');
    expect((await putRange(session, bytes, FRAGMENT, 3 * FRAGMENT)).status).toBe(202);

    const status = (await (await fetch(session.uploadUrl)).json()) as Session;
    expect(status.nextExpectedRanges).toEqual([`${3 * FRAGMENT}-${bytes.length - 1}`]);

    const last = await putRange(session, bytes, 3 * FRAGMENT, bytes.length);
    expect(last.status).toBe(201);
    const item = (await last.json()) as Item;
    expect(item).toMatchObject({ name: 'talk.bin', size: bytes.length });
    expect(item.file?.hashes.quickXorHash).toBe(quickXorHash([bytes]));
    const downloaded = Buffer.from(await (await fetch(item['@microsoft.graph.downloadUrl']!)).arrayBuffer());
    expect(downloaded.equals(bytes)).toBe(true);
    await expectGraphError(await putRange(session, bytes, 0, FRAGMENT), 404, 'itemNotFound');
  });

  it('renames on a clash when asked and can be cancelled', async () => {
    const bytes = Buffer.from('new welcome');
    const session = await openSession('Welcome.txt', {
      item: { '@microsoft.graph.conflictBehavior': 'rename' },
    });
    const done = await putRange(session, bytes, 0, bytes.length);
    expect(done.status).toBe(201);
    expect(((await done.json()) as Item).name).toBe('Welcome 1.txt');

    const failing = await graph('/sites/root/drive/root:/Welcome.txt:/createUploadSession', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ item: { '@microsoft.graph.conflictBehavior': 'fail' } }),
    });
    await expectGraphError(failing, 409, 'nameAlreadyExists');

    const cancelled = await openSession('Drafts/never.txt');
    expect((await fetch(cancelled.uploadUrl, { method: 'DELETE' })).status).toBe(204);
    await expectGraphError(await fetch(cancelled.uploadUrl), 404, 'itemNotFound');
  });
});
