import type { ValidateFunction } from 'ajv';
import { bodyAjv } from '../validation/validator.js';
import type { AnyTool } from './types.js';

/**
 * Where the listing is asked from. Tools of a source that serves one environment only (a remote
 * MCP server behind one environment's connection) are seen only there; every other tool is seen
 * everywhere.
 */
export interface ToolScope {
  environmentId?: string | undefined;
  provider?: string | undefined;
}

/**
 * One source of tools: the specification's hand-written tools, the tools compiled from a provider's
 * API description, a remote MCP server's tools. Everything that reads tools (the engine, validation,
 * policies, approvals, audit, formats, docs, the dashboard, REST, MCP and gRPC) reads them through
 * the {@link ToolRegistry}, never from a source, so all sources are treated alike.
 *
 * Implementing one:
 * - `tools()` returns the source's tools as they are now. The registry calls it at the first
 *   question that needs this source (a listing, or a lookup `mayServe` lets through), and again
 *   only after the source said it changed. Keep it cheap
 *   by making each tool's `input` a lazy getter when schemas are costly to build (compiled tools
 *   do): nothing per tool should be computed before a caller asks for that tool.
 * - A name is unique within a source. When two sources offer one name, the lower `precedence`
 *   wins and the other tool is hidden (the specification's tools are 0, compiled tools 100; a
 *   remote MCP server's tools should be above both). Use names of 1-64 characters [a-zA-Z0-9_-]:
 *   the LLM APIs refuse others.
 * - A tool with `environmentId` set is seen only in that environment (per-connection tools);
 *   two environments may each have a tool of the same name.
 * - When the tools change (a remote server's list_changed, a connection added or removed), call
 *   the `changed` callback given to `watch`: the registry drops its index and bumps its `version`,
 *   and every registry listener (a search index, MCP list_changed) is told.
 */
export interface ToolSource {
  /** Stable and unique, e.g. `specification`, `compiled`, `mcp:<connection id>`. */
  readonly id: string;
  /** Lower wins when two sources offer the same name. */
  readonly precedence: number;
  tools(): readonly AnyTool[];
  /**
   * The providers the source's tools are for, when known without reading them: a listing for
   * one provider then skips the other sources.
   */
  readonly providers?: readonly string[];
  /** A cheap test (a name prefix) that lets a lookup skip the source without reading its tools. */
  mayServe?(name: string): boolean;
  /** Called once at registration with the callback the source calls after its tools changed. */
  watch?(changed: () => void): void;
}

/** The precedence of the specification's tools: they always win. */
export const SPECIFICATION_PRECEDENCE = 0;
/** The precedence of tools compiled from API descriptions. */
export const COMPILED_PRECEDENCE = 100;

interface Built {
  byName: Map<string, AnyTool>;
  list: AnyTool[];
}

/**
 * The one catalog of tools: every source registers here, and every reader asks here. A source's
 * tools are read at the first question that needs them and again only after it changed, so
 * registering a source costs nothing at start, a call to a specification tool never builds a
 * compiled source, and validators are compiled at a tool's first call.
 */
export class ToolRegistry {
  private readonly sources: ToolSource[] = [];
  private readonly built = new Map<ToolSource, Built>();
  private readonly listeners = new Set<(version: number) => void>();
  private readonly validators = new WeakMap<AnyTool, ValidateFunction>();
  private currentVersion = 0;

  constructor(sources: ToolSource[] = []) {
    for (const source of sources) this.register(source);
  }

  /** Adds a source; returns a function that removes it again. */
  register(source: ToolSource): () => void {
    if (this.sources.some((s) => s.id === source.id)) {
      throw new Error(`tool source ${source.id} is registered twice`);
    }
    this.sources.push(source);
    // Stable: sources of one precedence keep their registration order.
    this.sources.sort((a, b) => a.precedence - b.precedence);
    source.watch?.(() => {
      if (this.sources.includes(source)) this.changed(source);
    });
    this.changed(source);
    return () => {
      const at = this.sources.indexOf(source);
      if (at < 0) return;
      this.sources.splice(at, 1);
      this.changed(source);
    };
  }

  /** Grows by one at every change of any source: a reader's cache is fresh while it is unchanged. */
  get version(): number {
    return this.currentVersion;
  }

  /** Calls `listener` after every change; returns a function that stops it. */
  onChange(listener: (version: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The tool of that name as seen from `environmentId`, from the source of lowest precedence. */
  get(name: string, environmentId?: string): AnyTool | undefined {
    return this.entry(name, environmentId)?.tool;
  }

  /** The id of the source that serves a tool (audit and docs say where a tool came from). */
  sourceOf(name: string, environmentId?: string): string | undefined {
    return this.entry(name, environmentId)?.source.id;
  }

  /** The tools seen from the scope, sources by precedence, each in its own order. */
  list(scope: ToolScope = {}): AnyTool[] {
    const out: AnyTool[] = [];
    const seen = new Set<string>();
    for (const source of this.sources) {
      if (scope.provider && source.providers && !source.providers.includes(scope.provider)) continue;
      for (const tool of this.of(source).list) {
        if (scope.provider && tool.provider !== scope.provider) continue;
        if (!visibleFrom(tool, scope.environmentId) || seen.has(tool.name)) continue;
        seen.add(tool.name);
        out.push(tool);
      }
    }
    return out;
  }

  /**
   * Every tool of every environment with the id of its source, sources by precedence: what an
   * index over the whole catalog (tool search) is built from. A name offered by two sources is
   * there once, from the winning source; `get` still decides what one environment sees.
   */
  entries(): Array<{ tool: AnyTool; source: string }> {
    const out: Array<{ tool: AnyTool; source: string }> = [];
    const seen = new Set<string>();
    for (const source of this.sources) {
      for (const tool of this.of(source).list) {
        const key = keyOf(tool.name, tool.environmentId);
        if (seen.has(key)) continue;
        seen.add(key);
        out.push({ tool, source: source.id });
      }
    }
    return out;
  }

  /** Every name seen from `environmentId` (for suggestions and allow-lists). */
  names(environmentId?: string): string[] {
    return this.list({ environmentId }).map((t) => t.name);
  }

  /** The tool's input validator, compiled at its first use and kept while the tool lives. */
  validator(tool: AnyTool): ValidateFunction {
    let validate = this.validators.get(tool);
    if (!validate) {
      validate = bodyAjv.compile(tool.input);
      this.validators.set(tool, validate);
    }
    return validate;
  }

  private entry(name: string, environmentId?: string): { tool: AnyTool; source: ToolSource } | undefined {
    for (const source of this.sources) {
      if (source.mayServe && !source.mayServe(name)) continue;
      const { byName } = this.of(source);
      const tool =
        (environmentId !== undefined ? byName.get(keyOf(name, environmentId)) : undefined) ??
        byName.get(name);
      if (tool) return { tool, source };
    }
    return undefined;
  }

  private of(source: ToolSource): Built {
    let built = this.built.get(source);
    if (!built) {
      const list = [...source.tools()];
      const byName = new Map<string, AnyTool>();
      for (const tool of list) {
        const key = keyOf(tool.name, tool.environmentId);
        if (byName.has(key)) throw new Error(`tool ${tool.name} is defined twice in ${source.id}`);
        byName.set(key, tool);
      }
      built = { byName, list };
      this.built.set(source, built);
    }
    return built;
  }

  private changed(source: ToolSource): void {
    this.built.delete(source);
    this.currentVersion += 1;
    for (const listener of this.listeners) listener(this.currentVersion);
  }
}

function visibleFrom(tool: AnyTool, environmentId: string | undefined): boolean {
  return tool.environmentId === undefined || tool.environmentId === environmentId;
}

/** Environment-bound tools of one name may exist once per environment. */
function keyOf(name: string, environmentId: string | undefined): string {
  return environmentId === undefined ? name : `${name}\u0000${environmentId}`;
}

/** A source of a fixed list (the specification's tools). */
export function staticSource(id: string, precedence: number, tools: readonly AnyTool[]): ToolSource {
  return { id, precedence, tools: () => tools };
}
