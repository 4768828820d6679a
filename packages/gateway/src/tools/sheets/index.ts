import type { AnyTool } from '../types.js';
import { sheetsCreateSpreadsheet } from './create-spreadsheet.js';
import { sheetsGetValues } from './get-values.js';
import { sheetsReadSpreadsheet } from './read-spreadsheet.js';
import { sheetsUpdateValues } from './update-values.js';

/** The `sheets_` tools. */
export const sheetsTools: AnyTool[] = [
  sheetsCreateSpreadsheet,
  sheetsGetValues,
  sheetsReadSpreadsheet,
  sheetsUpdateValues,
] as AnyTool[];
