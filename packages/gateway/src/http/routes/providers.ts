import type { FastifyInstance } from 'fastify';
import type { ProviderCatalogService } from '../../connections/providers.js';
import type { ProviderDefinition } from '../../providers/catalog.js';

/** A provider as the API shows it: what a connection needs, and the definition it was compiled from. */
function providerView(p: ProviderDefinition, withDefinition: boolean) {
  return {
    key: p.key,
    display_name: p.displayName,
    kind: p.kind,
    built_in: p.builtIn,
    auth: p.auth,
    docs_url: p.docsUrl ?? null,
    tool_prefix: p.toolPrefix ?? null,
    default_scopes: p.oauth?.defaultScopes ?? [],
    required_scopes: p.oauth?.requiredScopes ?? [],
    tenant: p.parameters.some((x) => x.name === 'tenant' && x.source === 'connection'),
    parameters: p.parameters
      .filter((x) => x.source === 'connection')
      .map((x) => ({
        name: x.name,
        label: x.label ?? x.name,
        description: x.description ?? null,
        default: x.default ?? null,
        required: x.default === undefined,
      })),
    setup: p.setup,
    ...(withDefinition ? { definition: p.source } : {}),
  };
}

const keyParams = {
  type: 'object',
  properties: { key: { type: 'string', maxLength: 64 } },
  required: ['key'],
} as const;
const definitionBody = {
  type: 'object',
  description:
    'A provider definition: see packages/gateway/providers/provider.schema.json and docs/providers/definition-format.md',
} as const;

/**
 * /providers: the built-in catalog and the environment's own providers. A custom provider is a
 * definition (validated field by field) that connections can name like a built-in one.
 */
export async function providerRoutes(
  app: FastifyInstance,
  opts: { providers: ProviderCatalogService },
): Promise<void> {
  const { providers } = opts;
  app.get(
    '/providers',
    {
      schema: {
        summary:
          'The providers (built-in and custom), their default and common scopes, and the setup steps at the provider ({redirect_uri} stands for the connection’s)',
      },
    },
    async (req) => ({
      data: (await providers.list(req.principal.environmentId)).map((p) => providerView(p, false)),
    }),
  );

  app.get<{ Params: { key: string } }>(
    '/providers/:key',
    { schema: { summary: 'One provider, with its definition', params: keyParams } },
    async (req) => providerView(await providers.resolve(req.principal.environmentId, req.params.key), true),
  );

  app.post(
    '/providers',
    { schema: { summary: 'Create a custom provider from a definition', body: definitionBody } },
    async (req, reply) => {
      const created = await providers.create(req.principal.environmentId, req.body);
      return reply
        .code(201)
        .header('location', `/api/v1/providers/${created.definition.key}`)
        .send({
          ...providerView(created.definition, true),
          created_at: created.created_at,
          updated_at: created.updated_at,
        });
    },
  );

  app.put<{ Params: { key: string } }>(
    '/providers/:key',
    {
      schema: { summary: 'Replace a custom provider’s definition', params: keyParams, body: definitionBody },
    },
    async (req) => {
      const replaced = await providers.replace(req.principal.environmentId, req.params.key, req.body);
      return {
        ...providerView(replaced.definition, true),
        created_at: replaced.created_at,
        updated_at: replaced.updated_at,
      };
    },
  );

  app.delete<{ Params: { key: string } }>(
    '/providers/:key',
    { schema: { summary: 'Delete a custom provider no connection uses', params: keyParams } },
    async (req, reply) => {
      await providers.remove(req.principal.environmentId, req.params.key);
      return reply.code(204).send();
    },
  );
}
