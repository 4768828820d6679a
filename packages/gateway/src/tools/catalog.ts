import type { AnyTool } from './types.js';

/**
 * Every tool, from its family's definitions. The tool catalog served by the API is generated from
 * this list and nothing else.
 */
export const TOOLS: AnyTool[] = [];
