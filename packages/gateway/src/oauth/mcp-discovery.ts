import type { OAuthMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { type RemoteMcpFetch, refusalOf } from '../upstream/remote-mcp-fetch.js';

/** What a remote MCP server says of its authorization, discovered as the MCP specification says. */
export interface McpAuthorizationFacts {
  url: string;
  resource: string;
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  revocation_endpoint?: string;
  registration_endpoint?: string;
  client_id_metadata_document_supported: boolean;
  /** The token endpoint's client authentication methods (RFC 8414; absent: client_secret_basic). */
  token_endpoint_auth_methods_supported?: string[];
  /** The protected resource's scopes (RFC 9728 `scopes_supported`). */
  scopes_supported?: string[];
  /** The scopes the server's 401 asked for (`WWW-Authenticate: Bearer scope="…"`). */
  challenge_scopes?: string[];
  /** The authorization server offers refresh tokens for `offline_access` (its `scopes_supported`). */
  offline_access?: boolean;
  /** The server speaks only the older HTTP+SSE transport. */
  transport?: 'sse';
}

/** A server that answered initialize and tools/list without asking for any authorization. */
export interface McpOpenServer {
  url: string;
  authorization: 'none';
  transport?: 'sse';
}

/** Discovery failed: `detail` says at which step and what the server answered. */
export class McpDiscoveryError extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
    this.name = 'McpDiscoveryError';
  }
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'portico', version: '1' },
  },
};

/**
 * The MCP authorization specification's discovery: an unauthenticated request whose 401 names the
 * protected-resource metadata (`WWW-Authenticate: Bearer resource_metadata=…`; without it, the
 * well-known URI of RFC 9728), then the first authorization server's metadata (RFC 8414 or OpenID
 * Connect discovery). The SDK's own discovery functions do the fetching, through `remoteMcpFetch`.
 * A server that answers initialize and then tools/list without a 401 asks for no authorization
 * (the specification makes authorization optional): `{ authorization: 'none' }`.
 */
export async function discoverMcpAuthorization(
  url: string,
  remoteMcpFetch: RemoteMcpFetch,
): Promise<McpAuthorizationFacts | McpOpenServer> {
  const auth = await import('@modelcontextprotocol/sdk/client/auth.js');
  let first: Response;
  try {
    first = await remoteMcpFetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(INITIALIZE),
    });
  } catch (error) {
    const refused = refusalOf(error);
    if (refused) {
      throw new McpDiscoveryError(
        `Portico does not send to the MCP server at ${url}: ${refused}. Name a public https URL, or allow private targets for this provider with PORTICO_OUTBOUND_ALLOW_PRIVATE.`,
        false,
      );
    }
    throw new McpDiscoveryError(
      `The MCP server at ${url} is unreachable: ${(error as Error).message}.`,
      true,
    );
  }
  await first.body?.cancel();
  let transport: 'sse' | undefined;
  if (first.status === 404 || first.status === 405) {
    // A server of the older HTTP+SSE transport (2024-11-05) takes no POST at its URL: its event
    // stream is a GET there, whose 401 (or first event) is what the newer POST would have said.
    try {
      first = await remoteMcpFetch(url, { method: 'GET', headers: { accept: 'text/event-stream' } });
    } catch (error) {
      throw new McpDiscoveryError(
        `The MCP server at ${url} is unreachable: ${(error as Error).message}.`,
        true,
      );
    }
    await first.body?.cancel();
    if (!String(first.headers.get('content-type')).includes('text/event-stream') && first.ok) {
      throw new McpDiscoveryError(
        `The MCP server at ${url} answered POST with ${first.status === 404 ? 404 : 405} and GET without an event stream: it speaks neither MCP transport.`,
        false,
      );
    }
    transport = 'sse';
    if (first.ok) return { url, authorization: 'none', transport };
  }
  if (first.ok) {
    // Some servers take initialize without a token and ask for one at the first real request
    // (the specification lets authorization start at any request): ask for the tool list.
    try {
      first = await askForTools(url, first, remoteMcpFetch);
    } catch (error) {
      throw new McpDiscoveryError(
        `The MCP server at ${url} is unreachable: ${(error as Error).message}.`,
        true,
      );
    }
  }
  if (first.ok) return { url, authorization: 'none' };
  if (first.status !== 401) {
    throw new McpDiscoveryError(
      `The MCP server at ${url} answered ${first.status} to an initialize request, not 401 with WWW-Authenticate.`,
      first.status >= 500,
    );
  }
  const { resourceMetadataUrl, scope } = auth.extractWWWAuthenticateParams(first);
  const challengeScopes = scope?.split(' ').filter(Boolean);
  const resource = await protectedResource(url, resourceMetadataUrl, remoteMcpFetch);
  // The 2025-03-26 revision had no protected-resource metadata: the authorization server is the
  // MCP server's origin, and without metadata of its own its endpoints are the default paths.
  const issuer = resource ? resource.authorization_servers?.[0] : new URL(url).origin;
  if (!issuer) {
    throw new McpDiscoveryError(
      `The protected-resource metadata of ${url} names no authorization_servers.`,
      false,
    );
  }
  let metadata: OAuthMetadata | undefined;
  try {
    metadata = (await auth.discoverAuthorizationServerMetadata(issuer, { fetchFn: remoteMcpFetch })) as
      | OAuthMetadata
      | undefined;
  } catch (error) {
    throw new McpDiscoveryError(
      `The metadata of the authorization server ${issuer} could not be read: ${(error as Error).message}`,
      false,
    );
  }
  if (!metadata && resource) {
    throw new McpDiscoveryError(
      `The authorization server ${issuer} publishes no metadata (RFC 8414 or OpenID Connect discovery).`,
      false,
    );
  }
  metadata ??= {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    registration_endpoint: `${issuer}/register`,
    response_types_supported: ['code'],
    // That revision made PKCE S256 mandatory for every client and server.
    code_challenge_methods_supported: ['S256'],
  };
  const methods = metadata.code_challenge_methods_supported;
  if (!methods?.includes('S256')) {
    // The specification: a client must refuse to go on when PKCE S256 is not advertised.
    throw new McpDiscoveryError(
      `The authorization server ${issuer} does not advertise PKCE S256 (code_challenge_methods_supported: ${methods?.join(', ') ?? 'absent'}); the MCP specification requires it.`,
      false,
    );
  }
  const scopes = resource?.scopes_supported?.length ? resource.scopes_supported : undefined;
  return {
    url,
    resource: resource?.resource ?? url,
    issuer: metadata.issuer,
    authorization_endpoint: metadata.authorization_endpoint,
    token_endpoint: metadata.token_endpoint,
    ...(metadata.revocation_endpoint ? { revocation_endpoint: metadata.revocation_endpoint } : {}),
    ...(metadata.registration_endpoint ? { registration_endpoint: metadata.registration_endpoint } : {}),
    client_id_metadata_document_supported: metadata.client_id_metadata_document_supported === true,
    ...(metadata.token_endpoint_auth_methods_supported?.length
      ? { token_endpoint_auth_methods_supported: metadata.token_endpoint_auth_methods_supported }
      : {}),
    ...(scopes ? { scopes_supported: scopes } : {}),
    ...(challengeScopes?.length ? { challenge_scopes: challengeScopes } : {}),
    ...(metadata.scopes_supported?.includes('offline_access') ? { offline_access: true } : {}),
    ...(transport ? { transport } : {}),
  };
}

/**
 * The protected-resource metadata (RFC 9728), from the 401's `resource_metadata` or the well-known
 * URIs; undefined when the server publishes none (the 2025-03-26 revision). Its `resource` must be
 * the server's own URL or a parent of it: a token bound to another resource would be sent here.
 */
async function protectedResource(
  url: string,
  resourceMetadataUrl: URL | undefined,
  remoteMcpFetch: RemoteMcpFetch,
): Promise<
  | Awaited<
      ReturnType<
        typeof import('@modelcontextprotocol/sdk/client/auth.js').discoverOAuthProtectedResourceMetadata
      >
    >
  | undefined
> {
  const auth = await import('@modelcontextprotocol/sdk/client/auth.js');
  const { checkResourceAllowed } = await import('@modelcontextprotocol/sdk/shared/auth-utils.js');
  let resource: Awaited<ReturnType<typeof auth.discoverOAuthProtectedResourceMetadata>>;
  try {
    resource = await auth.discoverOAuthProtectedResourceMetadata(
      url,
      resourceMetadataUrl ? { resourceMetadataUrl } : undefined,
      remoteMcpFetch,
    );
  } catch (error) {
    if (!resourceMetadataUrl && /does not implement/.test((error as Error).message)) return undefined;
    throw new McpDiscoveryError(
      `The protected-resource metadata of ${url}${resourceMetadataUrl ? ` (${resourceMetadataUrl.href})` : ''} could not be read: ${(error as Error).message}`,
      false,
    );
  }
  if (!checkResourceAllowed({ requestedResource: url, configuredResource: resource.resource })) {
    throw new McpDiscoveryError(
      `The protected-resource metadata of ${url} names the resource ${resource.resource}, which is not this server's URL nor a parent of it; Portico does not ask for tokens bound to another resource.`,
      false,
    );
  }
  return resource;
}

/**
 * After an initialize that needed no token: the initialized notification and a tools/list, on the
 * session the server opened, whose answer is the 401 to discover from (or the server's tools, when
 * it needs no authorization at all).
 */
async function askForTools(
  url: string,
  initialized: Response,
  remoteMcpFetch: RemoteMcpFetch,
): Promise<Response> {
  const session = initialized.headers.get('mcp-session-id');
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': INITIALIZE.params.protocolVersion,
    ...(session ? { 'mcp-session-id': session } : {}),
  };
  const notified = await remoteMcpFetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  await notified.body?.cancel();
  if (notified.status === 401) return notified;
  const listed = await remoteMcpFetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  await listed.body?.cancel();
  return listed;
}

/** How Portico's client authenticates at the token endpoint. */
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

/**
 * The method to register with or to use for a client holding a secret (or none): the first of
 * basic, post and none the server lists, RFC 8414's default (client_secret_basic) when it lists none.
 */
export function tokenAuthMethodFor(
  facts: McpAuthorizationFacts,
  hasSecret: boolean,
): TokenEndpointAuthMethod {
  const supported = facts.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
  if (hasSecret) {
    if (supported.includes('client_secret_basic')) return 'client_secret_basic';
    if (supported.includes('client_secret_post')) return 'client_secret_post';
  }
  if (supported.includes('none')) return 'none';
  return hasSecret ? 'client_secret_basic' : 'none';
}

/** Dynamic client registration (RFC 7591) of Portico's client for one connection. */
export async function registerMcpClient(
  facts: McpAuthorizationFacts,
  client: { redirectUri: string; name: string; scopes: string[] },
  remoteMcpFetch: RemoteMcpFetch,
): Promise<{ clientId: string; clientSecret: string; tokenEndpointAuthMethod: TokenEndpointAuthMethod }> {
  const auth = await import('@modelcontextprotocol/sdk/client/auth.js');
  // A confidential client where the server takes one, else a public client (PKCE alone).
  const asked = tokenAuthMethodFor(facts, true);
  try {
    const registered = await auth.registerClient(facts.issuer, {
      metadata: {
        issuer: facts.issuer,
        authorization_endpoint: facts.authorization_endpoint,
        token_endpoint: facts.token_endpoint,
        registration_endpoint: facts.registration_endpoint!,
        response_types_supported: ['code'],
      },
      clientMetadata: {
        redirect_uris: [client.redirectUri],
        client_name: client.name,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: asked,
        ...(client.scopes.length ? { scope: client.scopes.join(' ') } : {}),
      },
      fetchFn: remoteMcpFetch,
    });
    const secret = registered.client_secret ?? '';
    // The server's answer decides (RFC 7591 §3.2.1): it may register another method than asked.
    const answered = registered.token_endpoint_auth_method;
    const method: TokenEndpointAuthMethod =
      answered === 'client_secret_basic' || answered === 'client_secret_post' || answered === 'none'
        ? answered
        : secret
          ? asked === 'none'
            ? 'client_secret_basic'
            : asked
          : 'none';
    return {
      clientId: registered.client_id,
      clientSecret: method === 'none' ? '' : secret,
      tokenEndpointAuthMethod: method,
    };
  } catch (error) {
    throw new McpDiscoveryError(
      `Dynamic client registration at ${facts.registration_endpoint} failed: ${(error as Error).message}`,
      false,
    );
  }
}
