import { Problem } from '../errors/problem.js';
import { discoverMcpAuthorization, McpDiscoveryError, registerMcpClient } from '../oauth/mcp-discovery.js';
import type { ProviderDefinition } from '../providers/catalog.js';
import type { McpServerRecord } from '../store/connections.js';
import type { OutboundPolicy } from '../upstream/outbound-guard.js';
import { remoteMcpFetcher } from '../upstream/remote-mcp-fetch.js';

export interface McpConnectionRequest {
  url: string;
  redirectUri: string;
  clientName: string;
  clientId?: string;
  clientSecret?: string;
  scopes?: string[];
}

/**
 * What a connection to a remote MCP server needs before it is stored: the server's authorization
 * facts (discovered from its 401) and Portico's client there — the operator's pre-registered one
 * when the connection names it, else one registered dynamically now. A client ID metadata document
 * is not offered yet, so a server that takes only those needs a pre-registered client.
 */
export async function connectMcpServer(
  provider: ProviderDefinition,
  request: McpConnectionRequest,
  policy: OutboundPolicy,
): Promise<{ clientId: string; clientSecret: string; scopes: string[]; server: McpServerRecord }> {
  const allowed = provider.mcp!.registration;
  const remoteMcpFetch = remoteMcpFetcher(policy);
  let facts: Awaited<ReturnType<typeof discoverMcpAuthorization>>;
  try {
    facts = await discoverMcpAuthorization(request.url, remoteMcpFetch);
  } catch (error) {
    throw asProblem(error);
  }
  const scopes =
    request.scopes ??
    (provider.oauth?.defaultScopes.length ? provider.oauth.defaultScopes : (facts.scopes_supported ?? []));
  const server = (registration: McpServerRecord['registration']): McpServerRecord => ({
    url: facts.url,
    resource: facts.resource,
    issuer: facts.issuer,
    authorization_endpoint: facts.authorization_endpoint,
    token_endpoint: facts.token_endpoint,
    ...(facts.revocation_endpoint ? { revocation_endpoint: facts.revocation_endpoint } : {}),
    registration,
    ...(facts.scopes_supported ? { scopes_supported: facts.scopes_supported } : {}),
  });
  if (request.clientId) {
    return {
      clientId: request.clientId,
      clientSecret: request.clientSecret ?? '',
      scopes,
      server: server('pre_registered'),
    };
  }
  if (allowed.includes('dynamic') && facts.registration_endpoint) {
    try {
      const registered = await registerMcpClient(
        facts,
        { redirectUri: request.redirectUri, name: request.clientName, scopes },
        remoteMcpFetch,
      );
      return { ...registered, scopes, server: server('dynamic') };
    } catch (error) {
      throw asProblem(error);
    }
  }
  throw new Problem(
    'invalid_input',
    `The authorization server of ${provider.displayName} (${facts.issuer}) offers no dynamic client registration${allowed.includes('dynamic') ? '' : ' that this definition allows'}; register an OAuth client there, create the connection with its client_id and client_secret, then add the connection's redirect_uri to that client.`,
    {
      errors: [{ path: '/client_id', message: 'is required: the server takes only pre-registered clients' }],
    },
  );
}

function asProblem(error: unknown): Problem {
  if (!(error instanceof McpDiscoveryError)) throw error;
  return new Problem(error.transient ? 'upstream_unavailable' : 'upstream_validation', error.message);
}
