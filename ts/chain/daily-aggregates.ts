/**
 * Per-UTC-day aggregates (blocks, transactions, first-time addresses) written in each block's batch, which
 * `/stats/daily` reads (a BlockStore contributor). An address is new on the day of its first transaction, as the
 * address index counts it.
 */
import type { ReceiptRecord } from '../execution/index.js';
import { type KvBatch, type KvOp, type KvStore, metaKey } from '../storage/index.js';
import type { Block } from './block.js';
import type { AddressIndex } from './address-index.js';
import { txAddresses } from './address-index.js';
import type { BlockIndexContributor, DroppedIndex, RemovedBlock } from './block-index.js';

/** Per-UTC-day aggregates written with each block (GET /stats/daily reads 14 of them). */
export interface DayRecord {
  day: number;
  blocks: number;
  txs: number;
  /** Addresses whose first transaction ever is on this day. */
  new_addresses: number;
  first_ts: number;
  last_ts: number;
}

export const DAY_SECONDS = 86_400;
export const dayOf = (ts: number): number => Math.floor(ts / DAY_SECONDS);
const dayKey = (day: number): Buffer => metaKey(`day:${day}`);

export class DailyAggregates implements BlockIndexContributor {
  private readonly days = new Map<number, DayRecord>();

  constructor(
    private readonly db: KvStore,
    /** Staged before this index for every block (it counts the block's first-time addresses). */
    private readonly addresses: AddressIndex,
  ) {}

  stage(batch: KvBatch, block: Block, _receipts: readonly ReceiptRecord[]): (() => void) | undefined {
    if (block.index === 0) return undefined;
    const day = foldDay(this.dayRecord(dayOf(block.timestamp)), block, this.addresses.firstTimeAddresses(block.index));
    batch.put(dayKey(day.day), Buffer.from(JSON.stringify(day)));
    return () => this.days.set(day.day, day);
  }

  /**
   * Rollback: each removed block (ascending) leaves its day's record, with the addresses it saw first (their
   * count after the rollback is 0); the new head is the last block of its day.
   */
  drop(removed: readonly RemovedBlock[], head: Block): DroppedIndex {
    const countAfter = this.addresses.countAfterDrop(removed);
    const adjust = new Map<number, { blocks: number; txs: number; fresh: number }>();
    const seen = new Set<string>();
    for (const { block: b } of [...removed].reverse()) {
      const d = dayOf(b.timestamp);
      const a = adjust.get(d) ?? { blocks: 0, txs: 0, fresh: 0 };
      a.blocks++;
      a.txs += b.transactions.length;
      for (const tx of b.transactions) {
        for (const addr of txAddresses(tx)) {
          if (seen.has(addr) || countAfter(addr) > 0) continue;
          seen.add(addr);
          a.fresh++;
        }
      }
      adjust.set(d, a);
    }
    const ops: KvOp[] = [];
    const records = new Map<number, DayRecord | null>();
    for (const [d, a] of adjust) {
      const prev = this.dayRecord(d);
      const blocks = prev.blocks - a.blocks;
      if (blocks <= 0) {
        ops.push({ type: 'del', key: dayKey(d) });
        records.set(d, null);
        continue;
      }
      const rec: DayRecord = {
        ...prev,
        blocks,
        txs: prev.txs - a.txs,
        new_addresses: prev.new_addresses - a.fresh,
        last_ts: d === dayOf(head.timestamp) ? head.timestamp : prev.last_ts,
      };
      ops.push({ type: 'put', key: dayKey(d), value: Buffer.from(JSON.stringify(rec)) });
      records.set(d, rec);
    }
    return {
      ops,
      applied: () => {
        for (const [d, rec] of records) {
          if (rec) this.days.set(d, rec);
          else this.days.delete(d);
        }
      },
    };
  }

  /** Aggregates of a UTC day (day = Unix seconds / 86400), from the record written with its blocks. */
  dayRecord(day: number): DayRecord {
    const hit = this.days.get(day);
    if (hit) return hit;
    const [raw] = this.db.getManySync([dayKey(day)]);
    const rec: DayRecord = raw
      ? (JSON.parse(raw.toString('utf8')) as DayRecord)
      : { day, blocks: 0, txs: 0, new_addresses: 0, first_ts: 0, last_ts: 0 };
    this.days.set(day, rec);
    return rec;
  }
}

function foldDay(prev: DayRecord, block: Block, fresh: number): DayRecord {
  return {
    day: prev.day,
    blocks: prev.blocks + 1,
    txs: prev.txs + block.transactions.length,
    new_addresses: prev.new_addresses + fresh,
    first_ts: prev.blocks === 0 ? block.timestamp : Math.min(prev.first_ts, block.timestamp),
    last_ts: Math.max(prev.last_ts, block.timestamp),
  };
}
