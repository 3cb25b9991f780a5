/**
 * The node's event source: every push interface (gRPC StreamEvents, WebSocket eth_subscribe, the
 * explorer's live views) reads this one feed, so they agree on what happened and in which order.
 *
 * Every committed block is final (PoA: when made; DPoS+BFT: the chain commits only decided blocks with
 * their precommits), so `block_finalized` events come in height order, one per block, exactly once.
 * Pending transactions are announced when admission accepts them (API or gossip), in arrival order.
 *
 * Consumers never slow the node down: each subscription buffers at most `maxQueued` events; a consumer
 * that falls that far behind loses the oldest ones and is told how many with a `lagged` marker (the
 * gRPC spec's Lagged{skipped_count}), then continues from the newest.
 */
import type { Block } from '../chain/index.js';
import type { ChainReader } from '../chain/interface.js';
import type { ExecutionResult } from '../execution/index.js';
import type { SignedTransaction } from '../ledger/index.js';

export type ChainEvent =
  /** A block is final. `result` is null for blocks committed before this process started (replays). */
  | { kind: 'block_finalized'; block: Block; result: ExecutionResult | null }
  /** A transaction entered the mempool. */
  | { kind: 'pending_tx'; tx: SignedTransaction };

export type ChainEventKind = ChainEvent['kind'];

export type ChainEventListener = (e: ChainEvent) => void;

/** Fan-out of chain events to in-process listeners; synchronous, in order. */
export class ChainEventFeed {
  private readonly listeners = new Set<ChainEventListener>();
  private readonly rollbackListeners = new Set<(height: number) => void>();

  /** Register a listener; returns its unsubscribe function. */
  on(listener: ChainEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  emit(e: ChainEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch {
        // A consumer's bug must not stop delivery to the others or the block commit that emitted it.
      }
    }
  }

  /**
   * Be told when the chain was rolled back (the dev chain's evm_revert and anvil_reset): blocks above the
   * height are gone. The feed carries no removal event (the push interfaces have none to send); consumers
   * drop what they still hold of those blocks. Returns the unsubscribe function.
   */
  onRollback(listener: (height: number) => void): () => void {
    this.rollbackListeners.add(listener);
    return () => this.rollbackListeners.delete(listener);
  }

  rolledBack(height: number): void {
    for (const l of this.rollbackListeners) {
      try {
        l(height);
      } catch {
        // As for events: one consumer's bug must not stop the others.
      }
    }
  }

  /** Feed the chain's commits (and rollbacks) into this feed. Returns the detach function. */
  attachChain(chain: ChainReader): () => void {
    const onBlock = (block: Block, result: ExecutionResult | null) => this.emit({ kind: 'block_finalized', block, result });
    const onRollback = (height: number) => this.rolledBack(height);
    chain.on('block', onBlock);
    chain.on('rollback', onRollback);
    return () => {
      chain.off('block', onBlock);
      chain.off('rollback', onRollback);
    };
  }

  /** Announce a transaction admitted to the mempool. */
  pendingTransaction(tx: SignedTransaction): void {
    if (this.listeners.size > 0) this.emit({ kind: 'pending_tx', tx });
  }
}

/** What a subscription yields: an event, or how many events were dropped because the consumer lagged. */
export type SubscriptionItem = { event: ChainEvent } | { lagged: number };

/**
 * A bounded, pull-based subscription to the feed: events queue up to `maxQueued`; beyond that the
 * oldest are dropped and counted, and the next pull yields `{ lagged: n }` before the newest events.
 */
export class ChainSubscription {
  private readonly queue: ChainEvent[] = [];
  private head = 0;
  private skipped = 0;
  private waiter: (() => void) | null = null;
  private closed = false;
  private readonly detach: () => void;
  private readonly detachRollback: () => void;

  /**
   * `kinds` and `accept` (a consumer's filter, e.g. the addresses a stream asked for) decide what is queued,
   * so events a consumer would discard neither take queue room nor count towards its lag.
   */
  constructor(
    feed: ChainEventFeed,
    readonly maxQueued = 1024,
    readonly kinds?: ReadonlySet<ChainEventKind>,
    readonly accept?: (e: ChainEvent) => boolean,
  ) {
    this.detach = feed.on((e) => this.push(e));
    this.detachRollback = feed.onRollback((h) => this.discardAbove(h));
  }

  /**
   * A rollback removed the blocks above `height`: their events still queued are dropped, so a consumer never
   * receives a block (or its logs) that is no longer part of the chain. What it already took is not recalled.
   */
  discardAbove(height: number): void {
    const kept = this.queue.slice(this.head).filter((e) => e.kind !== 'block_finalized' || e.block.index <= height);
    this.queue.length = 0;
    this.queue.push(...kept);
    this.head = 0;
  }

  /** Events waiting to be pulled. */
  get pending(): number {
    return this.queue.length - this.head;
  }

  push(e: ChainEvent): void {
    if (this.closed || (this.kinds && !this.kinds.has(e.kind)) || (this.accept && !this.accept(e))) return;
    this.queue.push(e);
    if (this.pending > this.maxQueued) {
      // Keep the newest maxQueued events; a consumer this far behind is told what it missed.
      const drop = this.pending - this.maxQueued;
      this.head += drop;
      this.skipped += drop;
    }
    if (this.head > 4096 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    this.wake();
  }

  /** The next item without waiting, or null when nothing is queued. */
  poll(): SubscriptionItem | null {
    if (this.skipped > 0) {
      const lagged = this.skipped;
      this.skipped = 0;
      return { lagged };
    }
    if (this.head >= this.queue.length) return null;
    const event = this.queue[this.head++];
    return { event };
  }

  /** The next item; null once the subscription is closed. */
  async next(): Promise<SubscriptionItem | null> {
    for (;;) {
      const item = this.poll();
      if (item || this.closed) return item;
      await new Promise<void>((resolve) => this.whenReady(resolve));
    }
  }

  /**
   * `cb` runs once, synchronously from the push (or close) that makes an item available: at once when one
   * is already queued or the subscription is closed. One waiter at a time (a later call replaces it). The
   * callback form of next(): a push interface with many subscribers wakes them without a promise each.
   */
  whenReady(cb: () => void): void {
    if (this.closed || this.skipped > 0 || this.head < this.queue.length) cb();
    else this.waiter = cb;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.detach();
    this.detachRollback();
    this.queue.length = 0;
    this.head = 0;
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }
}
