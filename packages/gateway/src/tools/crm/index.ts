import type { AnyTool } from '../types.js';

/** The `crm_` tools. */
export const crmTools: AnyTool[] = [];
