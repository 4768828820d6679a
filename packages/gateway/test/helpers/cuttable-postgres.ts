import net from 'node:net';
import { POSTGRES_URL } from './backends.js';

export interface CuttablePostgres {
  /** The database URL through the pass-through. */
  url: string;
  /** Drops every connection and refuses new ones for `ms`; resolves when connections are allowed again. */
  cut(ms: number): Promise<void>;
  /**
   * Cuts every connection half-open for `ms`, as lost NAT or firewall state or a partition does: the
   * side toward PostgreSQL is reset (its backend ends) while the client's side stays open and goes
   * silent, forwarding nothing either way, for good. Connections opened meanwhile get no answer
   * until the network returns and are forwarded then, like a connect retried after the partition
   * heals. Resolves when new connections are forwarded again.
   */
  halfOpenCut(ms: number): Promise<void>;
  close(): Promise<void>;
}

interface Link {
  client: net.Socket;
  upstream: net.Socket;
  /** Cut half-open: the client's side must outlive the upstream one. */
  severed: boolean;
}

/** A TCP pass-through to PostgreSQL that can drop every connection, or cut them half-open, for a while. */
export async function cuttablePostgres(): Promise<CuttablePostgres> {
  const target = new URL(POSTGRES_URL);
  const sockets = new Set<net.Socket>();
  const links = new Set<Link>();
  let refusing = false;
  /** Connections waiting for a half-open cut to end; undefined when there is none. */
  let held: net.Socket[] | undefined;
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  };
  const forward = (client: net.Socket) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    track(upstream);
    const link: Link = { client, upstream, severed: false };
    links.add(link);
    // Either side closing closes the other, as one TCP connection would, unless cut half-open.
    const closeBoth = () => {
      links.delete(link);
      if (link.severed) return;
      client.destroy();
      upstream.destroy();
    };
    client.on('close', closeBoth);
    upstream.on('close', closeBoth);
    client.pipe(upstream).pipe(client);
  };
  // Half-open sockets must not answer a FIN with their own, as a dead path would not.
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    track(client);
    if (refusing) return client.destroy();
    if (held) {
      // Unread until then: what the client sends waits in the buffer, unanswered.
      client.pause();
      held.push(client);
      return;
    }
    forward(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `postgres://${target.username}@127.0.0.1:${port}${target.pathname}`,
    cut(ms: number) {
      refusing = true;
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => {
        setTimeout(() => {
          refusing = false;
          resolve();
        }, ms).unref();
      });
    },
    halfOpenCut(ms: number) {
      held ??= [];
      for (const link of links) {
        link.severed = true;
        link.client.unpipe(link.upstream);
        link.upstream.unpipe(link.client);
        // Whatever the client sends from now on vanishes.
        link.client.on('data', () => {});
        link.client.resume();
        link.upstream.resetAndDestroy();
      }
      links.clear();
      return new Promise<void>((resolve) => {
        setTimeout(() => {
          const waiting = held ?? [];
          held = undefined;
          for (const client of waiting) if (!client.destroyed) forward(client);
          resolve();
        }, ms).unref();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
