import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Credential, CredentialManager } from '../accounts/credentials.js';
import { Problem } from '../errors/problem.js';
import { discard, type UpstreamHttp, type UpstreamResponse } from '../upstream/http.js';
import { upstreamTarget } from './path.js';

/** Headers that describe one hop, or that only Portico may set; never forwarded either way. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);
const ROUTING = ['connection_name', 'identifier', 'x-connection-name', 'x-identifier'];
// Expect: 100-continue is answered by Portico's own server before the body is read; the upstream
// request already has the whole body ready (or streaming), so it has nothing to wait for.
const NOT_FORWARDED_UP = new Set([...HOP_BY_HOP, ...ROUTING, 'authorization', 'cookie', 'expect']);
// A provider's cookies belong to its own domain; they are not handed to the caller.
const NOT_FORWARDED_DOWN = new Set([...HOP_BY_HOP, 'set-cookie']);

/** Bodies up to this size are buffered, so a 401 can be answered by refreshing and replaying them. */
const REPLAYABLE_BODY_BYTES = 1024 * 1024;

export interface ProxyDeps {
  credentials: CredentialManager;
  http: UpstreamHttp;
}

/**
 * ANY /proxy/{path}: the caller's request, sent to the provider as the end user. Bodies stream both
 * ways (a 1 GiB upload or download never sits in memory); the upstream answer comes back as is.
 */
export class ProxyService {
  constructor(private readonly deps: ProxyDeps) {}

  async forward(req: FastifyRequest, reply: FastifyReply, environmentId: string): Promise<FastifyReply> {
    const ref = {
      environmentId,
      connectionName: routingHeader(req, 'connection_name', 'x-connection-name'),
      identifier: routingHeader(req, 'identifier', 'x-identifier'),
    };
    const [rawPath = '/', rawQuery = ''] = splitOnce(req.url.slice('/proxy'.length) || '/', '?');

    const { credentials, http } = this.deps;
    let credential = credentials.cachedForRef(ref) ?? (await credentials.forRef(ref));
    // Validated before anything is read from the body or sent anywhere.
    const target = upstreamTarget(credential.provider, credential.endpoints.apiBaseUrl, rawPath, rawQuery);

    const raw = req.body as IncomingMessage | undefined;
    const body = hasBody(req, raw) ? await this.prepareBody(req, raw) : null;
    // A caller that goes away mid-response destroys the relayed body, which aborts the upstream request.
    // (Properties spelled out: a leading object spread costs more than the rest of this function.)
    const send = (c: Credential) =>
      http.send({
        origin: target.origin,
        path: target.path,
        method: req.method,
        headers: this.upstreamHeaders(req, c),
        body,
      });
    let response = await send(credential);
    const replayable = body === null || Buffer.isBuffer(body);
    if (response.statusCode === 401 && replayable) {
      discard(response.body);
      credential = await credentials.afterUnauthorized(credential);
      response = await send(credential);
    }
    return this.relay(reply, response);
  }

  private async prepareBody(req: FastifyRequest, raw: IncomingMessage): Promise<Buffer | IncomingMessage> {
    const length = req.headers['content-length'];
    if (req.headers['transfer-encoding'] === undefined && Number(length) <= REPLAYABLE_BODY_BYTES) {
      const chunks: Buffer[] = [];
      for await (const chunk of raw) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    }
    return raw;
  }

  private upstreamHeaders(req: FastifyRequest, credential: Credential): Record<string, string | string[]> {
    const headers: Record<string, string | string[]> = {};
    const incoming = req.headers;
    for (const name in incoming) {
      const value = incoming[name];
      if (value !== undefined && !NOT_FORWARDED_UP.has(name)) headers[name] = value;
    }
    const defaults = credential.provider.api.defaultHeaders;
    for (const name in defaults) {
      if (headers[name] === undefined) headers[name] = defaults[name] as string;
    }
    headers.authorization = `Bearer ${credential.accessToken}`;
    return headers;
  }

  private relay(reply: FastifyReply, response: UpstreamResponse): FastifyReply {
    const headers: Record<string, string | string[]> = {};
    for (const name in response.headers) {
      if (!NOT_FORWARDED_DOWN.has(name)) headers[name] = response.headers[name]!;
    }
    if (!Buffer.isBuffer(response.body))
      return reply.code(response.statusCode).headers(headers).send(response.body);
    // A whole (small) body goes straight to the socket in one write, the common JSON case, where
    // Fastify's reply pipeline would cost more than the bytes.
    headers['x-request-id'] = String(reply.request.id);
    reply.hijack();
    reply.raw.writeHead(response.statusCode, headers);
    reply.raw.end(response.body);
    return reply;
  }
}

function hasBody(req: FastifyRequest, raw: IncomingMessage | undefined): raw is IncomingMessage {
  if (!raw) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function routingHeader(req: FastifyRequest, name: string, alias: string): string {
  const value = req.headers[name] ?? req.headers[alias];
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) {
    throw new Problem(
      'missing_header',
      `The "${name}" header (or "${alias}") is required: it names the ${name === 'identifier' ? 'end user whose account to use' : 'connection to use'}.`,
      {
        errors: [{ path: `/headers/${name}`, message: 'is required' }],
      },
    );
  }
  return text;
}

function splitOnce(value: string, separator: string): [string, string] {
  const index = value.indexOf(separator);
  return index === -1 ? [value, ''] : [value.slice(0, index), value.slice(index + 1)];
}
