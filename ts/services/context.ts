import type { Chain } from '../chain/chain.js';
import type { EvidenceEntry } from '../consensus/evidence-pool.js';
import type { ConsensusEngine } from '../consensus/interface.js';
import type { CallRunner, TraceRunner } from '../execution/index.js';
import type { KeyPair } from '../ledger/keys.js';
import type { TxAdmission } from '../mempool/admission.js';
import type { Mempool } from '../mempool/mempool.js';
import type { VerificationService } from '../verify/index.js';
import type { AuditLog } from './audit-log.js';
import type { ChainEventFeed } from './chain-events.js';
import type { DevChain } from './dev/index.js';
import type { FilterRegistry } from './filters.js';

/** Everything a query or command needs; built once by ts/node and passed to every interface. */
export interface NodeContext {
  chain: Chain;
  mempool: Mempool;
  admission: TxAdmission;
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
  /** The dev chain's test controls (`--dev` only): accounts, automine, clock, state writes, snapshots. */
  dev?: DevChain;
  /** Polled filters (eth_newFilter and friends); absent where no node runs (benches, service tests). */
  filters?: FilterRegistry;
  /** The P2P view (peers, sync); absent on a node started without networking. */
  network?: NetworkView;
  /** The contract verification service (ts/verify) on this node's chain; absent in contexts built without ts/node. */
  verification?: VerificationService;
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

export type { EvidenceEntry as EvidenceView } from '../consensus/evidence-pool.js';

/** The part of the context that chain queries read (benches and tests build it from a Chain alone). */
export type ChainContext = Pick<NodeContext, 'chain'>;

/** What GET /metrics needs from ts/metrics. */
export interface MetricsExposition {
  readonly contentType: string;
  /** The Prometheus text exposition of every metric. */
  scrape(): Promise<string>;
}

export const NODE_VERSION = '0.1.0';
export const NATIVE_TOKEN = 'NATIVE';
