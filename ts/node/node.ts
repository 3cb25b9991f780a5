import { execSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { createApiHandler, restRoutes } from '../api/index.js';
import { Chain } from '../chain/chain.js';
import { PoaEngine } from '../consensus/poa.js';
import { crypto } from '../crypto/index.js';
import { type HttpServer, startHttpServer } from '../http/index.js';
import { TxAdmission } from '../mempool/admission.js';
import { Mempool } from '../mempool/mempool.js';
import { NODE_VERSION, type NodeContext } from '../services/index.js';
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

/** The node's wiring: the one place that knows every component. */
export class NativeNode {
  private stopping: Promise<void> | null = null;

  private constructor(
    readonly config: NodeConfig,
    readonly ctx: NodeContext,
    readonly consensus: PoaEngine,
    readonly http: HttpServer,
    private readonly db: KvStore,
    private readonly log: Logger,
  ) {}

  static async start(config: NodeConfig, log: Logger): Promise<NativeNode> {
    const backend = crypto().name;
    log.info({ crypto_backend: backend }, `crypto backend: ${backend === 'native' ? 'native addon' : 'JS twin (@noble)'}`);
    mkdirSync(config.dataDir, { recursive: true });
    const { key, created } = loadOrCreateValidatorKey(config.dataDir);
    if (created) log.info({ address: key.address }, 'created validator key');
    const params = chainParamsFor(config, key);
    const db = await openRocksStore(join(config.dataDir, 'db'));
    const chain = new Chain(params, db, config.windowSize);
    try {
      await chain.open();
    } catch (err) {
      await db.close();
      throw err;
    }
    log.info({ height: chain.height, head: chain.head.hash, chain_id: params.chainId, network: params.network }, 'chain opened');
    const mempool = new Mempool({ maxPerSender: config.maxPerSender, maxTotal: config.maxMempool });
    const admission = new TxAdmission(chain, mempool);
    const consensus = new PoaEngine(chain, mempool, key, { blockTimeMs: config.blockTimeMs, maxBlockTxs: config.maxBlockTxs });
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
    };
    const handler = createApiHandler(ctx, restRoutes, {
      apiKey: config.apiKey,
      corsOrigin: config.corsOrigin,
      onError: (err, req) => log.error({ err, path: req.path }, 'request failed'),
    });
    const http = await startHttpServer(
      {
        host: config.apiHost,
        port: config.apiPort,
        backend: config.httpBackend,
        maxBodyBytes: config.maxBodyBytes,
        maxConcurrent: config.maxConcurrent,
        logger: log,
      },
      handler,
    );
    const node = new NativeNode(config, ctx, consensus, http, db, log);
    consensus.onProduced = (info) => {
      if (info.txCount > 0) log.info(info, 'block produced');
      else log.debug(info, 'block produced');
    };
    consensus.onError = (err) => {
      log.fatal({ err }, 'block production failed; stopping (restart resumes from the last committed block)');
      void node.stop().then(() => process.exit(1));
    };
    if (params.validators.some((v) => v.address === key.address)) consensus.start();
    else log.warn({ address: key.address }, 'this node is not an authority; not producing blocks');
    log.info({ host: config.apiHost, port: http.port, http_backend: http.backend }, 'API listening');
    return node;
  }

  /** Stop producing, close the API, flush and close the database. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await this.consensus.stop();
      await this.http.close();
      await this.db.close();
      this.log.info({ height: this.ctx.chain.height }, 'node stopped');
    })();
    return this.stopping;
  }
}
