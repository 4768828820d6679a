import type { AnyTool } from '../types.js';

/** The `notes_` tools. */
export const notesTools: AnyTool[] = [];
