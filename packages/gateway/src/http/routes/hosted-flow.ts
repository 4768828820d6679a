import type { FastifyInstance, FastifyReply } from 'fastify';
import { FlowError, type ResultPage, renderPage } from '../../authorization/pages.js';
import type { AuthorizationService, BrowserBinding } from '../../authorization/service.js';
import { PLAIN_PAGE_POLICY, pageHeaders } from '../page-headers.js';

/**
 * HttpOnly (scripts never see it) and SameSite=Lax: sent on the provider's top-level redirect back
 * to the callback, never on a cross-site subrequest.
 */
function bindingCookie(binding: BrowserBinding): string {
  return [
    `${binding.name}=${binding.value}`,
    `Path=${binding.path}`,
    `Max-Age=${binding.maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(binding.secure ? ['Secure'] : []),
  ].join('; ');
}

function parseCookies(header: string | undefined): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const part of header?.split(';') ?? []) {
    const eq = part.indexOf('=');
    if (eq > 0) cookies[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return cookies;
}

/**
 * The browser-facing half of authorization: the link the end user opens and the provider's
 * callback. Failures are pages (or redirects to the app), never JSON.
 */
export async function hostedFlowRoutes(
  app: FastifyInstance,
  opts: { authorization: AuthorizationService },
): Promise<void> {
  const { authorization } = opts;

  const page = (reply: FastifyReply, result: ResultPage) =>
    reply
      .code(result.status)
      .header('cache-control', 'no-store')
      .headers(pageHeaders(PLAIN_PAGE_POLICY))
      .type('text/html; charset=utf-8')
      .send(renderPage(result));

  const flowFailure = (reply: FastifyReply, error: unknown) => {
    if (!(error instanceof FlowError)) throw error;
    return page(reply, {
      status: error.status,
      title: error.title,
      message: error.message,
      outcome: 'error',
      code: error.code,
    });
  };

  app.get<{ Params: { token: string } }>('/connect/:token', async (req, reply) => {
    try {
      const { location, binding } = await authorization.start(req.params.token);
      return reply
        .header('cache-control', 'no-store')
        .header('referrer-policy', 'no-referrer')
        .header('set-cookie', bindingCookie(binding))
        .redirect(location, 302);
    } catch (error) {
      return flowFailure(reply, error);
    }
  });

  app.get<{ Params: { connection_id: string }; Querystring: Record<string, string | undefined> }>(
    '/sso/v1/oauth/:connection_id/callback',
    async (req, reply) => {
      try {
        const query = Object.fromEntries(
          Object.entries(req.query).map(([k, v]) => [k, Array.isArray(v) ? String(v[0]) : v]),
        );
        const outcome = await authorization.complete(
          req.params.connection_id,
          query,
          parseCookies(req.headers.cookie),
        );
        if (outcome.kind === 'redirect')
          return reply.header('cache-control', 'no-store').redirect(outcome.url, 302);
        return page(reply, outcome);
      } catch (error) {
        return flowFailure(reply, error);
      }
    },
  );
}
