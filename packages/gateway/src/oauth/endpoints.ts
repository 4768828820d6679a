import type { OAuthFacts, ProviderDefinition } from '../providers/catalog.js';
import { readOne } from '../providers/json-paths.js';

/** Where one provider lives for one connection (and account): the real provider, or its sandbox emulator. */
export interface ProviderEndpoints {
  /** Opened by the end user's browser ('' for providers without OAuth). */
  authorizeUrl: string;
  /** Called by the gateway ('' for providers without OAuth). */
  tokenUrl: string;
  revocationUrl?: string;
  apiBaseUrl: string;
  /** The API base as the provider's own links name it, where it differs (the sandbox's public base). */
  apiLinkBaseUrl?: string;
  userInfoUrl?: string;
  /** A remote MCP server's endpoint, where the provider is one. */
  mcpUrl?: string;
  /**
   * The resource indicator (RFC 8707) every authorization and token request names: a remote MCP
   * server's, whose tokens are bound to it.
   */
  resource?: string;
}

/** What of a connection decides where its provider is: the sandbox and its parameter values. */
export interface ConnectionPlace {
  sandbox: boolean;
  /** The `tenant` parameter (Microsoft's directory), kept in its own column. */
  tenant?: string | null;
  /** Values of the definition's connection parameters. */
  parameters?: Record<string, string> | null;
  /** A remote MCP server's authorization facts, discovered when the connection was created. */
  mcp_server?: {
    url: string;
    resource: string;
    authorization_endpoint: string;
    token_endpoint: string;
    revocation_endpoint?: string;
  } | null;
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

/** The path under the emulator root that plays the provider ('definitions/{key}' for the definitions emulator). */
export function emulatorPath(provider: ProviderDefinition): string {
  return provider.emulator === 'definitions' ? `definitions/${provider.key}` : provider.emulator;
}

/** The OAuth facts of a provider that must have them (the callers are OAuth steps). */
export function oauthOf(provider: ProviderDefinition): OAuthFacts {
  if (!provider.oauth) throw new Error(`${provider.key} has no OAuth authorization (${provider.auth})`);
  return provider.oauth;
}

/**
 * Fills `{name}` placeholders: connection parameters (their value or the definition's default,
 * URL-encoded) and, once an account exists, token parameters read from its token response
 * (URLs such as Salesforce's instance URL, used as they are).
 */
export function fillTemplate(
  provider: ProviderDefinition,
  url: string,
  place: ConnectionPlace,
  accountMetadata?: Record<string, unknown>,
): string {
  if (!url.includes('{')) return url;
  return url.replace(/\{([a-z_]+)\}/g, (whole, name: string) => {
    const parameter = provider.parameters.find((p) => p.name === name);
    if (!parameter) return whole;
    if (parameter.source === 'token') {
      const value = accountMetadata && parameter.path ? readOne(accountMetadata, parameter.path) : undefined;
      return typeof value === 'string' ? value.replace(/\/+$/, '') : whole;
    }
    const given = name === 'tenant' ? place.tenant : place.parameters?.[name];
    const value = given ?? parameter.default;
    return value === undefined || value === null ? whole : encodeURIComponent(value);
  });
}

export function resolveEndpoints(
  provider: ProviderDefinition,
  sandbox: SandboxLocation | undefined,
  place: ConnectionPlace,
  accountMetadata?: Record<string, unknown>,
): ProviderEndpoints {
  const fill = (url: string) => fillTemplate(provider, url, place, accountMetadata);
  const oauth = provider.oauth;
  const mcp = provider.mcp ? place.mcp_server : undefined;
  const real: ProviderEndpoints = mcp
    ? {
        // A remote MCP server's authorization server is discovered, never written in the definition.
        authorizeUrl: mcp.authorization_endpoint,
        tokenUrl: mcp.token_endpoint,
        apiBaseUrl: fill(provider.api.baseUrl),
        mcpUrl: mcp.url,
        resource: mcp.resource,
      }
    : {
        authorizeUrl: oauth ? fill(oauth.authorizeUrl) : '',
        tokenUrl: oauth ? fill(oauth.tokenUrl) : '',
        ...(oauth?.revocation ? { revocationUrl: fill(oauth.revocation.url) } : {}),
        apiBaseUrl: fill(provider.api.baseUrl),
        ...(provider.userInfo ? { userInfoUrl: fill(provider.userInfo.url) } : {}),
      };
  if (!sandbox) return real;
  const emulator = emulatorPath(provider);
  const internal = (url: string) => sandboxUrl(url, sandbox.internalBase, emulator);
  return {
    authorizeUrl: real.authorizeUrl && sandboxUrl(real.authorizeUrl, sandbox.publicBase, emulator),
    tokenUrl: real.tokenUrl && internal(real.tokenUrl),
    ...(real.revocationUrl ? { revocationUrl: internal(real.revocationUrl) } : {}),
    apiBaseUrl: internal(real.apiBaseUrl),
    apiLinkBaseUrl: sandboxUrl(real.apiBaseUrl, sandbox.publicBase, emulator),
    ...(real.userInfoUrl ? { userInfoUrl: internal(real.userInfoUrl) } : {}),
  };
}
