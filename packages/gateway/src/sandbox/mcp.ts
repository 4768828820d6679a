import type { SandboxLocation } from '../oauth/endpoints.js';
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

/**
 * A URL a sandbox connection stored (its emulated server's, discovered under the public base of
 * the time) under the sandbox's base now, `internal` for the gateway's calls, else the public one:
 * kept by its path under the sandbox root, so a gateway whose public URL or port changed since
 * (a restart) still reaches its own emulator, and never another host.
 */
export function rebaseSandboxUrl(url: string, location: SandboxLocation, internal: boolean): string {
  const target = internal ? location.internalBase : location.publicBase;
  const exact = toSandboxInternal(url, location);
  if (exact !== undefined) return `${target}${exact.slice(location.internalBase.length)}`;
  const root = new URL(location.publicBase).pathname.replace(/\/$/, '');
  const parsed = new URL(url);
  const path = parsed.pathname.startsWith(`${root}/`) ? parsed.pathname.slice(root.length) : parsed.pathname;
  return `${target}${path}${parsed.search}`;
}

/** A sandbox URL (public or internal base) as the gateway reaches it; undefined outside the sandbox. */
export function toSandboxInternal(url: string, location: SandboxLocation): string | undefined {
  for (const base of [location.internalBase, location.publicBase]) {
    if (url === base || url.startsWith(`${base}/`) || url.startsWith(`${base}?`))
      return `${location.internalBase}${url.slice(base.length)}`;
  }
  return undefined;
}
