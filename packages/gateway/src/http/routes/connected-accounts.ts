import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  type AuthorizationLinkBody,
  ImportAccountBody,
  AuthorizationLinkBody as LinkSchema,
  ListAccountsQuery,
  VerifyUserBody,
} from '../../accounts/schemas.js';
import type { AccountService } from '../../accounts/service.js';
import { grantOfPrincipal, listFilter, reachOf, requireRecord } from '../../auth/access.js';
import type { ClientStatusCache } from '../../auth/client-status.js';
import type { AuthorizationService } from '../../authorization/service.js';

export async function connectedAccountRoutes(
  app: FastifyInstance,
  opts: { accounts: AccountService; authorization: AuthorizationService; grants: ClientStatusCache },
): Promise<void> {
  const { accounts, authorization } = opts;
  const grantOf = (req: FastifyRequest) => grantOfPrincipal(req.principal, opts.grants);
  /** The account with this id, answered as missing when it is on a connection out of the caller's reach. */
  const reachable = async (req: FastifyRequest, id: string) =>
    requireRecord(grantOf(req), await accounts.get(req.principal.environmentId, id), () =>
      accounts.notFound(id),
    );
  const idParams = {
    type: 'object',
    properties: { id: { type: 'string', maxLength: 64 } },
    required: ['id'],
  } as const;

  app.post('/connected-accounts/authorization-link', { schema: { body: LinkSchema } }, async (req, reply) => {
    const link = await authorization.createLink(
      req.principal.environmentId,
      req.body as AuthorizationLinkBody,
      listFilter(grantOf(req)),
    );
    return reply.code(201).header('cache-control', 'no-store').send(link);
  });

  app.post(
    '/connected-accounts/import',
    {
      schema: {
        summary:
          'Create (or update) an ACTIVE account from a credential the application already holds: OAuth tokens, an API key, or a user name and password',
        body: ImportAccountBody,
      },
    },
    async (req, reply) => {
      const row = await accounts.importCredentials(
        req.principal.environmentId,
        req.body as ImportAccountBody,
      );
      return reply
        .code(201)
        .header('location', `/api/v1/connected-accounts/${row.id}`)
        .send(accounts.view(row));
    },
  );

  app.post(
    '/connected-accounts/verify',
    {
      schema: {
        summary: 'Verify the user of a consent made with user_verify_url; the account then becomes ACTIVE',
        body: VerifyUserBody,
      },
    },
    async (req, reply) =>
      reply
        .header('cache-control', 'no-store')
        .send(
          await authorization.verify(
            req.principal.environmentId,
            req.body as VerifyUserBody,
            reachOf(grantOf(req)),
          ),
        ),
  );

  app.get('/connected-accounts', { schema: { querystring: ListAccountsQuery } }, async (req) => {
    const query = req.query as ListAccountsQuery;
    return accounts.list(req.principal.environmentId, {
      ...query,
      connection_names: listFilter(grantOf(req), query.connection_name),
    });
  });

  app.get(
    '/connected-accounts/summary',
    {
      schema: {
        summary: 'Accounts by status and connection, and those that expired in the last 7 days',
        querystring: { type: 'object', properties: {}, additionalProperties: false },
      },
    },
    async (req) => accounts.summary(req.principal.environmentId, 7, listFilter(grantOf(req))),
  );

  app.get<{ Params: { id: string } }>(
    '/connected-accounts/:id',
    { schema: { params: idParams } },
    async (req) => accounts.view(await reachable(req, req.params.id)),
  );

  app.delete<{ Params: { id: string } }>(
    '/connected-accounts/:id',
    { schema: { params: idParams } },
    async (req) => {
      await reachable(req, req.params.id);
      return accounts.view(await accounts.disconnect(req.principal.environmentId, req.params.id));
    },
  );
}
