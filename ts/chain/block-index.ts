/**
 * The contract between BlockStore and the read-model indexes it writes with each block (address history
 * and counts, daily aggregates, contract creations, EVM log postings, native event postings): each index is
 * a contributor registered when the store is built, adding its operations to the block's ONE atomic batch
 * (so a crash leaves the block with all its indexes or none) and its deletions to a rollback's batch.
 * The consensus-critical core (blocks, hash and transaction indexes, receipts, state values, change sets,
 * the head pointer) stays in block-store.ts.
 */
import type { ReceiptRecord } from '../execution/index.js';
import type { KvBatch, KvOp } from '../storage/index.js';
import type { Block } from './block.js';

export interface TxLocation {
  height: number;
  index: number;
}

/** What a log query needs of a block: its hash, its transaction ids and its receipts. */
export interface LogSource {
  height: number;
  hash: string;
  txid(index: number): string;
  receipts: readonly ReceiptRecord[];
}

/** A block a rollback removes, with its receipts. */
export interface RemovedBlock {
  block: Block;
  receipts: readonly ReceiptRecord[];
}

/** A contributor's part of a rollback: operations for the rollback's batch, and what follows once it is written. */
export interface DroppedIndex {
  ops: KvOp[];
  applied?: () => void;
}

export interface BlockIndexContributor {
  /** At open, before any block is committed: bring the index up to the stored head (older stores). */
  open?(head: number): Promise<void>;
  /**
   * Add the block's index operations to `batch`. The returned function (if any) runs once the block's operations
   * are staged, before the next block's are computed (after the write for one block, at once within a run of
   * blocks written together): it moves the index's in-memory caches to the block.
   */
  stage(batch: KvBatch, block: Block, receipts: readonly ReceiptRecord[]): (() => void) | undefined;
  /**
   * Rollback: the operations removing these blocks (newest first) from the index; `head` is the block that becomes
   * the head. `applied` runs once the rollback's batch is written.
   */
  drop(removed: readonly RemovedBlock[], head: Block): DroppedIndex | Promise<DroppedIndex>;
}

/** A transaction location's stored value: height u64 BE · index u32 BE. */
export function txLocationValue(height: number, index: number): Buffer {
  const b = Buffer.allocUnsafe(12);
  b.writeUInt32BE(Math.floor(height / 0x1_0000_0000), 0);
  b.writeUInt32BE(height >>> 0, 4);
  b.writeUInt32BE(index, 8);
  return b;
}

export const readTxLocation = (raw: Buffer): TxLocation => ({
  height: Number(raw.readBigUInt64BE(0)),
  index: raw.readUInt32BE(8),
});
