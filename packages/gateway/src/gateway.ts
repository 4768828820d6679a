import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { AccessTokenIssuer } from './auth/access-tokens.js';
import { bootstrapStore } from './auth/bootstrap.js';
import type { IssuedClient } from './auth/client-credentials.js';
import type { Config } from './config.js';
import { ConnectionService } from './connections/service.js';
import { buildApp } from './http/app.js';
import { createLogger } from './logger.js';
import { type Keyring, loadKeyring } from './secrets/keyring.js';
import { type Database, openDatabase } from './store/db.js';
import { migrate } from './store/migrate.js';

export interface Gateway {
  app: FastifyInstance;
  config: Config;
  db: Database;
  keyring: Keyring;
  logger: Logger;
  /** Credentials created on this start (first start on an empty store only). */
  bootstrapClient?: IssuedClient;
  /** Listens on config.host:config.port; resolves with the bound URL. */
  listen(): Promise<string>;
  /** Stops accepting, lets in-flight requests finish (up to the grace period), closes the store. */
  close(): Promise<void>;
}

export interface GatewayOverrides {
  logger?: Logger;
  /** An already open database (tests); closed by the gateway on close(). */
  db?: Database;
  /** PostgreSQL schema to use (tests). */
  schema?: string;
}

export function embeddedDataPath(config: Config): string {
  return path.join(config.dataDir, 'db');
}

export async function openStore(config: Config, schema?: string): Promise<Database> {
  return openDatabase({
    url: config.databaseUrl,
    dataDir: embeddedDataPath(config),
    ...(schema ? { schema } : {}),
  });
}

/** The composition root: config in, a ready (not yet listening) gateway out. */
export async function createGateway(config: Config, overrides: GatewayOverrides = {}): Promise<Gateway> {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const { keyring, source } = await loadKeyring({
    masterKeys: config.masterKeys,
    usesPostgres: Boolean(config.databaseUrl),
    dataDir: config.dataDir,
  });
  if (source !== 'environment') {
    logger.warn(
      { key_file: path.join(config.dataDir, 'master.key'), generated: source === 'generated' },
      'PORTICO_MASTER_KEY is not set: stored secrets are sealed with a key kept in the data directory. Set PORTICO_MASTER_KEY for production.',
    );
  }
  const db = overrides.db ?? (await openStore(config, overrides.schema));
  try {
    const migrated = await migrate(db);
    if (migrated.applied.length) logger.info({ applied: migrated.applied }, 'database migrated');
    const { client } = await bootstrapStore(db);

    const tokens = new AccessTokenIssuer(keyring, config.publicUrl, config.accessTokenTtlSeconds);
    const connections = new ConnectionService({ db, keyring, publicUrl: config.publicUrl });
    const app = await buildApp({
      logger,
      bodyLimitBytes: config.bodyLimitBytes,
      services: { db, tokens, connections },
    });

    let closing: Promise<void> | undefined;
    return {
      app,
      config,
      db,
      keyring,
      logger,
      ...(client ? { bootstrapClient: client } : {}),
      async listen() {
        return app.listen({ port: config.port, host: config.host });
      },
      close() {
        closing ??= (async () => {
          const force = setTimeout(() => app.server.closeAllConnections(), config.shutdownGraceMs);
          force.unref();
          try {
            await app.close();
          } finally {
            clearTimeout(force);
            await db.close();
          }
        })();
        return closing;
      },
    };
  } catch (error) {
    await db.close();
    throw error;
  }
}
