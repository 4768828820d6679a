import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

interface Execution {
  id: string;
  tool_name: string;
  identifier: string;
  status: string;
  error_code: string | null;
  started_at: string;
}

describe.each(BACKENDS)('executions on $name', (backend) => {
  let t: TestGateway;
  const ids: string[] = [];

  const run = async (tool_name: string, identifier: string, tool_input: Record<string, unknown>) => {
    const res = await t.api('/api/v1/tools/execute', {
      method: 'POST',
      json: { tool_name, identifier, tool_input },
    });
    const body = (await res.json()) as { execution_id: string };
    ids.push(body.execution_id);
    return body.execution_id;
  };

  beforeAll(async () => {
    t = await startTestGateway(backend);
    await sandboxAccount(t, { provider: 'notion', identifier: 'ex-a' });
    await sandboxAccount(t, { provider: 'notion', identifier: 'ex-b' });
    await run('notes_user_list', 'ex-a', {});
    await run('notes_user_list', 'ex-b', {});
    await run('notes_page_get', 'ex-a', { page_id: 'not-an-id' });
    await run('notes_user_list', 'ex-a', { page_size: 2 });
  });

  afterAll(async () => {
    await t?.close();
  });

  const list = async (query: string) => {
    const res = await t.api(`/api/v1/executions${query}`);
    expect(res.status).toBe(200);
    return (await res.json()) as { data: Execution[]; next_page_token: string | null };
  };

  it('shows a call’s record as soon as the call has answered', async () => {
    const id = await run('notes_user_list', 'ex-b', {});
    const res = await t.api(`/api/v1/executions/${id}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id, tool_name: 'notes_user_list', status: 'success' });
  });

  it('lists newest first, filtered by tool, identifier, status and time, page by page', async () => {
    const all = await list('');
    expect(all.data.map((e) => e.id)).toEqual([...ids].reverse());
    expect((await list('?identifier=ex-b')).data.every((e) => e.identifier === 'ex-b')).toBe(true);
    const failed = await list('?status=error');
    expect(failed.data).toHaveLength(1);
    expect(failed.data[0]).toMatchObject({ tool_name: 'notes_page_get', error_code: 'invalid_input' });
    expect((await list('?tool_name=notes_page_get')).data).toHaveLength(1);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await list(`?since=${encodeURIComponent(future)}`)).data).toEqual([]);
    expect((await list(`?until=${encodeURIComponent(future)}`)).data).toHaveLength(ids.length);
    const pages: string[] = [];
    let token: string | null = null;
    do {
      const page = await list(`?page_size=2${token ? `&page_token=${token}` : ''}`);
      pages.push(...page.data.map((e) => e.id));
      token = page.next_page_token;
    } while (token);
    expect(pages).toEqual([...ids].reverse());
  });

  it('refuses bad filters with 400 naming them', async () => {
    for (const [query, path] of [
      ['?status=maybe', '/status'],
      ['?since=yesterday', '/since'],
      ['?page_size=0', '/page_size'],
      ['?page_token=bm9wZQ', '/page_token'],
    ] as const) {
      const res = await t.api(`/api/v1/executions${query}`);
      expect(res.status, query).toBe(400);
      const body = (await res.json()) as { errors: Array<{ path: string }> };
      expect(body.errors[0]!.path, query).toBe(path);
    }
  });

  it('writes every waiting record on a graceful stop', async () => {
    const other = await startTestGateway(backend);
    await sandboxAccount(other, { provider: 'notion', identifier: 'stopper' });
    const res = await other.api('/api/v1/tools/execute', {
      method: 'POST',
      json: { tool_name: 'notes_user_list', identifier: 'stopper', tool_input: {} },
    });
    const { execution_id } = (await res.json()) as { execution_id: string };
    const db = other.db;
    // Stop without reading it first: the record is written by close(), before the store closes.
    const rows: unknown[] = [];
    const originalClose = db.close.bind(db);
    db.close = async () => {
      rows.push(...(await db.query('SELECT id FROM executions WHERE id = $1', [execution_id])));
      await originalClose();
    };
    await other.close();
    expect(rows).toEqual([{ id: execution_id }]);
  });
});
