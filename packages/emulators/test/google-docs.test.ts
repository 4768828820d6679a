import { type docs_v1, google } from 'googleapis';
import { describe, expect, it } from 'vitest';
import { documentIdFrom } from '../src/providers/google/native-files.js';
import { useEmulators } from './helpers/emulators.js';
import { googleClientFor, rawGoogle } from './helpers/googleapis.js';

const SCOPE = 'https://www.googleapis.com/auth/documents';
const ADA = '110000000000000000001';
const GRACE = '110000000000000000002';
const ADA_NOTES = documentIdFrom(`docs:${ADA}:kickoff-notes`);
const ADA_BRIEF = documentIdFrom(`docs:${ADA}:product-brief`);

const emu = useEmulators({ modules: ['google'] });

function docsFor(userId: string, scopes = [SCOPE]): { api: docs_v1.Docs; token: string } {
  return googleClientFor(emu, userId, scopes, (auth) => google.docs({ version: 'v1', auth }));
}

const raw = (path: string, init: RequestInit & { token?: string } = {}) => rawGoogle(emu, path, init);

/** Paragraph texts of a document, in order. */
function paragraphs(doc: docs_v1.Schema$Document): string[] {
  return (doc.body?.content ?? [])
    .filter((c) => c.paragraph)
    .map((c) => (c.paragraph?.elements ?? []).map((e) => e.textRun?.content ?? '').join(''));
}

/** Checks what every Docs client relies on: contiguous UTF-16 indexes from the section break on. */
function expectContiguous(doc: docs_v1.Schema$Document): number {
  const content = doc.body?.content ?? [];
  expect(content[0]).toMatchObject({ endIndex: 1, sectionBreak: {} });
  expect(content[0]?.startIndex).toBeUndefined();
  let at = 1;
  for (const c of content.slice(1)) {
    expect(c.startIndex).toBe(at);
    let inner = at;
    for (const e of c.paragraph?.elements ?? []) {
      expect(e.startIndex).toBe(inner);
      inner += (e.textRun?.content ?? '').length;
      expect(e.endIndex).toBe(inner);
    }
    expect(c.endIndex).toBe(inner);
    at = inner;
  }
  return at;
}

async function textOf(api: docs_v1.Docs, documentId: string): Promise<string> {
  const doc = (await api.documents.get({ documentId })).data;
  expectContiguous(doc);
  return paragraphs(doc).join('');
}

describe('documents.create and get', () => {
  it('creates a blank document with the section break and one empty paragraph', async () => {
    const { api } = docsFor(ADA);
    const res = await api.documents.create({ requestBody: { title: 'Launch plan' } });
    const doc = res.data;
    expect(doc.title).toBe('Launch plan');
    expect(doc.documentId).toMatch(/^[A-Za-z0-9_-]{44}$/);
    expect(doc.revisionId).toEqual(expect.any(String));
    expect(doc.suggestionsViewMode).toBe('SUGGESTIONS_INLINE');
    expect(doc.body?.content).toEqual([
      {
        endIndex: 1,
        sectionBreak: {
          sectionStyle: {
            columnSeparatorStyle: 'NONE',
            contentDirection: 'LEFT_TO_RIGHT',
            sectionType: 'CONTINUOUS',
          },
        },
      },
      {
        startIndex: 1,
        endIndex: 2,
        paragraph: {
          elements: [{ startIndex: 1, endIndex: 2, textRun: { content: '\n', textStyle: {} } }],
          paragraphStyle: { namedStyleType: 'NORMAL_TEXT', direction: 'LEFT_TO_RIGHT' },
        },
      },
    ]);
    expect(doc.documentStyle?.pageSize?.width).toEqual({ magnitude: 612, unit: 'PT' });
    expect(doc.namedStyles?.styles?.map((s) => s.namedStyleType)).toContain('HEADING_1');
    const again = await api.documents.get({ documentId: doc.documentId as string });
    expect(again.data).toEqual(doc);
  });

  it('files created documents in Drive under the document mime type', async () => {
    const { api } = docsFor(GRACE);
    const id = (await api.documents.create({ requestBody: { title: 'Compiler notes' } })).data
      .documentId as string;
    const state = emu.control.state('google') as {
      byUser: Map<string, { drive: Map<string, { name: string; mimeType: string; ownerId: string }> }>;
    };
    expect(state.byUser.get(GRACE)?.drive.get(id)).toMatchObject({
      name: 'Compiler notes',
      mimeType: 'application/vnd.google-apps.document',
      ownerId: GRACE,
    });
  });

  it('serves seeded documents with headings, styled runs and exact indexes', async () => {
    const { api } = docsFor(ADA);
    const doc = (await api.documents.get({ documentId: ADA_NOTES })).data;
    expect(doc.title).toBe('Project kickoff notes');
    const end = expectContiguous(doc);
    const texts = paragraphs(doc);
    expect(texts[0]).toBe('Project kickoff\n');
    expect(end).toBe(1 + texts.join('').length);
    const heading = doc.body?.content?.[1];
    expect(heading).toMatchObject({ startIndex: 1, endIndex: 17 });
    expect(heading?.paragraph?.paragraphStyle?.namedStyleType).toBe('HEADING_1');
    expect(heading?.paragraph?.paragraphStyle?.headingId).toMatch(/^h\.[a-z0-9]{12}$/);
    const owner = doc.body?.content?.find((c) =>
      paragraphs({ body: { content: [c] } })[0]?.startsWith('Owner'),
    );
    expect(owner?.paragraph?.elements?.map((e) => [e.textRun?.content, e.textRun?.textStyle])).toEqual([
      ['Owner: ', { bold: true }],
      ['Ada drives the first milestone.\n', {}],
    ]);
    const brief = (await api.documents.get({ documentId: ADA_BRIEF })).data;
    expect(brief.title).toBe("Ada's product brief");
    expect(brief.body?.content?.[1]?.paragraph?.paragraphStyle?.namedStyleType).toBe('TITLE');
  });

  it('gives each user their own documents', async () => {
    const { api } = docsFor(GRACE);
    await expect(api.documents.get({ documentId: ADA_NOTES })).rejects.toMatchObject({ status: 404 });
    const own = await api.documents.get({ documentId: documentIdFrom(`docs:${GRACE}:kickoff-notes`) });
    expect(paragraphs(own.data).join('')).toContain('Grace drives the first milestone.');
  });

  it('returns the body inside tabs when includeTabsContent is set', async () => {
    const { api } = docsFor(ADA);
    const plain = (await api.documents.get({ documentId: ADA_NOTES })).data;
    const tabbed = (await api.documents.get({ documentId: ADA_NOTES, includeTabsContent: true })).data;
    expect(tabbed.body).toBeUndefined();
    expect(tabbed.tabs?.[0]?.tabProperties).toMatchObject({ tabId: 't.0', title: 'Tab 1' });
    expect(tabbed.tabs?.[0]?.documentTab?.body).toEqual(plain.body);
  });

  it('honours the fields mask', async () => {
    const { api } = docsFor(ADA);
    const res = await api.documents.get({ documentId: ADA_NOTES, fields: 'title,documentId' });
    expect(res.data).toEqual({ title: 'Project kickoff notes', documentId: ADA_NOTES });
  });
});

describe('documents.batchUpdate', () => {
  async function blank(api: docs_v1.Docs): Promise<string> {
    return (await api.documents.create({ requestBody: { title: 'Scratch' } })).data.documentId as string;
  }

  it('inserts text, splits paragraphs on newlines and appends at the end of the segment', async () => {
    const { api } = docsFor(ADA);
    const id = await blank(api);
    const res = await api.documents.batchUpdate({
      documentId: id,
      requestBody: {
        requests: [
          { insertText: { location: { index: 1 }, text: 'Hello world' } },
          { insertText: { location: { index: 6 }, text: '\n' } },
          { insertText: { endOfSegmentLocation: {}, text: '!' } },
        ],
      },
    });
    expect(res.data.documentId).toBe(id);
    expect(res.data.replies).toEqual([{}, {}, {}]);
    const doc = (await api.documents.get({ documentId: id })).data;
    expect(paragraphs(doc)).toEqual(['Hello\n', ' world!\n']);
    expect(doc.body?.content?.slice(1).map((c) => [c.startIndex, c.endIndex])).toEqual([
      [1, 7],
      [7, 15],
    ]);
    expect(expectContiguous(doc)).toBe(15);
  });

  it('counts indexes in UTF-16 code units', async () => {
    const { api } = docsFor(ADA);
    const id = await blank(api);
    await api.documents.batchUpdate({
      documentId: id,
      requestBody: { requests: [{ insertText: { location: { index: 1 }, text: 'a😀b' } }] },
    });
    const doc = (await api.documents.get({ documentId: id })).data;
    expect(doc.body?.content?.[1]?.endIndex).toBe(6);
    // Index 4 is right after the emoji's surrogate pair.
    await api.documents.batchUpdate({
      documentId: id,
      requestBody: { requests: [{ insertText: { location: { index: 4 }, text: '-' } }] },
    });
    expect(await textOf(api, id)).toBe('a😀-b\n');
  });

  it('deletes ranges and merges paragraphs whose newline is deleted', async () => {
    const { api } = docsFor(ADA);
    const id = await blank(api);
    await api.documents.batchUpdate({
      documentId: id,
      requestBody: { requests: [{ insertText: { location: { index: 1 }, text: 'Alpha\nBeta\nGamma' } }] },
    });
    // "Alpha\n" is [1,7), "Beta\n" [7,12), "Gamma\n" [12,18).
    await api.documents.batchUpdate({
      documentId: id,
      requestBody: { requests: [{ deleteContentRange: { range: { startIndex: 4, endIndex: 9 } } }] },
    });
    const doc = (await api.documents.get({ documentId: id })).data;
    expect(paragraphs(doc)).toEqual(['Alpta\n', 'Gamma\n']);
    expect(expectContiguous(doc)).toBe(13);
  });

  it('keeps paragraph styles the way the editor does when paragraphs merge or go', async () => {
    const { api } = docsFor(ADA);
    const doc = (await api.documents.get({ documentId: ADA_NOTES })).data;
    const content = doc.body?.content ?? [];
    // [1] "Project kickoff\n" HEADING_1, [2] "Attendees…\n" NORMAL_TEXT, [3] "Decisions\n" HEADING_2.
    const attendees = content[2] as docs_v1.Schema$StructuralElement;
    const decisions = content[3] as docs_v1.Schema$StructuralElement;
    // Deleting a whole paragraph leaves the next one as it was.
    await api.documents.batchUpdate({
      documentId: ADA_NOTES,
      requestBody: {
        requests: [
          {
            deleteContentRange: {
              range: { startIndex: attendees.startIndex as number, endIndex: attendees.endIndex as number },
            },
          },
        ],
      },
    });
    let after = (await api.documents.get({ documentId: ADA_NOTES })).data;
    expect(paragraphs(after).slice(0, 2)).toEqual(['Project kickoff\n', 'Decisions\n']);
    expect(after.body?.content?.[2]?.paragraph?.paragraphStyle?.namedStyleType).toBe('HEADING_2');
    expect(after.body?.content?.[2]?.paragraph?.paragraphStyle?.headingId).toBe(
      decisions.paragraph?.paragraphStyle?.headingId,
    );
    // Deleting the newline between two paragraphs joins the second onto the first, in the first's style.
    await api.documents.batchUpdate({
      documentId: ADA_NOTES,
      requestBody: { requests: [{ deleteContentRange: { range: { startIndex: 16, endIndex: 17 } } }] },
    });
    after = (await api.documents.get({ documentId: ADA_NOTES })).data;
    expect(paragraphs(after)[0]).toBe('Project kickoffDecisions\n');
    expect(after.body?.content?.[1]?.paragraph?.paragraphStyle?.namedStyleType).toBe('HEADING_1');
    expectContiguous(after);
  });

  it('gives inserted text the style of the character before it', async () => {
    const { api } = docsFor(ADA);
    const doc = (await api.documents.get({ documentId: ADA_NOTES })).data;
    const owner = (doc.body?.content ?? []).find((c) =>
      c.paragraph?.elements?.[0]?.textRun?.content?.startsWith('Owner'),
    ) as docs_v1.Schema$StructuralElement;
    const start = owner.startIndex as number;
    await api.documents.batchUpdate({
      documentId: ADA_NOTES,
      requestBody: {
        requests: [
          // After "Owne" (bold) and at the paragraph start (takes the bold of the first character).
          { insertText: { location: { index: start + 4 }, text: 'r-o' } },
          { insertText: { location: { index: start }, text: '>' } },
        ],
      },
    });
    const after = (await api.documents.get({ documentId: ADA_NOTES })).data;
    const para = (after.body?.content ?? []).find((c) => c.startIndex === start);
    expect(para?.paragraph?.elements?.map((e) => [e.textRun?.content, e.textRun?.textStyle])).toEqual([
      ['>Owner-or: ', { bold: true }],
      ['Ada drives the first milestone.\n', {}],
    ]);
  });

  it('replaces all occurrences, case-insensitively unless matchCase', async () => {
    const { api } = docsFor(ADA);
    const res = await api.documents.batchUpdate({
      documentId: ADA_NOTES,
      requestBody: {
        requests: [
          { replaceAllText: { containsText: { text: 'the', matchCase: false }, replaceText: 'THE' } },
          { replaceAllText: { containsText: { text: 'Ada', matchCase: true }, replaceText: 'Countess Ada' } },
          {
            replaceAllText: {
              containsText: { text: 'nowhere to be found', matchCase: true },
              replaceText: 'x',
            },
          },
        ],
      },
    });
    expect(res.data.replies).toEqual([
      { replaceAllText: { occurrencesChanged: 5 } },
      { replaceAllText: { occurrencesChanged: 2 } },
      { replaceAllText: {} },
    ]);
    const text = await textOf(api, ADA_NOTES);
    expect(text).toContain('Attendees: Countess Ada Lovelace, Grace Hopper');
    expect(text).toContain('Countess Ada drives THE first milestone.');
    expect(text).toContain('Ship THE sandbox before THE production connectors.');
    expect(text).toContain('Review THE budget in THE Quarterly budget');
  });

  it('replaces literal text (no pattern syntax) and may split paragraphs', async () => {
    const { api } = docsFor(ADA);
    const res = await api.documents.batchUpdate({
      documentId: ADA_NOTES,
      requestBody: {
        requests: [
          { replaceAllText: { containsText: { text: 'Turing.' }, replaceText: 'Turing (chair).' } },
          { replaceAllText: { containsText: { text: 'T.ring' }, replaceText: 'nope' } },
          { replaceAllText: { containsText: { text: 'Project kickoff' }, replaceText: 'Project\nkickoff' } },
        ],
      },
    });
    expect(res.data.replies).toEqual([
      { replaceAllText: { occurrencesChanged: 1 } },
      { replaceAllText: {} },
      { replaceAllText: { occurrencesChanged: 1 } },
    ]);
    const doc = (await api.documents.get({ documentId: ADA_NOTES })).data;
    expectContiguous(doc);
    expect(paragraphs(doc).slice(0, 3)).toEqual([
      'Project\n',
      'kickoff\n',
      'Attendees: Ada Lovelace, Grace Hopper, Alan Turing (chair).\n',
    ]);
    const [first, second] = (doc.body?.content ?? []).slice(1, 3).map((c) => c.paragraph?.paragraphStyle);
    expect(first?.namedStyleType).toBe('HEADING_1');
    expect(second?.namedStyleType).toBe('HEADING_1');
    expect(first?.headingId).not.toBe(second?.headingId);
  });

  it('styles text ranges through the fields mask, splitting and merging runs', async () => {
    const { api } = docsFor(ADA);
    const id = await blank(api);
    await api.documents.batchUpdate({
      documentId: id,
      requestBody: {
        requests: [
          { insertText: { location: { index: 1 }, text: 'make this bold' } },
          {
            updateTextStyle: {
              range: { startIndex: 6, endIndex: 10 },
              textStyle: { bold: true, italic: true },
              fields: 'bold',
            },
          },
        ],
      },
    });
    let doc = (await api.documents.get({ documentId: id })).data;
    expect(
      doc.body?.content?.[1]?.paragraph?.elements?.map((e) => [e.textRun?.content, e.textRun?.textStyle]),
    ).toEqual([
      ['make ', {}],
      ['this', { bold: true }],
      [' bold\n', {}],
    ]);
    expectContiguous(doc);
    // Listing a field without a value clears it, and equal neighbours merge again.
    await api.documents.batchUpdate({
      documentId: id,
      requestBody: {
        requests: [
          { updateTextStyle: { range: { startIndex: 1, endIndex: 15 }, textStyle: {}, fields: 'bold' } },
        ],
      },
    });
    doc = (await api.documents.get({ documentId: id })).data;
    expect(doc.body?.content?.[1]?.paragraph?.elements).toHaveLength(1);
  });

  it('sets paragraph styles and bullets', async () => {
    const { api } = docsFor(ADA);
    const id = await blank(api);
    await api.documents.batchUpdate({
      documentId: id,
      requestBody: {
        requests: [
          { insertText: { location: { index: 1 }, text: 'Title\nfirst\nsecond' } },
          {
            updateParagraphStyle: {
              range: { startIndex: 1, endIndex: 2 },
              paragraphStyle: { namedStyleType: 'HEADING_2' },
              fields: 'namedStyleType',
            },
          },
          {
            createParagraphBullets: {
              range: { startIndex: 7, endIndex: 19 },
              bulletPreset: 'BULLET_DISC_CIRCLE_SQUARE',
            },
          },
        ],
      },
    });
    const doc = (await api.documents.get({ documentId: id })).data;
    const [title, first, second] = (doc.body?.content ?? []).slice(1).map((c) => c.paragraph);
    expect(title?.paragraphStyle?.namedStyleType).toBe('HEADING_2');
    expect(title?.paragraphStyle?.headingId).toMatch(/^h\./);
    expect(title?.bullet).toBeUndefined();
    expect(first?.bullet?.listId).toEqual(expect.any(String));
    expect(second?.bullet?.listId).toBe(first?.bullet?.listId);
    expect(
      doc.lists?.[first?.bullet?.listId as string]?.listProperties?.nestingLevels?.[0]?.glyphSymbol,
    ).toBe('●');
  });

  it('issues a new revision per batch and enforces requiredRevisionId', async () => {
    const { api, token } = docsFor(ADA);
    const before = (await api.documents.get({ documentId: ADA_NOTES })).data.revisionId as string;
    const res = await api.documents.batchUpdate({
      documentId: ADA_NOTES,
      requestBody: {
        requests: [{ insertText: { location: { index: 1 }, text: 'Draft: ' } }],
        writeControl: { requiredRevisionId: before },
      },
    });
    const after = res.data.writeControl?.requiredRevisionId as string;
    expect(after).not.toBe(before);
    expect((await api.documents.get({ documentId: ADA_NOTES })).data.revisionId).toBe(after);

    const stale = await raw(`/v1/documents/${ADA_NOTES}:batchUpdate`, {
      token,
      method: 'POST',
      body: JSON.stringify({
        requests: [{ insertText: { location: { index: 1 }, text: 'x' } }],
        writeControl: { requiredRevisionId: before },
      }),
    });
    expect(stale.status).toBe(400);
    expect(stale.body.error).toEqual({
      code: 400,
      message: `The required revision ID ${before} does not match the latest revision of the document.`,
      status: 'FAILED_PRECONDITION',
    });
    // A recent revision is still a valid target: the write lands on the latest document.
    const targeted = await api.documents.batchUpdate({
      documentId: ADA_NOTES,
      requestBody: {
        requests: [{ insertText: { location: { index: 1 }, text: 'x' } }],
        writeControl: { targetRevisionId: before },
      },
    });
    expect(targeted.status).toBe(200);
    expect((await textOf(api, ADA_NOTES)).startsWith('xDraft: Project kickoff\n')).toBe(true);
  });
});

describe('errors', () => {
  it('answers 404 for an unknown document', async () => {
    const { token } = docsFor(ADA);
    const res = await raw('/v1/documents/nope', { token });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' },
    });
  });

  it('rejects indexes outside the body with Google messages, applying nothing', async () => {
    const { api, token } = docsFor(ADA);
    const before = await api.documents.get({ documentId: ADA_BRIEF });
    const end = expectContiguous(before.data);
    const post = (requests: unknown[]) =>
      raw(`/v1/documents/${ADA_BRIEF}:batchUpdate`, {
        token,
        method: 'POST',
        body: JSON.stringify({ requests }),
      });

    const beyond = await post([
      { insertText: { location: { index: 1 }, text: 'never applied' } },
      { insertText: { location: { index: end + 50 }, text: 'x' } },
    ]);
    expect(beyond.status).toBe(400);
    expect(beyond.body.error).toEqual({
      code: 400,
      message: `Invalid requests[1].insertText: Index ${end + 50} must be less than the end index of the referenced segment, ${end + 'never applied'.length}.`,
      status: 'INVALID_ARGUMENT',
    });
    const atEnd = await post([{ insertText: { location: { index: end }, text: 'x' } }]);
    expect(atEnd.body.error.message).toBe(
      `Invalid requests[0].insertText: Index ${end} must be less than the end index of the referenced segment, ${end}.`,
    );
    const sectionBreak = await post([{ insertText: { location: { index: 0 }, text: 'x' } }]);
    expect(sectionBreak.body.error.message).toBe(
      'Invalid requests[0].insertText: The insertion index must be inside the bounds of an existing paragraph. You can still create new paragraphs by inserting newlines.',
    );
    const finalNewline = await post([{ deleteContentRange: { range: { startIndex: 1, endIndex: end } } }]);
    expect(finalNewline.body.error.message).toBe(
      'Invalid requests[0].deleteContentRange: The range cannot include the newline character at the end of the segment.',
    );
    const none = await post([]);
    expect(none.body.error.message).toBe('Must specify at least one request.');
    const empty = await post([{ deleteContentRange: { range: { startIndex: 3, endIndex: 3 } } }]);
    expect(empty.body.error.message).toBe(
      'Invalid requests[0].deleteContentRange: The range should not be empty.',
    );

    const after = await api.documents.get({ documentId: ADA_BRIEF });
    expect(after.data.body).toEqual(before.data.body);
    expect(after.data.revisionId).toBe(before.data.revisionId);
  });

  it('deletes everything but the final newline', async () => {
    const { api } = docsFor(ADA);
    const end = expectContiguous((await api.documents.get({ documentId: ADA_BRIEF })).data);
    await api.documents.batchUpdate({
      documentId: ADA_BRIEF,
      requestBody: { requests: [{ deleteContentRange: { range: { startIndex: 1, endIndex: end - 1 } } }] },
    });
    expect(await textOf(api, ADA_BRIEF)).toBe('\n');
  });

  it('refuses missing tokens, foreign scopes and read-only writes', async () => {
    expect((await raw(`/v1/documents/${ADA_NOTES}`)).status).toBe(401);
    const { token: calendarOnly } = docsFor(ADA, ['https://www.googleapis.com/auth/calendar']);
    const wrong = await raw(`/v1/documents/${ADA_NOTES}`, { token: calendarOnly });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error.status).toBe('PERMISSION_DENIED');
    const { token: readonly } = docsFor(ADA, ['https://www.googleapis.com/auth/documents.readonly']);
    expect((await raw(`/v1/documents/${ADA_NOTES}`, { token: readonly })).status).toBe(200);
    const write = await raw(`/v1/documents/${ADA_NOTES}:batchUpdate`, {
      token: readonly,
      method: 'POST',
      body: JSON.stringify({ requests: [] }),
    });
    expect(write.status).toBe(403);
    const { token: drive } = docsFor(ADA, ['https://www.googleapis.com/auth/drive']);
    expect((await raw(`/v1/documents/${ADA_NOTES}`, { token: drive })).status).toBe(200);
  });
});
