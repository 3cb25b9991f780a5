import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { type ApiKeyRegistry, apiRequestHeaders, createApiHandler, createLimiter, restRoutes, rpcWebSocket, explorerHooks, rpcHooks } from '../api/index.js';
import { Chain, DEFAULT_CHECKPOINT_EVERY_BLOCKS, TRIE_CHECKPOINT_FILE } from '../chain/index.js';
import { PoaEngine, type BftEngine } from '../consensus/index.js';
import { crypto } from '../crypto/index.js';
import { CallPool, TracePool } from '../execution/index.js';
import type { GrpcServer } from '../grpc/index.js';
import { GRPC_WEB_PATH_PREFIX, GRPC_WEB_REQUEST_HEADERS, withGrpcWeb } from '../grpc/light.js';
import { type HttpServer, startHttpServer, type HttpHandler } from '../http/index.js';
import { TxAdmission, TxJournal, DEFAULT_MEMPOOL_LIMITS, Mempool } from '../mempool/index.js';
import { closeMetrics, createMetrics, type NodeMetrics, recordRpcCall, registerRpcMethods } from '../metrics/index.js';
import type { KeyPair } from '../ledger/index.js';
import type { P2PNetwork } from '../network/index.js';
import { DevChain } from '../dev/index.js';
import { devRpcMethods, rpcMethods } from '../rpc/index.js';
import type { BlockSync } from '../sync/index.js';
import { AuditLog, ChainEventFeed, FilterRegistry, NODE_VERSION, followRollbacks, type NodeContext, nodeChainReader, openStateIndex, redactConfig, stopStateIndex, warmChainIndex } from '../services/index.js';
import { CompilePool, VERIFY_CHAINS, VerificationService, VerificationStore, verifyHooks } from '../verify/index.js';
import type { KvStore } from '../storage/index.js';
import type { NodeConfig } from './config.js';
import { rpcWarmUpApplies, warmUpDevRpc } from './dev-warm-up.js';
import { keyQuotas, readinessSource, reloadApiKeys } from './fleet.js';
import { chainParamsFor, settleDevGenesis } from './genesis-params.js';
import type { GrpcWiring } from './grpc-wiring.js';
import { type Networking, startNetworking } from './network.js';
import { openNodeStore } from './node-store.js';
import { startStateSnapshots, stopStateSnapshots } from './state-snapshots.js';
import { loadOrCreateValidatorKey } from './validator-key.js';

/** The checkout's short commit, asked of git while the database opens (a synchronous spawn held the start ~20 ms). */
function buildId(): Promise<string> {
  return new Promise((resolve) =>
    execFile('git', ['rev-parse', '--short', 'HEAD'], (err, stdout) => resolve((!err && stdout.trim()) || 'unknown')),
  );
}

/** True for addresses only this machine can reach. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/** "no rate limits", or the limits in force. */
function describeRateLimits(c: NodeConfig): string {
  if (c.rateLimitGlobal === 0 && c.rateLimitWrite === 0) return 'no rate limits';
  const n = (v: number) => (v === 0 ? 'unlimited' : String(v));
  return `rate limits ${n(c.rateLimitGlobal)} requests, ${n(c.rateLimitWrite)} writes per ${c.rateLimitWindowSecs} s per IP`;
}

/**
 * Open the transaction journal, replay what it holds through admission (arrival order; what is now invalid or
 * already in a block is refused and forgotten), then journal every later API admission and forget each
 * transaction once its block commits.
 */
async function openJournal(
  dir: string,
  chain: Chain,
  mempool: Mempool,
  admission: TxAdmission,
): Promise<{ journal: TxJournal; replayed: number }> {
  const { journal, replay } = await TxJournal.open(dir);
  let replayed = 0;
  for (const tx of replay) {
    try {
      if (tx.public_key === '') await admission.submitRaw(Buffer.from(tx.signature, 'hex'));
      else await admission.submit(tx);
      replayed++;
    } catch {
      /* included meanwhile, or no longer valid: dropped, as a restarted pool would drop it */
    }
  }
  const pending = (id: string) => mempool.has(id);
  journal.prune([], pending);
  admission.journal = journal;
  chain.on('block', (b) =>
    journal.prune(
      b.transactions.map((tx) => tx.txid),
      pending,
    ),
  );
  return { journal, replayed };
}

/**
 * The contract verification service on this node's chain (spec part D): chains 7119 and 7120 only (another
 * chain id gets a service that refuses every chain). Its compile workers start on the first verification.
 */
function startVerification(config: NodeConfig, ctx: NodeContext, db: KvStore, log: Logger): VerificationService {
  const chainId = ctx.chain.params.chainId;
  const chains = new Map(VERIFY_CHAINS.includes(chainId) ? [[chainId, nodeChainReader(ctx)]] : []);
  verifyHooks.onError = (err, where) => log.error({ err, where }, 'verification request failed');
  return new VerificationService({
    chains,
    store: new VerificationStore(db),
    compiler: new CompilePool({
      timeoutMs: config.verifyTimeoutMs,
      memoryMb: config.verifyMemoryMb,
      onError: (err) => log.error({ err }, 'compile worker failed'),
    }),
    solcDir: config.solcDir,
  });
}

/** The node's wiring: the one place that knows every component. */
export class NativeNode {
  private stopping: Promise<void> | null = null;
  private networking: Networking | null = null;
  private validatorKey!: KeyPair;
  /** The chain index's background warm-up (stopped before the store closes). */
  private indexWarmup?: { stop: () => Promise<void> };
  /** The gRPC (HTTP/2) server; null with --grpc-port off. gRPC-Web rides on `http`. */
  grpc: GrpcServer | null = null;
  /** The journal of accepted transactions (absent with --tx-journal off). */
  txJournal: TxJournal | null = null;
  /** Set by a drain (SIGTERM): GET /ready answers 503. */
  private drainState = { draining: false };
  /** The keys file in force (`--api-keys`); null without one. */
  private apiKeys: ApiKeyRegistry | null = null;
  /** The dev chain's JSON-RPC warm-up, running in the background on a scratch chain (dev-warm-up.ts). */
  devWarmUp: Promise<boolean> = Promise.resolve(false);

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
    private readonly evmTraces: TracePool,
    /** Ends gRPC-Web streams when the node stops. */
    private readonly grpcWebStop: AbortController,
  ) {}

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
    const db = await (opts.store ?? openNodeStore(config.dataDir));
    step('database');
    let metrics: NodeMetrics | undefined;
    let audit: AuditLog | undefined;
    let http: HttpServer | undefined;
    let grpc: GrpcServer | null = null;
    let journal: { journal: TxJournal; replayed: number } | undefined;
    let verification: VerificationService | undefined;
    let indexWarmup: ReturnType<typeof warmChainIndex> | undefined;
    let stopIndex: (() => Promise<void>) | undefined;
    const evmCalls = new CallPool({
      workers: config.rpcEvmWorkers,
      maxQueue: config.rpcEvmQueue,
      inlineMs: config.rpcEvmInlineMs,
      gasCap: config.rpcGasCap,
      timeoutMs: config.rpcEvmTimeoutMs,
      onError: (err) => log.error({ err }, 'call worker failed'),
    });
    const evmTraces = new TracePool({ onError: (err) => log.error({ err }, 'trace worker failed') });
    const drainState = { draining: false };
    try {
      const params = await settleDevGenesis(config, genesisParams, db);
      const chain = new Chain(params, db, config.windowSize, {
        history: config.history,
        stateCacheBytes: config.stateCacheBytes,
        trieCheckpoint: { path: join(config.dataDir, TRIE_CHECKPOINT_FILE), everyBlocks: DEFAULT_CHECKPOINT_EVERY_BLOCKS },
      });
      chain.on('checkpoint', (height, err, ms) => {
        if (err) log.warn({ err, height }, 'state trie checkpoint failed');
        else log.debug({ height, ms: Math.round(ms) }, 'state trie checkpoint written');
      });
      await chain.open();
      log.info({ ...chain.trieStart, ms: Math.round(chain.trieStart?.ms ?? 0) }, 'state trie opened');
      // Rich list, holders and delegation lists follow every commit from now on (on disk: current at once
      // after a clean stop, else rebuilt from the state in the background while queries wait).
      await openStateIndex(chain, { log: (level, fields, msg) => log[level](fields, msg) });
      stopIndex = () => stopStateIndex(chain);
      startStateSnapshots(config, chain, db, log);
      log.info(
        { height: chain.height, head: chain.head.hash, chain_id: params.chainId, network: params.network },
        'chain opened',
      );
      step('chain');
      const auditLog = await AuditLog.open(db, { onError: (err) => log.error({ err }, 'audit log write failed') });
      audit = auditLog;
      auditLog.record('config', { ...redactConfig(config), api_key_set: config.apiKey !== undefined });
      if (!config.apiKey && !isLoopback(config.apiHost)) {
        log.warn({ host: config.apiHost }, 'NATIVE_API_KEY is not set: write and admin endpoints are open to every client');
      }
      const mempool = new Mempool({ ...DEFAULT_MEMPOOL_LIMITS, maxPerSender: config.maxPerSender, maxTotal: config.maxMempool });
      const admission = new TxAdmission(chain, mempool);
      if (config.txJournal) {
        journal = await openJournal(join(config.dataDir, 'tx-journal'), chain, mempool, admission);
        if (journal.replayed > 0) log.info({ replayed: journal.replayed, pending: mempool.size }, 'transaction journal replayed');
      }
      const events = new ChainEventFeed();
      events.attachChain(chain);
      admission.onPooled = (tx) => events.pendingTransaction(tx);
      const consensus = new PoaEngine(chain, mempool, key, {
        blockTimeMs: config.blockTimeMs,
        maxBlockTxs: config.maxBlockTxs,
        pack: { gas: config.packGasLimit, ms: config.packTimeMs },
      });
      const ctx: NodeContext = {
        chain,
        mempool,
        admission,
        consensus,
        nodeName: config.nodeName,
        version: NODE_VERSION,
        build: await build,
        startedAt: Date.now(),
        cryptoBackend: backend,
        audit: auditLog,
        evmCalls,
        evmTraces,
        events,
        validatorKey: key,
        filters: new FilterRegistry(chain, events),
      };
      ctx.filters?.start();
      // The dev chain's test controls; block time 0 means automine (a block per transaction).
      if (config.network === 'dev') {
        const mode = { automine: config.blockTimeMs === 0, intervalMs: config.blockTimeMs };
        ctx.dev = new DevChain(ctx, consensus, mode, config.anvilCompat, config.devAccounts);
      }
      verification = startVerification(config, ctx, db, log);
      ctx.verification = verification;
      followRollbacks(ctx);
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
      registerRpcMethods(Object.keys(ctx.dev ? { ...rpcMethods, ...devRpcMethods() } : rpcMethods));
      rpcHooks.onCall = recordRpcCall;
      rpcHooks.onInternalError = (err, method) => log.error({ err, method }, 'JSON-RPC method failed');
      explorerHooks.onError = (err, path) => log.error({ err, path }, 'explorer page failed');
      const { apiKeys, keyHooks } = keyQuotas(config, log, m.registry);
      ctx.readiness = readinessSource(config, db, drainState);
      // One limiter for POST /rpc and WebSocket messages: a client's budget is the same on both.
      const limiter = createLimiter({
        global: config.rateLimitGlobal,
        write: config.rateLimitWrite,
        windowSecs: config.rateLimitWindowSecs,
      });
      const handler = createApiHandler(ctx, restRoutes, {
        apiKey: config.apiKey,
        corsOrigin: config.corsOrigin,
        limiter,
        trustedProxies: config.trustedProxies,
        onError: (err, req) => log.error({ err, path: req.path }, 'request failed'),
        onAuthFailure: (f) => {
          m.authFailure(f.route);
          auditLog.record('auth_failure', { ip: f.ip, method: f.method, path: f.path, reason: f.reason });
        },
        onRateLimited: (bucket) => m.rateLimit(bucket),
        onResponse: (method, route, status, seconds) => m.observeHttp(method, route, status, seconds),
        apiKeys,
        keyHooks,
      });
      // gRPC loads after the API listens (grpc-wiring.ts); a gRPC-Web request before that waits for it.
      const grpcWebStop = new AbortController();
      let grpcLoading: Promise<GrpcWiring> | undefined;
      const loadGrpc = () => {
        grpcLoading ??= import('./grpc-wiring.js').then((w) => w.wireGrpc(ctx, m, log, grpcWebStop.signal));
        return grpcLoading;
      };
      let grpcWeb: HttpHandler | undefined;
      const lazyGrpcWeb: HttpHandler = (req) => (grpcWeb ? grpcWeb(req) : loadGrpc().then((g) => (grpcWeb = g.web)(req)));
      const apiHeaders = apiRequestHeaders(config);
      http = await startHttpServer(
        {
          host: config.apiHost,
          port: config.apiPort,
          backend: config.httpBackend,
          maxBodyBytes: config.maxBodyBytes,
          maxConcurrent: config.maxConcurrent,
          logger: log,
          requestHeaders: apiHeaders,
          prefixHeaders: [{ prefix: GRPC_WEB_PATH_PREFIX, names: GRPC_WEB_REQUEST_HEADERS }],
          websocket: config.ws
            ? rpcWebSocket(ctx, {
                apiKey: config.apiKey,
                corsOrigin: config.corsOrigin,
                trustedProxies: config.trustedProxies,
                limiter,
                limits: {
                  maxConnections: config.wsMaxConnections,
                  maxBufferedBytes: config.wsMaxBufferedBytes,
                  maxMessageBytes: config.maxBodyBytes,
                },
              })
            : undefined,
        },
        withGrpcWeb(lazyGrpcWeb, handler),
      );
      step('listening');
      // Proposer, epoch and day aggregates of the history fold in the background once the API listens: no
      // page waits for them.
      indexWarmup = warmChainIndex({ chain });
      if (config.grpcPort !== null) grpc = await (await loadGrpc()).listen(config, log);
      step('grpc');
      const node = new NativeNode(config, ctx, consensus, http, auditLog, m, db, log, evmCalls, evmTraces, grpcWebStop);
      node.grpc = grpc;
      node.drainState = drainState;
      node.apiKeys = apiKeys;
      consensus.onPoolChanged = () => admission.onBlock();
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
      node.validatorKey = key;
      node.indexWarmup = indexWarmup;
      node.txJournal = journal?.journal ?? null;
      if (config.p2pPort !== null) await node.startNetwork();
      if (config.role === 'full') log.info({}, 'full node: following the network, not producing blocks');
      else if (ctx.dev) {
        // The JSON-RPC warm-up deploys the same contract through the served path (estimate, send, block,
        // commit, receipt): where it runs, the services' warm-up would only repeat its first half.
        if (!rpcWarmUpApplies(ctx)) await ctx.dev.warmUp(ctx);
        ctx.dev.start();
        node.devWarmUp = warmUpDevRpc(ctx, config, key, log);
      } else if (params.validators.some((v) => v.address === key.address)) consensus.start();
      else log.warn({ address: key.address }, 'this node is not an authority; not producing blocks');
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
      await grpc?.close();
      await http?.close();
      await evmCalls.close();
      await evmTraces.close();
      await journal?.journal.close();
      await verification?.close();
      await indexWarmup?.stop();
      await stopIndex?.();
      if (metrics) closeMetrics(metrics);
      await audit?.close();
      await db.close();
      throw err;
    }
  }

  /** Join the network (ts/node/network.ts): libp2p, block sync, relay, evidence, and the BFT engine on validators. */
  private async startNetwork(): Promise<void> {
    const { chain, admission, mempool } = this.ctx;
    // libp2p and its ~500 modules load only on a node that joins a network (--p2p-port).
    const { startNetworking } = await import('./network.js');
    this.networking = await startNetworking({
      config: this.config,
      chain,
      mempool,
      admission,
      poa: this.consensus,
      validatorKey: this.validatorKey,
      metrics: this.metrics,
      log: this.log,
    });
    this.ctx.network = this.networking.view;
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

  /** Stop producing, close the API, flush the audit log, close the database. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await this.devWarmUp;
      await this.ctx.dev?.stop();
      await this.consensus.stop();
      await this.networking?.stop();
      this.grpcWebStop.abort();
      await this.grpc?.close();
      // gRPC-Web streams write their UNAVAILABLE trailers once their pump sees the abort: a turn of the loop.
      await new Promise((resolve) => setImmediate(resolve));
      await this.http.close();
      this.ctx.filters?.stop();
      if (this.txJournal) {
        await this.txJournal.close();
        this.log.info(this.txJournal.stats, 'transaction journal closed');
      }
      await this.evmCalls.close();
      await this.evmTraces.close();
      await this.ctx.verification?.close();
      closeMetrics(this.metrics);
      await this.audit.close();
      await this.indexWarmup?.stop();
      await stopStateIndex(this.ctx.chain);
      await stopStateSnapshots(this.ctx.chain);
      // The trie as of the head, so the next start loads it instead of re-hashing the state.
      await this.ctx.chain.checkpointNow().catch((err) => this.log.warn({ err }, 'state trie checkpoint at shutdown failed'));
      await this.db.close();
      this.log.info({ height: this.ctx.chain.height }, 'node stopped');
    })();
    return this.stopping;
  }
}

export { DataDirInUseError } from './node-store.js';
