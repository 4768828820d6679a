import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AdminRole, AdminService } from '../../dashboard/admins.js';
import { Problem } from '../../errors/problem.js';

const Role = Type.Union([Type.Literal('admin'), Type.Literal('viewer')], {
  description: 'admin: every change; viewer: reads only (secrets are never shown to anyone).',
});

const CreateAdminBody = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 64 }),
    password: Type.Optional(
      Type.String({ minLength: 12, maxLength: 256, description: 'Default: a generated one, returned once.' }),
    ),
    role: Type.Optional(Role),
  },
  { additionalProperties: false },
);

const ChangeAdminBody = Type.Object({ role: Role }, { additionalProperties: false });

const UsernameParams = Type.Object({ username: Type.String({ minLength: 1, maxLength: 64 }) });

/** Only a signed-in dashboard admin manages admin accounts: gateway clients never do. */
function sessionOnly(req: FastifyRequest): void {
  if (!req.principal.admin) {
    throw new Problem(
      'insufficient_scope',
      'Dashboard accounts are managed from a dashboard session only (an admin signed in at /dashboard), not with a gateway client; on the host, `portico admins create` works too.',
    );
  }
}

/**
 * Dashboard accounts under /api/v1/admin/admins: list (admins and viewers), create, change a role,
 * delete. Changes need the role "admin" (viewers are refused before the route, like every change).
 */
export async function adminAccountRoutes(
  app: FastifyInstance,
  opts: { admins: AdminService },
): Promise<void> {
  const { admins } = opts;
  app.addHook('preHandler', (req, _reply, done) => {
    try {
      sessionOnly(req);
      done();
    } catch (error) {
      done(error as Error);
    }
  });

  app.get('/admin/admins', async (req) => ({ data: await admins.list(req.principal.environmentId) }));

  app.post('/admin/admins', { schema: { body: CreateAdminBody } }, async (req, reply) => {
    const body = req.body as { username: string; password?: string; role?: AdminRole };
    const created = await admins.create(req.principal.environmentId, body.username, body.password, body.role);
    return reply
      .code(201)
      .header('cache-control', 'no-store')
      .send({
        username: created.username,
        role: created.role ?? 'admin',
        // Only a password the gateway generated is returned: the caller knows its own.
        ...(body.password === undefined ? { password: created.password } : {}),
      });
  });

  app.patch<{ Params: { username: string } }>(
    '/admin/admins/:username',
    { schema: { params: UsernameParams, body: ChangeAdminBody } },
    async (req) =>
      admins.setRole(
        req.principal.environmentId,
        req.params.username,
        (req.body as { role: AdminRole }).role,
      ),
  );

  app.delete<{ Params: { username: string } }>(
    '/admin/admins/:username',
    { schema: { params: UsernameParams } },
    async (req, reply) => {
      await admins.remove(req.principal.environmentId, req.params.username, req.principal.username);
      return reply.code(204).send();
    },
  );
}
