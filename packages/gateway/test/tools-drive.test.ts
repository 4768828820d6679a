import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import {
  expectProviderTools,
  expectRateLimited,
  expectRevokedAccountNotActive,
  expectUpstreamError,
  google403RateLimit,
  google429,
  notFound,
  toolHarness,
} from './helpers/tools.js';

const ADA = '110000000000000000001';
const ALAN = '110000000000000000003';
const IDENTIFIER = 'drive-user';

interface DriveFile {
  id: string;
  name: string;
  mimeType: string;
  parents: string[];
  createdTime: string;
  modifiedTime: string;
  trashed: boolean;
  starred: boolean;
  description?: string;
  content?: Buffer;
  ownerId: string;
  /** driveId: the shared drive the file is in; isRoot: a drive's root folder, which is never listed. */
  extra?: { driveId?: string; isRoot?: boolean };
}
interface GoogleState {
  byUser: Map<string, { drive: Map<string, DriveFile> }>;
}

let t: TestGateway;

const { control, run, expectInvalid } = toolHarness({ gateway: () => t, identifier: IDENTIFIER });

function driveOf(userId = ADA): Map<string, DriveFile> {
  return control().state<GoogleState>('google').byUser.get(userId)!.drive;
}

function fileNamed(name: string): DriveFile {
  const file = [...driveOf().values()].find((f) => f.name === name);
  if (!file) throw new Error(`no seeded file ${name}`);
  return file;
}

/** Puts a plain-text file straight into the emulated Drive. */
function addTextFile(id: string, name: string, text: string, extra: Partial<DriveFile> = {}): DriveFile {
  const root = fileNamed('My Drive').id;
  const now = new Date().toISOString();
  const file: DriveFile = {
    id,
    name,
    mimeType: 'text/plain',
    parents: [root],
    createdTime: now,
    modifiedTime: now,
    trashed: false,
    starred: false,
    content: Buffer.from(text),
    ownerId: ADA,
    ...extra,
  };
  driveOf().set(id, file);
  return file;
}

type Listing = {
  results: Array<Record<string, unknown> & { id: string; name: string }>;
  has_more: boolean;
  next_page: Record<string, string> | null;
  drive_query: string | null;
};

async function list(tool: string, input: unknown): Promise<Listing> {
  const res = await run(tool, input);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as Listing;
}

beforeAll(async () => {
  t = await startTestGateway(BACKENDS[0]!);
  await sandboxAccount(t, { provider: 'google_drive', identifier: IDENTIFIER, userId: ADA });
});

afterAll(async () => {
  await t?.close();
});

afterEach(() => {
  control().clearFaults();
});

describe('catalog', () => {
  it('lists the three drive_ tools with their schemas', async () => {
    await expectProviderTools(t, 'google_drive', [
      'drive_get_file_metadata',
      'drive_search_content',
      'drive_search_files',
    ]);
  });
});

describe('drive_get_file_metadata', () => {
  it('returns the metadata of a file, by default and with chosen fields', async () => {
    const note = fileNamed('Note G.txt');
    const res = await run('drive_get_file_metadata', { file_id: note.id });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({
      id: note.id,
      name: 'Note G.txt',
      mimeType: 'text/plain',
      size: String(note.content!.length),
      parents: note.parents,
      modifiedTime: note.modifiedTime,
      owners: [expect.objectContaining({ emailAddress: 'ada.lovelace@example.com' })],
      webViewLink: expect.any(String),
    });

    const some = await run('drive_get_file_metadata', {
      file_id: note.id,
      fields: 'id,name,owners(emailAddress)',
    });
    expect(some.status).toBe(200);
    expect(some.body.data).toEqual({
      id: note.id,
      name: 'Note G.txt',
      owners: [{ emailAddress: 'ada.lovelace@example.com' }],
    });

    const pdf = fileNamed('Sketch of the Analytical Engine.pdf');
    const starred = await run('drive_get_file_metadata', { file_id: pdf.id, fields: 'description,starred' });
    expect(starred.body.data).toEqual({ description: pdf.description, starred: true });

    const root = await run('drive_get_file_metadata', { file_id: 'root', fields: 'id,name,mimeType' });
    expect(root.body.data).toEqual({
      id: fileNamed('My Drive').id,
      name: 'My Drive',
      mimeType: 'application/vnd.google-apps.folder',
    });
  });

  it('rejects invalid input before calling Google', async () => {
    await expectInvalid('drive_get_file_metadata', {}, '/tool_input/file_id', /required/);
    await expectInvalid('drive_get_file_metadata', { file_id: '' }, '/tool_input/file_id');
    await expectInvalid('drive_get_file_metadata', { file_id: 'abc/../def' }, '/tool_input/file_id');
    await expectInvalid('drive_get_file_metadata', { file_id: 42 }, '/tool_input/file_id');
    await expectInvalid(
      'drive_get_file_metadata',
      { file_id: 'abc', fields: 'id,owners(emailAddress' },
      '/tool_input/fields',
      /rule: every "\(" that opens a list of sub-fields is closed/,
    );
    await expectInvalid(
      'drive_get_file_metadata',
      { file_id: 'abc', fields: 'id;drop' },
      '/tool_input/fields',
    );
    await expectInvalid(
      'drive_get_file_metadata',
      { file_id: 'abc', mime_type: 'x/y' },
      '/tool_input/mime_type',
    );
  });
});

describe('drive_search_content', () => {
  it('finds files by their text, escaping quotes in the term', async () => {
    const data = await list('drive_search_content', { query: "It's the first published algorithm" });
    expect(data.results.map((f) => f.name)).toEqual(['Note G.txt']);
    expect(data.drive_query).toBe(
      "fullText contains 'It\\'s the first published algorithm' and trashed = false",
    );
    expect(data.has_more).toBe(false);
    expect(data.next_page).toBeNull();
    expect(data.results[0]).toMatchObject({ id: fileNamed('Note G.txt').id, mimeType: 'text/plain' });
  });

  it('escapes backslashes so they are searched literally', async () => {
    addTextFile(
      '1backslashFileForSearch0000000000',
      'paths.txt',
      'Install into C:\\Engine\\cards before use.',
    );
    const data = await list('drive_search_content', { query: 'C:\\Engine\\cards' });
    expect(data.results.map((f) => f.name)).toEqual(['paths.txt']);
    expect(data.drive_query).toBe("fullText contains 'C:\\\\Engine\\\\cards' and trashed = false");
  });

  it('filters by MIME type, leaves trashed files out unless asked, and pages', async () => {
    const any = await list('drive_search_content', { query: 'bernoulli' });
    expect(any.results.map((f) => f.name).sort()).toEqual(['Note G.txt', 'bernoulli-numbers.csv']);
    const csv = await list('drive_search_content', { query: 'bernoulli', mime_type: 'text/csv' });
    expect(csv.results.map((f) => f.name)).toEqual(['bernoulli-numbers.csv']);

    addTextFile('1trashedFileForSearch000000000000', 'old bernoulli draft.txt', 'bernoulli draft', {
      trashed: true,
    });
    const live = await list('drive_search_content', { query: 'bernoulli' });
    expect(live.results.map((f) => f.name)).not.toContain('old bernoulli draft.txt');
    const all = await list('drive_search_content', { query: 'bernoulli', include_trashed: true });
    expect(all.results.map((f) => f.name)).toContain('old bernoulli draft.txt');

    const p1 = await list('drive_search_content', { query: 'bernoulli', page_size: 1 });
    expect(p1.results).toHaveLength(1);
    expect(p1.has_more).toBe(true);
    const p2 = await list('drive_search_content', { query: 'bernoulli', page_size: 1, ...p1.next_page });
    expect(p2.results).toHaveLength(1);
    expect(p2.has_more).toBe(false);
    expect(p2.results[0]!.id).not.toBe(p1.results[0]!.id);

    const narrow = await list('drive_search_content', { query: 'bernoulli', fields: 'id,name' });
    for (const f of narrow.results) expect(Object.keys(f).sort()).toEqual(['id', 'name']);
  });

  it('rejects invalid input before calling Google', async () => {
    await expectInvalid('drive_search_content', {}, '/tool_input/search_term', /required/);
    await expectInvalid('drive_search_content', { query: '' }, '/tool_input/query');
    await expectInvalid(
      'drive_search_content',
      { query: '   ' },
      '/tool_input/query',
      /rule: a full-text search needs/,
    );
    await expectInvalid('drive_search_content', { query: 'x', mime_type: 'pdf' }, '/tool_input/mime_type');
    await expectInvalid('drive_search_content', { query: 'x', page_size: 0 }, '/tool_input/page_size');
    await expectInvalid('drive_search_content', { query: 'x', page_size: 1001 }, '/tool_input/page_size');
    await expectInvalid(
      'drive_search_content',
      { query: 'x', include_trashed: 'no' },
      '/tool_input/include_trashed',
    );
    await expectInvalid('drive_search_content', { query: 'x', order_by: 'name' }, '/tool_input/order_by');
  });
});

describe('supports_all_drives', () => {
  it('reaches files in shared drives only when true, as Drive does', async () => {
    const shared = fileNamed('Difference Engine funding.txt');
    expect(shared.extra?.driveId).toEqual(expect.any(String));

    const hidden = await run('drive_get_file_metadata', { file_id: shared.id });
    expectUpstreamError(hidden, notFound(/call again with supports_all_drives true/));
    const meta = await run('drive_get_file_metadata', {
      file_id: shared.id,
      fields: 'id,name,driveId',
      supports_all_drives: true,
    });
    expect(meta.body.data).toEqual({ id: shared.id, name: shared.name, driveId: shared.extra!.driveId });

    const byContent = { search_term: 'Treasury grants' };
    expect((await list('drive_search_content', byContent)).results).toEqual([]);
    const content = await list('drive_search_content', { ...byContent, supports_all_drives: true });
    expect(content.results.map((f) => f.id)).toEqual([shared.id]);

    const byName = { query: "name contains 'Difference'" };
    expect((await list('drive_search_files', byName)).results).toEqual([]);
    const named = await list('drive_search_files', { ...byName, supports_all_drives: true });
    expect(named.results.map((f) => f.id)).toEqual([shared.id]);

    await expectInvalid(
      'drive_search_files',
      { supports_all_drives: 'yes' },
      '/tool_input/supports_all_drives',
      /boolean/,
    );
  });
});

describe('drive_search_files', () => {
  it('searches with the Drive query language and sorts', async () => {
    const byName = await list('drive_search_files', { query: "name contains 'Note'" });
    // Drive's `name contains` matches the start of any word, case-insensitively.
    expect(byName.results.map((f) => f.name).sort()).toEqual(['Note G.txt', 'Project kickoff notes']);
    expect(byName.drive_query).toBe("(name contains 'Note') and trashed = false");

    const folder = fileNamed('Analytical Engine');
    const inFolder = await list('drive_search_files', {
      query: `'${folder.id}' in parents`,
      order_by: 'name',
    });
    const expected = [...driveOf().values()]
      .filter((f) => f.parents.includes(folder.id) && !f.trashed)
      .map((f) => f.name)
      .sort((a, b) => a.localeCompare(b, 'en'));
    expect(inFolder.results.map((f) => f.name)).toEqual(expected);
    expect(expected.length).toBeGreaterThanOrEqual(3);

    const desc = await list('drive_search_files', {
      query: `'${folder.id}' in parents`,
      order_by: 'name desc',
    });
    expect(desc.results.map((f) => f.name)).toEqual([...expected].reverse());

    const pdfs = await list('drive_search_files', {
      query: "mimeType = 'application/pdf' and starred = true",
    });
    expect(pdfs.results.map((f) => f.name)).toEqual(['Sketch of the Analytical Engine.pdf']);

    const quoted = await list('drive_search_files', { query: "name = 'Lecture: poetical science'" });
    expect(quoted.results).toHaveLength(1);
  });

  it('lists everything when no query is given and pages with next_page', async () => {
    // Without supports_all_drives, files in shared drives are left out, as at Google.
    const live = [...driveOf().values()].filter((f) => !f.trashed && !f.extra?.isRoot && !f.extra?.driveId);
    const seen = new Set<string>();
    let input: Record<string, unknown> = { page_size: 3, order_by: 'createdTime' };
    for (let pages = 0; pages < 20; pages++) {
      const page = await list('drive_search_files', input);
      expect(page.results.length).toBeLessThanOrEqual(3);
      for (const f of page.results) seen.add(f.id);
      if (!page.has_more) {
        expect(page.next_page).toBeNull();
        break;
      }
      expect(Object.keys(page.next_page!)).toEqual(['page_token']);
      input = { page_size: 3, order_by: 'createdTime', ...page.next_page };
    }
    expect(seen.size).toBe(live.length);

    const withTrash = await list('drive_search_files', { include_trashed: true, page_size: 1000 });
    expect(withTrash.results.some((f) => f.name === 'old bernoulli draft.txt')).toBe(true);
    const explicit = await list('drive_search_files', { query: 'trashed = true' });
    expect(explicit.drive_query).toBe('trashed = true');
    expect(explicit.results.map((f) => f.name)).toEqual(['old bernoulli draft.txt']);
  });

  it('rejects invalid input before calling Google', async () => {
    await expectInvalid(
      'drive_search_files',
      { query: "name = 'it's'" },
      '/tool_input/query',
      /rule: Drive query values are quoted strings/,
    );
    await expectInvalid(
      'drive_search_files',
      { query: "(name contains 'a'" },
      '/tool_input/query',
      /never closed/,
    );
    await expectInvalid('drive_search_files', { query: '' }, '/tool_input/query');
    await expectInvalid(
      'drive_search_files',
      { order_by: 'size' },
      '/tool_input/order_by',
      /rule: order_by lists keys/,
    );
    await expectInvalid('drive_search_files', { order_by: 'name ascending' }, '/tool_input/order_by');
    await expectInvalid(
      'drive_search_files',
      { query: "fullText contains 'engine'", order_by: 'name' },
      '/tool_input/order_by',
      /relevance order/,
    );
    await expectInvalid('drive_search_files', { page_size: 5000 }, '/tool_input/page_size');
    await expectInvalid('drive_search_files', { page_token: 7 }, '/tool_input/page_token');
    await expectInvalid('drive_search_files', { q: "name = 'x'" }, '/tool_input/q');
  });
});

describe('provider errors', () => {
  it('maps not found and invalid queries', async () => {
    const missing = await run('drive_get_file_metadata', { file_id: '1doesNotExist' });
    expectUpstreamError(missing, notFound(/File not found/));

    const bad = await run('drive_search_files', { query: "name ~ 'engine'" });
    expectUpstreamError(bad, {
      status: 400,
      code: 'upstream_validation',
      upstreamStatus: 400,
      detail: /Invalid Value/,
    });
  });

  it('maps a 429 with Retry-After to upstream_rate_limited', async () => {
    await expectRateLimited(
      control(),
      () => run('drive_search_content', { query: 'engine' }),
      { ...google429('^/google/drive/v3/files', 30, 'Rate Limit Exceeded'), times: 5 },
      { retryAfterMs: 30_000 },
    );
  });

  it("maps Google's 403 userRateLimitExceeded / rateLimitExceeded to upstream_rate_limited", async () => {
    for (const reason of ['userRateLimitExceeded', 'rateLimitExceeded'] as const) {
      await expectRateLimited(control(), () => run('drive_get_file_metadata', { file_id: 'root' }), {
        ...google403RateLimit('^/google/drive/v3/files', reason, 'User Rate Limit Exceeded'),
        times: 5,
      });
      control().clearFaults();
    }
  });

  it('answers account_not_active with an authorization link when the grant is revoked', async () => {
    await expectRevokedAccountNotActive(t, {
      provider: 'google_drive',
      emulator: 'google',
      identifier: 'drive-revoked',
      userId: ALAN,
      works: ['drive_search_files', {}],
    });
  });
});
