import type { FastifyInstance, FastifyReply } from 'fastify';
import {
  type CredentialFormPage,
  FlowError,
  type ResultPage,
  renderCredentialForm,
  renderLanding,
  renderPage,
} from '../../authorization/pages.js';
import {
  type AuthorizationService,
  type BrowserBinding,
  type CallbackOutcome,
  type CredentialSubmission,
  RESUME_COOKIE,
} from '../../authorization/service.js';
import { Problem } from '../../errors/problem.js';
import { contentSecurityPolicy, pageHeaders } from '../page-headers.js';

/** The credential form posts to the gateway itself, and nowhere else; a branded logo may show. */
const FORM_PAGE_POLICY = contentSecurityPolicy(
  "default-src 'none'",
  "style-src 'unsafe-inline'",
  'img-src https:',
  "form-action 'self'",
);
/** Result and error pages: text, an inline stylesheet, a branded logo. */
const RESULT_PAGE_POLICY = contentSecurityPolicy(
  "default-src 'none'",
  "style-src 'unsafe-inline'",
  'img-src https:',
  "form-action 'none'",
);

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
  opts: {
    authorization: AuthorizationService;
    /** A connection's client ID metadata document (remote MCP servers), or undefined. */
    clientMetadata?: (connectionId: string) => Promise<Record<string, unknown> | undefined>;
  },
): Promise<void> {
  const { authorization, clientMetadata } = opts;

  // The client ID metadata document: an authorization server fetches it, with no credential, to
  // learn the client its client_id (this URL) names, and caches it as HTTP caching allows.
  app.get<{ Params: { connection_id: string } }>(
    '/sso/v1/oauth/:connection_id/client-metadata.json',
    async (req, reply) => {
      const document = await clientMetadata?.(req.params.connection_id);
      if (!document) {
        throw new Problem(
          'not_found',
          'No connection serves a client ID metadata document here: it exists only for a remote MCP server connection registered with one, under an https public URL.',
        );
      }
      return reply.header('cache-control', 'public, max-age=300').type('application/json').send(document);
    },
  );

  const page = (reply: FastifyReply, result: ResultPage) =>
    reply
      .code(result.status)
      .header('cache-control', 'no-store')
      .headers(pageHeaders(RESULT_PAGE_POLICY))
      .type('text/html; charset=utf-8')
      .send(renderPage(result));

  const formPage = (reply: FastifyReply, form: CredentialFormPage) =>
    reply
      .code(form.status)
      .header('cache-control', 'no-store')
      .headers(pageHeaders(FORM_PAGE_POLICY))
      .type('text/html; charset=utf-8')
      .send(renderCredentialForm(form));

  const outcomePage = (reply: FastifyReply, outcome: CallbackOutcome) => {
    if (outcome.kind === 'redirect')
      return reply.header('cache-control', 'no-store').redirect(outcome.url, 302);
    if (outcome.kind === 'form') return formPage(reply, outcome.form);
    return page(reply, outcome);
  };

  const flowFailure = (reply: FastifyReply, error: unknown) => {
    if (!(error instanceof FlowError)) throw error;
    return page(reply, {
      status: error.status,
      title: error.title,
      message: error.message,
      outcome: 'error',
      code: error.code,
      ...(error.branding ? { branding: error.branding } : {}),
    });
  };

  // Opening the link (GET or HEAD, as previewers, scanners and prefetches do) spends nothing: the
  // landing page's button posts back here, and that POST is what only the person does.
  app.get<{ Params: { token: string } }>('/connect/:token', async (req, reply) => {
    try {
      const { page: landing, formTarget } = await authorization.landing(
        req.params.token,
        `/connect/${encodeURIComponent(req.params.token)}`,
        parseCookies(req.headers.cookie)[RESUME_COOKIE],
      );
      const policy = contentSecurityPolicy(
        "default-src 'none'",
        "style-src 'unsafe-inline'",
        'img-src https:',
        // Browsers apply form-action to the redirect the POST answers with: the provider's origin too.
        `form-action 'self'${formTarget ? ` ${formTarget}` : ''}`,
      );
      return reply
        .header('cache-control', 'no-store')
        .header('x-robots-tag', 'noindex')
        .headers(pageHeaders(policy))
        .type('text/html; charset=utf-8')
        .send(renderLanding(landing));
    } catch (error) {
      return flowFailure(reply, error);
    }
  });

  app.post<{ Params: { token: string } }>('/connect/:token', { bodyLimit: 1024 }, async (req, reply) => {
    try {
      const started = await authorization.start(
        req.params.token,
        parseCookies(req.headers.cookie)[RESUME_COOKIE],
      );
      reply.header('set-cookie', started.bindings.map(bindingCookie));
      if (started.kind === 'form') return formPage(reply, started.form);
      // 303: the browser follows a POST's answer with a GET, as the provider's authorize endpoint expects.
      return reply
        .header('cache-control', 'no-store')
        .header('referrer-policy', 'no-referrer')
        .redirect(started.location, 303);
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
        return outcomePage(reply, outcome);
      } catch (error) {
        return flowFailure(reply, error);
      }
    },
  );

  // The hosted form of API-key and basic-auth providers posts here (the binding cookie's path).
  app.post<{ Params: { connection_id: string }; Body: Record<string, unknown> }>(
    '/sso/v1/oauth/:connection_id/callback',
    { bodyLimit: 16 * 1024 },
    async (req, reply) => {
      try {
        const body = req.body && typeof req.body === 'object' ? req.body : {};
        const field = (name: string) => (typeof body[name] === 'string' ? (body[name] as string) : undefined);
        const submission: CredentialSubmission = {
          ...(field('state') !== undefined ? { state: field('state') } : {}),
          ...(field('api_key') !== undefined ? { api_key: field('api_key') } : {}),
          ...(field('username') !== undefined ? { username: field('username') } : {}),
          ...(field('password') !== undefined ? { password: field('password') } : {}),
        };
        const outcome = await authorization.submitCredentials(
          req.params.connection_id,
          submission,
          parseCookies(req.headers.cookie),
        );
        return outcomePage(reply, outcome);
      } catch (error) {
        return flowFailure(reply, error);
      }
    },
  );
}
