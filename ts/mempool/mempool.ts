import type { SignedTransaction } from '../ledger/transaction.js';

export interface MempoolLimits {
  /** Pending transactions one sender may have (spec: "bounded"). */
  maxPerSender: number;
  /** Pending transactions in total. */
  maxTotal: number;
}

export const DEFAULT_MEMPOOL_LIMITS: MempoolLimits = { maxPerSender: 256, maxTotal: 100_000 };

/**
 * Pending transactions. Arrival order is kept (a Map iterates in insertion order) and a sender's
 * transactions are always contiguous nonces starting at its state nonce, because admission only
 * accepts the next expected nonce. Consumers: admission (RPC/REST), block production, queries.
 */
export class Mempool {
  private readonly byId = new Map<string, SignedTransaction>();
  private readonly bySender = new Map<string, SignedTransaction[]>();

  constructor(readonly limits: MempoolLimits = DEFAULT_MEMPOOL_LIMITS) {}

  get size(): number {
    return this.byId.size;
  }

  has(txid: string): boolean {
    return this.byId.has(txid);
  }

  get(txid: string): SignedTransaction | undefined {
    return this.byId.get(txid);
  }

  pendingOf(sender: string): readonly SignedTransaction[] {
    return this.bySender.get(sender) ?? [];
  }

  /** Amount + fee (base units) the sender has committed in pending transactions. */
  pendingSpend(sender: string): bigint {
    let s = 0n;
    for (const tx of this.pendingOf(sender)) s += tx.amount + tx.fee;
    return s;
  }

  /** Caller (admission) has validated the transaction; add it. */
  add(tx: SignedTransaction): void {
    this.byId.set(tx.txid, tx);
    const list = this.bySender.get(tx.from_address);
    if (list) list.push(tx);
    else this.bySender.set(tx.from_address, [tx]);
  }

  /** Up to max transactions in arrival order (per-sender nonce order follows). Consumer: block production. */
  take(max: number): SignedTransaction[] {
    const out: SignedTransaction[] = [];
    for (const tx of this.byId.values()) {
      if (out.length >= max) break;
      out.push(tx);
    }
    return out;
  }

  /** Oldest-first listing for queries. */
  list(limit: number, offset = 0): SignedTransaction[] {
    const out: SignedTransaction[] = [];
    let i = 0;
    for (const tx of this.byId.values()) {
      if (i++ < offset) continue;
      if (out.length >= limit) break;
      out.push(tx);
    }
    return out;
  }

  /**
   * After a block: remove included transactions; a dropped transaction takes its sender's later
   * nonces with it (they can no longer apply).
   */
  onBlock(included: readonly SignedTransaction[], dropped: readonly SignedTransaction[]): void {
    for (const tx of included) this.remove(tx);
    for (const tx of dropped) {
      const later = this.pendingOf(tx.from_address).filter((p) => p.nonce >= tx.nonce);
      for (const p of later) this.remove(p);
    }
  }

  private remove(tx: SignedTransaction): void {
    if (!this.byId.delete(tx.txid)) return;
    const list = this.bySender.get(tx.from_address);
    if (!list) return;
    const i = list.findIndex((p) => p.txid === tx.txid);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.bySender.delete(tx.from_address);
  }
}
