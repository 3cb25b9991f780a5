import type { Chain } from '../chain/index.js';
import { ServerError } from '../util/index.js';

/** Unix seconds of the machine. */
const wallClock = (): number => Math.floor(Date.now() / 1000);

/**
 * The dev chain's clock (evm_increaseTime, evm_setNextBlockTimestamp, evm_mine with a timestamp): the
 * machine's time plus an offset, or the timestamp the next block was told to have. It replaces
 * `Chain.now`, so block production, block validity (the future-drift rule) and calls all read it: a block
 * dated ahead of the machine is valid because the chain's own clock is ahead too (docs/dev-chain.md). Each block
 * is dated at least one second after its parent, as on Hardhat and anvil.
 */
export class DevClock {
  /** Seconds added to the machine's time. */
  private offset = 0;
  /** The timestamp the next block gets, once. */
  private next: number | null = null;

  constructor(private readonly chain: Chain) {
    // After a restart the head may be dated ahead of the machine (time was moved): time goes on from it.
    this.reset();
    chain.now = () => this.now();
    chain.on('block', (b) => this.blockMined(b.timestamp));
  }

  /** The next block's time: at least one second after the head's (Ethereum's rule; Hardhat and anvil keep it). */
  now(): number {
    return Math.max(this.next ?? wallClock() + this.offset, this.chain.head.timestamp + 1);
  }

  /** Seconds the clock runs ahead of the machine. */
  get offsetSecs(): number {
    return this.offset;
  }

  /** evm_increaseTime: move the clock forward; returns the total offset. */
  increase(secs: number): number {
    if (!Number.isSafeInteger(secs) || secs < 0) throw new ServerError('time increase must be a non-negative number of seconds');
    this.offset += secs;
    return this.offset;
  }

  /** evm_setNextBlockTimestamp: the next block is dated `ts`; time then goes on from it. */
  setNext(ts: number): void {
    const head = this.chain.head.timestamp;
    if (!Number.isSafeInteger(ts) || ts <= head) {
      throw new ServerError(`timestamp ${ts} is lower than or equal to the previous block's timestamp ${head}`);
    }
    this.next = ts;
  }

  /** Back to a recorded state (evm_revert). */
  restore(offset: number, next: number | null): void {
    this.offset = offset;
    this.next = next;
  }

  /** As a node starting on the current head (anvil_reset): the machine's time, or the head's when that is later. */
  reset(): void {
    this.offset = Math.max(0, this.chain.head.timestamp - wallClock());
    this.next = null;
  }

  get nextTimestamp(): number | null {
    return this.next;
  }

  private blockMined(ts: number): void {
    if (this.next === null || ts < this.next) return;
    this.offset = this.next - wallClock();
    this.next = null;
  }
}
