import type { Registry } from 'prom-client';

/**
 * Counters and histograms kept in preallocated Float64Arrays, one slot per label combination fixed
 * at start. Counting is an array increment: no label hashing, no objects, nothing for the garbage
 * collector, which matters on the proxy's fast path (prom-client's own `inc` hashes its labels and
 * returns an object on every call). prom-client reads the slots only when /metrics is scraped.
 */

type LabelSet = Record<string, string>;

interface MetricValue {
  value: number;
  labels: LabelSet;
  metricName?: string;
}

/** What prom-client's Registry asks of a metric. */
interface Collectable {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): Promise<{
    name: string;
    help: string;
    type: string;
    values: MetricValue[];
    aggregator: 'sum';
  }>;
}

export class SlotCounter implements Collectable {
  readonly type = 'counter' as const;
  readonly aggregator = 'sum' as const;
  readonly values: Float64Array;

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labels: LabelSet[],
  ) {
    this.values = new Float64Array(labels.length);
  }

  inc(slot: number, by = 1): void {
    this.values[slot]! += by;
  }

  async get() {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: this.labels.map((labels, i) => ({ value: this.values[i]!, labels })),
    };
  }

  register(registry: Registry): this {
    registry.registerMetric(this as never);
    return this;
  }
}

/** A counter kept elsewhere (a plain number another module increments), read at each scrape. */
export class ReadCounter implements Collectable {
  readonly type = 'counter' as const;
  readonly aggregator = 'sum' as const;

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labels: LabelSet,
    private readonly read: () => number,
  ) {}

  async get() {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: [{ value: this.read(), labels: this.labels }],
    };
  }

  register(registry: Registry): this {
    registry.registerMetric(this as never);
    return this;
  }
}

export class SlotHistogram implements Collectable {
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  /** Per slot: one count per bucket (not cumulative), then the +Inf bucket. */
  private readonly buckets: Float64Array;
  private readonly sums: Float64Array;
  private readonly counts: Float64Array;

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labels: LabelSet[],
    private readonly upperBounds: number[],
  ) {
    this.buckets = new Float64Array(labels.length * (upperBounds.length + 1));
    this.sums = new Float64Array(labels.length);
    this.counts = new Float64Array(labels.length);
  }

  observe(slot: number, value: number): void {
    const bounds = this.upperBounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.buckets[slot * (bounds.length + 1) + i]! += 1;
    this.sums[slot]! += value;
    this.counts[slot]! += 1;
  }

  async get() {
    const values: MetricValue[] = [];
    const width = this.upperBounds.length + 1;
    this.labels.forEach((labels, slot) => {
      let cumulative = 0;
      for (let i = 0; i < width; i++) {
        cumulative += this.buckets[slot * width + i]!;
        const le = i < this.upperBounds.length ? String(this.upperBounds[i]) : '+Inf';
        values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels, value: this.sums[slot]! });
      values.push({ metricName: `${this.name}_count`, labels, value: this.counts[slot]! });
    });
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  register(registry: Registry): this {
    registry.registerMetric(this as never);
    return this;
  }
}
