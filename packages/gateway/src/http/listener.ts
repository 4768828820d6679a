import type { Server as HttpServer } from 'node:http';
import {
  constants,
  createServer as createHttp2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session,
} from 'node:http2';
import type { Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import ipaddr from 'ipaddr.js';
import { PROBLEM_CONTENT_TYPE, Problem } from '../errors/problem.js';
import { rawProblemResponse } from './errors.js';

/** What an HTTP/2 client sends first (RFC 9113 §3.4): "prior knowledge" cleartext HTTP/2. */
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
/** A TLS record carrying a handshake (the ClientHello). */
const TLS_HANDSHAKE = 0x16;
/** An idle HTTP/2 connection is closed after this long (clients reconnect as needed). */
const HTTP2_IDLE_MS = 120_000;
/** How often a refusal of the same kind to the same address is logged again. */
const REFUSAL_LOG_MS = 60_000;
/** The key of a count kept for every address together. */
const ALL = '*';
/**
 * Streams a session may have open at once until it has made an authenticated request (then
 * PORTICO_HTTP2_MAX_STREAMS). HTTP/2 suggests at least 100, for parallelism, but only an
 * authenticated client needs any: at 100 streams a session, 20,000 unauthenticated streams left the
 * allocator ~40 MiB it never gave back; at 10 nothing measurable. A client queues the streams over
 * the limit (nghttp2 does), so one that authenticates waits for its first answer at most.
 */
const UNTRUSTED_STREAMS = 10;

/** Bounds on what one client address, and everyone together, may hold open (see config.ts). */
export interface ConnectionLimits {
  /** Open connections from one client address (an IPv6 /64), any protocol; 0: unbounded. */
  perAddress: number;
  /** Concurrent streams in one HTTP/2 session (its SETTINGS_MAX_CONCURRENT_STREAMS). */
  http2Streams: number;
  /** HTTP/2 sessions from one client address. */
  http2SessionsPerAddress: number;
  /** HTTP/2 sessions altogether. */
  http2Sessions: number;
}

export interface ProtocolOptions {
  /** Requests that arrive over HTTP/2. */
  http2(req: Http2ServerRequest, res: Http2ServerResponse): void;
  /** Certificate and key: the port then speaks TLS only, with ALPN choosing HTTP/1.1 or HTTP/2. */
  tls?: { cert: string; key: string } | undefined;
  /**
   * Time a new connection has to show its protocol (and finish a TLS handshake), and an HTTP/2
   * session to make an authenticated request (PORTICO_HEADERS_TIMEOUT_MS).
   */
  headersTimeoutMs: number;
  /** Time an HTTP/2 request body has to arrive once its headers are in (PORTICO_BODY_TIMEOUT_MS). */
  bodyTimeoutMs: number;
  limits: ConnectionLimits;
  /** Answers a cleartext connection made to a TLS port, then closes it. */
  refusePlaintext(socket: Socket): void;
  /** A request id for answers given before any route runs. */
  requestId(): string;
  logger: { warn(fields: object, message: string): void };
}

/** Sessions that have not made an authenticated request yet, and the streams they get once they do. */
const untrusted = new WeakMap<Http2Session, number>();

/**
 * Marks an HTTP/2 session that has made an authenticated request: it may now open
 * PORTICO_HTTP2_MAX_STREAMS streams at once (a SETTINGS frame says so), and it stays open. Any
 * other is closed once the headers timeout has passed since it began: an unauthenticated peer holds
 * a session (and the nghttp2 state behind it) for seconds, not the two idle minutes a client gets.
 */
export function trustSession(session: Http2Session): void {
  const streams = untrusted.get(session);
  if (streams === undefined) return;
  untrusted.delete(session);
  if (session.destroyed || streams <= UNTRUSTED_STREAMS) return;
  try {
    session.settings({ maxConcurrentStreams: streams });
  } catch {
    // A session already closing: it keeps the smaller limit, which it no longer needs.
  }
}

/**
 * One port, every protocol: HTTP/1.1, cleartext HTTP/2 with prior knowledge (recognised by its
 * preface) and, with a certificate, TLS whose ALPN picks either. The Node HTTP/1 server Fastify
 * manages stays the listening server, unchanged (timeouts, connection tracking, idle closing); each
 * new connection is read up to its first bytes, the bytes put back, and the socket handed to the
 * HTTP/1 server's own connection handler or to an HTTP/2 server. Only connection set-up changes, so
 * requests on an established HTTP/1.1 connection (the proxy's fast path) cost what they did.
 * (httpolyglot does the same dispatch but replaces the server object Fastify manages.)
 *
 * What a client may hold is bounded here, for every protocol: connections per address (refused
 * with a 429 where an answer can be read), HTTP/2 sessions per address and altogether (refused with
 * GOAWAY), streams per session; and HTTP/2 gets HTTP/1.1's deadlines (see http2Deadlines).
 */
export function serveAllProtocols(server: HttpServer, options: ProtocolOptions): void {
  // http.Server handles connections in its 'connection' listener: keep it, put the dispatch first.
  const http1Listeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  const toHttp1 = (socket: Socket) => {
    for (const listener of http1Listeners) listener.call(server, socket);
  };

  const deadlines = http2Deadlines(options);
  const http2 = createHttp2Server(
    { settings: { maxConcurrentStreams: Math.min(UNTRUSTED_STREAMS, options.limits.http2Streams) } },
    (req, res) => {
      deadlines.request(req, res);
      options.http2(req, res);
    },
  );
  http2.setTimeout(HTTP2_IDLE_MS);
  const sessions = new Set<Http2Session>();
  const sessionsPerAddress = new OpenCounts(
    options.limits.http2SessionsPerAddress,
    'HTTP/2 sessions from one address',
    options.logger,
  );
  const sessionsInAll = new OpenCounts(options.limits.http2Sessions, 'HTTP/2 sessions', options.logger);
  // The address of the connection being handed to HTTP/2, which makes its session synchronously:
  // the session's own socket is a wrapper (see toHttp2) that does not know the address.
  let arriving = 'unknown';
  http2.on('session', (session) => {
    const address = arriving;
    if (!sessionsInAll.take(ALL)) {
      refuseSession(session);
      return;
    }
    if (!sessionsPerAddress.take(address)) {
      sessionsInAll.release(ALL);
      refuseSession(session);
      return;
    }
    sessions.add(session);
    untrusted.set(session, options.limits.http2Streams);
    deadlines.sessionStarted(session);
    session.once('close', () => {
      sessions.delete(session);
      deadlines.sessionClosed(session);
      sessionsPerAddress.release(address);
      sessionsInAll.release(ALL);
    });
  });
  // Sockets handed to HTTP/2 or TLS are not tracked by the HTTP/1 server: closing must reach them.
  const handedOff = new Set<Socket>();
  const closeAll = server.closeAllConnections.bind(server);
  Object.assign(server, {
    // Fastify calls this on close: in-flight streams finish, new ones are refused (GOAWAY).
    closeHttp2Sessions: () => {
      for (const session of sessions) session.close();
    },
    // Called when the shutdown grace period is over.
    closeAllConnections: () => {
      closeAll();
      for (const socket of handedOff) socket.destroy();
    },
  });
  const toHttp2 = (socket: Socket) => {
    arriving = addressKey(socket.remoteAddress);
    http2.emit('connection', socket);
    arriving = 'unknown';
  };

  const secure = options.tls
    ? createTlsServer(
        {
          cert: options.tls.cert,
          key: options.tls.key,
          handshakeTimeout: options.headersTimeoutMs,
          // Browsers and curl offer both and get HTTP/1.1, which the REST API, the proxy and the
          // hosted pages speak; gRPC clients offer h2 alone.
          ALPNCallback: ({ protocols }) =>
            protocols.includes('http/1.1') ? 'http/1.1' : protocols.includes('h2') ? 'h2' : undefined,
        },
        (socket: TLSSocket) => (socket.alpnProtocol === 'h2' ? toHttp2(socket) : toHttp1(socket)),
      )
    : undefined;
  secure?.on('tlsClientError', (_error, socket) => socket.destroy());

  const perAddress = options.limits.perAddress;
  const connections = new OpenCounts(perAddress, 'connections from one address', options.logger);
  const refuseBusy = (socket: Socket) => {
    // Over TLS nothing readable can be said before a handshake, which is not worth making.
    if (secure) {
      socket.destroy();
      return;
    }
    // Said at once, before the request, and closed once written: waiting to see the protocol, or
    // lingering, would keep the descriptor a flood of connections is after.
    const problem = new Problem(
      'rate_limited',
      `This address has ${perAddress} connections open to Portico already (PORTICO_MAX_CONNECTIONS_PER_ADDRESS); reuse or close some, then retry.`,
      { retryAfterMs: 1000 },
    );
    socket.on('error', () => {});
    socket.end(rawProblemResponse(problem, options.requestId()), () => socket.destroy());
  };

  server.on('connection', (socket: Socket) => {
    if (perAddress) {
      const address = addressKey(socket.remoteAddress);
      if (!connections.take(address)) {
        refuseBusy(socket);
        return;
      }
      socket.once('close', () => connections.release(address));
    }
    firstBytes(socket, options.headersTimeoutMs, (seen) => {
      if (secure || seen.subarray(0, PREFACE.length).equals(PREFACE)) {
        handedOff.add(socket);
        socket.once('close', () => handedOff.delete(socket));
      }
      if (secure) {
        if (seen[0] === TLS_HANDSHAKE) secure.emit('connection', socket);
        else options.refusePlaintext(socket);
      } else if (seen.length >= PREFACE.length && seen.subarray(0, PREFACE.length).equals(PREFACE)) {
        // Node's HTTP/2 reads a native socket handle directly and would miss the bytes put back;
        // through the stream interface it sees them.
        const handle = (socket as unknown as { _handle?: { isStreamBase?: boolean } })._handle;
        if (handle) handle.isStreamBase = false;
        toHttp2(socket);
      } else {
        toHttp1(socket);
      }
    });
  });
}

/** GOAWAY with ENHANCE_YOUR_CALM; the error is only the server's 'sessionError', unheard. */
function refuseSession(session: Http2Session): void {
  session.destroy(new Error('too many HTTP/2 sessions'), constants.NGHTTP2_ENHANCE_YOUR_CALM);
}

/**
 * HTTP/1.1's deadlines for HTTP/2, where Node's HTTP/1 server is not there to keep them: a session
 * must make an authenticated request within the headers timeout (a bare preface, or a stream whose
 * headers never end, is closed then), and each request body must arrive within the body timeout of
 * its headers (408 if nothing was answered yet, else the stream is reset). A request answered
 * before its body is in has its stream closed at once (RST_STREAM NO_ERROR, RFC 9113 §8.1) instead
 * of waiting for the rest. Each kind of deadline is checked on one timer for all sessions.
 */
function http2Deadlines(options: ProtocolOptions) {
  const sessions = new Deadlines<Http2Session>(options.headersTimeoutMs, (session) => {
    if (untrusted.has(session)) session.destroy();
  });
  const bodies = new Deadlines<Http2ServerResponse>(options.bodyTimeoutMs, (res) => {
    const { req, stream } = res;
    // Arrived in time, though perhaps not read yet.
    if (req.complete || stream.destroyed || stream.state.remoteClose) return;
    if (res.headersSent) {
      stream.close(constants.NGHTTP2_CANCEL);
      return;
    }
    const problem = new Problem(
      'request_timeout',
      `The request body did not arrive within ${options.bodyTimeoutMs} ms of its headers; send it again, whole.`,
    );
    try {
      res.writeHead(problem.status, { 'content-type': PROBLEM_CONTENT_TYPE });
      res.end(JSON.stringify(problem.toBody(options.requestId())));
    } catch {
      // A stream the compatibility layer will not answer on is reset instead: this runs on a
      // timer, where a throw would end the process.
      stream.close(constants.NGHTTP2_CANCEL);
    }
  });
  return {
    sessionStarted: (session: Http2Session) => sessions.add(session),
    sessionClosed: (session: Http2Session) => sessions.delete(session),
    request: (req: Http2ServerRequest, res: Http2ServerResponse) => {
      const { stream } = req;
      if (stream.endAfterHeaders) return;
      bodies.add(res);
      stream.once('close', () => bodies.delete(res));
      // The stream's own 'finish' (the response's end is sent); the response's comes at its close.
      stream.once('finish', () => {
        if (!req.complete && !stream.destroyed && !stream.state.remoteClose)
          stream.close(constants.NGHTTP2_NO_ERROR);
      });
    },
  };
}

/**
 * Items that must be done within one fixed time of being added, kept in the order added (which,
 * with one timeout for all, is the order of their deadlines) and checked on one timer that runs
 * only while some are pending: a check looks at the expired ones and the first that is not.
 */
class Deadlines<T> {
  private readonly pending = new Map<T, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ms: number,
    private readonly expire: (item: T) => void,
  ) {}

  add(item: T): void {
    this.pending.set(item, performance.now() + this.ms);
    // As often as Node checks HTTP/1.1 header deadlines (connectionsCheckingInterval in app.ts).
    this.timer ??= setInterval(() => this.check(), Math.min(1000, this.ms / 2)).unref();
  }

  delete(item: T): void {
    this.pending.delete(item);
  }

  private check(): void {
    const now = performance.now();
    for (const [item, deadline] of this.pending) {
      if (deadline > now) break;
      this.pending.delete(item);
      this.expire(item);
    }
    if (!this.pending.size) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

/**
 * How many of something each key holds open, up to `limit` (0: no bound). A refusal is logged
 * when it starts and then at most once a minute per key, with the number refused meanwhile: an
 * address hammering the bound must not flood the log.
 */
class OpenCounts {
  private readonly counts = new Map<string, number>();
  private readonly refused = new Map<string, { loggedAt: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly what: string,
    private readonly logger: ProtocolOptions['logger'],
  ) {}

  /** Counts one more for `key`, or returns false when it holds `limit` already. */
  take(key: string): boolean {
    const count = this.counts.get(key) ?? 0;
    if (this.limit && count >= this.limit) {
      const now = performance.now();
      const refused = this.refused.get(key);
      if (!refused) {
        this.refused.set(key, { loggedAt: now, count: 0 });
        this.log(key, 1);
      } else if (now - refused.loggedAt >= REFUSAL_LOG_MS) {
        this.log(key, refused.count + 1);
        refused.loggedAt = now;
        refused.count = 0;
      } else {
        refused.count++;
      }
      return false;
    }
    this.counts.set(key, count + 1);
    return true;
  }

  private log(key: string, refused: number): void {
    const fields = { limit: this.limit, refused, ...(key === ALL ? {} : { address: key }) };
    this.logger.warn(fields, `too many ${this.what}: refused`);
  }

  release(key: string): void {
    const count = (this.counts.get(key) ?? 1) - 1;
    if (count > 0) {
      this.counts.set(key, count);
    } else {
      this.counts.delete(key);
      this.refused.delete(key);
    }
  }
}

/**
 * The client a connection is counted against: its address, an IPv4-mapped IPv6 address as IPv4,
 * and an IPv6 address by its /64, since one host is usually given a whole /64 to pick from.
 */
function addressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  // IPv4, the common case, without parsing.
  if (!address.includes(':')) return address;
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice(7);
  if (!ipaddr.IPv6.isValid(address)) return address;
  const parts = ipaddr.IPv6.parse(address).parts.slice(0, 4);
  return `${parts.map((part) => part.toString(16)).join(':')}::/64`;
}

/**
 * Reads until the protocol is known (a TLS record, the whole HTTP/2 preface, or anything that is
 * not its beginning), puts the bytes back and calls `route`. A silent or failing connection is
 * destroyed: nothing has answered it yet.
 */
function firstBytes(socket: Socket, timeoutMs: number, route: (seen: Buffer) => void): void {
  let seen: Buffer = Buffer.alloc(0);
  const fail = () => socket.destroy();
  const done = () => {
    socket.removeListener('readable', onReadable);
    socket.removeListener('error', fail);
    socket.removeListener('end', fail);
    socket.removeListener('timeout', fail);
    socket.setTimeout(0);
    socket.unshift(seen);
    route(seen);
  };
  const onReadable = () => {
    let chunk: Buffer | null;
    // biome-ignore lint/suspicious/noAssignInExpressions: the stream read loop
    while ((chunk = socket.read() as Buffer | null) !== null)
      seen = seen.length ? Buffer.concat([seen, chunk]) : chunk;
    if (!seen.length) return;
    const known = Math.min(seen.length, PREFACE.length);
    if (
      seen[0] === TLS_HANDSHAKE ||
      known === PREFACE.length ||
      !seen.subarray(0, known).equals(PREFACE.subarray(0, known))
    ) {
      done();
    }
  };
  socket.on('error', fail);
  socket.on('end', fail);
  socket.setTimeout(timeoutMs, fail);
  socket.on('readable', onReadable);
}
