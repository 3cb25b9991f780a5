/**
 * The unary call latency histogram (native_grpc_call_duration_seconds), kept in plain arrays: prom-client's
 * Histogram re-validates and hashes the labels on every observe (~0.5 µs, a third of a GetBlock answer's
 * handling). Here a call costs a bucket search and three additions; the registry reads the series in the
 * shape prom-client's own histograms give it (same lines in /metrics).
 */
import type { Registry } from 'prom-client';

/** One method's histogram on one transport. */
export interface LatencySeries {
  observe(seconds: number): void;
}

interface Series {
  shared: { method: string; transport: string };
  /** Observations per bucket (not cumulative); the last one is above every bound. */
  counts: number[];
  sum: number;
  count: number;
}

interface Value {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName: string;
  /** As prom-client's Histogram without exemplars: null on buckets, undefined on _sum and _count. */
  exemplar: null | undefined;
}

export class CallLatencyHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series: Series[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The series of one label set (made once; callers keep it). */
  labels(method: string, transport: string): LatencySeries {
    const s: Series = { shared: { method, transport }, counts: new Array(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
    this.series.push(s);
    const bounds = this.bounds;
    return {
      observe: (seconds) => {
        let i = 0;
        while (i < bounds.length && seconds > bounds[i]) i++;
        s.counts[i]++;
        s.sum += seconds;
        s.count++;
      },
    };
  }

  /** What the registry formats: per series the cumulative buckets, +Inf, _sum and _count, as prom-client's Histogram. */
  getForPromString(): { name: string; help: string; type: string; values: Value[]; aggregator: string } {
    const values: Value[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.series) {
      let acc = 0;
      this.bounds.forEach((le, i) => {
        acc += s.counts[i];
        values.push({ labels: { le }, sharedLabels: s.shared, value: acc, metricName: bucket, exemplar: null });
      });
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: s.shared, value: s.count, metricName: bucket, exemplar: null },
        { labels: {}, sharedLabels: s.shared, value: s.sum, metricName: `${this.name}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels: s.shared, value: s.count, metricName: `${this.name}_count`, exemplar: undefined },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The same with the labels merged (prom-client's get(), used for JSON and cluster aggregation). */
  get(): ReturnType<CallLatencyHistogram['getForPromString']> {
    const data = this.getForPromString();
    data.values = data.values.map(({ labels, sharedLabels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } }));
    return data;
  }

  reset(): void {
    for (const s of this.series) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}
