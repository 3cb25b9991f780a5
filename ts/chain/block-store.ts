import { type ReceiptRecord, decodeReceipts, encodeReceipts } from '../execution/index.js';
import { type StateChanges, type StateUndo, keyBytes } from '../state/index.js';
import {
  type KvBatch,
  type KvOp,
  type KvStore,
  addOps,
  blockHashKey,
  blockKey,
  metaKey,
  receiptsKey,
  stateKey,
  txKey,
} from '../storage/index.js';
import { normHash, toHex, u64be } from '../util/index.js';
import { AddressIndex } from './address-index.js';
import { streamStoredBlocks } from './block-ranges.js';
import { type Block, decodeBlock, decodeBlockRefs, encodeBlock } from './block.js';
import {
  type BlockIndexContributor,
  type LogSource,
  type RemovedBlock,
  type TxLocation,
  readTxLocation,
  txLocationValue,
} from './block-index.js';
import { ContractCreations } from './contract-creations.js';
import { DailyAggregates, type DayRecord } from './daily-aggregates.js';
import { EventIndex, type IndexedEvent } from './event-index.js';
import { LogIndex } from './log-index.js';
import { readEarliestBlock } from './snapshot-head.js';
import { type HistoryRetention, StateHistory } from './state-history.js';

export type { LogSource, TxLocation } from './block-index.js';
export { type DayRecord, dayOf } from './daily-aggregates.js';

const HEAD = metaKey('head');
/** Heights per synchronous multi-get when receipts are read for many heights. */
const READ_CHUNK = 256;

/**
 * Blocks and their indexes on disk, plus a window of recent blocks in memory.
 * Every block is written with its state changes, indexes and state change set in ONE RocksDB batch,
 * and the head pointer moves in that same batch, so a crash leaves either all of it or none. (The state
 * history's per-key index is built from the change set afterwards, in batches of its own: state-history.ts.)
 * This file keeps the consensus-critical core (blocks, hash and transaction indexes, receipts, state values,
 * change sets, head, window); the read-model indexes are contributors to the same batch (block-index.ts).
 */
export class BlockStore {
  private readonly window = new Map<number, Block>();
  private readonly windowReceipts = new Map<number, readonly ReceiptRecord[]>();
  private headHeight = -1;
  /** The lowest height with a block besides genesis: above 0 on a node that joined by state sync (snapshot-head.ts). */
  private earliestHeight = 0;
  /** EVM log postings (written in each block's batch) and the window's blooms. */
  readonly logIndex: LogIndex;
  /** Change sets (written in each block's batch) and the history index built from them: reads of the state at a past height. */
  readonly history: StateHistory;
  /** Native operation events by index term (written in each block's batch). */
  readonly eventIndex: EventIndex;
  /** Address history postings and per-address transaction counts. */
  private readonly addresses: AddressIndex;
  private readonly days: DailyAggregates;
  private readonly creations: ContractCreations;
  /** The read-model indexes written in each block's batch, in the order they stage (the days need the addresses). */
  private readonly contributors: readonly BlockIndexContributor[];

  constructor(
    readonly db: KvStore,
    readonly windowSize: number,
    retention: HistoryRetention = { kind: 'full' },
  ) {
    this.logIndex = new LogIndex(db, windowSize);
    this.history = new StateHistory(db, retention);
    this.eventIndex = new EventIndex(db);
    this.addresses = new AddressIndex(db);
    this.days = new DailyAggregates(db, this.addresses);
    this.creations = new ContractCreations(db, (h) => this.receipts(h));
    this.contributors = [this.creations, this.logIndex, this.addresses, this.days, this.eventIndex];
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
    this.earliestHeight = await readEarliestBlock(this.db);
    this.history.joinedAt = this.earliestHeight;
    for (const c of this.contributors) await c.open?.(this.headHeight);
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
   * computed from (the window, the head height, the contributors' caches); `write` writes
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
   * height, the contributors' caches) and `durable` hands its change set to the history indexer, which
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
    block.transactions.forEach((tx, i) => batch.put(txKey(tx.txid), txLocationValue(block.index, i)));
    const staged = this.contributors.map((c) => c.stage(batch, block, receipts));
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
        for (const done of staged) done?.();
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
    const removed: RemovedBlock[] = [];
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
      for (const tx of block.transactions) ops.push({ type: 'del', key: txKey(tx.txid) });
      removed.push({ block, receipts: (await this.receipts(h)) ?? [] });
    }
    for (const [k, v] of restore) {
      const key = stateKey(keyBytes(k));
      ops.push(v === null ? { type: 'del', key } : { type: 'put', key, value: v });
    }
    const head = (await this.getBlock(height)) as Block;
    const applied: (() => void)[] = [];
    for (const c of this.contributors) {
      const dropped = await c.drop(removed, head);
      for (const op of dropped.ops) ops.push(op);
      if (dropped.applied) applied.push(dropped.applied);
    }
    ops.push(...this.history.rollbackOps(height), { type: 'put', key: HEAD, value: u64be(height) });
    beforeWrite?.(restore.keys());
    await this.db.write(ops);
    for (const done of applied) done();
    const oldStart = this.windowStart;
    for (const h of [...this.window.keys()]) if (h > height) this.window.delete(h);
    for (const h of [...this.windowReceipts.keys()]) if (h > height) this.windowReceipts.delete(h);
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
  indexedEvents(term: string, offset: number, limit: number): Promise<IndexedEvent[]> {
    return this.eventIndex.listWithTx(term, offset, limit, (heights) => this.logSources(heights));
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

  get earliest(): number {
    return this.earliestHeight;
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
   * within maxBytes (the first block always): what a peer's range request is answered with (block-ranges.ts).
   */
  async encodedBlocks(from: number, count: number, maxBytes: number): Promise<Uint8Array[]> {
    const out: Uint8Array[] = [];
    for await (const v of this.streamEncodedBlocks(from, count, maxBytes)) out.push(v);
    return out;
  }

  /** The same blocks as a stream, read a chunk at a time only as the consumer pulls them (block-ranges.ts). */
  streamEncodedBlocks(from: number, count: number, maxBytes: number): AsyncGenerator<Uint8Array> {
    return streamStoredBlocks(this.db, from, Math.min(this.headHeight + 1, from + count), maxBytes);
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
    return raw ? readTxLocation(raw) : null;
  }

  /** Aggregates of a UTC day (day = Unix seconds / 86400), from the record written with its blocks. */
  dayRecord(day: number): DayRecord {
    return this.days.dayRecord(day);
  }

  /** Transactions touching address (the address history's count). */
  txCount(address: string): number {
    return this.addresses.txCount(address);
  }

  /** Newest-first locations of the transactions touching address. */
  addressHistory(address: string, offset: number, limit: number): Promise<TxLocation[]> {
    return this.addresses.history(address, offset, limit);
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
  firstAddressTx(address: string): Promise<TxLocation | null> {
    return this.addresses.first(address);
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
   * constructor arguments). contract-creations.ts.
   */
  contractCreation(address: string): Promise<TxLocation | null> {
    return this.creations.find(address);
  }

  /** Recent blocks held in memory, newest first. */
  *recentBlocks(): IterableIterator<Block> {
    for (let h = this.headHeight; h >= this.windowStart; h--) {
      const b = this.window.get(h);
      if (b) yield b;
    }
  }
}

const viewOf = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);
