import { createHash, randomBytes } from 'node:crypto';
import { Client as HubSpotClient } from '@hubspot/api-client';
import { LogLevel, Client as NotionClient } from '@notionhq/client-v5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * Binary files through the proxy with the providers' official SDKs (issue 30): upload random bytes,
 * get the download link back through the SDK, download it, and get the same bytes.
 */

const ADA = 'ada00000-0000-4000-8000-000000000001';
/** Ada's seeded "Roadmap" page in the Notion sandbox. */
const ROADMAP = '6042b18c-8264-48b6-99d8-01794faa2b55';
const HUBSPOT_SCOPES = [
  'oauth',
  'crm.objects.contacts.read',
  'crm.objects.contacts.write',
  'crm.objects.companies.read',
  'crm.objects.companies.write',
  'crm.objects.deals.read',
  'crm.objects.deals.write',
  'crm.objects.owners.read',
  'files',
];

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function proxyToken(t: TestGateway, connection: string, identifier: string): Promise<string> {
  const minted = await t.api('/api/v1/proxy/tokens', {
    method: 'POST',
    json: { connection_name: connection, identifier },
  });
  expect(minted.status).toBe(201);
  return ((await minted.json()) as { token: string }).token;
}

/**
 * Signed links live under the sandbox emulator's base, which the proxy rewrites to itself. Both ways
 * must serve the bytes: through the proxy with the proxy token, and straight from the emulator with
 * no credential at all (the signature is the credential, as at the real provider's CDN).
 */
async function downloadBothWays(
  t: TestGateway,
  url: string,
  token: string,
  provider: string,
): Promise<Buffer[]> {
  const proxied = `${t.url}/proxy/`;
  expect(url.startsWith(proxied)).toBe(true);
  const direct = `${t.url}/sandbox/${provider}/${url.slice(proxied.length)}`;
  const responses = [
    await fetch(url, { headers: { authorization: `Bearer ${token}` } }),
    await fetch(direct),
  ];
  for (const res of responses) expect(res.status).toBe(200);
  return Promise.all(responses.map(async (res) => Buffer.from(await res.arrayBuffer())));
}

describe.each(BACKENDS)('files through the proxy with the official SDKs ($name)', (backend) => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway(backend);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('Notion: uploads 2 MiB with fileUploads, attaches it to a file block, and downloads the same bytes', async () => {
    const identifier = 'notion-files-user';
    const { connection } = await sandboxAccount(t, { provider: 'notion', identifier, userId: ADA });
    const token = await proxyToken(t, connection, identifier);
    const notion = new NotionClient({
      auth: token,
      baseUrl: `${t.url}/proxy`,
      logLevel: LogLevel.ERROR,
      retry: false,
    });
    const bytes = randomBytes(2 * 1024 * 1024);
    const created = await notion.fileUploads.create({
      filename: 'random.bin',
      content_type: 'application/octet-stream',
    });
    expect(created.status).toBe('pending');
    const sent = await notion.fileUploads.send({
      file_upload_id: created.id,
      file: { filename: 'random.bin', data: new Blob([bytes], { type: 'application/octet-stream' }) },
    });
    expect(sent).toMatchObject({ status: 'uploaded', content_length: bytes.length });
    const appended = await notion.blocks.children.append({
      block_id: ROADMAP,
      children: [{ type: 'file', file: { type: 'file_upload', file_upload: { id: created.id } } }],
    });
    const block = (await notion.blocks.retrieve({ block_id: appended.results[0]?.id as string })) as {
      file: { type: string; file: { url: string; expiry_time: string } };
    };
    expect(block.file.type).toBe('file');
    expect(block.file.file.url).toContain('/_files/');
    for (const got of await downloadBothWays(t, block.file.file.url, token, 'notion')) {
      expect(sha256(got)).toBe(sha256(bytes));
    }
  });

  it('HubSpot: uploads 2 MiB with filesApi.upload, signs a URL with getSignedUrl, and downloads the same bytes', async () => {
    const identifier = 'hubspot-files-user';
    const connection = 'sandbox-hubspot-files';
    // The Files API needs HubSpot's `files` scope, beyond the connection's default CRM scopes.
    const created = await t.api('/api/v1/connections', {
      method: 'POST',
      json: { name: connection, provider: 'hubspot', sandbox: true, scopes: HUBSPOT_SCOPES },
    });
    expect(created.status).toBe(201);
    await sandboxAccount(t, { provider: 'hubspot', identifier, connection });
    const token = await proxyToken(t, connection, identifier);
    const client = new HubSpotClient({ accessToken: token, basePath: `${t.url}/proxy` });
    const bytes = randomBytes(2 * 1024 * 1024);
    const file = await client.files.filesApi.upload(
      { data: bytes, name: 'random.bin' },
      undefined,
      '/sdk-files',
      undefined,
      undefined,
      JSON.stringify({ access: 'PRIVATE' }),
    );
    expect(file).toMatchObject({ name: 'random', extension: 'bin', size: bytes.length, access: 'PRIVATE' });
    const signed = await client.files.filesApi.getSignedUrl(file.id);
    expect(signed.size).toBe(bytes.length);
    expect(signed.url).toContain('/hubfs/');
    for (const got of await downloadBothWays(t, signed.url, token, 'hubspot')) {
      expect(sha256(got)).toBe(sha256(bytes));
    }
    await client.files.filesApi.archive(file.id);
    const gone = await client.files.filesApi.getById(file.id).catch((e: unknown) => e);
    expect((gone as { code?: number }).code).toBe(404);
  });
});
