import { beforeEach, describe, expect, it } from 'vitest';
import { notionSeedIds } from '../src/providers/notion/index.js';
import { mintToken, useEmulators } from './helpers/emulators.js';

/** Notion's wire format at the HTTP level: headers, error bodies, ids and validation. */

const ADA = 'ada00000-0000-4000-8000-000000000001';
const ada = notionSeedIds(ADA);
const VERSION = '2022-06-28';

const emu = useEmulators({ modules: ['notion'] });
let token: string;

beforeEach(() => {
  token = mintToken(emu, 'notion', ADA);
});

interface CallOptions {
  method?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  version?: string | null;
  auth?: string | null;
}

async function call(
  path: string,
  options: CallOptions = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.auth !== null) headers.authorization = options.auth ?? `Bearer ${token}`;
  if (options.version !== null) headers['notion-version'] = options.version ?? VERSION;
  let payload: string | undefined;
  if (options.rawBody !== undefined || options.body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = options.rawBody ?? JSON.stringify(options.body);
  }
  const res = await fetch(`${emu.urls.notion}${path}`, {
    method: options.method ?? 'GET',
    headers,
    body: payload,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function expectError(
  res: { status: number; body: Record<string, unknown> },
  status: number,
  code: string,
): void {
  expect(res.status).toBe(status);
  expect(res.body).toMatchObject({ object: 'error', status, code, message: expect.any(String) });
  expect(res.body.request_id).toMatch(/^[0-9a-f-]{36}$/);
}

describe('request envelope', () => {
  it('requires the Notion-Version header', async () => {
    const res = await call('/v1/users/me', { version: null });
    expectError(res, 400, 'missing_version');
    expect(res.body.message).toBe(
      'Notion-Version header failed validation: Notion-Version header should be defined, instead was `undefined`.',
    );
  });

  it('refuses a version Notion never published', async () => {
    expectError(await call('/v1/users/me', { version: '1999-01-01' }), 400, 'validation_error');
  });

  it('answers a missing, unknown, malformed or revoked bearer token with 401 unauthorized', async () => {
    for (const auth of [null, 'Bearer ntn_not_a_real_token', 'Basic abc']) {
      const res = await call('/v1/users/me', { auth });
      expectError(res, 401, 'unauthorized');
      expect(res.body.message).toBe('API token is invalid.');
    }
    emu.control.revokeGrants('notion', { userId: ADA });
    expectError(await call('/v1/users/me'), 401, 'unauthorized');
  });

  it('answers an expired token with 401 once the control API expires it', async () => {
    expect((await call('/v1/users/me')).status).toBe(200);
    emu.control.expireAccessTokens('notion');
    expectError(await call('/v1/users/me'), 401, 'unauthorized');
  });

  it('puts a request_id on successful answers too', async () => {
    const res = await call('/v1/users/me');
    expect(res.status).toBe(200);
    expect(res.body.request_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers unknown routes with invalid_request_url', async () => {
    const res = await call('/v1/nothing-here');
    expectError(res, 400, 'invalid_request_url');
    expect(res.body.message).toBe('Invalid request URL.');
  });

  it('answers malformed JSON with invalid_json', async () => {
    const res = await call('/v1/search', { method: 'POST', rawBody: '{"query": ' });
    expectError(res, 400, 'invalid_json');
  });
});

describe('ids', () => {
  it('accepts ids without hyphens and returns them hyphenated', async () => {
    const res = await call(`/v1/pages/${ada.notesPageId.replace(/-/g, '')}`);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(ada.notesPageId);
  });

  it('answers an unknown id with object_not_found and Notion’s sharing hint', async () => {
    const missing = '11111111-2222-4333-8444-555555555555';
    const res = await call(`/v1/pages/${missing}`);
    expectError(res, 404, 'object_not_found');
    expect(res.body.message).toBe(
      `Could not find page with ID: ${missing}. Make sure the relevant pages and databases are shared with your integration.`,
    );
    expectError(await call(`/v1/blocks/${missing}/children`), 404, 'object_not_found');
    expectError(await call(`/v1/databases/${missing}`), 404, 'object_not_found');
  });

  it('answers a malformed id with validation_error', async () => {
    const res = await call('/v1/blocks/not-a-uuid');
    expectError(res, 400, 'validation_error');
    expect(res.body.message).toContain('path.block_id should be a valid uuid');
  });
});

describe('pagination', () => {
  it('refuses page_size above 100 in queries and bodies', async () => {
    const query = await call(`/v1/blocks/${ada.notesPageId}/children?page_size=101`);
    expectError(query, 400, 'validation_error');
    expect(query.body.message).toContain('page_size');
    expectError(
      await call('/v1/search', { method: 'POST', body: { page_size: 101 } }),
      400,
      'validation_error',
    );
    expectError(
      await call(`/v1/databases/${ada.tasksDatabaseId}/query`, { method: 'POST', body: { page_size: 0 } }),
      400,
      'validation_error',
    );
    expect((await call('/v1/search', { method: 'POST', body: { page_size: 100 } })).status).toBe(200);
  });

  it('returns list envelopes and refuses an unknown cursor', async () => {
    const first = await call(`/v1/blocks/${ada.notesPageId}/children?page_size=5`);
    expect(first.body).toMatchObject({ object: 'list', type: 'block', block: {}, has_more: true });
    const next = first.body.next_cursor as string;
    const second = await call(`/v1/blocks/${ada.notesPageId}/children?page_size=5&start_cursor=${next}`);
    expect((second.body.results as Array<{ id: string }>)[0]?.id).toBe(next);
    expectError(
      await call(`/v1/blocks/${ada.notesPageId}/children?start_cursor=00000000-0000-4000-8000-000000000000`),
      400,
      'validation_error',
    );
  });
});

describe('validation', () => {
  it('refuses a page without a parent and a database without a title property', async () => {
    expectError(
      await call('/v1/pages', { method: 'POST', body: { properties: {} } }),
      400,
      'validation_error',
    );
    const db = await call('/v1/databases', {
      method: 'POST',
      body: { parent: { page_id: ada.notesPageId }, properties: { Notes: { rich_text: {} } } },
    });
    expectError(db, 400, 'validation_error');
  });

  it('refuses blocks without rich_text and children under leaf blocks', async () => {
    const missing = await call(`/v1/blocks/${ada.notesPageId}/children`, {
      method: 'PATCH',
      body: { children: [{ paragraph: {} }] },
    });
    expectError(missing, 400, 'validation_error');
    expect(missing.body.message).toContain('children[0].paragraph.rich_text should be defined');
    const tooMany = await call(`/v1/blocks/${ada.notesPageId}/children`, {
      method: 'PATCH',
      body: { children: Array.from({ length: 101 }, () => ({ divider: {} })) },
    });
    expectError(tooMany, 400, 'validation_error');
  });

  it('refuses an `after` block that is not a child of the parent', async () => {
    const res = await call(`/v1/blocks/${ada.notesPageId}/children`, {
      method: 'PATCH',
      body: { after: ada.meetingPageId, children: [{ divider: {} }] },
    });
    expectError(res, 400, 'validation_error');
  });

  it('refuses rich text longer than 2000 characters', async () => {
    const res = await call(`/v1/blocks/${ada.introBlockId}`, {
      method: 'PATCH',
      body: { paragraph: { rich_text: [{ text: { content: 'x'.repeat(2001) } }] } },
    });
    expectError(res, 400, 'validation_error');
  });

  it('refuses comments with neither parent nor discussion and lists need block_id', async () => {
    expectError(
      await call('/v1/comments', { method: 'POST', body: { rich_text: [{ text: { content: 'hi' } }] } }),
      400,
      'validation_error',
    );
    expectError(await call('/v1/comments'), 400, 'validation_error');
  });

  it('refuses an unsupported search filter value', async () => {
    const res = await call('/v1/search', {
      method: 'POST',
      body: { filter: { property: 'object', value: 'block' } },
    });
    expectError(res, 400, 'validation_error');
  });

  it('counts changes as made by the integration bot', async () => {
    const me = await call('/v1/users/me');
    const res = await call(`/v1/pages/${ada.taskPageId(1)}`, {
      method: 'PATCH',
      body: { properties: { Done: { checkbox: false } } },
    });
    expect(res.status).toBe(200);
    expect(res.body.last_edited_by).toEqual({ object: 'user', id: me.body.id });
  });
});
