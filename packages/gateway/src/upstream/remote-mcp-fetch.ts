/**
 * The one function through which Portico fetches what a remote MCP server's definition names
 * outside an end user's call: the server's first, unauthenticated answer, its protected-resource
 * metadata, its authorization server's metadata and client registration. Requests made on a
 * definition's word pass one place, where the outbound guard applies; redirects are never followed
 * here (the SDK's discovery follows same-origin ones itself, through this function again).
 */
export const REMOTE_MCP_FETCH_TIMEOUT_MS = 10_000;

export function remoteMcpFetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
  return fetch(input, {
    ...init,
    redirect: 'manual',
    signal: init.signal ?? AbortSignal.timeout(REMOTE_MCP_FETCH_TIMEOUT_MS),
  });
}
