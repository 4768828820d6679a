import { type SandboxLocation, toSandboxInternal } from '../oauth/endpoints.js';
import { guardedFetch } from '../upstream/outbound-guard.js';
import { REMOTE_MCP_FETCH_TIMEOUT_MS, type RemoteMcpFetch } from '../upstream/remote-mcp-fetch.js';

/**
 * The emulated remote MCP server that plays every remote MCP provider in the sandbox: the
 * emulators' `dcr` variant (its own authorization server, dynamic client registration, the notes
 * tools), so a sandbox connection is created, authorized and used as a real one, offline.
 */
export const SANDBOX_MCP_PATH = '/mcp/dcr/mcp';

/**
 * Where a sandbox connection discovers its MCP server: the server's public URL (the one its
 * metadata names, so resource checks hold) and a fetch that reaches it over the sandbox's internal
 * base. That fetch goes nowhere but the sandbox: the URLs it is given come from the emulator, yet
 * an answer naming another host is refused rather than followed.
 */
export function sandboxMcpServer(location: SandboxLocation): { url: string; fetch: RemoteMcpFetch } {
  return {
    url: `${location.publicBase}${SANDBOX_MCP_PATH}`,
    fetch(input, init = {}) {
      const url = String(input);
      const internal = toSandboxInternal(url, location);
      if (internal === undefined) {
        return Promise.reject(new TypeError(`a sandbox MCP server names ${url}, outside the sandbox`));
      }
      return guardedFetch(
        internal,
        { ...init, signal: init.signal ?? AbortSignal.timeout(REMOTE_MCP_FETCH_TIMEOUT_MS) },
        // The sandbox's own emulators, on loopback or the operator's emulator server.
        { allowPrivate: true },
      );
    },
  };
}
