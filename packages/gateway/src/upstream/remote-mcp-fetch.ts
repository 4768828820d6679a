import {
  BlockedAddressError,
  guardedFetch,
  type OutboundPolicy,
  OutboundRefusedError,
} from './outbound-guard.js';

/**
 * The fetch through which Portico reaches what a remote MCP server's definition names outside an
 * end user's call: the server's first, unauthenticated answer, its protected-resource metadata,
 * its authorization server's metadata and client registration. Requests made on a definition's
 * word pass the outbound guard (https, no private or loopback address, checked as the socket
 * connects, unless the operator allows the provider's private targets); redirects are never
 * followed here (the SDK's discovery follows same-origin ones itself, through this fetch again).
 */
export const REMOTE_MCP_FETCH_TIMEOUT_MS = 10_000;

export type RemoteMcpFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** Why the guard refused a request, or undefined when it did not. */
export function refusalOf(error: unknown): string | undefined {
  if (error instanceof OutboundRefusedError) return error.reason;
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  if (cause instanceof BlockedAddressError) return cause.message;
  return undefined;
}

export function remoteMcpFetcher(policy: OutboundPolicy): RemoteMcpFetch {
  return (input, init = {}) =>
    guardedFetch(
      input instanceof URL ? input : String(input),
      { ...init, signal: init.signal ?? AbortSignal.timeout(REMOTE_MCP_FETCH_TIMEOUT_MS) },
      policy,
    );
}
