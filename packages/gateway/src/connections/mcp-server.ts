import { Problem } from '../errors/problem.js';
import {
  discoverMcpAuthorization,
  McpDiscoveryError,
  registerMcpClient,
  tokenAuthMethodFor,
} from '../oauth/mcp-discovery.js';
import type { ProviderDefinition } from '../providers/catalog.js';
import type { McpServerRecord } from '../store/connections.js';
import type { OutboundPolicy } from '../upstream/outbound-guard.js';
import { type RemoteMcpFetch, remoteMcpFetcher } from '../upstream/remote-mcp-fetch.js';

export interface McpConnectionRequest {
  url: string;
  redirectUri: string;
  clientName: string;
  clientId?: string;
  clientSecret?: string;
  scopes?: string[];
  /**
   * The https URL of the client ID metadata document Portico serves for this connection; absent
   * when the public URL is not https (the specification requires https client IDs).
   */
  clientMetadataUrl?: string;
}

/** A client_id that is an https URL names a client ID metadata document (the MCP specification's CIMD). */
export function isClientMetadataUrl(clientId: string): boolean {
  try {
    const url = new URL(clientId);
    return url.protocol === 'https:' && url.pathname !== '/';
  } catch {
    return false;
  }
}

/**
 * What a connection to a remote MCP server needs before it is stored: the server's authorization
 * facts (discovered from its 401) and Portico's client there, in the specification's order — the
 * operator's pre-registered client when the connection names one (an https client_id is a client
 * ID metadata document the operator publishes), else the client ID metadata document Portico
 * serves for the connection where the authorization server takes those, else a client registered
 * dynamically now. Scopes, unless the connection names them: the 401's `scope`, else the protected
 * resource's `scopes_supported`, else none; with `offline_access` where the authorization server
 * offers it, so the end user's grant outlives the first access token. `sandboxFetch` replaces the
 * guarded fetch for a sandbox connection, whose server is the sandbox's own (sandbox/mcp.ts).
 */
export async function connectMcpServer(
  provider: ProviderDefinition,
  request: McpConnectionRequest,
  policy: OutboundPolicy,
  sandboxFetch?: RemoteMcpFetch,
): Promise<{ clientId: string; clientSecret: string; scopes: string[]; server: McpServerRecord }> {
  const allowed = provider.mcp!.registration;
  const remoteMcpFetch = sandboxFetch ?? remoteMcpFetcher(policy);
  let facts: Awaited<ReturnType<typeof discoverMcpAuthorization>>;
  try {
    const found = await discoverMcpAuthorization(request.url, remoteMcpFetch);
    if ('authorization' in found) return openServer(provider, found, request);
    facts = found;
  } catch (error) {
    throw asProblem(error);
  }
  const discovered = facts.challenge_scopes ?? facts.scopes_supported ?? [];
  const scopes =
    request.scopes ??
    (provider.oauth?.defaultScopes.length
      ? provider.oauth.defaultScopes
      : facts.offline_access && discovered.length && !discovered.includes('offline_access')
        ? [...discovered, 'offline_access']
        : discovered);
  const server = (
    registration: McpServerRecord['registration'],
    method: NonNullable<McpServerRecord['token_endpoint_auth_method']>,
  ): McpServerRecord => ({
    url: facts.url,
    resource: facts.resource,
    issuer: facts.issuer,
    authorization_endpoint: facts.authorization_endpoint,
    token_endpoint: facts.token_endpoint,
    ...(facts.revocation_endpoint ? { revocation_endpoint: facts.revocation_endpoint } : {}),
    registration,
    token_endpoint_auth_method: method,
    ...(facts.scopes_supported ? { scopes_supported: facts.scopes_supported } : {}),
    ...(facts.transport ? { transport: facts.transport } : {}),
  });
  if (request.clientId) {
    const secret = request.clientSecret ?? '';
    const metadataDocument =
      !secret && facts.client_id_metadata_document_supported && isClientMetadataUrl(request.clientId);
    return {
      clientId: request.clientId,
      clientSecret: secret,
      scopes,
      server: metadataDocument
        ? server('client_id_metadata_document', 'none')
        : server('pre_registered', tokenAuthMethodFor(facts, secret !== '')),
    };
  }
  if (
    allowed.includes('client_id_metadata_document') &&
    facts.client_id_metadata_document_supported &&
    request.clientMetadataUrl
  ) {
    // The authorization server fetches the document at this URL: no registration request is sent.
    return {
      clientId: request.clientMetadataUrl,
      clientSecret: '',
      scopes,
      server: server('client_id_metadata_document', 'none'),
    };
  }
  if (allowed.includes('dynamic') && facts.registration_endpoint) {
    try {
      const registered = await registerMcpClient(
        facts,
        { redirectUri: request.redirectUri, name: request.clientName, scopes },
        remoteMcpFetch,
      );
      return {
        clientId: registered.clientId,
        clientSecret: registered.clientSecret,
        scopes,
        server: server('dynamic', registered.tokenEndpointAuthMethod),
      };
    } catch (error) {
      throw asProblem(error);
    }
  }
  throw new Problem(
    'invalid_input',
    `The authorization server of ${provider.displayName} (${facts.issuer}) offers no dynamic client registration${allowed.includes('dynamic') ? '' : ' that this definition allows'}${facts.client_id_metadata_document_supported && !request.clientMetadataUrl ? ', and Portico serves its client ID metadata document only under an https PORTICO_PUBLIC_URL' : ''}; register an OAuth client there, create the connection with its client_id and client_secret, then add the connection's redirect_uri to that client.`,
    {
      errors: [{ path: '/client_id', message: 'is required: the server takes only pre-registered clients' }],
    },
  );
}

/**
 * A server that asks for no authorization: no client, no scopes, no authorization server. Its end
 * users still connect through the authorization link (which then asks nothing of them), so tools
 * run per user with the same accounts, records and guardrails.
 */
function openServer(
  provider: ProviderDefinition,
  { url, transport }: { url: string; transport?: 'sse' },
  request: McpConnectionRequest,
): { clientId: string; clientSecret: string; scopes: string[]; server: McpServerRecord } {
  const given = (['clientId', 'clientSecret', 'scopes'] as const).filter((f) => request[f] !== undefined);
  if (given.length) {
    const names = { clientId: 'client_id', clientSecret: 'client_secret', scopes: 'scopes' } as const;
    throw new Problem(
      'invalid_input',
      `${provider.displayName}'s server at ${url} asks for no authorization, so the connection takes no ${given.map((f) => names[f]).join(', ')}; remove ${given.length > 1 ? 'them' : 'it'}.`,
      {
        errors: given.map((f) => ({
          path: `/${names[f]}`,
          message: 'not used by a server without authorization',
        })),
      },
    );
  }
  return {
    clientId: '',
    clientSecret: '',
    scopes: [],
    server: {
      url,
      resource: url,
      issuer: '',
      authorization_endpoint: '',
      token_endpoint: '',
      registration: 'none',
      ...(transport ? { transport } : {}),
    },
  };
}

function asProblem(error: unknown): Problem {
  if (!(error instanceof McpDiscoveryError)) throw error;
  return new Problem(error.transient ? 'upstream_unavailable' : 'upstream_validation', error.message);
}
