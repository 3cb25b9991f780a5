/**
 * Historical state (docs/storage.md, "History"): per key a history index (the heights of the blocks that
 * changed it, each entry holding the value the key had before that block) and per block a change set (the
 * keys it changed, one value), both written in the block's atomic batch, as Erigon and reth keep them. The
 * value of a key after block h is the one recorded in its first index entry above h, or the current value
 * when no later block changed it.
 */
import type { StateSnapshot } from '../state/snapshots.js';
import { type KeyStr, type StateUndo, keyBytes } from '../state/state-store.js';
import { type KvOp, type KvStore, changeSetKey, historyKey, historyPrefix, metaKey, prefixEnd } from '../storage/index.js';
import { NodeError } from '../util/errors.js';
import { u64be } from '../util/hex.js';

/** Oldest height whose state can be read (meta key; absent = 0, a store that kept history from genesis). */
const HISTORY_FROM = metaKey('historyFrom');
/** Change sets pruned per commit at most, so a lowered retention catches up without one huge batch. */
const PRUNE_PER_COMMIT = 8;
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

/** A read older than the history the node keeps (JSON-RPC -32000, REST 400). */
export class HistoryUnavailableError extends NodeError {
  readonly code = 'HISTORY_UNAVAILABLE';
  constructor(
    readonly height: number,
    readonly oldest: number,
  ) {
    super(`historical state is not available for block ${height}: the oldest available block is ${oldest}`, 400, -32000);
  }
}

/** A view read after a rollback removed the blocks it stood on. */
export class StaleStateViewError extends NodeError {
  readonly code = 'STALE_STATE_VIEW';
  constructor(message: string) {
    super(message, 409, -32000);
  }
}

const ABSENT = Buffer.from([0]);
function encodePrev(v: Buffer | undefined): Buffer {
  if (v === undefined) return ABSENT;
  const b = Buffer.allocUnsafe(1 + v.length);
  b[0] = 1;
  v.copy(b, 1);
  return b;
}
const decodePrev = (raw: Buffer): Buffer | undefined => (raw[0] === 0 ? undefined : raw.subarray(1));

/** A change set's value: the keys a block changed, each as length u8 · key bytes. */
function encodeKeyList(undo: StateUndo): Buffer {
  let n = 0;
  for (const k of undo.keys()) n += 1 + k.length;
  const b = Buffer.allocUnsafe(n);
  let o = 0;
  for (const k of undo.keys()) {
    if (k.length > 255) throw new Error(`state key of ${k.length} bytes cannot be recorded in history`);
    b[o] = k.length;
    o += 1 + b.write(k, o + 1, 'latin1');
  }
  return b;
}

function decodeKeyList(raw: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let o = 0; o < raw.length; o += 1 + raw[o]) out.push(raw.subarray(o + 1, o + 1 + raw[o]));
  return out;
}

/** Reads the change sets and history index, writes them in block batches, prunes and rolls back. */
export class StateHistory {
  private from = 0;
  /** Open views per height: pruning never removes the change sets they read. */
  private readonly pins = new Map<number, number>();
  /** Bumped by a rollback: views opened before it stop answering. */
  private epoch = 0;

  constructor(
    private readonly db: KvStore,
    readonly retention: HistoryRetention = { kind: 'full' },
  ) {}

  /** Oldest height whose state reads are answered. */
  get oldest(): number {
    return this.from;
  }

  /**
   * Called once the head is known. A store written before history existed starts its history at its head
   * (older states were never recorded).
   */
  async open(headHeight: number): Promise<void> {
    const raw = await this.db.get(HISTORY_FROM);
    if (raw) this.from = Number(raw.readBigUInt64BE(0));
    else {
      this.from = Math.max(0, headHeight);
      await this.db.write([{ type: 'put', key: HISTORY_FROM, value: u64be(this.from) }]);
    }
  }

  /**
   * The change set and index entries of block `height` (`undo`: the previous value of each key it changed):
   * an index entry per key holding its previous value, and one change-set value listing the keys.
   */
  commitOps(height: number, undo: StateUndo): KvOp[] {
    if (undo.size === 0) return [];
    const ops: KvOp[] = [{ type: 'put', key: changeSetKey(height), value: encodeKeyList(undo) }];
    for (const [k, prev] of undo) ops.push({ type: 'put', key: historyKey(keyBytes(k), height), value: encodePrev(prev) });
    return ops;
  }

  /**
   * Ops that prune the change sets the retention no longer keeps, given the head after this commit
   * (at most PRUNE_PER_COMMIT blocks; never one an open view reads). Applied with the commit's batch;
   * `pruned(to)` is called once it is written.
   */
  pruneOps(newHead: number): { ops: KvOp[]; to: number } {
    if (this.retention.kind === 'full') return { ops: [], to: this.from };
    let target = Math.min(newHead - this.retention.blocks, this.from + PRUNE_PER_COMMIT);
    for (const h of this.pins.keys()) target = Math.min(target, h);
    const ops: KvOp[] = [];
    // Reading the state at `from` needs the change sets of blocks from + 1 and up: prune those up to target.
    for (let h = this.from + 1; h <= target; h++) {
      for (const key of this.changedKeys(h)) ops.push({ type: 'del', key: historyKey(key, h) });
      ops.push({ type: 'del', key: changeSetKey(h) });
    }
    if (target <= this.from) return { ops: [], to: this.from };
    ops.push({ type: 'put', key: HISTORY_FROM, value: u64be(target) });
    return { ops, to: target };
  }

  pruned(to: number): void {
    this.from = Math.max(this.from, to);
  }

  /** The state keys block `height` changed (none when its change set was pruned or it changed nothing). */
  private changedKeys(height: number): Buffer[] {
    const [raw] = this.db.getManySync([changeSetKey(height)]);
    return raw ? decodeKeyList(raw) : [];
  }

  /** Block `height`'s change set: every key it changed and the value before it (undefined = absent). */
  changeSet(height: number): StateUndo {
    const keys = this.changedKeys(height);
    const values = keys.length > 0 ? this.db.getManySync(keys.map((k) => historyKey(k, height))) : [];
    const out: StateUndo = new Map();
    keys.forEach((k, i) => {
      const raw = values[i];
      if (!raw) throw new Error(`change set of block ${height} names a key its history index lacks`);
      out.set(k.toString('latin1'), decodePrev(raw));
    });
    return out;
  }

  /** Ops deleting block `height`'s change set and index entries (rollback), given its change set. */
  dropOps(height: number, changeSet: StateUndo): KvOp[] {
    const ops: KvOp[] = [{ type: 'del', key: changeSetKey(height) }];
    for (const k of changeSet.keys()) ops.push({ type: 'del', key: historyKey(keyBytes(k), height) });
    return ops;
  }

  /** After a rollback: the views opened before it stop answering; history now starts no later than `head`. */
  rolledBack(head: number): void {
    this.epoch++;
    if (this.from > head) this.from = head;
  }

  /**
   * The value of `key` after block `height`, read while the committed head is `head` and `current` holds the
   * state at that head: the change set of the first block in (height, head] that changed the key, else current.
   */
  valueAt(key: KeyStr, height: number, head: number, current: { get(key: KeyStr): Buffer | undefined }): Buffer | undefined {
    if (height >= head) return current.get(key);
    const kb = keyBytes(key);
    // The first block above `height` that changed the key recorded the value it had before: after `height`.
    const [row] = this.db.rangeSync({ gte: historyKey(kb, height + 1), lt: historyKey(kb, head + 1), limit: 1 });
    return row ? decodePrev(row[1]) : current.get(key);
  }

  /** Storage keys of a contract that held a value after block `height` (owner: 20 address bytes in latin1). */
  storageKeysAt(owner: string, height: number, head: number, current: StateSnapshot): Set<KeyStr> {
    const candidates = new Set(current.storageKeysOf(owner));
    const prefix = historyPrefix(Buffer.from(String.fromCharCode(NS_STORAGE) + owner, 'latin1'));
    // Every slot of the contract any block changed: the index entries sit under the 22-byte prefix, key by key.
    prefix[1] = STORAGE_KEY_LENGTH;
    for (const [k] of this.db.rangeSync({ gte: prefix, lt: prefixEnd(prefix) })) {
      const changedAt = Number(k.readBigUInt64BE(k.length - 8));
      if (changedAt > height && changedAt <= head) candidates.add(k.subarray(2, 2 + STORAGE_KEY_LENGTH).toString('latin1'));
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
      throw new HistoryUnavailableError(height, this.from);
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
