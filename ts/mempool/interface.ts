/**
 * The contract of ts/mempool that block production and following rely on (Mempool implements it). Admission
 * (TxAdmission) is the only way in; this is the way out, into blocks.
 */
import type { SignedTransaction } from '../ledger/index.js';

/** The pending pool as block producers and block followers see it; each member names who consumes it. */
export interface BlockTxPool {
  /** Pending transactions (queued future nonces are not counted). Consumer: the dev chain's miner (mines until empty). */
  readonly size: number;
  /** A pending transaction by id. Consumer: BftEngine (a proposal's transactions this node already admitted). */
  get(txid: string): SignedTransaction | undefined;
  /**
   * Up to `max` transactions for a block: senders interleave in arrival order, each sender's in nonce order.
   * Consumers: PoaEngine and BftEngine building a block.
   */
  take(max: number): SignedTransaction[];
  /**
   * After a committed block: its transactions leave the pool; a dropped one takes its sender's later nonces.
   * Consumers: PoaEngine (its own blocks), BlockSync (blocks made elsewhere).
   */
  onBlock(included: readonly SignedTransaction[], dropped: readonly SignedTransaction[]): void;
}

/** The pool as queries read it (Mempool implements it); nothing here adds or removes. Consumer: ts/services. */
export interface PoolReader {
  /** Pending transactions. Consumers: txpool_status, GET /mempool, chain info, the explorer's home page. */
  readonly size: number;
  /** Transactions waiting for a nonce gap to fill. Consumer: txpool_status (services/txpool-queries.ts). */
  readonly queuedSize: number;
  /** A pending transaction by id. Consumers: the tx lookup (store, then pool: services/tx-queries.ts), explorer search. */
  get(txid: string): SignedTransaction | undefined;
  /** Oldest-first page of pending transactions. Consumers: GET /mempool, txpool_content. */
  list(limit: number, offset?: number): SignedTransaction[];
  /** A sender's pending transactions. Consumers: the pending nonce (account-queries.ts), txpool_content, address pages. */
  pendingOf(sender: string): readonly SignedTransaction[];
  /** Amount + fee (base units) a sender has committed in pending transactions. Consumer: GET /address/:a. */
  pendingSpend(sender: string): bigint;
  /** Senders with queued transactions. Consumer: txpool_content (services/txpool-queries.ts). */
  queuedSenders(): string[];
  /** A sender's queued transactions by nonce. Consumer: txpool_content. */
  queuedOf(sender: string): ReadonlyMap<bigint, { readonly tx: SignedTransaction }>;
}

/** Where a transaction comes from: API submissions keep the spec's strict nonce; gossip may queue future nonces. */
export type SubmitSource = 'api' | 'gossip';

/** Options of a raw submission (TxAdmission's SubmitRawOptions). */
export interface SubmitOptions {
  /** The dev chain's own eth_sendTransaction for an address it impersonates (execution/impersonation.ts). */
  impersonated?: boolean;
  /**
   * The caller answers only once the transaction's block is committed (the dev chain's automine): from then on
   * the block keeps it through a process crash, as it keeps every transaction in it, so the journal (which keeps
   * transactions waiting in the pool) is not written and the answer does not wait for its disk.
   */
  answeredOnceMined?: boolean;
}

/**
 * The way into the pool for clients (TxAdmission implements it): the transaction rules, signature checks and pool
 * rules run behind it; a rejected transaction throws RejectedTransactionError. Consumer: the write queries of ts/services.
 */
export interface TxSubmitter {
  /** Admit a signed native transaction. Consumers: POST /transactions and the native write queries (tokens, staking, NFT, validators). */
  submit(tx: SignedTransaction, source?: SubmitSource): Promise<'pending' | 'queued'>;
  /** Admit a raw EVM transaction; answers it decoded. Consumers: eth_sendRawTransaction, the dev chain's sends. */
  submitRaw(raw: Uint8Array, source?: SubmitSource, opts?: SubmitOptions): Promise<SignedTransaction>;
}
