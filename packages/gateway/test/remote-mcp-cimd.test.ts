import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type RunningEmulators, startEmulators } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { accountOf, authorize, executeTool } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { selfSigned } from './helpers/tls.js';

/**
 * Client ID metadata documents end to end: a gateway under an https public URL connects to an
 * emulated remote MCP server whose authorization server takes those documents only (no dynamic
 * registration, no pre-registered client). Portico's client_id there is the URL of the document it
 * serves for the connection; the authorization server fetches it at its authorize endpoint, holds
 * the user's redirect to the URIs it lists, and issues tokens to the public client (PKCE).
 */
describe.each(BACKENDS)(
  'a remote MCP server that takes client ID metadata documents only, on $name',
  (backend) => {
    let t: TestGateway;
    let emu: RunningEmulators;
    let dir: string;
    const trust = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    const ID = 'user_42';

    beforeAll(async () => {
      dir = mkdtempSync(path.join(tmpdir(), 'portico-cimd-'));
      const { certPath, keyPath } = selfSigned(dir);
      emu = await startEmulators({ modules: ['mcp'] });
      t = await startTestGateway(
        backend,
        {
          PORTICO_PUBLIC_URL: 'https://127.0.0.1:{port}',
          PORTICO_TLS_CERT: certPath,
          PORTICO_TLS_KEY: keyPath,
          PORTICO_OUTBOUND_ALLOW_PRIVATE: 'notes_cimd',
          PORTICO_SHUTDOWN_GRACE_MS: '1000',
        },
        { awaitSandbox: false },
      );
      // The emulated authorization server (in this process) fetches the document from the gateway's
      // self-signed https address, as the test's "browser" follows its links.
      process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
      const created = await t.api('/api/v1/providers', {
        method: 'POST',
        json: {
          key: 'notes_cimd',
          display_name: 'Notes MCP (client ID metadata documents)',
          auth: { kind: 'mcp' },
          mcp: { url: `${emu.urls.mcp}/cimd/mcp` },
          api: { base_url: emu.url },
        },
      });
      expect(created.status).toBe(201);
    }, 60_000);
    afterAll(async () => {
      if (trust === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = trust;
      await t?.close();
      await emu?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("uses the document Portico serves as its client_id, and runs the server's tools for user_42", async () => {
      const before = emu.control.clients('mcp').length;
      const res = await t.api('/api/v1/connections', {
        method: 'POST',
        json: { name: 'notes', provider: 'notes_cimd' },
      });
      expect(res.status).toBe(201);
      const connection = (await res.json()) as {
        id: string;
        client_id: string;
        redirect_uri: string;
        mcp_server: { registration: string };
      };
      const documentUrl = `${t.url}/sso/v1/oauth/${connection.id}/client-metadata.json`;
      expect(connection.client_id).toBe(documentUrl);
      expect(connection.mcp_server.registration).toBe('client_id_metadata_document');
      // Nothing was registered: the server learns the client from the document alone.
      expect(emu.control.clients('mcp')).toHaveLength(before);

      const document = await fetch(documentUrl);
      expect(document.status).toBe(200);
      expect(await document.json()).toMatchObject({
        client_id: documentUrl,
        redirect_uris: [connection.redirect_uri],
        grant_types: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'none',
      });
      // Another connection id, or none, serves no document.
      const missing = await fetch(`${t.url}/sso/v1/oauth/conn_nothere/client-metadata.json`);
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as { code: string }).code).toBe('not_found');

      const flow = await authorize(t, { connection: 'notes', identifier: ID });
      expect(flow.response.status).toBe(200);
      expect(new URL(flow.authorizeUrl).searchParams.get('client_id')).toBe(documentUrl);
      expect((await accountOf(t, flow.accountId)).status).toBe('ACTIVE');
      expect(emu.control.clients('mcp').find((c) => c.clientId === documentUrl)?.redirectUris).toEqual([
        connection.redirect_uri,
      ]);

      const made = await executeTool(t, {
        tool_name: 'notes__notes_create',
        identifier: ID,
        tool_input: { title: 'Via a metadata document' },
      });
      expect(made.status).toBe(200);
      const notes = (await (await fetch(`${emu.urls.mcp}/cimd/_notes/mcp-user-1`)).json()) as {
        notes: unknown[];
      };
      expect(notes.notes).toMatchObject([{ title: 'Via a metadata document' }]);

      // The public client refreshes with PKCE's grant alone: an expired token is renewed.
      expect(emu.control.expireAccessTokens('mcp')).toBeGreaterThan(0);
      expect((await executeTool(t, { tool_name: 'notes__notes_list', identifier: ID })).status).toBe(200);
    });

    it('answers a gateway without an https public URL with what to change', async () => {
      const plain = await startTestGateway(
        backend,
        { PORTICO_OUTBOUND_ALLOW_PRIVATE: 'notes_cimd' },
        { awaitSandbox: false },
      );
      try {
        await plain.api('/api/v1/providers', {
          method: 'POST',
          json: {
            key: 'notes_cimd',
            display_name: 'Notes MCP (client ID metadata documents)',
            auth: { kind: 'mcp' },
            mcp: { url: `${emu.urls.mcp}/cimd/mcp` },
            api: { base_url: emu.url },
          },
        });
        const refused = await plain.api('/api/v1/connections', {
          method: 'POST',
          json: { name: 'notes', provider: 'notes_cimd' },
        });
        expect(refused.status).toBe(400);
        const body = (await refused.json()) as { code: string; detail: string };
        expect(body.code).toBe('invalid_input');
        expect(body.detail).toContain('https PORTICO_PUBLIC_URL');
      } finally {
        await plain.close();
      }
    });
  },
);
