/**
 * Aggregates over committed blocks that no storage index holds: blocks and rewards per proposer (all time
 * and per epoch), per-UTC-day and per-minute activity for the recent past. One index per chain, created on
 * first use; it folds every new block from the chain's 'block' event and backfills older blocks from the
 * store. A node warms it in the background from the start (`warmChainIndex`: WARM_STEP_BLOCKS per event
 * loop turn, so requests keep being served and none waits for the backfill); without a warmer (tools,
 * tests) a request backfills at most INDEX_BACKFILL_BLOCKS itself. Answers built on it carry its coverage
 * (`IndexCoverage`); on a chain shorter than one step they are complete from the first request.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type Block, type Chain, epochOf } from '../chain/index.js';
import type { ChainReader } from '../chain/interface.js';
import { indexedChain } from './indexed-chain.js';
import type { ExecutionResult } from '../execution/index.js';
import { scheduledReward, hasBondedActiveSet } from '../ledger/index.js';

/** Blocks read from the store per request that needs the index (about 25 µs each). */
export const INDEX_BACKFILL_BLOCKS = 10_000;
/** Blocks per store range read during backfill. */
const BACKFILL_CHUNK = 500;
/**
 * Blocks the background warm-up reads and folds per event loop turn: one range read and ~25-50 ms of
 * decoding and folding on a loaded machine at worst (10-transaction blocks), so pages keep being served.
 */
export const WARM_STEP_BLOCKS = 64;
export const DAY_SECONDS = 86_400;
/** Days of per-day activity kept (GET /stats/daily shows the last 14, today included). */
export const STATS_DAYS = 14;
/** Minutes of per-minute activity kept (tps over the last hour and day). */
const MINUTES_KEPT = 24 * 60 + 1;
/** First-activity lookups per request when counting new addresses. */
export const FIRST_ACTIVITY_LOOKUPS = 20_000;

export interface ProducerTally {
  blocks: number;
  /** Block rewards in base units: exact for blocks folded live, the scheduled reward for backfilled ones. */
  rewardBase: bigint;
  /** floor(fee/2) of every included transaction, base units. */
  feesBase: bigint;
  lastHeight: number;
}

export interface EpochAgg {
  blocks: number;
  txs: number;
  firstTs: number;
  lastTs: number;
  producers: Map<string, ProducerTally>;
}

export interface DayAgg {
  blocks: number;
  txs: number;
  firstTs: number;
  lastTs: number;
  firstHeight: number;
  lastHeight: number;
  /** Senders and recipients of the day's transactions. */
  addresses: Set<string>;
}

export interface IndexCoverage {
  /** Lowest height folded in (1 when complete: genesis produces nothing). */
  from_height: number;
  to_height: number;
  complete: boolean;
}

const emptyTally = (): ProducerTally => ({ blocks: 0, rewardBase: 0n, feesBase: 0n, lastHeight: -1 });

export class ChainIndex {
  private from: number;
  private to: number;
  readonly producers = new Map<string, ProducerTally>();
  readonly epochs = new Map<number, EpochAgg>();
  readonly days = new Map<number, DayAgg>();
  readonly minutes = new Map<number, { blocks: number; txs: number }>();
  private readonly firstActivity = new Map<string, number>();
  /** Timestamp of the lowest folded block (timestamps never decrease with height). */
  private lowestTs = Number.POSITIVE_INFINITY;
  private running: Promise<void> | null = null;
  /** The background warm-up, while it runs (requests then never backfill more than its last step). */
  private warming: { stopped: boolean; step: number; done: Promise<void> } | null = null;

  constructor(private readonly chain: Chain) {
    this.to = chain.height;
    this.from = chain.height + 1;
    const onBlock = (b: Block, r: ExecutionResult | null) => {
      if (b.index <= this.to) return;
      this.fold(b, r);
      this.to = b.index;
    };
    // A rollback removes blocks this index folded in: it leaves, and the next query builds a new one.
    const onRollback = () => {
      chain.off('block', onBlock);
      chain.off('rollback', onRollback);
      if (indexes.get(chain) === this) indexes.delete(chain);
    };
    chain.on('block', onBlock);
    chain.on('rollback', onRollback);
  }

  get coverage(): IndexCoverage {
    return { from_height: Math.max(1, this.from), to_height: this.to, complete: this.from <= 1 };
  }

  /** Whether every block with a timestamp >= ts is folded in. */
  coversSince(ts: number): boolean {
    return this.from <= 1 || this.lowestTs < ts;
  }

  /**
   * Backfill up to budget older blocks (concurrent callers share one pass), then drop expired buckets. While
   * the background warm-up runs, a request backfills only when one warm-up step is all that is left (it then
   * shares that step), so no request waits for more than one step.
   */
  async ensure(budget = INDEX_BACKFILL_BLOCKS): Promise<void> {
    if (this.from > 1 && (!this.warming || this.from - 1 <= this.warming.step)) await this.step(budget);
    this.prune();
  }

  private step(budget: number): Promise<void> {
    this.running ??= this.backfill(budget).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /**
   * Fold the whole chain in the background, `stepBlocks` per event loop turn. `stop()` ends it after the
   * step in flight (a node stops it before closing its store) and resolves when that step is done.
   */
  warm(stepBlocks = WARM_STEP_BLOCKS): { done: Promise<void>; stop: () => Promise<void> } {
    if (!this.warming) {
      const w = { stopped: false, step: stepBlocks, done: Promise.resolve() };
      w.done = (async () => {
        try {
          while (!w.stopped && this.from > 1) {
            await this.step(stepBlocks);
            await nextTurn();
          }
        } finally {
          if (this.warming === w) this.warming = null;
        }
      })();
      this.warming = w;
    }
    const w = this.warming;
    return {
      done: w.done,
      stop: async () => {
        w.stopped = true;
        await w.done.catch(() => undefined);
      },
    };
  }

  /** Whether the background warm-up is still folding history. */
  get isWarming(): boolean {
    return this.warming !== null;
  }

  private async backfill(budget: number): Promise<void> {
    let left = budget;
    while (left > 0 && this.from > 1) {
      const n = Math.min(BACKFILL_CHUNK, left, this.from - 1);
      const lo = this.from - n;
      for (const b of await this.chain.blocks.readRange(lo, this.from - 1)) this.fold(b, null);
      this.from = lo;
      left -= n;
    }
  }

  private fold(b: Block, result: ExecutionResult | null): void {
    if (b.index === 0) return; // genesis: no proposer, no transactions
    this.lowestTs = Math.min(this.lowestTs, b.timestamp);
    // The coinbase went to the proposer unless reward distribution v2 sent it to the treasury (backfilled
    // blocks: judged by the activation height and whether the chain has bonded stake now).
    const toProposer = result
      ? result.coinbase === b.validator
      : b.index < this.chain.params.activation.rewardV2 || !hasBondedActiveSet(this.chain.state);
    let fees = 0n;
    if (toProposer) for (const tx of b.transactions) fees += tx.fee / 2n;
    const reward = !toProposer ? 0n : result ? result.rewardBase : scheduledReward(b.index);
    const epochNo = epochOf(this.chain.params, b.index);
    let e = this.epochs.get(epochNo);
    if (!e)
      this.epochs.set(epochNo, (e = { blocks: 0, txs: 0, firstTs: b.timestamp, lastTs: b.timestamp, producers: new Map() }));
    e.blocks++;
    e.txs += b.tx_count;
    e.firstTs = Math.min(e.firstTs, b.timestamp);
    e.lastTs = Math.max(e.lastTs, b.timestamp);
    for (const tallies of [this.producers, e.producers]) {
      let t = tallies.get(b.validator);
      if (!t) tallies.set(b.validator, (t = emptyTally()));
      t.blocks++;
      t.rewardBase += reward;
      t.feesBase += fees;
      t.lastHeight = Math.max(t.lastHeight, b.index);
    }
    const now = Math.floor(Date.now() / 1000);
    const day = Math.floor(b.timestamp / DAY_SECONDS);
    if (day > Math.floor(now / DAY_SECONDS) - STATS_DAYS) {
      let d = this.days.get(day);
      if (!d) {
        d = {
          blocks: 0,
          txs: 0,
          firstTs: b.timestamp,
          lastTs: b.timestamp,
          firstHeight: b.index,
          lastHeight: b.index,
          addresses: new Set(),
        };
        this.days.set(day, d);
      }
      d.blocks++;
      d.txs += b.tx_count;
      d.firstTs = Math.min(d.firstTs, b.timestamp);
      d.lastTs = Math.max(d.lastTs, b.timestamp);
      d.firstHeight = Math.min(d.firstHeight, b.index);
      d.lastHeight = Math.max(d.lastHeight, b.index);
      for (const tx of b.transactions) d.addresses.add(tx.from_address).add(tx.to_address);
    }
    const minute = Math.floor(b.timestamp / 60);
    if (minute > Math.floor(now / 60) - MINUTES_KEPT) {
      const m = this.minutes.get(minute);
      if (m) {
        m.blocks++;
        m.txs += b.tx_count;
      } else this.minutes.set(minute, { blocks: 1, txs: b.tx_count });
    }
  }

  private prune(): void {
    const now = Math.floor(Date.now() / 1000);
    const oldestDay = Math.floor(now / DAY_SECONDS) - STATS_DAYS + 1;
    for (const d of this.days.keys()) if (d < oldestDay) this.days.delete(d);
    const oldestMinute = Math.floor(now / 60) - MINUTES_KEPT + 1;
    for (const m of this.minutes.keys()) if (m < oldestMinute) this.minutes.delete(m);
    let live = 0;
    for (const d of this.days.values()) live += d.addresses.size;
    if (this.firstActivity.size > 2 * live + 1000) this.firstActivity.clear();
  }

  /** Transactions and blocks with a timestamp in the last `seconds` (minute resolution). */
  recentActivity(seconds: number): { blocks: number; txs: number } {
    const since = Math.floor((Date.now() / 1000 - seconds) / 60);
    let blocks = 0;
    let txs = 0;
    for (const [m, a] of this.minutes) {
      if (m > since) {
        blocks += a.blocks;
        txs += a.txs;
      }
    }
    return { blocks, txs };
  }

  /**
   * Addresses of the day whose first transaction ever (address history index) is in that day; null when
   * the lookup budget ran out before every address was resolved.
   */
  async newAddresses(day: DayAgg, budget = { left: FIRST_ACTIVITY_LOOKUPS }): Promise<number | null> {
    let n = 0;
    for (const a of day.addresses) {
      let first = this.firstActivity.get(a);
      if (first === undefined) {
        if (budget.left-- <= 0) return null;
        const loc = await this.chain.blocks.firstAddressTx(a);
        if (!loc) continue;
        first = loc.height;
        this.firstActivity.set(a, first);
      }
      if (first >= day.firstHeight && first <= day.lastHeight) n++;
    }
    return n;
  }
}

const indexes = new WeakMap<Chain, ChainIndex>();

function indexOf(chain: Chain): ChainIndex {
  let idx = indexes.get(chain);
  if (!idx) indexes.set(chain, (idx = new ChainIndex(chain)));
  return idx;
}

/** The chain's index, backfilled by at most one step for this request (none while the node warms it). */
export async function chainIndex(ctx: { chain: ChainReader }): Promise<ChainIndex> {
  const idx = indexOf(indexedChain(ctx.chain));
  await idx.ensure();
  return idx;
}

/**
 * Start folding the chain's history into its index in the background (a node calls it once it opened its
 * chain); `stop()` before closing the store.
 */
export function warmChainIndex(ctx: { chain: ChainReader }): { done: Promise<void>; stop: () => Promise<void> } {
  return indexOf(indexedChain(ctx.chain)).warm();
}
