import { Problem } from '../errors/problem.js';
import { checkWebhookUrl, guardedAgent } from '../upstream/outbound-guard.js';
import { loadUndici } from '../upstream/undici.js';

/**
 * MCP OAuth clients: what is checked of a client's metadata (its redirect URIs) and the client ID
 * metadata documents a client may name itself by instead of registering (an https URL as client_id,
 * the MCP authorization specification of 2025-11-25).
 */

/** An OAuth error as the OAuth endpoints answer it (RFC 6749 §5.2 JSON), not a problem. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = 'OAuthError';
  }

  body(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

/** A client the authorization endpoint knows: registered, or described by its metadata document. */
export interface McpOAuthClient {
  clientId: string;
  clientName: string | null;
  redirectUris: string[];
  /** none | client_secret_post | client_secret_basic (a metadata document's client is always none). */
  authMethod: string;
  kind: 'registered' | 'metadata_document';
}

export const MAX_REDIRECT_URIS = 10;
export const MAX_URI_LENGTH = 2048;
export const MAX_CLIENT_NAME_LENGTH = 200;

const LOOPBACK = /^(localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\])$/i;

/**
 * What is wrong with `value` as a redirect URI, or undefined: an absolute https URL, or http on a
 * loopback address (a native client's local listener, RFC 8252 §7.3); no fragment, no user name.
 */
export function redirectUriFault(value: unknown): string | undefined {
  if (typeof value !== 'string' || !value) return 'must be a non-empty string';
  if (value.length > MAX_URI_LENGTH) return `must be at most ${MAX_URI_LENGTH} characters`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we refuse
  if (/[\u0000-\u0020\u007f-\u009f]/.test(value)) return 'must not contain spaces or control characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (value.includes('#')) return 'must not have a fragment';
  if (url.username || url.password) return 'must not contain a user name or password';
  if (url.protocol === 'https:' && url.hostname) return undefined;
  if (url.protocol === 'http:' && LOOPBACK.test(url.hostname)) return undefined;
  return 'must be an https URL, or an http URL on a loopback address (127.0.0.1, [::1] or localhost)';
}

/**
 * Whether `given` is one of the registered redirect URIs: exactly, except that a loopback http URI
 * matches on any port (a native client listens on whatever port is free, RFC 8252 §7.3).
 */
export function redirectUriRegistered(registered: string[], given: string): boolean {
  if (registered.includes(given)) return true;
  if (redirectUriFault(given) !== undefined) return false;
  const url = new URL(given);
  if (url.protocol !== 'http:') return false;
  const withoutPort = (u: URL) => `${u.protocol}//${u.hostname}${u.pathname}${u.search}`;
  return registered.some((r) => {
    const candidate = new URL(r);
    return candidate.protocol === 'http:' && withoutPort(candidate) === withoutPort(url);
  });
}

/** The client_id of a client ID metadata document: an http(s) URL (http only with private addresses allowed). */
export function isMetadataDocumentClientId(clientId: string): boolean {
  return /^https?:\/\//i.test(clientId);
}

export interface MetadataDocumentOptions {
  /** Loopback and private addresses and plain http allowed (local development, tests). */
  allowPrivate: boolean;
  timeoutMs?: number;
  maxBytes?: number;
  cacheMs?: number;
}

/**
 * Fetches and checks client ID metadata documents: with a deadline, a size cap and the webhooks'
 * SSRF guard (public addresses only, checked as the socket connects), no redirects followed. A
 * document that passed is kept for `cacheMs`.
 */
export class ClientMetadataDocuments {
  private readonly cache = new Map<string, { client: McpOAuthClient; until: number }>();
  private readonly pending = new Map<string, Promise<McpOAuthClient>>();
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly cacheMs: number;

  constructor(private readonly options: MetadataDocumentOptions) {
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.maxBytes = options.maxBytes ?? 5 * 1024;
    this.cacheMs = options.cacheMs ?? 5 * 60_000;
  }

  async client(clientId: string): Promise<McpOAuthClient> {
    const cached = this.cache.get(clientId);
    if (cached && cached.until > Date.now()) return cached.client;
    let loading = this.pending.get(clientId);
    if (!loading) {
      loading = this.load(clientId).finally(() => this.pending.delete(clientId));
      this.pending.set(clientId, loading);
    }
    const client = await loading;
    if (this.cache.size >= 1000) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(clientId, { client, until: Date.now() + this.cacheMs });
    return client;
  }

  private async load(clientId: string): Promise<McpOAuthClient> {
    const refuse = (why: string) =>
      new OAuthError(
        'invalid_client',
        `client_id ${clientId} is not a usable client ID metadata document: ${why}`,
      );
    if (clientId.length > MAX_URI_LENGTH) throw refuse(`the URL is longer than ${MAX_URI_LENGTH} characters`);
    let url: URL;
    try {
      url = await checkWebhookUrl(clientId, this.options.allowPrivate, '/client_id');
    } catch (error) {
      if (error instanceof Problem)
        throw refuse(error.options.errors?.[0]?.message ?? 'it is not a public https URL');
      throw error;
    }
    if (url.hash || clientId.includes('#')) throw refuse('the URL has a fragment');
    if (url.pathname === '/' || /(^|\/)\.\.?(\/|$)/.test(url.pathname))
      throw refuse('the URL needs a path, without "." or ".." segments');
    const document = await this.fetchDocument(url, refuse);
    if (document.client_id !== clientId) throw refuse('its "client_id" is not the URL it was fetched from');
    for (const field of ['client_secret', 'client_secret_expires_at']) {
      if (field in document) throw refuse(`a metadata document must not hold "${field}"`);
    }
    const method = document.token_endpoint_auth_method ?? 'none';
    if (method !== 'none')
      throw refuse(
        `token_endpoint_auth_method "${String(method)}" is not supported for such clients; use "none" (PKCE protects the code)`,
      );
    const uris = document.redirect_uris;
    if (!Array.isArray(uris) || !uris.length || uris.length > MAX_REDIRECT_URIS)
      throw refuse(`"redirect_uris" must list 1 to ${MAX_REDIRECT_URIS} URIs`);
    for (const [i, uri] of uris.entries()) {
      const fault = redirectUriFault(uri);
      if (fault) throw refuse(`redirect_uris[${i}] ${fault}`);
    }
    const name = document.client_name;
    return {
      clientId,
      clientName:
        typeof name === 'string' && name.trim() ? name.trim().slice(0, MAX_CLIENT_NAME_LENGTH) : null,
      redirectUris: uris as string[],
      authMethod: 'none',
      kind: 'metadata_document',
    };
  }

  private async fetchDocument(
    url: URL,
    refuse: (why: string) => OAuthError,
  ): Promise<Record<string, unknown>> {
    const { request } = await loadUndici();
    const agent = await guardedAgent(
      { allowPrivate: this.options.allowPrivate },
      { timeoutMs: this.timeoutMs },
    );
    try {
      const res = await request(url, {
        method: 'GET',
        dispatcher: agent,
        headers: { accept: 'application/json', 'user-agent': 'Portico-MCP-OAuth/1' },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw refuse(`fetching it answered HTTP ${res.statusCode} (redirects are not followed)`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > this.maxBytes) {
          res.body.destroy();
          throw refuse(`it is larger than ${this.maxBytes} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
      let document: unknown;
      try {
        document = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        throw refuse('it is not JSON');
      }
      if (!document || typeof document !== 'object' || Array.isArray(document))
        throw refuse('it is not a JSON object');
      return document as Record<string, unknown>;
    } catch (error) {
      if (error instanceof OAuthError) throw error;
      const code = (error as { code?: string }).code;
      throw refuse(
        code === 'EADDRBLOCKED'
          ? 'its host resolves to a private or reserved address'
          : `it could not be fetched within ${this.timeoutMs} ms (${code ?? (error as Error).name})`,
      );
    } finally {
      void agent.close().catch(() => {});
    }
  }
}
