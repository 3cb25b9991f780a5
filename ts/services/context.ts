import type { ChainReader } from '../chain/interface.js';
import type { EvidenceEntry } from '../consensus/index.js';
import type { ConsensusEngine } from '../consensus/interface.js';
import type { CallRunner, TraceRunner } from '../execution/index.js';
import type { KeyPair } from '../ledger/index.js';
import type { PoolReader, TxSubmitter } from '../mempool/interface.js';
import type { VerificationService } from '../verify/index.js';
import type { AuditLog } from './audit-log.js';
import type { ChainEventFeed, FilterRegistry } from '../events/index.js';

/**
 * Everything a query or command needs; built once by ts/node and passed to every interface. The chain, the pool and
 * the admission are handed over as their narrow contracts (ts/chain/interface.ts, ts/mempool/interface.ts): what
 * queries read and how a client's transaction gets in, never a store or a method that writes blocks or the pool.
 */
export interface NodeContext {
  /** The chain, read only: head, parameters, state, blocks. Consumer: every query of ts/services. */
  chain: ChainReader;
  /** The pool, read only. Consumers: the tx lookup, pending nonces, txpool_* and GET /mempool. */
  mempool: PoolReader;
  /** The one way into the pool for clients. Consumers: the write queries and eth_sendRawTransaction. */
  admission: TxSubmitter;
  consensus: ConsensusEngine;
  nodeName: string;
  version: string;
  build: string;
  startedAt: number;
  /** Name of the crypto backend in use ("native" or "js"). */
  cryptoBackend: string;
  /** Admin audit log (GET /admin/log); admin handlers call `ctx.audit?.record('admin_action', {...})`. */
  audit?: AuditLog;
  /** This node's Prometheus registry (GET /metrics); absent in contexts built without ts/node. */
  metrics?: MetricsExposition;
  /** Runs eth_call / eth_estimateGas in the call worker pool; absent: in-process (benches, service tests). */
  evmCalls?: CallRunner;
  /** Runs debug_trace* and native_traceTransaction in the trace worker pool; absent: in-process (benches, service tests). */
  evmTraces?: TraceRunner;
  /** The node's event source (finalized blocks, pending transactions) for push interfaces. */
  events?: ChainEventFeed;
  /** This node's validator key: POST /validators signs the genesis admin's AddAuthority with it when it is the admin's. */
  validatorKey?: KeyPair;
  /** The dev chain's test controls (`--dev` only: ts/dev's DevChain): what transports read of it; its own tables use ts/dev's devChainOf. */
  dev?: DevChainView;
  /** Polled filters (eth_newFilter and friends); absent where no node runs (benches, service tests). */
  filters?: FilterRegistry;
  /** The P2P view (peers, sync); absent on a node started without networking. */
  network?: NetworkView;
  /** The contract verification service (ts/verify) on this node's chain; absent in contexts built without ts/node. */
  verification?: VerificationService;
  /** Thresholds and state behind GET /ready (ts/services/readiness.ts); absent in contexts built without ts/node. */
  readiness?: ReadinessSource;
}

/**
 * What code outside ts/dev reads of the dev chain (ts/dev's DevChain implements it). The dev chain's own JSON-RPC
 * tables (rpc/dev.ts, rpc/accounts.ts) get the whole DevChain through ts/dev's devChainOf; ts/services does not
 * import ts/dev (the dev chain is built on the queries here).
 */
export interface DevChainView {
  /** web3_clientVersion starts with `anvil/` (`--anvil-compat`). Consumer: rpc/native.ts, rpc/index.ts. */
  readonly anvilCompat: boolean;
  /** Whether a send admitted now is mined once settled() resolves (automine). Consumer: eth_sendRawTransaction. */
  readonly minesOnAdmission: boolean;
  /** Resolves once automine has mined what was admitted so far. Consumer: the send methods (rpc/evm.ts, rpc/native.ts). */
  settled(): Promise<void>;
  /**
   * Resolves once an automine send's block is committed; rejects with the reason when the block left it out (an
   * automine send never answers a hash for a transaction that is gone). Consumer: the send methods.
   */
  mined(txid: string): Promise<void>;
  /** The mining mode. Consumer: ts/node (whether the JSON-RPC warm-up runs). */
  readonly miner: { readonly automine: boolean; readonly intervalMs: number };
  /** Snapshot ids start again from 1. Consumer: the JSON-RPC warm-up (rpc/warm-up.ts). */
  readonly snapshots: { restartIds(): void };
  /** Take over block production. Consumer: ts/node at start. */
  start(): void;
  /** Stop mining. Consumer: ts/node at shutdown. */
  stop(): Promise<void>;
  /** The services warm-up before the node reports ready. Consumer: ts/node at start. */
  warmUp(ctx: NodeContext): Promise<void>;
}

/** What queries read of the P2P layer (ts/network, ts/sync, the BFT engine and evidence pool). */
export interface NetworkView {
  peerId: string;
  peers(): { peer_id: string; address: string; direction: string; height: number | null; score: number }[];
  catchingUp(): boolean;
  targetHeight(): number;
  /** While catching up: where it started, this node's head and the proven target (eth_syncing, sync_info). */
  syncing(): { starting: number; current: number; highest: number } | null;
  /** The highest head a connected peer has proven, or null (unproven claims never count). */
  bestProvenPeerHeight(): number | null;
  /** The BFT engine's position; absent on nodes without one (full nodes, non-validators). */
  bft?: () => BftView;
  evidence(): { pending: EvidenceEntry[]; committed: EvidenceEntry[] };
  /** Unix ms of the newest block committed here (every committed block is final). */
  lastFinalizedAt(): number;
  blocksImported(): number;
}

export interface BftView {
  height: number;
  round: number;
  step: 'propose' | 'prevote' | 'precommit';
  locked_round: number;
  valid_round: number;
  height_age_ms: number;
  proposer: string | null;
}

export type { EvidenceEntry as EvidenceView } from '../consensus/index.js';

/** The part of the context that chain queries read (benches and tests build it from a Chain alone). */
export type ChainContext = Pick<NodeContext, 'chain'>;

/** What GET /metrics needs from ts/metrics. */
export interface MetricsExposition {
  readonly contentType: string;
  /** The Prometheus text exposition of every metric. */
  scrape(): Promise<string>;
}

export { NODE_VERSION } from '../util/index.js';
export const NATIVE_TOKEN = 'NATIVE';

/** What the node sets up for /ready (ts/node); absent in contexts built without a node. */
export interface ReadinessSource {
  /** Configured lag threshold in blocks. */
  maxLagBlocks: number;
  /** Configured head age threshold in ms; null = no age check (the dev chain's automine has no block time). */
  maxAgeMs: number | null;
  /** True once a drain has begun (SIGTERM). */
  draining(): boolean;
  /** True while the database answers reads. */
  dbOpen(): boolean;
}
