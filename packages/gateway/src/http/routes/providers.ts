import type { FastifyInstance } from 'fastify';
import { PROVIDER_KEYS, PROVIDERS } from '../../providers/catalog.js';
import { PROVIDER_SETUP } from '../../providers/setup.js';

/** GET /providers: what a connection can be made for, its scopes and the setup at the provider. */
export async function providerRoutes(app: FastifyInstance): Promise<void> {
  const data = PROVIDER_KEYS.map((key) => {
    const p = PROVIDERS[key];
    return {
      key,
      display_name: p.displayName,
      kind: p.kind,
      tool_prefix: p.toolPrefix ?? null,
      default_scopes: p.oauth.defaultScopes,
      required_scopes: p.oauth.requiredScopes,
      tenant: Boolean(p.oauth.tenant),
      setup: PROVIDER_SETUP[key],
    };
  });
  app.get(
    '/providers',
    {
      schema: {
        summary:
          'The providers, their default and common scopes, and the setup steps at the provider ({redirect_uri} stands for the connection’s)',
      },
    },
    async () => ({ data }),
  );
}
