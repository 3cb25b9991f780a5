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
