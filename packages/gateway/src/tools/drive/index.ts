import type { AnyTool } from '../types.js';
import { driveGetFileMetadata } from './get-file-metadata.js';
import { driveSearchContent } from './search-content.js';
import { driveSearchFiles } from './search-files.js';

/** The `drive_` tools. */
export const driveTools: AnyTool[] = [driveGetFileMetadata, driveSearchContent, driveSearchFiles];
