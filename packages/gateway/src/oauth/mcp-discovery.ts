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
  scopes_supported?: string[];
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
 */
export async function discoverMcpAuthorization(
  url: string,
  remoteMcpFetch: RemoteMcpFetch,
): Promise<McpAuthorizationFacts> {
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
  if (first.status !== 401) {
    throw new McpDiscoveryError(
      first.ok
        ? `The MCP server at ${url} answered without asking for authorization; Portico connects only to servers that authorize each end user (OAuth).`
        : `The MCP server at ${url} answered ${first.status} to an initialize request, not 401 with WWW-Authenticate.`,
      first.status >= 500,
    );
  }
  const { resourceMetadataUrl } = auth.extractWWWAuthenticateParams(first);
  let resource: Awaited<ReturnType<typeof auth.discoverOAuthProtectedResourceMetadata>>;
  try {
    resource = await auth.discoverOAuthProtectedResourceMetadata(
      url,
      resourceMetadataUrl ? { resourceMetadataUrl } : undefined,
      remoteMcpFetch,
    );
  } catch (error) {
    throw new McpDiscoveryError(
      `The protected-resource metadata of ${url}${resourceMetadataUrl ? ` (${resourceMetadataUrl.href})` : ''} could not be read: ${(error as Error).message}`,
      false,
    );
  }
  const issuer = resource.authorization_servers?.[0];
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
  if (!metadata) {
    throw new McpDiscoveryError(
      `The authorization server ${issuer} publishes no metadata (RFC 8414 or OpenID Connect discovery).`,
      false,
    );
  }
  const methods = metadata.code_challenge_methods_supported;
  if (!methods?.includes('S256')) {
    // The specification: a client must refuse to go on when PKCE S256 is not advertised.
    throw new McpDiscoveryError(
      `The authorization server ${issuer} does not advertise PKCE S256 (code_challenge_methods_supported: ${methods?.join(', ') ?? 'absent'}); the MCP specification requires it.`,
      false,
    );
  }
  return {
    url,
    resource: resource.resource,
    issuer: metadata.issuer,
    authorization_endpoint: metadata.authorization_endpoint,
    token_endpoint: metadata.token_endpoint,
    ...(metadata.revocation_endpoint ? { revocation_endpoint: metadata.revocation_endpoint } : {}),
    ...(metadata.registration_endpoint ? { registration_endpoint: metadata.registration_endpoint } : {}),
    client_id_metadata_document_supported: metadata.client_id_metadata_document_supported === true,
    ...(resource.scopes_supported?.length
      ? { scopes_supported: resource.scopes_supported }
      : metadata.scopes_supported?.length
        ? { scopes_supported: metadata.scopes_supported }
        : {}),
  };
}

/** Dynamic client registration (RFC 7591) of Portico's client for one connection. */
export async function registerMcpClient(
  facts: McpAuthorizationFacts,
  client: { redirectUri: string; name: string; scopes: string[] },
  remoteMcpFetch: RemoteMcpFetch,
): Promise<{ clientId: string; clientSecret: string }> {
  const auth = await import('@modelcontextprotocol/sdk/client/auth.js');
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
        token_endpoint_auth_method: 'client_secret_post',
        ...(client.scopes.length ? { scope: client.scopes.join(' ') } : {}),
      },
      fetchFn: remoteMcpFetch,
    });
    return { clientId: registered.client_id, clientSecret: registered.client_secret ?? '' };
  } catch (error) {
    throw new McpDiscoveryError(
      `Dynamic client registration at ${facts.registration_endpoint} failed: ${(error as Error).message}`,
      false,
    );
  }
}
