import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import type { ApiKeyRegistry } from '../api/index.js';
import type { BftEngine, PoaEngine } from '../consensus/index.js';
import { crypto } from '../crypto/index.js';
import type { GrpcServer } from '../grpc/index.js';
import type { HttpServer } from '../http/index.js';
import type { TxJournal } from '../mempool/index.js';
import type { NodeMetrics } from '../metrics/index.js';
import type { P2PNetwork } from '../network/index.js';
import { warmChainIndex } from '../indexes/index.js';
import type { AuditLog, NodeContext } from '../services/index.js';
import type { BlockSync } from '../sync/index.js';
import type { KvStore } from '../storage/index.js';
import { buildApi } from './build/api.js';
import { buildAudit } from './build/audit.js';
import { buildContext } from './build/context.js';
import { buildGrpc, grpcLoader } from './build/grpc.js';
import { buildMempool } from './build/mempool.js';
import { buildMetrics } from './build/metrics.js';
import { buildNetwork } from './build/network.js';
import { startProduction, wireBlockProduction } from './build/production.js';
import { type NodeCore, StopStack } from './build/stops.js';
import { buildStateSync } from './build/state-sync.js';
import { buildChain, buildDatabase } from './build/storage.js';
import { buildVerification } from './build/verification.js';
import { buildWorkerPools } from './build/worker-pools.js';
import type { NodeConfig } from './config.js';
import { reloadApiKeys } from './fleet.js';
import { chainParamsFor } from './genesis-params.js';
import type { Networking } from './network.js';
import { loadOrCreateValidatorKey } from './validator-key.js';

/** The checkout's short commit, asked of git while the database opens (a synchronous spawn held the start ~20 ms). */
function buildId(): Promise<string> {
  return new Promise((resolve) =>
    execFile('git', ['rev-parse', '--short', 'HEAD'], (err, stdout) => resolve((!err && stdout.trim()) || 'unknown')),
  );
}

/** "no rate limits", or the limits in force. */
function describeRateLimits(c: NodeConfig): string {
  if (c.rateLimitGlobal === 0 && c.rateLimitWrite === 0) return 'no rate limits';
  const n = (v: number) => (v === 0 ? 'unlimited' : String(v));
  return `rate limits ${n(c.rateLimitGlobal)} requests, ${n(c.rateLimitWrite)} writes per ${c.rateLimitWindowSecs} s per IP`;
}

/** What NativeNode.start hands the node it built. */
interface NodeParts {
  config: NodeConfig;
  ctx: NodeContext;
  consensus: PoaEngine;
  http: HttpServer;
  audit: AuditLog;
  metrics: NodeMetrics;
  grpc: GrpcServer | null;
  txJournal: TxJournal | null;
  apiKeys: ApiKeyRegistry | null;
  drainState: { draining: boolean };
  stops: StopStack;
  log: Logger;
  core: NodeCore;
}

/**
 * The node's wiring: the one place that knows every component. `start` runs the builders of ts/node/build in
 * order (storage and chain, audit, worker pools, mempool, context and PoA, verification, metrics, the API,
 * gRPC, the network, block production); each hands back what it built and its stop, kept on a stack that
 * `stop` (and a start failing half-way) runs last first. Nothing is process-wide: two nodes in one process
 * (tests) share no hook, counter or log.
 */
export class NativeNode {
  private stopping: Promise<void> | null = null;
  private networking: Networking | null = null;
  readonly config: NodeConfig;
  readonly ctx: NodeContext;
  readonly consensus: PoaEngine;
  readonly http: HttpServer;
  readonly audit: AuditLog;
  readonly metrics: NodeMetrics;
  /** The gRPC (HTTP/2) server; null with --grpc-port off. gRPC-Web rides on `http`. */
  readonly grpc: GrpcServer | null;
  /** The journal of accepted transactions (absent with --tx-journal off). */
  readonly txJournal: TxJournal | null;
  /** The dev chain's JSON-RPC warm-up, running in the background on a scratch chain (dev-warm-up.ts). */
  devWarmUp: Promise<boolean> = Promise.resolve(false);
  /** The keys file in force (`--api-keys`); null without one. */
  private readonly apiKeys: ApiKeyRegistry | null;
  /** Set by a drain (SIGTERM): GET /ready answers 503. */
  private readonly drainState: { draining: boolean };
  private readonly stops: StopStack;
  private readonly log: Logger;
  /** The concrete chain, pool and admission behind ctx's read interfaces: networking, shutdown (and tests) drive them. */
  readonly core: NodeCore;

  private constructor(p: NodeParts) {
    this.config = p.config;
    this.ctx = p.ctx;
    this.consensus = p.consensus;
    this.http = p.http;
    this.audit = p.audit;
    this.metrics = p.metrics;
    this.grpc = p.grpc;
    this.txJournal = p.txJournal;
    this.apiKeys = p.apiKeys;
    this.drainState = p.drainState;
    this.stops = p.stops;
    this.log = p.log;
    this.core = p.core;
  }

  /** `opts.store`: the database main.ts started opening (openNodeStore); opened here otherwise. */
  static async start(config: NodeConfig, log: Logger, opts: { store?: Promise<KvStore> } = {}): Promise<NativeNode> {
    // Milliseconds since the process started at the end of each step (logged with "API listening";
    // bench/startup.ts and docs/operations.md, "Start-up time"): `modules` is Node's start and the imports.
    const startMs: Record<string, number> = { modules: Math.round(performance.now()) };
    const step = (name: string) => {
      startMs[name] = Math.round(performance.now());
    };
    // The first line says what kind of node this is; on the dev chain, that it is open to every local tool.
    if (config.network === 'dev') {
      log.info(
        {
          network: 'dev',
          chain_id: config.chainId,
          rate_limits: describeRateLimits(config),
          cors_origin: config.corsOrigin ?? null,
        },
        `dev chain ${config.chainId}: ${describeRateLimits(config)}, CORS ${config.corsOrigin ?? 'off'} (local development only)`,
      );
    }
    const build = buildId();
    const backend = crypto().name;
    log.info({ crypto_backend: backend }, `crypto backend: ${backend === 'native' ? 'native addon' : 'JS twin (@noble)'}`);
    mkdirSync(config.dataDir, { recursive: true });
    const { key, created } = loadOrCreateValidatorKey(config.dataDir);
    if (created) log.info({ address: key.address }, 'created validator key');
    const genesisParams = chainParamsFor(config, key);
    step('keys');
    const stops = new StopStack();
    const { db } = stops.take('database', await buildDatabase(config, opts.store));
    step('database');
    try {
      const pools = stops.take('worker pools', buildWorkerPools(config, log));
      // --state-sync on a fresh data dir: the state of a peer snapshot first (the chain opens at its block).
      await buildStateSync(config, db, genesisParams, log);
      const { chain, params } = stops.take('chain', await buildChain(config, db, genesisParams, log));
      step('chain');
      const { audit } = stops.take('audit log', await buildAudit(config, db, log));
      const { mempool, admission, journal } = stops.take('mempool', await buildMempool(config, chain, log));
      const { ctx, consensus } = stops.take(
        'context',
        buildContext(config, { chain, mempool, admission, key, audit, ...pools, build: await build, cryptoBackend: backend }),
      );
      stops.take('verification', buildVerification(config, ctx, db, log));
      const core = { chain, mempool, admission };
      let http: HttpServer | undefined;
      const metrics = buildMetrics(ctx, core, consensus, () => http?.backend ?? config.httpBackend);
      const drainState = { draining: false };
      const grpcLoad = grpcLoader(ctx, metrics, log);
      const api = stops.take('api', await buildApi(config, ctx, { db, audit, metrics, drainState, grpcWeb: grpcLoad.web, log }));
      http = api.http;
      step('listening');
      // Proposer, epoch and day aggregates of the history fold in the background once the API listens: no
      // page waits for them.
      stops.take('chain index warm-up', warmChainIndex({ chain }));
      const { grpc } = stops.take('grpc', await buildGrpc(config, grpcLoad, log));
      step('grpc');
      const node = new NativeNode({
        config,
        ctx,
        consensus,
        http,
        audit,
        metrics,
        grpc,
        txJournal: journal,
        apiKeys: api.apiKeys,
        drainState,
        stops,
        log,
        core,
      });
      wireBlockProduction(config, ctx, admission, consensus, metrics, log, () => void node.stop().finally(() => process.exit(1)));
      if (config.p2pPort !== null)
        node.networking = stops.take('network', await buildNetwork(config, ctx, core, consensus, key, metrics, log));
      const production = stops.take(
        'block production',
        await startProduction(config, ctx, { params, consensus, key, rpc: api.rpc, log }),
      );
      node.devWarmUp = production.devWarmUp;
      step('warm_up');
      log.info(
        {
          host: config.apiHost,
          port: http.port,
          http_backend: http.backend,
          rate_limit_global: config.rateLimitGlobal,
          rate_limit_write: config.rateLimitWrite,
          rate_limit_window_secs: config.rateLimitWindowSecs,
          trusted_proxies: config.trustedProxies,
          cors_origin: config.corsOrigin ?? null,
          websocket: config.ws ? `ws://${config.apiHost}:${http.port}/rpc` : null,
          start_ms: startMs,
        },
        'API listening',
      );
      return node;
    } catch (err) {
      // Everything built so far stops, last first: no port, worker or file stays open.
      await stops
        .unwind((e, part) => log.error({ err: e, part }, 'stopping a part after a failed start failed'))
        .catch(() => undefined);
      throw err;
    }
  }

  get net(): P2PNetwork | null {
    return this.networking?.net ?? null;
  }

  get bft(): BftEngine | null {
    return this.networking?.bft ?? null;
  }

  get sync(): BlockSync | null {
    return this.networking?.sync ?? null;
  }

  /** A drain began (ts/node/shutdown.ts): GET /ready answers 503 from now on. */
  beginDrain(): void {
    this.drainState.draining = true;
  }

  get draining(): boolean {
    return this.drainState.draining;
  }

  /** SIGHUP: re-read the keys file; a bad file keeps the keys in force (logged). */
  reloadApiKeys(): void {
    reloadApiKeys(this.apiKeys, this.config, this.log);
  }

  /** Stop producing, close the API, flush the audit log, close the database: the stops of start, last first. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await this.stops.unwind((err, part) => this.log.error({ err, part }, 'stopping a part failed; stopping the rest'));
      this.log.info({ height: this.ctx.chain.height }, 'node stopped');
    })();
    return this.stopping;
  }
}

export { DataDirInUseError } from './node-store.js';
