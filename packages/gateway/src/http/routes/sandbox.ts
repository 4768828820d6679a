import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ProviderCatalogService } from '../../connections/providers.js';
import type { ConnectionService } from '../../connections/service.js';
import { Problem } from '../../errors/problem.js';
import type { Sandbox } from '../../sandbox/sandbox.js';

const NameParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }) });

/**
 * The sandbox's control operations for operators, so failures can be rehearsed with the real
 * gateway: expired access tokens (the next call refreshes), revoked grants (the account expires and
 * offers a new link), and a fresh start of the emulators' data.
 */
export async function sandboxRoutes(
  app: FastifyInstance,
  opts: { connections: ConnectionService; providers: ProviderCatalogService; sandbox: Sandbox },
): Promise<void> {
  const sandboxConnection = async (environmentId: string, name: string) => {
    const connection = await opts.connections.get(environmentId, name);
    if (!connection.sandbox) {
      throw new Problem(
        'invalid_input',
        `Connection "${name}" talks to the real ${connection.provider}; sandbox operations work only on sandbox connections.`,
        { errors: [{ path: '/name', message: 'must name a sandbox connection' }] },
      );
    }
    return { connection, provider: await opts.providers.resolve(environmentId, connection.provider) };
  };

  app.post<{ Params: { name: string } }>(
    '/sandbox/connections/:name/expire-tokens',
    { schema: { params: NameParams } },
    async (req) => ({
      expired: await (async () => {
        const { connection, provider } = await sandboxConnection(
          req.principal.environmentId,
          req.params.name,
        );
        return opts.sandbox.expireTokens(connection, provider);
      })(),
    }),
  );

  app.post<{ Params: { name: string } }>(
    '/sandbox/connections/:name/revoke-grants',
    { schema: { params: NameParams } },
    async (req) => ({
      revoked: await (async () => {
        const { connection, provider } = await sandboxConnection(
          req.principal.environmentId,
          req.params.name,
        );
        return opts.sandbox.revokeGrants(connection, provider);
      })(),
    }),
  );

  app.post('/sandbox/reset', async () => {
    await opts.sandbox.reset();
    return { reset: true };
  });
}
