#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { isEmulatorKey } from './core/modules.js';
import { startEmulators } from './core/start.js';
import type { EmulatorKey, RegisteredClient } from './core/types.js';

const USAGE = `Usage: portico-emulators [--port 4010] [--host 127.0.0.1] [--client provider:id:secret:redirect_uri]...

Runs the Notion, Google, HubSpot and Microsoft emulators (OAuth servers + APIs) on one port.
  --port, PORT      port to listen on (default 4010)
  --host, HOST      interface to bind (default 127.0.0.1)
  --client          pre-register an OAuth client; repeatable. The redirect URI may contain colons.
  --logger          log every request`;

/** "provider:id:secret:redirect" — the redirect URI keeps its own colons (http://…:port/…). */
function parseClient(spec: string): { key: EmulatorKey; client: RegisteredClient } {
  const [key, clientId, clientSecret, ...rest] = spec.split(':');
  const redirect = rest.join(':');
  if (!isEmulatorKey(key) || !clientId || !clientSecret || !redirect) {
    throw new Error(
      `--client must be provider:id:secret:redirect_uri (provider notion|google|hubspot|microsoft), got ${spec}`,
    );
  }
  return { key, client: { clientId, clientSecret, redirectUris: [redirect] } };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      client: { type: 'string', multiple: true },
      logger: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const port = Number(values.port ?? process.env.PORT ?? 4010);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`invalid port: ${values.port ?? process.env.PORT}`);
  const host = values.host ?? process.env.HOST ?? '127.0.0.1';
  const clients = (values.client ?? []).map(parseClient);

  const emulators = await startEmulators({ port, host, logger: values.logger ?? false });
  for (const { key, client } of clients) {
    const existing = emulators.control.clients(key).find((c) => c.clientId === client.clientId);
    emulators.control.registerClient(key, {
      ...client,
      redirectUris: [...new Set([...(existing?.redirectUris ?? []), ...client.redirectUris])],
    });
  }

  console.log(`Portico emulators listening on ${emulators.url}`);
  for (const key of emulators.control.emulators()) {
    const { authorize, token } = emulators.control.oauthEndpoints(key);
    console.log(`  ${key.padEnd(10)} ${emulators.urls[key]}`);
    console.log(`  ${''.padEnd(10)}   authorize ${emulators.url}${authorize}`);
    console.log(`  ${''.padEnd(10)}   token     ${emulators.url}${token}`);
  }
  console.log(`  control    ${emulators.url}/_emulator`);
  for (const { key, client } of clients)
    console.log(`  client     ${key} ${client.clientId} → ${client.redirectUris[0]}`);

  const stop = () => {
    emulators.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
