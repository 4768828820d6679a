import {
  type Attributes,
  type Context,
  defaultTextMapGetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapSetter,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  ATTR_ERROR_TYPE,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
} from '@opentelemetry/semantic-conventions';
import type { Logger } from 'pino';
import type { TracingSettings } from './settings.js';

export type { Attributes, Context, Span };
export { SpanKind, SpanStatusCode };

/** Headers as Node gives them, or as the upstream client takes them (an object or a flat name/value list). */
export type HeaderCarrier = Record<string, string | string[] | undefined> | string[];

const TRACE_HEADERS = ['traceparent', 'tracestate'];

/**
 * The gateway's tracer. One per gateway, none at all when tracing is off: every instrumented place
 * holds `Tracing | undefined` and tests it first, so a gateway without an endpoint creates no span
 * objects and no context closures. The context lives in this instance's own AsyncLocalStorage and
 * the provider is not registered globally, so two gateways in one process (the tests) stay apart
 * and nothing else in the process is traced by accident.
 */
export class Tracing {
  readonly tracer: Tracer;
  private readonly contexts = new AsyncLocalStorageContextManager();
  private readonly propagator = new W3CTraceContextPropagator();

  private constructor(
    private readonly provider: BasicTracerProvider,
    version: string,
  ) {
    this.contexts.enable();
    this.tracer = provider.getTracer('portico', version);
  }

  /**
   * Builds the SDK: the exporter (the settings' URL; headers, timeout and compression from the
   * standard OTEL_EXPORTER_OTLP_* variables), the sampler (OTEL_TRACES_SAMPLER and _ARG, read by
   * the SDK) and the resource (service.name, then OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME).
   */
  static start(settings: TracingSettings, options: { version: string; logger: Logger }): Tracing {
    const resource = defaultResource()
      .merge(
        resourceFromAttributes({
          [ATTR_SERVICE_NAME]: settings.serviceName,
          [ATTR_SERVICE_VERSION]: options.version,
        }),
      )
      .merge(detectResources({ detectors: [envDetector] }))
      // The configuration's name wins over the detector's default.
      .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName }));
    const exporter = new OTLPTraceExporter({ url: settings.tracesUrl });
    const provider = new BasicTracerProvider({
      resource,
      spanProcessors: [new BatchSpanProcessor(exporter)],
    });
    options.logger.info({ traces_url: settings.tracesUrl }, 'tracing on: spans go over OTLP/HTTP');
    return new Tracing(provider, options.version);
  }

  /** The current context (the root when no span is active). */
  active(): Context {
    return this.contexts.active();
  }

  /** Runs `fn` with `context` current, across its awaits. */
  with<T>(context: Context, fn: () => T): T {
    return this.contexts.with(context, fn);
  }

  /**
   * Runs `fn` in a new span, child of the current one: the span ends when `fn` settles, an error
   * marks it failed with `error.type` (a problem's code, or the error's name; never its message,
   * which may quote a provider's answer).
   */
  async inSpan<T>(
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    fn: (span: Span) => Promise<T>,
  ): Promise<T> {
    const parent = this.contexts.active();
    const span = this.tracer.startSpan(name, { kind, attributes }, parent);
    try {
      return await this.contexts.with(trace.setSpan(parent, span), fn, undefined, span);
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  /** A server span continuing the caller's trace when its headers carry a valid `traceparent`. */
  startServer(name: string, headers: Record<string, string | string[] | undefined>, attributes: Attributes) {
    const parent = this.propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    const span = this.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
    return { span, context: trace.setSpan(parent, span) };
  }

  /** A span started now, child of the current context (or the root of a trace), that the caller ends. */
  startSpan(
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    options: { root?: boolean } = {},
  ): { span: Span; context: Context } {
    const parent = options.root ? ROOT_CONTEXT : this.contexts.active();
    const span = this.tracer.startSpan(name, { kind, attributes }, parent);
    return { span, context: trace.setSpan(parent, span) };
  }

  /**
   * Puts `context`'s `traceparent` (and `tracestate`) on outgoing headers, in place of any the
   * caller sent: the receiver's parent is then the gateway's span, in the caller's trace.
   */
  inject(context: Context, headers: HeaderCarrier): void {
    if (Array.isArray(headers)) {
      for (let i = headers.length - 2; i >= 0; i -= 2) {
        if (TRACE_HEADERS.includes((headers[i] as string).toLowerCase())) headers.splice(i, 2);
      }
      this.propagator.inject(context, headers, LIST_SETTER);
      return;
    }
    for (const name of Object.keys(headers)) {
      if (TRACE_HEADERS.includes(name.toLowerCase())) delete headers[name];
    }
    this.propagator.inject(context, headers, OBJECT_SETTER);
  }

  /** The current context as `traceparent` (and `tracestate`) headers, for a request made without the upstream client. */
  traceHeaders(): Record<string, string> {
    const headers: Record<string, string> = {};
    this.propagator.inject(this.contexts.active(), headers, OBJECT_SETTER);
    return headers;
  }

  /** Sends what is buffered and stops (the gateway's close). */
  async shutdown(): Promise<void> {
    try {
      await this.provider.shutdown();
    } finally {
      this.contexts.disable();
    }
  }
}

/** Marks a span failed with the error's kind. */
export function failed(span: Span, error: unknown): void {
  const code = (error as { code?: unknown } | null)?.code;
  const type = typeof code === 'string' ? code : error instanceof Error ? error.name : 'unknown';
  span.setAttribute(ATTR_ERROR_TYPE, type);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

const LIST_SETTER: TextMapSetter<string[]> = {
  set(carrier, key, value) {
    carrier.push(key, value);
  },
};

const OBJECT_SETTER: TextMapSetter<Record<string, string | string[] | undefined>> = {
  set(carrier, key, value) {
    carrier[key] = value;
  },
};
