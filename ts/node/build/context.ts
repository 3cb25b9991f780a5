/**
 * The block producer (PoA; the network builder adds BFT on validators), the event feed and the filters, and
 * the NodeContext every transport answers from; on the dev chain, its test controls.
 */
import type { Chain } from '../../chain/index.js';
import { PoaEngine } from '../../consensus/index.js';
import { DevChain } from '../../dev/index.js';
import type { CallPool, TracePool } from '../../execution/index.js';
import type { KeyPair } from '../../ledger/index.js';
import type { Mempool, TxAdmission } from '../../mempool/index.js';
import { ChainEventFeed, FilterRegistry } from '../../events/index.js';
import { type AuditLog, NODE_VERSION, type NodeContext } from '../../services/index.js';
import type { NodeConfig } from '../config.js';
import type { Built } from './stops.js';

export interface ContextParts {
  chain: Chain;
  mempool: Mempool;
  admission: TxAdmission;
  key: KeyPair;
  audit: AuditLog;
  evmCalls: CallPool;
  evmTraces: TracePool;
  /** The checkout's commit (asked of git while the database opened). */
  build: string;
  cryptoBackend: string;
}

export function buildContext(config: NodeConfig, p: ContextParts): Built<{ ctx: NodeContext; consensus: PoaEngine }> {
  const { chain, mempool, admission } = p;
  const events = new ChainEventFeed();
  events.attachChain(chain);
  admission.onPooled = (tx) => events.pendingTransaction(tx);
  const consensus = new PoaEngine(chain, mempool, p.key, {
    blockTimeMs: config.blockTimeMs,
    maxBlockTxs: config.maxBlockTxs,
    pack: { gas: config.packGasLimit, ms: config.packTimeMs },
  });
  const filters = new FilterRegistry(chain, events);
  const ctx: NodeContext = {
    chain,
    mempool,
    admission,
    consensus,
    nodeName: config.nodeName,
    version: NODE_VERSION,
    build: p.build,
    startedAt: Date.now(),
    cryptoBackend: p.cryptoBackend,
    audit: p.audit,
    evmCalls: p.evmCalls,
    evmTraces: p.evmTraces,
    events,
    validatorKey: p.key,
    filters,
  };
  filters.start();
  // The dev chain's test controls; block time 0 means automine (a block per transaction).
  if (config.network === 'dev') {
    const mode = { automine: config.blockTimeMs === 0, intervalMs: config.blockTimeMs };
    ctx.dev = new DevChain({ chain, mempool, admission }, consensus, mode, config.anvilCompat, config.devAccounts);
  }
  return { ctx, consensus, stop: () => filters.stop() };
}
