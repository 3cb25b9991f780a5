import { type ReceiptRecord, decodeReceipts, encodeReceipts } from '../execution/index.js';
import { type NativeEvent, type SignedTransaction, ZERO_ADDRESS } from '../ledger/index.js';
import { type StateChanges, type StateUndo, keyBytes } from '../state/index.js';
import {
  type KvBatch,
  type KvOp,
  type KvStore,
  addOps,
  addrCountKey,
  addrTxKey,
  addrTxPrefix,
  blockHashKey,
  blockKey,
  creationKey,
  metaKey,
  prefixEnd,
  receiptsKey,
  stateKey,
  txKey,
} from '../storage/index.js';
import { normHash, toHex, u32be, u64be } from '../util/index.js';
import { type Block, decodeBlock, decodeBlockRefs, encodeBlock } from './block.js';
import { EventIndex, type EventLocation } from './event-index.js';
import { LogIndex, logIndexOps } from './log-index.js';
import { type HistoryRetention, StateHistory } from './state-history.js';

export interface TxLocation {
  height: number;
  index: number;
}

const HEAD = metaKey('head');
/** First height whose contract creations the creation index holds (databases written before it existed). */
const CREATION_INDEX_FROM = metaKey('creation-index-from');
/** Heights per synchronous multi-get when receipts are read for many heights. */
const READ_CHUNK = 256;
/** Blocks of the first database read when a peer's range request is answered (later reads are sized by bytes). */
const RANGE_READ_CHUNK = 8;
/** Bytes of blocks a range stream reads from the database at once (about). */
const RANGE_STREAM_CHUNK_BYTES = 512 * 1024;

/** What a log query needs of a block: its hash, its transaction ids and its receipts. */
export interface LogSource {
  height: number;
  hash: string;
  txid(index: number): string;
  receipts: readonly ReceiptRecord[];
}

/**
 * Blocks and their indexes on disk, plus a window of recent blocks in memory.
 * Every block is written with its state changes, indexes and state change set in ONE RocksDB batch,
 * and the head pointer moves in that same batch, so a crash leaves either all of it or none. (The state
 * history's per-key index is built from the change set afterwards, in batches of its own: state-history.ts.)
 */
export class BlockStore {
  private readonly window = new Map<number, Block>();
  private readonly windowReceipts = new Map<number, readonly ReceiptRecord[]>();
  private readonly txCounts = new Map<string, number>();
  private readonly days = new Map<number, DayRecord>();
  private headHeight = -1;
  private creationIndexFrom = 0;
  /** EVM log postings (written in each block's batch) and the window's blooms. */
  readonly logIndex: LogIndex;
  /** Change sets (written in each block's batch) and the history index built from them: reads of the state at a past height. */
  readonly history: StateHistory;
  /** Native operation events by index term (written in each block's batch). */
  readonly eventIndex: EventIndex;

  constructor(
    readonly db: KvStore,
    readonly windowSize: number,
    retention: HistoryRetention = { kind: 'full' },
  ) {
    this.logIndex = new LogIndex(db, windowSize);
    this.history = new StateHistory(db, retention);
    this.eventIndex = new EventIndex(db);
  }

  get height(): number {
    return this.headHeight;
  }

  /** Height of the oldest block held in memory. */
  get windowStart(): number {
    return Math.max(0, this.headHeight - this.windowSize + 1);
  }

  async open(): Promise<number> {
    const raw = await this.db.get(HEAD);
    this.headHeight = raw ? Number(raw.readBigUInt64BE(0)) : -1;
    const from = await this.db.get(CREATION_INDEX_FROM);
    if (from) this.creationIndexFrom = Number(from.readBigUInt64BE(0));
    else {
      // Blocks from the next one on are indexed; older creations are found by a scan (contractCreation).
      this.creationIndexFrom = this.headHeight + 1;
      await this.db.write([{ type: 'put', key: CREATION_INDEX_FROM, value: u64be(this.creationIndexFrom) }]);
    }
    await this.logIndex.open(this.headHeight);
    await this.history.open(this.headHeight);
    await this.loadWindow();
    return this.headHeight;
  }

  /** Read the window's blocks in [from, to) (the whole window by default) into memory. */
  private async loadWindow(from = this.windowStart, to = this.headHeight + 1): Promise<void> {
    if (this.headHeight < 0 || from >= to) return;
    const rows = await this.db.range({ gte: blockKey(from), lt: blockKey(to) });
    for (const [, v] of rows) this.remember(decodeBlock(v));
  }

  /**
   * Write a block with its state changes, indexes and change set in one batch. `undo` holds the value
   * before the block of every key in `changes` (StateStore.applyChanges returns it).
   */
  async commit(
    block: Block,
    changes: StateChanges,
    receipts: readonly ReceiptRecord[],
    encodedReceipts: Uint8Array = encodeReceipts(receipts),
    undo: StateUndo = new Map(),
    /** More writes for the same atomic batch (the dev chain's record of writes made between blocks). */
    extraOps: readonly KvOp[] = [],
  ): Promise<void> {
    // Filled op by op (KvBatch): no op object for each of a large block's tens of thousands of keys.
    const batch = this.db.batch();
    const staged = this.stage(batch, block, changes, receipts, encodedReceipts, undo, extraOps);
    await batch.write();
    staged.remember();
    staged.durable();
  }

  /**
   * Commits of consecutive blocks in ONE atomic write (a syncing node's catch-up, Chain.importRun): each
   * `add` puts a block's operations into the shared batch and updates what the next block's operations are
   * computed from (the window, the head height, address counts, day records, event counts); `write` writes
   * them all with the head pointer at the last one, so a crash leaves all of the run or none. A failed write leaves those
   * in-memory caches ahead of the store: the caller gives up on this store (Chain marks itself failed).
   */
  startRun(): {
    add: (
      block: Block,
      changes: StateChanges,
      receipts: readonly ReceiptRecord[],
      encodedReceipts: Uint8Array,
      undo: StateUndo,
    ) => void;
    write: () => Promise<void>;
  } {
    const batch = this.db.batch();
    const durable: (() => void)[] = [];
    return {
      add: (block, changes, receipts, encodedReceipts, undo) => {
        const staged = this.stage(batch, block, changes, receipts, encodedReceipts, undo, []);
        staged.remember();
        durable.push(staged.durable);
      },
      write: async () => {
        if (durable.length === 0) return;
        await batch.write();
        for (const d of durable) d();
      },
    };
  }

  /**
   * A block's commit operations, added to `batch`; `remember` then updates the in-memory view (window, head
   * height, cached counts and day records) and `durable` hands its change set to the history indexer, which
   * reads it from the store (so only once the batch is written).
   */
  private stage(
    batch: KvBatch,
    block: Block,
    changes: StateChanges,
    receipts: readonly ReceiptRecord[],
    encodedReceipts: Uint8Array,
    undo: StateUndo,
    extraOps: readonly KvOp[],
  ): { remember: () => void; durable: () => void } {
    if (undo.size !== changes.size) throw new Error(`block ${block.index}: undo record does not match its state changes`);
    addOps(batch, extraOps);
    // Views, not copies: RocksDB copies the bytes into its batch anyway (the body of a large block is megabytes).
    batch.put(blockKey(block.index), viewOf(encodeBlock(block)));
    batch.put(receiptsKey(block.index), viewOf(encodedReceipts));
    batch.put(blockHashKey(block.hash), u64be(block.index));
    batch.put(HEAD, u64be(block.index));
    addOps(batch, logIndexOps(block.index, receipts));
    receipts.forEach((r, i) => {
      if (r.contractAddress) batch.put(creationKey(toHex(r.contractAddress)), txLocationValue(block.index, i));
    });
    // Address history: one posting per address and block listing its transactions (docs/storage.md).
    const postings = new Map<string, number[]>();
    block.transactions.forEach((tx, i) => {
      batch.put(txKey(tx.txid), txLocationValue(block.index, i));
      for (const addr of txAddresses(tx)) addPosting(postings, addr, i);
    });
    const counts = new Map<string, number>();
    for (const [addr, indexes] of postings) {
      batch.put(addrTxKey(addr, block.index), postingValue(indexes));
      counts.set(addr, indexes.length);
    }
    this.loadTxCounts(counts.keys());
    let fresh = 0;
    for (const [addr, n] of counts) {
      const before = this.txCount(addr);
      if (before === 0) fresh++;
      counts.set(addr, n + before);
    }
    for (const [addr, n] of counts) batch.put(addrCountKey(addr), u32be(n));
    // Daily aggregates (GET /stats/daily), kept in the same batch: an address is new on the day of its first transaction.
    let day: DayRecord | null = null;
    if (block.index > 0) {
      day = foldDay(this.dayRecord(dayOf(block.timestamp)), block, fresh);
      batch.put(dayKey(day.day), Buffer.from(JSON.stringify(day)));
    }
    const events = this.eventIndex.ops(block.index, receipts);
    addOps(batch, events.ops);
    for (const [k, v] of changes) {
      const key = stateKey(keyBytes(k));
      if (v === null) batch.del(key);
      else batch.put(key, v);
    }
    // Genesis has no state before it to read: its change set would only repeat the allocation. The history
    // index is built from the change set after this write, off the commit path (state-history.ts).
    if (block.index > 0) addOps(batch, this.history.commitOps(block.index, undo));
    return {
      remember: () => {
        if (day) this.days.set(day.day, day);
        events.applied();
        for (const [addr, n] of counts) this.txCounts.set(addr, n);
        this.headHeight = block.index;
        this.remember(block);
        this.windowReceipts.set(block.index, receipts);
        this.windowReceipts.delete(block.index - this.windowSize);
      },
      durable: () => this.history.committed(block.index, undo),
    };
  }

  /**
   * Remove every block above `height` with its indexes and change set, and put back the state values those
   * blocks changed, in one batch (a crash leaves all of it or none). The state's change set is returned for
   * the caller to apply to the in-memory state. Needs the change sets of those blocks (history kept).
   * `extra`: the caller's own deletions for the removed heights, written in the same batch; `beforeWrite`
   * is given the state keys about to be restored just before the batch is written.
   */
  async rollbackTo(
    height: number,
    extra: readonly KvOp[] = [],
    beforeWrite?: (keys: Iterable<string>) => void,
  ): Promise<StateChanges> {
    // The history indexer must not write index entries of the blocks being removed, nor move its marker.
    const resumeIndexing = await this.history.pauseIndexing();
    try {
      return await this.rollbackPaused(height, extra, beforeWrite);
    } finally {
      resumeIndexing();
    }
  }

  private async rollbackPaused(
    height: number,
    extra: readonly KvOp[],
    beforeWrite?: (keys: Iterable<string>) => void,
  ): Promise<StateChanges> {
    const ops: KvOp[] = [...extra];
    const restore: StateChanges = new Map();
    const countDelta = new Map<string, number>();
    const dropped: { height: number; receipts: readonly ReceiptRecord[] }[] = [];
    const removed: Block[] = [];
    for (let h = this.headHeight; h > height; h--) {
      const block = await this.getBlock(h);
      if (!block) throw new Error(`block ${h} missing from the store`);
      const changeSet = this.history.changeSet(h);
      // Heights descend: an older block's previous value overrides a newer one's.
      for (const [k, prev] of changeSet) restore.set(k, prev ?? null);
      ops.push(...this.history.dropOps(h, changeSet));
      ops.push(
        { type: 'del', key: blockKey(h) },
        { type: 'del', key: receiptsKey(h) },
        { type: 'del', key: blockHashKey(block.hash) },
      );
      const receipts = (await this.receipts(h)) ?? [];
      dropped.push({ height: h, receipts });
      removed.push(block);
      receipts.forEach((r) => {
        if (r.contractAddress) ops.push({ type: 'del', key: creationKey(toHex(r.contractAddress)) });
      });
      for (const op of logIndexOps(h, receipts)) ops.push({ type: 'del', key: op.key });
      const touched = new Set<string>();
      for (const tx of block.transactions) {
        ops.push({ type: 'del', key: txKey(tx.txid) });
        for (const addr of txAddresses(tx)) {
          touched.add(addr);
          countDelta.set(addr, (countDelta.get(addr) ?? 0) - 1);
        }
      }
      for (const addr of touched) ops.push({ type: 'del', key: addrTxKey(addr, h) });
    }
    for (const [addr, d] of countDelta) {
      const n = this.txCount(addr) + d;
      ops.push(n > 0 ? { type: 'put', key: addrCountKey(addr), value: u32be(n) } : { type: 'del', key: addrCountKey(addr) });
    }
    for (const [k, v] of restore) {
      const key = stateKey(keyBytes(k));
      ops.push(v === null ? { type: 'del', key } : { type: 'put', key, value: v });
    }
    const days = await this.dayRollback(height, removed.reverse(), (addr) => this.txCount(addr) + (countDelta.get(addr) ?? 0));
    for (const op of days.ops) ops.push(op);
    const events = this.eventIndex.dropOps(dropped);
    for (const op of events.ops) ops.push(op);
    ops.push(...this.history.rollbackOps(height));
    ops.push({ type: 'put', key: HEAD, value: u64be(height) });
    beforeWrite?.(restore.keys());
    await this.db.write(ops);
    events.applied();
    days.applied();
    const oldStart = this.windowStart;
    for (const h of [...this.window.keys()]) if (h > height) this.window.delete(h);
    for (const h of [...this.windowReceipts.keys()]) if (h > height) this.windowReceipts.delete(h);
    this.txCounts.clear();
    this.logIndex.blooms.truncate(height);
    this.history.rolledBack(height);
    this.headHeight = height;
    // The window now reaches lower by as many blocks as were removed: only those are read (a dev chain's
    // evm_revert rolls back a few blocks of a long chain, and must not re-read the whole window each time).
    // Their bloom slots are written again too (the ring reused them for the removed heights).
    await this.loadWindow(this.windowStart, oldStart);
    return restore;
  }

  /**
   * Native events under an index term, newest first, each with its transaction id: the feeds of tokens,
   * NFT collections and addresses.
   */
  async indexedEvents(
    term: string,
    offset: number,
    limit: number,
  ): Promise<(EventLocation & { txid: string; event: NativeEvent })[]> {
    const locations = await this.eventIndex.list(term, offset, limit);
    const sources = await this.logSources([...new Set(locations.map((l) => l.height))]);
    const byHeight = new Map(sources.map((s) => [s.height, s]));
    const out: (EventLocation & { txid: string; event: NativeEvent })[] = [];
    for (const l of locations) {
      const s = byHeight.get(l.height);
      const event = s?.receipts[l.txIndex]?.events?.[l.eventIndex];
      if (s && event) out.push({ ...l, txid: s.txid(l.txIndex), event });
    }
    return out;
  }

  /** Receipts of the block at height (one per transaction), or null when the block does not exist. */
  async receipts(height: number): Promise<readonly ReceiptRecord[] | null> {
    if (!Number.isSafeInteger(height) || height < 0 || height > this.headHeight) return null;
    const hit = this.windowReceipts.get(height);
    if (hit) return hit;
    const raw = await this.db.get(receiptsKey(height));
    return raw ? decodeReceipts(raw) : [];
  }

  /**
   * Log sources of the given heights (each at most the head), in the given order: the window from memory,
   * the rest with synchronous multi-gets of READ_CHUNK heights (yielding in between), blocks decoded only
   * as far as hash and transaction ids.
   */
  async logSources(heights: readonly number[]): Promise<LogSource[]> {
    const out: LogSource[] = [];
    for (let i = 0; i < heights.length; i += READ_CHUNK) {
      if (i > 0) await new Promise((r) => setImmediate(r));
      const chunk = heights.slice(i, i + READ_CHUNK);
      const blocks = chunk.map((h) => this.window.get(h));
      const receipts = chunk.map((h) => this.windowReceipts.get(h));
      const keys: Buffer[] = [];
      const at = chunk.map((h, j) => [
        blocks[j] ? -1 : keys.push(blockKey(h)) - 1,
        receipts[j] ? -1 : keys.push(receiptsKey(h)) - 1,
      ]);
      const raw = keys.length ? this.db.getManySync(keys) : [];
      chunk.forEach((height, j) => {
        const [bi, ri] = at[j];
        const rs = receipts[j] ?? (raw[ri] ? decodeReceipts(raw[ri] as Buffer) : []);
        if (!receipts[j] && raw[ri]) this.keepWindowReceipts(height, rs);
        const b = blocks[j];
        if (b) out.push({ height, hash: b.hash, txid: (k) => b.transactions[k].txid, receipts: rs });
        else if (raw[bi]) {
          const refs = decodeBlockRefs(raw[bi] as Buffer);
          out.push({ height, hash: refs.hash, txid: (k) => toHex(refs.txids[k]), receipts: rs });
        }
      });
    }
    return out;
  }

  private remember(block: Block): void {
    this.window.set(block.index, block);
    this.logIndex.blooms.put(block.index, block.logs_bloom);
    const evict = block.index - this.windowSize;
    this.window.delete(evict);
  }

  /** Block from the window, or null when outside it (callers that may go to disk use getBlock). */
  recentBlock(height: number): Block | null {
    return this.window.get(height) ?? null;
  }

  async getBlock(height: number): Promise<Block | null> {
    if (!Number.isSafeInteger(height) || height < 0 || height > this.headHeight) return null;
    const hit = this.window.get(height);
    if (hit) return hit;
    const raw = await this.db.get(blockKey(height));
    return raw ? decodeBlock(raw) : null;
  }

  /**
   * Stored encodings of blocks [from, from + count) as far as the store has them, while their total stays
   * within maxBytes (the first block always): what a peer's range request is answered with, read in
   * chunks straight from the database without decoding and re-encoding each block.
   */
  async encodedBlocks(from: number, count: number, maxBytes: number): Promise<Uint8Array[]> {
    const out: Uint8Array[] = [];
    for await (const v of this.streamEncodedBlocks(from, count, maxBytes)) out.push(v);
    return out;
  }

  /**
   * The same blocks as a stream, read a chunk at a time (about RANGE_STREAM_CHUNK_BYTES) only as the
   * consumer pulls them: a peer's range response holds one chunk in memory, not its whole 8 MiB.
   */
  async *streamEncodedBlocks(from: number, count: number, maxBytes: number): AsyncGenerator<Uint8Array> {
    const end = Math.min(this.headHeight + 1, from + count);
    let bytes = 0;
    let sent = 0;
    for (let h = from; h < end; ) {
      // Sized by the blocks read so far: a chunk of large blocks stays near the bound, empty ones go dozens at once.
      const room = Math.min(maxBytes - bytes, RANGE_STREAM_CHUNK_BYTES);
      const fit = sent === 0 ? RANGE_READ_CHUNK : Math.ceil(room / (bytes / sent));
      const limit = Math.max(1, Math.min(end - h, fit, 32 * RANGE_READ_CHUNK));
      const rows = await this.db.range({ gte: blockKey(h), lt: blockKey(h + limit), limit });
      for (const [, v] of rows) {
        if (sent > 0 && bytes + v.length > maxBytes) return;
        bytes += v.length;
        sent++;
        yield v;
      }
      if (rows.length < limit) break;
      h += limit;
    }
  }

  async heightOfHash(hash: string): Promise<number | null> {
    const h = normHash(hash);
    for (const b of this.window.values()) if (b.hash === h) return b.index;
    const raw = await this.db.get(blockHashKey(h));
    return raw ? Number(raw.readBigUInt64BE(0)) : null;
  }

  /**
   * Where a transaction is in the chain, from the transaction index (written in each block's batch). No
   * in-memory map of the window's transactions: it cost a Map insert and delete per transaction on the
   * commit path and up to window x block size entries of memory, for saving one RocksDB read.
   */
  async txLocation(txid: string): Promise<TxLocation | null> {
    const id = normHash(txid);
    const raw = await this.db.get(txKey(id));
    return raw ? { height: Number(raw.readBigUInt64BE(0)), index: raw.readUInt32BE(8) } : null;
  }

  /** Cache the counts of these addresses with one multi-get (a block's senders, instead of one read each). */
  private loadTxCounts(addresses: Iterable<string>): void {
    const missing = [...addresses].filter((a) => !this.txCounts.has(a));
    if (missing.length === 0) return;
    const raw = this.db.getManySync(missing.map(addrCountKey));
    missing.forEach((a, i) => this.txCounts.set(a, raw[i] ? (raw[i] as Buffer).readUInt32BE(0) : 0));
  }

  /**
   * Rollback of the daily aggregates: each removed block (ascending) leaves its day's record, with the addresses
   * it saw first (their count after the rollback is 0); the new head is the last block of its day.
   */
  private async dayRollback(
    height: number,
    removed: readonly Block[],
    countAfter: (addr: string) => number,
  ): Promise<{ ops: KvOp[]; applied: () => void }> {
    const head = (await this.getBlock(height)) as Block;
    const adjust = new Map<number, { blocks: number; txs: number; fresh: number }>();
    const seen = new Set<string>();
    for (const b of removed) {
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

  txCount(address: string): number {
    const cached = this.txCounts.get(address);
    if (cached !== undefined) return cached;
    const [raw] = this.db.getManySync([addrCountKey(address)]);
    const n = raw ? raw.readUInt32BE(0) : 0;
    this.txCounts.set(address, n);
    return n;
  }

  /**
   * Newest-first locations of the transactions touching address. Each posting holds at least one
   * location, so offset + limit postings are enough.
   */
  async addressHistory(address: string, offset: number, limit: number): Promise<TxLocation[]> {
    const prefix = addrTxPrefix(address);
    const rows = await this.db.range({ gte: prefix, lt: prefixEnd(prefix), reverse: true, limit: offset + limit });
    const out: TxLocation[] = [];
    for (const [k, v] of rows) {
      const locs = postingLocations(k, v);
      for (let j = locs.length - 1; j >= 0 && out.length < offset + limit; j--) out.push(locs[j]);
      if (out.length >= offset + limit) break;
    }
    return out.slice(offset);
  }

  /**
   * Blocks from..to (inclusive, clamped to the chain), ascending: window blocks from memory, the
   * rest with one range read. Consumers: the query layer's block index and transaction listings.
   */
  async readRange(from: number, to: number): Promise<Block[]> {
    const lo = Math.max(0, from);
    const hi = Math.min(to, this.headHeight);
    if (hi < lo) return [];
    const out: Block[] = [];
    const diskHi = Math.min(hi, this.windowStart - 1);
    if (diskHi >= lo) {
      const rows = await this.db.range({ gte: blockKey(lo), lt: blockKey(diskHi + 1) });
      for (const [, v] of rows) out.push(decodeBlock(v));
    }
    for (let h = Math.max(lo, diskHi + 1); h <= hi; h++) {
      const b = this.window.get(h) ?? (await this.getBlock(h));
      if (b) out.push(b);
    }
    return out;
  }

  /** Location of the first transaction that touched address (its first history entry), or null. */
  async firstAddressTx(address: string): Promise<TxLocation | null> {
    const prefix = addrTxPrefix(address);
    const [row] = await this.db.range({ gte: prefix, lt: prefixEnd(prefix), limit: 1 });
    return row ? (postingLocations(row[0], row[1])[0] ?? null) : null;
  }

  /**
   * Blocks at the given heights (null where there is none): the window from memory, the rest in one
   * synchronous multi-get instead of an awaited read each. Consumers: list queries (address history, explorer).
   */
  getBlocks(heights: readonly number[]): (Block | null)[] {
    return this.manyAt(heights, this.window, blockKey, decodeBlock, null);
  }

  /** Receipts of the blocks at the given heights (null where there is no block), like getBlocks. */
  receiptsOf(heights: readonly number[]): (readonly ReceiptRecord[] | null)[] {
    const out = this.manyAt(heights, this.windowReceipts, receiptsKey, decodeReceipts, []);
    heights.forEach((h, i) => {
      const rs = out[i];
      if (rs) this.keepWindowReceipts(h, rs);
    });
    return out;
  }

  /**
   * Keep receipts read from disk for a block of the window (after a restart the window holds blocks but not
   * their receipts): a page showing a block of 1,000 transactions then decodes its receipts once, not per view.
   * Called from synchronous reads only, so no rollback can come between the read and this.
   */
  private keepWindowReceipts(height: number, receipts: readonly ReceiptRecord[]): void {
    if (height >= this.windowStart && height <= this.headHeight && this.window.has(height))
      this.windowReceipts.set(height, receipts);
  }

  /** Records by height: `memory` first, the rest of the chain's heights in one multi-get (`absent` when unstored). */
  private manyAt<T, A>(
    heights: readonly number[],
    memory: ReadonlyMap<number, T>,
    keyOf: (h: number) => Buffer,
    decode: (v: Buffer) => T,
    absent: A,
  ): (T | A | null)[] {
    const out: (T | A | null)[] = heights.map((h) => memory.get(h) ?? null);
    const missing = heights.flatMap((h, i) =>
      out[i] === null && Number.isSafeInteger(h) && h >= 0 && h <= this.headHeight ? [i] : [],
    );
    if (missing.length > 0) {
      const raw = this.db.getManySync(missing.map((i) => keyOf(heights[i])));
      missing.forEach((i, k) => {
        const v = raw[k];
        out[i] = v ? decode(v) : absent;
      });
    }
    return out;
  }

  /**
   * The transaction that created the contract at address (a transaction without recipient; contracts made
   * by other contracts are not indexed), or null. Consumer: the verification service (creation code and
   * constructor arguments). Blocks written before the index existed are searched through the zero address's
   * history (where creations are listed), oldest first.
   */
  async contractCreation(address: string): Promise<TxLocation | null> {
    const raw = await this.db.get(creationKey(address));
    if (raw) return { height: Number(raw.readBigUInt64BE(0)), index: raw.readUInt32BE(8) };
    if (this.creationIndexFrom === 0) return null;
    const target = address.toLowerCase().replace(/^0x/, '');
    const prefix = addrTxPrefix(ZERO_ADDRESS);
    const end = Buffer.concat([prefix, u64be(this.creationIndexFrom)]);
    let gte = prefix;
    for (;;) {
      const rows = await this.db.range({ gte, lt: end, limit: READ_CHUNK });
      for (const [k, v] of rows) {
        for (const loc of postingLocations(k, v)) {
          const r = (await this.receipts(loc.height))?.[loc.index];
          if (r?.contractAddress && toHex(r.contractAddress) === target) return loc;
        }
      }
      if (rows.length < READ_CHUNK) return null;
      gte = Buffer.concat([rows[rows.length - 1][0], Buffer.from([0])]);
    }
  }

  /** Recent blocks held in memory, newest first. */
  *recentBlocks(): IterableIterator<Block> {
    for (let h = this.headHeight; h >= this.windowStart; h--) {
      const b = this.window.get(h);
      if (b) yield b;
    }
  }
}

function txLocationValue(height: number, index: number): Buffer {
  const b = Buffer.allocUnsafe(12);
  b.writeUInt32BE(Math.floor(height / 0x1_0000_0000), 0);
  b.writeUInt32BE(height >>> 0, 4);
  b.writeUInt32BE(index, 8);
  return b;
}

const viewOf = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

function addPosting(postings: Map<string, number[]>, addr: string, index: number): void {
  const list = postings.get(addr);
  if (list) list.push(index);
  else postings.set(addr, [index]);
}

/** A posting's value: the transaction indexes as u32 BE, ascending. */
function postingValue(indexes: readonly number[]): Buffer {
  const b = Buffer.allocUnsafe(indexes.length * 4);
  for (let j = 0; j < indexes.length; j++) b.writeUInt32BE(indexes[j], j * 4);
  return b;
}

/** Locations of a posting ('A' + addr20 + height u64 -> u32 BE indexes), ascending. */
function postingLocations(k: Buffer, v: Buffer): TxLocation[] {
  const height = k.readUInt32BE(21) * 0x1_0000_0000 + k.readUInt32BE(25);
  const out: TxLocation[] = [];
  for (let o = 0; o + 4 <= v.length; o += 4) out.push({ height, index: v.readUInt32BE(o) });
  return out;
}

/**
 * Addresses whose history lists the transaction (sender and recipient, once each), lower case: one
 * posting per address and block, whatever case a submission spelled it in.
 */
export function txAddresses(tx: SignedTransaction): string[] {
  const from = tx.from_address.toLowerCase();
  const to = tx.to_address.toLowerCase();
  return from === to ? [from] : [from, to];
}

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
