import { camelKeys } from '../http/case.js';
import type { Transport } from '../http/transport.js';
import type {
  CustomProvider,
  Provider,
  ProviderDefinition,
  ProviderKey,
  ProviderWithDefinition,
} from '../types.js';
import { segment } from './connections.js';

type Raw = Record<string, unknown>;

/**
 * The providers connections can name: the built-in catalog, and the environment's custom providers,
 * each made from a definition (`packages/gateway/providers/provider.schema.json`).
 */
export class Providers {
  constructor(private readonly transport: Transport) {}

  /** Every provider of the environment, the built-in ones first. */
  async list(): Promise<Provider[]> {
    const { data } = await this.transport.json<{ data: Raw[] }>({ method: 'GET', path: '/api/v1/providers' });
    return data.map((p) => camelKeys<Provider>(p));
  }

  /** One provider with its definition; `ProviderNotFoundError` when there is none. */
  async get(key: ProviderKey): Promise<ProviderWithDefinition> {
    return camelKeys(
      await this.transport.json<Raw>({ method: 'GET', path: `/api/v1/providers/${segment(key)}` }),
    );
  }

  /**
   * Creates a custom provider from a definition (sent as written). A definition with mistakes
   * throws `InvalidInputError` whose `errors` name each field; a taken key `ProviderExistsError`.
   */
  async create(definition: ProviderDefinition): Promise<CustomProvider> {
    return camelKeys(
      await this.transport.json<Raw>({ method: 'POST', path: '/api/v1/providers', json: definition }),
    );
  }

  /**
   * Replaces a custom provider's definition (its `key` must be `key`); connections that use it
   * follow at once. A built-in provider throws `ProviderBuiltInError`.
   */
  async replace(key: ProviderKey, definition: ProviderDefinition): Promise<CustomProvider> {
    return camelKeys(
      await this.transport.json<Raw>({
        method: 'PUT',
        path: `/api/v1/providers/${segment(key)}`,
        json: definition,
      }),
    );
  }

  /** Deletes a custom provider; `ProviderInUseError` while connections use it. */
  async delete(key: ProviderKey): Promise<void> {
    await this.transport.send({ method: 'DELETE', path: `/api/v1/providers/${segment(key)}` });
  }
}
