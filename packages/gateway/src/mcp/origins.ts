/**
 * Which browser origins may reach the MCP endpoint. The Streamable HTTP transport requires servers
 * to validate `Origin` so a page on another site cannot drive a local or intranet MCP server
 * through DNS rebinding; the same list decides which origins get CORS headers, so browser-based
 * MCP clients on an allowed origin can connect and do OAuth.
 */
export interface OriginPolicy {
  /** Whether a request carrying this `Origin` header may proceed. */
  allows(origin: string): boolean;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The configured origins, or by default the public URL's origin plus loopback on any port (where
 * the Inspector and local agent UIs run).
 */
export function originPolicy(publicUrl: string, configured: readonly string[]): OriginPolicy {
  const exact = new Set(configured.length ? configured : [new URL(publicUrl).origin]);
  const loopback = configured.length === 0;
  return {
    allows(origin) {
      let url: URL;
      try {
        url = new URL(origin);
      } catch {
        return false; // "null" (sandboxed frames, file://) and garbage are foreign
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
      return exact.has(url.origin) || (loopback && LOOPBACK_HOSTS.has(url.hostname));
    },
  };
}
