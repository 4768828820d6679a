import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What the receiver answers a request with: a status, or 'hang' (never answers). */
export type Answer = number | 'hang' | { status: number; body: string };

/** A webhook receiver: a real HTTP server on loopback that records every request. */
export interface Receiver {
  url: string;
  received: Received[];
  /** Decides each answer (default 204); called with the request's index. */
  answer: (index: number, req: Received) => Answer;
  /** Parsed bodies of the requests verified with `secret` (throws on a bad signature). */
  verified(
    secret: string,
  ): Array<{ id: string; type: string; created_at: string; data: Record<string, unknown> }>;
  /** Resolves once `predicate` holds for the received requests (polling every 10 ms). */
  waitFor(predicate: (received: Received[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(path = '/hooks'): Promise<Receiver> {
  const hanging = new Set<http.ServerResponse>();
  const receiver: Receiver = {
    url: '',
    received: [],
    answer: () => 204,
    verified(secret) {
      const wh = new Webhook(secret);
      return receiver.received.map(
        (r) => wh.verify(r.body, r.headers as Record<string, string>) as ReturnType<Receiver['verified']>[0],
      );
    },
    async waitFor(predicate, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      while (!predicate(receiver.received)) {
        if (Date.now() > until) {
          throw new Error(
            `receiver: condition not met in ${timeoutMs} ms; got ${receiver.received.length} requests: ${receiver.received.map((r) => r.body.slice(0, 80)).join(' | ')}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    close: () =>
      new Promise((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: Received = {
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      const index = receiver.received.push(entry) - 1;
      const answer = receiver.answer(index, entry);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      const { status, body } = typeof answer === 'number' ? { status: answer, body: '' } : answer;
      res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return receiver;
}
