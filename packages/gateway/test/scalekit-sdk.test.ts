import { connect as http2Connect } from 'node:http2';
import { submitConsent } from '@portico/emulators';
import {
  ScalekitBadRequestException,
  ScalekitClient,
  ScalekitNotFoundException,
  ScalekitToolException,
  ScalekitToolForbiddenException,
  ScalekitToolRateLimitException,
  ScalekitToolUnauthorizedException,
} from '@scalekit-sdk/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessTokenIssuer } from '../src/auth/access-tokens.js';
import { BACKENDS } from './helpers/backends.js';
import { browserCookie, createSandboxConnection, openLink } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/** The SDK's connected-account status enum, as it reports it. */
const ACTIVE = 1;
const PENDING_AUTH = 3;
const DISCONNECTED = 5;

/** One tool of every provider with tools, and an input the sandbox answers. */
const ONE_TOOL_EACH: Array<[provider: string, tool: string, input: Record<string, unknown>]> = [
  ['notion', 'notes_user_list', {}],
  ['google_calendar', 'calendar_list_calendars', {}],
  ['google_drive', 'drive_get_file_metadata', { file_id: 'root' }],
  ['google_sheets', 'sheets_create_spreadsheet', { title: 'From the SDK' }],
  ['google_docs', 'docs_create_document', { title: 'From the SDK' }],
  ['hubspot', 'crm_contacts_list', { limit: 2 }],
];

/** Plays the end user on a link the SDK returned: open it, consent, come back with the cookie. */
async function consent(link: string): Promise<void> {
  const start = await openLink(link);
  expect(start.status).toBe(303);
  const callback = await submitConsent(start.headers.get('location')!, { decision: 'allow' });
  const done = await fetch(callback, { redirect: 'manual', headers: { cookie: browserCookie(start) } });
  expect(done.status).toBe(200);
}

/** A raw gRPC call (one framed message) whose status must arrive, within 5 s, whatever was sent. */
async function rawCall(
  url: string,
  path: string,
  frame: Buffer,
  token: string,
): Promise<{ status: string | undefined; message: string }> {
  const session = http2Connect(url);
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no gRPC status for ${path} within 5 s`)), 5000);
      const stream = session.request({
        ':method': 'POST',
        ':path': path,
        'content-type': 'application/grpc+proto',
        te: 'trailers',
        authorization: `Bearer ${token}`,
      });
      let status: string | undefined;
      let message = '';
      const read = (headers: Record<string, unknown>) => {
        if (headers['grpc-status'] !== undefined) {
          status = String(headers['grpc-status']);
          message = decodeURIComponent(String(headers['grpc-message'] ?? ''));
        }
      };
      stream.on('response', read);
      stream.on('trailers', read);
      stream.on('data', () => {});
      stream.on('close', () => {
        clearTimeout(timer);
        resolve({ status, message });
      });
      stream.on('error', reject);
      stream.end(frame);
    });
  } finally {
    session.close();
  }
}

const framed = (payload: Buffer, declaredLength = payload.length) => {
  const header = Buffer.alloc(5);
  header.writeUInt32BE(declaredLength, 1);
  return Buffer.concat([header, payload]);
};

describe.each(BACKENDS)('the official Scalekit Node SDK against Portico ($name)', (backend) => {
  let t: TestGateway;
  let sk: ScalekitClient;

  beforeAll(async () => {
    t = await startTestGateway(backend);
    for (const [provider] of ONE_TOOL_EACH) await createSandboxConnection(t, `${provider}-sandbox`, provider);
    await createSandboxConnection(t, 'sharepoint-sandbox', 'sharepoint');
    // The one-line change: env_url is the Portico deployment.
    sk = new ScalekitClient(t.url, t.clientId, t.clientSecret);
  }, 60_000);
  afterAll(() => t.close());

  it('gets or creates an account, links it, and the user consents over HTTP', async () => {
    const created = await sk.actions.getOrCreateConnectedAccount({
      connectionName: 'notion-sandbox',
      identifier: 'user_1',
    });
    expect(created.connectedAccount).toMatchObject({
      identifier: 'user_1',
      connector: 'notion-sandbox',
      provider: 'notion',
      status: PENDING_AUTH,
    });
    const id = created.connectedAccount!.id;
    expect(id).toMatch(/^ca_/);
    // Again: the same account, not a second one.
    const again = await sk.actions.getOrCreateConnectedAccount({
      connectionName: 'notion-sandbox',
      identifier: 'user_1',
    });
    expect(again.connectedAccount!.id).toBe(id);

    const { link, expiry } = await sk.actions.getAuthorizationLink({
      connectionName: 'notion-sandbox',
      identifier: 'user_1',
    });
    expect(link).toMatch(new RegExp(`^${t.url}/connect/`));
    expect(Number(expiry!.seconds) * 1000).toBeGreaterThan(Date.now());
    await consent(link);

    const account = await sk.actions.getConnectedAccount({
      connectionName: 'notion-sandbox',
      identifier: 'user_1',
    });
    expect(account.connectedAccount).toMatchObject({ id, status: ACTIVE, connector: 'notion-sandbox' });
    // Provider tokens never leave Portico.
    const details = account.connectedAccount!.authorizationDetails!.details;
    expect(details.case === 'oauthToken' && details.value.accessToken).toBe('');
    const byId = await sk.actions.getConnectedAccount({ connectedAccountId: id });
    expect(byId.connectedAccount!.identifier).toBe('user_1');

    const listed = await sk.actions.listConnectedAccounts({ identifier: 'user_1' });
    expect(listed.connectedAccounts.map((a) => [a.id, a.status])).toEqual([[id, ACTIVE]]);
    const rest = await (await t.api(`/api/v1/connected-accounts/${id}`)).json();
    expect(rest).toMatchObject({ id, status: 'ACTIVE', identifier: 'user_1' });
  });

  it('answers a missing account with NOT_FOUND, the exception its get-or-create relies on', async () => {
    await expect(
      sk.actions.getConnectedAccount({ connectionName: 'notion-sandbox', identifier: 'nobody' }),
    ).rejects.toBeInstanceOf(ScalekitNotFoundException);
    await expect(
      sk.actions.getOrCreateConnectedAccount({ connectionName: 'no-such-connection', identifier: 'x' }),
    ).rejects.toThrow(/No connection is named "no-such-connection"/);
  });

  it('executes one tool of every provider, recorded like REST executions', async () => {
    for (const [provider, tool, input] of ONE_TOOL_EACH) {
      const { link } = await sk.actions.getAuthorizationLink({
        connectionName: `${provider}-sandbox`,
        identifier: 'user_all',
      });
      await consent(link);
      const result = await sk.actions.executeTool({
        toolName: tool,
        identifier: 'user_all',
        toolInput: input,
      });
      expect(result.executionId, tool).toMatch(/^exec_/);
      expect(Object.keys(result.data ?? {}).length, tool).toBeGreaterThan(0);
      const record = await t.api(`/api/v1/executions/${result.executionId}`);
      expect(await record.json()).toMatchObject({
        tool_name: tool,
        status: 'success',
        identifier: 'user_all',
      });
    }
    // With connector, and with the account id alone.
    const { connectedAccounts } = await sk.actions.listConnectedAccounts({
      connectionName: 'hubspot-sandbox',
      identifier: 'user_all',
    });
    const byId = await sk.actions.executeTool({
      toolName: 'crm_contacts_list',
      connectedAccountId: connectedAccounts[0]!.id,
      toolInput: { limit: 1 },
    });
    expect((byId.data as { results: unknown[] }).results).toHaveLength(1);
  });

  it('turns each kind of provider failure into the SDK exception class for it, without retrying', async () => {
    const control = t.gateway.sandbox.control!;
    const run = () =>
      sk.actions.executeTool({ toolName: 'notes_data_fetch', identifier: 'user_1', toolInput: {} });
    const fault = (status: number, times = 1, headers: Record<string, string> = {}) =>
      control.addFault({
        emulator: 'notion',
        method: 'POST',
        path: '^/notion/v1/search',
        status,
        headers,
        times,
        body: { object: 'error', status, code: `code_${status}`, message: `Notion said ${status}.` },
      });
    const searches = () => control.counters().requests['POST /notion/v1/search'] ?? 0;

    fault(403);
    const forbidden = await run().catch((e: unknown) => e);
    expect(forbidden).toBeInstanceOf(ScalekitToolForbiddenException);
    expect(forbidden).toMatchObject({ errorCode: 'TOOL_ERROR', toolErrorCode: 'upstream_forbidden' });
    expect((forbidden as ScalekitToolForbiddenException).toolErrorMessage).toContain('Notion said 403.');
    expect((forbidden as ScalekitToolForbiddenException).executionId).toMatch(/^exec_/);

    const before = searches();
    fault(429, 1, { 'retry-after': '30' });
    const limited = await run().catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(ScalekitToolRateLimitException);
    expect(searches() - before).toBe(1);

    fault(404);
    const missing = await run().catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ScalekitToolException);
    expect(missing).toMatchObject({ grpcStatus: 5, toolErrorCode: 'upstream_not_found' });

    // The provider refusing the credential even after a refresh: not the SDK's own token.
    fault(401, 2);
    const refused = await run().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ScalekitToolUnauthorizedException);
    expect(refused).toMatchObject({ grpcStatus: 16, errorCode: 'TOOL_ERROR' });

    // An account that must be authorized again: FAILED_PRECONDITION with a fresh link.
    await sk.actions.getOrCreateConnectedAccount({ connectionName: 'notion-sandbox', identifier: 'pending' });
    const inactive = await sk.actions
      .executeTool({
        toolName: 'notes_user_list',
        identifier: 'pending',
        connector: 'notion-sandbox',
        toolInput: {},
      })
      .catch((e: unknown) => e);
    expect(inactive).toBeInstanceOf(ScalekitToolException);
    expect(inactive).toMatchObject({ grpcStatus: 9, toolErrorCode: 'account_not_active' });
    const info = (inactive as ScalekitToolException).unpackedDetails[0] as {
      helpInfo: { links: { url: string }[] };
    };
    expect(info.helpInfo.links[0]!.url).toMatch(new RegExp(`^${t.url}/connect/`));
  });

  it('answers bad calls with INVALID_ARGUMENT and field violations, unknown tools with NOT_FOUND', async () => {
    const bad = await sk.actions
      .executeTool({ toolName: 'notes_page_get', identifier: 'user_1', toolInput: { page_id: 42 } })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ScalekitBadRequestException);
    expect((bad as ScalekitBadRequestException).errorCode).toBe('invalid_input');
    const violations = (bad as ScalekitBadRequestException).unpackedDetails[0] as {
      validationErrorInfo: { fieldViolations: { field: string }[] };
    };
    expect(violations.validationErrorInfo.fieldViolations[0]!.field).toBe('/tool_input/page_id');

    const noUser = await sk.tools.executeTool({ toolName: 'notes_user_list' }).catch((e: unknown) => e);
    expect(noUser).toBeInstanceOf(ScalekitBadRequestException);
    expect((noUser as Error).message).toContain('identifier');

    const unknown = await sk.actions
      .executeTool({ toolName: 'notes_user_lst', identifier: 'user_1', toolInput: {} })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(ScalekitNotFoundException);
    expect((unknown as Error).message).toContain('Did you mean "notes_user_list"');
  });

  it('lists tools: all, by provider, by name, and those an end user can run', async () => {
    const all = await sk.tools.listTools();
    expect(all.tools.length).toBe(t.gateway.engine.list().length);
    const notion = await sk.tools.listTools({ filter: { provider: 'notion' } as never });
    expect(notion.tools.every((tool) => tool.provider === 'notion')).toBe(true);
    const one = notion.tools.find((tool) => tool.id === 'notes_page_create')!;
    expect(one.definition).toMatchObject({ name: 'notes_page_create', input_schema: { type: 'object' } });
    const names = await sk.tools.listTools({
      filter: { toolName: ['notes_user_list'], summary: true } as never,
    });
    expect(names.toolNames).toEqual(['notes_user_list']);
    const available = await sk.tools.listAvailableTools('user_1');
    expect(new Set(available.tools.map((tool) => tool.provider))).toEqual(new Set(['notion']));
    const scoped = await sk.tools.listScopedTools('user_all', {
      filter: { providers: ['hubspot'], toolNames: [], connectionNames: [] } as never,
    });
    expect(scoped.tools.length).toBeGreaterThan(0);
    expect(
      scoped.tools.every((s) => s.tool!.provider === 'hubspot' && s.connectedAccountId.startsWith('ca_')),
    ).toBe(true);
  });

  it('lists the connections', async () => {
    const listed = await sk.actions.listConnections({ provider: 'hubspot' });
    expect(listed.connections.map((c) => [c.connectionName, c.provider])).toEqual([
      ['hubspot-sandbox', 'hubspot'],
    ]);
  });

  it('sends requests through the proxy: JSON, and binary both ways', async () => {
    const me = await sk.actions.request({
      connectionName: 'notion-sandbox',
      identifier: 'user_1',
      path: '/v1/users/me',
    });
    expect(me.status).toBe(200);
    expect(me.data).toMatchObject({ object: 'user' });

    const bytes = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7) % 256));
    const upload = await sk.actions.request({
      connectionName: 'google_drive-sandbox',
      identifier: 'user_all',
      path: '/upload/drive/v3/files',
      method: 'POST',
      queryParams: { uploadType: 'media' },
      headers: { 'content-type': 'application/octet-stream' },
      body: bytes,
    });
    expect(upload.status).toBe(200);
    const fileId = (upload.data as { id: string }).id;
    const download = await sk.actions.request({
      connectionName: 'google_drive-sandbox',
      identifier: 'user_all',
      path: `/drive/v3/files/${fileId}`,
      queryParams: { alt: 'media' },
    });
    expect(download.status).toBe(200);
    expect(Number(download.headers['content-length'])).toBe(bytes.length);
    // The SDK hands bodies to axios as text; the bytes on the wire are the ones uploaded.
    const raw = await fetch(`${t.url}/proxy/drive/v3/files/${fileId}?alt=media`, {
      headers: {
        authorization: `Bearer ${(sk as unknown as { coreClient: { accessToken: string } }).coreClient.accessToken}`,
        connection_name: 'google_drive-sandbox',
        identifier: 'user_all',
      },
    });
    expect(Buffer.from(await raw.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('fetches a new token and retries once when the gateway token has expired', async () => {
    const core = (sk as unknown as { coreClient: { accessToken: string } }).coreClient;
    const [, payload] = core.accessToken.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as { sub: string; env: string };
    const shortLived = new AccessTokenIssuer(t.gateway.keyring, t.gateway.config.publicUrl, 1);
    const expiring = (await shortLived.issue({ clientId: claims.sub, environmentId: claims.env }))
      .access_token;
    core.accessToken = expiring;
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const listed = await sk.actions.listConnectedAccounts({ identifier: 'user_1' });
    expect(listed.connectedAccounts).toHaveLength(1);
    expect(core.accessToken).not.toBe(expiring);
    const grpcLines = t.logs.filter(
      (l) => l.path === '/scalekit.v1.connected_accounts.ConnectedAccountService/ListConnectedAccounts',
    );
    expect(grpcLines.slice(-2).map((l) => l.grpc_status)).toEqual(['Unauthenticated', 'OK']);
  });

  it('deletes (disconnects) an account', async () => {
    await sk.actions.deleteConnectedAccount({ connectionName: 'notion-sandbox', identifier: 'user_1' });
    const after = await sk.actions.getConnectedAccount({
      connectionName: 'notion-sandbox',
      identifier: 'user_1',
    });
    expect(after.connectedAccount!.status).toBe(DISCONNECTED);
    await expect(
      sk.actions.executeTool({
        toolName: 'notes_user_list',
        identifier: 'user_1',
        connector: 'notion-sandbox',
        toolInput: {},
      }),
    ).rejects.toBeInstanceOf(ScalekitToolException);
  });

  it('answers what Portico does not serve with UNIMPLEMENTED naming it', async () => {
    // VerifyConnectedAccountUser is served (see user-verification.test.ts): a malformed id is bad input.
    const verify = await sk.actions
      .verifyConnectedAccountUser({ authRequestId: 'req_1', identifier: 'user_1' })
      .catch((e: unknown) => e);
    expect(verify).toMatchObject({ grpcStatus: 3 });
    expect((verify as Error).message).toContain('auth_request_id');
    const scoped = await sk.actions
      .listConnectedAccounts({ organizationId: 'org_1' })
      .catch((e: unknown) => e);
    expect(scoped).toMatchObject({ grpcStatus: 12 });
    expect((scoped as Error).message).toContain('organization_id');
  });

  it('answers bad gRPC input with a status, never a crash or a hung stream', async () => {
    const token = await t.token();
    const unknownService = await rawCall(t.url, '/foo.v1.Nope/Call', framed(Buffer.alloc(0)), token);
    expect(unknownService.status).toBe('12');
    expect(unknownService.message).toContain('foo.v1.Nope/Call');
    expect(unknownService.message).toContain('scalekit.v1.tools.ToolService/ExecuteTool');
    const unserved = await rawCall(
      t.url,
      '/scalekit.v1.tools.ToolService/CreateTool',
      framed(Buffer.alloc(0)),
      token,
    );
    expect(unserved.status).toBe('12');
    const execute = '/scalekit.v1.tools.ToolService/ExecuteTool';
    // Undecodable messages are INTERNAL, as gRPC's own servers answer them.
    const garbage = await rawCall(t.url, execute, framed(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f])), token);
    expect(garbage).toMatchObject({ status: '13', message: expect.stringContaining('parse binary') });
    const oversized = await rawCall(t.url, execute, framed(Buffer.alloc(16), 64 * 1024 * 1024), token);
    expect(oversized).toMatchObject({
      status: '8',
      message: expect.stringContaining('readMaxBytes 1048576'),
    });
    const truncated = await rawCall(t.url, execute, framed(Buffer.alloc(3), 100), token);
    expect(truncated.status).toBe('3');
    const empty = await rawCall(t.url, execute, framed(Buffer.alloc(0)), token);
    expect(empty.status).toBe('3');
    expect(empty.message).toContain('tool_name');
    const unauthenticated = await rawCall(t.url, execute, framed(Buffer.alloc(0)), 'nope');
    expect(unauthenticated.status).toBe('16');
    // Plain HTTP/2 that is not gRPC is told to use HTTP/1.1; the gateway keeps serving.
    const session = http2Connect(t.url);
    const status = await new Promise((resolve) =>
      session
        .request({ ':path': '/healthz' })
        .on('response', (h) => resolve(h[':status']))
        .resume(),
    );
    session.close();
    expect(status).toBe(501);
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
  });
});
