/**
 * evm_snapshot / evm_revert on the dev chain (docs/dev-chain.md, "Snapshots and reset"). A snapshot is small:
 * the head's height (the chain's state history rolls the blocks back, Chain.rollbackTo), the state writes
 * not yet in a block, the clock, the mining mode and the pool's contents. Ids count up from 1 as Hardhat's
 * do; reverting to one consumes it and every snapshot taken after it (Hardhat, Ganache and anvil agree).
 */
import type { MempoolContents } from '../mempool/index.js';
import type { StateChanges } from '../state/index.js';
import type { MiningMode } from './miner.js';

export interface DevSnapshot {
  id: number;
  /** The head when it was taken. */
  height: number;
  /** Dev state writes made since that head (PendingDevWrites.current()). */
  writes: StateChanges;
  clock: { offset: number; next: number | null };
  mode: MiningMode;
  pool: MempoolContents;
}

export class DevSnapshots {
  private nextId = 1;
  /** Ascending ids. */
  private readonly taken: DevSnapshot[] = [];

  get size(): number {
    return this.taken.length;
  }

  take(s: Omit<DevSnapshot, 'id'>): number {
    const id = this.nextId++;
    this.taken.push({ ...s, id });
    return id;
  }

  get(id: bigint): DevSnapshot | null {
    return this.taken.find((s) => BigInt(s.id) === id) ?? null;
  }

  /** Forget the snapshot `id` and every later one (a revert to it used it up). */
  consume(id: number): void {
    const i = this.taken.findIndex((s) => s.id === id);
    if (i >= 0) this.taken.splice(i);
  }

  /** After the dev chain's warm-up (rpc/warm-up.ts) reverted its own snapshots: the first id is 1 again. */
  restartIds(): void {
    if (this.taken.length === 0) this.nextId = 1;
  }

  /** anvil_reset: no snapshot survives (ids keep counting, so an old id never names a new snapshot). */
  clear(): void {
    this.taken.length = 0;
  }
}
