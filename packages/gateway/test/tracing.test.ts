import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { ACCOUNT_ACCESS_TOKEN, ACCOUNT_REFRESH_TOKEN } from '../src/secrets/sealed-columns.js';
import type { AccountRow } from '../src/store/accounts.js';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import {
  startReceiver as startWebhookReceiver,
  type Receiver as WebhookReceiver,
} from './helpers/receiver.js';

// The OTLP messages as OpenTelemetry defines them: the protobuf root that @opentelemetry/otlp-transformer
// (0.57, the last line that shipped it) generated from opentelemetry-proto. Nothing here is Portico's own.
const require = createRequire(import.meta.url);
const { opentelemetry } = require('otlp-proto-definitions/build/src/generated/root.js');
const ExportTraceServiceRequest = opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const ExportTraceServiceResponse = opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;

const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;
const STATUS_ERROR = 2;

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  status: number;
  attributes: Record<string, string | number | boolean>;
  resource: Record<string, string | number | boolean>;
}

interface Receiver {
  url: string;
  spans: ReceivedSpan[];
  /** The raw request bodies, to search for secrets in everything that was sent. */
  bodies: Buffer[];
  requests: number;
  close(): Promise<void>;
}

const hex = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('hex');

function anyValue(any: Record<string, unknown> | undefined): string | number | boolean {
  if (!any) return '';
  if (any.stringValue !== undefined && any.stringValue !== null) return any.stringValue as string;
  if (any.intValue !== undefined && any.intValue !== null) return Number(any.intValue);
  if (any.doubleValue !== undefined && any.doubleValue !== null) return any.doubleValue as number;
  if (any.boolValue !== undefined && any.boolValue !== null) return any.boolValue as boolean;
  return JSON.stringify(any);
}

function attributesOf(list: Array<{ key: string; value: Record<string, unknown> }> | undefined) {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, anyValue(kv.value)]));
}

/** An OTLP/HTTP trace receiver on loopback: POST /v1/traces, protobuf in, protobuf out. */
async function startOtlpReceiver(): Promise<Receiver> {
  const received: Receiver = {
    url: '',
    spans: [],
    bodies: [],
    requests: 0,
    close: async () => {},
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.requests++;
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      expect(req.headers['content-type']).toBe('application/x-protobuf');
      const body = Buffer.concat(chunks);
      received.bodies.push(body);
      const message = ExportTraceServiceRequest.decode(body);
      for (const resourceSpans of message.resourceSpans) {
        const resource = attributesOf(resourceSpans.resource?.attributes);
        for (const scopeSpans of resourceSpans.scopeSpans) {
          for (const span of scopeSpans.spans) {
            received.spans.push({
              traceId: hex(span.traceId),
              spanId: hex(span.spanId),
              parentSpanId: hex(span.parentSpanId),
              name: span.name,
              kind: span.kind,
              status: span.status?.code ?? 0,
              attributes: attributesOf(span.attributes),
              resource,
            });
          }
        }
      }
      res
        .writeHead(200, { 'content-type': 'application/x-protobuf' })
        .end(Buffer.from(ExportTraceServiceResponse.encode({}).finish()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  received.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  received.close = () => new Promise((resolve) => server.close(() => resolve()));
  return received;
}

/** A W3C traceparent as a caller would send it, with its trace id and the caller's span id. */
function callerTrace() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

describe('tracing settings', () => {
  it('is off without an endpoint, or when the SDK is disabled', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).tracing,
    ).toBeUndefined();
  });

  it('sends to /v1/traces of the base endpoint, or to the traces endpoint as given', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
      serviceName: 'portico',
    });
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp',
        OTEL_SERVICE_NAME: 'gateway-eu',
      }).tracing,
    ).toEqual({ tracesUrl: 'https://traces.example/otlp', serviceName: 'gateway-eu' });
  });

  it('refuses an endpoint that is not a URL and a protocol other than http/protobuf', () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT="collector:4318" is not an http\(s\) URL/,
    );
    expect(() =>
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      }),
    ).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL="grpc" is not supported/);
  });
});

describe.each(BACKENDS)('tracing on $name', (backend) => {
  let receiver: Receiver;
  let webhooks: WebhookReceiver;
  let t: TestGateway;
  let connection: string;
  let accountId: string;
  let closed = false;
  const secrets: string[] = [];

  const tokensOf = async (id: string) => {
    const [row] = await t.db.query<AccountRow>('SELECT * FROM connected_accounts WHERE id = $1', [id]);
    return [
      t.gateway.keyring.open(row!.access_token!, { ...ACCOUNT_ACCESS_TOKEN, rowId: id }),
      ...(row!.refresh_token
        ? [t.gateway.keyring.open(row!.refresh_token, { ...ACCOUNT_REFRESH_TOKEN, rowId: id })]
        : []),
    ];
  };

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    webhooks = await startWebhookReceiver();
    t = await startTestGateway(backend, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'portico-under-test',
      PORTICO_WEBHOOK_ALLOW_PRIVATE: 'true',
    });
    const hook = await t.api('/api/v1/webhooks', {
      method: 'POST',
      json: { url: webhooks.url, events: ['*'] },
    });
    expect(hook.status).toBe(201);
    ({ connection, accountId } = await sandboxAccount(t, { provider: 'notion', identifier: 'trace-user' }));
  });

  afterAll(async () => {
    if (!closed) await t?.close();
    await receiver?.close();
    await webhooks?.close();
  });

  // Both checks run on what the gateway sent before it closed (closing flushes the spans).
  const tool = callerTrace();
  const proxied = callerTrace();
  let toolStatus = 0;
  let proxyStatus = 0;

  it('makes the calls: a tool call that must refresh its token, then a proxied request', async () => {
    secrets.push(...(await tokensOf(accountId)));
    // The provider no longer takes the account's token: the call gets a 401, refreshes, and retries.
    const expire = await t.api(`/api/v1/sandbox/connections/${connection}/expire-tokens`, { method: 'POST' });
    expect(expire.status).toBe(200);
    const call = await t.api('/api/v1/tools/execute', {
      method: 'POST',
      headers: { traceparent: tool.traceparent, tracestate: 'vendor=opaque' },
      json: { tool_name: 'notes_user_list', identifier: 'trace-user', tool_input: {} },
    });
    toolStatus = call.status;
    expect(call.status).toBe(200);
    await call.arrayBuffer();
    secrets.push(...(await tokensOf(accountId)));

    const proxy = await t.api('/proxy/v1/users/me', {
      headers: { connection_name: connection, identifier: 'trace-user', traceparent: proxied.traceparent },
    });
    proxyStatus = proxy.status;
    expect(proxy.status).toBe(200);
    await proxy.arrayBuffer();

    // The account's events are delivered meanwhile.
    await webhooks.waitFor((r) => r.length > 0, 20_000);
    await t.close();
    closed = true;
    expect(receiver.spans.length).toBeGreaterThan(0);
  });

  it("a tool call's trace arrives with its server, tool, credential, refresh and provider spans", () => {
    expect(toolStatus).toBe(200);
    const spans = receiver.spans.filter((s) => s.traceId === tool.traceId);
    const one = (predicate: (s: ReceivedSpan) => boolean, what: string) => {
      const found = spans.filter(predicate);
      expect(found, what).toHaveLength(1);
      return found[0]!;
    };

    // The API call continues the caller's trace: its parent is the caller's span.
    const server = one(
      (s) => s.kind === SPAN_KIND.server && s.name === 'POST /api/v1/tools/execute',
      'server',
    );
    expect(server.parentSpanId).toBe(tool.spanId);
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/api/v1/tools/execute',
      'url.path': '/api/v1/tools/execute',
      'http.response.status_code': 200,
    });
    expect(server.resource['service.name']).toBe('portico-under-test');

    const execution = one((s) => s.name === 'execute_tool notes_user_list', 'tool');
    expect(execution.parentSpanId).toBe(server.spanId);
    expect(execution.kind).toBe(SPAN_KIND.internal);
    expect(execution.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'notes_user_list',
      'portico.tool.status': 'success',
      'portico.connection.name': connection,
      'portico.upstream.status_code': 200,
    });
    expect(execution.attributes['portico.execution.id']).toMatch(/^exec_/);

    const credential = one((s) => s.name === 'portico.credential', 'credential');
    expect(credential.parentSpanId).toBe(execution.spanId);
    expect(credential.attributes).toMatchObject({
      'portico.account.id': accountId,
      'portico.provider': 'notion',
    });

    // The provider refused the expired token, the gateway refreshed it, the retry succeeded.
    const calls = spans.filter((s) => s.kind === SPAN_KIND.client);
    expect(calls.map((s) => s.attributes['http.response.status_code'])).toEqual([401, 200]);
    for (const call of calls) {
      expect(call.parentSpanId).toBe(execution.spanId);
      expect(call.name).toBe('GET');
      expect(call.attributes['http.request.method']).toBe('GET');
      expect(call.attributes['server.address']).toBe('127.0.0.1');
      expect(String(call.attributes['url.full'])).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/sandbox\//);
    }
    expect(calls[0]!.status).toBe(STATUS_ERROR);
    const refresh = one((s) => s.name === 'portico.token.refresh', 'refresh');
    expect(refresh.parentSpanId).toBe(execution.spanId);
    expect(refresh.attributes).toMatchObject({
      'portico.account.id': accountId,
      'portico.refresh.outcome': 'refreshed',
      'portico.provider': 'notion',
    });

    // The provider (the embedded emulator, served by this gateway) received a traceparent in the
    // caller's trace whose parent is the gateway's client span: its own server span says so.
    const atProvider = spans.filter(
      (s) => s.kind === SPAN_KIND.server && calls.some((c) => c.spanId === s.parentSpanId),
    );
    expect(atProvider).toHaveLength(2);
    for (const span of atProvider) expect(String(span.attributes['url.path'])).toMatch(/^\/sandbox\//);
    // So did the provider's token endpoint, below the refresh.
    const atTokenEndpoint = spans.filter(
      (s) => s.kind === SPAN_KIND.server && s.parentSpanId === refresh.spanId,
    );
    expect(atTokenEndpoint).toHaveLength(1);
    expect(atTokenEndpoint[0]!.name).toMatch(/^POST /);
    expect(spans.filter((s) => s.kind === SPAN_KIND.server)).toHaveLength(4);

    // Every span of the trace hangs from the caller's span.
    const ids = new Set([tool.spanId, ...spans.map((s) => s.spanId)]);
    for (const span of spans) expect(ids.has(span.parentSpanId), span.name).toBe(true);
  });

  it('a proxied request forwards the gateway span as traceparent, in the caller trace', () => {
    expect(proxyStatus).toBe(200);
    const spans = receiver.spans.filter((s) => s.traceId === proxied.traceId);
    const server = spans.find((s) => s.kind === SPAN_KIND.server && s.parentSpanId === proxied.spanId);
    expect(server?.name).toBe('GET /proxy/*');
    expect(server?.attributes['url.path']).toBe('/proxy/v1/users/me');
    const client = spans.find((s) => s.kind === SPAN_KIND.client);
    expect(client?.parentSpanId).toBe(server?.spanId);
    expect(client?.attributes['http.response.status_code']).toBe(200);
    // The provider's parent is the gateway's client span, not the caller's span.
    const atProvider = spans.find((s) => s.kind === SPAN_KIND.server && s.parentSpanId === client?.spanId);
    expect(atProvider?.attributes['url.path']).toMatch(/^\/sandbox\/.*\/v1\/users\/me$/);
  });

  it('a webhook delivery is a client span of its own trace, whose traceparent the receiver gets', () => {
    const delivered = webhooks.received[0]!;
    const traceparent = String(delivered.headers.traceparent);
    const [, traceId, parentId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(traceparent) ?? [];
    expect(traceId, traceparent).toBeDefined();
    const span = receiver.spans.find((s) => s.spanId === parentId);
    expect(span).toMatchObject({ traceId, parentSpanId: '', kind: SPAN_KIND.client, name: 'POST' });
    expect(span!.attributes).toMatchObject({
      'http.request.method': 'POST',
      'server.address': '127.0.0.1',
      'url.full': webhooks.url,
      'portico.event.type': (JSON.parse(delivered.body) as { type: string }).type,
      'portico.webhook.attempt': 1,
    });
    expect(span!.attributes['http.response.status_code']).toBe(204);
  });

  it('sends no token, in any attribute or anywhere in what it sent', () => {
    expect(secrets.length).toBeGreaterThanOrEqual(3);
    const everything = Buffer.concat(receiver.bodies);
    for (const secret of new Set(secrets)) {
      expect(secret.length).toBeGreaterThan(8);
      expect(everything.includes(secret)).toBe(false);
    }
    for (const span of receiver.spans) {
      for (const value of Object.values(span.attributes)) {
        expect(String(value)).not.toMatch(/bearer /i);
        for (const secret of secrets) expect(String(value)).not.toContain(secret);
      }
    }
  });
});

describe.each(BACKENDS.slice(0, 1))('tracing off on $name', (backend) => {
  it('sends nothing when OTEL_SDK_DISABLED is true, whatever the endpoint', async () => {
    const receiver = await startOtlpReceiver();
    const t = await startTestGateway(backend, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SDK_DISABLED: 'true',
    });
    try {
      expect(t.gateway.config.tracing).toBeUndefined();
      await sandboxAccount(t, { provider: 'notion', identifier: 'untraced-user' });
      const call = await t.api('/api/v1/tools/execute', {
        method: 'POST',
        headers: { traceparent: callerTrace().traceparent },
        json: { tool_name: 'notes_user_list', identifier: 'untraced-user', tool_input: {} },
      });
      expect(call.status).toBe(200);
      await call.arrayBuffer();
    } finally {
      await t.close();
    }
    expect(receiver.requests).toBe(0);
    await receiver.close();
  });
});
