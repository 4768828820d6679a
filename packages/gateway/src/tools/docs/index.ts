import type { AnyTool } from '../types.js';

/** The `docs_` tools. */
export const docsTools: AnyTool[] = [];
