import { findBuiltInProvider } from '../../providers/catalog.js';
import type { ToolRegistry } from '../registry.js';
import { toolTags } from '../tags.js';
import type { AnyTool } from '../types.js';
import { intent, plural, terms } from './analyze.js';
import { Bm25Index, type FieldTerms } from './bm25.js';
import { expand } from './synonyms.js';

/** Which tools a search (or a filtered listing) may answer with. */
export interface ToolFilter {
  /** Seen from this environment (its own remote MCP tools besides everyone's). */
  environmentId?: string | undefined;
  provider?: string | undefined;
  /** A connection's tools: its own (a remote MCP server's) or its provider's. */
  connection?: { name: string; provider: string } | undefined;
  readOnly?: boolean | undefined;
  /** Every one of these tags (see tags.ts). */
  tags?: readonly string[] | undefined;
  /** Any further rule (a toolset, an MCP token's tools). */
  accept?: ((tool: AnyTool) => boolean) | undefined;
}

export interface SearchHit {
  tool: AnyTool;
  /** How well the tool fits the words, BM25F; only comparable within one search. */
  score: number;
  tags: string[];
}

export interface SearchPage {
  hits: SearchHit[];
  /** How many tools matched in all. */
  total: number;
}

interface Entry {
  tool: AnyTool;
  tags: string[];
  /** Which of the catalog's apps the tool is of (see `App`). */
  app: number;
}

/** What names a tool's app: its provider's key and name, its connection, and its category. */
interface App {
  names: readonly string[];
  /** The provider's category ("E-mail", "File storage"). */
  kind: readonly string[];
}

interface Built {
  version: number;
  entries: Entry[];
  apps: App[];
  byTool: Map<AnyTool, Entry>;
  index: Bm25Index;
  /** Every tag some tool has (to tell a caller a tag they named does not exist). */
  tags: Set<string>;
  /** Names of environment-bound tools per environment, which may hide a shared tool there. */
  environmentNames: Map<string, Set<string>>;
}

/** The analyzed fields of a tool, kept while the tool lives: a rebuild re-reads only new tools. */
const analyzed = new WeakMap<AnyTool, FieldTerms>();

/**
 * Tool search over the whole catalog: an in-process BM25F index of every tool's name (split at
 * `_` and camel case), description, parameter names and provider, built at the first search after
 * the registry changed (it says so through `onChange`), so a catalog that does not change is
 * indexed once and one that changes is not rebuilt before it is asked.
 */
export class ToolSearch {
  private built: Built | undefined;

  constructor(private readonly registry: ToolRegistry) {
    registry.onChange(() => {
      this.built = undefined;
    });
  }

  /** Every tag any tool of the catalog has. */
  knownTags(): ReadonlySet<string> {
    return this.current().tags;
  }

  /** The tags of one tool, as filters and toolsets see them. */
  tagsOf(tool: AnyTool): string[] {
    return (
      this.built?.byTool.get(tool)?.tags ??
      toolTags(tool, this.registry.sourceOf(tool.name, tool.environmentId) ?? '')
    );
  }

  /**
   * The tools that fit `query` best, best first, within the filter; `offset` and `limit` page
   * through them. Without words (an empty or stop-word-only query) nothing fits.
   */
  search(query: string, filter: ToolFilter, page: { offset: number; limit: number }): SearchPage {
    const built = this.current();
    const own = terms(query, (term) => built.index.has(term));
    const said = new Set(own);
    const { docs, scores } = built.index.score(expand(own, plural(query)));
    const boosts = built.apps.map((app) => appBoost(app, said));
    const wants = intent(query);
    const top = new TopK(page.offset + page.limit);
    let total = 0;
    for (const at of docs) {
      const score = scores[at]!;
      const entry = built.entries[at]!;
      if (!this.admits(built, entry, filter)) continue;
      total++;
      // A request to change something prefers tools that do, a question tools that only read.
      const fits = wants !== undefined && entry.tool.annotations.read_only === (wants === 'read');
      top.offer(at, score * boosts[entry.app]! * (fits ? INTENT_BOOST : 1));
    }
    return {
      total,
      hits: top
        .sorted()
        .slice(page.offset)
        .map(({ at, score }) => ({
          tool: built.entries[at]!.tool,
          tags: built.entries[at]!.tags,
          score: Math.round(score * 1000) / 1000,
        })),
    };
  }

  /** The catalog in the registry's order within the filter (a listing without words). */
  filter(filter: ToolFilter, page: { offset: number; limit: number }): SearchPage {
    const built = this.current();
    const all = built.entries.filter((e) => this.admits(built, e, filter));
    return {
      total: all.length,
      hits: all
        .slice(page.offset, page.offset + page.limit)
        .map((e) => ({ tool: e.tool, tags: e.tags, score: 0 })),
    };
  }

  private admits(built: Built, entry: Entry, filter: ToolFilter): boolean {
    const { tool } = entry;
    if (tool.environmentId !== undefined) {
      if (tool.environmentId !== filter.environmentId) return false;
      if (this.registry.get(tool.name, filter.environmentId) !== tool) return false;
    } else if (
      filter.environmentId !== undefined &&
      built.environmentNames.get(filter.environmentId)?.has(tool.name) &&
      this.registry.get(tool.name, filter.environmentId) !== tool
    ) {
      return false;
    }
    if (filter.provider !== undefined && tool.provider !== filter.provider) return false;
    if (filter.connection) {
      const { name, provider } = filter.connection;
      if (tool.connection ? tool.connection !== name : tool.provider !== provider) return false;
    }
    if (filter.readOnly !== undefined && tool.annotations.read_only !== filter.readOnly) return false;
    if (filter.tags?.some((tag) => !entry.tags.includes(tag))) return false;
    return filter.accept ? filter.accept(tool) : true;
  }

  private current(): Built {
    const version = this.registry.version;
    if (this.built?.version === version) return this.built;
    const entries: Entry[] = [];
    const documents: FieldTerms[] = [];
    const tags = new Set<string>();
    const environmentNames = new Map<string, Set<string>>();
    const apps: App[] = [];
    const appIds = new Map<string, number>();
    for (const { tool, source } of this.registry.entries()) {
      const key = `${tool.provider}\u0000${tool.connection ?? ''}`;
      let app = appIds.get(key);
      if (app === undefined) {
        app = apps.push(appOf(tool)) - 1;
        appIds.set(key, app);
      }
      const entry = { tool, tags: toolTags(tool, source), app };
      entries.push(entry);
      for (const tag of entry.tags) tags.add(tag);
      documents.push(analyze(tool, apps[app]!));
      if (tool.environmentId !== undefined) {
        const names = environmentNames.get(tool.environmentId) ?? new Set<string>();
        names.add(tool.name);
        environmentNames.set(tool.environmentId, names);
      }
    }
    this.built = {
      version,
      entries,
      apps,
      byTool: new Map(entries.map((e) => [e.tool, e])),
      index: new Bm25Index(documents),
      tags,
      environmentNames,
    };
    return this.built;
  }
}

/**
 * The terms of a name that say what the tool does: without the words naming its app (`github` of
 * `github_pulls_list`, and again in `github_actions_get_github_actions_permissions_repository`),
 * which the provider field holds already. Counted in the name too, they would rank a provider's
 * compiled tools above its specification tools (whose names start with a family, `notes_`) for
 * every task that names the app, and tools that repeat the app's name above the others.
 */
function nameTerms(tool: AnyTool, app: App): string[] {
  const own = terms(tool.remoteName ?? tool.name);
  const rest = own.filter((term) => !app.names.includes(term));
  return rest.length ? rest : own;
}

/**
 * How much of a description is indexed: its opening says what the tool does; the rest (rules,
 * examples, other tools to use instead) would match tasks the tool is not for.
 */
const DESCRIPTION_TERMS = 40;

/** How much a tool that reads (or writes) is preferred when the task asks to read (or write). */
const INTENT_BOOST = 1.5;

/** How much a tool of the app a task names is preferred (half as much for its kind of app). */
const APP_BOOST = 2;

/**
 * A task that names the app ("in Notion", "on GitHub") is about that app's tools, however common
 * the app's name is in the catalog (GitHub's is in most tools, so its idf says little); the
 * more of the app's name the task says, the more ("Google Drive" prefers Drive's tools to Docs').
 * Naming the kind of app ("an email") counts half.
 */
function appBoost(app: App, said: ReadonlySet<string>): number {
  const share = (words: readonly string[]) => {
    let named = 0;
    for (const word of words) if (said.has(word)) named++;
    return words.length ? named / words.length : 0;
  };
  return 1 + (APP_BOOST - 1) * Math.max(share(app.names), share(app.kind) / 2);
}

function appOf(tool: AnyTool): App {
  const provider = findBuiltInProvider(tool.provider);
  return {
    names: [
      ...new Set(terms([tool.provider, provider?.displayName, tool.connection].filter(Boolean).join(' '))),
    ],
    kind: [...new Set(terms(provider?.kind ?? '').filter((term) => term.length > 1))],
  };
}

function analyze(tool: AnyTool, app: App): FieldTerms {
  let fields = analyzed.get(tool);
  if (!fields) {
    const provider = findBuiltInProvider(tool.provider);
    fields = {
      name: nameTerms(tool, app),
      description: terms(tool.description).slice(0, DESCRIPTION_TERMS),
      parameters: terms(parameterWords(tool.input as Record<string, unknown>).join(' ')),
      provider: terms(
        [tool.provider, provider?.displayName, provider?.kind, tool.connection].filter(Boolean).join(' '),
      ),
    };
    analyzed.set(tool, fields);
  }
  return fields;
}

/**
 * The input's property names and the values its enumerations allow, and those of its object
 * properties (a compiled tool's `body`): `state` with `open`, `closed` is how a listing of open
 * pull requests tells itself from the tool that opens one.
 */
function parameterWords(schema: Record<string, unknown> | undefined, depth = 0): string[] {
  const properties = schema?.properties as Record<string, Record<string, unknown>> | undefined;
  if (!properties || typeof properties !== 'object') return [];
  const out: string[] = [];
  for (const [name, property] of Object.entries(properties)) {
    out.push(name);
    if (!property || typeof property !== 'object') continue;
    out.push(...enumValues(property));
    if (depth === 0) out.push(...parameterWords(property, 1));
  }
  return out;
}

/** The short string values an enumeration (or a union of constants) allows. */
function enumValues(schema: Record<string, unknown>): string[] {
  const values: unknown[] = [];
  if (Array.isArray(schema.enum)) values.push(...schema.enum);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches))
      for (const branch of branches) values.push((branch as { const?: unknown })?.const);
  }
  return values.filter((v): v is string => typeof v === 'string' && v.length <= 30).slice(0, 20);
}

/**
 * The k best (score, then catalog order: the specification's tools before compiled ones) of a
 * stream, in a binary heap whose root is the worst kept: a search touching thousands of tools
 * sorts only the page it answers.
 */
class TopK {
  private readonly heap: Array<{ at: number; score: number }> = [];

  constructor(private readonly k: number) {}

  offer(at: number, score: number): void {
    const { heap } = this;
    if (heap.length < this.k) {
      heap.push({ at, score });
      this.up(heap.length - 1);
    } else if (this.k > 0 && better({ at, score }, heap[0]!)) {
      heap[0] = { at, score };
      this.down(0);
    }
  }

  sorted(): Array<{ at: number; score: number }> {
    return [...this.heap].sort((a, b) => (better(a, b) ? -1 : 1));
  }

  private up(i: number): void {
    const { heap } = this;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!better(heap[parent]!, heap[i]!)) break;
      [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
      i = parent;
    }
  }

  private down(i: number): void {
    const { heap } = this;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let worst = i;
      if (left < heap.length && better(heap[worst]!, heap[left]!)) worst = left;
      if (right < heap.length && better(heap[worst]!, heap[right]!)) worst = right;
      if (worst === i) return;
      [heap[worst], heap[i]] = [heap[i]!, heap[worst]!];
      i = worst;
    }
  }
}

function better(a: { at: number; score: number }, b: { at: number; score: number }): boolean {
  return a.score > b.score || (a.score === b.score && a.at < b.at);
}
