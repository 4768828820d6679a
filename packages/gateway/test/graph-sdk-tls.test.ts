import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, GraphError, PageIterator } from '@microsoft/microsoft-graph-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { selfSigned } from './helpers/tls.js';

/**
 * Microsoft's Graph client sends its token only to https hosts it knows: Graph's own, and the
 * `customHosts` it is given. Through Portico's TLS listener, configured as the docs say, it works
 * unchanged: the gateway token as its access token, the routing headers on every request.
 */
describe.each(BACKENDS)(
  'the official Microsoft Graph client through the proxy over TLS ($name)',
  (backend) => {
    let t: TestGateway;
    let dir: string;
    const trust = process.env.NODE_TLS_REJECT_UNAUTHORIZED;

    beforeAll(async () => {
      dir = mkdtempSync(path.join(tmpdir(), 'portico-graph-tls-'));
      const { certPath, keyPath } = selfSigned(dir);
      t = await startTestGateway(backend, {
        PORTICO_PUBLIC_URL: 'https://127.0.0.1:{port}',
        PORTICO_TLS_CERT: certPath,
        PORTICO_TLS_KEY: keyPath,
        PORTICO_SHUTDOWN_GRACE_MS: '1000',
      });
      // The Graph client has no option for a private CA: this process trusts the test certificate.
      process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
      await sandboxAccount(t, { provider: 'sharepoint', identifier: 'graph-user', connection: 'sharepoint' });
      // The file's first gateway loads PGlite and the sandbox cold: under a full suite's load its
      // start once took longer than a minute (every test of the block was then skipped).
    }, 120_000);
    afterAll(async () => {
      if (trust === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = trust;
      await t?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** The set-up the docs give: base URL under /proxy, Portico's host as a custom host, routing headers. */
    async function graph(): Promise<Client> {
      const token = await t.token();
      return Client.init({
        baseUrl: `${t.url}/proxy`,
        customHosts: new Set([new URL(t.url).hostname]),
        authProvider: (done) => done(null, token),
        fetchOptions: { headers: { connection_name: 'sharepoint', identifier: 'graph-user' } },
      });
    }

    it('reads the user and the sites, and lists drive items, with the token only Portico sees', async () => {
      const client = await graph();
      const me = (await client.api('/me').get()) as { id: string; userPrincipalName: string };
      expect(me.id).toBeTruthy();
      const sites = (await client.api('/me/sites').get()) as { value: unknown[] };
      expect(Array.isArray(sites.value)).toBe(true);
      const root = (await client.api('/sites/root').get()) as { id: string };
      expect(root.id).toBeTruthy();
    });

    it("pages with the client's own PageIterator: every @odata.nextLink stays under the proxy", async () => {
      const client = await graph();
      const folder = `paged-${randomBytes(4).toString('hex')}`;
      for (let i = 0; i < 23; i++) {
        await client
          .api(`/me/drive/root:/${folder}/item-${String(i).padStart(2, '0')}.txt:/content`)
          .put(`item ${i}`);
      }
      const first = (await client.api(`/me/drive/root:/${folder}:/children`).top(5).get()) as {
        '@odata.nextLink'?: string;
        value: Array<{ name: string }>;
      };
      expect(first['@odata.nextLink']?.startsWith(`${t.url}/proxy/v1.0/`)).toBe(true);
      const names: string[] = [];
      const proxiedPages = () =>
        t.logs.filter(
          (line) => typeof line.path === 'string' && /^\/proxy\/v1\.0\/.*children$/.test(line.path),
        ).length;
      const before = proxiedPages();
      const iterator = new PageIterator(client, first, (item: { name: string }) => {
        names.push(item.name);
        return true;
      });
      await iterator.iterate();
      expect(names).toHaveLength(23);
      expect(new Set(names).size).toBe(23);
      // Four more pages of five, each one a proxied call (a link to the emulator itself would have
      // carried the gateway's token there and been refused).
      expect(proxiedPages() - before).toBe(4);
    });

    it('uploads and downloads bytes unchanged; the pre-signed download URL stays direct', async () => {
      const client = await graph();
      const bytes = randomBytes(200_000);
      const name = `blob-${randomBytes(4).toString('hex')}.bin`;
      const item = (await client.api(`/me/drive/root:/${name}:/content`).put(bytes)) as { id: string };
      const meta = (await client.api(`/me/drive/items/${item.id}`).get()) as Record<string, string>;
      // Pre-authenticated: it needs no token, so it is not a link to turn back to the proxy.
      expect(meta['@microsoft.graph.downloadUrl']).not.toContain('/proxy/');
      const stream = (await client
        .api(`/me/drive/items/${item.id}/content`)
        .getStream()) as AsyncIterable<Uint8Array>;
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(Buffer.from(chunk));
      expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
      await client.api(`/me/drive/items/${item.id}`).delete();
      const gone = await client
        .api(`/me/drive/items/${item.id}`)
        .get()
        .catch((e: unknown) => e);
      expect((gone as GraphError).statusCode).toBe(404);
    });

    it("answers the provider's errors as the client's own GraphError", async () => {
      const client = await graph();
      const error = await client
        .api('/sites/root/drive/items/no-such-item')
        .get()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GraphError);
      expect((error as GraphError).statusCode).toBe(404);
    });

    it('without customHosts the client sends no token, and Portico refuses the call', async () => {
      const client = Client.init({
        baseUrl: `${t.url}/proxy`,
        authProvider: (done) => done(null, 'unused'),
        fetchOptions: { headers: { connection_name: 'sharepoint', identifier: 'graph-user' } },
      });
      const error = await client
        .api('/me')
        .get()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GraphError);
      expect((error as GraphError).statusCode).toBe(401);
    });
  },
);
