import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { submitConsent } from '@portico/emulators';
import { ScalekitClient, ScalekitToolException } from '@scalekit-sdk/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { browserCookie, createSandboxConnection, openLink } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/** The person behind a link: opens it, consents, comes back. */
async function consent(link: string): Promise<void> {
  const start = await openLink(link);
  expect(start.status).toBe(303);
  const callback = await submitConsent(start.headers.get('location')!, { decision: 'allow' });
  const done = await fetch(callback, { redirect: 'manual', headers: { cookie: browserCookie(start) } });
  expect(done.status).toBe(200);
}

/**
 * An end user the gateway has never seen calls a tool through each interface: the answer is the
 * authorization they must give, with a working link (the pending account is created on the spot);
 * once they have consented, the same call succeeds.
 */
describe.each(BACKENDS)('authorization required, for a never-seen end user, on $name', (backend) => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway(backend);
    await createSandboxConnection(t, 'notion', 'notion');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('REST: tools and the proxy answer account_not_active with the link; then they work', async () => {
    const call = () =>
      t.api('/api/v1/tools/execute', {
        method: 'POST',
        json: { tool_name: 'notes_user_list', identifier: 'rest-newcomer', tool_input: {} },
      });
    const first = await call();
    expect(first.status).toBe(409);
    const problem = (await first.json()) as {
      code: string;
      account_status: string;
      authorization_link: { link: string };
    };
    expect(problem).toMatchObject({ code: 'account_not_active', account_status: 'PENDING_AUTH' });
    // Asking again gives a link for the same pending account, not a second account.
    const again = (await (await call()).json()) as { connected_account_id: string };
    const listed = (await (await t.api('/api/v1/connected-accounts?identifier=rest-newcomer')).json()) as {
      data: unknown[];
    };
    expect(listed.data).toHaveLength(1);
    expect(again.connected_account_id).toBeTruthy();
    await consent(problem.authorization_link.link);
    expect((await call()).status).toBe(200);
    const proxied = await t.api('/proxy/v1/users/me', {
      headers: { connection_name: 'notion', identifier: 'rest-newcomer' },
    });
    expect(proxied.status).toBe(200);
    const newcomer = await t.api('/proxy/v1/users/me', {
      headers: { connection_name: 'notion', identifier: 'proxy-newcomer' },
    });
    expect(newcomer.status).toBe(409);
    expect(await newcomer.json()).toMatchObject({
      authorization_link: { link: expect.stringContaining('/connect/') },
    });
  });

  it('MCP: the tool result carries the link (isError); after consent the call succeeds', async () => {
    const client = new Client({ name: 'newcomer', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${await t.token()}`, identifier: 'mcp-newcomer' } },
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((x) => x.name)).toContain('portico_authorize');
      const first = (await client.callTool({ name: 'notes_user_list', arguments: {} })) as CallToolResult;
      expect(first.isError).toBe(true);
      const body = JSON.parse((first.content[0] as { text: string }).text) as {
        code: string;
        authorization_link: { link: string };
      };
      expect(body.code).toBe('account_not_active');
      await consent(body.authorization_link.link);
      const second = (await client.callTool({ name: 'notes_user_list', arguments: {} })) as CallToolResult;
      expect(second.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it('gRPC (the Scalekit SDK): FAILED_PRECONDITION with the link in help_info; after consent it runs', async () => {
    const sk = new ScalekitClient(t.url, t.clientId, t.clientSecret);
    const run = () =>
      sk.actions.executeTool({ toolName: 'notes_user_list', identifier: 'grpc-newcomer', toolInput: {} });
    const refused = await run().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ScalekitToolException);
    expect(refused).toMatchObject({ grpcStatus: 9, toolErrorCode: 'account_not_active' });
    const info = (refused as ScalekitToolException).unpackedDetails[0] as {
      helpInfo: { links: { url: string }[] };
    };
    const link = info.helpInfo.links[0]!.url;
    expect(link).toMatch(new RegExp(`^${t.url}/connect/`));
    await consent(link);
    const result = await run();
    expect(result.data).toBeTruthy();
  });

  it('with two connections for the provider and none named, the answer lists them instead of guessing', async () => {
    await createSandboxConnection(t, 'notion-two', 'notion');
    const res = await t.api('/api/v1/tools/execute', {
      method: 'POST',
      json: { tool_name: 'notes_user_list', identifier: 'undecided', tool_input: {} },
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({
      code: 'account_not_found',
      connection_names: ['notion', 'notion-two'],
    });
    const named = await t.api('/api/v1/tools/execute', {
      method: 'POST',
      json: {
        tool_name: 'notes_user_list',
        identifier: 'undecided',
        connection_name: 'notion-two',
        tool_input: {},
      },
    });
    expect(named.status).toBe(409);
    expect(await named.json()).toMatchObject({
      authorization_link: { link: expect.stringContaining('/connect/') },
    });
  });
});
