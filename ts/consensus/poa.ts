import { type Chain, StaleExecutionError, proposerAt } from '../chain/index.js';
import type { KeyPair } from '../ledger/index.js';
import type { BlockTxPool } from '../mempool/interface.js';
import type { PackLimit } from '../execution/index.js';
import type { ConsensusEngine, ProducedBlockInfo } from './interface.js';

export interface PoaOptions {
  blockTimeMs: number;
  maxBlockTxs: number;
  /** What the proposer packs into a block (docs/evm.md "Block time"); undefined = the 30M validity limit. */
  pack?: PackLimit;
}

/** The wall clock and block timer PoA runs on: the system's in a node, a manual one in unit tests. */
export interface PoaClock {
  now(): number;
  setTimeout(fire: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: PoaClock = {
  now: () => Date.now(),
  setTimeout: (fire, ms) => setTimeout(fire, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Proof of authority: authorities (the genesis validators, sorted by address) take turns by
 * height; a block is final as soon as it is committed. This node produces when it holds the
 * scheduled authority's key.
 */
export class PoaEngine implements ConsensusEngine {
  readonly name = 'PoA';
  private timer: unknown = null;
  private inFlight: Promise<void> | null = null;
  private stopped = true;
  onProduced?: (info: ProducedBlockInfo) => void;
  onError?: (err: unknown) => void;
  /** After the pool lost a block's transactions (the node promotes queued future nonces then). */
  onPoolChanged?: () => void;
  /**
   * Whether this node may propose now: a node that knows of peers ahead of it must catch up first,
   * or it would sign a second block for a height the network already has.
   */
  canPropose?: () => boolean;

  constructor(
    private readonly chain: Chain,
    private readonly mempool: BlockTxPool,
    private readonly key: KeyPair,
    private readonly opts: PoaOptions,
    private readonly clock: PoaClock = systemClock,
  ) {}

  nextProposer(): string | null {
    return proposerAt(this.chain.params, this.chain.state, this.chain.height + 1)?.address ?? null;
  }

  finalizedHeight(): number {
    return this.chain.height;
  }

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  /** Whether the block timer runs. */
  get running(): boolean {
    return !this.stopped;
  }

  /** The block interval from the next slot on (the dev chain's evm_setIntervalMining). */
  setBlockTimeMs(ms: number): void {
    this.opts.blockTimeMs = ms;
  }

  private schedule(): void {
    if (this.stopped) return;
    // Aim each block at a multiple of the block time, so production time does not drift the cadence.
    const now = this.clock.now();
    const delay = this.opts.blockTimeMs - (now % this.opts.blockTimeMs);
    const slot = now + delay;
    this.timer = this.clock.setTimeout(() => {
      this.inFlight = this.tick(slot).finally(() => {
        this.inFlight = null;
        this.schedule();
      });
    }, delay);
  }

  private async tick(slot: number): Promise<void> {
    if (this.nextProposer() !== this.key.address) return;
    // From the BFT activation on, heights are decided by the BFT engine's rounds.
    if (this.chain.consensusAt(this.chain.height + 1) === 'DPoS+BFT') return;
    if (this.canPropose && !this.canPropose()) return;
    try {
      await this.produce(slot);
    } catch (err) {
      // A block imported from a peer while this one executed: the slot is gone, not a failure.
      if (err instanceof StaleExecutionError) return;
      this.onError?.(err);
    }
  }

  /**
   * Build, execute and commit one block from the mempool (also used by tests and benches). `slot`: the
   * wall-clock time (ms) the block was scheduled for; it is late when committed after slot + blockTimeMs.
   * `maxTxs`: fewer transactions than a block may hold (the dev chain's automine makes a block per transaction).
   */
  async produce(slot = this.clock.now(), maxTxs = this.opts.maxBlockTxs): Promise<ProducedBlockInfo> {
    const t0 = performance.now();
    const txs = this.mempool.take(Math.min(maxTxs, this.opts.maxBlockTxs));
    const exec = await this.chain.execute(txs, this.key.address, this.chain.now(), this.opts.pack);
    // seal() makes the block's state live in the trie; the pool must change in the same tick, as
    // admission (which runs between awaits) reads both.
    const proposal = this.chain.seal(exec, this.key);
    this.mempool.onBlock(
      exec.result.included,
      exec.result.dropped.map((d) => d.tx),
    );
    this.onPoolChanged?.();
    const t1 = performance.now();
    // A failed commit is fatal (the caller stops the node; restart resumes from the last committed block).
    await this.chain.commit(proposal);
    const t2 = performance.now();
    const info: ProducedBlockInfo = {
      height: proposal.block.index,
      txCount: proposal.block.tx_count,
      executeMs: proposal.timings.executeMs,
      stateRootMs: proposal.timings.stateRootMs,
      commitMs: t2 - t1,
      totalMs: t2 - t0,
      gasUsed: proposal.block.gas_used,
      // Without a block time (the dev chain's automine) a block has no slot to miss: never late.
      lateMs: this.opts.blockTimeMs > 0 ? Math.max(0, this.clock.now() - (slot + this.opts.blockTimeMs)) : 0,
    };
    this.onProduced?.(info);
    return info;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    if (this.inFlight) await this.inFlight;
  }
}
