import { calendarTools } from './calendar/index.js';
import { crmTools } from './crm/index.js';
import { docsTools } from './docs/index.js';
import { driveTools } from './drive/index.js';
import { notesTools } from './notes/index.js';
import { SPECIFICATION_PRECEDENCE, staticSource } from './registry.js';
import { sheetsTools } from './sheets/index.js';
import type { AnyTool } from './types.js';

/**
 * The specification's tools, from their families' definitions. Readers never take them from here:
 * they ask the tool registry (registry.ts), where this list is one source among others.
 */
export const TOOLS: AnyTool[] = [
  ...notesTools,
  ...calendarTools,
  ...crmTools,
  ...driveTools,
  ...sheetsTools,
  ...docsTools,
];

/** The specification's tools as a registry source: they take precedence over every other source. */
export const specificationTools = staticSource('specification', SPECIFICATION_PRECEDENCE, TOOLS);
