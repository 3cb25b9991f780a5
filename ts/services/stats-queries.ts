import type { Chain } from '../chain/chain.js';
import { weiToBase } from '../ledger/units.js';
import { addressFromAccountKey, decodeAccount } from '../state/accounts.js';
import { DAY_SECONDS, FIRST_ACTIVITY_LOOKUPS, STATS_DAYS, chainIndex } from './chain-index.js';
import { supplyOfState } from './chain-info.js';
import type { NodeContext } from './context.js';

/** Largest rich list page (top holders are kept per block height up to this many). */
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

/** GET /stats/daily: the last 14 UTC days, newest (today, partial) first. */
export async function dailyStats(ctx: NodeContext): Promise<{ days: DayStats[]; coverage: unknown }> {
  const idx = await chainIndex(ctx);
  const today = Math.floor(Date.now() / 1000 / DAY_SECONDS);
  const budget = { left: FIRST_ACTIVITY_LOOKUPS };
  const days: DayStats[] = [];
  for (let d = today; d > today - STATS_DAYS; d--) {
    const agg = idx.days.get(d);
    const start = d * DAY_SECONDS;
    days.push({
      date: new Date(start * 1000).toISOString().slice(0, 10),
      day_start: start,
      blocks: agg?.blocks ?? 0,
      tx_count: agg?.txs ?? 0,
      new_addresses: agg ? await idx.newAddresses(agg, budget) : 0,
      active_addresses: agg?.addresses.size ?? 0,
      avg_block_time_ms: agg && agg.blocks > 1 ? Math.round(((agg.lastTs - agg.firstTs) * 1000) / (agg.blocks - 1)) : null,
      complete: idx.coversSince(start),
    });
  }
  return { days, coverage: idx.coverage };
}

interface Holder {
  address: string;
  balance: bigint;
}

const byBalance = (a: Holder, b: Holder): number =>
  a.balance !== b.balance ? (a.balance > b.balance ? -1 : 1) : a.address < b.address ? -1 : 1;

/** Top holders of the head state, computed at most once per block. */
const topCache = new WeakMap<Chain, TopHolders>();

interface TopHolders {
  height: number;
  holders: Holder[];
  accounts: number;
  /** Circulating supply of the same state (base units). */
  circulating: bigint;
}

async function topHolders(ctx: NodeContext): Promise<TopHolders> {
  await ctx.chain.settled();
  const height = ctx.chain.height;
  const hit = topCache.get(ctx.chain);
  if (hit && hit.height === height) return hit;
  // One pass over the state keeping the MAX_RICHLIST largest balances (descending, ties by address):
  // candidates accumulate and are cut back to the top MAX_RICHLIST whenever they reach 4x that.
  let top: Holder[] = [];
  let threshold = 0n;
  let accounts = 0;
  for (const [k, v] of ctx.chain.state.entries()) {
    const address = addressFromAccountKey(k);
    if (!address) continue;
    accounts++;
    const balance = weiToBase(decodeAccount(v).balance);
    if (balance === 0n || balance < threshold) continue;
    top.push({ address, balance });
    if (top.length >= 4 * MAX_RICHLIST) {
      top = top.sort(byBalance).slice(0, MAX_RICHLIST);
      threshold = top[top.length - 1].balance;
    }
  }
  top = top.sort(byBalance).slice(0, MAX_RICHLIST);
  const entry = { height, holders: top, accounts, circulating: supplyOfState(ctx).circulating };
  topCache.set(ctx.chain, entry);
  return entry;
}

/** Percent of supply, 6 decimals. */
const percentOf = (balance: bigint, supply: bigint): number =>
  supply > 0n ? Number((balance * 100_000_000n) / supply) / 1_000_000 : 0;

/** GET /richlist and GET /accounts/top: largest balances with their share of the circulating supply. */
export async function richList(ctx: NodeContext, limit: number): Promise<Record<string, unknown>> {
  const { holders, accounts, circulating } = await topHolders(ctx);
  return {
    holders: holders
      .slice(0, limit)
      .map((h, i) => ({ rank: i + 1, address: h.address, balance: h.balance, percentage: percentOf(h.balance, circulating) })),
    total_accounts: accounts,
    circulating_supply: circulating,
  };
}
