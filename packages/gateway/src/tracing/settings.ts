/**
 * Whether and where traces go, read from OpenTelemetry's standard variables. This file loads no
 * OpenTelemetry code: a gateway without an endpoint never imports the SDK.
 */
export interface TracingSettings {
  /** Where spans are POSTed as OTLP/HTTP protobuf. */
  tracesUrl: string;
  /** OTEL_SERVICE_NAME, default `portico`. */
  serviceName: string;
}

/** The variables the settings come from (the SDK reads the sampler, resource and exporter headers itself). */
export const TRACING_VARIABLES = {
  OTEL_EXPORTER_OTLP_ENDPOINT:
    'OTLP/HTTP base URL; traces go to its /v1/traces. Setting it (or the next) turns tracing on. Default: no tracing.',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'Full OTLP/HTTP URL for traces, used as given; wins over the base URL.',
  OTEL_EXPORTER_OTLP_PROTOCOL:
    'Only `http/protobuf` (the default) is supported; any other value is a configuration error.',
  OTEL_SDK_DISABLED: '`true` turns tracing off whatever the endpoint.',
  OTEL_SERVICE_NAME: 'The `service.name` of the spans. Default `portico`.',
} as const;

/**
 * The tracing settings, or undefined when traces are off: no endpoint, or OTEL_SDK_DISABLED=true.
 * Mistakes are pushed on `problems` in the configuration's words.
 */
export function tracingSettings(env: NodeJS.ProcessEnv, problems: string[]): TracingSettings | undefined {
  const value = (name: string) => env[name]?.trim() || undefined;
  if (value('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  const tracesEndpoint = value('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = value('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (!tracesEndpoint && !endpoint) return undefined;
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const protocol = value(name);
    if (protocol && protocol !== 'http/protobuf') {
      problems.push(
        `${name}="${protocol}" is not supported; Portico exports traces as http/protobuf: set it to http/protobuf or unset it.`,
      );
    }
  }
  // The specification: the signal's own endpoint is used as is, the base one gets /v1/traces.
  const tracesUrl = tracesEndpoint ?? `${endpoint!.replace(/\/+$/, '')}/v1/traces`;
  const name = tracesEndpoint ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  let url: URL | undefined;
  try {
    url = new URL(tracesUrl);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    problems.push(
      `${name}="${tracesEndpoint ?? endpoint}" is not an http(s) URL; set it to the collector's OTLP/HTTP address, e.g. http://otel-collector:4318.`,
    );
    return undefined;
  }
  return { tracesUrl, serviceName: value('OTEL_SERVICE_NAME') ?? 'portico' };
}
