import { execSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { apiRequestHeaders, createApiHandler, restRoutes } from '../api/index.js';
import { rpcHooks } from '../api/routes/rpc.js';
import { Chain } from '../chain/chain.js';
import { PoaEngine } from '../consensus/poa.js';
import { crypto } from '../crypto/index.js';
import { CallPool } from '../execution/index.js';
import { type HttpServer, startHttpServer } from '../http/index.js';
import { TxAdmission } from '../mempool/admission.js';
import { Mempool } from '../mempool/mempool.js';
import { closeMetrics, createMetrics, type NodeMetrics, recordRpcCall, registerRpcMethods } from '../metrics/index.js';
import { rpcMethods } from '../rpc/index.js';
import { AuditLog, NODE_VERSION, type NodeContext, redactConfig } from '../services/index.js';
import { type KvStore, openRocksStore } from '../storage/index.js';
import type { NodeConfig } from './config.js';
import { chainParamsFor } from './genesis-params.js';
import { loadOrCreateValidatorKey } from './validator-key.js';

function buildId(): string {
  try {
    return (
      execSync('git rev-parse --short HEAD', { stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim() || 'unknown'
    );
  } catch {
    return 'unknown';
  }
}

/** True for addresses only this machine can reach. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/** The node's wiring: the one place that knows every component. */
export class NativeNode {
  private stopping: Promise<void> | null = null;

  private constructor(
    readonly config: NodeConfig,
    readonly ctx: NodeContext,
    readonly consensus: PoaEngine,
    readonly http: HttpServer,
    readonly audit: AuditLog,
    readonly metrics: NodeMetrics,
    private readonly db: KvStore,
    private readonly log: Logger,
    private readonly evmCalls: CallPool,
  ) {}

  static async start(config: NodeConfig, log: Logger): Promise<NativeNode> {
    const backend = crypto().name;
    log.info({ crypto_backend: backend }, `crypto backend: ${backend === 'native' ? 'native addon' : 'JS twin (@noble)'}`);
    mkdirSync(config.dataDir, { recursive: true });
    const { key, created } = loadOrCreateValidatorKey(config.dataDir);
    if (created) log.info({ address: key.address }, 'created validator key');
    const params = chainParamsFor(config, key);
    const db = await openRocksStore(join(config.dataDir, 'db'));
    let metrics: NodeMetrics | undefined;
    let audit: AuditLog | undefined;
    let http: HttpServer | undefined;
    const evmCalls = new CallPool({
      workers: config.rpcEvmWorkers,
      maxQueue: config.rpcEvmQueue,
      gasCap: config.rpcGasCap,
      timeoutMs: config.rpcEvmTimeoutMs,
      onError: (err) => log.error({ err }, 'call worker failed'),
    });
    try {
      const chain = new Chain(params, db, config.windowSize);
      await chain.open();
      log.info(
        { height: chain.height, head: chain.head.hash, chain_id: params.chainId, network: params.network },
        'chain opened',
      );
      const auditLog = await AuditLog.open(db, { onError: (err) => log.error({ err }, 'audit log write failed') });
      audit = auditLog;
      auditLog.record('config', { ...redactConfig(config), api_key_set: config.apiKey !== undefined });
      if (!config.apiKey && !isLoopback(config.apiHost)) {
        log.warn({ host: config.apiHost }, 'NATIVE_API_KEY is not set: write and admin endpoints are open to every client');
      }
      const mempool = new Mempool({ maxPerSender: config.maxPerSender, maxTotal: config.maxMempool });
      const admission = new TxAdmission(chain, mempool);
      const consensus = new PoaEngine(chain, mempool, key, {
        blockTimeMs: config.blockTimeMs,
        maxBlockTxs: config.maxBlockTxs,
        packGasLimit: config.packGasLimit,
      });
      const ctx: NodeContext = {
        chain,
        mempool,
        admission,
        consensus,
        nodeName: config.nodeName,
        version: NODE_VERSION,
        build: buildId(),
        startedAt: Date.now(),
        cryptoBackend: backend,
        audit: auditLog,
        evmCalls,
      };
      const m = createMetrics(new Registry(), {
        height: () => chain.height,
        finalizedHeight: () => consensus.finalizedHeight(),
        activeValidators: () => chain.params.validators.length,
        txPoolSize: () => mempool.size,
        startedAt: ctx.startedAt,
        cryptoBackend: backend,
        info: () => ({
          version: ctx.version,
          build: ctx.build,
          chainId: params.chainId,
          network: params.network,
          httpBackend: http?.backend ?? config.httpBackend,
        }),
      });
      metrics = m;
      ctx.metrics = m;
      admission.onReject = (reason) => m.txRejectedBy(reason);
      // Process-wide hooks of the JSON-RPC route (one node per process in production).
      registerRpcMethods(Object.keys(rpcMethods));
      rpcHooks.onCall = recordRpcCall;
      rpcHooks.onInternalError = (err, method) => log.error({ err, method }, 'JSON-RPC method failed');
      const handler = createApiHandler(ctx, restRoutes, {
        apiKey: config.apiKey,
        corsOrigin: config.corsOrigin,
        rateLimits: { global: config.rateLimitGlobal, write: config.rateLimitWrite, windowSecs: config.rateLimitWindowSecs },
        trustedProxies: config.trustedProxies,
        onError: (err, req) => log.error({ err, path: req.path }, 'request failed'),
        onAuthFailure: (f) => {
          m.authFailure(f.route);
          auditLog.record('auth_failure', { ip: f.ip, method: f.method, path: f.path, reason: f.reason });
        },
        onRateLimited: (bucket) => m.rateLimit(bucket),
        onResponse: (method, route, status, seconds) => m.observeHttp(method, route, status, seconds),
      });
      http = await startHttpServer(
        {
          host: config.apiHost,
          port: config.apiPort,
          backend: config.httpBackend,
          maxBodyBytes: config.maxBodyBytes,
          maxConcurrent: config.maxConcurrent,
          logger: log,
          requestHeaders: apiRequestHeaders(config),
        },
        handler,
      );
      const node = new NativeNode(config, ctx, consensus, http, auditLog, m, db, log, evmCalls);
      consensus.onProduced = (info) => {
        m.blockProduced(info);
        const fields = { ...info, gasUsed: Number(info.gasUsed) };
        // A late block costs the next slot (PoA waits for the following slot boundary).
        if (info.lateMs > 0) log.warn({ ...fields, blockTimeMs: config.blockTimeMs }, 'block ran late: committed after its slot');
        else if (info.txCount > 0) log.info(fields, 'block produced');
        else log.debug(fields, 'block produced');
      };
      consensus.onError = (err) => {
        log.fatal({ err }, 'block production failed; stopping (restart resumes from the last committed block)');
        void node.stop().then(() => process.exit(1));
      };
      if (params.validators.some((v) => v.address === key.address)) consensus.start();
      else log.warn({ address: key.address }, 'this node is not an authority; not producing blocks');
      log.info(
        {
          host: config.apiHost,
          port: http.port,
          http_backend: http.backend,
          rate_limit_global: config.rateLimitGlobal,
          rate_limit_write: config.rateLimitWrite,
          rate_limit_window_secs: config.rateLimitWindowSecs,
          trusted_proxies: config.trustedProxies,
        },
        'API listening',
      );
      return node;
    } catch (err) {
      await http?.close();
      await evmCalls.close();
      if (metrics) closeMetrics(metrics);
      await audit?.close();
      await db.close();
      throw err;
    }
  }

  /** Stop producing, close the API, flush the audit log, close the database. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await this.consensus.stop();
      await this.http.close();
      await this.evmCalls.close();
      closeMetrics(this.metrics);
      await this.audit.close();
      await this.db.close();
      this.log.info({ height: this.ctx.chain.height }, 'node stopped');
    })();
    return this.stopping;
  }
}
