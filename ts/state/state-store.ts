import { type KvStore, P, prefixEnd } from '../storage/index.js';
import { createTrie } from './native-trie.js';
import { SnapshotLog, type StateSnapshot } from './snapshots.js';
import type { AuthenticatedTrie, StateProof } from './trie.js';
import { ValueCache } from './value-cache.js';
import type { KeyStr, StateChanges, StateReader, StateUndo } from './interface.js';

export type { KeyStr, StateChanges, StateReader, StateUndo } from './interface.js';

/** First byte of contract storage keys (mirrors NS.storage in accounts.ts, which imports this module). */
const NS_STORAGE = 0x03;
const STORAGE_KEY_LENGTH = 53;
/** Rows per synchronous range read of a scan (~0.5 MB of accounts): one tick each, nothing large held. */
const SCAN_CHUNK = 4096;
/** Entries per native trie update and per write batch when the state is streamed (start-up, genesis). */
export const STREAM_CHUNK = 16_384;
/** Default bound of the value cache (`--state-cache-mb`). */
export const DEFAULT_STATE_CACHE_MB = 256;
const NUL = Buffer.from([0]);

export const keyStr = (k: Uint8Array): KeyStr => Buffer.from(k.buffer, k.byteOffset, k.byteLength).toString('latin1');
export const keyBytes = (k: KeyStr): Buffer => Buffer.from(k, 'latin1');

/** The `S` table key of a state key (storage/keys.ts stateKey, from the string form). */
function diskKey(k: KeyStr): Buffer {
  const b = Buffer.allocUnsafe(1 + k.length);
  b[0] = P.state;
  b.write(k, 1, 'latin1');
  return b;
}

export interface StateStoreOptions {
  /**
   * The database whose `S` table holds the committed values (every block's batch writes them). Without
   * one the store is memory-only: every value stays in its layer (tests, replays, benches).
   */
  db?: KvStore;
  /** Bytes of committed values kept in memory (default DEFAULT_STATE_CACHE_MB). */
  cacheBytes?: number;
}

/**
 * The state behind an authenticated trie (docs/storage.md, "State on disk"). Values are read from three
 * places, first hit wins:
 * - `unwritten`: what was applied but is not yet durable in `S` (a sealed block before its batch is
 *   written, dev-chain writes waiting for the next block), exact, null for a deletion. The chain calls
 *   markDurable() once a block's batch is written, which moves its values into the cache.
 * - `cache`: committed values (and absences) recently read, bounded by bytes (value-cache.ts).
 * - the `S` table, read synchronously (getManySync: ~5 µs from RocksDB's block cache). Block execution
 *   prefetches the keys its transactions name in one multi-get first.
 * The trie holds key and leaf hashes only (native) and is rebuilt at start by streaming `S`.
 */
export class StateStore implements StateReader {
  private trie: AuthenticatedTrie = createTrie();
  private readonly db: KvStore | null;
  private readonly unwritten = new Map<KeyStr, Buffer | null>();
  /** Storage-slot keys in `unwritten` per contract (address bytes as latin1): storageKeysOf merges them. */
  private readonly unwrittenSlots = new Map<string, Set<KeyStr>>();
  /** Committed values recently read (only with a database). */
  readonly cache: ValueCache;
  /**
   * Keys of an undo record whose previous value was the committed one (not in `unwritten`): reverting that
   * record (the latest applied: proposals are dropped last-in first-out) takes them out of `unwritten` again.
   */
  private readonly committedBefore = new WeakMap<StateUndo, KeyStr[]>();
  /** Undo records kept for open snapshots (calls running off the main thread). */
  private readonly snapshots = new SnapshotLog(this);

  constructor(opts: StateStoreOptions = {}) {
    this.db = opts.db ?? null;
    this.cache = new ValueCache(opts.cacheBytes ?? DEFAULT_STATE_CACHE_MB * 2 ** 20);
  }

  get(key: KeyStr): Buffer | undefined {
    const w = this.unwritten.get(key);
    if (w !== undefined) return w === null ? undefined : w;
    return this.db === null ? undefined : (this.committed(key) ?? undefined);
  }

  /** The committed value of key (null: absent): cache, else one synchronous read of `S`. */
  private committed(key: KeyStr): Buffer | null {
    const c = this.cache.get(key);
    if (c !== undefined) return c;
    const v = (this.db as KvStore).getManySync([diskKey(key)])[0] ?? null;
    this.cache.set(key, v);
    return v;
  }

  /**
   * Read the committed values of these keys that are neither unwritten nor cached, in one multi-get, into
   * the cache (block execution calls this with the accounts its transactions name). Returns the keys read.
   */
  prefetch(keys: Iterable<KeyStr>): number {
    if (this.db === null) return 0;
    const missing = new Set<KeyStr>();
    for (const k of keys) if (!this.unwritten.has(k) && !this.cache.has(k)) missing.add(k);
    if (missing.size === 0) return 0;
    const list = [...missing];
    const values = this.db.getManySync(list.map(diskKey));
    for (let i = 0; i < list.length; i++) this.cache.set(list[i], values[i] ?? null);
    return list.length;
  }

  /** Number of keys in the state. */
  get size(): number {
    return this.trie.size;
  }

  /** Entries held in memory: not yet durable, and cached (tests, metrics). */
  memoryStats(): { unwritten: number; cached: number; cacheBytes: number; hits: number; misses: number } {
    const c = this.cache;
    return { unwritten: this.unwritten.size, cached: c.size, cacheBytes: c.bytes, hits: c.hits, misses: c.misses };
  }

  /** Bulk load into a memory-only store; follow with root() to hash everything once. */
  load(key: Buffer, value: Buffer): void {
    const k = keyStr(key);
    this.setUnwritten(k, value);
    this.trie.set(k, value);
  }

  /**
   * Entries already durable in `S` (raw state key bytes), into the trie only: the start-up rebuild and
   * a large genesis stream through this, so no value stays in memory.
   */
  loadCommitted(keys: readonly Buffer[], values: readonly Buffer[]): void {
    if (this.trie.loadBatch) this.trie.loadBatch(keys, values);
    else for (let i = 0; i < keys.length; i++) this.trie.set(keyStr(keys[i]), values[i]);
  }

  /** Start-up: the trie rebuilt from the committed values, streamed from `S` in chunks. Returns the entries read. */
  async rebuildTrie(): Promise<number> {
    if (this.db === null) throw new Error('a memory-only state has nothing to rebuild from');
    let keys: Buffer[] = [];
    let values: Buffer[] = [];
    let n = 0;
    const table = Buffer.from([P.state]);
    await this.db.scan({ gte: table, lt: prefixEnd(table) }, (k, v) => {
      keys.push(k.subarray(1));
      values.push(v);
      if (keys.length >= STREAM_CHUNK) {
        this.loadCommitted(keys, values);
        n += keys.length;
        keys = [];
        values = [];
      }
    });
    this.loadCommitted(keys, values);
    return n + keys.length;
  }

  /** Start-up: use a trie loaded from a checkpoint (or, `null`, a new empty one) in place of the current one. */
  replaceTrie(trie: AuthenticatedTrie | null): void {
    if (this.unwritten.size > 0 && this.db !== null) throw new Error('the trie is replaced only before anything is applied');
    this.trie = trie ?? createTrie();
  }

  /** Start-up after a checkpoint: these keys' committed values (from `S`) into the trie, in chunks of one multi-get. */
  refreshTrie(keys: Iterable<KeyStr>): void {
    if (this.db === null) throw new Error('a memory-only state has nothing to refresh from');
    const list = [...keys];
    for (let i = 0; i < list.length; i += STREAM_CHUNK) {
      const chunk = list.slice(i, i + STREAM_CHUNK);
      const values = this.db.getManySync(chunk.map(diskKey));
      chunk.forEach((k, j) => {
        const v = values[j];
        if (v === undefined) this.trie.delete(k);
        else this.trie.set(k, v);
      });
    }
  }

  /**
   * Save the trie (shape and hashes) to `path` with `meta` when it can be (the native trie with checkpoints:
   * trie-checkpoint.ts); null when it cannot. The trie as it is when this is called is what the file holds.
   */
  saveTrieCheckpoint(path: string, meta: Buffer): Promise<void> | null {
    const trie = this.trie as AuthenticatedTrie & { saveCheckpoint?: (path: string, meta: Buffer) => Promise<void> };
    return typeof trie.saveCheckpoint === 'function' ? trie.saveCheckpoint(path, meta) : null;
  }

  /** Apply a block's changes and return the undo record (to drop an uncommitted proposal). */
  applyChanges(changes: StateChanges): StateUndo {
    // The previous values not at hand (the undo record needs them) in one multi-get.
    this.prefetch(changes.keys());
    const undo: StateUndo = new Map();
    const committedBefore: KeyStr[] = [];
    for (const [k, v] of changes) {
      const w = this.unwritten.get(k);
      if (w === undefined) {
        undo.set(k, this.db === null ? undefined : (this.committed(k) ?? undefined));
        committedBefore.push(k);
      } else undo.set(k, w ?? undefined);
      this.setUnwritten(k, v);
      if (v === null) this.trie.delete(k);
      else this.trie.set(k, v);
    }
    if (committedBefore.length > 0) this.committedBefore.set(undo, committedBefore);
    this.snapshots.record(undo);
    return undo;
  }

  /**
   * The batch that wrote these changes to `S` is durable: their values leave the unwritten layer for the
   * cache (a key changed again since keeps its newer unwritten value).
   */
  markDurable(changes: StateChanges): void {
    if (this.db === null) return;
    for (const [k, v] of changes) {
      const w = this.unwritten.get(k);
      if (w === undefined || !(w === v || (w !== null && v !== null && w.equals(v)))) continue;
      this.dropUnwritten(k);
      this.cache.set(k, v);
    }
  }

  private setUnwritten(k: KeyStr, v: Buffer | null): void {
    // Memory-only: nothing underneath, so a deletion is no entry at all.
    if (v === null && this.db === null) {
      this.dropUnwritten(k);
      return;
    }
    this.unwritten.set(k, v);
    if (k.length === STORAGE_KEY_LENGTH && k.charCodeAt(0) === NS_STORAGE) {
      const owner = k.slice(1, 21);
      let set = this.unwrittenSlots.get(owner);
      if (!set) this.unwrittenSlots.set(owner, (set = new Set()));
      set.add(k);
    }
  }

  private dropUnwritten(k: KeyStr): void {
    if (!this.unwritten.delete(k)) return;
    if (k.length !== STORAGE_KEY_LENGTH || k.charCodeAt(0) !== NS_STORAGE) return;
    const owner = k.slice(1, 21);
    const set = this.unwrittenSlots.get(owner);
    if (!set) return;
    set.delete(k);
    if (set.size === 0) this.unwrittenSlots.delete(owner);
  }

  /**
   * A read-only view of the current state that stays as it is while later blocks are applied
   * (snapshots.ts); release() it when done.
   */
  snapshot(): StateSnapshot {
    return this.snapshots.snapshot();
  }

  /** Open snapshots and the undo records kept for them (tests, diagnostics). */
  snapshotStats(): { open: number; retained: number } {
    return { open: this.snapshots.open, retained: this.snapshots.retained };
  }

  revert(undo: StateUndo): void {
    const back: StateChanges = new Map();
    for (const [k, v] of undo) back.set(k, v ?? null);
    this.applyChanges(back);
    // Keys whose value before was the committed one read it from the cache or `S` again.
    for (const k of this.committedBefore.get(undo) ?? []) this.dropUnwritten(k);
  }

  root(): Buffer {
    return this.trie.rootHash();
  }

  prove(key: Buffer): StateProof | null {
    const value = this.get(keyStr(key));
    return value === undefined ? null : this.trie.prove(key, value);
  }

  /** Every entry of the state, in no particular order (see entriesWithPrefix). */
  entries(): IterableIterator<[KeyStr, Buffer]> {
    return this.entriesWithPrefix('');
  }

  /**
   * Every entry whose key starts with `prefix` (key bytes as latin1), in no particular order: the committed
   * ones from `S` in chunks of synchronous range reads (those the unwritten layer overrides skipped), then the
   * unwritten layer's. Read it to the end within one tick: a block applied meanwhile is not seen consistently.
   */
  *entriesWithPrefix(prefix: KeyStr): IterableIterator<[KeyStr, Buffer]> {
    for (const [k, v] of this.committedWithPrefix(prefix)) if (!this.unwritten.has(k)) yield [k, v];
    for (const [k, v] of this.unwritten) if (v !== null && k.startsWith(prefix)) yield [k, v];
  }

  /** Call fn for every entry under `prefix` (see entriesWithPrefix) until it returns false. */
  scanPrefix(prefix: KeyStr, fn: (key: KeyStr, value: Buffer) => boolean | undefined): void {
    for (const [k, v] of this.entriesWithPrefix(prefix)) if (fn(k, v) === false) return;
  }

  /** Committed entries under `prefix`, ascending, straight from `S` (nothing when memory-only). */
  private *committedWithPrefix(prefix: KeyStr): IterableIterator<[KeyStr, Buffer]> {
    if (this.db === null) return;
    const start = diskKey(prefix);
    const end = prefixEnd(start);
    let gte = start;
    for (;;) {
      const rows = this.db.rangeSync({ gte, lt: end, limit: SCAN_CHUNK });
      for (const [k, v] of rows) yield [k.toString('latin1', 1), v];
      if (rows.length < SCAN_CHUNK) return;
      gte = Buffer.concat([rows[rows.length - 1][0], NUL]);
    }
  }

  /** Keys of every stored slot of a contract (address as 20 raw bytes in latin1): a range read merged with the unwritten layer. */
  storageKeysOf(addressLatin1: string): ReadonlySet<KeyStr> {
    const out = new Set<KeyStr>();
    for (const [k] of this.committedWithPrefix(String.fromCharCode(NS_STORAGE) + addressLatin1)) {
      if (k.length === STORAGE_KEY_LENGTH && !this.unwritten.has(k)) out.add(k);
    }
    for (const k of this.unwrittenSlots.get(addressLatin1) ?? []) if (this.unwritten.get(k) !== null) out.add(k);
    return out;
  }
}

/** Copy-on-write view used to execute a block (or to simulate a call) without touching the base. */
export class StateOverlay implements StateReader {
  readonly changes: StateChanges = new Map();
  /**
   * While a sub-transaction is open (begin): each write's key followed by the entry it replaced in
   * `changes` (undefined: none), so rollback restores `changes` exactly. Cheaper than a child overlay
   * per native operation: reads stay one level deep and nothing is copied when the operation succeeds.
   */
  private journal: (KeyStr | Buffer | null | undefined)[] | null = null;
  private openMarks = 0;

  constructor(private readonly base: StateReader) {}

  get(key: KeyStr): Buffer | undefined {
    const v = this.changes.get(key);
    if (v === undefined) return this.base.get(key);
    return v === null ? undefined : v;
  }

  set(key: KeyStr, value: Buffer): void {
    if (this.journal !== null) this.journal.push(key, this.changes.get(key));
    this.changes.set(key, value);
  }

  delete(key: KeyStr): void {
    if (this.journal !== null) this.journal.push(key, this.changes.get(key));
    this.changes.set(key, null);
  }

  /** Open a sub-transaction (nestable); close it with keep() or rollback() and the returned mark. */
  begin(): number {
    this.journal ??= [];
    this.openMarks++;
    return this.journal.length;
  }

  /** Keep the writes of the innermost open sub-transaction (an enclosing one can still roll them back). */
  keep(): void {
    if (--this.openMarks === 0) this.journal = null;
  }

  /** Undo every write made since the mark: `changes` is as it was then, entries and their order. */
  rollback(mark: number): void {
    const j = this.journal as (KeyStr | Buffer | null | undefined)[];
    for (let i = j.length - 2; i >= mark; i -= 2) {
      const k = j[i] as KeyStr;
      const prev = j[i + 1] as Buffer | null | undefined;
      if (prev === undefined) this.changes.delete(k);
      else this.changes.set(k, prev);
    }
    j.length = mark;
    if (--this.openMarks === 0) this.journal = null;
  }

  /** Fold a nested overlay's changes into this one (commit of a sub-transaction). */
  absorb(child: StateOverlay): void {
    for (const [k, v] of child.changes) this.changes.set(k, v);
  }
}
