import type { AnyTool } from '../types.js';
import { docsCreateDocument } from './create-document.js';
import { docsReadDocument } from './read-document.js';
import { docsUpdateDocument } from './update-document.js';

/** The `docs_` tools. */
export const docsTools: AnyTool[] = [docsCreateDocument, docsReadDocument, docsUpdateDocument] as AnyTool[];
