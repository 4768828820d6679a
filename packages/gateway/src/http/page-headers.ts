import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * A Content-Security-Policy from a page's own directives, plus what every page of the gateway
 * gets: no site may frame it (a consent or sign-in page inside another site's iframe is
 * clickjacking), and no <base> element may redirect its relative links.
 */
export function contentSecurityPolicy(...directives: string[]): string {
  return [...directives, "frame-ancestors 'none'", "base-uri 'none'"].join('; ');
}

/**
 * For a page of text and an inline stylesheet (the hosted flow's result pages, and any HTML answer
 * that names no policy of its own): nothing to load, run or submit.
 */
export const PLAIN_PAGE_POLICY = contentSecurityPolicy(
  "default-src 'none'",
  "style-src 'unsafe-inline'",
  "form-action 'none'",
);

/**
 * The headers of an HTML page: its policy; X-Frame-Options for browsers that predate
 * frame-ancestors; no MIME sniffing; no Referer (links may carry tokens in their paths).
 */
export function pageHeaders(policy: string): Record<string, string> {
  return {
    'content-security-policy': policy,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
}

/**
 * The safety net for every HTML answer of the gateway (onSend, whole application), whoever made
 * it: one without framing headers gets them, and one without a policy gets PLAIN_PAGE_POLICY,
 * so that a page added later cannot be framed before somebody remembers to say so.
 */
export function htmlPageHeaders(
  _req: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
): void {
  const type = reply.getHeader('content-type');
  if (typeof type === 'string' && type.startsWith('text/html')) {
    if (!reply.hasHeader('x-frame-options')) reply.header('x-frame-options', 'DENY');
    const policy = reply.getHeader('content-security-policy');
    if (policy === undefined) reply.header('content-security-policy', PLAIN_PAGE_POLICY);
    else if (!String(policy).includes('frame-ancestors'))
      reply.header('content-security-policy', `${String(policy)}; frame-ancestors 'none'`);
  }
  done(null, payload);
}
