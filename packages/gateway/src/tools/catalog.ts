import { calendarTools } from './calendar/index.js';
import { crmTools } from './crm/index.js';
import { docsTools } from './docs/index.js';
import { driveTools } from './drive/index.js';
import { notesTools } from './notes/index.js';
import { sheetsTools } from './sheets/index.js';
import type { AnyTool } from './types.js';

/**
 * Every tool, from its family's definitions. The tool catalog served by the API is generated from
 * this list and nothing else.
 */
export const TOOLS: AnyTool[] = [
  ...notesTools,
  ...calendarTools,
  ...crmTools,
  ...driveTools,
  ...sheetsTools,
  ...docsTools,
];
