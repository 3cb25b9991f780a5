/**
 * The native event index: every event a native operation records (ledger/events.ts) is listed under
 * the terms its module names (`token:SRC20_…`, `nft:addr:0x…`, …), written in the block's atomic batch
 * with a count per term, so feeds (a token's transfers, a collection's events, an address's NFT history)
 * page newest-first without scanning blocks.
 */
import type { ReceiptRecord } from '../execution/receipts.js';
import type { NativeEvent } from '../ledger/events.js';
import { eventIndexTerms } from '../ledger/executor.js';
import { type KvOp, type KvStore, eventCountKey, eventIndexKey, eventIndexPrefix, prefixEnd } from '../storage/index.js';
import { u64be } from '../util/hex.js';

/** Where an event is: block height, transaction index in the block, event index in the receipt. */
export interface EventLocation {
  height: number;
  txIndex: number;
  eventIndex: number;
}

export class EventIndex {
  private readonly counts = new Map<string, number>();

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

  /** Locations of the events under a term, newest first. */
  async list(term: string, offset: number, limit: number): Promise<EventLocation[]> {
    const prefix = eventIndexPrefix(term);
    const rows = await this.db.range({ gte: prefix, lt: prefixEnd(prefix), reverse: true, limit: offset + limit });
    const at = prefix.length;
    return rows.slice(offset).map(([k]) => ({
      height: Number(k.readBigUInt64BE(at)),
      txIndex: k.readUInt32BE(at + 8),
      eventIndex: k.readUInt16BE(at + 12),
    }));
  }

  /** The batch operations that index a block's events; `applied()` then updates the cached counts. */
  ops(height: number, receipts: readonly ReceiptRecord[]): { ops: KvOp[]; applied: () => void } {
    const ops: KvOp[] = [];
    const postings: { term: string; key: Buffer }[] = [];
    receipts.forEach((r, txIndex) => {
      r.events?.forEach((e: NativeEvent, eventIndex) => {
        for (const term of new Set(this.termsOf(e)))
          postings.push({ term, key: eventIndexKey(term, height, txIndex, eventIndex) });
      });
    });
    this.loadCounts(postings.map((p) => p.term));
    const counts = new Map<string, number>();
    for (const { term, key } of postings) {
      ops.push({ type: 'put', key, value: Buffer.alloc(0) });
      counts.set(term, (counts.get(term) ?? this.count(term)) + 1);
    }
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
            ops.push({ type: 'del', key: eventIndexKey(term, height, txIndex, eventIndex) });
            counts.set(term, (counts.get(term) ?? this.count(term)) - 1);
          }
        });
      });
    }
    for (const [term, n] of counts) {
      ops.push(n > 0 ? { type: 'put', key: eventCountKey(term), value: u64be(n) } : { type: 'del', key: eventCountKey(term) });
    }
    return { ops, applied: () => counts.forEach((n, term) => this.counts.set(term, n)) };
  }
}
