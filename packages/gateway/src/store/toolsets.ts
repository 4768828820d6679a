import { type NamedDefinitionRow, namedDefinitions } from './named-definitions.js';

/** A toolset as the API took it (toolsets/definition.ts). */
export type ToolsetRow = NamedDefinitionRow;

const toolsets = namedDefinitions('toolsets');
export const insertToolset = toolsets.insert;
export const findToolset = toolsets.find;
export const updateToolset = toolsets.replace;
export const deleteToolset = toolsets.delete;
export const listToolsets = toolsets.list;
export const toolsetNames = toolsets.names;
