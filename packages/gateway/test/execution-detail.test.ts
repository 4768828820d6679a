import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INPUT_CAP_BYTES, recordedInput, summarizeOutput } from '../src/executions/detail.js';
import { BACKENDS } from './helpers/backends.js';
import { executeTool, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

interface Detail {
  id: string;
  status: 'success' | 'error';
  error_code: string | null;
  connected_account_id: string | null;
  error: { code: string; detail: string | null; errors: Array<{ path: string; message: string }> } | null;
  input: Record<string, unknown> | null;
  output_summary: {
    type: string;
    bytes: number;
    keys?: string[];
    item_counts?: Record<string, number>;
    has_next_page?: boolean;
  } | null;
  upstream_status: number | null;
  attempts: number | null;
  token_refreshed: boolean | null;
  timings: Record<string, number> | null;
  links: { account: string | null; connection: string | null };
}

const MISSING_PAGE = '0b0b0b0b-0b0b-4b0b-8b0b-0b0b0b0b0b0b';

// An execution record holds enough to debug a failed agent call from it alone.
describe.each(BACKENDS)('execution detail on $name', (backend) => {
  let t: TestGateway;
  let accountId: string;

  const detail = async (executionId: unknown): Promise<Detail> => {
    expect(typeof executionId).toBe('string');
    const res = await t.api(`/api/v1/executions/${executionId as string}`);
    expect(res.status).toBe(200);
    return (await res.json()) as Detail;
  };

  beforeAll(async () => {
    t = await startTestGateway(backend);
    ({ accountId } = await sandboxAccount(t, { provider: 'notion', identifier: 'detail-user' }));
  });

  afterAll(async () => {
    await t?.close();
  });

  it('a refused input keeps the problem, its field errors and the input with secrets masked', async () => {
    const call = await executeTool(t, {
      tool_name: 'notes_page_get',
      identifier: 'detail-user',
      tool_input: {
        page_id: 'not-an-id',
        api_key: 'sk-live-0123456789abcdef',
        note: 'Bearer abc123def456ghi789',
        Authorization: 'whatever',
        label: 'keep me',
      },
    });
    expect(call.status).toBe(400);
    const record = await detail(call.body.execution_id);
    expect(record.status).toBe('error');
    expect(record.error?.code).toBe('invalid_input');
    expect(record.error?.detail).toBe(call.body.detail);
    expect(record.error?.errors.map((e) => e.path)).toEqual(
      expect.arrayContaining(['/tool_input/page_id', '/tool_input/api_key']),
    );
    expect(record.input).toEqual({
      page_id: 'not-an-id',
      api_key: '[masked]',
      note: '[masked]',
      Authorization: '[masked]',
      label: 'keep me',
    });
    expect(JSON.stringify(record)).not.toContain('sk-live-0123456789abcdef');
    expect(JSON.stringify(record)).not.toContain('abc123def456');
    // Refused before any provider call.
    expect(record.upstream_status).toBeNull();
    expect(record.attempts).toBe(0);
    expect(record.output_summary).toBeNull();
    expect(record.timings).toMatchObject({ total_ms: expect.any(Number) });
  });

  it('a provider 404 keeps the provider status, the attempts and links to the account and connection', async () => {
    const call = await executeTool(t, {
      tool_name: 'notes_page_get',
      identifier: 'detail-user',
      tool_input: { page_id: MISSING_PAGE },
    });
    expect(call.status).toBe(404);
    const record = await detail(call.body.execution_id);
    expect(record.error).toMatchObject({ code: 'upstream_not_found', errors: [] });
    expect(record.error?.detail).toBe(call.body.detail);
    expect(record.upstream_status).toBe(404);
    expect(record.attempts).toBe(1);
    expect(record.token_refreshed).toBe(false);
    expect(record.input).toEqual({ page_id: MISSING_PAGE });
    expect(record.links).toEqual({
      account: `/api/v1/connected-accounts/${accountId}`,
      connection: '/api/v1/connections/sandbox-notion',
    });
    expect(record.timings).toMatchObject({
      validation_ms: expect.any(Number),
      credential_ms: expect.any(Number),
      policy_ms: expect.any(Number),
      upstream_ms: expect.any(Number),
      total_ms: expect.any(Number),
    });
  });

  it('a success keeps a summary of the output, never its body', async () => {
    const call = await executeTool(t, {
      tool_name: 'notes_user_list',
      identifier: 'detail-user',
      tool_input: {},
    });
    expect(call.status).toBe(200);
    const data = call.body.data as Record<string, unknown>;
    const record = await detail(call.body.execution_id);
    expect(record.status).toBe('success');
    expect(record.error).toBeNull();
    expect(record.upstream_status).toBe(200);
    expect(record.attempts).toBe(1);
    expect(record.output_summary).toMatchObject({
      type: 'object',
      bytes: Buffer.byteLength(JSON.stringify(data)),
      keys: Object.keys(data),
      has_next_page: expect.any(Boolean),
    });
    for (const [key, value] of Object.entries(data)) {
      if (Array.isArray(value)) expect(record.output_summary?.item_counts?.[key]).toBe(value.length);
    }
    // No value of the answer is in the record.
    const text = JSON.stringify(record);
    for (const value of Object.values(data).flat()) {
      if (value && typeof value === 'object') {
        for (const inner of Object.values(value)) {
          if (typeof inner === 'string' && inner.length > 6) expect(text).not.toContain(inner);
        }
      }
    }
    // The list stays lean.
    const list = (await (await t.api('/api/v1/executions?page_size=1')).json()) as {
      data: Array<Record<string, unknown>>;
    };
    expect(list.data[0]?.id).toBe(record.id);
    expect(list.data[0]).not.toHaveProperty('input');
    expect(list.data[0]).not.toHaveProperty('output_summary');
  });

  it('a call that had to refresh an expired token says so', async () => {
    const expire = await t.api('/api/v1/sandbox/connections/sandbox-notion/expire-tokens', {
      method: 'POST',
    });
    expect(expire.status).toBe(200);
    const call = await executeTool(t, {
      tool_name: 'notes_user_list',
      identifier: 'detail-user',
      tool_input: {},
    });
    expect(call.status).toBe(200);
    const refreshedCall = await detail(call.body.execution_id);
    expect(refreshedCall.token_refreshed).toBe(true);
    // The provider refused the expired token (401), then answered the replay with the new one.
    expect(refreshedCall.attempts).toBe(2);
    expect(refreshedCall.upstream_status).toBe(200);
    // The next call uses the new token as it is.
    const next = await executeTool(t, {
      tool_name: 'notes_user_list',
      identifier: 'detail-user',
      tool_input: {},
    });
    expect((await detail(next.body.execution_id)).token_refreshed).toBe(false);
  });

  it('a huge input is cut near 8 KB with a marker', async () => {
    const call = await executeTool(t, {
      tool_name: 'notes_data_fetch',
      identifier: 'detail-user',
      tool_input: {
        query: 'q'.repeat(40_000),
        many: Array.from({ length: 2000 }, (_, i) => `item-${i}`),
      },
    });
    const record = await detail(call.body.execution_id);
    const stored = JSON.stringify(record.input);
    expect(stored.length).toBeLessThan(INPUT_CAP_BYTES + 512);
    expect(stored).toContain('…truncated');
    expect(String(record.input?.query).startsWith('qqqq')).toBe(true);
  });
});

describe('what a record keeps of an input and an output', () => {
  it('masks secret-looking keys and values, anywhere in the input', () => {
    expect(
      recordedInput({
        filter: {
          client_secret: 'x',
          password: 'p',
          nested: [{ access_token: 't' }],
          page_token: 'cursor-1',
        },
        jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdef',
        title: 'Quarterly plan',
        count: 3,
      }),
    ).toEqual({
      filter: {
        client_secret: '[masked]',
        password: '[masked]',
        nested: [{ access_token: '[masked]' }],
        page_token: 'cursor-1',
      },
      jwt: '[masked]',
      title: 'Quarterly plan',
      count: 3,
    });
  });

  it('summarizes arrays, keys and the next page without the content', () => {
    expect(summarizeOutput({ results: [1, 2, 3], next_cursor: 'abc', has_more: true })).toEqual({
      type: 'object',
      bytes: Buffer.byteLength(JSON.stringify({ results: [1, 2, 3], next_cursor: 'abc', has_more: true })),
      keys: ['results', 'next_cursor', 'has_more'],
      item_counts: { results: 3 },
      has_next_page: true,
    });
    expect(summarizeOutput({ results: [], next_cursor: null }).has_next_page).toBe(false);
  });
});
