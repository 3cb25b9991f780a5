import type { SignedTransaction } from '../ledger/index.js';
import type { BlockTxPool, PoolReader } from './interface.js';

export interface MempoolLimits {
  /** Pending transactions one sender may have (spec: "bounded"). */
  maxPerSender: number;
  /** Pending transactions in total. */
  maxTotal: number;
  /** Future-nonce transactions one sender may have queued. */
  maxQueuedPerSender: number;
  /** Future-nonce transactions queued in total. */
  maxQueuedTotal: number;
  /** A queued transaction whose gap has not filled after this long is evicted (geth: 3 h). */
  queueLifetimeMs: number;
}

export const DEFAULT_MEMPOOL_LIMITS: MempoolLimits = {
  maxPerSender: 256,
  maxTotal: 100_000,
  maxQueuedPerSender: 64,
  maxQueuedTotal: 10_000,
  queueLifetimeMs: 3 * 3600_000,
};

interface Queued {
  tx: SignedTransaction;
  at: number;
}

/** Everything a pool holds, as `contents()` copies it and `restore()` puts it back (the dev chain's snapshots). */
export interface MempoolContents {
  /** Pending transactions in arrival order. */
  pending: readonly SignedTransaction[];
  queued: readonly Queued[];
}

/**
 * Pending and queued transactions.
 * - Pending: per sender, contiguous nonces starting at the sender's state nonce; ready for a block.
 *   Arrival order across senders is kept (a Map iterates in insertion order).
 * - Queued: future nonces (a gap before them), per sender, bounded and evicted by age; admission
 *   promotes them when the gap fills. Gossip delivers out of order, so peers' transactions land here.
 * Admission (TxAdmission) is the only writer and runs every rule first.
 */
export class Mempool implements BlockTxPool, PoolReader {
  private readonly byId = new Map<string, SignedTransaction>();
  private readonly bySender = new Map<string, SignedTransaction[]>();
  /** Each sender's amount + fee over its pending list, kept with the list (admission asks it per submission). */
  private readonly spendOf = new Map<string, bigint>();
  private readonly queued = new Map<string, Map<bigint, Queued>>();
  private readonly queuedIds = new Set<string>();

  constructor(readonly limits: MempoolLimits = DEFAULT_MEMPOOL_LIMITS) {}

  /** Pending transactions (queued ones are not counted: they cannot enter a block yet). */
  get size(): number {
    return this.byId.size;
  }

  get queuedSize(): number {
    return this.queuedIds.size;
  }

  has(txid: string): boolean {
    return this.byId.has(txid) || this.queuedIds.has(txid);
  }

  get(txid: string): SignedTransaction | undefined {
    return this.byId.get(txid);
  }

  pendingOf(sender: string): readonly SignedTransaction[] {
    return this.bySender.get(sender) ?? [];
  }

  /** Amount + fee (base units) the sender has committed in pending transactions. */
  pendingSpend(sender: string): bigint {
    return this.spendOf.get(sender) ?? 0n;
  }

  private addSpend(sender: string, delta: bigint): void {
    this.spendOf.set(sender, (this.spendOf.get(sender) ?? 0n) + delta);
  }

  /** Caller (admission) has validated the transaction as the sender's next nonce; add it. */
  add(tx: SignedTransaction): void {
    this.byId.set(tx.txid, tx);
    const list = this.bySender.get(tx.from_address);
    if (list) list.push(tx);
    else this.bySender.set(tx.from_address, [tx]);
    this.addSpend(tx.from_address, tx.amount + tx.fee);
  }

  /**
   * Put `next` in place of the pending `old` (same sender and nonce; admission checked the fee bump).
   * The sender's nonce order is unchanged; take() emits each sender's transactions in nonce order.
   */
  replace(old: SignedTransaction, next: SignedTransaction): void {
    const list = this.bySender.get(old.from_address);
    const i = list ? list.indexOf(old) : -1;
    if (!list || i < 0) throw new Error('replace: transaction is not pending');
    list[i] = next;
    this.addSpend(old.from_address, next.amount + next.fee - old.amount - old.fee);
    this.byId.delete(old.txid);
    this.byId.set(next.txid, next);
  }

  /**
   * Up to max transactions for a block: senders interleave in arrival order and each sender's
   * transactions come in nonce order (a replacement arrives later than its successors).
   */
  take(max: number): SignedTransaction[] {
    const out: SignedTransaction[] = [];
    const next = new Map<string, number>();
    for (const tx of this.byId.values()) {
      if (out.length >= max) break;
      const i = next.get(tx.from_address) ?? 0;
      out.push((this.bySender.get(tx.from_address) as SignedTransaction[])[i]);
      next.set(tx.from_address, i + 1);
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
    if (i >= 0) {
      const [gone] = list.splice(i, 1);
      this.addSpend(tx.from_address, -(gone.amount + gone.fee));
    }
    if (list.length === 0) {
      this.bySender.delete(tx.from_address);
      this.spendOf.delete(tx.from_address);
    }
  }

  /** A copy of what the pool holds (the transactions themselves are immutable and shared). */
  contents(): MempoolContents {
    const queued: Queued[] = [];
    for (const q of this.queued.values()) for (const e of q.values()) queued.push({ ...e });
    return { pending: [...this.byId.values()], queued };
  }

  /**
   * Replace everything with earlier contents (the dev chain's evm_revert, which also puts the state back
   * to what those transactions were admitted against; anvil_reset restores empty contents).
   */
  restore(c: MempoolContents): void {
    this.byId.clear();
    this.bySender.clear();
    this.spendOf.clear();
    this.queued.clear();
    this.queuedIds.clear();
    for (const tx of c.pending) this.add(tx);
    // Arrival order stays that of `pending`; each sender's list is in nonce order (a replacement arrived later).
    for (const list of this.bySender.values()) list.sort((a, b) => (a.nonce < b.nonce ? -1 : a.nonce > b.nonce ? 1 : 0));
    for (const e of c.queued) this.enqueue(e.tx, e.at);
  }

  // --- future-nonce queue ---

  queuedOf(sender: string): ReadonlyMap<bigint, Queued> {
    return this.queued.get(sender) ?? new Map();
  }

  /** Whether `sender` has queued transactions (a sender's entry goes once its last one is dequeued). */
  hasQueued(sender: string): boolean {
    return this.queued.has(sender);
  }

  /** Senders with queued transactions. */
  queuedSenders(): string[] {
    return [...this.queued.keys()];
  }

  /** Queue a future-nonce transaction; false when a bound is reached. A same-nonce entry is replaced. */
  enqueue(tx: SignedTransaction, now = Date.now()): boolean {
    let q = this.queued.get(tx.from_address);
    const old = q?.get(tx.nonce);
    if (!old) {
      if ((q?.size ?? 0) >= this.limits.maxQueuedPerSender || this.queuedIds.size >= this.limits.maxQueuedTotal) return false;
    } else this.queuedIds.delete(old.tx.txid);
    if (!q) this.queued.set(tx.from_address, (q = new Map()));
    q.set(tx.nonce, { tx, at: now });
    this.queuedIds.add(tx.txid);
    return true;
  }

  /** Remove and return the queued transaction of sender at nonce, if any. */
  dequeue(sender: string, nonce: bigint): SignedTransaction | undefined {
    const q = this.queued.get(sender);
    const e = q?.get(nonce);
    if (!q || !e) return undefined;
    q.delete(nonce);
    this.queuedIds.delete(e.tx.txid);
    if (q.size === 0) this.queued.delete(sender);
    return e.tx;
  }

  /** Drop queued transactions of sender below nonce (already used) and, for everyone, those past their lifetime. */
  pruneQueued(sender: string | null, belowNonce: bigint, now = Date.now()): number {
    let n = 0;
    for (const [s, q] of this.queued) {
      for (const [nonce, e] of q) {
        if ((s === sender && nonce < belowNonce) || now - e.at > this.limits.queueLifetimeMs) {
          q.delete(nonce);
          this.queuedIds.delete(e.tx.txid);
          n++;
        }
      }
      if (q.size === 0) this.queued.delete(s);
    }
    return n;
  }
}
