import { googleCalendar } from './google-calendar.js';
import { googleDocs } from './google-docs.js';
import { googleDrive } from './google-drive.js';
import { googleSheets } from './google-sheets.js';
import { hubspot } from './hubspot.js';
import { notion } from './notion.js';
import { sharepoint } from './sharepoint.js';
import type { ProviderDefinition, ProviderKey } from './types.js';

export type { ProviderDefinition, ProviderKey } from './types.js';
export { PROVIDER_KEYS } from './types.js';

/** The provider catalog: the one place every other module reads provider facts from. */
export const PROVIDERS: Readonly<Record<ProviderKey, ProviderDefinition>> = {
  notion,
  google_calendar: googleCalendar,
  google_drive: googleDrive,
  google_sheets: googleSheets,
  google_docs: googleDocs,
  hubspot,
  sharepoint,
};

export function getProvider(key: ProviderKey): ProviderDefinition {
  return PROVIDERS[key];
}
