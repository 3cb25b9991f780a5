/**
 * The native event index: every event a native operation records (modules/kit/events.ts) is listed under
 * the terms its module names (`token:SRC20_…`, `nft:addr:0x…`, …), written in the block's atomic batch
 * with a count per term, so feeds (a token's transfers, a collection's events, an address's NFT history)
 * page newest-first without scanning blocks.
 */
import type { ReceiptRecord } from '../execution/index.js';
import { type NativeEvent, eventIndexTerms } from '../ledger/index.js';
import {
  type KvBatch,
  type KvOp,
  type KvStore,
  addOps,
  eventCountKey,
  eventIndexKeyAt,
  eventIndexPrefix,
  prefixEnd,
} from '../storage/index.js';
import { u64be } from '../util/index.js';
import type { Block } from './block.js';
import type { BlockIndexContributor, DroppedIndex, LogSource, RemovedBlock } from './block-index.js';

/** Postings carry no value: the key says everything. */
const NO_VALUE = Buffer.alloc(0);

/** Where an event is: block height, transaction index in the block, event index in the receipt. */
export interface EventLocation {
  height: number;
  txIndex: number;
  eventIndex: number;
}

/** An indexed event with its transaction id. */
export type IndexedEvent = EventLocation & { txid: string; event: NativeEvent };

/** Offsets from which `list` reads from a checkpoint rather than from the newest event. */
const DEEP_OFFSET = 512;
/** Positions of the checkpoints kept per term: every CHECKPOINT_EVERY-th event counted from the oldest. */
const CHECKPOINT_EVERY = 256;
/** Terms whose checkpoints are kept (the most recently paged deeply). */
const CHECKPOINTED_TERMS = 1024;
const ZERO_BYTE = Buffer.from([0]);

const locationOf = (k: Buffer, at: number): EventLocation => ({
  height: Number(k.readBigUInt64BE(at)),
  txIndex: k.readUInt32BE(at + 8),
  eventIndex: k.readUInt16BE(at + 12),
});

/** A BlockStore contributor (stage, drop); `ops` and `dropOps` are the same operations as lists. */
export class EventIndex implements BlockIndexContributor {
  private readonly counts = new Map<string, number>();
  /**
   * Keys of events at known positions of a term, counted from its oldest event: new events only ever come after
   * the newest, so a position keeps its key until a rollback removes events of the term (which drops its
   * checkpoints). Filled by deep reads; position -> key.
   */
  private readonly checkpoints = new Map<string, Map<number, Buffer>>();

  constructor(
    private readonly db: KvStore,
    /** The terms an event is listed under: every operation module's, unless a test gives its own. */
    private readonly termsOf: (event: NativeEvent) => string[] = eventIndexTerms,
  ) {}

  /** Number of events listed under a term. */
  count(term: string): number {
    const hit = this.counts.get(term);
    if (hit !== undefined) return hit;
    const [raw] = this.db.getManySync([eventCountKey(term)]);
    const n = raw ? Number(raw.readBigUInt64BE(0)) : 0;
    this.counts.set(term, n);
    return n;
  }

  /** Read the counts of the terms not cached yet in one multi-get (a block can name thousands of new terms). */
  private loadCounts(terms: readonly string[]): void {
    const missing = [...new Set(terms)].filter((t) => !this.counts.has(t));
    if (missing.length === 0) return;
    const raw = this.db.getManySync(missing.map(eventCountKey));
    missing.forEach((t, i) => this.counts.set(t, raw[i] ? Number((raw[i] as Buffer).readBigUInt64BE(0)) : 0));
  }

  /**
   * Locations of the events under a term, newest first. A deep page (offset >= DEEP_OFFSET) starts reading at a
   * remembered key at most CHECKPOINT_EVERY entries newer than it (see `checkpoints`) instead of reading every
   * newer key: a page 10,000 entries deep costs a read of a few hundred keys, not 10,000.
   */
  async list(term: string, offset: number, limit: number): Promise<EventLocation[]> {
    const prefix = eventIndexPrefix(term);
    const count = this.count(term);
    // Position (counted from the oldest event of the term) of the page's newest entry.
    const top = count - 1 - offset;
    if (offset >= DEEP_OFFSET && top >= 0) {
      const from = this.checkpointAbove(term, top);
      if (from) {
        const rows = await this.db.range({
          gte: prefix,
          lt: Buffer.concat([from.key, ZERO_BYTE]),
          reverse: true,
          limit: from.position - top + limit,
        });
        return rows.slice(from.position - top).map(([k]) => locationOf(k, prefix.length));
      }
    }
    const rows = await this.db.range({ gte: prefix, lt: prefixEnd(prefix), reverse: true, limit: offset + limit });
    // Positions are known only if no block changed the term while the range was read.
    if (offset >= DEEP_OFFSET && this.count(term) === count) this.remember(term, rows, count);
    return rows.slice(offset).map(([k]) => locationOf(k, prefix.length));
  }

  /**
   * Native events under an index term, newest first, each with its transaction id (read through `sources`, the
   * store's log sources): the feeds of tokens, NFT collections and addresses.
   */
  async listWithTx(
    term: string,
    offset: number,
    limit: number,
    sources: (heights: number[]) => Promise<LogSource[]>,
  ): Promise<IndexedEvent[]> {
    const locations = await this.list(term, offset, limit);
    const byHeight = new Map((await sources([...new Set(locations.map((l) => l.height))])).map((s) => [s.height, s]));
    const out: IndexedEvent[] = [];
    for (const l of locations) {
      const s = byHeight.get(l.height);
      const event = s?.receipts[l.txIndex]?.events?.[l.eventIndex];
      if (s && event) out.push({ ...l, txid: s.txid(l.txIndex), event });
    }
    return out;
  }

  /** Keep the keys at every CHECKPOINT_EVERY-th position of rows read newest first (row i at position count - 1 - i). */
  private remember(term: string, rows: readonly [Buffer, Buffer][], count: number): void {
    let marks = this.checkpoints.get(term);
    if (marks) this.checkpoints.delete(term);
    else marks = new Map();
    // Least recently used terms go first.
    this.checkpoints.set(term, marks);
    if (this.checkpoints.size > CHECKPOINTED_TERMS) this.checkpoints.delete(this.checkpoints.keys().next().value as string);
    for (let i = (count - 1) % CHECKPOINT_EVERY; i < rows.length; i += CHECKPOINT_EVERY) marks.set(count - 1 - i, rows[i][0]);
  }

  /** The nearest remembered key at or above position `top` (newer), within CHECKPOINT_EVERY of it. */
  private checkpointAbove(term: string, top: number): { position: number; key: Buffer } | null {
    const marks = this.checkpoints.get(term);
    if (!marks) return null;
    const position = Math.ceil(top / CHECKPOINT_EVERY) * CHECKPOINT_EVERY;
    const key = marks.get(position);
    return key ? { position, key } : null;
  }

  stage(batch: KvBatch, block: Block, receipts: readonly ReceiptRecord[]): () => void {
    const staged = this.ops(block.index, receipts);
    addOps(batch, staged.ops);
    return staged.applied;
  }

  drop(removed: readonly RemovedBlock[]): DroppedIndex {
    return this.dropOps(removed.map(({ block, receipts }) => ({ height: block.index, receipts })));
  }

  /** The batch operations that index a block's events; `applied()` then updates the cached counts. */
  ops(height: number, receipts: readonly ReceiptRecord[]): { ops: KvOp[]; applied: () => void } {
    // Every posting first, so the counts of terms not seen before are read in one multi-get and each
    // term's key prefix is built once per block (a token's feed term recurs in every transfer).
    const postings: { prefix: Buffer; txIndex: number; eventIndex: number }[] = [];
    const added = new Map<string, { prefix: Buffer; n: number }>();
    receipts.forEach((r, txIndex) => {
      r.events?.forEach((e: NativeEvent, eventIndex) => {
        for (const term of new Set(this.termsOf(e))) {
          let t = added.get(term);
          if (!t) added.set(term, (t = { prefix: eventIndexPrefix(term), n: 0 }));
          t.n++;
          postings.push({ prefix: t.prefix, txIndex, eventIndex });
        }
      });
    });
    this.loadCounts([...added.keys()]);
    const ops: KvOp[] = postings.map((p) => ({
      type: 'put',
      key: eventIndexKeyAt(p.prefix, height, p.txIndex, p.eventIndex),
      value: NO_VALUE,
    }));
    const counts = new Map<string, number>();
    for (const [term, t] of added) counts.set(term, this.count(term) + t.n);
    for (const [term, n] of counts) ops.push({ type: 'put', key: eventCountKey(term), value: u64be(n) });
    return { ops, applied: () => counts.forEach((n, term) => this.counts.set(term, n)) };
  }

  /**
   * Rollback: the batch operations removing the events of these blocks and lowering their terms' counts;
   * `applied()` then updates the cached counts.
   */
  dropOps(blocks: readonly { height: number; receipts: readonly ReceiptRecord[] }[]): { ops: KvOp[]; applied: () => void } {
    const ops: KvOp[] = [];
    const counts = new Map<string, number>();
    for (const { height, receipts } of blocks) {
      receipts.forEach((r, txIndex) => {
        r.events?.forEach((e: NativeEvent, eventIndex) => {
          for (const term of new Set(this.termsOf(e))) {
            ops.push({ type: 'del', key: eventIndexKeyAt(eventIndexPrefix(term), height, txIndex, eventIndex) });
            counts.set(term, (counts.get(term) ?? this.count(term)) - 1);
          }
        });
      });
    }
    for (const [term, n] of counts) {
      ops.push(n > 0 ? { type: 'put', key: eventCountKey(term), value: u64be(n) } : { type: 'del', key: eventCountKey(term) });
    }
    return {
      ops,
      applied: () =>
        counts.forEach((n, term) => {
          this.counts.set(term, n);
          this.checkpoints.delete(term);
        }),
    };
  }
}
