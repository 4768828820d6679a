import type { Server as HttpServer } from 'node:http';
import {
  createServer as createHttp2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session,
} from 'node:http2';
import type { Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';

/** What an HTTP/2 client sends first (RFC 9113 §3.4): "prior knowledge" cleartext HTTP/2. */
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
/** A TLS record carrying a handshake (the ClientHello). */
const TLS_HANDSHAKE = 0x16;
/** An idle HTTP/2 connection is closed after this long (clients reconnect as needed). */
const HTTP2_IDLE_MS = 120_000;

export interface ProtocolOptions {
  /** Requests that arrive over HTTP/2. */
  http2(req: Http2ServerRequest, res: Http2ServerResponse): void;
  /** Certificate and key: the port then speaks TLS only, with ALPN choosing HTTP/1.1 or HTTP/2. */
  tls?: { cert: string; key: string } | undefined;
  /** Time a new connection has to show its protocol (and finish a TLS handshake). */
  firstBytesTimeoutMs: number;
  /** Answers a cleartext connection made to a TLS port, then closes it. */
  refusePlaintext(socket: Socket): void;
}

/**
 * One port, every protocol: HTTP/1.1, cleartext HTTP/2 with prior knowledge (recognised by its
 * preface) and, with a certificate, TLS whose ALPN picks either. The Node HTTP/1 server Fastify
 * manages stays the listening server, unchanged (timeouts, connection tracking, idle closing); each
 * new connection is read up to its first bytes, the bytes put back, and the socket handed to the
 * HTTP/1 server's own connection handler or to an HTTP/2 server. Only connection set-up changes, so
 * requests on an established HTTP/1.1 connection (the proxy's fast path) cost what they did.
 * (httpolyglot does the same dispatch but replaces the server object Fastify manages.)
 */
export function serveAllProtocols(server: HttpServer, options: ProtocolOptions): void {
  // http.Server handles connections in its 'connection' listener: keep it, put the dispatch first.
  const http1Listeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  const toHttp1 = (socket: Socket) => {
    for (const listener of http1Listeners) listener.call(server, socket);
  };

  const http2 = createHttp2Server({}, options.http2);
  http2.setTimeout(HTTP2_IDLE_MS);
  const sessions = new Set<Http2Session>();
  http2.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
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
  const toHttp2 = (socket: Socket) => http2.emit('connection', socket);

  const secure = options.tls
    ? createTlsServer(
        {
          cert: options.tls.cert,
          key: options.tls.key,
          handshakeTimeout: options.firstBytesTimeoutMs,
          // Browsers and curl offer both and get HTTP/1.1, which the REST API, the proxy and the
          // hosted pages speak; gRPC clients offer h2 alone.
          ALPNCallback: ({ protocols }) =>
            protocols.includes('http/1.1') ? 'http/1.1' : protocols.includes('h2') ? 'h2' : undefined,
        },
        (socket: TLSSocket) => (socket.alpnProtocol === 'h2' ? toHttp2(socket) : toHttp1(socket)),
      )
    : undefined;
  secure?.on('tlsClientError', (_error, socket) => socket.destroy());

  server.on('connection', (socket: Socket) => {
    firstBytes(socket, options.firstBytesTimeoutMs, (seen) => {
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
