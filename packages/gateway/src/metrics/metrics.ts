import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { PROVIDER_KEYS } from '../providers/catalog.js';
import { ReadCounter, SlotCounter, SlotHistogram } from './slots.js';

/** Route families requests are counted by (a label with a handful of values, never a path). */
export const FAMILIES = ['api', 'tools', 'proxy', 'hosted_flow', 'mcp', 'dashboard', 'other'] as const;
export type Family = (typeof FAMILIES)[number];
export const FAMILY = Object.fromEntries(FAMILIES.map((f, i) => [f, i])) as Record<Family, number>;

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;
const REFRESH_OUTCOMES = ['ok', 'refused', 'failed'] as const;
export type RefreshOutcome = (typeof REFRESH_OUTCOMES)[number];

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const REFRESH_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The family of a request path: a few prefix checks, no allocation. */
export function familyOf(url: string): number {
  if (url.startsWith('/proxy/')) return FAMILY.proxy;
  if (url.startsWith('/api/v1/tools') || url.startsWith('/api/v1/executions')) return FAMILY.tools;
  if (url.startsWith('/api/')) return FAMILY.api;
  if (url.startsWith('/connect/') || url.startsWith('/sso/')) return FAMILY.hosted_flow;
  if (url.startsWith('/mcp')) return FAMILY.mcp;
  if (url.startsWith('/dashboard')) return FAMILY.dashboard;
  return FAMILY.other;
}

const statusSlot = (status: number) => Math.min(4, Math.max(0, ((status / 100) | 0) - 1));
const providerSlot = (provider: string) => PROVIDER_KEYS.indexOf(provider as never);

const cross = <A extends string, B extends string>(
  an: string,
  as: readonly A[],
  bn: string,
  bs: readonly B[],
) => as.flatMap((a) => bs.map((b) => ({ [an]: a, [bn]: b })));

export interface MetricsSources {
  /** Connected accounts by status, read when /metrics is scraped. */
  accountsByStatus?: () => Promise<Record<string, number>>;
  /** Statements the store has sent so far, read when /metrics is scraped (embedded or postgres). */
  databaseStatements?: { store: 'embedded' | 'postgres'; count: () => number };
}

/**
 * Everything /metrics reports, in one registry per gateway (so several gateways in one process,
 * as in the tests, do not mix). Hot-path counts go to preallocated slots (see ./slots.ts).
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests: SlotCounter;
  private readonly durations: SlotHistogram;
  private readonly proxyBytes: SlotCounter;
  private readonly upstream: SlotCounter;
  private readonly refreshes: SlotCounter;
  private readonly refreshDurations: SlotHistogram;
  private readonly cache: SlotCounter;
  private readonly cacheEvictions: SlotCounter;
  private cacheSize: () => number = () => 0;

  constructor(sources: MetricsSources = {}) {
    const registry = this.registry;
    this.requests = new SlotCounter(
      'portico_http_requests_total',
      'HTTP requests answered, by route family and status class.',
      cross('family', FAMILIES, 'status_class', STATUS_CLASSES),
    ).register(registry);
    this.durations = new SlotHistogram(
      'portico_http_request_duration_seconds',
      'Time to answer a request (proxied requests: until the provider’s response headers are relayed).',
      FAMILIES.map((family) => ({ family })),
      LATENCY_BUCKETS,
    ).register(registry);
    this.proxyBytes = new SlotCounter(
      'portico_proxy_bytes_total',
      'Body bytes through the proxy: in = caller to provider, out = provider to caller.',
      [{ direction: 'in' }, { direction: 'out' }],
    ).register(registry);
    this.upstream = new SlotCounter(
      'portico_upstream_responses_total',
      'Provider responses to proxied requests and tool calls, by provider and status class.',
      cross('provider', PROVIDER_KEYS, 'status_class', STATUS_CLASSES),
    ).register(registry);
    this.refreshes = new SlotCounter(
      'portico_token_refreshes_total',
      'Access-token refreshes by provider and outcome (refused: the provider refused the grant; failed: it could not be asked or answered badly).',
      cross('provider', PROVIDER_KEYS, 'outcome', REFRESH_OUTCOMES),
    ).register(registry);
    this.refreshDurations = new SlotHistogram(
      'portico_token_refresh_duration_seconds',
      'Duration of a token refresh at the provider, by provider.',
      PROVIDER_KEYS.map((provider) => ({ provider })),
      REFRESH_BUCKETS,
    ).register(registry);
    this.cache = new SlotCounter(
      'portico_credential_cache_lookups_total',
      'Lookups of an end user’s credential in memory: hit, or miss (read from the database).',
      [{ result: 'hit' }, { result: 'miss' }],
    ).register(registry);
    this.cacheEvictions = new SlotCounter(
      'portico_credential_cache_evictions_total',
      'Credentials dropped from memory to stay within PORTICO_CREDENTIAL_CACHE_SIZE (least recently used first).',
      [{}],
    ).register(registry);
    const metrics = this;
    new Gauge({
      name: 'portico_credential_cache_entries',
      help: 'Credentials held in memory (at most PORTICO_CREDENTIAL_CACHE_SIZE).',
      registers: [registry],
      collect() {
        this.set(metrics.cacheSize());
      },
    });
    const { accountsByStatus } = sources;
    if (accountsByStatus) {
      new Gauge({
        name: 'portico_connected_accounts',
        help: 'Connected accounts by status.',
        labelNames: ['status'],
        registers: [registry],
        async collect() {
          const counts = await accountsByStatus();
          this.reset();
          for (const status of ['PENDING_AUTH', 'ACTIVE', 'EXPIRED', 'DISCONNECTED']) {
            this.set({ status }, counts[status] ?? 0);
          }
        },
      });
    }
    const { databaseStatements } = sources;
    if (databaseStatements) {
      // Counted by the store as a plain number (no label lookup per statement), read here.
      new ReadCounter(
        'portico_database_statements_total',
        'Statements sent to the database by this process (a transaction’s BEGIN and COMMIT included), by store.',
        { store: databaseStatements.store },
        databaseStatements.count,
      ).register(registry);
    }
    // Process metrics, among them nodejs_eventloop_lag_seconds.
    collectDefaultMetrics({ register: registry });
  }

  /** One answered request of a family (see FAMILY), with its status and duration in ms. */
  request(family: number, status: number, durationMs: number): void {
    this.requests.inc(family * STATUS_CLASSES.length + statusSlot(status));
    this.durations.observe(family, durationMs / 1000);
  }

  proxyBytesIn(bytes: number): void {
    this.proxyBytes.inc(0, bytes);
  }

  proxyBytesOut(bytes: number): void {
    this.proxyBytes.inc(1, bytes);
  }

  upstreamResponse(provider: string, status: number): void {
    const p = providerSlot(provider);
    if (p >= 0) this.upstream.inc(p * STATUS_CLASSES.length + statusSlot(status));
  }

  refresh(provider: string, outcome: RefreshOutcome, durationMs: number): void {
    const p = providerSlot(provider);
    if (p < 0) return;
    this.refreshes.inc(p * REFRESH_OUTCOMES.length + REFRESH_OUTCOMES.indexOf(outcome));
    this.refreshDurations.observe(p, durationMs / 1000);
  }

  credentialLookup(hit: boolean): void {
    this.cache.inc(hit ? 0 : 1);
  }

  credentialEvicted(): void {
    this.cacheEvictions.inc(0);
  }

  /** Where the credential cache's current size is read from at each scrape. */
  watchCredentialCache(size: () => number): void {
    this.cacheSize = size;
  }

  /** The Prometheus text exposition. */
  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
