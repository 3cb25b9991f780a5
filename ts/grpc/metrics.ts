/**
 * Prometheus metrics of the gRPC transport, registered in the node's registry (GET /metrics) next to the
 * code that feeds them: calls by method, status and transport; unary latency; open streams; stream events.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { CallLatencyHistogram, type LatencySeries } from './call-latency.js';
import { GrpcStatus } from './errors.js';

/** `grpc` (HTTP/2, @grpc/grpc-js) or `grpc-web` (the main HTTP port). */
export type GrpcTransport = 'grpc' | 'grpc-web';

export const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

type CounterChild = ReturnType<Counter<string>['labels']>;
type GaugeChild = ReturnType<Gauge<string>['labels']>;

/**
 * A count kept as a plain number and added to its counter when the registry is read (the counter's
 * collect): prom-client's inc() hashes the labels on every call, which cost more per gRPC call than the rest
 * of the bookkeeping.
 */
interface Tally {
  child: CounterChild;
  n: number;
}

function flush(tallies: Iterable<Tally>): void {
  for (const t of tallies) {
    if (t.n === 0) continue;
    t.child.inc(t.n);
    t.n = 0;
  }
}

/** A method's call series on one transport (GrpcMetrics.method). */
export interface MethodSeries {
  /** A finished call (unary or stream) with its status and, for unary calls, its latency. */
  finished(code: GrpcStatus, seconds: number | null): void;
}

export class GrpcMetrics {
  private readonly calls: Counter<'method' | 'code' | 'transport'>;
  private readonly latency: CallLatencyHistogram;
  private readonly streams: Gauge<'method' | 'transport'>;
  private readonly events: Counter<'method' | 'transport'>;
  private readonly lagged: Counter<'transport'>;
  /** Children looked up once per label set (a label lookup per call costs more than the increment). */
  private readonly streamChildren = new Map<string, GaugeChild>();
  /** Stream messages written since the last scrape, by method and transport. */
  private readonly unflushedMessages = new Map<string, Tally>();
  /** Calls finished since the last scrape, one tally per method, code and transport. */
  private readonly unflushedCalls: Tally[] = [];

  constructor(registry: Registry) {
    const registers = [registry];
    const calls = this.unflushedCalls;
    this.calls = new Counter({
      name: 'native_grpc_calls_total',
      help: 'gRPC calls finished, by method, status code name and transport (grpc or grpc-web)',
      labelNames: ['method', 'code', 'transport'],
      registers,
      collect: () => flush(calls),
    });
    this.latency = new CallLatencyHistogram(
      'native_grpc_call_duration_seconds',
      'Unary gRPC call time from request to answer, by method and transport',
      LATENCY_BUCKETS,
      registry,
    );
    this.streams = new Gauge({
      name: 'native_grpc_active_streams',
      help: 'Open server-streaming gRPC calls, by method and transport',
      labelNames: ['method', 'transport'],
      registers,
    });
    const unflushed = this.unflushedMessages;
    this.events = new Counter({
      name: 'native_grpc_stream_messages_total',
      help: 'Messages sent on server-streaming gRPC calls, by method and transport',
      labelNames: ['method', 'transport'],
      registers,
      // A fan-out writes to every subscriber: counted in plain numbers, added when read.
      collect: () => flush(unflushed.values()),
    });
    this.lagged = new Counter({
      name: 'native_grpc_stream_lagged_events_total',
      help: 'Events dropped for StreamEvents consumers that fell 1024 events behind (the skipped_count sum)',
      labelNames: ['transport'],
      registers,
    });
    for (const transport of ['grpc', 'grpc-web']) this.lagged.inc({ transport }, 0);
  }

  private child<T>(cache: Map<string, T>, key: string, make: () => T): T {
    let c = cache.get(key);
    if (c === undefined) {
      c = make();
      cache.set(key, c);
    }
    return c;
  }

  /**
   * The series of one method on one transport, looked up once: the service keeps the handle, so a call costs an
   * array read and two increments (no label strings per call).
   */
  method(method: string, transport: GrpcTransport): MethodSeries {
    const byCode: Tally[] = [];
    let latency: LatencySeries | undefined;
    return {
      finished: (code, seconds) => {
        let c = byCode[code];
        if (c === undefined) {
          c = { child: this.calls.labels(method, GrpcStatus[code] ?? String(code), transport), n: 0 };
          byCode[code] = c;
          this.unflushedCalls.push(c);
        }
        c.n++;
        if (seconds !== null) {
          latency ??= this.latency.labels(method, transport);
          latency.observe(seconds);
        }
      },
    };
  }

  /** A stream opened: counted as active until `closed()`; its messages counted through the handle (no lookups per write). */
  streamOpened(method: string, transport: GrpcTransport): { messages(n: number): void; closed(): void } {
    const key = `${method} ${transport}`;
    const active = this.child(this.streamChildren, key, () => this.streams.labels(method, transport));
    const messages = this.child(this.unflushedMessages, key, () => ({ child: this.events.labels(method, transport), n: 0 }));
    active.inc();
    return {
      messages: (n) => {
        messages.n += n;
      },
      closed: () => active.dec(),
    };
  }

  laggedEvents(transport: GrpcTransport, skipped: number): void {
    this.lagged.inc({ transport }, skipped);
  }
}
