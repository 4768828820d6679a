import type { AnyTool } from '../types.js';
import { notesBlockDelete, notesBlockUpdate, notesPageContentAppend, notesPageContentGet } from './blocks.js';
import { notesCommentCreate, notesCommentRetrieve, notesCommentsFetch } from './comments.js';
import {
  notesDatabaseCreate,
  notesDatabaseFetch,
  notesDatabaseInsertRow,
  notesDatabasePropertyRetrieve,
  notesDatabaseQuery,
  notesDatabaseUpdate,
} from './databases.js';
import { notesPageCreate, notesPageGet, notesPageUpdate } from './pages.js';
import { notesDataFetch, notesUserList } from './search.js';

/** The `notes_` tools (Notion, API version 2022-06-28). */
export const notesTools: AnyTool[] = [
  notesBlockDelete,
  notesBlockUpdate,
  notesCommentCreate,
  notesCommentRetrieve,
  notesCommentsFetch,
  notesDataFetch,
  notesDatabaseCreate,
  notesDatabaseFetch,
  notesDatabaseInsertRow,
  notesDatabasePropertyRetrieve,
  notesDatabaseQuery,
  notesDatabaseUpdate,
  notesPageContentAppend,
  notesPageContentGet,
  notesPageCreate,
  notesPageGet,
  notesPageUpdate,
  notesUserList,
] as AnyTool[];
