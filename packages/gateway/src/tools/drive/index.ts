import type { AnyTool } from '../types.js';

/** The `drive_` tools. */
export const driveTools: AnyTool[] = [];
