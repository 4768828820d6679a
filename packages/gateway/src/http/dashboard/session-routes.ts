import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuditService } from '../../audit/service.js';
import { type AdminService, SESSION_TTL_SECONDS } from '../../dashboard/admins.js';
import { CSRF_HEADER, sessionCookie, sessionCookieHeader } from '../../dashboard/cookie.js';
import { Problem } from '../../errors/problem.js';
import { originOf } from '../audit.js';

const SignInBody = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 64 }),
    password: Type.String({ minLength: 1, maxLength: 256 }),
  },
  { additionalProperties: false },
);

const SessionView = Type.Object({
  username: Type.String(),
  role: Type.Union([Type.Literal('admin'), Type.Literal('viewer')], {
    description: 'admin: every change; viewer: reads only.',
  }),
  csrf_token: Type.String({ description: 'Send it as X-CSRF-Token with every call that uses the cookie.' }),
  expires_at: Type.String({ format: 'date-time' }),
});

const view = (s: { username: string; role: string; csrfToken: string; expiresAt: Date }) => ({
  username: s.username,
  role: s.role,
  csrf_token: s.csrfToken,
  expires_at: s.expiresAt.toISOString(),
});

const noSession = () =>
  new Problem('unauthenticated', 'No dashboard session: sign in with POST /api/v1/admin/session.');

/**
 * Sign-in for dashboard operators, under the public API (/api/v1/admin/session) but outside its
 * bearer check: the session cookie it sets is then accepted by /api/v1 with the CSRF header.
 */
export async function adminSessionRoutes(
  app: FastifyInstance,
  opts: { admins: AdminService; secureCookies: boolean; audit: AuditService },
): Promise<void> {
  const { admins, audit } = opts;
  /**
   * Sign-ins, failed ones (the username tried when an account has it, never the password nor a
   * username no account has: that is often a password typed in the wrong field) and sign-outs.
   */
  const record = (
    req: FastifyRequest,
    action: string,
    username: string,
    environmentId: string | undefined,
    statusCode: number,
  ) =>
    audit.record({
      ...(environmentId ? { environmentId } : {}),
      actorType: 'admin',
      actorId: username.slice(0, 64),
      credential: action === 'admin.signed_out' ? 'session' : 'password',
      action,
      resourceType: 'admin',
      resourceId: username.slice(0, 64),
      statusCode,
      ...originOf(req),
    });
  const tags = ['dashboard'];
  const clearCookie = (reply: FastifyReply) =>
    reply.header('set-cookie', sessionCookieHeader('', 0, opts.secureCookies));

  app.post(
    '/admin/session',
    {
      schema: {
        tags,
        summary: 'Sign in to the dashboard (sets the HttpOnly session cookie)',
        security: [],
        body: SignInBody,
        response: { 201: SessionView },
      },
    },
    async (req, reply) => {
      // Only JSON: a cross-site HTML form cannot send it, so nobody can sign a browser in as them.
      if (!req.headers['content-type']?.toLowerCase().startsWith('application/json')) {
        throw new Problem('unsupported_media_type', 'Send the sign-in as application/json.');
      }
      const { username, password } = req.body as { username: string; password: string };
      let signedIn: Awaited<ReturnType<AdminService['signIn']>>;
      try {
        signedIn = await admins.signIn(username, password, req.ip);
      } catch (error) {
        if (error instanceof Problem) {
          record(req, 'admin.sign_in_failed', await admins.auditName(username), undefined, error.status);
        }
        throw error;
      }
      record(req, 'admin.signed_in', signedIn.username, signedIn.environmentId, 201);
      return reply
        .code(201)
        .header(
          'set-cookie',
          sessionCookieHeader(signedIn.sessionToken, SESSION_TTL_SECONDS, opts.secureCookies),
        )
        .header('cache-control', 'no-store')
        .send(view(signedIn));
    },
  );

  app.get(
    '/admin/session',
    {
      schema: {
        tags,
        summary: 'The signed-in admin and the session’s CSRF token (cookie only)',
        security: [],
        response: { 200: SessionView },
      },
    },
    async (req, reply) => {
      const token = sessionCookie(req.headers.cookie);
      const session = token ? await admins.session(token) : undefined;
      if (!session) {
        clearCookie(reply);
        throw noSession();
      }
      return reply.header('cache-control', 'no-store').send(view(session));
    },
  );

  app.delete(
    '/admin/session',
    { schema: { tags, summary: 'Sign out (needs the X-CSRF-Token header)', security: [] } },
    async (req, reply) => {
      const token = sessionCookie(req.headers.cookie);
      if (!token) throw noSession();
      const header = req.headers[CSRF_HEADER];
      const session = await admins.authenticate(token, typeof header === 'string' ? header : undefined);
      await admins.signOut(token);
      record(req, 'admin.signed_out', session.username, session.environmentId, 204);
      clearCookie(reply);
      return reply.code(204).send();
    },
  );
}
