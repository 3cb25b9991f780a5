/**
 * State written between blocks on the dev chain (anvil_setBalance, anvil_setCode, anvil_setStorageAt,
 * anvil_setNonce and their hardhat_ aliases; docs/dev-chain.md). Such a write is visible at once, as on
 * anvil and Hardhat, and becomes part of the next block: that block's state root covers it, its change set
 * and undo record include it, and the write itself is stored next to the block ('D' + height) so replay
 * (/chain/validate, validate.ts) applies it before re-executing the block. Until then the pending writes
 * are kept under a meta key, so a restart keeps them too.
 */
import { type StateChanges, type StateStore, type StateUndo, keyBytes, keyStr } from '../state/index.js';
import { type KvOp, type KvStore, metaKey } from '../storage/index.js';
import { u64be } from '../util/index.js';

/** Prefix of the per-block records of dev writes ('D' + height u64). */
const P_DEV_PATCH = 0x44;
const PENDING_KEY = metaKey('dev-pending-writes');

export const devPatchKey = (height: number): Buffer => Buffer.concat([Buffer.from([P_DEV_PATCH]), u64be(height)]);

/** Encoding: entries of key length u16, key, flag u8 (0 deleted, 1 value), value length u32, value. */
export function encodeStateChanges(changes: StateChanges): Buffer {
  const parts: Buffer[] = [];
  for (const [k, v] of changes) {
    const key = keyBytes(k);
    const head = Buffer.allocUnsafe(2);
    head.writeUInt16BE(key.length, 0);
    const value = v ?? Buffer.alloc(0);
    const tail = Buffer.allocUnsafe(5);
    tail.writeUInt8(v === null ? 0 : 1, 0);
    tail.writeUInt32BE(value.length, 1);
    parts.push(head, key, tail, value);
  }
  return Buffer.concat(parts);
}

export function decodeStateChanges(b: Buffer): StateChanges {
  const out: StateChanges = new Map();
  let i = 0;
  while (i < b.length) {
    const kl = b.readUInt16BE(i);
    const key = b.subarray(i + 2, i + 2 + kl);
    i += 2 + kl;
    const present = b.readUInt8(i) === 1;
    const vl = b.readUInt32BE(i + 1);
    const value = Buffer.from(b.subarray(i + 5, i + 5 + vl));
    i += 5 + vl;
    out.set(keyStr(key), present ? value : null);
  }
  return out;
}

/** The dev writes recorded with the block at height (replay applies them before its transactions). */
export async function readDevPatch(db: KvStore, height: number): Promise<StateChanges | null> {
  const raw = await db.get(devPatchKey(height));
  return raw && raw.length > 0 ? decodeStateChanges(raw) : null;
}

/** Writes waiting for the next block: applied to the live state, with the values they replaced. */
export class PendingDevWrites {
  private changes: StateChanges = new Map();
  private undo: StateUndo = new Map();

  constructor(private readonly db: KvStore) {}

  get size(): number {
    return this.changes.size;
  }

  /** Apply writes to the live state now and keep them for the next block (persisted before returning). */
  async apply(state: StateStore, writes: StateChanges): Promise<void> {
    const undo = state.applyChanges(writes);
    for (const [k, v] of undo) if (!this.undo.has(k)) this.undo.set(k, v);
    for (const [k, v] of writes) this.changes.set(k, v);
    await this.db.write([{ type: 'put', key: PENDING_KEY, value: encodeStateChanges(this.changes) }]);
  }

  /** After a restart: the pending writes are put back on the state rebuilt from disk. */
  async restore(state: StateStore): Promise<void> {
    const raw = await this.db.get(PENDING_KEY);
    if (!raw || raw.length === 0) return;
    const writes = decodeStateChanges(raw);
    this.undo = state.applyChanges(writes);
    this.changes = writes;
  }

  /** Take the live state back to the head's (a rollback follows); the pending writes are gone. Returns the keys. */
  async drop(state: StateStore): Promise<string[]> {
    const keys = [...this.undo.keys()];
    state.revert(this.undo);
    this.clear();
    await this.db.write([{ type: 'del', key: PENDING_KEY }]);
    return keys;
  }

  /** The writes a copy of which a snapshot keeps (evm_snapshot), to apply again after a revert. */
  current(): StateChanges {
    return new Map(this.changes);
  }

  /**
   * Fold the pending writes into the block about to be committed at `height`: its changes start with them,
   * its undo record holds the values from before them, and the batch stores them for replay (or removes a
   * stale record of that height when there are none). Returns the batch's extra operations.
   */
  foldInto(height: number, block: { changes: StateChanges; undo: StateUndo }): KvOp[] {
    if (this.changes.size === 0) return [{ type: 'del', key: devPatchKey(height) }];
    const changes: StateChanges = new Map(this.changes);
    for (const [k, v] of block.changes) changes.set(k, v);
    const undo: StateUndo = new Map(block.undo);
    for (const [k, v] of this.undo) undo.set(k, v);
    const ops: KvOp[] = [
      { type: 'put', key: devPatchKey(height), value: encodeStateChanges(this.changes) },
      { type: 'del', key: PENDING_KEY },
    ];
    block.changes = changes;
    block.undo = undo;
    return ops;
  }

  /** After the block holding them committed. */
  clear(): void {
    this.changes = new Map();
    this.undo = new Map();
  }
}
