import type { AnyTool } from '../types.js';

/** The `sheets_` tools. */
export const sheetsTools: AnyTool[] = [];
