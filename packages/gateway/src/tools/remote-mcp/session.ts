import type { Readable } from 'node:stream';
import type { ProviderClient } from '../../accounts/provider-client.js';
import { Problem } from '../../errors/problem.js';
import { upstreamProblem } from '../../upstream/errors.js';

/** The MCP revision Portico's client speaks to remote servers. */
export const MCP_CLIENT_PROTOCOL = '2025-06-18';
const SESSIONS_KEPT = 10_000;

/** A tool as a remote MCP server lists it (tools/list). */
export interface RemoteToolSpec {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  annotations?: {
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    title?: string;
  };
}

interface RpcAnswer {
  result?: unknown;
  error?: { code: number; message: string };
}

/** What the server said besides the answer (notifications in the answer's event stream). */
export interface Heard {
  /** The server sent `notifications/tools/list_changed`: its tool list is no longer the cached one. */
  toolsChanged?: () => void;
}

const TOOLS_CHANGED = 'notifications/tools/list_changed';
/** Resuming a closed response stream (SEP-1699): the wait when the server names none, at most. */
const DEFAULT_RETRY_MS = 1000;
const MAX_RETRY_MS = 10_000;
const RESUMES = 5;
const RESUME_WITHIN_MS = 60_000;
/** The revision of the HTTP+SSE transport. */
const SSE_PROTOCOL = '2024-11-05';

/**
 * Portico's MCP client for remote servers (Streamable HTTP): JSON-RPC over the account's
 * authenticated provider client, so the end user's token, the one refresh after a 401, the rate
 * governor, pooling and timeouts are those of every other provider call. The official SDK's client
 * would bring its own transport and token handling beside them. Sessions (`Mcp-Session-Id`) are
 * kept per account and opened again when the server forgets one (404). A server may send
 * notifications in the event stream of any answer; `notifications/tools/list_changed` is passed to
 * the caller's `Heard`, so the account's cached tool list is dropped.
 */
export class McpSessions {
  private readonly sessions = new Map<string, string | null>();
  private id = 1;

  async listTools(client: ProviderClient, accountId: string): Promise<RemoteToolSpec[]> {
    // A list_changed heard while listing is answered by the listing itself.
    const tools: RemoteToolSpec[] = [];
    let cursor: string | undefined;
    // A bounded number of pages: a server cannot keep a listing going for ever.
    for (let page = 0; page < 20; page++) {
      const result = (await this.call(client, accountId, 'tools/list', cursor ? { cursor } : {})) as {
        tools?: RemoteToolSpec[];
        nextCursor?: string;
      };
      tools.push(...(result.tools ?? []).filter((t) => typeof t?.name === 'string'));
      if (!result.nextCursor) break;
      cursor = result.nextCursor;
    }
    return tools;
  }

  async callTool(
    client: ProviderClient,
    accountId: string,
    name: string,
    args: Record<string, unknown>,
    heard: Heard = {},
  ): Promise<Record<string, unknown>> {
    const result = (await this.call(client, accountId, 'tools/call', { name, arguments: args }, heard)) as {
      content?: Array<{ type: string; text?: string }>;
      structuredContent?: Record<string, unknown>;
      isError?: boolean;
    };
    if (result.isError) {
      const text = (result.content ?? [])
        .map((c) => (c.type === 'text' ? c.text : undefined))
        .filter(Boolean)
        .join(' ');
      throw new Problem(
        'upstream_validation',
        `${client.provider.displayName}'s tool ${name} reported an error: ${text || 'no message'}`,
        { upstream: { status: 200, body: result } },
      );
    }
    return {
      ...(result.structuredContent !== undefined ? { structured_content: result.structuredContent } : {}),
      content: result.content ?? [],
    };
  }

  private async call(
    client: ProviderClient,
    accountId: string,
    method: string,
    params: Record<string, unknown>,
    heard: Heard = {},
  ): Promise<unknown> {
    if (client.endpoints.mcpTransport === 'sse') return this.callOverSse(client, method, params, heard);
    let session = this.sessions.get(accountId);
    if (session === undefined) session = await this.open(client, accountId);
    const message = () => ({ jsonrpc: '2.0', id: this.id++, method, params });
    let answer = await this.send(client, message(), session, heard);
    if (answer === 'session_gone') {
      session = await this.open(client, accountId);
      answer = await this.send(client, message(), session, heard);
    }
    if (answer === 'session_gone')
      throw new Problem('upstream_error', 'The MCP server keeps forgetting its session.');
    if (answer.error) {
      throw new Problem(
        answer.error.code === -32602 ? 'upstream_validation' : 'upstream_error',
        `${client.provider.displayName} answered ${method} with error ${answer.error.code}: ${answer.error.message}`,
        { upstream: { status: 200, body: answer } },
      );
    }
    return answer.result ?? {};
  }

  private async open(client: ProviderClient, accountId: string): Promise<string | null> {
    this.sessions.delete(accountId);
    const sent = await this.post(client, {
      jsonrpc: '2.0',
      id: this.id++,
      method: 'initialize',
      params: {
        protocolVersion: MCP_CLIENT_PROTOCOL,
        capabilities: {},
        clientInfo: { name: 'portico', version: '1' },
      },
    });
    const header = sent.headers['mcp-session-id'];
    const session = typeof header === 'string' && header ? header : null;
    const answer = this.read(client, sent);
    if (answer.error) {
      throw new Problem(
        'upstream_error',
        `${client.provider.displayName} refused initialize: ${answer.error.message}`,
      );
    }
    await this.post(client, { jsonrpc: '2.0', method: 'notifications/initialized' }, session);
    if (this.sessions.size >= SESSIONS_KEPT) this.sessions.delete(this.sessions.keys().next().value!);
    this.sessions.set(accountId, session);
    return session;
  }

  private async send(
    client: ProviderClient,
    message: Record<string, unknown>,
    session: string | null,
    heard: Heard,
  ): Promise<RpcAnswer | 'session_gone'> {
    const sent = await this.post(client, message, session);
    if (sent.status === 404 && session) return 'session_gone';
    if (sent.status === 200 && String(sent.headers['content-type'] ?? '').includes('text/event-stream')) {
      const stream = parseStream(sent.text);
      if (stream.lastId !== undefined && !answerIn(stream.messages, message.id)) {
        if (stream.messages.some((m) => m.method === TOOLS_CHANGED)) heard.toolsChanged?.();
        return this.resume(client, message.id, session, stream, heard);
      }
    }
    return this.read(client, sent, heard);
  }

  /**
   * A response stream the server closed before the answer, having given its events ids: the
   * stream is resumed by GET with `Last-Event-ID`, after the `retry` the server asked for (SEP-1699),
   * until the answer arrives; a bounded number of times, within a bounded wait.
   */
  private async resume(
    client: ProviderClient,
    id: unknown,
    session: string | null,
    from: { lastId?: string | undefined; retryMs?: number | undefined },
    heard: Heard,
  ): Promise<RpcAnswer> {
    let lastId = from.lastId!;
    let retryMs = from.retryMs ?? DEFAULT_RETRY_MS;
    const deadline = Date.now() + RESUME_WITHIN_MS;
    for (let round = 0; round < RESUMES && Date.now() + retryMs < deadline; round++) {
      await new Promise((resolve) => setTimeout(resolve, retryMs));
      const opened = await client.openStream({
        url: this.url(client),
        headers: {
          accept: 'text/event-stream',
          'mcp-protocol-version': MCP_CLIENT_PROTOCOL,
          'last-event-id': lastId,
          ...(session ? { 'mcp-session-id': session } : {}),
        },
      });
      if (opened.status !== 200) {
        const text = Buffer.isBuffer(opened.body) ? opened.body.toString('utf8') : await drain(opened.body);
        throw upstreamProblem(client.provider, opened.status, parse(text), opened.headers);
      }
      const found = await readUntilAnswer(opened.body, id, deadline, heard);
      if (found.answer) return found.answer;
      lastId = found.lastId ?? lastId;
      retryMs = found.retryMs ?? retryMs;
    }
    throw new Problem(
      'upstream_timeout',
      `${client.provider.displayName} closed the answer's event stream and its resumed streams carried no answer within ${RESUME_WITHIN_MS / 1000} s; try again.`,
    );
  }

  /**
   * One request on the older HTTP+SSE transport (2024-11-05): a GET opens the event stream, whose
   * first `endpoint` event names where to POST messages (on the stream's origin only: the token
   * goes nowhere else); every answer arrives on the stream. Each call opens its own session
   * (initialize, initialized, the request) and closes it, so no stream stays open between calls.
   */
  private async callOverSse(
    client: ProviderClient,
    method: string,
    params: Record<string, unknown>,
    heard: Heard,
  ): Promise<unknown> {
    const url = this.url(client);
    const opened = await client.openStream({
      url,
      headers: { accept: 'text/event-stream', 'mcp-protocol-version': SSE_PROTOCOL },
    });
    if (opened.status !== 200 || Buffer.isBuffer(opened.body)) {
      const text = Buffer.isBuffer(opened.body) ? opened.body.toString('utf8') : await drain(opened.body);
      const challenge = String(opened.headers['www-authenticate'] ?? '');
      if (opened.status === 403 && /error="?insufficient_scope/.test(challenge))
        throw stepUp(client, challenge);
      throw upstreamProblem(
        client.provider,
        opened.status >= 400 ? opened.status : 502,
        parse(text),
        opened.headers,
      );
    }
    const events = new SseReader(opened.body, Date.now() + RESUME_WITHIN_MS);
    try {
      const endpoint = await events.next((e) => e.event === 'endpoint');
      const target = endpoint ? new URL(endpoint.data.trim(), url) : undefined;
      if (!target || target.origin !== new URL(url).origin) {
        throw new Problem(
          'upstream_error',
          `${client.provider.displayName}'s event stream named ${target ? `${target.origin}, another origin,` : 'no endpoint'} to send messages to.`,
        );
      }
      const ask = async (message: Record<string, unknown>) => {
        const sent = await client.exchange({
          url: target.href,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(message),
        });
        if (sent.status >= 400) this.read(client, sent);
        if (message.id === undefined) return undefined;
        const got = await events.next((e) => {
          const m = parse(e.data) as Record<string, unknown> | undefined;
          if (m?.method === TOOLS_CHANGED) heard.toolsChanged?.();
          return m !== undefined && m.id === message.id && ('result' in m || 'error' in m);
        });
        if (!got) {
          throw new Problem(
            'upstream_timeout',
            `${client.provider.displayName} sent no answer to ${method} on its event stream.`,
          );
        }
        return parse(got.data) as RpcAnswer;
      };
      const init = await ask({
        jsonrpc: '2.0',
        id: this.id++,
        method: 'initialize',
        params: {
          protocolVersion: SSE_PROTOCOL,
          capabilities: {},
          clientInfo: { name: 'portico', version: '1' },
        },
      });
      if (init?.error)
        throw new Problem(
          'upstream_error',
          `${client.provider.displayName} refused initialize: ${init.error.message}`,
        );
      await ask({ jsonrpc: '2.0', method: 'notifications/initialized' });
      const answer = await ask({ jsonrpc: '2.0', id: this.id++, method, params });
      if (answer?.error) {
        throw new Problem(
          answer.error.code === -32602 ? 'upstream_validation' : 'upstream_error',
          `${client.provider.displayName} answered ${method} with error ${answer.error.code}: ${answer.error.message}`,
          { upstream: { status: 200, body: answer } },
        );
      }
      return answer?.result ?? {};
    } finally {
      events.close();
    }
  }

  private url(client: ProviderClient): string {
    const url = client.endpoints.mcpUrl;
    if (!url) throw new Error(`${client.provider.key} is not a remote MCP server`);
    return url;
  }

  private post(client: ProviderClient, message: Record<string, unknown>, session?: string | null) {
    const url = this.url(client);
    return client.exchange({
      url,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MCP_CLIENT_PROTOCOL,
        ...(session ? { 'mcp-session-id': session } : {}),
      },
      body: JSON.stringify(message),
    });
  }

  /** The JSON-RPC answer in a response (JSON, or the first answer in an event stream), or its problem. */
  private read(
    client: ProviderClient,
    sent: { status: number; headers: Record<string, string | string[] | undefined>; text: string },
    heard: Heard = {},
  ): RpcAnswer {
    const { status, headers, text } = sent;
    if (status === 202) return { result: {} };
    const type = String(headers['content-type'] ?? '');
    let body: unknown;
    if (type.includes('text/event-stream')) {
      const { messages } = parseStream(text);
      body = messages.find((m) => 'result' in m || 'error' in m);
      if (messages.some((m) => m.method === TOOLS_CHANGED)) heard.toolsChanged?.();
    } else {
      body = parse(text);
    }
    if (status === 403) {
      const challenge = String(headers['www-authenticate'] ?? '');
      if (/error="?insufficient_scope/.test(challenge)) throw stepUp(client, challenge);
    }
    if (status >= 400) throw upstreamProblem(client.provider, status, body, headers);
    if (!body || typeof body !== 'object') {
      throw new Problem(
        'upstream_error',
        `${client.provider.displayName} answered with a body that is not JSON-RPC.`,
        {
          upstream: { status, body: text.slice(0, 2000) },
        },
      );
    }
    return body as RpcAnswer;
  }
}

function parse(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}

/**
 * An event stream's JSON-RPC messages, in order (the answer, and the notifications and requests a
 * server may send before it), with the last event id and `retry` it gave, for resuming it.
 */
function parseStream(text: string): {
  messages: Array<Record<string, unknown>>;
  lastId?: string | undefined;
  retryMs?: number | undefined;
} {
  const out: ReturnType<typeof parseStream> = { messages: [] };
  for (const block of text.split(/\r?\n\r?\n/)) addEvent(out, block);
  return out;
}

/** One event block's fields into `out` (data lines joined; an `id` and `retry` kept). */
function addEvent(out: ReturnType<typeof parseStream>, block: string): void {
  const data: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon === 0) continue; // a comment
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') data.push(value);
    else if (field === 'id' && !value.includes('\0')) out.lastId = value;
    else if (field === 'retry' && /^\d+$/.test(value)) out.retryMs = Math.min(Number(value), MAX_RETRY_MS);
  }
  const message = parse(data.join('\n'));
  if (message && typeof message === 'object' && !Array.isArray(message))
    out.messages.push(message as Record<string, unknown>);
}

/** The answer to request `id` among the messages. */
function answerIn(messages: Array<Record<string, unknown>>, id: unknown): RpcAnswer | undefined {
  return messages.find((m) => m.id === id && ('result' in m || 'error' in m)) as RpcAnswer | undefined;
}

/**
 * Reads a resumed stream until the answer to `id` (then ends it), the stream's end, or the
 * deadline; notifications on the way are heard.
 */
async function readUntilAnswer(
  body: Buffer | Readable,
  id: unknown,
  deadline: number,
  heard: Heard,
): Promise<{ answer?: RpcAnswer; lastId?: string | undefined; retryMs?: number | undefined }> {
  const out: ReturnType<typeof parseStream> = { messages: [] };
  const check = () => {
    if (out.messages.some((m) => m.method === TOOLS_CHANGED)) heard.toolsChanged?.();
    const answer = answerIn(out.messages, id);
    out.messages = [];
    return answer;
  };
  if (Buffer.isBuffer(body)) {
    for (const block of body.toString('utf8').split(/\r?\n\r?\n/)) addEvent(out, block);
    const answer = check();
    return { ...(answer ? { answer } : {}), lastId: out.lastId, retryMs: out.retryMs };
  }
  let pending = '';
  const timer = setTimeout(() => body.destroy(), Math.max(0, deadline - Date.now()));
  try {
    for await (const chunk of body) {
      pending += (chunk as Buffer).toString('utf8');
      const blocks = pending.split(/\r?\n\r?\n/);
      pending = blocks.pop() ?? '';
      for (const block of blocks) addEvent(out, block);
      const answer = check();
      if (answer) return { answer, lastId: out.lastId, retryMs: out.retryMs };
    }
  } catch {
    // Ended at the deadline, or by the server: resumed again while time remains.
  } finally {
    clearTimeout(timer);
    body.destroy();
  }
  return { lastId: out.lastId, retryMs: out.retryMs };
}

/** The events of a stream as they arrive, each asked for by a test of its fields, until a deadline. */
class SseReader {
  private readonly iterator: AsyncIterator<unknown>;
  private pending = '';
  private readonly ready: Array<{ event: string; data: string }> = [];
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly body: Readable,
    deadline: number,
  ) {
    this.iterator = body[Symbol.asyncIterator]();
    this.timer = setTimeout(() => body.destroy(), Math.max(0, deadline - Date.now()));
  }

  /** The first event (from now on) that `wanted` accepts; undefined when the stream ends first. */
  async next(
    wanted: (e: { event: string; data: string }) => boolean,
  ): Promise<{ event: string; data: string } | undefined> {
    for (;;) {
      while (this.ready.length) {
        const event = this.ready.shift()!;
        if (wanted(event)) return event;
      }
      let chunk: IteratorResult<unknown>;
      try {
        chunk = await this.iterator.next();
      } catch {
        return undefined;
      }
      if (chunk.done) return undefined;
      this.pending += (chunk.value as Buffer).toString('utf8');
      const blocks = this.pending.split(/\r?\n\r?\n/);
      this.pending = blocks.pop() ?? '';
      for (const block of blocks) {
        let event = 'message';
        const data: string[] = [];
        for (const line of block.split(/\r?\n/)) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (data.length) this.ready.push({ event, data: data.join('\n') });
      }
    }
  }

  close(): void {
    clearTimeout(this.timer);
    this.body.destroy();
  }
}

async function drain(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A call the server refused for a scope the token lacks (`403`, `WWW-Authenticate: Bearer
 * error="insufficient_scope", scope="…"`): the end user must authorize again with those scopes.
 */
function stepUp(client: ProviderClient, challenge: string): Problem {
  const scopes = /scope="([^"]*)"/.exec(challenge)?.[1]?.split(' ').filter(Boolean) ?? [];
  return new Problem(
    'upstream_forbidden',
    `${client.provider.displayName} needs more scopes for this call${scopes.length ? ` (${scopes.join(' ')})` : ''}: add them to the connection's scopes (PATCH /api/v1/connections/{name}) and send the user through a new authorization link (POST /api/v1/connected-accounts/authorization-link), then call again.`,
    { extensions: { step_up: true, required_scopes: scopes } },
  );
}
