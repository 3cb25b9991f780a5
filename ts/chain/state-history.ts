/**
 * Historical state (docs/storage.md, "History"): per block a change set (the keys it changed with their
 * previous values) and per key a history index (the heights of the blocks that changed it, each entry holding
 * the value the key had before that block), as Erigon and reth keep them. Only the change set is written in
 * the block's atomic batch (one value); the index entries are built after the commit by a background step in
 * batches of their own, which also prunes, with a persisted "indexed up to" marker, and resume at start.
 * The value of a key after block h is the one recorded by the first block above h that changed it (from the
 * index up to the marker, from the not-yet-indexed change sets above it), or the current value when none did.
 */
import { type StateSnapshot, type KeyStr, type StateUndo, keyBytes } from '../state/index.js';
import {
  type KvBatch,
  type KvOp,
  type KvStore,
  P,
  changeSetKey,
  historyKey,
  historyPrefix,
  metaKey,
  pendingChangeSetKey,
  prefixEnd,
} from '../storage/index.js';
import { NodeError, u64be } from '../util/index.js';
import { BackgroundTask } from './background-task.js';
import { decodeChangeSet, decodeKeyList, decodePrev, encodeChangeSet, encodeKeyList, encodePrev } from './change-set.js';

/** Oldest height whose state can be read (meta key; absent = 0, a store that kept history from genesis). */
export const HISTORY_FROM = metaKey('historyFrom');
/**
 * Heights up to this one are in the history index (or pruned); the change sets above it wait in the `Z`
 * table for the indexer. Absent on a store written before the indexer existed, whose commits indexed every block.
 */
export const INDEXED_TO = metaKey('historyIndexedTo');
/** Change sets pruned per indexer step at most, so a lowered retention catches up without one huge batch. */
const PRUNE_PER_STEP = 8;
/** Index entries per indexer batch (a block's change set is never split: its entries and the marker go together). */
const INDEX_OPS_PER_STEP = 10_000;
/** First byte of contract storage keys and their length (NS.storage || address20 || slot32). */
const NS_STORAGE = 0x03;
const STORAGE_KEY_LENGTH = 53;

/** How much history a node keeps: every block, or the change sets of the last N blocks. */
export type HistoryRetention = { kind: 'full' } | { kind: 'recent'; blocks: number };

/** `--history full|N`. */
export function parseHistoryRetention(raw: string): HistoryRetention | null {
  if (raw === 'full') return { kind: 'full' };
  if (/^\d{1,12}$/.test(raw) && Number(raw) >= 1) return { kind: 'recent', blocks: Number(raw) };
  return null;
}

/** A read older than the history the node keeps. */
export class HistoryUnavailableError extends NodeError {
  readonly code = 'HISTORY_UNAVAILABLE';
  constructor(
    readonly height: number,
    readonly oldest: number,
    /** The node joined by state sync at `oldest`: it never had anything older (chain/snapshot-head.ts). */
    joinedThere = false,
  ) {
    super(
      joinedThere
        ? `historical state is not available: this node starts at height ${oldest}`
        : `historical state is not available for block ${height}: the oldest available block is ${oldest}`,
      'FAILED_PRECONDITION',
    );
  }
}

/** A view read after a rollback removed the blocks it stood on (REST answers it 409 Conflict: api/error-status.ts). */
export class StaleStateViewError extends NodeError {
  readonly code = 'STALE_STATE_VIEW';
  constructor(message: string) {
    super(message, 'INVALID_ARGUMENT');
  }
}

/**
 * The history index entries of block `height` (`changeSet`: every key it changed and the value before it),
 * and its change set turned into the key list an indexed block keeps: what the indexer writes for a block.
 */
export function addIndexOps(batch: KvBatch, height: number, changeSet: StateUndo): void {
  for (const [k, prev] of changeSet) batch.put(historyKey(keyBytes(k), height), encodePrev(prev));
  batch.put(changeSetKey(height), encodeKeyList(changeSet));
  batch.del(pendingChangeSetKey(height));
}

/**
 * Writes change sets with the block batches, builds the history index from them in the background, reads
 * values at past heights, prunes and rolls back.
 */
export class StateHistory {
  private from = 0;
  /** Heights up to this one are indexed; above it their change sets are in `pending` (and the `Z` table). */
  private indexedTo = 0;
  /** The last committed height the history was told of. */
  private head = -1;
  /** Change sets of committed blocks above `indexedTo` (blocks that changed nothing have none), by height. */
  private readonly pending = new Map<number, StateUndo>();
  /** Open views per height: pruning never removes the change sets they read. */
  private readonly pins = new Map<number, number>();
  /** Bumped by a rollback: views opened before it stop answering. */
  private epoch = 0;
  /** Builds the index and prunes, after the commits, in batches of its own. */
  readonly indexer = new BackgroundTask(() => this.indexStep());

  constructor(
    private readonly db: KvStore,
    readonly retention: HistoryRetention = { kind: 'full' },
  ) {}

  /** The snapshot height a node that joined by state sync starts at (0: it has the chain from genesis). */
  joinedAt = 0;

  /** Oldest height whose state reads are answered. */
  get oldest(): number {
    return this.from;
  }

  /** Heights up to this one are in the history index; the indexer is behind by `head - indexed` blocks. */
  get indexed(): number {
    return this.indexedTo;
  }

  /**
   * Called once the head is known. A store written before history existed starts its history at its head
   * (older states were never recorded); the change sets not yet indexed (a crash or stop before the indexer
   * took them) are read back and the indexer resumes.
   */
  async open(headHeight: number): Promise<void> {
    const init: KvOp[] = [];
    const from = await this.db.get(HISTORY_FROM);
    if (from) this.from = Number(from.readBigUInt64BE(0));
    else {
      this.from = Math.max(0, headHeight);
      init.push({ type: 'put', key: HISTORY_FROM, value: u64be(this.from) });
    }
    const indexed = await this.db.get(INDEXED_TO);
    if (indexed) this.indexedTo = Number(indexed.readBigUInt64BE(0));
    else {
      // Before the marker existed every commit wrote its block's index entries.
      this.indexedTo = Math.max(0, headHeight);
      init.push({ type: 'put', key: INDEXED_TO, value: u64be(this.indexedTo) });
    }
    if (init.length > 0) await this.db.write(init);
    this.head = headHeight;
    this.pending.clear();
    const rows = await this.db.range({
      gte: pendingChangeSetKey(this.indexedTo + 1),
      lt: prefixEnd(Buffer.from([P.pendingChangeSet])),
    });
    for (const [k, v] of rows) this.pending.set(Number(k.readBigUInt64BE(1)), decodeChangeSet(v));
    this.indexer.schedule();
  }

  /**
   * The change set of block `height` for the block's own batch (`undo`: the previous value of each key it
   * changed): one value; the index entries come later (indexStep).
   */
  commitOps(height: number, undo: StateUndo): KvOp[] {
    if (undo.size === 0) return [];
    return [{ type: 'put', key: pendingChangeSetKey(height), value: encodeChangeSet(undo) }];
  }

  /** Block `height` is committed with the change set `undo` (once its batch is written): index it soon. */
  committed(height: number, undo: StateUndo): void {
    if (height > 0 && undo.size > 0) this.pending.set(height, undo);
    this.head = height;
    this.indexer.schedule();
  }

  /** Index and prune until caught up with the head (tests, benches, shutdown). */
  flush(): Promise<void> {
    return this.indexer.flush();
  }

  /** Stop the indexer (the store is closing); what it had not indexed is indexed after the next open. */
  close(): Promise<void> {
    return this.indexer.stop();
  }

  /**
   * One indexer step: the index entries of the blocks above the marker (whole blocks, about
   * INDEX_OPS_PER_STEP entries), the marker moved up, and the pruning the retention asks for, in one batch.
   * Resolves true when more is left.
   */
  private async indexStep(): Promise<boolean> {
    const prune = this.pruneTarget();
    if (this.indexedTo >= this.head && prune <= this.from) return false;
    const batch = this.db.batch();
    let to = this.indexedTo;
    while (to < this.head && batch.size < INDEX_OPS_PER_STEP) {
      to++;
      const changeSet = this.pending.get(to);
      if (changeSet) addIndexOps(batch, to, changeSet);
    }
    if (to > this.indexedTo) batch.put(INDEXED_TO, u64be(to));
    if (prune > this.from) {
      // Reading the state at `from` needs the change sets of blocks from + 1 and up: those up to prune go.
      for (let h = this.from + 1; h <= prune; h++) {
        for (const key of this.changedKeys(h)) batch.del(historyKey(key, h));
        batch.del(changeSetKey(h));
      }
      batch.put(HISTORY_FROM, u64be(prune));
      // At once: no view opens on a height whose change sets this batch deletes.
      this.from = prune;
    }
    await batch.write();
    for (let h = this.indexedTo + 1; h <= to; h++) this.pending.delete(h);
    this.indexedTo = Math.max(this.indexedTo, to);
    return this.indexedTo < this.head || this.pruneTarget() > this.from;
  }

  /**
   * How far the retention lets the next step prune: at most PRUNE_PER_STEP blocks, only indexed ones (the
   * index entries are deleted by key list), never one an open view reads.
   */
  private pruneTarget(): number {
    if (this.retention.kind === 'full') return this.from;
    let target = Math.min(this.head - this.retention.blocks, this.from + PRUNE_PER_STEP, this.indexedTo);
    for (const h of this.pins.keys()) target = Math.min(target, h);
    return Math.max(target, this.from);
  }

  /** The state keys indexed block `height` changed (none when its change set was pruned or it changed nothing). */
  private changedKeys(height: number): Buffer[] {
    const [raw] = this.db.getManySync([changeSetKey(height)]);
    return raw ? decodeKeyList(raw) : [];
  }

  /** Block `height`'s change set: every key it changed and the value before it (undefined = absent). */
  changeSet(height: number): StateUndo {
    const pending = this.pending.get(height);
    if (pending) return pending;
    const out: StateUndo = new Map();
    if (height > this.indexedTo) return out;
    const keys = this.changedKeys(height);
    const values = keys.length > 0 ? this.db.getManySync(keys.map((k) => historyKey(k, height))) : [];
    keys.forEach((k, i) => {
      const raw = values[i];
      if (!raw) throw new Error(`change set of block ${height} names a key its history index lacks`);
      out.set(k.toString('latin1'), decodePrev(raw));
    });
    return out;
  }

  /**
   * Stop the indexer for a rollback (waiting for a batch it is writing); the returned function resumes it.
   * While paused, the marker and the pending change sets stay as they are.
   */
  pauseIndexing(): Promise<() => void> {
    return this.indexer.pause();
  }

  /** Ops deleting block `height`'s change set and index entries (rollback, indexer paused), given its change set. */
  dropOps(height: number, changeSet: StateUndo): KvOp[] {
    if (height > this.indexedTo) return [{ type: 'del', key: pendingChangeSetKey(height) }];
    const ops: KvOp[] = [{ type: 'del', key: changeSetKey(height) }];
    for (const k of changeSet.keys()) ops.push({ type: 'del', key: historyKey(keyBytes(k), height) });
    return ops;
  }

  /** The marker's op for a rollback to `head` (the index entries above it are dropped in the same batch). */
  rollbackOps(head: number): KvOp[] {
    return head < this.indexedTo ? [{ type: 'put', key: INDEXED_TO, value: u64be(head) }] : [];
  }

  /** After a rollback: the views opened before it stop answering; history now starts no later than `head`. */
  rolledBack(head: number): void {
    this.epoch++;
    if (this.from > head) this.from = head;
    this.indexedTo = Math.min(this.indexedTo, head);
    for (const h of [...this.pending.keys()]) if (h > head) this.pending.delete(h);
    this.head = head;
  }

  /**
   * The value of `key` after block `height`, read while the committed head is `head` and `current` holds the
   * state at that head: the change set of the first block in (height, head] that changed the key, else current.
   * Blocks up to the marker are found by one seek in the index, the few above it in their pending change sets.
   */
  valueAt(key: KeyStr, height: number, head: number, current: { get(key: KeyStr): Buffer | undefined }): Buffer | undefined {
    if (height >= head) return current.get(key);
    const indexed = Math.min(this.indexedTo, head);
    if (height < indexed) {
      const kb = keyBytes(key);
      // The first block above `height` that changed the key recorded the value it had before: after `height`.
      const [row] = this.db.rangeSync({ gte: historyKey(kb, height + 1), lt: historyKey(kb, indexed + 1), limit: 1 });
      if (row) return decodePrev(row[1]);
    }
    for (let h = Math.max(height, indexed) + 1; h <= head; h++) {
      const changeSet = this.pending.get(h);
      if (changeSet?.has(key)) return changeSet.get(key);
    }
    return current.get(key);
  }

  /** Storage keys of a contract that held a value after block `height` (owner: 20 address bytes in latin1). */
  storageKeysAt(owner: string, height: number, head: number, current: StateSnapshot): Set<KeyStr> {
    const candidates = new Set(current.storageKeysOf(owner));
    const ownerPrefix = String.fromCharCode(NS_STORAGE) + owner;
    const prefix = historyPrefix(Buffer.from(ownerPrefix, 'latin1'));
    // Every slot of the contract any block changed: the index entries sit under the 22-byte prefix, key by key.
    prefix[1] = STORAGE_KEY_LENGTH;
    for (const [k] of this.db.rangeSync({ gte: prefix, lt: prefixEnd(prefix) })) {
      const changedAt = Number(k.readBigUInt64BE(k.length - 8));
      if (changedAt > height && changedAt <= head) candidates.add(k.subarray(2, 2 + STORAGE_KEY_LENGTH).toString('latin1'));
    }
    for (const [h, changeSet] of this.pending) {
      if (h <= height || h > head) continue;
      for (const k of changeSet.keys()) if (k.length === STORAGE_KEY_LENGTH && k.startsWith(ownerPrefix)) candidates.add(k);
    }
    const out = new Set<KeyStr>();
    for (const k of candidates) if (this.valueAt(k, height, head, current) !== undefined) out.add(k);
    return out;
  }

  /**
   * A read-only view of the state after block `height` over `current`, a snapshot of the state at the
   * committed head `head` (the caller made sure no block was in flight). Release it when done.
   */
  view(height: number, head: number, current: StateSnapshot): HistoricalStateView {
    if (height < this.from) {
      current.release();
      throw new HistoryUnavailableError(height, this.from, this.from === this.joinedAt);
    }
    this.pins.set(height, (this.pins.get(height) ?? 0) + 1);
    return new HistoricalStateView(this, height, head, current, this.epoch);
  }

  /** @internal */
  checkEpoch(epoch: number): void {
    if (epoch !== this.epoch) throw new StaleStateViewError('the chain was rolled back below this state view');
  }

  /** @internal */
  unpin(height: number): void {
    const n = this.pins.get(height) ?? 0;
    if (n > 1) this.pins.set(height, n - 1);
    else this.pins.delete(height);
  }
}

/**
 * The state after block `height`, read-only, unchanged by blocks committed while it is open (their
 * change sets are above the head it was opened at, and its snapshot keeps the head state as it was).
 * Reads are synchronous (RocksDB on the calling thread), like the live state's.
 */
export class HistoricalStateView {
  private released = false;

  constructor(
    private readonly history: StateHistory,
    readonly height: number,
    private readonly head: number,
    private readonly current: StateSnapshot,
    private readonly epoch: number,
  ) {}

  get(key: KeyStr): Buffer | undefined {
    this.check();
    return this.history.valueAt(key, this.height, this.head, this.current);
  }

  storageKeysOf(addressLatin1: string): ReadonlySet<KeyStr> {
    this.check();
    return this.history.storageKeysAt(addressLatin1, this.height, this.head, this.current);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.current.release();
    this.history.unpin(this.height);
  }

  private check(): void {
    if (this.released) throw new StaleStateViewError('state view read after release');
    this.history.checkEpoch(this.epoch);
  }
}
