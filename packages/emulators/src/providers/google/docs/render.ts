import type { DocBody, DocumentModel, ParagraphProps, TextStyle } from './model.js';

/** The Document resource as `documents.get` returns it. */

const pt = (magnitude: number) => ({ magnitude, unit: 'PT' });

function documentStyle(): Record<string, unknown> {
  return {
    background: { color: {} },
    pageNumberStart: 1,
    marginTop: pt(72),
    marginBottom: pt(72),
    marginRight: pt(72),
    marginLeft: pt(72),
    pageSize: { height: pt(792), width: pt(612) },
    marginHeader: pt(36),
    marginFooter: pt(36),
    useCustomHeaderFooterMargins: true,
    documentFormat: { documentMode: 'PAGES' },
  };
}

const NAMED: Array<[string, number, Record<string, unknown>?]> = [
  ['NORMAL_TEXT', 11],
  ['HEADING_1', 20, { spaceAbove: pt(20), spaceBelow: pt(6) }],
  ['HEADING_2', 16, { spaceAbove: pt(18), spaceBelow: pt(6) }],
  ['HEADING_3', 14, { spaceAbove: pt(16), spaceBelow: pt(4) }],
  ['HEADING_4', 12, { spaceAbove: pt(14), spaceBelow: pt(4) }],
  ['HEADING_5', 11, { spaceAbove: pt(12), spaceBelow: pt(4) }],
  ['HEADING_6', 11, { spaceAbove: pt(12), spaceBelow: pt(4) }],
  ['TITLE', 26, { spaceBelow: pt(3) }],
  ['SUBTITLE', 15, { spaceBelow: pt(16) }],
];

function namedStyles(): Record<string, unknown> {
  return {
    styles: NAMED.map(([type, size, spacing]) => ({
      namedStyleType: type,
      textStyle:
        type === 'NORMAL_TEXT'
          ? {
              bold: false,
              italic: false,
              underline: false,
              strikethrough: false,
              smallCaps: false,
              backgroundColor: {},
              foregroundColor: { color: { rgbColor: {} } },
              fontSize: pt(size),
              weightedFontFamily: { fontFamily: 'Arial', weight: 400 },
              baselineOffset: 'NONE',
            }
          : { fontSize: pt(size) },
      paragraphStyle: {
        namedStyleType: type,
        alignment: 'START',
        lineSpacing: 115,
        direction: 'LEFT_TO_RIGHT',
        ...(type === 'NORMAL_TEXT'
          ? { spaceAbove: pt(0), spaceBelow: pt(0) }
          : { keepLinesTogether: true, keepWithNext: true }),
        ...(spacing ?? {}),
      },
    })),
  };
}

const SECTION_BREAK = {
  endIndex: 1,
  sectionBreak: {
    sectionStyle: {
      columnSeparatorStyle: 'NONE',
      contentDirection: 'LEFT_TO_RIGHT',
      sectionType: 'CONTINUOUS',
    },
  },
};

function paragraphStyle(p: ParagraphProps): Record<string, unknown> {
  const { headingId, namedStyleType, ...rest } = p.style;
  return {
    ...(headingId !== undefined ? { headingId } : {}),
    namedStyleType: namedStyleType ?? 'NORMAL_TEXT',
    direction: 'LEFT_TO_RIGHT',
    ...rest,
  };
}

export function bodyContent(body: DocBody): Array<Record<string, unknown>> {
  const content: Array<Record<string, unknown>> = [structuredClone(SECTION_BREAK)];
  let index = 1;
  let paraStart = 1;
  let paraIndex = 0;
  let elements: Array<Record<string, unknown>> = [];
  for (const run of body.runs) {
    const style = JSON.parse(run.style) as TextStyle;
    let rest = run.text;
    while (rest.length > 0) {
      const nl = rest.indexOf('\n');
      const piece = nl >= 0 ? rest.slice(0, nl + 1) : rest;
      elements.push({
        startIndex: index,
        endIndex: index + piece.length,
        textRun: { content: piece, textStyle: structuredClone(style) },
      });
      index += piece.length;
      rest = rest.slice(piece.length);
      if (nl >= 0) {
        const props = body.paragraphs[paraIndex] as ParagraphProps;
        const paragraph: Record<string, unknown> = { elements, paragraphStyle: paragraphStyle(props) };
        if (props.bullet) {
          paragraph.bullet = {
            listId: props.bullet.listId,
            ...(props.bullet.nestingLevel ? { nestingLevel: props.bullet.nestingLevel } : {}),
            textStyle: {},
          };
        }
        content.push({ startIndex: paraStart, endIndex: index, paragraph });
        paraIndex++;
        paraStart = index;
        elements = [];
      }
    }
  }
  return content;
}

function listsJson(doc: DocumentModel): Record<string, unknown> | undefined {
  const ids = Object.keys(doc.lists);
  if (ids.length === 0) return undefined;
  return Object.fromEntries(
    ids.map((id) => [
      id,
      {
        listProperties: {
          nestingLevels: (doc.lists[id]?.glyphs ?? []).map((glyph, level) => ({
            bulletAlignment: 'START',
            ...(glyph.startsWith('%')
              ? { glyphFormat: glyph, glyphType: 'DECIMAL' }
              : { glyphSymbol: glyph, glyphFormat: `%${level}` }),
            indentFirstLine: pt(18 + 36 * level),
            indentStart: pt(36 + 36 * level),
            textStyle: { underline: false },
            startNumber: 1,
          })),
        },
      },
    ]),
  );
}

export function documentJson(
  doc: DocumentModel,
  opts: { includeTabsContent?: boolean; suggestionsViewMode?: string } = {},
): Record<string, unknown> {
  const lists = listsJson(doc);
  const tabBody = {
    body: { content: bodyContent(doc.body) },
    documentStyle: documentStyle(),
    namedStyles: namedStyles(),
    ...(lists ? { lists } : {}),
  };
  const mode = opts.suggestionsViewMode ?? 'SUGGESTIONS_INLINE';
  if (opts.includeTabsContent) {
    return {
      title: doc.title,
      tabs: [{ tabProperties: { tabId: 't.0', title: 'Tab 1', index: 0 }, documentTab: tabBody }],
      revisionId: doc.revisionId,
      suggestionsViewMode: mode,
      documentId: doc.documentId,
    };
  }
  return {
    title: doc.title,
    ...tabBody,
    revisionId: doc.revisionId,
    suggestionsViewMode: mode,
    documentId: doc.documentId,
  };
}
