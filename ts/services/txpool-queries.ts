import type { SignedTransaction } from '../ledger/index.js';
import type { NodeContext } from './context.js';

/** The pool by sender, each sender's transactions in nonce order (geth's txpool_content grouping). */
export interface TxPoolContents {
  /** Ready for the next blocks: contiguous nonces from the sender's account nonce. */
  pending: Map<string, SignedTransaction[]>;
  /** Future nonces waiting for a gap to fill. */
  queued: Map<string, SignedTransaction[]>;
}

/** Pending and queued transaction counts (txpool_status). */
export function txPoolStatus(ctx: Pick<NodeContext, 'mempool'>): { pending: number; queued: number } {
  return { pending: ctx.mempool.size, queued: ctx.mempool.queuedSize };
}

/** Every pooled transaction by sender (txpool_content / txpool_inspect); `from` limits it to one sender. */
export function txPoolContents(ctx: Pick<NodeContext, 'mempool'>, from?: string): TxPoolContents {
  const pool = ctx.mempool;
  const pending = new Map<string, SignedTransaction[]>();
  const senders = from ? [from] : pool.list(pool.size).map((tx) => tx.from_address);
  for (const s of senders) {
    const txs = pool.pendingOf(s);
    if (txs.length > 0 && !pending.has(s))
      pending.set(
        s,
        [...txs].sort((a, b) => (a.nonce < b.nonce ? -1 : 1)),
      );
  }
  const queued = new Map<string, SignedTransaction[]>();
  for (const s of from ? [from] : pool.queuedSenders()) {
    const q = [...pool.queuedOf(s).values()].map((e) => e.tx).sort((a, b) => (a.nonce < b.nonce ? -1 : 1));
    if (q.length > 0) queued.set(s, q);
  }
  return { pending, queued };
}
