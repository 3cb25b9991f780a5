/**
 * StreamEvents: the node's event feed (ts/services ResumableSubscription over ChainEventFeed) as encoded
 * ChainEvent messages, filtered as the request asks. Block events are encoded once per block for every
 * stream (shapes.ts); logs and pending transactions per stream, since filters differ.
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { type Block, type NodeContext, blockReceipts, headHeight } from '../services/index.js';
import {
  type ChainEvent as FeedEvent,
  type ChainEventKind,
  type LocatedReceipt,
  type ResumableSubscription,
  type SubscriptionItem,
  locateReceipts,
  logMatches,
  subscribeResumable,
} from '../events/index.js';
import { GrpcError, GrpcStatus, invalidArgument } from './errors.js';
import { ChainEventSchema, EventKind, type StreamEventsRequest } from './gen/native/v1/native_pb.js';
import { encodeBlockFinalized, hashMessage, transactionMessage } from './shapes.js';
import { toHex } from '../util/index.js';

/** The spec's lag threshold: a consumer this many events behind gets Lagged{skipped_count}. */
export const LAG_THRESHOLD = 1024;
/** Events handed to a transport per pull (one write burst). */
export const STREAM_BATCH = 64;
/** The spec's (and eth_getLogs') limit on topic positions. */
export const MAX_TOPIC_POSITIONS = 4;
/** Addresses one filter may list. */
export const MAX_FILTER_ADDRESSES = 1000;

/** A stream's request after validation. */
interface StreamFilter {
  blocks: boolean;
  pending: boolean;
  logs: boolean;
  withTransactions: boolean;
  /** Lower-case 0x addresses; empty = any. */
  addresses: Set<string>;
  addressBytes: Uint8Array[];
  topics: (Uint8Array[] | null)[];
  fromSequence?: number;
}

function parseFilter(req: StreamEventsRequest): StreamFilter {
  const f = req.filter;
  const kinds = new Set(f?.kinds ?? []);
  for (const k of kinds) {
    if (k === EventKind.UNSPECIFIED || EventKind[k] === undefined) throw invalidArgument(`filter.kinds: unknown event kind ${k}`);
  }
  if (kinds.size === 0) kinds.add(EventKind.BLOCK_FINALIZED);
  const addressBytes = (f?.addresses ?? []).map((a, i) => {
    if (a.value.length !== 20) throw invalidArgument(`filter.addresses[${i}] must be 20 bytes`);
    return a.value;
  });
  if (addressBytes.length > MAX_FILTER_ADDRESSES) throw invalidArgument(`filter.addresses: at most ${MAX_FILTER_ADDRESSES}`);
  const topicFilters = f?.topics ?? [];
  if (topicFilters.length > MAX_TOPIC_POSITIONS) throw invalidArgument(`filter.topics: at most ${MAX_TOPIC_POSITIONS} positions`);
  const topics = topicFilters.map((t, i) => {
    if (t.anyOf.length === 0) return null;
    return t.anyOf.map((h, j) => {
      if (h.value.length !== 32) throw invalidArgument(`filter.topics[${i}].any_of[${j}] must be 32 bytes`);
      return h.value;
    });
  });
  const from = req.fromSequence;
  return {
    blocks: kinds.has(EventKind.BLOCK_FINALIZED),
    pending: kinds.has(EventKind.PENDING_TRANSACTION),
    logs: kinds.has(EventKind.LOG),
    withTransactions: !f?.omitTransactions,
    addresses: new Set(addressBytes.map((a) => `0x${toHex(a)}`)),
    addressBytes,
    topics,
    // A start beyond any possible height simply waits forever, like any height above the head.
    fromSequence:
      from === undefined ? undefined : from > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(from),
  };
}

/** One open StreamEvents stream: pull encoded events until null (closed). */
export class EventStream {
  private readonly sub: ResumableSubscription;
  private readonly filter: StreamFilter;

  /** Told how many events a lagging consumer lost (metrics). */
  onLagged?: (skipped: number) => void;

  constructor(
    private readonly ctx: NodeContext,
    req: StreamEventsRequest,
    lagThreshold = LAG_THRESHOLD,
  ) {
    this.filter = parseFilter(req);
    const kinds = new Set<ChainEventKind>();
    if (this.filter.blocks || this.filter.logs) kinds.add('block_finalized');
    if (this.filter.pending) kinds.add('pending_tx');
    const { addresses } = this.filter;
    const sub = subscribeResumable(ctx, {
      fromHeight: this.filter.fromSequence,
      maxQueued: lagThreshold,
      kinds,
      accept: addresses.size === 0 ? undefined : (e) => acceptPending(e, addresses),
    });
    if (!sub) throw new GrpcError(GrpcStatus.UNAVAILABLE, 'this node has no event source');
    this.sub = sub;
  }

  /** Events waiting in the live queue (how far behind this consumer is). */
  get pending(): number {
    return this.sub.pending;
  }

  /** The next encoded events (waiting for at least one); null once closed. */
  async next(): Promise<Uint8Array[] | null> {
    for (;;) {
      const items = await this.sub.take(STREAM_BATCH);
      if (items === null) return null;
      const out: Uint8Array[] = [];
      for (const item of items) {
        // Only logs of a replayed block wait (their receipts come from the store).
        const pending = this.encode(item, out);
        if (pending) await pending;
      }
      if (out.length > 0) return out;
    }
  }

  /**
   * The next encoded events without waiting when they are at hand (the live stream's common case: no promise,
   * no turn of the event loop); undefined when nothing is queued (whenReady tells when to poll again); a
   * promise when they need the store (a replay, logs of a block without its receipts at hand); null once closed.
   */
  poll(): Uint8Array[] | null | undefined | Promise<Uint8Array[] | null> {
    if (this.sub.replaying) return this.next();
    for (;;) {
      const items = this.sub.takeNow(STREAM_BATCH);
      if (items == null) return items;
      const out: Uint8Array[] = [];
      for (let i = 0; i < items.length; i++) {
        const pending = this.encode(items[i], out);
        if (pending) return this.encodeRest(pending, items, i + 1, out);
      }
      if (out.length > 0) return out;
    }
  }

  /** `cb` runs once, synchronously from the feed, when poll has something new (or the stream closed). */
  whenReady(cb: () => void): void {
    this.sub.whenReady(cb);
  }

  /** poll's continuation once an item needs the store: the rest of the batch, in order. */
  private async encodeRest(
    pending: Promise<void>,
    items: SubscriptionItem[],
    from: number,
    out: Uint8Array[],
  ): Promise<Uint8Array[] | null> {
    await pending;
    for (let i = from; i < items.length; i++) {
      const p = this.encode(items[i], out);
      if (p) await p;
    }
    return out.length > 0 ? out : this.next();
  }

  close(): void {
    this.sub.close();
  }

  private encode(item: SubscriptionItem, out: Uint8Array[]): Promise<void> | undefined {
    if ('lagged' in item) {
      this.onLagged?.(item.lagged);
      out.push(
        toBinary(
          ChainEventSchema,
          create(ChainEventSchema, { event: { case: 'lagged', value: { skippedCount: BigInt(item.lagged) } } }),
        ),
      );
      return;
    }
    const e = item.event;
    if (e.kind === 'pending_tx') {
      const event = create(ChainEventSchema, {
        event: { case: 'pendingTransaction', value: { transaction: transactionMessage(e.tx) } },
        sequence: BigInt(headHeight(this.ctx)),
      });
      out.push(toBinary(ChainEventSchema, event));
      return;
    }
    if (this.filter.blocks) out.push(encodeBlockFinalized(e.block, this.filter.withTransactions));
    if (!this.filter.logs || e.block.tx_count === 0) return;
    if (e.result) {
      this.encodeLogs(e.block, locateReceipts(e.block.index, e.result.receipts), out);
      return;
    }
    return blockReceipts(this.ctx, e.block.index).then((receipts) => {
      if (receipts) this.encodeLogs(e.block, receipts, out);
    });
  }

  private encodeLogs(block: Block, receipts: LocatedReceipt[], out: Uint8Array[]): void {
    const f = { addresses: this.filter.addressBytes, topics: this.filter.topics };
    const sequence = BigInt(block.index);
    const blockHash = hashMessage(block.hash);
    for (const r of receipts) {
      r.receipt.logs.forEach((log, i) => {
        if (!logMatches(log, f)) return;
        const event = create(ChainEventSchema, {
          event: {
            case: 'log',
            value: {
              address: { value: log.address },
              topics: log.topics.map((t) => ({ value: t })),
              data: log.data,
              blockHeight: sequence,
              blockHash,
              transactionHash: hashMessage(block.transactions[r.index].txid),
              transactionIndex: r.index,
              logIndex: r.firstLogIndex + i,
            },
          },
          sequence,
        });
        out.push(toBinary(ChainEventSchema, event));
      });
    }
  }
}

/** Pending transactions from or to a listed address; block events always pass (logs are matched later). */
function acceptPending(e: FeedEvent, addresses: Set<string>): boolean {
  if (e.kind !== 'pending_tx') return true;
  return addresses.has(e.tx.from_address.toLowerCase()) || addresses.has(e.tx.to_address.toLowerCase());
}
