/**
 * Block production on the dev chain: automine (a block per transaction as soon as it is admitted, Hardhat's
 * and anvil's default; `--block-time-ms 0`), interval mining (the PoA timer), and blocks on request
 * (evm_mine, hardhat_mine / anvil_mine). Every block the dev controls make goes through PoaEngine.produce,
 * so it is built, validated and committed like any other, one at a time.
 */
import { type Chain, StaleExecutionError } from '../chain/index.js';
import type { PoaEngine } from '../consensus/index.js';
import type { BlockTxPool } from '../mempool/interface.js';
import type { DevClock } from './clock.js';

/** Most blocks one hardhat_mine / anvil_mine call makes. */
export const MAX_MINE_BLOCKS = 100_000;
/** Attempts at a block when the interval timer committed one first (the slot moved under us). */
const STALE_RETRIES = 5;

export interface MiningMode {
  automine: boolean;
  /** Interval mining (ms); 0 = off. */
  intervalMs: number;
}

export class DevMiner {
  private queue: Promise<unknown> = Promise.resolve();
  private mode: MiningMode;

  constructor(
    private readonly chain: Chain,
    private readonly poa: PoaEngine,
    private readonly mempool: BlockTxPool,
    private readonly clock: DevClock,
    mode: MiningMode,
  ) {
    this.mode = { ...mode };
  }

  get automine(): boolean {
    return this.mode.automine;
  }

  get intervalMs(): number {
    return this.mode.intervalMs;
  }

  /** Start what the mode says (the interval timer). */
  start(): void {
    if (this.mode.intervalMs > 0) {
      this.poa.setBlockTimeMs(this.mode.intervalMs);
      this.poa.start();
    }
  }

  async stop(): Promise<void> {
    await this.poa.stop();
    await this.settled();
  }

  /** Resolves when every block requested so far (automine included) is committed. */
  settled(): Promise<void> {
    return this.queue.then(() => undefined);
  }

  /** Run block production one job at a time. */
  private run<T>(job: () => Promise<T>): Promise<T> {
    const p = this.queue.then(job);
    this.queue = p.catch(() => undefined);
    return p;
  }

  /** A transaction entered the pool: with automine, mine it (one block per transaction). */
  onPooled(): void {
    if (this.mode.automine) void this.run(() => this.drain()).catch(() => undefined);
  }

  private async drain(): Promise<void> {
    // Each block takes the oldest pending transaction; a transaction that cannot apply leaves the pool too.
    for (let guard = this.mempool.size + 1; this.mempool.size > 0 && guard > 0; guard--) await this.block(1);
  }

  async setAutomine(on: boolean): Promise<void> {
    this.mode.automine = on;
    if (on) await this.run(() => this.drain());
  }

  /** evm_setIntervalMining: a block every `ms` (0 stops the timer). */
  async setInterval(ms: number): Promise<void> {
    this.mode.intervalMs = ms;
    await this.poa.stop();
    if (ms > 0) {
      this.poa.setBlockTimeMs(ms);
      this.poa.start();
    }
  }

  /** Restore a mode (evm_revert, anvil_reset). */
  async restore(mode: MiningMode): Promise<void> {
    if (mode.intervalMs !== this.mode.intervalMs) await this.setInterval(mode.intervalMs);
    this.mode.automine = mode.automine;
  }

  /**
   * Mine `count` blocks (evm_mine, hardhat_mine): the first takes the pending transactions; with `timestamp`
   * the first is dated so, and each next one `intervalSecs` later (default 1 s, as Hardhat).
   */
  mine(count = 1, opts: { timestamp?: number; intervalSecs?: number } = {}): Promise<number[]> {
    return this.run(async () => {
      const heights: number[] = [];
      // Blocks are at least a second apart (clock.ts): an interval of 0 is 1.
      const interval = Math.max(opts.intervalSecs ?? 1, 1);
      for (let i = 0; i < count; i++) {
        // The first block is dated by the clock (or the timestamp given); each next one `interval` after it.
        if (i === 0 && opts.timestamp !== undefined) this.clock.setNext(opts.timestamp);
        else if (i > 0) this.clock.setNext(this.chain.head.timestamp + interval);
        heights.push(await this.block(Number.MAX_SAFE_INTEGER));
      }
      return heights;
    });
  }

  /** Pause everything that makes blocks (a snapshot revert or a reset rewrites the chain meanwhile). */
  exclusive<T>(job: () => Promise<T>): Promise<T> {
    return this.run(async () => {
      const interval = this.mode.intervalMs;
      if (interval > 0) await this.poa.stop();
      try {
        return await job();
      } finally {
        if (interval > 0 && this.mode.intervalMs === interval) this.poa.start();
      }
    });
  }

  private async block(maxTxs: number): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.poa.produce(Date.now(), maxTxs)).height;
      } catch (err) {
        if (!(err instanceof StaleExecutionError) || attempt >= STALE_RETRIES) throw err;
      }
    }
  }
}
