import { createHash } from 'node:crypto';
import type { EmulatorControl } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import {
  expectRateLimited,
  expectRevokedAccountNotActive,
  expectUpstreamError,
  google403RateLimit,
  google429,
  notFound,
  toolHarness,
  upstreamRequests,
} from './helpers/tools.js';

/** The slice of the Google emulator's state these tests read (packages/emulators/src/providers/google). */
interface DocumentModel {
  documentId: string;
  title: string;
  body: { runs: Array<{ text: string; style: string }> };
  revisionId: string;
}
interface GoogleState {
  byUser: Map<
    string,
    {
      docs: { documents: Map<string, DocumentModel> };
      drive: Map<string, { name: string; mimeType: string }>;
    }
  >;
}

const GRACE = '110000000000000000002';
const ALAN = '110000000000000000003';
/** A seeded document of a user (as the emulator derives its id). */
const seeded = (userId: string, key: string) =>
  `1${createHash('sha256').update(`docs:${userId}:${key}`).digest('base64url').slice(0, 43)}`;
const KICKOFF = seeded(GRACE, 'kickoff-notes');
const BRIEF = seeded(GRACE, 'product-brief');
const MISSING = '1NoSuchDocumentxxxxxxxxxxxxxxxxxxxxxxxxxxxxx';
const USER = 'docs_user';

describe('docs_ tools', () => {
  let t: TestGateway;
  let control: EmulatorControl;

  beforeAll(async () => {
    t = await startTestGateway(BACKENDS[0]!);
    control = t.gateway.sandbox.control!;
    await sandboxAccount(t, { provider: 'google_docs', identifier: USER, userId: GRACE });
  });
  afterAll(async () => {
    await t?.close();
  });

  const userData = (userId = GRACE) => control.state<GoogleState>('google').byUser.get(userId)!;
  const documentOf = (id: string) => userData().docs.documents.get(id);
  const textOf = (id: string) =>
    documentOf(id)!
      .body.runs.map((r) => r.text)
      .join('');
  const docsRequests = () => upstreamRequests(control, '/google/v1/documents');
  const { run, expectInvalid } = toolHarness({
    gateway: () => t,
    identifier: USER,
    route: '/google/v1/documents',
  });

  describe('docs_create_document', () => {
    it('creates a document with initial text', async () => {
      const { status, body } = await run('docs_create_document', {
        title: 'Meeting notes',
        text: 'Attendees: Ada, Grace\nDecision: ship the beta',
      });
      expect(status, JSON.stringify(body)).toBe(200);
      const data = body.data as { documentId: string; title: string; revisionId: string; url: string };
      expect(data.title).toBe('Meeting notes');
      expect(data.url).toBe(`https://docs.google.com/document/d/${data.documentId}/edit`);
      const doc = documentOf(data.documentId)!;
      expect(doc.title).toBe('Meeting notes');
      expect(textOf(data.documentId)).toBe('Attendees: Ada, Grace\nDecision: ship the beta\n');
      // The revision returned is the latest, so it works as write_control right away.
      expect(data.revisionId).toBe(doc.revisionId);
      expect(userData().drive.get(data.documentId)).toMatchObject({
        name: 'Meeting notes',
        mimeType: 'application/vnd.google-apps.document',
      });
    });

    it('creates a blank document from a title alone', async () => {
      const before = docsRequests();
      const { status, body } = await run('docs_create_document', { title: 'Blank' });
      expect(status).toBe(200);
      const data = body.data as { documentId: string; revisionId: string };
      expect(textOf(data.documentId)).toBe('\n');
      expect(data.revisionId).toBe(documentOf(data.documentId)!.revisionId);
      expect(docsRequests()).toBe(before + 1);
    });

    it('leaves the title to Google when none is given (title is optional in the specification)', async () => {
      const { status, body } = await run('docs_create_document', { text: 'First line' });
      expect(status, JSON.stringify(body)).toBe(200);
      const data = body.data as { documentId: string; title: string };
      expect(data.title).toBe('Untitled document');
      expect(documentOf(data.documentId)?.title).toBe('Untitled document');
      expect(textOf(data.documentId)).toBe('First line\n');
    });

    it('names the created document when adding its text fails, so the agent does not create another', async () => {
      control.addFault({
        emulator: 'google',
        method: 'POST',
        path: '^/google/v1/documents/[^/?]+:batchUpdate',
        status: 503,
        body: {
          error: { code: 503, message: 'The service is currently unavailable.', status: 'UNAVAILABLE' },
        },
      });
      const { status, body } = await run('docs_create_document', { title: 'Half made', text: 'Hello' });
      expect(status).toBe(502);
      expect(body.code).toBe('upstream_error');
      const id = body.document_id as string;
      expect(body.detail).toContain(`was created (documentId ${id}) but is still empty`);
      expect(documentOf(id)?.title).toBe('Half made');
      expect(textOf(id)).toBe('\n');
    });

    it('refuses invalid input before calling Google', async () => {
      await expectInvalid('docs_create_document', { title: '' }, ['/tool_input/title']);
      await expectInvalid('docs_create_document', { title: ['Notes'] }, ['/tool_input/title']);
      await expectInvalid('docs_create_document', { title: 'x', text: '' }, ['/tool_input/text']);
      await expectInvalid('docs_create_document', { title: 'x', body: 'hi' }, ['/tool_input/body']);
    });
  });

  describe('docs_read_document', () => {
    it('returns the plain text as well as the structure', async () => {
      const { status, body } = await run('docs_read_document', { document_id: KICKOFF });
      expect(status, JSON.stringify(body)).toBe(200);
      const data = body.data as {
        documentId: string;
        title: string;
        revisionId: string;
        text: string;
        body: { content: Array<Record<string, unknown>> };
      };
      expect(data.documentId).toBe(KICKOFF);
      expect(data.title).toBe('Project kickoff notes');
      expect(data.revisionId).toBe(documentOf(KICKOFF)!.revisionId);
      expect(data.text).toBe(textOf(KICKOFF));
      expect(
        data.text.startsWith('Project kickoff\nAttendees: Ada Lovelace, Grace Hopper, Alan Turing.\n'),
      ).toBe(true);
      expect(data.text).toContain('Owner: Grace drives the first milestone.\n');
      const heading = data.body.content[1] as {
        startIndex: number;
        endIndex: number;
        paragraph: { paragraphStyle: { namedStyleType: string } };
      };
      expect(heading).toMatchObject({
        startIndex: 1,
        endIndex: 17,
        paragraph: { paragraphStyle: { namedStyleType: 'HEADING_1' } },
      });
      expect(Number.isInteger(heading.endIndex)).toBe(true);
    });

    it('refuses invalid input before calling Google', async () => {
      await expectInvalid('docs_read_document', {}, ['/tool_input/document_id']);
      await expectInvalid('docs_read_document', { document_id: 'has spaces in it' }, [
        '/tool_input/document_id',
      ]);
      const body = await expectInvalid(
        'docs_read_document',
        { document_id: KICKOFF, suggestions_view_mode: 'ALL' },
        ['/tool_input/suggestions_view_mode'],
      );
      expect(JSON.stringify(body.errors)).toContain('must be one of: DEFAULT_FOR_CURRENT_ACCESS');
    });
  });

  describe('docs_update_document', () => {
    it('applies a batch of requests at the required revision', async () => {
      const read = await run('docs_read_document', { document_id: BRIEF });
      const { revisionId } = read.body.data as { revisionId: string };
      const { status, body } = await run('docs_update_document', {
        document_id: BRIEF,
        requests: [
          {
            replaceAllText: { containsText: { text: 'Problem', matchCase: true }, replaceText: 'Challenge' },
          },
          { insertText: { endOfSegmentLocation: {}, text: '\nApproved by the board.' } },
          { insertText: { location: { index: 1 }, text: 'Draft: ' } },
          {
            updateTextStyle: {
              range: { startIndex: 1, endIndex: 6 },
              textStyle: { bold: true },
              fields: 'bold',
            },
          },
        ],
        write_control: { requiredRevisionId: revisionId },
      });
      expect(status, JSON.stringify(body)).toBe(200);
      const data = body.data as {
        documentId: string;
        revisionId: string;
        replies: Array<Record<string, unknown>>;
        writeControl: { requiredRevisionId: string };
      };
      expect(data.documentId).toBe(BRIEF);
      expect(data.replies).toHaveLength(4);
      expect(data.replies[0]).toEqual({ replaceAllText: { occurrencesChanged: 1 } });
      const doc = documentOf(BRIEF)!;
      expect(data.revisionId).toBe(doc.revisionId);
      expect(data.revisionId).not.toBe(revisionId);
      expect(data.writeControl.requiredRevisionId).toBe(doc.revisionId);
      const text = textOf(BRIEF);
      expect(text.startsWith('Draft: Product brief\n')).toBe(true);
      expect(text).toContain('Challenge\n');
      expect(text).not.toContain('Problem\n');
      expect(text.endsWith('named tools.\nApproved by the board.\n')).toBe(true);
      expect(doc.body.runs[0]).toEqual({ text: 'Draft', style: '{"bold":true}' });
    });

    it('turns a revision mismatch into upstream_conflict telling the agent to re-read and retry', async () => {
      const stale = documentOf(KICKOFF)!.revisionId;
      const first = await run('docs_update_document', {
        document_id: KICKOFF,
        requests: [{ insertText: { location: { index: 1 }, text: 'Updated. ' } }],
        write_control: { requiredRevisionId: stale },
      });
      expect(first.status).toBe(200);
      const before = textOf(KICKOFF);
      const { status, body } = await run('docs_update_document', {
        document_id: KICKOFF,
        requests: [{ insertText: { location: { index: 1 }, text: 'Lost update. ' } }],
        write_control: { requiredRevisionId: stale },
      });
      expect(status).toBe(409);
      expect(body).toMatchObject({
        code: 'upstream_conflict',
        retryable: false,
        upstream: { status: 400, body: { error: { status: 'FAILED_PRECONDITION' } } },
        errors: [{ path: '/tool_input/write_control/requiredRevisionId' }],
      });
      expect(body.detail).toMatch(/Read it again with docs_read_document/);
      expect(body.detail).toMatch(/retry with write_control.requiredRevisionId/);
      expect(textOf(KICKOFF)).toBe(before);

      // Portico's earlier snake_case name works the same, and the answer names it as written.
      const earlier = await run('docs_update_document', {
        document_id: KICKOFF,
        requests: [{ insertText: { location: { index: 1 }, text: 'Lost update. ' } }],
        write_control: { required_revision_id: stale },
      });
      expect(earlier.status).toBe(409);
      expect(earlier.body).toMatchObject({
        code: 'upstream_conflict',
        errors: [{ path: '/tool_input/write_control/required_revision_id' }],
      });
      expect(earlier.body.detail).toMatch(/retry with write_control.required_revision_id/);
      expect(textOf(KICKOFF)).toBe(before);
    });

    it('accepts targetRevisionId (and its earlier name target_revision_id) and writes onto the latest revision', async () => {
      const target = documentOf(KICKOFF)!.revisionId;
      await run('docs_update_document', {
        document_id: KICKOFF,
        requests: [{ insertText: { endOfSegmentLocation: {}, text: '\nOne.' } }],
      });
      const { status } = await run('docs_update_document', {
        document_id: KICKOFF,
        requests: [{ insertText: { endOfSegmentLocation: {}, text: '\nTwo.' } }],
        write_control: { targetRevisionId: target },
      });
      expect(status).toBe(200);
      const earlier = await run('docs_update_document', {
        document_id: KICKOFF,
        requests: [{ insertText: { endOfSegmentLocation: {}, text: '\nThree.' } }],
        write_control: { target_revision_id: target },
      });
      expect(earlier.status).toBe(200);
      expect(textOf(KICKOFF).endsWith('\nOne.\nTwo.\nThree.\n')).toBe(true);
    });

    it('refuses invalid input before calling Google', async () => {
      const insert = { insertText: { location: { index: 1 }, text: 'x' } };
      await expectInvalid('docs_update_document', { requests: [insert] }, ['/tool_input/document_id']);
      await expectInvalid('docs_update_document', { document_id: BRIEF }, ['/tool_input/requests']);
      await expectInvalid('docs_update_document', { document_id: BRIEF, requests: [] }, [
        '/tool_input/requests',
      ]);
      await expectInvalid(
        'docs_update_document',
        { document_id: BRIEF, requests: [{}] },
        ['/tool_input/requests/0'],
        /rule: each request holds exactly one operation/,
      );
      await expectInvalid(
        'docs_update_document',
        {
          document_id: BRIEF,
          requests: [{ ...insert, deleteContentRange: { range: { startIndex: 1, endIndex: 2 } } }],
        },
        ['/tool_input/requests/0'],
        /rule: each request holds exactly one operation/,
      );
      const unknown = await expectInvalid(
        'docs_update_document',
        { document_id: BRIEF, requests: [{ insertFoo: {} }] },
        ['/tool_input/requests/0/insertFoo'],
      );
      expect(JSON.stringify(unknown.errors)).toContain('known fields: insertText');
      await expectInvalid(
        'docs_update_document',
        {
          document_id: BRIEF,
          requests: [{ insertText: { location: { index: 1 }, endOfSegmentLocation: {}, text: 'x' } }],
        },
        ['/tool_input/requests/0/insertText'],
        /Provide exactly one of "location" or "endOfSegmentLocation"/,
      );
      await expectInvalid(
        'docs_update_document',
        { document_id: BRIEF, requests: [{ insertText: { text: 'x' } }] },
        ['/tool_input/requests/0/insertText'],
        /rule: text is inserted either at an index or at the end of the body/,
      );
      await expectInvalid(
        'docs_update_document',
        { document_id: BRIEF, requests: [{ insertText: { location: { index: 0 }, text: 'x' } }] },
        ['/tool_input/requests/0/insertText/location/index'],
        /rule: in the document body, indexes start at 1/,
      );
      await expectInvalid(
        'docs_update_document',
        { document_id: BRIEF, requests: [{ deleteContentRange: { range: { startIndex: 5, endIndex: 5 } } }] },
        ['/tool_input/requests/0/deleteContentRange/range/endIndex'],
        /rule: a range is \[startIndex, endIndex\) with endIndex > startIndex/,
      );
      await expectInvalid(
        'docs_update_document',
        { document_id: BRIEF, requests: [{ insertText: { location: { index: 1.5 }, text: 'x' } }] },
        ['/tool_input/requests/0/insertText/location/index'],
      );
      await expectInvalid(
        'docs_update_document',
        {
          document_id: BRIEF,
          requests: [
            { createParagraphBullets: { range: { startIndex: 1, endIndex: 3 }, bulletPreset: 'STARS' } },
          ],
        },
        ['/tool_input/requests/0/createParagraphBullets/bulletPreset'],
      );
      await expectInvalid(
        'docs_update_document',
        {
          document_id: BRIEF,
          requests: [
            { updateTextStyle: { range: { startIndex: 1, endIndex: 3 }, textStyle: {}, fields: '' } },
          ],
        },
        ['/tool_input/requests/0/updateTextStyle/fields'],
      );
      await expectInvalid(
        'docs_update_document',
        {
          document_id: BRIEF,
          requests: [{ replaceAllText: { containsText: { text: '' }, replaceText: 'x' } }],
        },
        ['/tool_input/requests/0/replaceAllText/containsText/text'],
      );
      await expectInvalid(
        'docs_update_document',
        {
          document_id: BRIEF,
          requests: [insert],
          write_control: { required_revision_id: 'a', target_revision_id: 'b' },
        },
        ['/tool_input/write_control'],
        /Provide exactly one of "required_revision_id" or "target_revision_id"/,
      );
      await expectInvalid(
        'docs_update_document',
        {
          document_id: BRIEF,
          requests: [insert],
          write_control: { requiredRevisionId: 'a', targetRevisionId: 'b' },
        },
        ['/tool_input/write_control'],
        /Provide exactly one of "requiredRevisionId" or "targetRevisionId"/,
      );
      await expectInvalid(
        'docs_update_document',
        { document_id: BRIEF, requests: [insert], write_control: { revisionId: 'a' } },
        ['/tool_input/write_control/revisionId'],
      );
      await expectInvalid(
        'docs_update_document',
        { document_id: BRIEF, requests: [insert], write_control: {} },
        ['/tool_input/write_control'],
      );
    });
  });

  describe('provider errors', () => {
    it('maps a missing document to upstream_not_found', async () => {
      for (const [tool, input] of [
        ['docs_read_document', { document_id: MISSING }],
        [
          'docs_update_document',
          { document_id: MISSING, requests: [{ insertText: { endOfSegmentLocation: {}, text: 'x' } }] },
        ],
      ] as const) {
        expectUpstreamError(await run(tool, input), notFound(), tool);
      }
    });

    it('maps a request Google refuses to upstream_validation, changing nothing', async () => {
      const before = textOf(BRIEF);
      const res = await run('docs_update_document', {
        document_id: BRIEF,
        requests: [
          { insertText: { endOfSegmentLocation: {}, text: 'kept?' } },
          { insertText: { location: { index: 99_999 }, text: 'x' } },
        ],
      });
      expectUpstreamError(res, {
        status: 400,
        code: 'upstream_validation',
        upstreamStatus: 400,
        detail: /Index 99999 must be less than the end index/,
      });
      expect(textOf(BRIEF)).toBe(before);
    });

    it('maps 429 with Retry-After to upstream_rate_limited', async () => {
      await expectRateLimited(
        control,
        () => run('docs_create_document', { title: 'Throttled' }),
        google429('^/google/v1/documents', 20, 'Quota exceeded'),
        { retryAfterMs: 20_000 },
      );
    });

    it("maps Google's 403 rateLimitExceeded to upstream_rate_limited", async () => {
      await expectRateLimited(
        control,
        () => run('docs_read_document', { document_id: KICKOFF }),
        google403RateLimit('^/google/v1/documents/', 'userRateLimitExceeded'),
      );
    });

    it('answers account_not_active with an authorization link when the grant was revoked', async () => {
      const doc = seeded(ALAN, 'kickoff-notes');
      await expectRevokedAccountNotActive(t, {
        provider: 'google_docs',
        emulator: 'google',
        identifier: 'docs_revoked',
        userId: ALAN,
        works: ['docs_read_document', { document_id: doc }],
      });
    });
  });
});
