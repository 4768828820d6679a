import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createSecureContext } from 'node:tls';
import type { ConnectionLimits } from './http/listener.js';
import { LOG_LEVELS, type LogLevel } from './logging/logger.js';
import { DEFAULT_HEARTBEAT, type HeartbeatOptions } from './store/pg-listener.js';
import { TRACING_VARIABLES, type TracingSettings, tracingSettings } from './tracing/settings.js';

/**
 * Service configuration, read once from the environment. Every bad value is reported together,
 * each with the variable's name and what to change, so a misconfigured start fails in one go.
 */
export interface Config {
  port: number;
  host: string;
  publicUrl: string;
  dataDir: string;
  databaseUrl: string | undefined;
  /** Direct connection for LISTEN when DATABASE_URL goes through a pooler (DATABASE_LISTEN_URL). */
  databaseListenUrl: string | undefined;
  /** How often the PostgreSQL notification listener proves its connection alive, and how long it may take. */
  databaseHeartbeat: HeartbeatOptions;
  masterKeys: string | undefined;
  logLevel: LogLevel;
  /** Lifetime of gateway access tokens issued by POST /oauth/token. */
  accessTokenTtlSeconds: number;
  /** Largest accepted JSON/form request body. */
  bodyLimitBytes: number;
  /** Time a client has to send its request headers. */
  headersTimeoutMs: number;
  /** Time a client has to send a JSON/form body once its headers are in (not proxied bodies). */
  bodyTimeoutMs: number;
  /** Slowest a streamed body may arrive, averaged over each `bodyTimeoutMs`. */
  bodyMinBytesPerSec: number;
  /** Bounds on what one client address, and everyone together, may hold open. */
  connections: ConnectionLimits;
  /** Largest proxied request body held in memory so it can be sent again after a 401 and a refresh. */
  proxyReplayLimitBytes: number;
  /** How long in-flight requests may take to finish on shutdown. */
  shutdownGraceMs: number;
  /** Serve the provider emulators under /sandbox for sandbox connections. */
  sandbox: boolean;
  /** A standalone emulator root to use for sandbox connections instead of the built-in one. */
  sandboxUrl: string | undefined;
  /** Lifetime of authorization links. */
  linkTtlSeconds: number;
  /** Origins or URL prefixes a link's redirect_url must match (empty: any http(s) URL). */
  redirectUrlAllowlist: string[];
  /** Browser origins that may call /mcp and read the MCP OAuth metadata (PORTICO_MCP_ALLOWED_ORIGINS). */
  mcpAllowedOrigins: string[];
  /** Most tools one MCP tools/list page carries (PORTICO_MCP_PAGE_SIZE). */
  mcpPageSize: number;
  /** Lifetime of one trip to the provider's consent screen (state + PKCE verifier). */
  authRequestTtlSeconds: number;
  /** How long recorded events are kept (PORTICO_EVENT_RETENTION_DAYS). */
  eventRetentionDays: number;
  /** How long execution records are kept (PORTICO_EXECUTION_RETENTION_DAYS); 0 keeps them forever. */
  executionRetentionDays: number;
  /** How long failed dashboard sign-ins stay in the audit log (PORTICO_FAILED_SIGN_IN_RETENTION_DAYS). */
  failedSignInRetentionDays: number;
  /** Keep calls under the providers' documented rate limits (PORTICO_RATE_GOVERNOR). */
  rateGovernor: boolean;
  /** Serve the tools compiled from the providers' API descriptions (PORTICO_COMPILED_TOOLS). */
  compiledTools: boolean;
  /** Most end-user credentials one process holds in memory (PORTICO_CREDENTIAL_CACHE_SIZE). */
  credentialCacheSize: number;
  /** MCP OAuth: client ID metadata documents may be fetched over http and from private addresses. */
  mcpClientMetadataAllowPrivate: boolean;
  /** Providers (by key; '*' for all) whose URLs may use http and private or loopback addresses. */
  outboundAllowPrivate: readonly string[];
  webhooks: {
    allowPrivate: boolean;
    timeoutMs: number;
    retryScheduleMs: number[];
    concurrency: number;
  };
  triggers: {
    /** How often each process looks for due trigger subscriptions. */
    pollMs: number;
    /** Polls in flight at once per process. */
    concurrency: number;
    /** How long a replica's claim on a subscription lasts (a killed replica's share waits this long). */
    leaseMs: number;
    /** The least interval_seconds a subscription may ask for. */
    minIntervalSeconds: number;
    /** Open push channels (Google watch channels, Graph subscriptions) where the type has one. */
    push: boolean;
    /** How long a push channel is asked to last, in seconds (the provider caps it). */
    channelSeconds: number;
  };
  /** Certificate chain and private key (PEM) when Portico terminates TLS itself. */
  tls: { cert: string; key: string } | undefined;
  /** Bearer token a scraper sends to GET /metrics on the main port. */
  metricsToken: string | undefined;
  /** A port of its own for GET /metrics (no token). */
  metricsPort: number | undefined;
  /** A second listener whose every path is a proxy path (`/x` there is `/proxy/x` here). */
  proxyPort: number | undefined;
  upstream: {
    connectTimeoutMs: number;
    firstByteTimeoutMs: number;
    idleTimeoutMs: number;
    maxAttempts: number;
    retryAfterCapMs: number;
  };
  /** OpenTelemetry traces over OTLP/HTTP; absent: off (OTEL_EXPORTER_OTLP_ENDPOINT unset). */
  tracing?: TracingSettings | undefined;
}

export { LOG_LEVELS, type LogLevel };

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** One row per variable: the README's configuration table is written from the same facts. */
export const CONFIG_VARIABLES = {
  PORTICO_PORT: 'TCP port to listen on (0–65535). Default 8080.',
  PORTICO_HOST:
    'Interface to bind. Default 127.0.0.1 (this machine only) with the embedded database, 0.0.0.0 with DATABASE_URL; the container image sets 0.0.0.0.',
  PORTICO_PUBLIC_URL: 'URL where applications and browsers reach Portico. Default http://localhost:8080.',
  PORTICO_DATA_DIR: 'Directory of the embedded database and generated key. Default ./.portico.',
  DATABASE_URL: 'postgres:// URL; when set, PostgreSQL is used instead of the embedded database.',
  DATABASE_LISTEN_URL:
    'postgres:// URL of a direct connection (not through PgBouncer in transaction mode) for the LISTEN that keeps replicas in step. Default: DATABASE_URL.',
  PORTICO_DB_HEARTBEAT_INTERVAL_MS:
    'How often each replica proves its PostgreSQL notification connection alive (100–60000). Default 2000.',
  PORTICO_DB_HEARTBEAT_TIMEOUT_MS:
    'How long that proof may take before the connection is presumed dead and reopened (100–60000). Default 3000.',
  PORTICO_MASTER_KEY: 'Comma-separated base64 32-byte keys; the first seals, all open.',
  PORTICO_LOG_LEVEL: `One of ${LOG_LEVELS.join(', ')}. Default info.`,
  PORTICO_ACCESS_TOKEN_TTL: 'Lifetime of gateway access tokens in seconds (60–86400). Default 3600.',
  PORTICO_BODY_LIMIT: 'Largest JSON request body in bytes. Default 1048576.',
  PORTICO_HEADERS_TIMEOUT_MS: 'Time a client has to send its request headers (1000–300000). Default 10000.',
  PORTICO_BODY_TIMEOUT_MS:
    'Time a client has to send a JSON or form body after its headers (1000–300000), a proxied body held for a replay (PORTICO_PROXY_REPLAY_LIMIT) and an HTTP/2 request body; also the window over which streamed bodies are held to PORTICO_BODY_MIN_BYTES_PER_SEC. Default 10000.',
  PORTICO_BODY_MIN_BYTES_PER_SEC:
    'Slowest a streamed body (a large proxied upload, an upload to the sandbox) may arrive, bytes per second averaged over each PORTICO_BODY_TIMEOUT_MS (1–1000000000); a slower one is cut. Default 1024.',
  PORTICO_MAX_CONNECTIONS_PER_ADDRESS:
    'Open connections one client address (an IPv6 /64) may hold, any protocol (0–1000000, 0: no bound); more are answered 429 and closed. Default 512.',
  PORTICO_HTTP2_MAX_STREAMS: 'Concurrent streams per HTTP/2 session (1–10000). Default 100.',
  PORTICO_HTTP2_MAX_SESSIONS_PER_ADDRESS:
    'HTTP/2 sessions one client address may hold (1–100000); more are refused with GOAWAY. Default 32.',
  PORTICO_HTTP2_MAX_SESSIONS:
    'HTTP/2 sessions altogether (1–1000000); more are refused with GOAWAY. Default 512.',
  PORTICO_PROXY_REPLAY_LIMIT:
    'Largest proxied request body in bytes (0–16777216) held in memory until the provider answers, so that a 401 can be answered by refreshing the token and sending it again; larger and chunked bodies stream through as they arrive. Default 65536.',
  PORTICO_SHUTDOWN_GRACE_MS: 'Time in-flight requests get to finish on shutdown. Default 10000.',
  PORTICO_SANDBOX:
    'true or false: serve provider emulators under /sandbox for sandbox connections. Default true.',
  PORTICO_SANDBOX_URL: 'Root URL of a standalone emulator server to use for sandbox connections instead.',
  PORTICO_LINK_TTL: 'Lifetime of authorization links in seconds (60–604800). Default 3600.',
  PORTICO_REDIRECT_URL_ALLOWLIST:
    'Comma-separated origins or URL prefixes that authorization links may send the browser back to. Default: any http(s) URL.',
  PORTICO_MCP_ALLOWED_ORIGINS:
    "Comma-separated browser origins allowed to call /mcp (others get 403) and to read its OAuth metadata across origins. Default: the public URL's origin and loopback (localhost, 127.0.0.1, [::1]) on any port.",
  PORTICO_MCP_PAGE_SIZE:
    'Most tools one MCP tools/list page carries before a nextCursor (1–1000). Default 100.',
  PORTICO_UPSTREAM_CONNECT_TIMEOUT_MS: 'Time to connect to a provider. Default 10000.',
  PORTICO_UPSTREAM_FIRST_BYTE_TIMEOUT_MS: 'Time for a provider to start answering. Default 60000.',
  PORTICO_UPSTREAM_IDLE_TIMEOUT_MS: 'Longest pause while a body streams either way. Default 60000.',
  PORTICO_UPSTREAM_MAX_ATTEMPTS: 'Attempts for a safely retryable provider request (1–10). Default 3.',
  PORTICO_UPSTREAM_RETRY_AFTER_CAP_MS:
    'Longest Retry-After the gateway waits out itself; longer ones go back to the caller. Default 10000.',
  PORTICO_EVENT_RETENTION_DAYS: 'Days recorded events are kept (1–3650). Default 30.',
  PORTICO_CREDENTIAL_CACHE_SIZE:
    'Most end-user credentials one process keeps in memory (1–10000000); the least recently used are dropped and read again on their next call. Default 100000.',
  PORTICO_RATE_GOVERNOR:
    "true or false: keep each account's and connection's calls under its provider's documented rate limits (calls over the rate wait their turn). Default true.",
  PORTICO_EXECUTION_RETENTION_DAYS:
    'Days tool execution records are kept (0–3650; 0 keeps them forever). Older ones are removed in small paced batches. Default 30.',
  PORTICO_FAILED_SIGN_IN_RETENTION_DAYS:
    'Days failed dashboard sign-ins stay in the audit log (1–3650); every other entry is kept for good. Default 30.',
  PORTICO_WEBHOOK_ALLOW_PRIVATE:
    'true or false: allow webhook URLs on http and on loopback, private or link-local addresses (local development). Default false.',
  PORTICO_MCP_CLIENT_METADATA_ALLOW_PRIVATE:
    'true or false: let MCP OAuth fetch client ID metadata documents over http and from loopback, private or link-local addresses (local development). Default false.',
  PORTICO_OUTBOUND_ALLOW_PRIVATE:
    "Comma-separated provider keys (or *) whose token, user-info, revocation and API URLs may use http and loopback, private or link-local addresses (a provider run inside the operator's network, or a local emulator). Default none.",
  PORTICO_WEBHOOK_TIMEOUT_MS: 'Time one webhook attempt may take (100–60000). Default 10000.',
  PORTICO_WEBHOOK_RETRY_SCHEDULE:
    'Comma-separated delays before each webhook retry (ms, s, m or h); after the last, the endpoint is disabled. Default 5s,5m,30m,2h,5h,8h,8h.',
  PORTICO_WEBHOOK_CONCURRENCY: 'Webhook attempts in flight at once per process (1–256). Default 32.',
  PORTICO_TRIGGER_POLL_MS:
    'The longest each process sleeps between looks for trigger subscriptions due for a poll, in ms (50–60000; it wakes at the next due time when sooner, and sees what other replicas change within this). Default 1000.',
  PORTICO_TRIGGER_CONCURRENCY: 'Trigger polls in flight at once per process (1–256). Default 16.',
  PORTICO_TRIGGER_LEASE_MS:
    "How long a process's claim on a trigger subscription lasts, in ms (1000–3600000): a replica killed mid-poll leaves its subscriptions to the others this long. Default 120000.",
  PORTICO_TRIGGER_MIN_INTERVAL_SECONDS:
    'The shortest polling interval a trigger subscription may ask for, in seconds (1–86400). Default 30.',
  PORTICO_TRIGGER_PUSH:
    'Whether trigger subscriptions open push channels where the provider has them (Google watch channels, Graph subscriptions), true or false: the provider then needs to reach PORTICO_PUBLIC_URL. Default: true when PORTICO_PUBLIC_URL is https (Google and Graph deliver to HTTPS only), false otherwise.',
  PORTICO_TRIGGER_CHANNEL_SECONDS:
    'How long a trigger push channel is asked to last before it is renewed, in seconds (2–2592000; the provider may grant less). Default 86400.',
  PORTICO_TLS_CERT:
    'Certificate chain (PEM text or a file path): Portico then serves TLS on its port, HTTP/1.1 and HTTP/2 by ALPN. Needs PORTICO_TLS_KEY.',
  PORTICO_TLS_KEY: 'Private key of PORTICO_TLS_CERT (PEM text or a file path).',
  PORTICO_METRICS_TOKEN:
    'Bearer token (16+ characters) that serves GET /metrics on the main port. Default: /metrics not served there.',
  PORTICO_METRICS_PORT:
    'Serve GET /metrics without a token on this port (1–65535) of PORTICO_HOST instead. Default: none.',
  PORTICO_PROXY_PORT:
    "Serve the proxy at the root of this port (1–65535) of PORTICO_HOST too, with the main port's TLS: /x there is /proxy/x here (for SDKs that drop a base path). Default: none.",
  PORTICO_AUTH_REQUEST_TTL: 'Time a user has on the provider consent screen, seconds (60–3600). Default 600.',
  ...TRACING_VARIABLES,
} as const;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];

  const int = (name: keyof typeof CONFIG_VARIABLES, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw.trim())) {
      problems.push(
        `${name}="${raw}" is not a whole number; set it to an integer between ${min} and ${max}.`,
      );
      return fallback;
    }
    const value = Number(raw.trim());
    if (value < min || value > max) {
      problems.push(`${name}=${value} is out of range; set it between ${min} and ${max}.`);
      return fallback;
    }
    return value;
  };

  const bool = (name: keyof typeof CONFIG_VARIABLES, fallback: boolean): boolean => {
    const raw = env[name]?.trim().toLowerCase();
    if (raw === undefined || raw === '') return fallback;
    if (!['true', 'false', '1', '0'].includes(raw)) {
      problems.push(`${name}="${env[name]}" must be true or false.`);
      return fallback;
    }
    return raw === 'true' || raw === '1';
  };

  const port = int('PORTICO_PORT', 8080, 0, 65535);
  const accessTokenTtlSeconds = int('PORTICO_ACCESS_TOKEN_TTL', 3600, 60, 86400);
  const bodyLimitBytes = int('PORTICO_BODY_LIMIT', 1024 * 1024, 1024, 100 * 1024 * 1024);
  const shutdownGraceMs = int('PORTICO_SHUTDOWN_GRACE_MS', 10_000, 0, 600_000);
  const headersTimeoutMs = int('PORTICO_HEADERS_TIMEOUT_MS', 10_000, 1000, 300_000);
  const bodyTimeoutMs = int('PORTICO_BODY_TIMEOUT_MS', 10_000, 1000, 300_000);
  // A floor no real link is under (8 kbit/s) that still ends a trickle of a byte a second.
  const bodyMinBytesPerSec = int('PORTICO_BODY_MIN_BYTES_PER_SEC', 1024, 1, 1_000_000_000);
  const connections: ConnectionLimits = {
    // Above what one application's connection pool opens; a reverse proxy in front may need more.
    perAddress: int('PORTICO_MAX_CONNECTIONS_PER_ADDRESS', 512, 0, 1_000_000),
    http2Streams: int('PORTICO_HTTP2_MAX_STREAMS', 100, 1, 10_000),
    // A gRPC client keeps one session; these leave room for many processes per host.
    http2SessionsPerAddress: int('PORTICO_HTTP2_MAX_SESSIONS_PER_ADDRESS', 32, 1, 100_000),
    http2Sessions: int('PORTICO_HTTP2_MAX_SESSIONS', 512, 1, 1_000_000),
  };
  // JSON bodies fit; file uploads stream: a held upload outlives V8's young-generation collections,
  // and the full collections its memory then forces added 0.35–0.8 ms to a 1 MiB upload that
  // costs 1.2–1.4 ms streamed (bench:proxy).
  const proxyReplayLimitBytes = int('PORTICO_PROXY_REPLAY_LIMIT', 64 * 1024, 0, 16 * 1024 * 1024);

  const linkTtlSeconds = int('PORTICO_LINK_TTL', 3600, 60, 604_800);
  const metricsPortValue = int('PORTICO_METRICS_PORT', 0, 1, 65535);
  const metricsPort = metricsPortValue === 0 ? undefined : metricsPortValue;
  const proxyPortValue = int('PORTICO_PROXY_PORT', 0, 1, 65535);
  const proxyPort = proxyPortValue === 0 ? undefined : proxyPortValue;
  const metricsToken = env.PORTICO_METRICS_TOKEN?.trim() || undefined;
  if (metricsToken && !/^[\x21-\x7e]{16,256}$/.test(metricsToken)) {
    problems.push(
      'PORTICO_METRICS_TOKEN must be 16–256 printable characters without spaces; generate one with: openssl rand -hex 24',
    );
  }
  const authRequestTtlSeconds = int('PORTICO_AUTH_REQUEST_TTL', 600, 60, 3600);

  const upstream = {
    connectTimeoutMs: int('PORTICO_UPSTREAM_CONNECT_TIMEOUT_MS', 10_000, 100, 600_000),
    firstByteTimeoutMs: int('PORTICO_UPSTREAM_FIRST_BYTE_TIMEOUT_MS', 60_000, 100, 3_600_000),
    idleTimeoutMs: int('PORTICO_UPSTREAM_IDLE_TIMEOUT_MS', 60_000, 100, 3_600_000),
    maxAttempts: int('PORTICO_UPSTREAM_MAX_ATTEMPTS', 3, 1, 10),
    retryAfterCapMs: int('PORTICO_UPSTREAM_RETRY_AFTER_CAP_MS', 10_000, 0, 600_000),
  };

  const eventRetentionDays = int('PORTICO_EVENT_RETENTION_DAYS', 30, 1, 3650);
  const executionRetentionDays = int('PORTICO_EXECUTION_RETENTION_DAYS', 30, 0, 3650);
  const failedSignInRetentionDays = int('PORTICO_FAILED_SIGN_IN_RETENTION_DAYS', 30, 1, 3650);
  const credentialCacheSize = int('PORTICO_CREDENTIAL_CACHE_SIZE', 100_000, 1, 10_000_000);
  const allowPrivateRaw = (env.PORTICO_WEBHOOK_ALLOW_PRIVATE?.trim() || 'false').toLowerCase();
  if (!['true', 'false', '1', '0'].includes(allowPrivateRaw)) {
    problems.push(
      `PORTICO_WEBHOOK_ALLOW_PRIVATE="${env.PORTICO_WEBHOOK_ALLOW_PRIVATE}" must be true or false.`,
    );
  }
  const webhooks = {
    allowPrivate: allowPrivateRaw === 'true' || allowPrivateRaw === '1',
    timeoutMs: int('PORTICO_WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    retryScheduleMs: parseSchedule(env.PORTICO_WEBHOOK_RETRY_SCHEDULE, problems),
    concurrency: int('PORTICO_WEBHOOK_CONCURRENCY', 32, 1, 256),
  };
  const triggers = {
    pollMs: int('PORTICO_TRIGGER_POLL_MS', 1000, 50, 60_000),
    concurrency: int('PORTICO_TRIGGER_CONCURRENCY', 16, 1, 256),
    leaseMs: int('PORTICO_TRIGGER_LEASE_MS', 120_000, 1000, 3_600_000),
    minIntervalSeconds: int('PORTICO_TRIGGER_MIN_INTERVAL_SECONDS', 30, 1, 86_400),
    // Google and Graph deliver to HTTPS addresses only: without one, push is asked for explicitly.
    push: bool('PORTICO_TRIGGER_PUSH', (env.PORTICO_PUBLIC_URL?.trim() ?? '').startsWith('https:')),
    channelSeconds: int('PORTICO_TRIGGER_CHANNEL_SECONDS', 86_400, 2, 2_592_000),
  };

  const mcpPrivateRaw = (env.PORTICO_MCP_CLIENT_METADATA_ALLOW_PRIVATE?.trim() || 'false').toLowerCase();
  if (!['true', 'false', '1', '0'].includes(mcpPrivateRaw)) {
    problems.push(
      `PORTICO_MCP_CLIENT_METADATA_ALLOW_PRIVATE="${env.PORTICO_MCP_CLIENT_METADATA_ALLOW_PRIVATE}" must be true or false.`,
    );
  }
  const mcpClientMetadataAllowPrivate = mcpPrivateRaw === 'true' || mcpPrivateRaw === '1';
  const outboundAllowPrivate = (env.PORTICO_OUTBOUND_ALLOW_PRIVATE ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);

  const governorRaw = (env.PORTICO_RATE_GOVERNOR?.trim() || 'true').toLowerCase();
  if (!['true', 'false', '1', '0'].includes(governorRaw)) {
    problems.push(`PORTICO_RATE_GOVERNOR="${env.PORTICO_RATE_GOVERNOR}" must be true or false.`);
  }
  const rateGovernor = governorRaw === 'true' || governorRaw === '1';
  const compiledRaw = (env.PORTICO_COMPILED_TOOLS?.trim() || 'true').toLowerCase();
  if (!['true', 'false', '1', '0'].includes(compiledRaw)) {
    problems.push(`PORTICO_COMPILED_TOOLS="${env.PORTICO_COMPILED_TOOLS}" must be true or false.`);
  }
  const compiledTools = compiledRaw === 'true' || compiledRaw === '1';
  const sandboxRaw = (env.PORTICO_SANDBOX?.trim() || 'true').toLowerCase();
  if (!['true', 'false', '1', '0'].includes(sandboxRaw)) {
    problems.push(`PORTICO_SANDBOX="${env.PORTICO_SANDBOX}" must be true or false.`);
  }
  const sandbox = sandboxRaw === 'true' || sandboxRaw === '1';
  let sandboxUrl = env.PORTICO_SANDBOX_URL?.trim() || undefined;
  if (sandboxUrl) {
    try {
      const url = new URL(sandboxUrl);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
      sandboxUrl = url.toString().replace(/\/+$/, '');
    } catch {
      problems.push(
        `PORTICO_SANDBOX_URL="${sandboxUrl}" is not an http(s) URL; e.g. http://127.0.0.1:4010 (see npm run emulators).`,
      );
    }
  }

  const redirectUrlAllowlist = (env.PORTICO_REDIRECT_URL_ALLOWLIST ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      try {
        const url = new URL(entry);
        if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
        // An origin alone stays an origin; anything longer is a prefix of origin + path.
        return /^https?:\/\/[^/]+\/?$/.test(entry) ? url.origin : `${url.origin}${url.pathname}`;
      } catch {
        problems.push(
          `PORTICO_REDIRECT_URL_ALLOWLIST entry "${entry}" is not an http(s) URL; e.g. https://app.example.com`,
        );
        return '';
      }
    })
    .filter(Boolean);

  const mcpAllowedOrigins = (env.PORTICO_MCP_ALLOWED_ORIGINS ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      try {
        const url = new URL(entry);
        if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !/^https?:\/\/[^/]+\/?$/.test(entry))
          throw new Error('not an origin');
        return url.origin;
      } catch {
        problems.push(
          `PORTICO_MCP_ALLOWED_ORIGINS entry "${entry}" is not an http(s) origin; e.g. https://agent.example.com (scheme, host and port, no path).`,
        );
        return '';
      }
    })
    .filter(Boolean);

  let publicUrl = env.PORTICO_PUBLIC_URL?.trim() || `http://localhost:${port || 8080}`;
  try {
    const url = new URL(publicUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
    if (url.search || url.hash || url.username || url.password) throw new Error('extras');
    publicUrl = url.toString().replace(/\/+$/, '');
  } catch {
    problems.push(
      `PORTICO_PUBLIC_URL="${publicUrl}" is not an absolute http(s) URL without query, fragment or credentials; e.g. https://portico.example.com.`,
    );
  }

  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  if (databaseUrl) {
    try {
      const url = new URL(databaseUrl);
      if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') throw new Error('scheme');
    } catch {
      problems.push(
        'DATABASE_URL is not a postgres:// or postgresql:// URL; unset it to use the embedded database.',
      );
    }
  }

  const databaseListenUrl = env.DATABASE_LISTEN_URL?.trim() || undefined;
  if (databaseListenUrl) {
    let valid = false;
    try {
      valid = ['postgres:', 'postgresql:'].includes(new URL(databaseListenUrl).protocol);
    } catch {}
    if (!valid || !databaseUrl) {
      problems.push(
        valid
          ? 'DATABASE_LISTEN_URL is set without DATABASE_URL; set DATABASE_URL too, or unset DATABASE_LISTEN_URL.'
          : 'DATABASE_LISTEN_URL is not a postgres:// or postgresql:// URL; give the direct address of the database.',
      );
    }
  }

  const databaseHeartbeat = {
    intervalMs: int('PORTICO_DB_HEARTBEAT_INTERVAL_MS', DEFAULT_HEARTBEAT.intervalMs, 100, 60_000),
    timeoutMs: int('PORTICO_DB_HEARTBEAT_TIMEOUT_MS', DEFAULT_HEARTBEAT.timeoutMs, 100, 60_000),
  };

  const logLevel = (env.PORTICO_LOG_LEVEL?.trim() || 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`PORTICO_LOG_LEVEL="${logLevel}" is not a level; use one of ${LOG_LEVELS.join(', ')}.`);
  }

  const masterKeys = env.PORTICO_MASTER_KEY?.trim() || undefined;
  if (masterKeys) {
    masterKeys.split(',').forEach((key, index) => {
      const bytes = Buffer.from(key.trim(), 'base64');
      if (bytes.length !== 32 || !/^[A-Za-z0-9+/_-]+=*$/.test(key.trim())) {
        problems.push(
          `PORTICO_MASTER_KEY key #${index + 1} is not 32 bytes of base64; generate one with: openssl rand -base64 32`,
        );
      }
    });
  }

  const tls = tlsMaterial(env, problems);

  const tracing = tracingSettings(env, problems);
  if (problems.length) throw new ConfigError(problems);

  return {
    port,
    // The embedded database is the one-machine mode: reachable from this machine only unless the
    // operator says otherwise. With PostgreSQL (replicas behind a load balancer) every interface.
    host: env.PORTICO_HOST?.trim() || (databaseUrl ? '0.0.0.0' : '127.0.0.1'),
    publicUrl,
    dataDir: path.resolve(env.PORTICO_DATA_DIR?.trim() || '.portico'),
    databaseUrl,
    databaseListenUrl,
    databaseHeartbeat,
    masterKeys,
    logLevel,
    accessTokenTtlSeconds,
    bodyLimitBytes,
    headersTimeoutMs,
    bodyTimeoutMs,
    bodyMinBytesPerSec,
    connections,
    proxyReplayLimitBytes,
    shutdownGraceMs,
    sandbox,
    sandboxUrl,
    linkTtlSeconds,
    redirectUrlAllowlist,
    mcpAllowedOrigins,
    mcpPageSize: int('PORTICO_MCP_PAGE_SIZE', 100, 1, 1000),
    authRequestTtlSeconds,
    eventRetentionDays,
    executionRetentionDays,
    failedSignInRetentionDays,
    rateGovernor,
    compiledTools,
    credentialCacheSize,
    mcpClientMetadataAllowPrivate,
    outboundAllowPrivate,
    webhooks,
    triggers,
    tls,
    metricsToken,
    metricsPort,
    proxyPort,
    upstream,
    tracing,
  };
}

/** Five seconds to eight hours, growing: retries for a little under a day. */
export const DEFAULT_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,8h,8h';
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

function parseSchedule(raw: string | undefined, problems: string[]): number[] {
  const text = raw?.trim() || DEFAULT_RETRY_SCHEDULE;
  const delays = text.split(',').map((part) => {
    const match = /^(\d+)(ms|s|m|h)$/.exec(part.trim());
    return match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : Number.NaN;
  });
  if (delays.some((d) => Number.isNaN(d)) || delays.length > 50 || delays.some((d) => d > 7 * 86_400_000)) {
    problems.push(
      `PORTICO_WEBHOOK_RETRY_SCHEDULE="${text}" is not a list of up to 50 delays of at most a week, each a number with ms, s, m or h; e.g. ${DEFAULT_RETRY_SCHEDULE}.`,
    );
    return parseSchedule(DEFAULT_RETRY_SCHEDULE, []);
  }
  return delays;
}

/** PEM text as given, or read from the file named; both variables or neither, and a matching pair. */
function tlsMaterial(env: NodeJS.ProcessEnv, problems: string[]): Config['tls'] {
  const read = (name: 'PORTICO_TLS_CERT' | 'PORTICO_TLS_KEY'): string | undefined => {
    const raw = env[name]?.trim();
    if (!raw) return undefined;
    if (raw.startsWith('-----BEGIN')) return raw.replaceAll('\\n', '\n');
    try {
      return readFileSync(raw, 'utf8');
    } catch (error) {
      problems.push(
        `${name}: cannot read "${raw}" (${(error as NodeJS.ErrnoException).code ?? 'error'}); give a readable PEM file path or the PEM text itself.`,
      );
      return undefined;
    }
  };
  const cert = read('PORTICO_TLS_CERT');
  const key = read('PORTICO_TLS_KEY');
  const given = ['PORTICO_TLS_CERT', 'PORTICO_TLS_KEY'].filter((name) => env[name]?.trim());
  if (given.length === 1) {
    problems.push(
      `${given[0]} is set without ${given[0] === 'PORTICO_TLS_CERT' ? 'PORTICO_TLS_KEY' : 'PORTICO_TLS_CERT'}; set both to serve TLS, or neither.`,
    );
    return undefined;
  }
  if (!cert || !key) return undefined;
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    // OpenSSL's reason names what is wrong (no PEM, key mismatch) without echoing the key.
    problems.push(
      `PORTICO_TLS_CERT and PORTICO_TLS_KEY are not a usable certificate and private key (${(error as Error).message}); give the PEM certificate chain and its unencrypted private key.`,
    );
    return undefined;
  }
  return { cert, key };
}
