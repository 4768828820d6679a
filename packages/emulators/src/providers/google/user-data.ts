import type { EmulatedUser } from '../../core/types.js';
import type { CalendarData } from './calendar/seed.js';
import type { DocumentModel } from './docs/model.js';
import type { DriveFile } from './shared.js';
import type { SpreadsheetModel } from './sheets/model.js';

/** One emulated user's documents, by id. Each is also a file in the user's Drive. */
export interface DocsData {
  documents: Map<string, DocumentModel>;
}

/** One emulated user's spreadsheets, by id. Each is also a file in the user's Drive. */
export interface SheetsData {
  spreadsheets: Map<string, SpreadsheetModel>;
}

/** Everything one emulated Google user owns. Sheets and Docs also file their documents in `drive`. */
export interface GoogleUserData {
  user: EmulatedUser;
  drive: Map<string, DriveFile>;
  /** Drive's change log (changes.list), kept up to date whenever it is read. */
  driveChanges: DriveChangeLog;
  calendar: CalendarData;
  sheets: SheetsData;
  docs: DocsData;
}

export interface GoogleState {
  byUser: Map<string, GoogleUserData>;
  /** Watch channels (watch.ts), by channel id. */
  channels: Map<string, import('./watch.js').WatchChannel>;
}

/** Resolves the data of the user behind the request's token (routes authenticate first). */
export type GoogleDataOf = (userId: string) => GoogleUserData;

/** Drive's change log of one user (see drive/changes.ts). */
export interface DriveChangeLog {
  /** Number of the latest change. */
  seq: number;
  /** What each file looked like when it was last logged. */
  seen: Map<string, string>;
  /** The latest change of each file, by file id. */
  latest: Map<string, { seq: number; removed: boolean; time: string }>;
}
