import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMasterKey } from '../src/secrets/keyring.js';
import type { Database } from '../src/store/db.js';
import { BACKENDS, type Backend } from './helpers/backends.js';
import { accountOf, executeTool, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

// The embedded emulators keep their grants and tokens in the gateway's store: a restart (a new
// gateway, new emulators, the same store) keeps every sandbox account ACTIVE and refreshable.

/** The backend's store, opened once and kept open across the first gateway's close. */
function kept(backend: Backend): { backend: Backend; close(): Promise<void> } {
  let db: Promise<Database> | undefined;
  return {
    backend: {
      name: backend.name,
      open: async () => {
        db ??= backend.open();
        return { ...(await db), close: async () => {} };
      },
    },
    close: async () => (await db)?.close(),
  };
}

describe.each(BACKENDS)('sandbox state across a restart on $name', (backend) => {
  const store = kept(backend);
  let first: TestGateway | undefined;
  let t: TestGateway;
  const accounts: Record<string, string> = {};
  const env = { PORTICO_MASTER_KEY: generateMasterKey() };

  beforeAll(async () => {
    first = await startTestGateway(store.backend, env);
    // Google keeps its refresh token; Microsoft (SharePoint) rotates it at every refresh.
    ({ accountId: accounts.calendar } = await sandboxAccount(first, {
      provider: 'google_calendar',
      identifier: 'restart-calendar',
    }));
    ({ accountId: accounts.sharepoint } = await sandboxAccount(first, {
      provider: 'sharepoint',
      identifier: 'restart-sharepoint',
    }));
    // A remote MCP provider, played by the emulated MCP server (its client registered dynamically).
    ({ accountId: accounts.mcp } = await sandboxAccount(first, {
      provider: 'linear_mcp',
      identifier: 'restart-mcp',
    }));
    // One refresh before the restart, so the rotated refresh token is the one to survive.
    await first.db.query(`UPDATE connected_accounts SET token_expires_at = now() WHERE id = $1`, [
      accounts.sharepoint,
    ]);
    await first.gateway.accountTokens.invalidate(accounts.sharepoint!);
    await first.gateway.accountTokens.forAccount(accounts.sharepoint!);
    const client = { client_id: first.clientId, client_secret: first.clientSecret };
    await first.close();
    first = undefined;
    t = await startTestGateway(store.backend, env, { client });
  });

  afterAll(async () => {
    await first?.close();
    await t?.close();
    await store.close();
  });

  it('an access token issued before the restart still works', async () => {
    const res = await executeTool(t, {
      tool_name: 'calendar_list_calendars',
      identifier: 'restart-calendar',
      tool_input: {},
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const notes = await executeTool(t, {
      tool_name: 'sandbox-linear-mcp__notes_list',
      identifier: 'restart-mcp',
      tool_input: {},
    });
    expect(notes.status, JSON.stringify(notes.body)).toBe(200);
  });

  it('every account refreshes after the restart and stays ACTIVE', async () => {
    for (const id of Object.values(accounts)) {
      await t.db.query(`UPDATE connected_accounts SET token_expires_at = now() WHERE id = $1`, [id]);
      await t.gateway.accountTokens.invalidate(id);
      const credential = await t.gateway.accountTokens.forAccount(id);
      expect(credential.accessToken).toBeTruthy();
      expect(await accountOf(t, id)).toMatchObject({ status: 'ACTIVE' });
    }
    const res = await executeTool(t, {
      tool_name: 'calendar_list_calendars',
      identifier: 'restart-calendar',
      tool_input: {},
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // The emulated MCP server knows the connection's client again, and its refreshed token.
    const created = await executeTool(t, {
      tool_name: 'sandbox-linear-mcp__notes_create',
      identifier: 'restart-mcp',
      tool_input: { title: 'After the restart' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
  });

  it('keeps the state sealed: no token is readable in the store', async () => {
    const rows = await t.db.query<{ state: string }>('SELECT state FROM sandbox_state');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.state).toMatch(/^v1\./);
    const { refresh_token } = (
      await t.db.query<{ refresh_token: string }>('SELECT refresh_token FROM connected_accounts LIMIT 1')
    )[0]!;
    expect(rows[0]!.state).not.toContain(refresh_token);
  });
});
