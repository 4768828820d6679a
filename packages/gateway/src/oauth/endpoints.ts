import type { OAuthFacts, ProviderDefinition } from '../providers/catalog.js';
import { readOne } from '../providers/json-paths.js';
import type { ProviderParameter } from '../providers/types.js';
import { checkOutboundUrl, type OutboundPolicy, OutboundRefusedError } from '../upstream/outbound-guard.js';

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
  /** The older HTTP+SSE transport (2024-11-05) where the server has only that. */
  mcpTransport?: 'sse';
  /**
   * The resource indicator (RFC 8707) every authorization and token request names: a remote MCP
   * server's, whose tokens are bound to it.
   */
  resource?: string;
  /**
   * How the client authenticates at the token endpoint, where the connection decides it (a remote
   * MCP server's, as registered) rather than the provider's definition.
   */
  clientAuth?: 'client_secret_basic' | 'client_secret_post' | 'none';
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
    token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post' | 'none';
    transport?: 'sse';
  } | null;
}

export interface SandboxLocation {
  /** Emulator root as browsers reach it, e.g. https://portico.example.com/sandbox. */
  publicBase: string;
  /** Emulator root as the gateway reaches it (loopback when mounted in-process). */
  internalBase: string;
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
  /** False for the sandbox, whose emulators' origin replaces whatever the value names. */
  guarded = true,
): string {
  if (!url.includes('{')) return url;
  return url.replace(/\{([a-z_]+)\}/g, (whole, name: string) => {
    const parameter = provider.parameters.find((p) => p.name === name);
    if (!parameter) return whole;
    if (parameter.source === 'token') {
      const value = accountMetadata && parameter.path ? readOne(accountMetadata, parameter.path) : undefined;
      if (typeof value !== 'string') return whole;
      const fault = guarded ? tokenValueFault(provider, parameter, value) : undefined;
      if (fault) throw new OutboundRefusedError(value, fault);
      return value.replace(/\/+$/, '');
    }
    const given = name === 'tenant' ? place.tenant : place.parameters?.[name];
    const value = given ?? parameter.default;
    return value === undefined || value === null ? whole : encodeURIComponent(value);
  });
}

/**
 * The domains a token parameter's URL must stay within: its declared `domains`, or else the hosts
 * (and their parent domains) the definition's own URLs name.
 */
export function tokenParameterDomains(provider: ProviderDefinition, parameter: ProviderParameter): string[] {
  if (parameter.domains?.length) return parameter.domains;
  const urls = [
    provider.oauth?.authorizeUrl,
    provider.oauth?.tokenUrl,
    provider.oauth?.revocation?.url,
    provider.api.baseUrl,
    provider.userInfo?.url,
  ];
  const hosts = new Set<string>();
  for (const url of urls) {
    const host = url && /^https:\/\/([A-Za-z0-9.-]+)[:/]?/.exec(url)?.[1];
    if (!host) continue;
    hosts.add(host);
    const labels = host.split('.');
    if (labels.length > 2) hosts.add(labels.slice(1).join('.'));
  }
  return [...hosts];
}

/**
 * What is wrong with a URL an account's token response (or an import's metadata) gave for a token
 * parameter, if anything: it must be https, carry no credentials, and stay within the definition's
 * domains, or the proxy would send the user's token wherever it says.
 */
export function tokenValueFault(
  provider: ProviderDefinition,
  parameter: ProviderParameter,
  value: string,
): string | undefined {
  const domains = tokenParameterDomains(provider, parameter);
  if (!domains.length) return `${parameter.name} cannot be checked: the definition names no domain for it`;
  try {
    checkOutboundUrl(value, { allowPrivate: false, domains });
    return undefined;
  } catch (error) {
    if (error instanceof OutboundRefusedError) return `${parameter.name} ${error.reason}`;
    throw error;
  }
}

/** The first fault of the token parameters in an account's metadata (see tokenValueFault). */
export function metadataFault(
  provider: ProviderDefinition,
  metadata: Record<string, unknown>,
): { path: string; message: string } | undefined {
  for (const parameter of provider.parameters) {
    if (parameter.source !== 'token' || !parameter.path) continue;
    const value = readOne(metadata, parameter.path);
    if (value === undefined) continue;
    const fault =
      typeof value === 'string'
        ? tokenValueFault(provider, parameter, value)
        : `${parameter.name} must be a URL`;
    if (fault) return { path: `/metadata/${parameter.path.replaceAll('.', '/')}`, message: fault };
  }
  return undefined;
}

/**
 * Checks the URLs the gateway itself calls for a connection that is not the sandbox's: token,
 * revocation, user info and the API base, with the outbound guard. URLs still holding a
 * placeholder (an account's value not known yet) are not sent, so not checked.
 */
export function guardEndpoints(endpoints: ProviderEndpoints, policy: OutboundPolicy): ProviderEndpoints {
  for (const url of [
    endpoints.tokenUrl,
    endpoints.revocationUrl,
    endpoints.userInfoUrl,
    endpoints.apiBaseUrl,
  ]) {
    if (url && !url.includes('{')) checkOutboundUrl(url, policy);
  }
  return endpoints;
}

export function resolveEndpoints(
  provider: ProviderDefinition,
  sandbox: SandboxLocation | undefined,
  place: ConnectionPlace,
  accountMetadata?: Record<string, unknown>,
): ProviderEndpoints {
  const fill = (url: string) => fillTemplate(provider, url, place, accountMetadata, !sandbox);
  const oauth = provider.oauth;
  const mcp = provider.mcp ? place.mcp_server : undefined;
  const real: ProviderEndpoints = mcp
    ? {
        // A remote MCP server's authorization server is discovered, never written in the definition.
        authorizeUrl: mcp.authorization_endpoint,
        tokenUrl: mcp.token_endpoint,
        apiBaseUrl: fill(provider.api.baseUrl),
        mcpUrl: mcp.url,
        ...(mcp.transport ? { mcpTransport: mcp.transport } : {}),
        resource: mcp.resource,
        ...(mcp.revocation_endpoint ? { revocationUrl: mcp.revocation_endpoint } : {}),
        ...(mcp.token_endpoint_auth_method ? { clientAuth: mcp.token_endpoint_auth_method } : {}),
      }
    : {
        authorizeUrl: oauth ? fill(oauth.authorizeUrl) : '',
        tokenUrl: oauth ? fill(oauth.tokenUrl) : '',
        ...(oauth?.revocation ? { revocationUrl: fill(oauth.revocation.url) } : {}),
        apiBaseUrl: fill(provider.api.baseUrl),
        ...(provider.userInfo ? { userInfoUrl: fill(provider.userInfo.url) } : {}),
      };
  if (!sandbox) return real;
  if (mcp) {
    // The emulated MCP server's discovered URLs are the sandbox's public ones: the browser goes
    // there, the gateway over the internal base.
    const internal = (url: string) => rebaseSandboxUrl(url, sandbox, true);
    return {
      ...real,
      authorizeUrl: rebaseSandboxUrl(real.authorizeUrl, sandbox, false),
      tokenUrl: internal(real.tokenUrl),
      // Never the vendor's host: a sandbox token goes to the sandbox only.
      apiBaseUrl: `${sandbox.internalBase}/mcp`,
      apiLinkBaseUrl: `${sandbox.publicBase}/mcp`,
      ...(real.mcpUrl ? { mcpUrl: internal(real.mcpUrl) } : {}),
      ...(real.revocationUrl ? { revocationUrl: internal(real.revocationUrl) } : {}),
    };
  }
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
