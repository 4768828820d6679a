import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import type { FaultSpec } from './faults.js';
import type { EmulatorControl } from './host.js';
import { isEmulatorKey } from './modules.js';
import type { EmulatorKey, GrantFilter } from './types.js';

class BadRequest extends Error {}

type Body = Record<string, unknown>;

function asBody(value: unknown): Body {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Body) : {};
}

function optionalString(body: Body, name: string): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new BadRequest(`${name} must be a string`);
  return value;
}

function requiredString(body: Body, name: string): string {
  const value = optionalString(body, name);
  if (!value) throw new BadRequest(`${name} is required`);
  return value;
}

function emulatorOf(control: EmulatorControl, body: Body, required: true): EmulatorKey;
function emulatorOf(control: EmulatorControl, body: Body, required: false): EmulatorKey | undefined;
function emulatorOf(control: EmulatorControl, body: Body, required: boolean): EmulatorKey | undefined {
  const value = body.emulator;
  if (value === undefined && !required) return undefined;
  if (!isEmulatorKey(value) || !control.emulators().includes(value)) {
    throw new BadRequest(`emulator must be one of: ${control.emulators().join(', ')}`);
  }
  return value;
}

function filterOf(body: Body): GrantFilter {
  const filter: GrantFilter = {
    userId: optionalString(body, 'user_id'),
    clientId: optionalString(body, 'client_id'),
  };
  const provider = optionalString(body, 'provider');
  if (provider !== undefined) filter.provider = provider;
  return filter;
}

function optionalNumber(body: Body, name: string): number | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new BadRequest(`${name} must be a number`);
  return value;
}

function faultOf(control: EmulatorControl, body: Body): FaultSpec {
  const path = requiredString(body, 'path');
  try {
    new RegExp(path);
  } catch {
    throw new BadRequest('path must be a valid regular expression');
  }
  const query = optionalString(body, 'query');
  if (query !== undefined) {
    try {
      new RegExp(query);
    } catch {
      throw new BadRequest('query must be a valid regular expression');
    }
  }
  const headers = body.headers;
  if (headers !== undefined && (typeof headers !== 'object' || headers === null || Array.isArray(headers))) {
    throw new BadRequest('headers must be an object');
  }
  const times = optionalNumber(body, 'times');
  if (times !== undefined && (!Number.isInteger(times) || times < 1)) {
    throw new BadRequest('times must be a positive integer');
  }
  const spec: FaultSpec = {
    emulator: emulatorOf(control, body, false),
    method: optionalString(body, 'method'),
    path,
    ...(query === undefined ? {} : { query }),
    status: optionalNumber(body, 'status'),
    headers: headers
      ? Object.fromEntries(Object.entries(headers as Record<string, unknown>).map(([k, v]) => [k, String(v)]))
      : undefined,
    body: body.body,
    latencyMs: optionalNumber(body, 'latency_ms'),
    drop: body.drop === true,
    times,
  };
  if (spec.status === undefined && !spec.latencyMs && !spec.drop) {
    throw new BadRequest('a fault needs status, latency_ms or drop');
  }
  return spec;
}

/** The `/_emulator` HTTP API: the same operations as the in-process control handle. */
export function registerControlRoutes(app: FastifyInstance, control: EmulatorControl): void {
  app.setErrorHandler((error: FastifyError, _req, reply: FastifyReply) => {
    // Control errors are the caller's mistakes (unknown user, bad value), hence 400 by default.
    const status = error instanceof BadRequest ? 400 : (error.statusCode ?? 400);
    return reply
      .code(status)
      .send({ error: status === 400 ? 'invalid_request' : 'error', message: error.message });
  });
  overviewRoutes(app, control);
  clientAndTokenRoutes(app, control);
  definitionRoutes(app, control);
  faultAndCounterRoutes(app, control);
}

/** What runs here, and starting over. */
function overviewRoutes(app: FastifyInstance, control: EmulatorControl): void {
  app.get('/', async () => ({
    emulators: control.emulators().map((key) => {
      const endpoints = control.oauthEndpoints(key);
      return {
        key,
        base_path: control.prefix(key),
        authorize_path: endpoints.authorize,
        token_path: endpoints.token,
        users: control.users(key),
      };
    }),
  }));

  app.post('/reset', async (req) => {
    const body = asBody(req.body);
    control.reset({ clients: body.clients === true });
    return { ok: true };
  });
}

/** OAuth clients, tokens and grants, and the access token lifetime. */
function clientAndTokenRoutes(app: FastifyInstance, control: EmulatorControl): void {
  app.get('/clients', async () =>
    Object.fromEntries(
      control.emulators().map((key) => [
        key,
        control.clients(key).map((c) => ({
          client_id: c.clientId,
          redirect_uris: c.redirectUris,
          ...(c.provider ? { provider: c.provider } : {}),
        })),
      ]),
    ),
  );

  app.post('/clients', async (req, reply) => {
    const body = asBody(req.body);
    const emulator = emulatorOf(control, body, true);
    const redirectUris = body.redirect_uris;
    if (!Array.isArray(redirectUris) || !redirectUris.every((u) => typeof u === 'string')) {
      throw new BadRequest('redirect_uris must be an array of strings');
    }
    const clientId = requiredString(body, 'client_id');
    const provider = optionalString(body, 'provider');
    control.registerClient(emulator, {
      clientId,
      clientSecret: requiredString(body, 'client_secret'),
      redirectUris: redirectUris as string[],
      ...(provider ? { provider } : {}),
    });
    return reply.code(201).send({
      emulator,
      client_id: clientId,
      redirect_uris: redirectUris,
      ...(provider ? { provider } : {}),
    });
  });

  app.post('/tokens', async (req) => {
    const body = asBody(req.body);
    const scopes = body.scopes;
    if (scopes !== undefined && (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string'))) {
      throw new BadRequest('scopes must be an array of strings');
    }
    return control.issueToken(emulatorOf(control, body, true), {
      userId: requiredString(body, 'user_id'),
      clientId: optionalString(body, 'client_id'),
      scopes: scopes as string[] | undefined,
      provider: optionalString(body, 'provider'),
    });
  });

  app.post('/tokens/expire', async (req) => {
    const body = asBody(req.body);
    return { expired: control.expireAccessTokens(emulatorOf(control, body, true), filterOf(body)) };
  });

  app.post('/grants/revoke', async (req) => {
    const body = asBody(req.body);
    return { revoked: control.revokeGrants(emulatorOf(control, body, true), filterOf(body)) };
  });

  app.post('/config', async (req) => {
    const body = asBody(req.body);
    const emulator = emulatorOf(control, body, true);
    if (!('access_token_ttl_seconds' in body)) throw new BadRequest('access_token_ttl_seconds is required');
    const ttl = body.access_token_ttl_seconds;
    if (ttl !== null && (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl < 0)) {
      throw new BadRequest('access_token_ttl_seconds must be a non-negative number or null');
    }
    control.setAccessTokenTtl(emulator, ttl);
    return { emulator, access_token_ttl_seconds: ttl };
  });
}

/** The definitions emulator's provider definitions, and the API keys it refuses. */
function definitionRoutes(app: FastifyInstance, control: EmulatorControl): void {
  app.get('/definitions', async () => ({ keys: control.definitions() }));

  app.post('/definitions', async (req, reply) => {
    control.registerDefinition(asBody(req.body));
    return reply.code(204).send();
  });

  app.post('/api-keys/revoke', async (req) => {
    const body = asBody(req.body);
    const provider = requiredString(body, 'provider');
    control.revokeApiKey(provider, requiredString(body, 'key'));
    return { ok: true };
  });
}

/** Injected faults, and the counters of requests and grants. */
function faultAndCounterRoutes(app: FastifyInstance, control: EmulatorControl): void {
  app.post('/faults', async (req, reply) => {
    const id = control.addFault(faultOf(control, asBody(req.body)));
    return reply.code(201).send({ id });
  });

  app.delete('/faults', async () => {
    control.clearFaults();
    return { ok: true };
  });

  app.get('/counters', async () => control.counters());

  app.post('/counters/reset', async () => {
    control.resetCounters();
    return { ok: true };
  });
}
