import { weiToBase } from '../ledger/index.js';
import { DAY_SECONDS, FIRST_ACTIVITY_LOOKUPS, STATS_DAYS, chainIndex } from '../indexes/index.js';
import { supplyOfState } from './chain-info.js';
import type { NodeContext } from './context.js';
import { stateIndex } from '../indexes/index.js';
import { percentOf } from './token-queries.js';

/** Largest rich list page. */
export const MAX_RICHLIST = 500;
export const DEFAULT_RICHLIST = 100;

export interface DayStats {
  /** UTC date, YYYY-MM-DD. */
  date: string;
  /** Unix seconds of 00:00 UTC. */
  day_start: number;
  blocks: number;
  tx_count: number;
  /** Addresses whose first transaction ever is on this day; null when not resolved within this request's budget. */
  new_addresses: number | null;
  /** Distinct senders and recipients. */
  active_addresses: number;
  /** (last - first block time) / (blocks - 1); null with fewer than 2 blocks. */
  avg_block_time_ms: number | null;
  /** Every block of the day is counted (the index reaches back far enough). */
  complete: boolean;
}

/**
 * GET /stats/daily: the last 14 UTC days, newest (today, partial) first. Blocks, transactions, new addresses
 * and block times come from the per-day records the block store writes with each block (exact, read in 14
 * lookups); active addresses from the chain index.
 */
export async function dailyStats(ctx: NodeContext): Promise<{ days: DayStats[]; coverage: unknown }> {
  const idx = await chainIndex(ctx);
  const today = Math.floor(Date.now() / 1000 / DAY_SECONDS);
  const budget = { left: FIRST_ACTIVITY_LOOKUPS };
  const days: DayStats[] = [];
  for (let d = today; d > today - STATS_DAYS; d--) {
    const agg = idx.days.get(d);
    const rec = ctx.chain.blocks.dayRecord(d);
    const start = d * DAY_SECONDS;
    const recorded = rec.blocks > 0;
    const blocks = recorded ? rec.blocks : (agg?.blocks ?? 0);
    const span = recorded ? rec.last_ts - rec.first_ts : agg ? agg.lastTs - agg.firstTs : 0;
    days.push({
      date: new Date(start * 1000).toISOString().slice(0, 10),
      day_start: start,
      blocks,
      tx_count: recorded ? rec.txs : (agg?.txs ?? 0),
      new_addresses: recorded ? rec.new_addresses : agg ? await idx.newAddresses(agg, budget) : 0,
      active_addresses: agg?.addresses.size ?? 0,
      avg_block_time_ms: blocks > 1 ? Math.round((span * 1000) / (blocks - 1)) : null,
      complete: recorded || idx.coversSince(start),
    });
  }
  return { days, coverage: idx.coverage };
}

/**
 * GET /richlist and GET /accounts/top: largest balances with their share of the circulating supply, read
 * from the state index (balances sorted at commit), so a request costs O(limit).
 */
export async function richList(ctx: NodeContext, limit: number): Promise<Record<string, unknown>> {
  const idx = await stateIndex(ctx);
  // The index follows committed blocks; a proposal applied to the state meanwhile would make the supply
  // and the balances disagree, so read both once the chain has settled, in one synchronous step.
  await ctx.chain.settled();
  const { circulating } = supplyOfState(ctx);
  return {
    holders: idx.accounts.top(Math.min(limit, MAX_RICHLIST)).map((h, i) => {
      const balance = weiToBase(h.balance);
      return { rank: i + 1, address: h.address, balance, percentage: percentOf(balance, circulating) };
    }),
    total_accounts: idx.accountRecords,
    circulating_supply: circulating,
  };
}
