/**
 * Resumable subscriptions: finalized blocks replayed from the store from a height on, then the live feed,
 * with no gap and no repeat between the two. Push interfaces use it for "resume from sequence N" (gRPC
 * StreamEvents' from_sequence); without a start height it is a plain live ChainSubscription.
 *
 * The switch is exact because the chain moves its head and emits `block` in one synchronous step: the replay
 * reads up to the head it sees, and when it has caught up it subscribes in the same tick as it last looked
 * at the head, so the first live block is the one after the last replayed one.
 */
import type { ChainEvent, ChainEventFeed, ChainEventKind, SubscriptionItem } from './chain-events.js';
import { ChainSubscription } from './chain-events.js';
import type { ChainReader } from '../chain/interface.js';

/** Blocks read from the store per step of a replay. */
export const REPLAY_CHUNK = 64;

export interface ResumableOptions {
  /** Replay finalized blocks from this height on before going live; undefined = live from now. */
  fromHeight?: number;
  /** Live queue bound (ChainSubscription.maxQueued). */
  maxQueued: number;
  kinds?: ReadonlySet<ChainEventKind>;
  /** The consumer's filter, applied to replayed and live events alike. */
  accept?: (e: ChainEvent) => boolean;
}

export class ResumableSubscription {
  private live: ChainSubscription | null = null;
  /** Next height to read from the store; null once live. */
  private replayNext: number | null = null;
  /** Live block events below this height were replayed already (or come before the asked start). */
  private minHeight = 0;
  private closed = false;
  private readonly detachRollback: () => void;
  /** Rollbacks seen: a store read that spans one is read again. */
  private rollbacks = 0;

  constructor(
    private readonly ctx: { chain: ChainReader; events: ChainEventFeed },
    private readonly opts: ResumableOptions,
  ) {
    // A rollback (dev chain) removed the blocks above `h`: the new blocks at those heights come next, replayed or live.
    this.detachRollback = ctx.events.onRollback((h) => {
      this.rollbacks++;
      if (this.replayNext !== null) this.replayNext = Math.min(this.replayNext, h + 1);
      this.minHeight = Math.min(this.minHeight, h + 1);
    });
    const from = opts.fromHeight;
    const wantsBlocks = !opts.kinds || opts.kinds.has('block_finalized');
    if (from !== undefined && wantsBlocks && from <= ctx.chain.height) this.replayNext = from;
    else this.goLive(from ?? 0);
  }

  /** True while blocks still come from the store. */
  get replaying(): boolean {
    return this.replayNext !== null;
  }

  /** Events waiting in the live queue (0 while replaying). */
  get pending(): number {
    return this.live?.pending ?? 0;
  }

  /** Up to `max` items, waiting for at least one; null once closed. */
  async take(max: number): Promise<SubscriptionItem[] | null> {
    while (!this.closed) {
      if (this.replayNext !== null) {
        const batch = await this.replayStep(max);
        if (batch.length > 0) return batch;
        continue;
      }
      const now = this.takeNow(max);
      if (now !== undefined) return now;
      await new Promise<void>((resolve) => this.whenReady(resolve));
    }
    return null;
  }

  /**
   * Up to `max` live items without waiting: undefined when none is queued (then whenReady) or while replaying
   * (then take); null once closed.
   */
  takeNow(max: number): SubscriptionItem[] | null | undefined {
    if (this.closed) return null;
    const live = this.live;
    if (live === null) return undefined;
    let out: SubscriptionItem[] | undefined;
    for (let item = live.poll(); item !== null; item = out === undefined || out.length < max ? live.poll() : null) {
      if ('event' in item && item.event.kind === 'block_finalized' && item.event.block.index < this.minHeight) continue;
      if (out === undefined) out = [item];
      else out.push(item);
    }
    return out;
  }

  /**
   * `cb` runs once, synchronously, when takeNow has something to give or the subscription closed (at once if
   * so already, or while replaying: take is the way then). No promise per wake (push interfaces with many
   * subscribers).
   */
  whenReady(cb: () => void): void {
    if (this.closed || this.live === null) cb();
    else this.live.whenReady(cb);
  }

  close(): void {
    this.closed = true;
    this.detachRollback();
    this.live?.close();
  }

  /** The next blocks from the store, or the switch to live once the head is reached (same tick as the check). */
  private async replayStep(max: number): Promise<SubscriptionItem[]> {
    const from = this.replayNext!;
    const head = this.ctx.chain.height;
    if (from > head) {
      this.goLive(from);
      return [];
    }
    const rollbacks = this.rollbacks;
    const blocks = await this.ctx.chain.blocks.readRange(
      from,
      Math.min(head, from + Math.max(1, Math.min(max, REPLAY_CHUNK)) - 1),
    );
    if (this.closed || rollbacks !== this.rollbacks) return [];
    if (blocks.length === 0) {
      // Nothing stored there (cannot happen below the head); go live rather than spin.
      this.goLive(from);
      return [];
    }
    this.replayNext = blocks[blocks.length - 1].index + 1;
    const out: SubscriptionItem[] = [];
    for (const block of blocks) {
      const event: ChainEvent = { kind: 'block_finalized', block, result: null };
      if (!this.opts.accept || this.opts.accept(event)) out.push({ event });
    }
    return out;
  }

  private goLive(minHeight: number): void {
    this.replayNext = null;
    this.minHeight = minHeight;
    if (this.closed) return;
    this.live = new ChainSubscription(this.ctx.events, this.opts.maxQueued, this.opts.kinds, this.opts.accept);
  }
}

/** A resumable subscription on this node's chain and event feed; null when the node has no event source. */
export function subscribeResumable(
  ctx: { chain: ChainReader; events?: ChainEventFeed },
  opts: ResumableOptions,
): ResumableSubscription | null {
  return ctx.events ? new ResumableSubscription({ chain: ctx.chain, events: ctx.events }, opts) : null;
}
