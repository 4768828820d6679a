import type { FastifyInstance } from 'fastify';
import { Problem } from '../../errors/problem.js';

const READY_TIMEOUT_MS = 2_000;

/** The three things /readyz asks of the store (the gateway hands it the database itself). */
export interface StoreReadiness {
  /** Reported in the body: 'pglite' or 'postgres'. */
  readonly kind: string;
  /** Resolves when the store answers a trivial query. */
  ping(): Promise<void>;
  /** False while the notification listener is down (other replicas' revocations are missed). */
  listening(): boolean;
}

export async function healthRoutes(app: FastifyInstance, opts: { store: StoreReadiness }): Promise<void> {
  app.get('/healthz', { logLevel: 'warn' }, async () => ({ status: 'ok' }));

  app.get('/readyz', { logLevel: 'warn' }, async () => {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        opts.store.ping(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('timeout')), READY_TIMEOUT_MS);
        }),
      ]);
    } catch {
      throw new Problem(
        'service_unavailable',
        'The database is not reachable; check DATABASE_URL and the database server.',
      );
    } finally {
      clearTimeout(timer);
    }
    if (!opts.store.listening()) {
      // Revocations and deletions made on other replicas are not reaching this one.
      throw new Problem(
        'service_unavailable',
        'The database notification listener is reconnecting; this replica may serve stale credentials until it is back.',
        { retryAfterMs: 1000 },
      );
    }
    return { status: 'ready', database: opts.store.kind };
  });
}
