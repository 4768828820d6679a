import { existsSync, readFileSync } from 'node:fs';
import type { TSchema } from '@sinclair/typebox';
import { COMPILED_PRECEDENCE, type ToolSource } from '../registry.js';
import type { AnyTool } from '../types.js';
import { PACKAGE_ROOT } from './build.js';
import { COMPILED_PROVIDERS } from './descriptions.js';
import type { CompiledCatalog, CompiledOperation } from './operation.js';
import { buildRequest, shapeAnswer } from './request.js';

/** Where the build writes the compiled catalogs (scripts/compile-tools.js). */
export const COMPILED_DIR = `${PACKAGE_ROOT}dist/compiled-tools`;

/** A compiled operation as a tool: validated like any other, run through the provider client. */
export function compiledTool(op: CompiledOperation): AnyTool {
  return {
    name: op.name,
    description: op.description,
    provider: op.provider,
    input: op.input as unknown as TSchema,
    annotations: op.annotations,
    async run(input, { client }) {
      const answer = await client.request(buildRequest(op, input as Record<string, unknown>));
      return shapeAnswer(answer.data);
    },
  };
}

export function readCatalog(provider: string, dir = COMPILED_DIR): CompiledCatalog {
  return JSON.parse(readFileSync(`${dir}/${provider}.json`, 'utf8')) as CompiledCatalog;
}

/**
 * One registry source per provider: its catalog file is read at the first question that needs
 * that provider's tools (a listing, or a call to one of its names), never at start.
 */
export function compiledSources(dir = COMPILED_DIR): ToolSource[] {
  // A build that skipped scripts/compile-tools.js has no catalogs: those providers have no compiled tools.
  return COMPILED_PROVIDERS.filter((provider) => existsSync(`${dir}/${provider}.json`)).map((provider) => ({
    id: `compiled:${provider}`,
    precedence: COMPILED_PRECEDENCE,
    providers: [provider],
    mayServe: (name: string) => name.startsWith(`${provider}_`),
    tools: () => readCatalog(provider, dir).operations.map(compiledTool),
  }));
}
