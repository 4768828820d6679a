import type { ProviderDefinition } from '../providers/catalog.js';

/** Where one provider lives for one connection: the real provider, or its sandbox emulator. */
export interface ProviderEndpoints {
  /** Opened by the end user's browser. */
  authorizeUrl: string;
  /** Called by the gateway. */
  tokenUrl: string;
  revocationUrl?: string;
  apiBaseUrl: string;
}

/** What of a connection decides where its provider is: the sandbox, and Microsoft's tenant. */
export interface ConnectionPlace {
  sandbox: boolean;
  tenant?: string | null;
}

export interface SandboxLocation {
  /** Emulator root as browsers reach it, e.g. https://portico.example.com/sandbox. */
  publicBase: string;
  /** Emulator root as the gateway reaches it (loopback when mounted in-process). */
  internalBase: string;
}

/**
 * Maps catalog URLs to a sandbox: emulators serve each provider's real paths under
 * `{root}/{emulator}`, so only the origin changes.
 */
export function sandboxUrl(realUrl: string, root: string, emulator: string): string {
  return realUrl.replace(/^https?:\/\/[^/]+/, `${root}/${emulator}`);
}

export function resolveEndpoints(
  provider: ProviderDefinition,
  sandbox: SandboxLocation | undefined,
  tenant?: string | null,
): ProviderEndpoints {
  const { api } = provider;
  const directory = tenant ?? provider.oauth.tenant?.default;
  const oauth = directory
    ? {
        ...provider.oauth,
        authorizeUrl: provider.oauth.authorizeUrl.replace('{tenant}', encodeURIComponent(directory)),
        tokenUrl: provider.oauth.tokenUrl.replace('{tenant}', encodeURIComponent(directory)),
      }
    : provider.oauth;
  if (!sandbox) {
    return {
      authorizeUrl: oauth.authorizeUrl,
      tokenUrl: oauth.tokenUrl,
      ...(oauth.revocation ? { revocationUrl: oauth.revocation.url } : {}),
      apiBaseUrl: api.baseUrl,
    };
  }
  const internal = (url: string) => sandboxUrl(url, sandbox.internalBase, provider.emulator);
  return {
    authorizeUrl: sandboxUrl(oauth.authorizeUrl, sandbox.publicBase, provider.emulator),
    tokenUrl: internal(oauth.tokenUrl),
    ...(oauth.revocation ? { revocationUrl: internal(oauth.revocation.url) } : {}),
    apiBaseUrl: internal(api.baseUrl),
  };
}
