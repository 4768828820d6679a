import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { SANDBOX_PREFIX } from '../sandbox/sandbox.js';
import { contentSecurityPolicy, pageHeaders } from './page-headers.js';
import { PORTICO_VERSION } from './version.js';

/**
 * Swagger UI's scripts, styles and logo come from its own files under /docs (a data: URI for the
 * logo); it also sets an inline style, and "Try it out" calls the API on this origin. No site may
 * frame it.
 */
const DOCS_HEADERS = pageHeaders(
  contentSecurityPolicy(
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'self'",
  ),
);

interface RegisteredRoute {
  method: string;
  url: string;
  /** The route's own schema (body, querystring, params, …) as declared. */
  schema?: Record<string, unknown> | undefined;
}

const registered = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/** Every route the app registered, to check the description covers them and their schemas compile. */
export function registeredRoutes(app: FastifyInstance): RegisteredRoute[] {
  return registered.get(app) ?? [];
}

/**
 * The OpenAPI 3.1 description of the API, generated from the routes' own schemas as they are
 * registered (so it cannot drift from what the routes accept): `GET /openapi.json`, rendered at
 * `/docs` by Swagger UI from assets in node_modules (no network fetches). The sandbox emulators
 * mounted under /sandbox play other companies' APIs and are left out.
 */
export async function registerApiDescription(app: FastifyInstance): Promise<void> {
  const routes: RegisteredRoute[] = [];
  registered.set(app, routes);
  app.addHook('onRoute', (route) => {
    const schema = route.schema as Record<string, unknown> | undefined;
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, schema });
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Portico',
        version: PORTICO_VERSION,
        description:
          'Self-hosted agent connector gateway: connections, authorization links, connected accounts, tools and a credential-injecting proxy. Errors are application/problem+json.',
      },
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'A gateway access token from POST /oauth/token.',
          },
          dashboardSession: {
            type: 'apiKey',
            in: 'cookie',
            name: 'portico_session',
            description: 'The dashboard session cookie from POST /api/v1/admin/session; only with csrfToken.',
          },
          csrfToken: {
            type: 'apiKey',
            in: 'header',
            name: 'X-CSRF-Token',
            description: 'The csrf_token of the dashboard session.',
          },
          metricsToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'PORTICO_METRICS_TOKEN (GET /metrics only).',
          },
        },
      },
      security: [{ bearer: [] }, { dashboardSession: [], csrfToken: [] }],
    },
    transform: ({ schema, url, route }) => ({
      schema: url.startsWith(SANDBOX_PREFIX) || url.startsWith('/docs') ? { ...schema, hide: true } : schema,
      url,
      ...(route ? { route } : {}),
    }),
  });
  await app.register(async (docs) => {
    docs.addHook('onSend', (_req, reply, payload, done) => {
      reply.headers(DOCS_HEADERS);
      done(null, payload);
    });
    await docs.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
