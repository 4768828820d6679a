#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isEmulatorKey } from './core/modules.js';
import { startEmulators } from './core/start.js';
import type { EmulatorKey, RegisteredClient } from './core/types.js';

const USAGE = `Usage: portico-emulators [--port 4010] [--host 127.0.0.1] [--definition file.json]... [--client provider:id:secret:redirect_uri]...

Runs the Notion, Google, HubSpot and Microsoft emulators (OAuth servers + APIs) on one port, and the
definitions emulator, which plays any provider from its JSON definition under /definitions/{key}.
  --port, PORT      port to listen on (default 4010)
  --host, HOST      interface to bind (default 127.0.0.1)
  --definition      a provider definition (JSON file) for the definitions emulator to play; repeatable
  --client          pre-register an OAuth client; repeatable. The redirect URI may contain colons.
                    For a definition, the provider is definitions/{key}.
  --logger          log every request`;

/** "provider:id:secret:redirect" — the redirect URI keeps its own colons (http://…:port/…). */
function parseClient(spec: string): { key: EmulatorKey; client: RegisteredClient } {
  const [provider, clientId, clientSecret, ...rest] = spec.split(':');
  const redirect = rest.join(':');
  const [key, definition] = (provider ?? '').split('/');
  const needsDefinition = key === 'definitions';
  if (
    !isEmulatorKey(key) ||
    !clientId ||
    !clientSecret ||
    !redirect ||
    needsDefinition !== Boolean(definition)
  ) {
    throw new Error(
      `--client must be provider:id:secret:redirect_uri (provider notion|google|hubspot|microsoft|definitions/{key}), got ${spec}`,
    );
  }
  const client: RegisteredClient = { clientId, clientSecret, redirectUris: [redirect] };
  if (definition) client.provider = definition;
  return { key, client };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      client: { type: 'string', multiple: true },
      definition: { type: 'string', multiple: true },
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

  const definitions = (values.definition ?? []).map(
    (file) => JSON.parse(readFileSync(file, 'utf8')) as object,
  );

  const emulators = await startEmulators({ port, host, logger: values.logger ?? false });
  for (const definition of definitions) emulators.control.registerDefinition(definition);
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
    if (key === 'definitions') {
      // Each definition's real paths, under its key.
      for (const name of emulators.control.definitions())
        console.log(`  ${''.padEnd(10)}   ${name.padEnd(9)} ${emulators.urls[key]}/${name}`);
      continue;
    }
    console.log(`  ${''.padEnd(10)}   authorize ${emulators.url}${authorize}`);
    console.log(`  ${''.padEnd(10)}   token     ${emulators.url}${token}`);
  }
  console.log(`  control    ${emulators.url}/_emulator`);
  for (const { key, client } of clients)
    console.log(`  client     ${client.provider ?? key} ${client.clientId} → ${client.redirectUris[0]}`);

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
