import type { AnyTool } from '../types.js';

/** The `calendar_` tools. */
export const calendarTools: AnyTool[] = [];
