import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { SANDBOX_PREFIX } from '../sandbox/sandbox.js';
import {
  OPERATIONS,
  PROBLEM_SCHEMA,
  problemResponses,
  type SuccessResponse,
  TAGS,
  TOKEN_REQUEST,
} from './openapi-operations.js';
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
/** Portico's own mark for the /docs top bar, so the page does not carry another project's logo. */
const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="150" height="40" viewBox="0 0 150 40"><rect x="2" y="6" width="28" height="28" rx="4" fill="none" stroke="#fff" stroke-width="3"/><path d="M10 34V18a6 6 0 0 1 12 0v16" fill="none" stroke="#fff" stroke-width="3"/><text x="40" y="28" font-family="system-ui,sans-serif" font-size="22" font-weight="600" fill="#fff">Portico</text></svg>`;

const PROXY_PATH = '/proxy/{*}';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

type Operation = Record<string, unknown> & { responses?: Record<string, unknown> };

/** The router's key of a documented path: `{name}` back to `:name`, `{*}` to `*`. */
const routerPath = (path: string) => path.replace('{*}', '*').replace(/\{(\w+)\}/g, ':$1');

/** A success response as OpenAPI has it: its media type (JSON unless said) when it carries a body. */
function successResponse(answer: SuccessResponse): Record<string, unknown> {
  if (!answer.schema && !answer.contentType) return { description: answer.description };
  return {
    description: answer.description,
    content: {
      [answer.contentType ?? 'application/json']: {
        schema: answer.schema ?? { type: 'string' },
        ...(answer.example === undefined ? {} : { example: answer.example }),
      },
    },
  };
}

/**
 * Completes the generated document with what routes do not declare: operation ids, tags, texts,
 * success and problem responses, security per operation, and the proxy's rest-of-path as a named
 * parameter (OpenAPI has no wildcard).
 */
export function completeDocument(doc: Record<string, unknown>): Record<string, unknown> {
  const paths = doc.paths as Record<string, Record<string, Operation>>;
  const out: Record<string, Record<string, Operation>> = {};
  for (const [path, item] of Object.entries(paths)) {
    const isProxy = path === PROXY_PATH;
    const documented = isProxy ? '/proxy/{path}' : path;
    const methods: Record<string, Operation> = {};
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.includes(method)) {
        methods[method] = op;
        continue;
      }
      const info = OPERATIONS[`${method.toUpperCase()} ${routerPath(path)}`];
      if (!info) {
        methods[method] = op;
        continue;
      }
      const next: Operation = {
        ...op,
        operationId: info.id,
        tags: [info.tag],
        summary: info.summary,
        description: info.description,
      };
      if (info.security) next.security = info.security;
      if (info.requestBody && !op.requestBody) next.requestBody = info.requestBody;
      const declared = Object.entries(op.responses ?? {}).filter(
        ([, r]) => (r as { content?: unknown }).content !== undefined,
      );
      const responses: Record<string, unknown> = Object.fromEntries(declared);
      const success = info.success === undefined ? { status: 200, description: 'Done.' } : info.success;
      if (!declared.length && success) {
        for (const answer of [success, ...(info.otherSuccesses ?? [])]) {
          responses[String(answer.status)] = successResponse(answer);
        }
      }
      Object.assign(responses, problemResponses(info.codes, info.security?.length === 0), responses);
      next.responses = responses;
      if (isProxy) {
        next.parameters = [
          {
            name: 'path',
            in: 'path',
            required: true,
            description:
              'The rest of the URL, appended to the provider’s API base URL (e.g. `gmail/v1/users/me/messages`); slashes are not encoded.',
            schema: { type: 'string' },
            example: 'gmail/v1/users/me/messages',
          },
          {
            name: 'connection_name',
            in: 'header',
            required: false,
            description:
              'The connection to use (or x-connection-name); required unless a proxy token names it.',
            schema: { type: 'string' },
          },
          {
            name: 'identifier',
            in: 'header',
            required: false,
            description:
              'The end user whose account to use (or x-identifier); required unless a proxy token names it.',
            schema: { type: 'string' },
          },
        ];
      }
      methods[method] = next;
    }
    out[documented] = methods;
  }
  const components = (doc.components ?? {}) as Record<string, Record<string, unknown>>;
  return {
    ...doc,
    servers: [{ url: '/', description: 'This gateway: the origin that serves this document.' }],
    tags: TAGS.map(([name, description]) => ({ name, description })),
    paths: out,
    components: {
      ...components,
      schemas: { ...components.schemas, Problem: PROBLEM_SCHEMA, TokenRequest: TOKEN_REQUEST },
    },
  };
}

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
        summary: 'Portico: the self-hosted agent connector gateway.',
        description:
          'Self-hosted agent connector gateway: connections, authorization links, connected accounts, tools and a credential-injecting proxy. Authenticate with a gateway token from POST /oauth/token (client credentials). Every error is application/problem+json with a stable `code` (see the Problem schema).',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'A gateway access token from POST /oauth/token (see gatewayClientCredentials).',
          },
          gatewayClientCredentials: {
            type: 'oauth2',
            description:
              'How to get the gateway token: the client_credentials grant at /oauth/token with a gateway client’s client_id and client_secret.',
            flows: { clientCredentials: { tokenUrl: '/oauth/token', scopes: {} } },
          },
          mcpToken: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An MCP token from POST /api/v1/mcp/tokens, or an MCP OAuth access token (/mcp only).',
          },
          proxyToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'A proxy token from POST /api/v1/proxy/tokens (/proxy only).',
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
      security: [{ bearer: [] }, { gatewayClientCredentials: [] }, { dashboardSession: [], csrfToken: [] }],
    },
    transformObject: (document) =>
      completeDocument((document as { openapiObject: Record<string, unknown> }).openapiObject) as never,
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
    await docs.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { deepLinking: true },
      logo: { type: 'image/svg+xml', content: Buffer.from(LOGO_SVG), href: '/docs', target: '_self' },
      theme: { title: 'Portico API' },
    });
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
