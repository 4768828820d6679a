import type { Logger } from 'pino';
import { Problem } from '../errors/problem.js';
import {
  getProvider,
  isBuiltInProvider,
  PROVIDER_KEYS,
  type ProviderDefinition,
} from '../providers/catalog.js';
import {
  compileDefinition,
  DefinitionTooLargeError,
  InvalidDefinitionError,
} from '../providers/definition.js';
import {
  type CustomProviderRow,
  connectionsUsingProvider,
  countCustomProviders,
  deleteCustomProvider,
  insertCustomProvider,
  listCustomProviders,
  replaceCustomProvider,
} from '../store/custom-providers.js';
import type { Database } from '../store/db.js';
import { closestName } from '../validation/closest-name.js';
import { validationProblem } from '../validation/validator.js';

/** NOTIFY channel: an environment's custom providers changed; every process drops its copy. */
export const PROVIDER_CHANNEL = 'portico_provider';
/** How long an environment's custom providers are trusted without the database (NOTIFY drops them sooner). */
const CACHE_TTL_MS = 30_000;
/** Custom providers one environment may hold: each is compiled and kept by every replica. */
export const CUSTOM_PROVIDERS_PER_ENVIRONMENT = 100;

export interface CustomProviderView {
  definition: ProviderDefinition;
  created_at: string;
  updated_at: string;
}

/**
 * The providers an environment can connect to: the built-in catalog, and the operator's own
 * definitions on top (created, replaced and deleted through the API, the CLI and the dashboard).
 * Definitions are compiled once per process and change everywhere on NOTIFY.
 */
export class ProviderCatalogService {
  private readonly byEnvironment = new Map<
    string,
    { until: number; rows: Map<string, { provider: ProviderDefinition; row: CustomProviderRow }> }
  >();

  constructor(private readonly deps: { db: Database; logger?: Logger; clock?: () => number }) {}

  /** Listens for changes made by other processes. */
  async start(): Promise<void> {
    await this.deps.db.listen(PROVIDER_CHANNEL, (environmentId) => this.byEnvironment.delete(environmentId));
  }

  /**
   * The provider a connection names; a Problem naming the choices when there is none: 404
   * provider_not_found, or with `field` (a request body naming it) 400 invalid_input at that field.
   */
  async resolve(environmentId: string, key: string, field?: string): Promise<ProviderDefinition> {
    const found = await this.find(environmentId, key);
    if (found) return found;
    const known = [...PROVIDER_KEYS, ...(await this.custom(environmentId)).keys()];
    const closest = closestName(key, known);
    const detail = `No provider "${key}" in this environment${closest ? ` (did you mean "${closest}"?)` : ''}; use a built-in one (GET /api/v1/providers lists them) or create it with POST /api/v1/providers.`;
    const errors = [{ path: field ?? '/provider', message: `must be one of: ${known.join(', ')}` }];
    throw new Problem(field ? 'invalid_input' : 'provider_not_found', detail, {
      errors,
      ...(closest ? { extensions: { did_you_mean: closest } } : {}),
    });
  }

  async find(environmentId: string, key: string): Promise<ProviderDefinition | undefined> {
    if (isBuiltInProvider(key)) return getProvider(key);
    return (await this.custom(environmentId)).get(key)?.provider;
  }

  /** Every provider of the environment, the built-in ones first. */
  async list(environmentId: string): Promise<ProviderDefinition[]> {
    const custom = [...(await this.custom(environmentId)).values()].map((c) => c.provider);
    return [...PROVIDER_KEYS.map(getProvider), ...custom];
  }

  /** A custom provider with its timestamps. */
  async getCustom(environmentId: string, key: string): Promise<CustomProviderView | undefined> {
    const entry = (await this.custom(environmentId)).get(key);
    return entry && view(entry);
  }

  async create(environmentId: string, json: unknown): Promise<CustomProviderView> {
    const provider = compile(json);
    if (isBuiltInProvider(provider.key)) {
      throw new Problem(
        'provider_exists',
        `"${provider.key}" is a built-in provider; give yours another key (e.g. ${provider.key}_custom).`,
        { errors: [{ path: '/key', message: 'is a built-in provider key' }] },
      );
    }
    const row = await this.deps.db.transaction(async (tx) => {
      // Counted under the environment's lock, so concurrent creations cannot pass the limit together.
      if (
        (await countCustomProviders(tx, environmentId, { lock: true })) >= CUSTOM_PROVIDERS_PER_ENVIRONMENT
      ) {
        throw new Problem(
          'limit_reached',
          `This environment holds ${CUSTOM_PROVIDERS_PER_ENVIRONMENT} custom providers, the most it may; delete one it no longer uses (DELETE /api/v1/providers/{key}) before creating another.`,
          { extensions: { limit: CUSTOM_PROVIDERS_PER_ENVIRONMENT } },
        );
      }
      const inserted = await insertCustomProvider(tx, environmentId, provider.key, json as object);
      if (inserted) await this.deps.db.notify(PROVIDER_CHANNEL, environmentId, tx);
      return inserted;
    });
    if (!row) {
      throw new Problem(
        'provider_exists',
        `A provider "${provider.key}" already exists in this environment; replace it with PUT /api/v1/providers/${provider.key}.`,
      );
    }
    this.byEnvironment.delete(environmentId);
    return view({ provider, row });
  }

  async replace(environmentId: string, key: string, json: unknown): Promise<CustomProviderView> {
    this.refuseBuiltIn(key);
    const provider = compile(json);
    if (provider.key !== key) {
      throw validationProblem(
        [{ path: '/key', message: `must be "${key}", the provider this request replaces` }],
        'The provider definition',
      );
    }
    const row = await this.deps.db.transaction(async (tx) => {
      const replaced = await replaceCustomProvider(tx, environmentId, key, json as object);
      if (replaced) await this.deps.db.notify(PROVIDER_CHANNEL, environmentId, tx);
      return replaced;
    });
    if (!row) throw notFound(key);
    this.byEnvironment.delete(environmentId);
    return view({ provider, row });
  }

  async remove(environmentId: string, key: string): Promise<void> {
    this.refuseBuiltIn(key);
    await this.deps.db.transaction(async (tx) => {
      const users = await connectionsUsingProvider(tx, environmentId, key);
      if (users.length) {
        throw new Problem(
          'provider_in_use',
          `Connections use provider "${key}" (${users.join(', ')}); delete them first.`,
        );
      }
      if (!(await deleteCustomProvider(tx, environmentId, key))) throw notFound(key);
      await this.deps.db.notify(PROVIDER_CHANNEL, environmentId, tx);
    });
    this.byEnvironment.delete(environmentId);
  }

  private refuseBuiltIn(key: string): void {
    if (isBuiltInProvider(key)) {
      throw new Problem(
        'provider_built_in',
        `"${key}" is a built-in provider and cannot be changed; create your own with POST /api/v1/providers under another key.`,
      );
    }
  }

  private async custom(environmentId: string) {
    const now = (this.deps.clock ?? Date.now)();
    const cached = this.byEnvironment.get(environmentId);
    if (cached && cached.until > now && this.deps.db.listening()) return cached.rows;
    const rows = new Map<string, { provider: ProviderDefinition; row: CustomProviderRow }>();
    for (const row of await listCustomProviders(this.deps.db, environmentId)) {
      try {
        rows.set(row.key, { provider: compileDefinition(row.definition, { builtIn: false }), row });
      } catch (error) {
        // Stored definitions passed validation; one that no longer does (a stricter schema) is skipped, loudly.
        this.deps.logger?.error({ err: error, provider: row.key }, 'a stored provider definition is invalid');
      }
    }
    this.byEnvironment.set(environmentId, { until: now + CACHE_TTL_MS, rows });
    return rows;
  }
}

function compile(json: unknown): ProviderDefinition {
  try {
    return compileDefinition(json, { builtIn: false });
  } catch (error) {
    if (error instanceof InvalidDefinitionError)
      throw validationProblem(error.errors, 'The provider definition');
    if (error instanceof DefinitionTooLargeError) throw new Problem('payload_too_large', error.message);
    throw error;
  }
}

function notFound(key: string): Problem {
  return new Problem(
    'provider_not_found',
    `No custom provider "${key}" in this environment; list them with GET /api/v1/providers.`,
  );
}

function view(entry: { provider: ProviderDefinition; row: CustomProviderRow }): CustomProviderView {
  return {
    definition: entry.provider,
    created_at: entry.row.created_at.toISOString(),
    updated_at: entry.row.updated_at.toISOString(),
  };
}
