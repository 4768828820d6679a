import type { FastifyInstance } from 'fastify';
import { Problem } from '../../errors/problem.js';

const READY_TIMEOUT_MS = 2_000;

/** The three things /readyz asks of the store (the gateway hands it the database itself). */
export interface StoreReadiness {
  /** Reported in the body: 'pglite' or 'postgres'. */
  readonly kind: string;
  /** Resolves when the store answers a trivial query. */
  ping(): Promise<void>;
  /**
   * False while the notification listener is down or unconfirmed (other replicas' revocations may
   * go unheard, so NOTIFY-kept caches are bypassed).
   */
  listening(): boolean;
}

/**
 * /readyz: 503 when the database does not answer. A degraded notification listener is 200 with
 * `status: "degraded"` and `listener: "degraded"`: the replica still answers correctly (its caches
 * read through to the database meanwhile), only slower, and a load balancer acts on the status code
 * alone. Taking it out of rotation would gain nothing, and at a database failover every replica's
 * listener drops at once, which would take them all out.
 */
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
        { extensions: { listener: listenerState(opts.store) } },
      );
    } finally {
      clearTimeout(timer);
    }
    if (listenerState(opts.store) === 'degraded') {
      return {
        status: 'degraded',
        database: opts.store.kind,
        listener: 'degraded',
        detail:
          'The database notification listener is reconnecting or unconfirmed; cached client status and credentials are re-read from the database until it is back.',
      };
    }
    return { status: 'ready', database: opts.store.kind };
  });
}

function listenerState(store: StoreReadiness): 'ok' | 'degraded' {
  return store.listening() ? 'ok' : 'degraded';
}
