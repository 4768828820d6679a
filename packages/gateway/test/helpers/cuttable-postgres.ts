import net from 'node:net';
import { POSTGRES_URL } from './backends.js';

export interface CuttablePostgres {
  /** The database URL through the pass-through. */
  url: string;
  /** Drops every connection and refuses new ones for `ms`; resolves when connections are allowed again. */
  cut(ms: number): Promise<void>;
  close(): Promise<void>;
}

/** A TCP pass-through to PostgreSQL that can drop every connection and refuse new ones for a while. */
export async function cuttablePostgres(): Promise<CuttablePostgres> {
  const target = new URL(POSTGRES_URL);
  const sockets = new Set<net.Socket>();
  let refusing = false;
  const server = net.createServer((client) => {
    if (refusing) return client.destroy();
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
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
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
