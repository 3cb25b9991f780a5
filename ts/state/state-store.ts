import { createTrie } from './native-trie.js';
import { SnapshotLog, type StateSnapshot } from './snapshots.js';
import type { AuthenticatedTrie, StateProof } from './trie.js';

/** First byte of contract storage keys (mirrors NS.storage in accounts.ts, which imports this module). */
const NS_STORAGE = 0x03;
const EMPTY_SET: ReadonlySet<KeyStr> = new Set();

/** Map keys are the state key bytes as latin1 strings (cheap, exact, hashable). */
export type KeyStr = string;
export const keyStr = (k: Uint8Array): KeyStr => Buffer.from(k.buffer, k.byteOffset, k.byteLength).toString('latin1');
export const keyBytes = (k: KeyStr): Buffer => Buffer.from(k, 'latin1');

/** Read side shared by the committed state and overlays. */
export interface StateReader {
  get(key: KeyStr): Buffer | undefined;
}

/** A set of changes: a value, or null for a deletion. */
export type StateChanges = Map<KeyStr, Buffer | null>;

/** Undo record of applyChanges: previous value of every changed key (undefined = was absent). */
export type StateUndo = Map<KeyStr, Buffer | undefined>;

/**
 * The whole state, in memory, behind an authenticated trie. Persistence is the storage layer's job:
 * every block's StateChanges go into the block's atomic write batch, and the store is rebuilt from
 * disk at start (see docs/architecture.md for why the state is memory-resident).
 */
export class StateStore implements StateReader {
  /** The trie holds the values too (one map, leaves by key); native when the addon is built. */
  private readonly trie: AuthenticatedTrie = createTrie();
  /** Storage-slot keys per contract (address bytes as latin1), so clearing a contract's storage is not a full scan. */
  private readonly storageKeys = new Map<string, Set<KeyStr>>();
  /** Undo records kept for open snapshots (calls running off the main thread). */
  private readonly snapshots = new SnapshotLog(this);

  /** Keys of every stored slot of a contract (address as 20 raw bytes in latin1). */
  storageKeysOf(addressLatin1: string): ReadonlySet<KeyStr> {
    return this.storageKeys.get(addressLatin1) ?? EMPTY_SET;
  }

  private indexKey(k: KeyStr, present: boolean): void {
    if (k.charCodeAt(0) !== NS_STORAGE || k.length !== 53) return;
    const owner = k.slice(1, 21);
    let set = this.storageKeys.get(owner);
    if (present) {
      if (!set) this.storageKeys.set(owner, (set = new Set()));
      set.add(k);
    } else if (set) {
      set.delete(k);
      if (set.size === 0) this.storageKeys.delete(owner);
    }
  }

  get(key: KeyStr): Buffer | undefined {
    return this.trie.get(key);
  }

  get size(): number {
    return this.trie.size;
  }

  /** Bulk load at start; follow with root() to hash everything once. */
  load(key: Buffer, value: Buffer): void {
    this.trie.set(keyStr(key), value);
    if (key[0] === NS_STORAGE) this.indexKey(keyStr(key), true);
  }

  /** Apply a block's changes and return the undo record (to drop an uncommitted proposal). */
  applyChanges(changes: StateChanges): StateUndo {
    const undo: StateUndo = new Map();
    for (const [k, v] of changes) {
      undo.set(k, this.trie.get(k));
      this.indexKey(k, v !== null);
      if (v === null) this.trie.delete(k);
      else this.trie.set(k, v);
    }
    this.snapshots.record(undo);
    return undo;
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
  }

  root(): Buffer {
    return this.trie.rootHash();
  }

  prove(key: Buffer): StateProof | null {
    return this.trie.prove(key);
  }

  entries(): IterableIterator<[KeyStr, Buffer]> {
    return this.trie.entries();
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
