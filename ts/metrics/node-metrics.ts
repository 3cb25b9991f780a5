import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ProducedBlockInfo } from '../consensus/interface.js';
import { REJECT_REASONS, type RejectReason } from '../mempool/index.js';
import { type CounterState, HotCounter, HotHistogram, type HistogramState } from './hot-series.js';
import { processRegistry } from './process.js';
import { rpcMethodLabel } from './rpc-methods.js';

/** Live values read at scrape time (no bookkeeping on the hot path). */
export interface MetricsSources {
  height(): number;
  finalizedHeight(): number;
  activeValidators(): number;
  txPoolSize(): number;
  /** Unix milliseconds the node started. */
  startedAt: number;
  /** "native" or "js". */
  cryptoBackend: string;
  /** Read at scrape time: the HTTP backend is known only once the server runs. */
  info(): { version: string; build: string; chainId: number; network: string; httpBackend: string };
}

const HTTP_METHODS = new Set(['GET', 'POST', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'PATCH']);
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const BLOCK_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const TXS_PER_BLOCK_BUCKETS = [0, 1, 10, 50, 100, 500, 1000, 2500, 5000, 10_000, 20_000];

const statusClass = (status: number): string => `${Math.floor(status / 100)}xx`;

/** The series one request or call updates, looked up once per label set and kept. */
interface HotSeries {
  count: CounterState;
  duration: HistogramState;
}

/** An RPC method's series by outcome (each outcome's series appears with its first call). */
interface RpcSeries {
  label: string;
  ok: CounterState | null;
  error: CounterState | null;
  duration: HistogramState;
}

/** A gauge whose value is read at scrape time. */
export function liveGauge(registry: Registry, name: string, help: string, read: () => number): Gauge {
  return new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}

/** Typed handles on one node's metrics; created by createMetrics and wired in ts/node. */
export class NodeMetrics {
  readonly contentType: string;
  private readonly httpRequests: HotCounter;
  private readonly httpDuration: HotHistogram;
  private readonly rateLimited: Counter<'bucket'>;
  private readonly authFailures: Counter<'route'>;
  private readonly rpcCalls: HotCounter;
  private readonly rpcDuration: HotHistogram;
  /** HTTP series by route pattern, then method, then status (the route strings are the route table's own). */
  private readonly httpSeries = new Map<string, Map<string, HotSeries[]>>();
  /** RPC series by label (method names outside the known set share the `other` series). */
  private readonly rpcSeries = new Map<string, RpcSeries>();
  private readonly txRejected: Counter<'reason'>;
  private readonly txIncluded: Counter;
  private readonly blocksProduced: Counter;
  private readonly blocksLate: Counter;
  private readonly blockTxs: Histogram;
  private readonly blockTotal: Histogram;
  private readonly blockExecute: Histogram;
  private readonly blockStateRoot: Histogram;
  private readonly blockCommit: Histogram;

  constructor(
    readonly registry: Registry,
    sources: MetricsSources,
  ) {
    this.contentType = registry.contentType;
    const registers = [registry];
    const live = (name: string, help: string, read: () => number) => liveGauge(registry, name, help, read);
    live('native_block_height', 'Height of the chain head', sources.height);
    live('native_finalized_height', 'Highest final block under the current consensus rules', sources.finalizedHeight);
    live('native_active_validators', 'Validators in the active set (PoA: the authority set)', sources.activeValidators);
    live('native_tx_pool_size', 'Transactions waiting in the mempool', sources.txPoolSize);
    live('native_uptime_seconds', 'Seconds since the node started', () => (Date.now() - sources.startedAt) / 1000);
    new Gauge({
      name: 'native_crypto_backend_info',
      help: 'Crypto backend in use: native (Rust addon) or js (@noble twin); always 1',
      labelNames: ['backend'],
      registers,
    }).set({ backend: sources.cryptoBackend }, 1);
    new Gauge({
      name: 'native_build_info',
      help: 'Node version, build, network and HTTP backend; always 1',
      labelNames: ['version', 'build', 'chain_id', 'network', 'http_backend'],
      registers,
      collect() {
        const i = sources.info();
        this.reset();
        this.set(
          { version: i.version, build: i.build, chain_id: String(i.chainId), network: i.network, http_backend: i.httpBackend },
          1,
        );
      },
    });

    const httpLabels = ['method', 'route', 'status_class'] as const;
    this.httpRequests = new HotCounter(
      'native_http_requests_total',
      'HTTP requests answered by the API, by route pattern (unmatched for unknown paths) and status class',
      httpLabels,
    );
    this.httpDuration = new HotHistogram(
      'native_http_request_duration_seconds',
      'Time from routing to the response being ready, by route pattern and status class',
      httpLabels,
      HTTP_BUCKETS,
    );
    this.rateLimited = new Counter({
      name: 'native_http_rate_limited_total',
      help: 'Requests refused with 429, by the bucket that tripped (global or write)',
      labelNames: ['bucket'],
      registers,
    });
    for (const bucket of ['global', 'write']) this.rateLimited.inc({ bucket }, 0);
    this.authFailures = new Counter({
      name: 'native_http_auth_failures_total',
      help: 'Requests refused with 401 (X-API-Key missing or wrong), by route pattern',
      labelNames: ['route'],
      registers,
    });
    this.rpcCalls = new HotCounter(
      'native_rpc_calls_total',
      'JSON-RPC calls by method (other for unknown names) and outcome (ok or error)',
      ['method', 'outcome'],
    );
    this.rpcDuration = new HotHistogram(
      'native_rpc_call_duration_seconds',
      'JSON-RPC call execution time by method',
      ['method'],
      HTTP_BUCKETS,
    );
    this.txRejected = new Counter({
      name: 'native_tx_rejected_total',
      help: 'Transactions refused at mempool admission, by reason',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of REJECT_REASONS) this.txRejected.inc({ reason }, 0);
    this.txIncluded = new Counter({
      name: 'native_tx_included_total',
      help: 'Transactions included in blocks produced by this node',
      registers,
    });
    this.blocksProduced = new Counter({ name: 'native_blocks_produced_total', help: 'Blocks produced by this node', registers });
    this.blocksLate = new Counter({
      name: 'native_blocks_late_total',
      help: 'Blocks this node committed after their slot ended (the next slot is lost)',
      registers,
    });
    this.blockTxs = new Histogram({
      name: 'native_block_transactions',
      help: 'Transactions per block produced by this node',
      buckets: TXS_PER_BLOCK_BUCKETS,
      registers,
    });
    const blockHistogram = (name: string, help: string) => new Histogram({ name, help, buckets: BLOCK_BUCKETS, registers });
    this.blockTotal = blockHistogram(
      'native_block_production_seconds',
      'Block production time: take, execute, state root, commit',
    );
    this.blockExecute = blockHistogram('native_block_execution_seconds', 'Transaction execution time per produced block');
    this.blockStateRoot = blockHistogram('native_block_state_root_seconds', 'State root computation time per produced block');
    this.blockCommit = blockHistogram('native_block_db_commit_seconds', 'RocksDB commit time per produced block');
  }

  /** One answered API request; `route` is the route pattern, never the raw path. */
  observeHttp(method: string, route: string, status: number, seconds: number): void {
    let byRoute = this.httpSeries.get(route);
    if (!byRoute) this.httpSeries.set(route, (byRoute = new Map()));
    // Bounded: the known methods and other, and the statuses the API answers with (an array by status).
    const m = HTTP_METHODS.has(method) ? method : 'other';
    let byStatus = byRoute.get(m);
    if (!byStatus) byRoute.set(m, (byStatus = []));
    let s = byStatus[status];
    if (!s) {
      const cls = statusClass(status);
      const key = `${m} ${route} ${cls}`;
      const values = [m, route, cls];
      s = { count: this.httpRequests.state(key, values), duration: this.httpDuration.state(key, values) };
      byStatus[status] = s;
    }
    s.count.n++;
    this.httpDuration.observeIn(s.duration, seconds);
  }

  rateLimit(bucket: 'global' | 'write'): void {
    this.rateLimited.inc({ bucket });
  }

  authFailure(route: string): void {
    this.authFailures.inc({ route });
  }

  /** One executed JSON-RPC call (method names outside the known set are labelled other). */
  recordRpcCall(method: string, ok: boolean, seconds: number): void {
    let s = this.rpcSeries.get(method);
    if (!s) {
      const label = rpcMethodLabel(method);
      s = this.rpcSeries.get(label);
      if (!s) {
        s = {
          label,
          ok: null,
          error: null,
          duration: this.rpcDuration.state(label, [label]),
        };
        this.rpcSeries.set(label, s);
      }
    }
    if (ok) (s.ok ??= this.rpcCalls.state(`${s.label} ok`, [s.label, 'ok'])).n++;
    else (s.error ??= this.rpcCalls.state(`${s.label} error`, [s.label, 'error'])).n++;
    this.rpcDuration.observeIn(s.duration, seconds);
  }

  txRejectedBy(reason: RejectReason): void {
    this.txRejected.inc({ reason });
  }

  blockProduced(info: ProducedBlockInfo): void {
    this.blocksProduced.inc();
    if (info.lateMs > 0) this.blocksLate.inc();
    this.txIncluded.inc(info.txCount);
    this.blockTxs.observe(info.txCount);
    this.blockTotal.observe(info.totalMs / 1000);
    this.blockExecute.observe(info.executeMs / 1000);
    this.blockStateRoot.observe(info.stateRootMs / 1000);
    this.blockCommit.observe(info.commitMs / 1000);
  }

  /** This node's metrics followed by the process metrics, in the Prometheus text format. */
  async scrape(): Promise<string> {
    const base = await this.registry.metrics();
    const own = `${base}${base.endsWith('\n') ? '' : '\n'}${this.httpRequests.render()}${this.httpDuration.render()}${this.rpcCalls.render()}${this.rpcDuration.render()}`;
    const proc = await processRegistry().metrics();
    // prom-client 15 writes NaN as "Nan" (e.g. event loop lag before its first sample); the format says NaN.
    return `${own}${own.endsWith('\n') ? '' : '\n'}${proc}`.replace(/ Nan$/gm, ' NaN');
  }
}
