import type { ConnectionService } from '../connections/service.js';
import { type FieldError, Problem } from '../errors/problem.js';
import { isBuiltInProvider } from '../providers/catalog.js';
import type { Database } from '../store/db.js';
import { newId } from '../store/ids.js';
import {
  deleteToolset,
  findToolset,
  insertToolset,
  listToolsets,
  type ToolsetRow,
  toolsetNames,
  updateToolset,
} from '../store/toolsets.js';
import type { ToolEngine } from '../tools/engine.js';
import type { AnyTool } from '../tools/types.js';
import { closestName } from '../validation/closest-name.js';
import { CHOOSING, memberOf, type ToolsetChange, type ToolsetDefinition } from './definition.js';

export interface ToolsetView extends ToolsetDefinition {
  mcp_mode: 'full' | 'search';
  /** The toolset's own MCP server: its URL, for the same per-user tokens as /mcp. */
  mcp_url: string;
  created_at: string;
  updated_at: string;
}

/** What a listing or an MCP session of the toolset needs: the rule, and what page tokens bind to. */
export interface ToolsetSelection {
  toolset: ToolsetView;
  accept: (tool: AnyTool) => boolean;
  /** Changes when the toolset does, so a page token of its earlier definition is refused. */
  acceptKey: string;
}

export interface ToolsetServiceDeps {
  db: Database;
  engine: ToolEngine;
  connections: ConnectionService;
  publicUrl: string;
}

/**
 * Toolsets: named sets of tools per environment (by names, patterns, providers, connections and
 * tags; toolsets/definition.ts), which every listing, adapter and LLM format takes, and which each
 * have an MCP URL of their own. A definition is checked against the catalog when it is written (a
 * misspelt tool or tag is refused with the closest one), and read from the store at each use, so
 * every replica sees a change at once.
 */
export class ToolsetService {
  constructor(private readonly deps: ToolsetServiceDeps) {}

  async create(environmentId: string, definition: ToolsetDefinition): Promise<ToolsetView> {
    await this.check(environmentId, definition);
    const row = await insertToolset(this.deps.db, {
      id: newId('tls'),
      environment_id: environmentId,
      name: definition.name,
      definition: stored(definition),
    });
    if (!row) {
      throw new Problem(
        'toolset_exists',
        `A toolset named "${definition.name}" exists; change it with PATCH /api/v1/toolsets/${definition.name}.`,
      );
    }
    return this.view(row);
  }

  async update(environmentId: string, name: string, change: ToolsetChange): Promise<ToolsetView> {
    const current = (await this.row(environmentId, name)).definition as ToolsetDefinition;
    const next: Record<string, unknown> = { ...current };
    for (const [key, value] of Object.entries(change)) {
      if (value === null) delete next[key];
      else next[key] = value;
    }
    const definition = next as ToolsetDefinition;
    await this.check(environmentId, definition);
    const row = await updateToolset(this.deps.db, environmentId, name, stored(definition));
    if (!row) throw await this.notFound(environmentId, name);
    return this.view(row);
  }

  async delete(environmentId: string, name: string): Promise<void> {
    if (!(await deleteToolset(this.deps.db, environmentId, name)))
      throw await this.notFound(environmentId, name);
  }

  async get(environmentId: string, name: string): Promise<ToolsetView> {
    return this.view(await this.row(environmentId, name));
  }

  async list(
    environmentId: string,
    query: { page_size?: number; page_token?: string },
  ): Promise<{ data: ToolsetView[]; next_page_token: string | null }> {
    const limit = query.page_size ?? 50;
    const after = query.page_token ? decodePageToken(query.page_token) : undefined;
    const rows = await listToolsets(this.deps.db, environmentId, { after, limit: limit + 1 });
    const page = rows.slice(0, limit);
    return {
      data: page.map((r) => this.view(r)),
      next_page_token: rows.length > limit ? Buffer.from(page.at(-1)!.name).toString('base64url') : null,
    };
  }

  /** The toolset as a rule on tools, its connections looked up now (one that is gone chooses nothing). */
  async selection(environmentId: string, name: string): Promise<ToolsetSelection> {
    const row = await this.row(environmentId, name);
    const toolset = this.view(row);
    const connections = new Map<string, string>();
    for (const connection of toolset.connections ?? []) {
      const found = await this.deps.connections.get(environmentId, connection).catch(() => undefined);
      if (found) connections.set(found.name, found.provider);
    }
    const search = this.deps.engine.search;
    return {
      toolset,
      accept: memberOf(toolset, connections, (tool) => search.tagsOf(tool)),
      acceptKey: `toolset:${row.id}:${row.updated_at.getTime()}`,
    };
  }

  private async row(environmentId: string, name: string): Promise<ToolsetRow> {
    const row = await findToolset(this.deps.db, environmentId, name);
    if (!row) throw await this.notFound(environmentId, name);
    return row;
  }

  private view(row: ToolsetRow): ToolsetView {
    const definition = row.definition as ToolsetDefinition;
    return {
      ...definition,
      name: row.name,
      mcp_mode: definition.mcp_mode ?? 'full',
      mcp_url: `${this.deps.publicUrl}/mcp/t/${row.name}`,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    };
  }

  /** A definition that chooses something, with names of tools, tags, providers and connections that exist. */
  private async check(environmentId: string, definition: ToolsetDefinition): Promise<void> {
    if (!CHOOSING.some((key) => definition[key]?.length) && !definition.tags?.length) {
      throw new Problem(
        'invalid_input',
        'A toolset chooses its tools: give at least one of tools, patterns, providers, connections or tags.',
        {
          errors: [
            { path: '/tools', message: 'one of tools, patterns, providers, connections or tags is required' },
          ],
        },
      );
    }
    const { engine } = this.deps;
    await engine.prepare(environmentId);
    const catalog = engine.list({ environmentId });
    const names = catalog.map((t) => t.name);
    const errors: FieldError[] = [];
    definition.tools?.forEach((name, i) => {
      if (engine.registry.get(name, environmentId)) return;
      const closest = closestName(name, names);
      errors.push({
        path: `/tools/${i}`,
        message: `is no tool's name${closest ? ` (did you mean "${closest}"?)` : ''}`,
      });
    });
    const known = engine.search.knownTags();
    definition.tags?.forEach((tag, i) => {
      if (!known.has(tag))
        errors.push({
          path: `/tags/${i}`,
          message: `is no tool's tag; tags are: ${[...known].sort().join(', ')}`,
        });
    });
    const providers = new Set(catalog.map((t) => t.provider));
    definition.providers?.forEach((provider, i) => {
      if (!providers.has(provider) && !isBuiltInProvider(provider)) {
        errors.push({ path: `/providers/${i}`, message: 'is no provider of the catalog' });
      }
    });
    if (errors.length) {
      throw new Problem(
        'invalid_input',
        `The toolset names what the catalog lacks: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}.`,
        { errors },
      );
    }
    // A connection that does not exist answers connection_not_found, naming it.
    for (const connection of definition.connections ?? [])
      await this.deps.connections.get(environmentId, connection);
  }

  private async notFound(environmentId: string, name: string): Promise<Problem> {
    const closest = closestName(name, await toolsetNames(this.deps.db, environmentId));
    return new Problem(
      'toolset_not_found',
      `No toolset is named "${name}"${closest ? ` (did you mean "${closest}"?)` : ''}; list them with GET /api/v1/toolsets.`,
    );
  }
}

/** The definition as stored: its selectors, without the name (the row's own column). */
function stored(definition: ToolsetDefinition): Record<string, unknown> {
  const { name: _name, ...rest } = definition;
  return rest;
}

function decodePageToken(token: string): string {
  const value = Buffer.from(token, 'base64url').toString('utf8');
  if (!value) {
    throw new Problem(
      'invalid_input',
      'page_token is not a token this API returned; omit it to start from the first page.',
    );
  }
  return value;
}
