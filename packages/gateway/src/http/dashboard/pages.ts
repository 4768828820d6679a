import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { Problem } from '../../errors/problem.js';
import { contentSecurityPolicy, pageHeaders } from '../page-headers.js';

/** The front end: static files, no build step (packages/gateway/dashboard-ui). */
export const DASHBOARD_UI = fileURLToPath(new URL('../../../dashboard-ui/', import.meta.url));

/**
 * Scripts, styles and images only from the gateway itself; nothing inline, no frames, no plugins.
 * The UI builds its DOM with textContent, so an injected string stays text.
 */
const SECURITY_HEADERS = {
  ...pageHeaders(
    contentSecurityPolicy(
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "img-src 'self' data:",
      "connect-src 'self'",
      "form-action 'self'",
    ),
  ),
  'cross-origin-opener-policy': 'same-origin',
};

/** The QR code encoder the account page uses, served from the installed package. */
function qrModule(): Buffer {
  const main = createRequire(import.meta.url).resolve('uqr');
  return readFileSync(path.join(path.dirname(main), 'index.mjs'));
}

/**
 * GET /dashboard/…: the single-page UI; it talks only to the public API under /api/v1. (The router
 * ignores trailing slashes, so /dashboard is the index too: the page names its files absolutely.)
 */
export async function dashboardPages(app: FastifyInstance): Promise<void> {
  const qr = qrModule();
  // The address people type first: a browser goes on to the dashboard, anything else is told
  // where the dashboard, the API and its reference are.
  app.get('/', async (req, reply) => {
    if (/\btext\/html\b/.test(req.headers.accept ?? '')) return reply.redirect('/dashboard', 302);
    throw new Problem(
      'not_found',
      'Nothing is served at /: the dashboard is at /dashboard, the API under /api/v1, and its reference at /docs (the OpenAPI document at /openapi.json).',
    );
  });
  await app.register(async (pages) => {
    pages.addHook('onSend', async (_req, reply, payload) => {
      reply.headers(SECURITY_HEADERS);
      reply.header('cache-control', 'no-cache');
      return payload;
    });
    pages.get('/dashboard/vendor/uqr.mjs', { schema: { hide: true } }, async (_req, reply) =>
      reply.type('text/javascript; charset=utf-8').send(qr),
    );
    await pages.register(fastifyStatic, {
      root: DASHBOARD_UI,
      prefix: '/dashboard/',
      index: 'index.html',
      wildcard: false,
      decorateReply: false,
      schemaHide: true,
    });
  });
}
