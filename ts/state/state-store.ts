import { crypto } from '../crypto/index.js';
import { MerkleTrie, type StateProof } from './trie.js';

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
  private readonly values = new Map<KeyStr, Buffer>();
  private readonly trie = new MerkleTrie();

  get(key: KeyStr): Buffer | undefined {
    return this.values.get(key);
  }

  get size(): number {
    return this.values.size;
  }

  /** Bulk load at start; follow with root() to hash everything once. */
  load(key: Buffer, value: Buffer): void {
    this.values.set(keyStr(key), value);
    this.trie.set(key, value);
  }

  /** Apply a block's changes and return the undo record (to drop an uncommitted proposal). */
  applyChanges(changes: StateChanges): StateUndo {
    const undo: StateUndo = new Map();
    const keys = [...changes.keys()];
    const hashes = crypto().sha256Many(keys.map(keyBytes));
    keys.forEach((k, i) => {
      const v = changes.get(k) as Buffer | null;
      undo.set(k, this.values.get(k));
      const kb = keyBytes(k);
      const kh = Buffer.from(hashes[i].buffer, hashes[i].byteOffset, 32);
      if (v === null) {
        this.values.delete(k);
        this.trie.delete(kb, kh);
      } else {
        this.values.set(k, v);
        this.trie.set(kb, v, kh);
      }
    });
    return undo;
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

  *entries(): IterableIterator<[KeyStr, Buffer]> {
    yield* this.values.entries();
  }
}

/** Copy-on-write view used to execute a block (or to simulate a call) without touching the base. */
export class StateOverlay implements StateReader {
  readonly changes: StateChanges = new Map();

  constructor(private readonly base: StateReader) {}

  get(key: KeyStr): Buffer | undefined {
    const v = this.changes.get(key);
    if (v === undefined) return this.base.get(key);
    return v === null ? undefined : v;
  }

  set(key: KeyStr, value: Buffer): void {
    this.changes.set(key, value);
  }

  delete(key: KeyStr): void {
    this.changes.set(key, null);
  }

  /** Fold a nested overlay's changes into this one (commit of a sub-transaction). */
  absorb(child: StateOverlay): void {
    for (const [k, v] of child.changes) this.changes.set(k, v);
  }
}
